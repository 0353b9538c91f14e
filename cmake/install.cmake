# What `cmake --install` and the wheel install: the muoncheck binary and its data folder
# (scenarios/, golden/, adapters/), laid out so the binary finds the data beside itself
# (harness/install/data_root.hpp):
#   wheel (scikit-build-core sets SKBUILD):  muoncheck/bin/muoncheck, muoncheck/data/   (site-packages)
#   a prefix (cmake --install --prefix P):   P/bin/muoncheck, P/share/muoncheck/
if(SKBUILD)
  set(muoncheck_bin_dir muoncheck/bin)
  set(muoncheck_data_dir muoncheck/data)
else()
  set(muoncheck_bin_dir bin)
  set(muoncheck_data_dir share/muoncheck)
endif()
install(TARGETS muoncheck RUNTIME DESTINATION ${muoncheck_bin_dir})
install(DIRECTORY scenarios golden DESTINATION ${muoncheck_data_dir})
# The adapters as the binary's workers import them (`adapters.*` with the data folder on
# PYTHONPATH) and as the wheel's muoncheck_adapters package reads them; their own packaging
# and caches stay out.
install(DIRECTORY adapters DESTINATION ${muoncheck_data_dir}
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "pyproject.toml" EXCLUDE
        PATTERN "*.egg-info" EXCLUDE PATTERN "build" EXCLUDE)
