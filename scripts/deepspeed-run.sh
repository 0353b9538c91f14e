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
# bring back (the llama ones, 30-50 MB of JSON) are judged all the same. With MUONCHECK set, the
# runs the relational invariants need are traced too: `muoncheck variants` writes each scenario's
# variants (gas/dp/stage/bucket re-splits, the gas-1 re-split) to OUT_DIR/variants/, the adapter
# runs them beside the scenarios, and each scenario a second time (--repeat, for deterministic).
# Scenarios with engine.compile need torch.compile on: run them in a call of their own with
# TORCH_COMPILE_DISABLE=0 (the adapter declines a scenario whose compile setting the launch does
# not have). A checkpoint resuming at another dp takes two launches: scripts/deepspeed-run-cpu.sh
# does that; here it is declined.
# With COVERAGE=1 the adapter records the line coverage of DeepSpeed's Muon files into
# OUT_DIR/coverage-X.Y.Z/ (coverage.py from .whl/coverage/, a cp312 wheel: pip download coverage
# --only-binary=:all: --python-version 3.12 --no-deps); scripts/deepspeed-reach.py adds it to
# the CPU lines (reports/deepspeed/reach-lines-*.json), e.g. for the fp16 paths the CPU lacks.
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
variants=""
if [ -n "${MUONCHECK:-}" ]; then
  rm -rf "$out/variants"
  "$MUONCHECK" variants $scenarios --out-dir "$out/variants" > "$out/variants.log" || { echo "muoncheck variants failed"; exit 3; }
  variants=$(ls "$out"/variants/*.json 2>/dev/null | grep -v '/variants.json$' || true)
fi
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast

# Work folders (wheel install, traces, checkpoints) under TMP_ROOT, so two runs side by side never share one.
tmp=${TMP_ROOT:-/tmp}
mkdir -p "$tmp"

run_version() {
  local v=$1 site=$tmp/muoncheck-site-ds-$1 work=$tmp/muoncheck-traces/ds-$1 log=$out/ds-$1.log rc=0
  rm -rf "$site" "$work"
  : > "$log"
  scripts/deepspeed-site.sh "$v" "$site" >> "$log" 2>&1 || { echo "ds-$v: wheel install failed" | tee -a "$log"; return 3; }
  local coverage_env=()
  if [ "${COVERAGE:-0}" = 1 ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl/coverage/*.whl >> "$log" 2>&1 \
      || { echo "ds-$v: COVERAGE=1 but no coverage wheel in .whl/coverage/ installs" | tee -a "$log"; return 3; }
    coverage_env=(MUONCHECK_COVERAGE="$out/coverage-$v")
  fi
  local start=$(date +%s) dp files
  local with_dp='import json,sys; print(" ".join(f for f in sys.argv[2:] if json.load(open(f)).get("engine", {}).get("dp", 1) == int(sys.argv[1])))'
  for dp in $(python3 -c 'import json,sys; print(" ".join(sorted({str(json.load(open(f)).get("engine", {}).get("dp", 1)) for f in sys.argv[1:]})))' $scenarios $variants); do
    files=$(python3 -c "$with_dp" "$dp" $scenarios)
    extra=$(python3 -c "$with_dp" "$dp" $variants)
    if [ "$dp" -gt "$gpus" ]; then echo "ds-$v: dp $dp needs $dp GPUs, $gpus visible: skipped $files $extra" | tee -a "$log"; continue; fi
    # the scenarios twice (--repeat: the second run deterministic compares against, with MUONCHECK), their variants once
    for group in "$files" "$extra"; do
      [ -n "$group" ] || continue
      local repeat=""
      [ -n "${MUONCHECK:-}" ] && [ "$group" = "$files" ] && repeat=--repeat
      env "${coverage_env[@]}" PYTHONPATH="$site" PYTHONUNBUFFERED=1 DS_BUILD_OPS=0 MUONCHECK_CHECKPOINTS="$tmp/muoncheck-checkpoints/ds-$v" \
        python3 -m torch.distributed.run --standalone --nproc-per-node "$dp" \
        adapters/deepspeed/run_deepspeed.py --out "$work" $repeat $group >> "$log" 2>&1 || rc=1
    done
  done
  echo "ds-$v: $(( $(date +%s) - start )) s to run" | tee -a "$log"
  if [ -n "${MUONCHECK:-}" ]; then
    local traces=() f
    for f in "$work"/*.trace.json; do traces+=(--trace "$f"); done
    "$MUONCHECK" verify $scenarios "${traces[@]}" --report "$out/deepspeed-$v.verify.json" > "$out/ds-$v.verify.log" 2>&1
    echo "ds-$v: verify exit $? after $(( $(date +%s) - start )) s" | tee -a "$log"
  fi
  local causes=reports/deepspeed/causes.json   # the analysed FAILs; none analysed yet: an empty list
  [ -f "$causes" ] || { causes=$out/no-causes.json; echo '{"causes": []}' > "$causes"; }
  [ -z "${MUONCHECK:-}" ] || python3 scripts/deepspeed-verdicts.py "$out/deepspeed-$v.verdicts.json" "$causes" \
    "$tmp/muoncheck-traces" "$out/deepspeed-$v.verify.json" > "$out/deepspeed-$v.verdicts.md" 2>> "$log" &&
    grep -E "^\| |executed" "$out/deepspeed-$v.verdicts.md" | tee -a "$log" | grep executed
  (cd "$tmp/muoncheck-traces" && find "ds-$v" -name '*.trace.json' -size -"${PACK_MAX_MB:-8}"M | sort | tar -cJf - -T -) > "$out/ds-$v.tar.xz"
  find "$work" -name '*.trace.json' -size +"$(( ${PACK_MAX_MB:-8} - 1 ))"M -printf "ds-$v: not packed (judged here only): %f %s bytes\n" | tee -a "$log"
  return $rc
}

pids=()
for v in "${versions[@]}"; do run_version "$v" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=$?; done
for v in "${versions[@]}"; do grep -E "^[a-z0-9-]+: (ran|UNSUPPORTED|ERROR)" "$out/ds-$v.log" | sed "s/^/ds-$v /"; done
exit $status
