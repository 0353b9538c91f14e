#!/usr/bin/env bash
# Ranks as processes judge like ranks as threads: `check` on scenarios up to dp 4 with the
# ranks as 4 processes over Gloo gives the verdicts of the thread mode, and `run --write-trace`
# the bit-identical trajectory (weights, state, events). The checkpoint scenarios are among
# them: saved at dp 2, resumed at dp 2 and at dp 1, each rank's shard through its file; and
# `mutants` of the resume faults on them gives the thread mode's kill table. The processes are launched by
# torchrun when it is installed (MUONCHECK_TEST_TORCHRUN=0: never), else by
# scripts/launch-ranks.sh (a plain `for r ...; do ... & done`).
# usage: processes_match_threads.sh MUONCHECK   (run from the source root)
set -eu
muoncheck=$(realpath "$1")
scenarios="tiny-buckets-z2 straddle-fp32-z2 bucket-edges-z0 checkpoint-resume-z1 checkpoint-resume-dp2-to-dp1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1; then python=$py; break; fi
done
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }

launch() {   # launch STORE ARGS...: muoncheck ARGS with the ranks as 4 processes
  local store=$1
  shift
  if [ "${MUONCHECK_TEST_TORCHRUN:-1}" != 0 ] && "$python" -c "import torch.distributed.run" >/dev/null 2>&1; then
    echo "launcher: torchrun"
    "$python" -m torch.distributed.run --standalone --nproc-per-node 4 --no-python \
      "$muoncheck" "$@" --ranks processes --store "$store"
  else
    echo "launcher: scripts/launch-ranks.sh"
    scripts/launch-ranks.sh 4 "$muoncheck" "$@" --ranks processes --store "$store"
  fi
}

# shellcheck disable=SC2086
"$muoncheck" check $scenarios --report "$work/threads.json" >"$work/threads.log"
# shellcheck disable=SC2086
launch "$work/store1" check $scenarios --report "$work/processes.json" >"$work/processes.log" 2>&1 ||
  { tail -20 "$work/processes.log"; exit 1; }
"$python" tests/processes/same_verdicts.py "$work/threads.json" "$work/processes.json"

trace_both_ways() {   # trace_both_ways N SCENARIO INVARIANT: the traces of a run both ways are equal
  "$muoncheck" run "$2" --invariant "$3" --write-trace "$work/threads.$1.trace.json" >/dev/null
  launch "$work/trace-store$1" run "$2" --invariant "$3" --write-trace "$work/processes.$1.trace.json" \
    >"$work/trace.$1.log" 2>&1 || { tail -20 "$work/trace.$1.log"; exit 1; }
  "$python" tests/processes/same_verdicts.py --traces "$work/threads.$1.trace.json" "$work/processes.$1.trace.json"
}
trace_both_ways 1 tiny-buckets-z2 ranks-agree
trace_both_ways 2 checkpoint-resume-dp2-to-dp1 checkpoint-resume-exact

mkdir "$work/checkpoint-scenarios"
cp scenarios/checkpoint-resume-z1.json scenarios/checkpoint-resume-dp2-to-dp1.json "$work/checkpoint-scenarios/"
resume_faults="--fault resume-momentum-lost --fault resume-wrong-partition --fault resume-adam-step-reset"
# shellcheck disable=SC2086
"$muoncheck" mutants $resume_faults --scenarios "$work/checkpoint-scenarios" --json "$work/threads.mutants.json" \
  >"$work/threads.mutants.log" || { tail -20 "$work/threads.mutants.log"; exit 1; }
# shellcheck disable=SC2086
launch "$work/mutants-store" mutants $resume_faults --scenarios "$work/checkpoint-scenarios" \
  --json "$work/processes.mutants.json" >"$work/processes.mutants.log" 2>&1 || { tail -20 "$work/processes.mutants.log"; exit 1; }
"$python" tests/processes/same_verdicts.py --mutants "$work/threads.mutants.json" "$work/processes.mutants.json"
