#!/usr/bin/env bash
# The strips kernel's first GPU run, then main's whole `ns` route under the default it earns, in
# one command. Carries build-cuda/bundle (main, the ping-pong triangle the default),
# .whl/bundle-strips-default.tar.xz (the same commit with ns_split_for on the strips:
# strips-default.patch), .whl/ds and .whl/inductor-cache.tgz.
#   1. the gpu tests (the strips cases, and the ping-pong kernel since its move into
#      triangle_tile.cuh) -> gpu-tests.log                                                       15 s
#   2. X·Xᵀ alone, ping-pong against strips, both protocols -> products.json                      40 s
#   3. the NS at 4096² and 4096×14336 (standard, gram) under each -> ns.json                      80 s
#   4. the strips become the default only if the tests passed and the NS under them is faster in
#      total and at no shape more than 0.5 % slower (choose_default.py) -> choice.txt
#   5. reports/h100-2026-12-06d/final.sh under the chosen default -> final.tgz                  280 s
set -u
t0=$SECONDS
here=reports/h100-2026-12-06h
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout -s KILL 120 scripts/gpu-run.sh gpu-tests $OUT > /dev/null 2>&1; tests=$?
grep -E "PASSED|FAILED|SKIPPED|Failure|error" $OUT/gpu-tests.log | head -30; echo "== gpu tests exit $tests: $((SECONDS - t0)) s"
if [ $tests = 0 ]; then
  timeout -s KILL 120 $B/bench_ns_cuda --products --benchmark_filter='^product_xxt_bf16/4096x(4096|14336)/(triangle|strips|full)' \
    --benchmark_out=$OUT/products.json > $OUT/products.txt 2>&1; echo "== products exit $?: $((SECONDS - t0)) s"
  grep -E "^product" $OUT/products.txt | awk '{print $1, $2, $3, $NF}'
  timeout -s KILL 200 $B/bench_ns_cuda --variants \
    --benchmark_filter='^ns_(standard_bf16|gram_fp16)/4096x(4096|14336)/(triangle|strips)(/cold)?/' \
    --benchmark_out=$OUT/ns.json > $OUT/ns.txt 2>&1; echo "== ns exit $?: $((SECONDS - t0)) s"
  grep -E "^ns_" $OUT/ns.txt | awk '{print $1, $2, $3}'
fi
python3 $here/choose_default.py $tests $OUT/ns.json | tee $OUT/choice.txt
if grep -q '^strips' $OUT/choice.txt; then tar xJf .whl/bundle-strips-default.tar.xz -C build-cuda/bundle; fi
bash reports/h100-2026-12-06d/final.sh; echo "== final exit $?: $((SECONDS - t0)) s"
