#!/usr/bin/env bash
# Installs the Debian packages muoncheck builds against. Idempotent: a package
# that is already installed is not fetched again, and apt-get update runs only
# when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  libboost-dev              # Boost.Multiprecision (float128 needs libquadmath, part of gcc)
  nlohmann-json3-dev        # scenario files, reports, golden digests
  librapidcheck-dev         # property-based sweeps
  libgtest-dev libgmock-dev # unit and conformance tests
  libgloo-dev               # CPU collectives (ranks as threads over loopback TCP)
  libbenchmark-dev          # micro-benchmarks
  python3-numpy             # tests/trace: the DeepSpeed adapter's data generator vs ours
  python3-coverage          # tests/trace: scripts/deepspeed-coverage.py (coverage.py) and its line rule
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
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bootstrap: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
