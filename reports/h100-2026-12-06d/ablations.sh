#!/usr/bin/env bash
# Pending entry 13: the triangle kernel timed with one part left out at a time, beside the whole
# kernel, the tiles and the dense GEMM (bench_ns_cuda --products), with the clock log.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/abl; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $O/card.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $O/smi.csv & S=$!
for round in ${ROUNDS:-1 2}; do
  timeout -s KILL 90 $B/bench_ns_cuda --products --benchmark_filter="^product_xxt_bf16/.*/${BASE_PLANS:-(triangle|full)}" \
    --benchmark_out=$O/bench_ns_cuda-$round.json > /dev/null 2>&1; echo "bench_ns_cuda round $round exit $?"
  for b in $(cd $B && ls ablation-*); do
    timeout -s KILL 60 $B/$b --products --benchmark_filter='^product_xxt_bf16/.*/triangle' \
      --benchmark_out=$O/$b-$round.json > /dev/null 2>&1; echo "$b round $round exit $?"
  done
done
kill $S
python3 - "$O" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "aggregate": continue
        print(f"{os.path.basename(f):34s} {b['name'].split('/min_time')[0].split('/iterations')[0]:42s} {b['real_time']:.4f} ms  issued {b.get('issued TFLOP/s', 0):.0f} TF/s")
PY
cd $OUT && tar czf abl.tgz abl && rm -rf abl
