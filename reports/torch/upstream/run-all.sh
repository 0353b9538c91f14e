#!/usr/bin/env bash
# Runs every torch-only repro script with the torch on PYTHONPATH (e.g. TORCH_PATH=/work/pyenv/torch-2.11.0
# with LD_LIBRARY_PATH holding its CUDA libraries); each exits 1 while its defect is there.
cd "$(dirname "$0")"
[ -n "${TORCH_PATH:-}" ] && export PYTHONPATH="$TORCH_PATH${PYTHONPATH:+:$PYTHONPATH}"
status=0
for f in *_repro.py; do
  python3 "$f" 2>/dev/null; rc=$?
  echo "  $f: exit $rc"
  [ $rc -eq 0 ] || status=1
done
exit $status
