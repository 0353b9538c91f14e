#!/usr/bin/env bash
# The one-line route to a GPU conformance run.
#
#   here (no GPU needed):   scripts/gpu-run.sh build
#       configures build-cuda/ with -DMUONCHECK_CUDA=ON for sm_90a, builds it, and packs
#       build-cuda/bundle/ (bin/: muoncheck, the gpu tests, bench_ns_cuda; lib/: the
#       shared libraries the GPU machine lacks: Gloo and its deps, Google Benchmark,
#       libquadmath). RapidCheck and GoogleTest are static, so nothing else travels.
#   on the GPU machine, from the repository root, with build-cuda/bundle carried:
#       scripts/gpu-run.sh device [OUTDIR]        (OUTDIR defaults to $OUT, else gpu-out/)
#       runs the gpu-labelled tests, the NS benchmark, compute-sanitizer memcheck on one
#       scenario, then side by side `muoncheck check --backend cuda --comm nccl --dp N` with N
#       the number of GPUs (every scenario re-split to one rank per GPU) and `--comm gloo` at
#       dp 2 and 4 (rank threads share the GPUs); logs and JSON reports land in OUTDIR.
#
#   on the GPU machine, with build-cuda/bundle and .whl/ds-0.19.8 carried:  scripts/gpu-run.sh ns [OUTDIR]
#       the Newton–Schulz benchmark route: the NS gpu tests, bench_ns_cuda, then
#       bench/ns_side_by_side.py (DeepSpeed's and torch.optim.Muon's NS functions, eager and
#       torch.compile'd, on the same shapes: the ratios, the roofline share and the per-head
#       traffic floor per shape), then `muoncheck check --backend cuda`.
#       NS_BENCH_ARGS (e.g. --products) goes to bench_ns_cuda; NS_CHECK=0 skips the check.
#       An inductor cache from an earlier run (.whl/inductor-cache.tgz) saves compile time;
#       the run leaves its own in OUTDIR.
#
#   here, when the device tool sends another checkout than this one (a helper's worktree):
#       scripts/gpu-run.sh pack DEST     copies what `ns` needs (the bundle, this script,
#       bench/ns_side_by_side.py, scenarios/ and golden/, the DeepSpeed wheel or sdist and any inductor
#       cache) into DEST, a
#       git-ignored folder of the checkout that travels; there: (cd DEST && bash scripts/gpu-run.sh ns)
#
#   on a machine with several GPUs:  scripts/gpu-run.sh multi [OUTDIR]
#       one rank per GPU over NCCL: `muoncheck check` and `muoncheck mutants` as written
#       (every shipped scenario is dp <= 2), and the largest scenario (llama2-zero3-init) at
#       dp 1 and at dp = #GPUs, whose reports carry the wall time per step and the measured
#       bandwidth of the Muon gathers (metadata: GPU count, NCCL version).
#
#   on the GPU machine, with build-cuda/bundle carried:  scripts/gpu-run.sh procs [OUTDIR]
#       ranks as processes (docs/multi-node.md): `muoncheck check --backend cuda --comm nccl --dp 1`
#       with its rank as a process (scripts/launch-ranks.sh 1; NCCL's unique id through the
#       FileStore) beside the same check with the rank as a thread; the two reports' verdicts
#       compared (tests/processes/same_verdicts.py).
#
#   here, after build:  scripts/gpu-run.sh mutants-build
#       builds cuda_symmetric_test once per patch in dev/cuda/mutants/ (each breaks the
#       synchronization of a GPU kernel on purpose) into build-cuda/bundle/bin/mutant-NAME, and
#       restores the sources and the test binary; a patch that no longer applies stops it, named.
#   here, after build:  scripts/gpu-run.sh ablations-build DIR
#       the same for bench_ns_cuda and each patch in DIR, into build-cuda/bundle/bin/ablation-NAME:
#       kernels with a part left out on purpose, timed against the whole one (their results are wrong).
#   on the GPU machine, with build-cuda/bundle carried:  scripts/gpu-run.sh kernel-mutants [OUTDIR]
#       runs the unmutated binary's kernel tests (resident, streamed, triangle, strips) (they must pass), then each mutant's
#       (60 s at most: a hang counts as caught); writes kernel-mutants.json, one line per mutant,
#       and exits 1 unless every mutant failed a test or hung.
#
#   on the GPU machine, with build-cuda/bundle carried:  scripts/gpu-run.sh gpu-tests [OUTDIR]
#       the gpu tests alone (gpu-tests.log); exits 1 if one failed.
#   on the GPU machine, with build-cuda/bundle carried:  scripts/gpu-run.sh alternate OUTDIR ROUNDS "PROGRAMS" [ARGS]
#       builds compared in alternating processes (e.g. "bench_ns_cuda ablation-NAME" with a
#       --benchmark_filter): one JSON per process, then each benchmark's median per program.
#
#   on the GPU machine, with build-cuda/bundle carried:  scripts/gpu-run.sh exec PROGRAM [ARGS]
#       one program of the bundle (bench_ns_cuda with a --benchmark_filter, one gpu test with a
#       --gtest_filter) with the bundle's libraries and cuBLAS/NCCL found as the other modes find them.
#
# With the device tool: run(command="bash scripts/gpu-run.sh device", carry=["build-cuda/bundle"]).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

