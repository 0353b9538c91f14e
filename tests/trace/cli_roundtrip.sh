#!/bin/sh
# `muoncheck run --write-trace` writes a trace that `muoncheck verify` passes (exit 0), a trace with
# one NS call too many fails verify (exit 1) with its repro line, and the trace of a variant
# `muoncheck variants` wrote lets verify judge the relational invariant that reads it.
set -eu
bin="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" run two-layer-gas4-z2 --mode trajectory --invariant trajectory-conforms --write-trace "$dir/t.json" >/dev/null
"$bin" verify two-layer-gas4-z2 --trace "$dir/t.json" --oracle-precision double --report "$dir/r.json"
grep -q '"command": "verify"' "$dir/r.json"
# One NS call too many on step 0's first param, as a trace that counts calls per param only.
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
for s in t["steps"]:
    s.pop("ns_events", None)
t["steps"][0]["ns_calls"][0] += 1
json.dump(t, open(sys.argv[2], "w"))
' "$dir/t.json" "$dir/broken.json"
set +e
"$bin" verify two-layer-gas4-z2 --trace "$dir/broken.json" --oracle-precision double > "$dir/out.txt"
rc=$?
set -e
cat "$dir/out.txt"
[ "$rc" -eq 1 ] || { echo "expected exit 1 for a broken trace, got $rc"; exit 1; }
grep -q "muoncheck verify [^ ]*scenarios/two-layer-gas4-z2.json --trace $dir/broken.json --oracle-precision double --invariant ns-once-per-matrix-per-step" "$dir/out.txt"
"$bin" variants two-layer-gas4-z2 --out-dir "$dir/v" --invariant dp-invariant > "$dir/v.txt"
dp_file=$(awk '$1 == "dp" {print $2}' "$dir/v.txt")
[ -f "$dp_file" ] || { echo "variants wrote no dp variant"; cat "$dir/v.txt"; exit 1; }
"$bin" run "$dp_file" --mode trajectory --invariant trajectory-conforms --write-trace "$dir/dp.json" >/dev/null
"$bin" verify two-layer-gas4-z2 --trace "$dir/t.json" --trace "$dir/dp.json" --invariant dp-invariant \
  --oracle-precision double > "$dir/rel.txt"
grep -q "dp-invariant *PASS" "$dir/rel.txt" || { cat "$dir/rel.txt"; exit 1; }
echo "cli round trip: ok"
