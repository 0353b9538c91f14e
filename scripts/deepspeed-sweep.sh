#!/usr/bin/env bash
# The property sweep against DeepSpeed on the GPU machine: for each version, WORKERS resident workers
# (adapters/deepspeed/resident_worker.py) at dp DP, `muoncheck sweep --impl deepspeed=VERSION`
# with CASES cases, then each defect's minimal case as a standalone script (`muoncheck repro`),
# run once. The versions run side by side (each its own worker; small cases share one GPU).
#
#   MUONCHECK=build-cuda/bundle/bin/muoncheck scripts/deepspeed-sweep.sh OUT_DIR [VERSION...]
#   CASES=500 DP=1 SEED=1 BACKEND=cuda BUDGET=0 SHRINK_SECONDS=240 MAX_DEFECTS=6 WORKERS=1 (defaults; BUDGET: no
#   new case after that many seconds, so a run fits a time limit and still writes its JSON; WORKERS: resident
#   workers per version, N cases at once, same record as one worker)
#
# Output per version: OUT_DIR/sweep-VERSION.{json,log}, OUT_DIR/cases-VERSION/ (minimal cases,
# their traces, NAME_repro.py, NAME.md; the unattributed failing cases with their traces) and
# OUT_DIR/cases-VERSION/NAME.repro.log (each minimal case's script, run once).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/deepspeed-sweep.sh OUT_DIR [VERSION...]}
shift
mkdir -p "$out"
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  for d in .whl/ds-*/; do versions+=("$(basename "$d" | sed 's/^ds-//')"); done
fi
muoncheck=${MUONCHECK:-build/harness/muoncheck}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast

sweep_version() {
  local v=$1 cases_dir=$out/cases-$1 site
  site=$(scripts/deepspeed-site.sh "$v" "/tmp/muoncheck-sweep-site-ds-$v")   # its own: deepspeed-run.sh may run beside it || { echo "ds-$v: wheel install failed"; return 3; }
  "$muoncheck" sweep --impl "deepspeed=$v" --impl-site "$site" --backend "${BACKEND:-cuda}" --dp "${DP:-1}" \
    --cases "${CASES:-500}" --seed "${SEED:-1}" --budget "${BUDGET:-0}" --shrink-seconds "${SHRINK_SECONDS:-240}" \
    --workers "${WORKERS:-1}" --max-defects "${MAX_DEFECTS:-6}" --cases-dir "$cases_dir" --json "$out/sweep-$v.json" \
    > "$out/sweep-$v.log" 2>&1
  echo "ds-$v: sweep exit $?; $(grep -E '^sweep --impl' "$out/sweep-$v.log")"
  local case
  # each defect's minimal case (the unattributed failing cases saved beside them are not run here)
  for case in $(python3 -c 'import json, sys; print(" ".join(d["scenario_file"] for d in json.load(open(sys.argv[1]))["defects"]))' "$out/sweep-$v.json"); do
    "$muoncheck" repro "$case" --for deepspeed --out-dir "$cases_dir" > /dev/null || continue
    local name script
    name=$(basename "$case" .json)
    script=$cases_dir/${name}_repro.py
    PYTHONPATH="$site" TORCH_COMPILE_DISABLE=1 python3 -m torch.distributed.run --standalone \
      --nproc-per-node "${DP:-1}" "$script" > "$cases_dir/$name.repro.log" 2>&1
    echo "ds-$v: $name repro exit $? ($(tail -1 "$cases_dir/$name.repro.log"))"
  done
}

pids=()
for v in "${versions[@]}"; do sweep_version "$v" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
