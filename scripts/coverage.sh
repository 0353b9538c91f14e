#!/usr/bin/env bash
# Line and branch coverage of impl/ by `muoncheck check` alone (docs/coverage.md).
#
#   scripts/coverage.sh [CHECK ARGS...]
#
# Builds a separate instrumented tree (build-coverage/, or $COVERAGE_BUILD) in which only
# impl/ is compiled with --coverage at -O0 (-DMUONCHECK_COVERAGE=ON), runs
# `muoncheck check` there once on the shipped suite (extra arguments go to check), and
# prints gcovr's per-file table plus two summary lines (scopes below). Reports land in
# $COVERAGE_BUILD/coverage/: impl.txt and impl-all.txt (the tables), impl-uncovered.txt
# (every line and branch of the engine scope not hit, by file), summary*.json. Throw and compiler-generated unreachable
# branches are excluded (gcovr --exclude-throw-branches --exclude-unreachable-branches):
# they are the exception edges of every call, not decisions of the code. The NS inner loop
# runs billions of times, above gcovr's "suspicious hits" guard (meant for a gcov bug), which
# is off. Lines that are no code (a lone closing brace) are not counted.
# COVERAGE_REPORT_ONLY=1 re-reads the counters of the last run without building or running.
# COVERAGE_OTHER_RUNS=1 then also runs what is meant to reach the rest of impl/ — `muoncheck
# mutants` (the fault paths) and the transport's tests (tests/impl/comm_*, collective_bandwidth:
# failure handling) — and prints the coverage of all of impl/ by check and those together
# (impl-union.txt), so every line check leaves out is shown reached by its own run, or not.
# Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${COVERAGE_BUILD:-build-coverage}
jobs=${COVERAGE_JOBS:-2}

./scripts/bootstrap.sh
if ! command -v gcovr >/dev/null 2>&1; then
  echo "coverage: installing gcovr"
  python3 -m pip install --quiet gcovr 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages gcovr 2>/dev/null || {
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends gcovr
  }
fi

status=0
if [ "${COVERAGE_REPORT_ONLY:-0}" != 1 ]; then
  tests=OFF
  [ "${COVERAGE_OTHER_RUNS:-0}" = 1 ] && tests=ON
  cmake -S . -B "$build" -G Ninja -DMUONCHECK_CUDA=OFF -DMUONCHECK_COVERAGE=ON \
    -DMUONCHECK_TESTS=$tests -DMUONCHECK_BENCH=OFF >/dev/null
  nice cmake --build "$build" -j"$jobs" --target muoncheck

  find "$build" -name '*.gcda' -delete
  mkdir -p "$build/coverage"

  "$build/harness/muoncheck" check --report "$build/coverage/check-report.json" "$@" \
    >"$build/coverage/check.log" 2>&1 || status=$?
  tail -n 3 "$build/coverage/check.log"
  if [ "$status" -ne 0 ]; then
    echo "coverage: muoncheck check exited $status (see $build/coverage/check.log); the figures below are of that run"
  fi
fi

common=(--root "$root" --object-directory "$build" --filter 'impl/' --exclude 'impl/math/cuda/'
        --exclude 'impl/comm/nccl_communicator' --exclude-throw-branches --exclude-unreachable-branches
        --exclude-noncode-lines --gcov-suspicious-hits-threshold 0)
