#!/usr/bin/env bash
# Ranks as processes: a rank killed (SIGKILL) in the middle of a run ends the run on every
# rank with exit 3 and a JSON report naming the lost rank, within the collective timeout
# plus 5 s, with no process left running. Killing rank 2 (rank 0 writes the report) and
# killing rank 0 (the lowest survivor, rank 1, writes it).
# usage: rank_killed_test.sh MUONCHECK   (run from the source root)
set -u
muoncheck=$1
timeout_ms=5000
work=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# kill_one VICTIM REPORTER: start 4 ranks, SIGKILL VICTIM once the run is under way.
kill_one() {
  local victim=$1 reporter=$2 dir=$work/kill$1
  mkdir -p "$dir"
  local pids=()
  for r in 0 1 2 3; do
    RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 "$muoncheck" run straddle-fp32-z2 --ranks processes \
      --store "$dir/store" --timeout-ms $timeout_ms --report "$dir/report.json" >"$dir/rank$r.log" 2>&1 &
    pids+=($!)
  done
  # Mid-run: the group connected (4 control keys in the store) and the first run's job and
  # mesh keys posted; then a little later, while rank 0 judges (runs, oracle, controls).
  local waited=0
  while [ "$(ls "$dir/store" 2>/dev/null | wc -l)" -lt 8 ] && [ $waited -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep 0.5
  kill -0 "${pids[$victim]}" 2>/dev/null || fail "rank $victim ended before it was killed: $(cat "$dir/rank$victim.log")"
  kill -KILL "${pids[$victim]}"
  local killed_at=$(date +%s%3N) codes=() ended_at=
  for r in 0 1 2 3; do
    wait "${pids[$r]}"
    codes+=($?)
    [ "$r" -eq "$reporter" ] && ended_at=$(date +%s%3N)
  done
  local all_ended_at=$(date +%s%3N)
  local took=$((ended_at - killed_at)) all_took=$((all_ended_at - killed_at))
  echo "killed rank $victim: rank $reporter ended after ${took} ms, every rank after ${all_took} ms; exit codes ${codes[*]}"
  [ "${codes[$reporter]}" -eq 3 ] || fail "rank $reporter exited ${codes[$reporter]}, expected 3: $(tail -3 "$dir/rank$reporter.log")"
  for r in 0 1 2 3; do
    [ "$r" -eq "$victim" ] || [ "${codes[$r]}" -eq 3 ] || fail "rank $r exited ${codes[$r]}, expected 3"
  done
  [ "$all_took" -lt $((timeout_ms + 5000)) ] || fail "the run took ${all_took} ms after the kill (timeout $timeout_ms ms + 5 s)"
  [ -s "$dir/report.json" ] || fail "no report written"
  grep -q "rank $victim" "$dir/report.json" || fail "the report does not name rank $victim: $(head -c 2000 "$dir/report.json")"
  grep -q '"error"' "$dir/report.json" || fail "the report records no error"
}

kill_one 2 0
kill_one 0 1
echo "OK"
