#!/usr/bin/env bash
# The triangle kernel with its epilogue's stores made TMA stores (main's working tree) against the
# kernel before (ablation-before, epilogue/before.patch): the gpu tests first, then the NS, gram
# and X·Xᵀ alone in alternating processes.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/epi; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $O/card.txt
for t in cuda_symmetric_test cuda_compute_test impl_cuda_engine_test; do
  timeout -s KILL 180 $B/$t --gtest_brief=1 2>&1 | tail -30; echo "$t exit ${PIPESTATUS[0]}"
done > $O/gpu-tests.log 2>&1
grep -E 'PASSED|FAILED|exit' $O/gpu-tests.log
if grep -q "cuda_symmetric_test exit 0" $O/gpu-tests.log; then
  F='^(ns_standard_bf16/4096x|ns_gram_fp16/4096x14336|product_xxt_bf16/.*/triangle)'
  for r in 1 2 3; do
    for b in bench_ns_cuda ablation-before; do
      t1=$(date +%s)
      timeout -s KILL 60 $B/$b --products --benchmark_filter="$F" --benchmark_out=$O/$b-$r.json > /dev/null 2>&1
      echo "$b $r exit $? $(( $(date +%s) - t1 )) s"
    done
  done
fi
cd $OUT && tar czf epi.tgz epi && rm -rf epi