build() {
  set -e
  cmake -S . -B build-cuda -G Ninja -DMUONCHECK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_BUILD_TYPE=Release
  cmake --build build-cuda -j"${JOBS:-2}" --target muoncheck bench_ns_cuda \
      cuda_compute_test cuda_symmetric_test nccl_comm_test impl_cuda_engine_test
  local b=build-cuda/bundle
  rm -rf "$b" && mkdir -p "$b/bin" "$b/lib"
  cp build-cuda/harness/muoncheck build-cuda/bench/impl/bench_ns_cuda "$b/bin/"
  cp build-cuda/tests/impl/{cuda_compute_test,cuda_symmetric_test,nccl_comm_test,impl_cuda_engine_test} "$b/bin/"
  # Copy each missing library under its SONAME (links do not travel as files).
  for lib in /usr/lib/libgloo.so.0 libhiredis.so.0.14 libibverbs.so.1 libnl-3.so.200 libnl-route-3.so.200 \
             libbenchmark.so.1debian libquadmath.so.0; do
    local path=$lib
    [[ $lib == /* ]] || path=$(ldconfig -p | awk -v l="$lib" '!f && $1 == l && /x86-64/ {print $NF; f = 1}')
    cp -L "$path" "$b/lib/$(basename "$lib")"
  done
  strip --strip-unneeded "$b"/bin/* 2>/dev/null || true
  du -sh "$b"
}

# One build of a bundle program per patch in a folder (DIR/NAME.patch), as
# build-cuda/bundle/bin/PREFIX-NAME; the sources and the program are restored whatever happens,
# and a patch that no longer applies stops it before anything is built.
patch_builds() {
  local dir=$1 target=$2 built=$3 prefix=$4
  set -e
  [ -d build-cuda/bundle/bin ] || { echo "$prefix builds: build-cuda/bundle is missing; run scripts/gpu-run.sh build first" >&2; exit 2; }
  local p name applied=
  trap '[ -z "${applied:-}" ] || git apply -R "$applied"' EXIT
  for p in "$dir"/*.patch; do
    git apply --check "$p" 2>/dev/null || { echo "$prefix builds: $p does not apply to these sources (regenerate it with git diff)" >&2; exit 2; }
  done
  for p in "$dir"/*.patch; do
    name=$(basename "$p" .patch)
    git apply "$p" && applied=$p
    cmake --build build-cuda -j"${JOBS:-2}" --target "$target"
    cp "build-cuda/$built" "build-cuda/bundle/bin/$prefix-$name"
    strip --strip-unneeded "build-cuda/bundle/bin/$prefix-$name" 2>/dev/null || true
    git apply -R "$p" && applied=
  done
  trap - EXIT
  cmake --build build-cuda -j"${JOBS:-2}" --target "$target"   # the unpatched program again
  ls build-cuda/bundle/bin/"$prefix"-*
}

# One cuda_symmetric_test per kernel mutant (dev/cuda/mutants/NAME.patch), as mutant-NAME.
mutants_build() { patch_builds dev/cuda/mutants cuda_symmetric_test tests/impl/cuda_symmetric_test mutant; }

# One bench_ns_cuda per ablation patch in DIR (a kernel with a part left out, to time the rest;
# its results are wrong by design), as ablation-NAME.
ablations_build() {
  patch_builds "${1:?usage: scripts/gpu-run.sh ablations-build DIR}" bench_ns_cuda bench/impl/bench_ns_cuda ablation
}

# Each kernel mutant's kernel tests (resident, streamed, triangle, strips) must fail or hang (killed after 60 s:
# KILL, as a TERM'd hung kernel keeps the card busy for the next mutant); one that passes them survived. The
# unmutated binary runs the same tests first and must pass them without a skip (else a failing
# mutant proves nothing); a mutant that exits otherwise (a missing library, a crash before its
# tests) is an error, not a catch.
kernel_mutants() {
  local out=${1:-${OUT:-gpu-out}}
  mkdir -p "$out"
  local bin=build-cuda/bundle/bin filter='*esident*:*treamed*:*riangle*:*trips*' m name rc bad=0 ran=0
  gpu_env
  timeout -s KILL 60 "$bin/cuda_symmetric_test" --gtest_filter="$filter" --gtest_brief=1 > "$out/control.log" 2>&1
  rc=$?
  if [ "$rc" != 0 ] || grep -q "SKIPPED" "$out/control.log" || ! grep -q "PASSED" "$out/control.log"; then
    echo "kernel-mutants: the unmutated cuda_symmetric_test did not pass its kernel tests here (exit $rc, $out/control.log): no verdict" >&2
    return 2
  fi
  : > "$out/kernel-mutants.json"
  for m in "$bin"/mutant-*; do
    [ -x "$m" ] || continue
    name=${m##*/mutant-}
    ran=$((ran + 1))
    timeout -s KILL 60 "$m" --gtest_filter="$filter" --gtest_brief=1 > "$out/mutant-$name.log" 2>&1
    rc=$?
    python3 - "$name" "$rc" "$out/mutant-$name.log" >> "$out/kernel-mutants.json" <<'PY'
import json, re, sys
name, rc, log = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], errors="replace").read()
failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+?)(?:,| \(|$)", log, re.M)))
if rc == 137:
    verdict, how = "caught", "hung: killed after 60 s"
elif rc != 0 and failed:
    verdict, how = "caught", f"{len(failed)} tests failed"
elif rc == 0:
    verdict, how = "survived", "passed its tests"
else:
    verdict, how = "error", f"exit {rc} with no failed test: it did not run its tests"
print(json.dumps({"mutant": name, "verdict": verdict, "exit": rc, "how": how, "failed_tests": failed}))
PY
    tail -1 "$out/kernel-mutants.json" | grep -q '"verdict": "caught"' || bad=$((bad + 1))
    tail -1 "$out/kernel-mutants.json"
  done
  [ "$ran" -gt 0 ] || { echo "kernel-mutants: no $bin/mutant-* (scripts/gpu-run.sh mutants-build makes them)" >&2; return 2; }
  echo "kernel mutants: $ran run, $((ran - bad)) caught, $bad survived or did not run"
  [ "$bad" = 0 ]
}

