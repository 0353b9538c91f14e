#!/usr/bin/env bash
# The streamed kernel with the first iteration's XXᵀ fused into the normalization's second pass,
# against the build before it (ablation-streamed-before-fusion), in alternating processes: the gpu
# tests, then the per-head NS, the streamed kernel alone and 64 heads under each tail choice.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/streamed; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $O/card.txt
for t in cuda_symmetric_test cuda_compute_test impl_cuda_engine_test; do
  timeout -s KILL 180 $B/$t --gtest_brief=1 2>&1 | tail -3; echo "$t exit ${PIPESTATUS[0]}"
done > $O/gpu-tests.log 2>&1
grep -E 'PASSED|FAILED|exit' $O/gpu-tests.log
F='^(ns_standard_bf16/per_head|ns_gram_fp16/per_head|ns_streamed_alone/(1|4)x128x4096|ns_resident_sweep/64x128x4096/)'
for round in 1 2 3; do
  for b in bench_ns_cuda ablation-streamed-before-fusion; do
    timeout -s KILL 90 $B/$b --resident-sweep --benchmark_filter="$F" --benchmark_out=$O/$b-$round.json > /dev/null 2>&1
    echo "$b round $round exit $?"
  done
done
python3 - "$O" <<'PY'
import json, sys, glob, os, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    binary = os.path.basename(f).rsplit("-", 1)[0]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "aggregate": continue
        rows.setdefault((b["name"].split("/min_time")[0], binary), []).append(b["real_time"])
for (name, binary), v in sorted(rows.items()):
    print(f"{name:48s} {binary:32s} median {statistics.median(v):.4f} ms  ({', '.join(f'{x:.4f}' for x in v)})")
PY
cd $OUT && tar czf streamed.tgz streamed && rm -rf streamed
