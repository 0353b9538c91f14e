#!/usr/bin/env bash
# Installs DeepSpeed VERSION from the carried wheels into its own folder, for PYTHONPATH:
#   scripts/deepspeed-site.sh VERSION [DIR]     (default DIR: /tmp/muoncheck-site-ds-VERSION)
# Wheels: .whl/common/*.whl and .whl/ds-VERSION/*.whl (adapters/deepspeed/README.md says how they
# are built). Each version gets its own --target folder, so two versions never meet. Prints DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: scripts/deepspeed-site.sh VERSION [DIR]}
site=${2:-/tmp/muoncheck-site-ds-$v}
rm -rf "$site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
  .whl/common/*.whl .whl/ds-"$v"/*.whl >&2
echo "$site"
