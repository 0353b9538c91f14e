# One interface target carries the project's compile options; every target links it.
add_library(muoncheck_options INTERFACE)
target_compile_options(muoncheck_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -fext-numeric-literals>)
target_include_directories(muoncheck_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_definitions(muoncheck_options INTERFACE
  MUONCHECK_VERSION="${PROJECT_VERSION}"
  $<$<BOOL:${MUONCHECK_CUDA}>:MUONCHECK_HAVE_CUDA=1>)
target_link_libraries(muoncheck_options INTERFACE Threads::Threads)
