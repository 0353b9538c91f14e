#!/usr/bin/env bash
# The standard NS at 4096² and 4096×14336 beside its parts, each timed alone as the NS issues it
# (bench_ns_cuda --parts), in two processes, with the clock log.
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=build-cuda/bundle/bin; O=$OUT/parts; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $O/card.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $O/smi.csv & S=$!
for round in 1 2; do
  timeout -s KILL 150 $B/bench_ns_cuda --parts --variants \
    --benchmark_filter='^(ns_part_bf16/|ns_standard_bf16/4096x(4096|14336)/(min|by_shape_no_graphs/min)|gemm_square_bf16/4096/min)' \
    --benchmark_out=$O/parts-$round.json > $O/parts-$round.txt 2>&1; echo "round $round exit $?"
done
kill $S
python3 - "$O" <<'PY'
import json, sys, glob, os, statistics
for f in sorted(glob.glob(sys.argv[1] + "/parts-*.json")):
    t = {}
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median": continue
        name = b["name"].split("/min_time")[0]
        t.setdefault(name, []).append(b["real_time"])
    print(os.path.basename(f))
    for name, v in t.items(): print(f"  {name:40s} {statistics.median(v):.4f} ms")
    for s in ("4096x4096", "4096x14336"):
        p = [statistics.median(t.get(f"ns_part_bf16/{s}/{k}", [float('nan')])) for k in ("normalize", "xxt", "square", "apply")]
        ns = statistics.median(t.get(f"ns_standard_bf16/{s}", [float('nan')]))
        ch = statistics.median(t.get(f"ns_part_bf16/{s}/chain", [float('nan')]))
        print(f"  {s}: parts sum {sum(p):.4f} ms, their chain {ch:.4f}, NS {ns:.4f} ms, NS beyond its parts {ns - sum(p):+.4f} ms")
PY
cd $OUT && tar czf parts.tgz parts && rm -rf parts
