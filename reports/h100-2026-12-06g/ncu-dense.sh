#!/usr/bin/env bash
# cuBLAS's dense GEMM beside our triangle kernel under Nsight Compute, clocks left alone: which
# kernel cuBLAS runs (its name carries its tile, cluster and stages), its grid and shared memory,
# and the speed-of-light and memory sections of each (L2 throughput, hit rate, DRAM), so that the
# triangle kernel's 20 % gap per issued flop to the dense GEMM can be read off like for like.
# Carries build-cuda/bundle. -> ncu.tgz
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/ncu; mkdir -p $O
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
profile() {   # NAME KERNEL-REGEX BENCH-FILTER [bench args]
  local name=$1 kernel=$2 filter=$3; shift 3
  local t=$(date +%s)
  timeout -s KILL 100 $NCU --clock-control none -k "regex:$kernel" --launch-skip 30 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy -f -o $O/$name \
    $B/bench_ns_cuda "$@" --benchmark_filter="$filter" > $O/run-$name.log 2>&1
  echo "$name exit $? $(( $(date +%s) - t )) s"
  $NCU --import $O/$name.ncu-rep --page details --csv > $O/details-$name.csv 2>&1
  grep -m1 -o '"[^"]*","[0-9]*","[0-9]*","([^"]*)","([^"]*)"' $O/details-$name.csv | head -c 400; echo
}
profile dense-4096 'nvjet|gemm|xmma|sm90_' '^gemm_square_bf16/4096/min_time'
profile triangle-4096 'triangle_tiles' '^product_xxt_bf16/4096x4096/triangle/min_time' --products
profile full-xxt-14336 'nvjet|gemm|xmma|sm90_' '^product_xxt_bf16/4096x14336/full/min_time' --products
profile triangle-14336 'triangle_tiles' '^product_xxt_bf16/4096x14336/triangle/min_time' --products
rm -f $O/*.ncu-rep; cd $OUT && tar czf ncu.tgz ncu && rm -rf ncu; ls -la $OUT
