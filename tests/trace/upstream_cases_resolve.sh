#!/bin/sh
# Every minimal case committed under reports/deepspeed/upstream/cases/ is a scenario muoncheck
# reads (`muoncheck resolve`): its repro line and `muoncheck repro CASE --for deepspeed` start
# there. (206 of them once carried their sweep's name under a renamed file, which the loader
# refuses: the name must be the file's stem.)
muoncheck=$1
failed=0
for f in reports/deepspeed/upstream/cases/*.json; do
  case $f in *.trace.json) continue ;; esac
  if ! out=$("$muoncheck" resolve "$f" 2>&1 >/dev/null); then
    echo "FAIL: $f: $out"
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ] && echo "every case resolves" || { echo "$failed cases do not resolve"; exit 1; }
