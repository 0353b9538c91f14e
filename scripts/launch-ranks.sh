#!/usr/bin/env bash
# Starts N copies of a command on this node as ranks 0..N-1 of one launch, with the
# environment torchrun gives its workers (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE),
# for machines without torchrun:
#   scripts/launch-ranks.sh 4 build/harness/muoncheck check --ranks processes --store DIR
# Waits for every rank; exits with rank 0's code, or, when rank 0 was killed by a signal,
# with the code of the lowest rank that exited by itself.
set -u
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N COMMAND [ARGS...]" >&2
  exit 2
fi
n=$1
shift
pids=()
for ((r = 0; r < n; r++)); do
  RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n "$@" &
  pids+=($!)
done
code=
for pid in "${pids[@]}"; do
  wait "$pid"
  c=$?
  if [ -z "$code" ] && [ "$c" -lt 128 ]; then code=$c; fi
done
exit "${code:-3}"
