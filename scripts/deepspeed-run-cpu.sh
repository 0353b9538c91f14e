#!/usr/bin/env bash
# Runs the DeepSpeed adapter on DeepSpeed's CPU accelerator (gloo), no GPU needed: every scenario
# in scenarios/deepspeed/ (SCENARIOS="a.json b.json" for a subset) for each DeepSpeed installed
# with `pip install --no-deps --target SITE deepspeed==X.Y.Z`, one version after the other (the
# machine's cores are shared). A dp-N scenario runs under torchrun --nproc-per-node N; scenarios
# with `engine.compile` run in their own launch (torch.compile on), the rest with it off.
#
#   scripts/deepspeed-run-cpu.sh OUT_DIR SITE...        e.g. SITE = /opt/ds-0.19.8
#
# Per version (read from its dist-info): OUT_DIR/ds-X.Y.Z/*.trace.json,
# OUT_DIR/ds-X.Y.Z.log, the line coverage of DeepSpeed's Muon files over the run in
# OUT_DIR/coverage-X.Y.Z/ (scripts/deepspeed-reach.py reports it), and with
# MUONCHECK=path/to/muoncheck the verdicts OUT_DIR/deepspeed-X.Y.Z.verify.json. DeepSpeed JIT-builds
# its shared-memory op into OUT_DIR/torch-extensions (TORCH_EXTENSIONS_DIR), not the user-wide
# cache, so a build another user holds the lock of cannot stall the run; the nvme-offload scenarios
# swap into OUT_DIR/nvme-X.Y.Z through DeepSpeed's async_io op (libaio-dev; its first build takes
# minutes: pass TORCH_EXTENSIONS_DIR=a kept folder to build it once).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/deepspeed-run-cpu.sh OUT_DIR SITE...}
shift
[ $# -gt 0 ] || { echo "usage: scripts/deepspeed-run-cpu.sh OUT_DIR SITE..." >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
scenarios=${SCENARIOS:-$(ls scenarios/deepspeed/*.json)}
status=0
for site in "$@"; do
  v=$(python3 -c 'import importlib.metadata as m, sys; sys.path.insert(0, sys.argv[1]); print(m.version("deepspeed"))' "$site") \
    || { echo "$site: no deepspeed there" >&2; status=3; continue; }
  work=$out/ds-$v log=$out/ds-$v.log
  rm -rf "$work" "$out/coverage-$v" "$out/nvme-$v"
  : > "$log"
  start=$(date +%s)
  # one launch per (dp, compile): lines "DP COMPILE PHASE FILE..."; a checkpoint scenario that
  # resumes at another dp takes two launches, PHASE save at its dp, then resume at resume.dp
  while read -r dp compile phase files; do
    compile_env=(TORCH_COMPILE_DISABLE=1)
    [ "$compile" = 1 ] && compile_env=(TORCH_COMPILE_DISABLE=0)
    phase_arg=()
    [ "$phase" != - ] && phase_arg=(--checkpoint-phase "$phase")
    env "${compile_env[@]}" PYTHONPATH="$site" PYTHONUNBUFFERED=1 DS_BUILD_OPS=0 MUONCHECK_DEVICE=cpu \
      DS_ACCELERATOR=cpu MUONCHECK_COVERAGE="$out/coverage-$v" MUONCHECK_CHECKPOINTS="$out/checkpoints-$v" \
      MUONCHECK_NVME="$out/nvme-$v" \
      TORCH_EXTENSIONS_DIR="${TORCH_EXTENSIONS_DIR:-$out/torch-extensions}" \
      python3 -m torch.distributed.run --nproc-per-node "$dp" --master-port "$(( 20000 + RANDOM % 20000 ))" \
      adapters/deepspeed/run_deepspeed.py --out "$work" "${phase_arg[@]}" $files >> "$log" 2>&1 || status=1
  done < <(python3 - $scenarios <<'PY'
import sys
sys.path.insert(0, ".")
from adapters.common import scenario   # muoncheck resolves each (MUONCHECK, else build/harness/muoncheck)
launches = {}
for f in sys.argv[1:]:
    s = scenario.load(f)
    dp, compile, resume_dp = s.dp, int(s.compile), s.resumed().dp
    if resume_dp != dp:
        launches.setdefault((dp, compile, "save"), []).append(f)
        launches.setdefault((resume_dp, compile, "resume"), []).append(f)
    else:
        launches.setdefault((dp, compile, "-"), []).append(f)
for key in sorted(launches, key=lambda k: k[2] == "resume"):
    print(*key, " ".join(launches[key]))
PY
)
  echo "ds-$v: $(( $(date +%s) - start )) s to run" | tee -a "$log"
  if [ -n "${MUONCHECK:-}" ]; then
    traces=()
    for f in "$work"/*.trace.json; do traces+=(--trace "$f"); done
    "$MUONCHECK" verify $scenarios "${traces[@]}" --report "$out/deepspeed-$v.verify.json" > "$out/ds-$v.verify.log" 2>&1
    echo "ds-$v: verify exit $?" | tee -a "$log"
  fi
  grep -E "^[a-z0-9-]+: (ran|UNSUPPORTED|ERROR)" "$log" | sed "s/^/ds-$v /"
done
exit $status
