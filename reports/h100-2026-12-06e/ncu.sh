#!/usr/bin/env bash
# The triangle kernel (X·Xᵀ alone, K = 4096 and 14336) under Nsight Compute, clocks left alone:
# where its multiplying and copying warps stall, per SASS instruction (source page), and the
# speed-of-light, memory and warp-state sections. The epilogue costs 11–18 % at K = 4096 and
# nothing at K = 14336 (reports/h100-2026-12-06c/ablation); the two profiles side by side.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/ncu; mkdir -p $O
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
for k in 4096 14336; do
  t=$(date +%s)
  timeout -s KILL 150 $NCU --clock-control none -k regex:triangle_tiles --launch-skip 40 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --import-source no -f -o $O/tri-$k \
    $B/bench_ns_cuda --products --benchmark_filter="^product_xxt_bf16/4096x$k/triangle/min_time" > $O/run-$k.log 2>&1
  echo "K=$k exit $? $(( $(date +%s) - t )) s"
  $NCU --import $O/tri-$k.ncu-rep --page details --csv > $O/details-$k.csv 2>&1
  $NCU --import $O/tri-$k.ncu-rep --page source --csv --print-source sass > $O/sass-$k.csv 2>&1
  ls -la $O/sass-$k.csv $O/details-$k.csv
done
cd $OUT && tar czf ncu-rep.tgz ncu/*.ncu-rep; rm -f ncu/*.ncu-rep; tar czf ncu.tgz ncu && rm -rf ncu; ls -la $OUT
