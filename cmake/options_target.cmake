# One interface target carries the project's compile options; every target links it.
add_library(muoncheck_options INTERFACE)
target_compile_options(muoncheck_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>
  # GCC's float128 literals; clang (scripts/fuzz.sh builds core/ only) has no such flag.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-fext-numeric-literals>)
target_include_directories(muoncheck_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_definitions(muoncheck_options INTERFACE
  MUONCHECK_VERSION="${PROJECT_VERSION}"
  $<$<BOOL:${MUONCHECK_CUDA}>:MUONCHECK_HAVE_CUDA=1>)
target_link_libraries(muoncheck_options INTERFACE Threads::Threads)

# Sanitizers for the whole build (its own build folder): MUONCHECK_SANITIZE=ON is the
# ASan+UBSan build of scripts/sanitize.sh; MUONCHECK_FUZZ=ON adds libFuzzer's coverage
# instrumentation (clang) for scripts/fuzz.sh. Any sanitizer report aborts the process.
if(MUONCHECK_SANITIZE OR MUONCHECK_FUZZ)
  target_compile_options(muoncheck_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g>)
  target_link_options(muoncheck_options INTERFACE -fsanitize=address,undefined)
endif()
if(MUONCHECK_FUZZ)
  target_compile_options(muoncheck_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()
