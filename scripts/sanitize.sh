#!/usr/bin/env bash
# The cpu tests under AddressSanitizer + UndefinedBehaviorSanitizer: builds
# build-asan/ with -DMUONCHECK_SANITIZE=ON and runs `ctest -L cpu` there. Any sanitizer
# report aborts its test, so a green run is a clean one. Extra arguments go to ctest
# (e.g. -R FuzzCorpus). Takes a few times longer than the plain build's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUONCHECK_SANITIZE=ON \
  -DMUONCHECK_CUDA=OFF -DMUONCHECK_BENCH=OFF >/dev/null
cmake --build build-asan -j2
# Gloo's and the test runners' threads are joined before exit; leaks would be ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan -L cpu --output-on-failure -j2 "$@"
