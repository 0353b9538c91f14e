#!/usr/bin/env bash
# Installs the Debian packages muoncheck builds against, and the Python packages the
# torch adapter's tests need (tests/torch: torch and pytest from PyPI, about 90 s). Idempotent:
# a package that is already installed is not fetched again, and apt-get update runs only
# when something is missing.
set -euo pipefail

python_packages() {
  python3 -c "import torch, pytest, numpy, coverage" 2>/dev/null && { echo "bootstrap: torch, pytest, numpy, coverage present"; return; }
  echo "bootstrap: pip install torch pytest numpy coverage"
  python3 -m pip install -q torch pytest numpy coverage 2>/dev/null ||
    python3 -m pip install -q --break-system-packages torch pytest numpy coverage   # Debian's python (PEP 668)
}

packages=(
  build-essential cmake ninja-build git
  libboost-dev              # Boost.Multiprecision (float128 needs libquadmath, part of gcc)
  nlohmann-json3-dev        # scenario files, reports, golden digests
  librapidcheck-dev         # property-based sweeps
  libgtest-dev libgmock-dev # unit and conformance tests
  libgloo-dev               # CPU collectives (ranks as threads over loopback TCP)
  libbenchmark-dev          # micro-benchmarks
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
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bootstrap: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
python_packages
