#!/usr/bin/env bash
# The strips kernel's first GPU run (triangle_strips.hpp), carrying build-cuda/bundle and
# .whl/mutants-strips.tar.xz (mutant-strips-own-release-only, mutant-tile-no-full-wait):
#   1. the gpu tests (the strips cases among them); stop if one fails -> gpu-tests.log   15 s
#   2. X·Xᵀ alone at K = 4096 and 14336, the ping-pong triangle against the strips, both protocols -> products.json   40 s
#   3. the NS at 4096² and 4096×14336 (standard, gram) under each, both protocols -> ns.json   80 s
#   4. those two mutants: each must fail its tests or hang -> mutants/   60–120 s
set -u
t0=$SECONDS
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin
timeout -s KILL 120 scripts/gpu-run.sh gpu-tests $OUT > /dev/null 2>&1; rc=$?
grep -E "PASSED|FAILED|SKIPPED|Failure|error" $OUT/gpu-tests.log | head -20; echo "== gpu tests exit $rc: $((SECONDS - t0)) s"
[ $rc = 0 ] || exit 1
timeout -s KILL 120 $B/bench_ns_cuda --products --benchmark_filter='^product_xxt_bf16/4096x(4096|14336)/(triangle|strips|full)' \
  --benchmark_out=$OUT/products.json > $OUT/products.txt 2>&1; echo "== products exit $?: $((SECONDS - t0)) s"
grep -E "^product" $OUT/products.txt | awk '{print $1, $2, $3, $NF}' | sed 's/issued TFLOP\/s=//'
timeout -s KILL 200 $B/bench_ns_cuda --variants \
  --benchmark_filter='^ns_(standard_bf16|gram_fp16)/4096x(4096|14336)/(triangle|strips)(/cold)?/' \
  --benchmark_out=$OUT/ns.json > $OUT/ns.txt 2>&1; echo "== ns exit $?: $((SECONDS - t0)) s"
grep -E "^ns_" $OUT/ns.txt | awk '{print $1, $2, $3}'
tar xJf .whl/mutants-strips.tar.xz -C $B
scripts/gpu-run.sh kernel-mutants $OUT/mutants > /dev/null 2>&1; echo "== mutants exit $?: $((SECONDS - t0)) s"
cat $OUT/mutants/kernel-mutants.json 2>/dev/null
(cd $OUT && tar czf mutants.tgz mutants && rm -rf mutants)
