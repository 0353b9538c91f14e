#!/usr/bin/env bash
# Pending entry 14 on main's build: the gpu tests first, then the NS, its parts and the triangle
# kernel against four patched builds (reverse order, dependent launch, L2 hints on operands and
# results, L2 hints on operands only), in alternating processes, with the clock log.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/e14; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $O/card.txt
t0=$(date +%s)
for t in cuda_symmetric_test cuda_compute_test impl_cuda_engine_test; do
  timeout -s KILL 180 $B/$t --gtest_brief=1 2>&1 | tail -3; echo "$t exit ${PIPESTATUS[0]}"
done > $O/gpu-tests.log 2>&1
grep -E 'PASSED|FAILED|exit' $O/gpu-tests.log; echo "gpu tests $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > $O/smi.csv & S=$!
F='^(ns_standard_bf16/4096x|ns_part_bf16/4096x.*/(xxt|square|apply|chain)|product_xxt_bf16/.*/triangle)'
for r in ${ROUNDS:-1 2 3}; do
  for b in bench_ns_cuda $(cd $B && ls ablation-*); do
    t1=$(date +%s)
    timeout -s KILL 100 $B/$b --parts --products --benchmark_filter="$F" --benchmark_out=$O/$b-$r.json > /dev/null 2>&1
    echo "$b $r exit $? $(( $(date +%s) - t1 )) s"
  done
done
kill $S; gzip -f $O/smi.csv
python3 - "$O" <<'PY'
import json, sys, glob, os, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    binary = os.path.basename(f).rsplit("-", 1)[0]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "aggregate": continue
        name = b["name"].split("/min_time")[0].split("/iterations")[0]
        rows.setdefault((name, binary), []).append(b["real_time"])
for (name, binary), v in sorted(rows.items()):
    print(f"{name:44s} {binary:28s} median {statistics.median(v):.4f} ms  ({', '.join(f'{x:.4f}' for x in v)})")
PY
cd $OUT && tar czf e14.tgz e14 && rm -rf e14
