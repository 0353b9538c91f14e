#!/bin/sh
# Runs a Python test with the first interpreter that has numpy (pyenv's python3, then
# Debian's /usr/bin/python3, where scripts/bootstrap.sh installs python3-numpy); 77 (ctest
# SKIP) when none has it.
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import numpy" >/dev/null 2>&1; then
    exec "$py" "$@"
  fi
done
echo "SKIP: no python3 with numpy"
exit 77
