#!/usr/bin/env bash
# Runs every repro script (torch + pytorch-optimizer; TORCH_PATH puts another torch first on PYTHONPATH)
# each exits 1 while its defect is there.
cd "$(dirname "$0")"
[ -n "${TORCH_PATH:-}" ] && export PYTHONPATH="$TORCH_PATH${PYTHONPATH:+:$PYTHONPATH}"
status=0
for f in *_repro.py; do
  python3 "$f" 2>/dev/null; rc=$?
  echo "  $f: exit $rc"
  [ $rc -eq 0 ] || status=1
done
exit $status
