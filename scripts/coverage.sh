#!/usr/bin/env bash
# Line and branch coverage of impl/ by `muoncheck check` alone (docs/coverage.md).
#
#   scripts/coverage.sh [CHECK ARGS...]
#
# Builds a separate instrumented tree (build-coverage/, or $COVERAGE_BUILD) in which only
# impl/ is compiled with --coverage at -O0 (-DMUONCHECK_COVERAGE=ON), runs
# `muoncheck check` there once on the shipped suite (extra arguments go to check), and
# prints gcovr's per-file table for impl/ plus a summary line. Reports land in
# $COVERAGE_BUILD/coverage/: impl.txt (the table), impl-uncovered.txt (every line and
# branch not hit, by file) and summary.json. Throw and compiler-generated unreachable
# branches are excluded (gcovr --exclude-throw-branches --exclude-unreachable-branches):
# they are the exception edges of every call, not decisions of the code. Not part of CI.
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

cmake -S . -B "$build" -G Ninja -DMUONCHECK_CUDA=OFF -DMUONCHECK_COVERAGE=ON \
  -DMUONCHECK_TESTS=OFF -DMUONCHECK_BENCH=OFF >/dev/null
nice cmake --build "$build" -j"$jobs" --target muoncheck

find "$build" -name '*.gcda' -delete
mkdir -p "$build/coverage"
status=0
"$build/harness/muoncheck" check --report "$build/coverage/check-report.json" "$@" \
  >"$build/coverage/check.log" 2>&1 || status=$?
tail -n 3 "$build/coverage/check.log"
if [ "$status" -ne 0 ]; then
  echo "coverage: muoncheck check exited $status (see $build/coverage/check.log); the figures below are of that run"
fi

common=(--root "$root" --object-directory "$build" --filter 'impl/' --exclude 'impl/math/cuda/'
        --exclude 'impl/comm/nccl_communicator' --exclude-throw-branches --exclude-unreachable-branches)
gcovr "${common[@]}" --txt "$build/coverage/impl.txt" --json-summary-pretty --json-summary "$build/coverage/summary.json"
gcovr "${common[@]}" --txt-metric branch --txt "$build/coverage/impl-branches.txt" >/dev/null 2>&1 || true
# Every line and branch not hit, per file (gcov's own annotated output, filtered).
gcovr "${common[@]}" --json "$build/coverage/impl.json"
python3 - "$build/coverage/impl.json" >"$build/coverage/impl-uncovered.txt" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
for f in sorted(data["files"], key=lambda f: f["file"]):
    missed = []
    for ln in f["lines"]:
        if ln.get("gcovr/noncode"):
            continue
        if ln["count"] == 0:
            missed.append(f"  line {ln['line_number']}: not run")
            continue
        for i, b in enumerate(ln.get("branches", [])):
            if b["count"] == 0:
                missed.append(f"  line {ln['line_number']}: branch {i} not taken")
    if missed:
        print(f["file"])
        print("\n".join(missed))
PY
cat "$build/coverage/impl.txt"
python3 - "$build/coverage/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"impl/ coverage by muoncheck check: lines {s['line_percent']:.1f}% ({s['line_covered']}/{s['line_total']}), "
      f"branches {s['branch_percent']:.1f}% ({s['branch_covered']}/{s['branch_total']})")
PY
echo "uncovered lines and branches: $build/coverage/impl-uncovered.txt"
exit "$status"
