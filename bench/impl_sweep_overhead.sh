#!/usr/bin/env bash
# Where the time of a sweep against an implementation goes (reported, never asserted):
#   bench/impl_sweep_overhead.sh IMPL[=VERSION] SITE [DP] [CASES] [SEED] [KNOB_SPEC...]
# runs `muoncheck sweep --impl IMPL --impl-site SITE --dp DP --workers 1 --cases CASES --seed SEED
# --max-defects 1 --shrink-seconds 1` (no shrinking; each failing case is still attributed by re-runs under the
# registry's fixes) with the given --knob specs (e.g. "gradient_clipping=0.0"), then prints from its
# record: cases, cases/min, and the worker's wall time split into the implementation's own work
# (its engine set-up and its steps, the traces' engine_setup_seconds and step_seconds), the rest of
# the worker's answers (muoncheck's Python around the implementation: data, state read-back, traces,
# fixes), and the time outside the worker (judging, restarts, timeouts). The harness's overhead is
# everything but the implementation's own work. Defaults: dp 2, 20 cases, seed 31.
set -euo pipefail
cd "$(dirname "$0")/.."
impl=$1 site=$2 dp=${3:-2} cases=${4:-20} seed=${5:-31}
shift $(( $# < 5 ? $# : 5 ))
knobs=()
for k in "$@"; do knobs+=(--knob "$k"); done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load before: $(cut -d' ' -f1 /proc/loadavg), cores: $(nproc)"
build/harness/muoncheck sweep --impl "$impl" --impl-site "$site" --dp "$dp" --workers 1 --cases "$cases" \
  --seed "$seed" --max-defects 1 --shrink-seconds 1 "${knobs[@]}" --json "$out/record.json" --cases-dir "$out/cases" \
  >"$out/log" 2>&1 || true
grep -E "^sweep --impl|worker restarts|attribution by" "$out/log" | cut -c1-200
python3 - "$out/record.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
wall = r["seconds"]                 # one worker: its wall time is the sweep's
answers = r["implementation_seconds"]   # the worker's answers to the case requests
own = r["step_seconds"]             # the implementation's engine set-up and steps
print(f"cases {r['cases_run']} in {wall:.0f} s ({r['cases_per_minute']:.1f}/min); failing {len(r['failures'])}")
print(f"the implementation's own work  {own:7.1f} s  {own / wall:6.1%}")
print(f"muoncheck inside the worker    {answers - own:7.1f} s  {(answers - own) / wall:6.1%}")
print(f"muoncheck outside the worker   {wall - answers:7.1f} s  {(wall - answers) / wall:6.1%}")
print(f"overhead per case {(wall - own) / max(1, r['cases_run']):.2f} s, share {(wall - own) / wall:.1%}")
EOF
