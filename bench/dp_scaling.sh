#!/usr/bin/env bash
# What grows with dp, measured at dp 1..16 on CPU (docs/multi-node.md has the table and its
# extrapolation). One scenario (default scenarios/llama-per-head-z1.json) with its global
# batch set to 16, re-split over each dp:
#   1. build/bench/impl/bench_dp_scaling: per rank and step the collectives (count, logical
#      bytes, mean wall time of one), the engine run's wall and CPU time (ranks as threads),
#      and the oracle's cost (float128 trajectory, control ensemble);
#   2. `muoncheck run --ranks processes` with dp processes, each under /usr/bin/time: peak
#      memory (max RSS) of rank 0 (which also judges) and of the largest worker, and the CPU
#      time of all ranks together.
# usage: bench/dp_scaling.sh [SCENARIO.json] [DP...]   (from the source root, after a build)
set -eu
scenario=${1:-scenarios/llama-per-head-z1.json}
shift || true
dps=${*:-1 2 4 8 16}
bin=build/harness/muoncheck
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$scenario" "$work/dp-scaling.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "dp-scaling"
s["engine"].update({"dp": 1, "gas": 1, "micro_batch": 16})
json.dump(s, open(sys.argv[2], "w"))
PY
echo "# engine and oracle (ranks as threads)"
# shellcheck disable=SC2086
build/bench/impl/bench_dp_scaling "$work/dp-scaling.json" 16 $dps
echo "# memory and CPU per rank (ranks as processes)"
for dp in $dps; do
  store=$work/store$dp
  start=$(date +%s%3N)
  for ((r = 0; r < dp; r++)); do
    RANK=$r WORLD_SIZE=$dp LOCAL_RANK=$r LOCAL_WORLD_SIZE=$dp /usr/bin/time -f "%M %U %S" -o "$work/time$dp.$r" \
      "$bin" run "$work/dp-scaling.json" --dp "$dp" --invariant ranks-agree --ranks processes --store "$store" \
      >"$work/log$dp.$r" 2>&1 &
  done
  wait
  wall=$(($(date +%s%3N) - start))
  python3 - "$dp" "$wall" "$work" <<'PY'
import json, sys
dp, wall, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rows = [open(f"{work}/time{dp}.{r}").read().split()[-3:] for r in range(dp)]
rss = [int(x[0]) for x in rows]
cpu = sum(float(x[1]) + float(x[2]) for x in rows)
print(json.dumps({"dp": dp, "rank0_max_rss_kib": rss[0], "worker_max_rss_kib": max(rss[1:], default=None),
                  "all_ranks_cpu_s": round(cpu, 2), "run_wall_s": wall / 1000}))
PY
done