# Adds the folder of a library to LD_LIBRARY_PATH when the loader cannot find it.
find_lib() {
  if ldd build-cuda/bundle/bin/muoncheck | grep -q "$1 => not found"; then
    local p
    p=$(find / -xdev -name "$1" -not -path '*/proc/*' 2>/dev/null | head -1)
    [ -n "$p" ] && export LD_LIBRARY_PATH="$(dirname "$p"):$LD_LIBRARY_PATH"
  fi
}

# The bundle's libraries, cuBLAS and NCCL where the machine keeps them, NVLink multicast off.
gpu_env() {
  export LD_LIBRARY_PATH="$PWD/build-cuda/bundle/lib:${LD_LIBRARY_PATH:-}"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast
  for l in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do find_lib "$l"; done
}

device() {
  local out=${1:-${OUT:-gpu-out}}
  mkdir -p "$out"
  local bin=build-cuda/bundle/bin log="$out/summary.log"
  gpu_env
  local t0=$SECONDS t
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    ldd $bin/muoncheck | grep -E "not found|cublas|nccl|gloo" || true
  } 2>&1 | tee "$log"
  for t in cuda_compute_test cuda_symmetric_test nccl_comm_test impl_cuda_engine_test; do
    $bin/$t --gtest_brief=1 2>&1
  done > "$out/gpu-tests.log" 2>&1
  grep -E "FAILED|PASSED|SKIPPED|tests from" "$out/gpu-tests.log" | tee -a "$log"
  echo "gpu tests: $((SECONDS - t0)) s" | tee -a "$log"

  t=$SECONDS
  $bin/bench_ns_cuda --benchmark_out="$out/bench-ns.json" --benchmark_out_format=json 2>&1 | tee -a "$log" | tail -7
  echo "bench: $((SECONDS - t)) s" | tee -a "$log"

  t=$SECONDS
  local cs
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  "$cs" --tool memcheck --leak-check full --error-exitcode 9 \
      $bin/muoncheck run stage0-basic --backend cuda --invariant trajectory-conforms > "$out/memcheck.log" 2>&1
  echo "memcheck exit $?: $((SECONDS - t)) s" | tee -a "$log"
  tail -3 "$out/memcheck.log" | tee -a "$log"

  # The suites share the GPU and spend CPU time on the oracle: run them side by side.
  t=$SECONDS
  # NCCL over every GPU present (dp = #GPUs when there are two or more), beside Gloo at dp 2 and 4.
  local gpus runs pids=() r
  gpus=$(nvidia-smi -L | wc -l)
  runs=("nccl $gpus" "gloo 2" "gloo 4")
  for r in "${runs[@]}"; do
    set -- $r
    timeout "${CHECK_TIMEOUT:-330}" $bin/muoncheck check --backend cuda --comm "$1" --dp "$2" \
        --report "$out/check-$1-dp$2.json" > "$out/check-$1-dp$2.txt" 2>&1 &
    pids+=($!)
  done
  for i in "${!runs[@]}"; do
    wait "${pids[$i]}"
    echo "check cuda+${runs[$i]/ /, dp }: exit $?" | tee -a "$log"
  done
  echo "checks: $((SECONDS - t)) s" | tee -a "$log"
  for r in "${runs[@]}"; do
    set -- $r
    { echo "=== check cuda+$1 dp $2"; cat "$out/check-$1-dp$2.txt"; } >> "$out/checks.log"
    rm -f "$out/check-$1-dp$2.txt"
  done
  grep -E "^=== |scenarios:.*=>|^muoncheck (run|check)|FAIL " "$out/checks.log" | head -60 | tee -a "$log"
  echo "total $((SECONDS - t0)) s" | tee -a "$log"
}

