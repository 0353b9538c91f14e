#!/usr/bin/env bash
# Runs the torch.optim.Muon adapter (adapters/torch) on scenarios/torch/ with one torch, one process
# per rank (a dp-N group under torchrun --nproc-per-node N), and judges the traces with muoncheck.
#
#   scripts/torch-run.sh OUT_DIR
#   TORCH_PATH=/work/pyenv/torch-2.11.0 scripts/torch-run.sh OUT_DIR      # a second torch (pip --target)
#   MUONCHECK_DEVICE=cuda DP="1" scripts/torch-run.sh OUT_DIR             # GPU over NCCL, dp 1 only
#
# Every scenario runs twice (--repeat: the run `deterministic` compares against) and its variants once
# (`muoncheck variants`: the gas/dp/stage/bucket re-splits and the gas-1 re-split the relational
# invariants and gathers-once-per-step compare against), so every invariant a trace can show is judged.
# Env: SCENARIOS (default scenarios/torch/*.json), VARIANTS (variant scenario files; default: written
# by `muoncheck variants` into OUT_DIR/torch-VERSION-DEVICE/variants/). Files written by `muoncheck
# resolve` work for both, where there is no muoncheck binary (the GPU machine: adapters/torch/README.md);
# the traces are then left for `muoncheck verify` elsewhere. DP (dp groups to run, default "1 2"),
# MUONCHECK (default build/harness/muoncheck), MUONCHECK_DEVICE (cpu: gloo, default; cuda: NCCL).
# Output: OUT_DIR/torch-VERSION-DEVICE/*.trace.json, run.log, and OUT_DIR/torch-VERSION-DEVICE.verify.json
# (the `muoncheck verify` report over every trace of that torch), which scripts/torch-verdicts.py reads.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/torch-run.sh OUT_DIR}
muoncheck=${MUONCHECK:-build/harness/muoncheck}
device=${MUONCHECK_DEVICE:-cpu}
export MUONCHECK="$muoncheck" MUONCHECK_DEVICE="$device" PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast
if [ -n "${TORCH_PATH:-}" ]; then
  export PYTHONPATH="$TORCH_PATH${PYTHONPATH:+:$PYTHONPATH}"
  # a --target torch installed without its nvidia-* wheels loads the environment's (CUDA builds need them even on CPU)
  if ! python3 -c 'import torch' 2> /dev/null; then
    nvidia=$(python3 -c 'import site; print(site.getsitepackages()[0])')/nvidia
    export LD_LIBRARY_PATH="$(ls -d "$nvidia"/*/lib 2> /dev/null | paste -sd:)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
version=$(python3 -c 'import torch; print(torch.__version__.split("+")[0])') || { echo "torch does not import"; exit 3; }
work="$out/torch-$version-$device"
mkdir -p "$work"
scenarios=${SCENARIOS:-$(ls scenarios/torch/*.json)}
variants=${VARIANTS:-}
if [ -z "${VARIANTS+set}" ] && [ -x "$muoncheck" ]; then
  rm -rf "$work/variants"
  "$muoncheck" variants $scenarios --out-dir "$work/variants" > "$work/variants.log" || { echo "muoncheck variants failed"; exit 3; }
  variants=$(ls "$work"/variants/*.json | grep -v '/variants.json$')
fi
with_dp='import json,sys; docs = {f: json.load(open(f)) for f in sys.argv[2:]}
print(" ".join(f for f, d in docs.items() if d.get("scenario", d).get("engine", {}).get("dp", 1) == int(sys.argv[1])))'
rc=0 port=29600
for dp in ${DP:-1 2}; do
  files=$(python3 -c "$with_dp" "$dp" $scenarios)
  extra=$(python3 -c "$with_dp" "$dp" $variants)
  for group in "$files" "$extra"; do   # the scenarios twice (--repeat), their variants once
    [ -n "$group" ] || continue
    repeat=""
    [ "$group" = "$files" ] && repeat=--repeat
    port=$((port + 1))
    python3 -m torch.distributed.run --nproc-per-node "$dp" --master-port "$port" -m adapters.torch.run --out "$work" \
      $repeat $group >> "$work/run.log" 2>&1 || rc=1
  done
done
if [ ! -x "$muoncheck" ]; then   # e.g. the GPU machine with resolved scenarios: judge the traces where muoncheck is
  echo "torch $version on $device: run exit $rc; no muoncheck at $muoncheck, traces not judged ($work)"
  exit $rc
fi
resolved='import json,sys; sys.exit(0 if any(json.load(open(f)).get("format", "").startswith("muoncheck-resolved-scenario") for f in sys.argv[1:]) else 1)'
if python3 -c "$resolved" $scenarios; then   # verify reads scenario files, not their resolved form
  echo "torch $version on $device: run exit $rc; the scenarios are resolved files: judge the traces with the scenario files (adapters/torch/README.md) ($work)"
  exit $rc
fi
traces=()
for f in "$work"/*.trace.json; do traces+=(--trace "$f"); done
"$muoncheck" verify $scenarios "${traces[@]}" --report "$out/torch-$version-$device.verify.json" > "$work/verify.log" 2>&1
echo "torch $version on $device: run exit $rc, verify exit $? ($out/torch-$version-$device.verify.json)"
exit $rc
