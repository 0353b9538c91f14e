#!/usr/bin/env bash
# Fuzzes a loader with libFuzzer (clang). Builds build-fuzz/ with
# -DMUONCHECK_FUZZ=ON (ASan + UBSan + coverage), then:
#   scripts/fuzz.sh scenario|trace [SECONDS]   fuzz for SECONDS (default 60), starting from the
#                                              committed corpus; new inputs go to build-fuzz/corpus-WHICH
#   scripts/fuzz.sh scenario|trace FILE...     run the target once on each FILE (reproduce a finding)
#   scripts/fuzz.sh merge scenario|trace       fold build-fuzz/corpus-WHICH into tests/fuzz/corpus/WHICH,
#                                              keeping only inputs that add coverage
# A finding is any crash, sanitizer report, an error other than bad input (an exit 3), an
# allocation over 1 GB (-malloc_limit_mb) or an input that takes over 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang (scripts/bootstrap.sh installs it)" >&2; exit 2; }

merge=0
if [ "${1:-}" = merge ]; then merge=1; shift; fi
which=${1:-}
case "$which" in scenario|trace) ;; *) echo "usage: scripts/fuzz.sh [merge] scenario|trace [SECONDS|FILE...]" >&2; exit 2;; esac
shift

cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUONCHECK_FUZZ=ON -DMUONCHECK_CUDA=OFF -DMUONCHECK_BENCH=OFF >/dev/null
cmake --build build-fuzz --target "fuzz_${which}_loader" -j2
bin="build-fuzz/tests/fuzz/fuzz_${which}_loader"
limits=(-malloc_limit_mb=1024 -rss_limit_mb=2048 -timeout=10 -max_len=65536)

if [ "$merge" = 1 ]; then
  exec "$bin" -merge=1 "${limits[@]}" "tests/fuzz/corpus/$which" "build-fuzz/corpus-$which"
fi
if [ $# -gt 0 ] && [ -e "$1" ]; then
  exec "$bin" "${limits[@]}" "$@"
fi
seconds=${1:-60}
mkdir -p "build-fuzz/corpus-$which"
exec "$bin" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="build-fuzz/${which}-" "build-fuzz/corpus-$which" "tests/fuzz/corpus/$which"