multi() {
  local out=${1:-${OUT:-gpu-out}}
  mkdir -p "$out"
  local bin=build-cuda/bundle/bin log="$out/multi.log" t0=$SECONDS gpus
  gpu_env
  gpus=$(nvidia-smi -L | wc -l)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$log"
  nvidia-smi topo -m 2>&1 | head -5 >> "$log"
  # check and mutants side by side (both mostly oracle time on the CPU), then the timing runs alone.
  $bin/muoncheck check --backend cuda --comm nccl --report "$out/check-nccl-${gpus}gpu.json" > "$out/check-nccl.txt" 2>&1 &
  local check=$!
  $bin/muoncheck mutants --backend cuda --comm nccl --json "$out/mutants-nccl-${gpus}gpu.json" > "$out/mutants-nccl.txt" 2>&1 &
  local mutants=$!
  wait $check; echo "check cuda+nccl, $gpus GPUs: exit $? ($((SECONDS - t0)) s)" | tee -a "$log"
  wait $mutants; echo "mutants cuda+nccl, $gpus GPUs: exit $? ($((SECONDS - t0)) s)" | tee -a "$log"
  grep -E "scenarios:.*=>|FAIL |^muoncheck " "$out/check-nccl.txt" | head -30 | tee -a "$log"
  tail -20 "$out/mutants-nccl.txt" | tee -a "$log"
  local dp
  for dp in 1 "$gpus"; do
    $bin/muoncheck run scenarios/llama2-zero3-init.json --backend cuda --comm nccl --dp "$dp" \
        --invariant trajectory-conforms --report "$out/llama-dp$dp.json" > /dev/null 2>&1
    echo "llama2-zero3-init at dp $dp: exit $?" | tee -a "$log"
  done
  echo "total $((SECONDS - t0)) s" | tee -a "$log"
}

