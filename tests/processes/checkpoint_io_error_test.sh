#!/usr/bin/env bash
# Ranks as processes: a checkpoint shard that cannot be written (the store's checkpoints
# directory is a plain file) is a typed error of that scenario, never a crash or a hang:
# `check` on a checkpoint scenario and a plain one over 4 processes exits 3, the report
# records the checkpoint scenario's infrastructure error naming the shard file and the
# rank, and the plain scenario is still judged.
# usage: checkpoint_io_error_test.sh MUONCHECK   (run from the source root)
set -u
muoncheck=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/store"
touch "$work/store/checkpoints"
scripts/launch-ranks.sh 4 "$muoncheck" check checkpoint-resume-z1 tiny-buckets-z2 --ranks processes \
  --store "$work/store" --timeout-ms 5000 --report "$work/report.json" >"$work/log" 2>&1
code=$?
[ "$code" -eq 3 ] || fail "exit $code, expected 3: $(tail -5 "$work/log")"
python3 - "$work/report.json" <<'PY' || exit 1
import json, sys
by_name = {s["scenario"]: s for s in json.load(open(sys.argv[1]))["scenarios"]}
err = by_name["checkpoint-resume-z1"].get("error") or {}
want = "checkpoint shard of rank 0: "
if err.get("kind") != "infrastructure" or want not in err.get("message", "") or "rank-0-of-2.shard" not in err["message"]:
    sys.exit(f"FAIL: checkpoint-resume-z1's error is {err}, expected an infrastructure error naming the shard and rank")
plain = by_name["tiny-buckets-z2"]
if plain.get("error") or not any(v["status"] == "PASS" for v in plain["invariants"]):
    sys.exit(f"FAIL: tiny-buckets-z2 was not judged: {plain.get('error')}")
print("OK: " + err["message"])
PY
