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
# Versions run side by side (each its own torchrun and port). Output per version:
# OUT_DIR/ds-X.Y.Z.log, and OUT_DIR/ds-X.Y.Z.tar.xz (the traces under PACK_MAX_MB, default 8 MB,
# each; unpack with `tar xJf`). With MUONCHECK=path/to/muoncheck the traces are also judged where
# they were made: OUT_DIR/deepspeed-X.Y.Z.verify.json (+ .verify.log), so traces too large to
# bring back (the llama ones, 30-50 MB of JSON) are judged all the same.
# Scenarios with engine.compile need torch.compile on: run them in a call of their own with
# TORCH_COMPILE_DISABLE=0 (the adapter declines a scenario whose compile setting the launch does
# not have). A checkpoint resuming at another dp takes two launches: scripts/deepspeed-run-cpu.sh
# does that; here it is declined.
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
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast

run_version() {
  local v=$1 site=/tmp/muoncheck-site-ds-$1 work=/tmp/muoncheck-traces/ds-$1 log=$out/ds-$1.log rc=0
  rm -rf "$site" "$work"
  : > "$log"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
    .whl/common/*.whl .whl/ds-"$v"/*.whl >> "$log" 2>&1 || { echo "ds-$v: wheel install failed" | tee -a "$log"; return 3; }
  local start=$(date +%s) dp files
  for dp in $(python3 -c 'import json,sys; print(" ".join(sorted({str(json.load(open(f)).get("engine", {}).get("dp", 1)) for f in sys.argv[1:]})))' $scenarios); do
    files=$(python3 -c 'import json,sys; print(" ".join(f for f in sys.argv[2:] if json.load(open(f)).get("engine", {}).get("dp", 1) == int(sys.argv[1])))' "$dp" $scenarios)
    if [ "$dp" -gt "$gpus" ]; then echo "ds-$v: dp $dp needs $dp GPUs, $gpus visible: skipped $files" | tee -a "$log"; continue; fi
    PYTHONPATH="$site" PYTHONUNBUFFERED=1 DS_BUILD_OPS=0 MUONCHECK_CHECKPOINTS="/tmp/muoncheck-checkpoints/ds-$v" \
      python3 -m torch.distributed.run --standalone --nproc-per-node "$dp" \
      adapters/deepspeed/run_deepspeed.py --out "$work" $files >> "$log" 2>&1 || rc=1
  done
  echo "ds-$v: $(( $(date +%s) - start )) s to run" | tee -a "$log"
  if [ -n "${MUONCHECK:-}" ]; then
    local traces=() f
    for f in "$work"/*.trace.json; do traces+=(--trace "$f"); done
    "$MUONCHECK" verify $scenarios "${traces[@]}" --report "$out/deepspeed-$v.verify.json" > "$out/ds-$v.verify.log" 2>&1
    echo "ds-$v: verify exit $? after $(( $(date +%s) - start )) s" | tee -a "$log"
  fi
  (cd /tmp/muoncheck-traces && find "ds-$v" -name '*.trace.json' -size -"${PACK_MAX_MB:-8}"M | sort | tar -cJf - -T -) > "$out/ds-$v.tar.xz"
  find "$work" -name '*.trace.json' -size +"$(( ${PACK_MAX_MB:-8} - 1 ))"M -printf "ds-$v: not packed (judged here only): %f %s bytes\n" | tee -a "$log"
  return $rc
}

pids=()
for v in "${versions[@]}"; do run_version "$v" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=$?; done
for v in "${versions[@]}"; do grep -E "^[a-z0-9-]+: (ran|UNSUPPORTED|ERROR)" "$out/ds-$v.log" | sed "s/^/ds-$v /"; done
exit $status
