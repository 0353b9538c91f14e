#!/usr/bin/env bash
# Runs the DeepSpeed adapter on every scenario in scenarios/deepspeed/ for each DeepSpeed
# version carried as a wheel, one process per GPU (a dp-N scenario under torchrun with N
# processes; a scenario whose dp exceeds the visible GPUs is skipped with a line saying so),
# and packs the traces for `muoncheck verify`.
#
#   scripts/deepspeed-run.sh OUT_DIR [VERSION...]      (default: every .whl/ds-VERSION/ folder)
#   SCENARIOS="a.json b.json" scripts/deepspeed-run.sh OUT_DIR ...   (a subset)
#
# Wheels (built once on a machine with PyPI, see adapters/deepspeed/README.md):
#   .whl/common/     hjson, pydantic, pydantic-core, annotated-types, typing-inspection, typing-extensions
#   .whl/ds-X.Y.Z/   deepspeed-X.Y.Z-py3-none-any.whl (pip wheel --no-deps deepspeed==X.Y.Z)
# Each version installs into its own --target folder, so two versions never meet.
# Output per version: OUT_DIR/ds-X.Y.Z.tar.xz.partNN (the traces, split at 15 MiB; unpack with
# `cat ds-X.Y.Z.tar.xz.part* | tar xJ`) and OUT_DIR/ds-X.Y.Z.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/deepspeed-run.sh OUT_DIR [VERSION...]}
shift
mkdir -p "$out"
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  for d in .whl/ds-*/; do versions+=("$(basename "$d" | sed 's/^ds-//')"); done
fi
scenarios=${SCENARIOS:-$(ls scenarios/deepspeed/*.json)}
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
status=0
for v in "${versions[@]}"; do
  site=/tmp/muoncheck-site-ds-$v
  work=/tmp/muoncheck-traces/ds-$v
  rm -rf "$site" "$work"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
    .whl/common/*.whl .whl/ds-"$v"/*.whl || { echo "ds-$v: wheel install failed"; status=3; continue; }
  start=$(date +%s)
  : > "$out/ds-$v.log"
  for dp in $(python3 -c 'import json,sys; print(" ".join(sorted({str(json.load(open(f)).get("engine", {}).get("dp", 1)) for f in sys.argv[1:]})))' $scenarios); do
    files=$(python3 -c 'import json,sys; print(" ".join(f for f in sys.argv[2:] if json.load(open(f)).get("engine", {}).get("dp", 1) == int(sys.argv[1])))' "$dp" $scenarios)
    if [ "$dp" -gt "$gpus" ]; then echo "ds-$v: dp $dp needs $dp GPUs, $gpus visible: skipped $files" | tee -a "$out/ds-$v.log"; continue; fi
    PYTHONPATH="$site" PYTHONUNBUFFERED=1 DS_BUILD_OPS=0 NCCL_NVLS_ENABLE=0 \
      python3 -m torch.distributed.run --standalone --nproc-per-node "$dp" \
      adapters/deepspeed/run_deepspeed.py --out "$work" $files >> "$out/ds-$v.log" 2>&1 || status=1
  done
  echo "ds-$v: $(( $(date +%s) - start )) s in all"
  grep -E "^[a-z0-9-]+: (ran|UNSUPPORTED|ERROR)" "$out/ds-$v.log"
  # Split so no file passes the 16 MiB a device call may return (a llama trace is 30-50 MB of JSON).
  tar -C /tmp/muoncheck-traces -cJf - "ds-$v" | split -b 15M -d - "$out/ds-$v.tar.xz.part"
done
exit $status