# Ranks as processes at dp 1 over NCCL beside ranks as threads: exit codes, summaries, and
# whether the verdicts are equal.
procs() {
  local out=${1:-${OUT:-gpu-out}}
  mkdir -p "$out"
  local bin=build-cuda/bundle/bin log="$out/procs.log" t0=$SECONDS store
  gpu_env
  store=$(mktemp -d)
  $bin/muoncheck check --backend cuda --comm nccl --dp 1 --report "$out/procs-threads-dp1.json" > "$out/procs-threads.txt" 2>&1
  echo "check cuda+nccl --dp 1, the rank as a thread: exit $? ($((SECONDS - t0)) s)" | tee "$log"
  scripts/launch-ranks.sh 1 $bin/muoncheck check --backend cuda --comm nccl --dp 1 --ranks processes --store "$store" \
      --report "$out/procs-processes-dp1.json" > "$out/procs-processes.txt" 2>&1
  echo "check cuda+nccl --dp 1, the rank as a process: exit $? ($((SECONDS - t0)) s)" | tee -a "$log"
  grep -hE "scenarios:.*=>|^muoncheck " "$out/procs-threads.txt" "$out/procs-processes.txt" | tee -a "$log"
  python3 tests/processes/same_verdicts.py "$out/procs-threads-dp1.json" "$out/procs-processes-dp1.json" | tee -a "$log"
  rm -rf "$store"
}

# The gpu tests (the kernels, the compute backend, the engine on cuda) into OUTDIR/gpu-tests.log;
# prints their summary lines, and fails when a test failed or a binary did not end well.
gpu_tests() {
  local out=$1 bin=build-cuda/bundle/bin t
  for t in cuda_symmetric_test cuda_compute_test impl_cuda_engine_test; do
    # KILL, not TERM: a kernel that hangs keeps the card busy for the next program after a TERM.
    timeout -s KILL "${TEST_TIMEOUT:-180}" $bin/$t --gtest_brief=1 2>&1 || echo "$t: exit $? (137: killed after ${TEST_TIMEOUT:-180} s)"
  done > "$out/gpu-tests.log" 2>&1
  grep -E "FAILED|PASSED|SKIPPED|tests from|Failure|err\(cuda\)|_test: exit " "$out/gpu-tests.log" | head -40
  ! grep -qE "FAILED|_test: exit " "$out/gpu-tests.log"
}

