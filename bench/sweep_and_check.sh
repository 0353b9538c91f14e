#!/usr/bin/env bash
# Sweep and check throughput, measured (reported, never asserted):
#   bench/sweep_and_check.sh [MUONCHECK] [CASES] [SEED] [REPEATS]
# runs `muoncheck sweep --cases CASES --seed SEED` and `muoncheck check` REPEATS times each
# (defaults: build/harness/muoncheck, 200, 1, 2) and prints, per run, the wall time, the
# CPU time (user + sys of the process and its threads) and the load average before it —
# on a shared machine the wall time says as much about the neighbours as about muoncheck,
# so read it beside the load and the CPU time. sweep: cases per minute; check: seconds.
# Extra arguments for both commands can be given in MUONCHECK_ARGS (e.g. "--backend cuda").
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/harness/muoncheck}
cases=${2:-200}
seed=${3:-1}
repeats=${4:-2}
extra=${MUONCHECK_ARGS:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }
# timed NAME CMD...: runs CMD, prints "NAME wall W cpu C load L" (and keeps its output).
timed() {
  local name=$1
  shift
  local before
  before=$(load)
  /usr/bin/time -f "%e %U %S" -o "$out/time" "$@" >"$out/$name.log" 2>&1 || {
    echo "$name: exit $? (log: last lines below)" >&2
    tail -5 "$out/$name.log" >&2
  }
  read -r wall user sys <"$out/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  echo "$name wall $wall s, cpu $cpu s (user $user, sys $sys), load before $before"
}

echo "machine: $(nproc) cores; $bin at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for r in $(seq 1 "$repeats"); do
  # shellcheck disable=SC2086
  timed sweep "$bin" sweep --cases "$cases" --seed "$seed" --cases-dir "$out/cases" $extra
  grep -o 'cases in [0-9.]*s ([0-9.]* cases/min)' "$out/sweep.log" | sed 's/^/  sweep: /'
  # shellcheck disable=SC2086
  timed check "$bin" check --report "$out/check.json" $extra
  grep -o 'golden [0-9]* checked, [0-9]* failed => [A-Z]*' "$out/check.log" | sed 's/^/  check: /'
done
