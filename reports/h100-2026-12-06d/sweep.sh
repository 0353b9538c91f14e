#!/usr/bin/env bash
# The resident sweep (bench_ns_cuda --resident-sweep) on the build whose streamed kernel runs the
# first XXᵀ in its normalization: do the tail choices (streamed_tail) still pick the faster side?
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/sweep; mkdir -p $O
timeout -s KILL 240 $B/bench_ns_cuda --resident-sweep --benchmark_filter='^ns_(resident_sweep|streamed_alone)/' \
  --benchmark_out=$O/sweep.json > $O/sweep.txt 2>&1; echo "sweep exit $?"
sed -n '/^resident kernel vs GEMMs/,$p' $O/sweep.txt | tail -45
cd $OUT && tar czf sweep.tgz sweep && rm -rf sweep