# Programs of the bundle (bench_ns_cuda and its ablation-NAME builds) timed in alternating
# processes: ROUNDS rounds, each program once a round with the same arguments (killed after
# ALTERNATE_TIMEOUT s, 100 by default), OUTDIR/PROGRAM-ROUND.json each; then every benchmark's
# median per program (dev/cuda/bench_medians.py). A fair comparison of builds on one card.
alternate() {
  local out=${1:?usage: scripts/gpu-run.sh alternate OUTDIR ROUNDS "PROGRAMS" [BENCH ARGS]} rounds=${2:?ROUNDS} programs=${3:?PROGRAMS}
  shift 3
  local bin=build-cuda/bundle/bin r p t
  mkdir -p "$out"
  for r in $(seq 1 "$rounds"); do
    for p in $programs; do
      t=$SECONDS
      timeout -s KILL "${ALTERNATE_TIMEOUT:-100}" "$bin/$p" "$@" --benchmark_out="$out/$p-$r.json" > /dev/null 2>&1
      echo "$p round $r: exit $? ($((SECONDS - t)) s)"
    done
  done
  shopt -s nullglob
  python3 dev/cuda/bench_medians.py "$out"/*.json
}

# Newton–Schulz: the gpu tests that cover it, our benchmark, DeepSpeed's functions side by
# side (ratio per shape), the conformance check on the cuda backend. At most 8 files in OUTDIR.
ns() {
  local out=${1:-${OUT:-gpu-out}}
  mkdir -p "$out"
  local bin=build-cuda/bundle/bin log="$out/summary.log" t0=$SECONDS t
  gpu_env
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$log"
  gpu_tests "$out" | tee -a "$log"
  echo "gpu tests: $((SECONDS - t0)) s" | tee -a "$log"

  t=$SECONDS
  # shellcheck disable=SC2086
  $bin/bench_ns_cuda ${NS_BENCH_ARGS:-} --benchmark_out="$out/bench-ns.json" --benchmark_out_format=json \
      >> "$log" 2>&1
  echo "bench exit $?: $((SECONDS - t)) s" | tee -a "$log"
  sed -n '/^shape /,$p' "$log"

  t=$SECONDS
  local cache=/tmp/muoncheck-inductor
  mkdir -p "$cache"
  [ -f .whl/inductor-cache.tgz ] && tar xzf .whl/inductor-cache.tgz -C "$cache"
  TORCHINDUCTOR_CACHE_DIR="$cache/inductor" TRITON_CACHE_DIR="$cache/triton" PYTHONUNBUFFERED=1 \
      timeout "${SIDE_TIMEOUT:-330}" python3 bench/ns_side_by_side.py --bench-json "$out/bench-ns.json" \
      --deepspeed "$(ds_package)" --out-json "$out/side-by-side.json" \
      --out-md "$out/side-by-side.md" 2>&1 | tee -a "$log"
  echo "side by side: $((SECONDS - t)) s" | tee -a "$log"
  tar czf "$out/inductor-cache.tgz" -C "$cache" . 2>/dev/null

  if [ "${NS_CHECK:-1}" = 1 ]; then
    t=$SECONDS
    timeout "${CHECK_TIMEOUT:-330}" $bin/muoncheck check --backend cuda --report "$out/check-cuda.json" \
        > "$out/check-cuda.txt" 2>&1
    echo "check --backend cuda: exit $?: $((SECONDS - t)) s" | tee -a "$log"
    grep -E "scenarios:|golden|FAIL " "$out/check-cuda.txt" | head -20 | tee -a "$log"
    gzip -f "$out/check-cuda.json"
  fi
  echo "total $((SECONDS - t0)) s" | tee -a "$log"
}

# DeepSpeed 0.19.8 as the side-by-side reads it: the wheel scripts/deepspeed-site.sh uses, else an sdist.
ds_package() {
  local f
  for f in .whl/ds-0.19.8/deepspeed-0.19.8-py3-none-any.whl .whl/ds/deepspeed-0.19.8.tar.gz; do
    [ -f "$f" ] && { echo "$f"; return; }
  done
  echo ".whl/ds-0.19.8/deepspeed-0.19.8-py3-none-any.whl"   # absent: the script says so and stops
}

# A self-contained copy of what `ns` needs, rooted at DEST.
pack() {
  local dest=${1:?usage: scripts/gpu-run.sh pack DEST}
  set -e
  rm -rf "$dest" && mkdir -p "$dest/build-cuda" "$dest/scripts" "$dest/bench"
  cp -r build-cuda/bundle "$dest/build-cuda/"
  cp scripts/gpu-run.sh "$dest/scripts/"
  cp bench/ns_side_by_side.py "$dest/bench/"
  cp -r scenarios golden "$dest/"            # what `muoncheck check` reads from its working directory
  local ds
  ds=$(ds_package)
  mkdir -p "$dest/$(dirname "$ds")" && cp "$ds" "$dest/$ds"
  [ ! -f .whl/inductor-cache.tgz ] || cp .whl/inductor-cache.tgz "$dest/.whl/"
  du -sh "$dest"
}

case $mode in
  build) build ;;
  pack) shift; pack "$@" ;;
  device) shift; device "$@" ;;
  ns) shift; ns "$@" ;;
  multi) shift; multi "$@" ;;
  procs) shift; procs "$@" ;;
  mutants-build) mutants_build ;;
  ablations-build) shift; ablations_build "$@" ;;
  kernel-mutants) shift; kernel_mutants "$@" ;;
  gpu-tests) shift; gpu_env; out=${1:-${OUT:-gpu-out}}; mkdir -p "$out"; gpu_tests "$out" ;;
  alternate) shift; gpu_env; alternate "$@" ;;
  exec) shift; gpu_env; prog=${1:?usage: scripts/gpu-run.sh exec PROGRAM [ARGS]}; shift; exec "build-cuda/bundle/bin/$prog" "$@" ;;
  *) echo "usage: scripts/gpu-run.sh build | mutants-build | ablations-build DIR | pack DEST | device [OUTDIR] | ns [OUTDIR] | multi [OUTDIR] | procs [OUTDIR] | kernel-mutants [OUTDIR] | gpu-tests [OUTDIR] | alternate OUTDIR ROUNDS \"PROGRAMS\" [ARGS] | exec PROGRAM [ARGS]" >&2; exit 2 ;;
esac
