#!/usr/bin/env bash
# Runs every repro script here against each DeepSpeed version carried as a wheel (.whl/ds-X.Y.Z,
# see adapters/deepspeed/README.md), one GPU each, and prints what each printed: the reports'
# scripts and the sweep counterexamples' scripts (cases/*_repro.py, written by `muoncheck repro`).
# Without a GPU the scripts run on DeepSpeed's CPU accelerator (DS_ACCELERATOR=cpu; no fp16 there).
#   reports/deepspeed/upstream/run-all.sh [VERSION...]
#   ONLY=reports|cases (default both)   JOBS=N: N scripts side by side (default 1; output in order)
set -uo pipefail
cd "$(dirname "$0")/../.."
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then for d in .whl/ds-*/; do versions+=("$(basename "$d" | sed 's/^ds-//')"); done; fi
export TORCH_COMPILE_DISABLE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 DS_BUILD_OPS=0
reports=("fp16_muon_momentum_repro.py --stage 2" "fp16_muon_momentum_repro.py --stage 3"
         "per_head_alignment_repro.py" "conv_weight_muon_repro.py --stage 0" "conv_weight_muon_repro.py --stage 2"
         "conv_weight_muon_repro.py --stage 3" "conv_weight_muon_repro.py --stage 2 --kernel 1"
         "clip_muon_repro.py --stage 2" "clip_muon_repro.py --stage 3"
         "scale_growth_unscale_repro.py --stage 0" "scale_growth_unscale_repro.py --stage 2"
         "scale_growth_unscale_repro.py --stage 2 --clip 0.1" "scale_growth_unscale_repro.py --stage 3"
         "clip_muon_repro.py --stage 1" "stage0_unfused_init_step_repro.py --optimizer Muon"
         "stage0_unfused_init_step_repro.py --optimizer AdamW"
         "stage0_unfused_init_step_repro.py --optimizer AdamW --weight-decay 0.1"
         "stage0_16bit_masters_tags_repro.py --dtype bf16"
         "zero3_bf16_skip_muon_momentum_repro.py --stage 3" "zero3_bf16_skip_muon_momentum_repro.py --stage 2"
         "zero2_fp32_accum_rs_merge_repro.py" "zero2_fp32_accum_rs_merge_repro.py --offload"
         "muon_param_groups_repro.py --stage 1" "muon_param_groups_repro.py --stage 3")
runs=()
[ "${ONLY:-}" = cases ] || runs+=("${reports[@]}")
if [ "${ONLY:-}" != reports ]; then
  for f in $(cd reports/deepspeed/upstream && ls cases/*_repro.py); do runs+=("$f"); done
fi
work=$(mktemp -d)

# One script on one version: its filtered output and exit into $work/VERSION.INDEX.
one() {
  local v=$1 i=$2 run=$3 site=/tmp/muoncheck-upstream-site-ds-$1 rc
  {
    echo "=== deepspeed $v: $run"
    # $run is a script and its arguments: split on purpose
    # shellcheck disable=SC2086
    PYTHONPATH="$site" python3 -m torch.distributed.run --standalone --nproc-per-node 1 \
        reports/deepspeed/upstream/$run 2>&1 | grep -vE "Warning|warnings.warn|^\[rank[0-9]+\]:\[W|^W[0-9]{4}|^I[0-9]{4}|^ +return func"
    rc=${PIPESTATUS[0]}
    echo "=== exit $rc"
  } > "$work/$v.$i" 2>&1
}

for v in "${versions[@]}"; do
  site=/tmp/muoncheck-upstream-site-ds-$v   # its own: the other DeepSpeed scripts may run beside it
  [ -d "$site/deepspeed" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --target "$site" .whl/common/*.whl .whl/ds-"$v"/*.whl
  for i in "${!runs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1}" ]; do wait -n; done
    one "$v" "$i" "${runs[$i]}" &
  done
done
wait
for v in "${versions[@]}"; do for i in "${!runs[@]}"; do cat "$work/$v.$i"; done; done
rm -rf "$work"
