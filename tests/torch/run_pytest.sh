#!/bin/sh
# Runs pytest on a folder with the first interpreter that has torch and pytest (pyenv's python3,
# then Debian's /usr/bin/python3); 77 (ctest SKIP) when none has them.
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch, pytest, numpy" >/dev/null 2>&1; then
    exec "$py" -m pytest -q -p no:cacheprovider "$@"
  fi
done
echo "SKIP: no python3 with torch, pytest and numpy"
exit 77
