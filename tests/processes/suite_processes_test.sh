#!/usr/bin/env bash
# The shipped scenarios whose ranks are processes (engine.ranks) run inside `muoncheck check`
# itself, one command, no launcher: check starts their rank processes, and the verdicts are
# those of the same scenarios with their ranks as threads; a resume fault fails
# checkpoint-resume-exact on them as on the threads (the checkpoint shards go through one file
# per rank, each rank's observation through the store); no rank process or store directory
# outlives the run.
# usage: suite_processes_test.sh MUONCHECK   (run from the source root)
set -eu
muoncheck=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1; then python=$py; break; fi
done
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR" "$work/processes" "$work/threads"

# The shipped scenarios with ranks as processes, and their twins with ranks as threads.
"$python" - "$work" <<'PY'
import glob, json, os, sys
work = sys.argv[1]
names = []
for path in sorted(glob.glob("scenarios/*.json")):
    s = json.load(open(path))
    if s.get("engine", {}).get("ranks") != "processes":
        continue
    names.append(s["name"])
    open(os.path.join(work, "processes", os.path.basename(path)), "w").write(json.dumps(s))
    del s["engine"]["ranks"]
    open(os.path.join(work, "threads", os.path.basename(path)), "w").write(json.dumps(s))
if len(names) < 2:
    sys.exit("fewer than 2 shipped scenarios run their ranks as processes: " + str(names))
if not any("checkpoint" in json.load(open(os.path.join(work, "processes", n + ".json"))) for n in names):
    sys.exit("no shipped scenario with ranks as processes saves a checkpoint")
print("ranks as processes:", " ".join(names))
PY

# check as shipped (golden digests included), then run on both (the twins' files differ, so
# their golden keys would).
"$muoncheck" check --scenarios "$work/processes" --report "$work/check.json" >"$work/check.log" 2>&1 ||
  { tail -30 "$work/check.log"; exit 1; }
all=$(cd "$work/processes" && ls ./*.json | sed 's|^\./||' | tr '\n' ' ')
for mode in processes threads; do
  # shellcheck disable=SC2086
  (cd "$work/$mode" && "$muoncheck" run $all --report "$work/$mode.json") >"$work/$mode.log" 2>&1 ||
    { tail -30 "$work/$mode.log"; exit 1; }
done
"$python" tests/processes/same_verdicts.py "$work/threads.json" "$work/processes.json"

# A resume fault on the checkpoint scenarios among them: checkpoint-resume-exact fails as with
# threads, the shards read back through their files.
checkpointed=$(cd "$work/processes" && grep -l '"checkpoint"' ./*.json | sed 's|^\./||' | tr '\n' ' ')
for fault in resume-momentum-lost resume-wrong-partition resume-adam-step-reset; do
  for mode in processes threads; do
    # shellcheck disable=SC2086
    (cd "$work/$mode" && "$muoncheck" run $checkpointed --fault "$fault" --report "$work/$mode.$fault.json") \
      >"$work/$mode.$fault.log" 2>&1 && { echo "FAIL: $fault on $mode: exit 0"; exit 1; }
  done
  "$python" tests/processes/same_verdicts.py "$work/threads.$fault.json" "$work/processes.$fault.json"
  "$python" - "$work/processes.$fault.json" "$fault" <<'PY'
import json, sys
report, fault = json.load(open(sys.argv[1])), sys.argv[2]
failed = [s["scenario"] for s in report["scenarios"]
          if any(v["id"] == "checkpoint-resume-exact" and v["status"] == "FAIL" for v in s.get("invariants", []))]
if not failed:
    sys.exit(fault + ": checkpoint-resume-exact failed on no scenario with ranks as processes")
print(fault + ": checkpoint-resume-exact FAIL on " + " ".join(failed))
PY
done

left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'muoncheck-ranks-*' | wc -l)
[ "$left" = 0 ] || { echo "FAIL: $left rank store directories left in TMPDIR"; exit 1; }
if pgrep -f -- "--store $TMPDIR/muoncheck-ranks-" >/dev/null; then
  echo "FAIL: rank processes outlived the run"; exit 1
fi
echo "OK"