# Two scopes. "all": every impl/ file this build compiles. "engine": the conformance paths
# that `check` is meant to reach — impl/ less the fault catalogue (impl/faults/, and the
# lines and branches marked CHECK_EXCL_* "fault path": they run only under --fault, and
# `mutants` runs them), less the selection of another build's backend (CHECK_EXCL_*
# "another build's backend": CUDA/NCCL in a CPU build; check runs the CPU backend) and less
# impl/comm/ (the transport: its failure handling and the collectives the engine never
# calls are tested by tests/impl/comm_*). A CHECK_EXCL line that `check` did
# run is reported (--warn-excluded-lines-with-hits): a marker must never hide real code.
engine=(--exclude-pattern-prefix CHECK --exclude 'impl/faults/' --exclude 'impl/comm/' --warn-excluded-lines-with-hits)
out="$build/coverage"
gcovr "${common[@]}" --txt "$out/impl-all.txt" --json-summary "$out/summary-all.json"
gcovr "${common[@]}" "${engine[@]}" --txt "$out/impl.txt" --json-summary-pretty --json-summary "$out/summary.json" \
  --json "$out/impl.json" 2>&1 | grep -v '^$' || true
gcovr "${common[@]}" "${engine[@]}" --txt-metric branch --txt "$out/impl-branches.txt" >/dev/null 2>&1 || true
# Every line and branch of the engine scope that `check` did not reach, per file.
python3 - "$out/impl.json" >"$out/impl-uncovered.txt" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
for f in sorted(data["files"], key=lambda f: f["file"]):
    src = open(f["file"]).read().split("\n")
    missed = []
    for ln in f["lines"]:
        if ln.get("gcovr/noncode") or ln.get("gcovr/excluded"):
            continue
        n = ln["line_number"]
        text = src[n - 1].strip()[:100]
        if ln["count"] == 0:
            missed.append(f"  {n:4d} not run           {text}")
            continue
        idle = [str(i) for i, b in enumerate(ln.get("branches", [])) if b["count"] == 0 and not b.get("gcovr/excluded")]
        if idle:
            missed.append(f"  {n:4d} branch {','.join(idle):10s} {text}")
    if missed:
        print(f["file"])
        print("\n".join(missed))
PY
cat "$out/impl.txt"
python3 - "$out/summary-all.json" "$out/summary.json" <<'PY'
import json, sys
for label, path in (("all of impl/", sys.argv[1]), ("engine scope", sys.argv[2])):
    s = json.load(open(path))
    print(f"coverage by muoncheck check, {label}: lines {s['line_percent']:.1f}% ({s['line_covered']}/{s['line_total']}), "
          f"branches {s['branch_percent']:.1f}% ({s['branch_covered']}/{s['branch_total']})")
PY
echo "not reached (engine scope): $out/impl-uncovered.txt; every file: $out/impl-all.txt"

if [ "${COVERAGE_OTHER_RUNS:-0}" = 1 ] && [ "${COVERAGE_REPORT_ONLY:-0}" != 1 ]; then
  comm_tests=(comm_collectives_test comm_counting_test comm_failure_test collective_bandwidth_test)
  gcovr "${common[@]}" --json "$out/check-all.json" >/dev/null
  nice cmake --build "$build" -j"$jobs" --target "${comm_tests[@]}"
  find "$build" -name '*.gcda' -delete
  "$build/harness/muoncheck" mutants >"$out/mutants.log" 2>&1 || echo "coverage: muoncheck mutants exited $? (see $out/mutants.log)"
  tail -n 2 "$out/mutants.log"
  for t in "${comm_tests[@]}"; do
    "$build/tests/impl/$t" --gtest_brief=1 >"$out/$t.log" 2>&1 || echo "coverage: $t failed (see $out/$t.log)"
  done
  gcovr "${common[@]}" --json "$out/other-runs-all.json" >/dev/null
  gcovr --root "$root" --add-tracefile "$out/check-all.json" --add-tracefile "$out/other-runs-all.json" \
    --txt "$out/impl-union.txt" --json-summary "$out/summary-union.json" >/dev/null
  cat "$out/impl-union.txt"
  python3 - "$out/summary-union.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"coverage of all of impl/ by check + mutants + the transport's tests: lines {s['line_percent']:.1f}% "
      f"({s['line_covered']}/{s['line_total']}), branches {s['branch_percent']:.1f}% ({s['branch_covered']}/{s['branch_total']})")
PY
fi
exit "$status"
