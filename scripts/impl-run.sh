#!/usr/bin/env bash
# Judges a third-party Muon plugin (adapters/impls/) on the CPU over gloo: every scenario of
# scenarios/torch/ and scenarios/impls/ at its dp (1, 2, 4; DP picks), one launch per dp (REPEAT=1: each
# twice, for the deterministic invariant), then `muoncheck verify` over every trace,
# and the verdict rows the conformance matrix reads (scripts/impl-verdicts.py).
#
#   scripts/impl-run.sh NAME OUT_DIR            e.g. scripts/impl-run.sh muon-optimizer /tmp/impls
#   FIXES=id,id CONFIG='{"class": "SingleDeviceMuon"}' DP="1 2" scripts/impl-run.sh NAME OUT_DIR
#
# The plugins are found by their entry points (adapters/pyproject.toml); from the checkout, without
# installing the package, this script lays a dist-info with the same entry points under OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/impl-run.sh NAME OUT_DIR}
out=${2:?usage: scripts/impl-run.sh NAME OUT_DIR}
muoncheck=${MUONCHECK:-build/harness/muoncheck}
export MUONCHECK="$muoncheck" PYTHONUNBUFFERED=1
work="$out/$name${FIXES:+-fixed}"
mkdir -p "$work/ep/muoncheck_checkout_plugins-0.dist-info"
printf 'Metadata-Version: 2.1\nName: muoncheck-checkout-plugins\nVersion: 0\n' > "$work/ep/muoncheck_checkout_plugins-0.dist-info/METADATA"
{ echo "[muoncheck.implementations]"
  sed -n '/^\[project.entry-points."muoncheck.implementations"\]/,/^\[/p' adapters/pyproject.toml |
    grep ' = ' | sed 's/"//g; s/muoncheck_adapters\./adapters./'; } > "$work/ep/muoncheck_checkout_plugins-0.dist-info/entry_points.txt"
export PYTHONPATH="$work/ep:$PWD${PYTHONPATH:+:$PYTHONPATH}"
scenarios=${SCENARIOS:-$(ls scenarios/torch/*.json scenarios/impls/*.json)}
dp_of='import json,sys; print(json.load(open(sys.argv[1]))["engine"].get("dp", 1))'
rc=0 used=()
start=$(date +%s)
for dp in ${DP:-1 2 4}; do   # one launch per dp: every scenario of that dp in turn (a hang ends the launch: TIMEOUT s)
  group=()
  for f in $scenarios; do [ "$(python3 -c "$dp_of" "$f")" = "$dp" ] && group+=("$f"); done
  [ ${#group[@]} -gt 0 ] || continue
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')   # runs side by side
  timeout "${TIMEOUT:-1800}" python3 -m torch.distributed.run --nproc-per-node "$dp" --master-port "$port" -m adapters.impls.run \
    --impl "$name" --out "$work" ${REPEAT:+--repeat} --config "${CONFIG:-{\}}" --fixes "${FIXES:-}" "${group[@]}" >> "$work/run.log" 2>&1 || rc=1
  used+=("${group[@]}")
done
echo "$name: ran ${#used[@]} scenarios in $(( $(date +%s) - start )) s (exit $rc)"
traces=()
for f in "$work"/*.trace.json; do traces+=(--trace "$f"); done
"$muoncheck" verify "${used[@]}" "${traces[@]}" --report "$work/verify.json" > "$work/verify.log" 2>&1
echo "$name: verify exit $? ($work/verify.json)"
