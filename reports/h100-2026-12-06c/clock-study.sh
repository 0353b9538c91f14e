#!/usr/bin/env bash
# Pending entries 10 and 11 in one device command: the clocks and power the card holds while
# (a) the roofline's GEMM runs as the side by side times it (2.5 ms chains) and sustained,
# (b) bench_ns_cuda's NS and the same products as plain GEMMs run, and (c) the triangle kernel
# against cuBLASLt's tiles, twice in two processes. Run from the checkout's root with $OUT set.
set -u
eval "$(sed -n '/^find_lib() {/,/^}/p;/^gpu_env() {/,/^}/p' scripts/gpu-run.sh)"; gpu_env
B=$PWD/build-cuda/bundle/bin/bench_ns_cuda
nvidia-smi -q -d CLOCK,POWER,TEMPERATURE,PERFORMANCE > "$OUT/smi-q-before.txt" 2>&1
Q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv,noheader -lms 20 > "$OUT/smi.csv" 2> "$OUT/smi.err" & S=$!
mark() { echo "$(date +%s.%N) $*" >> "$OUT/marks.txt"; }
bench() {   # NAME FILTER [ARGS]: one process of bench_ns_cuda, its JSON kept
  local name=$1 filter=$2; shift 2
  mark "start $name"
  timeout -s KILL 150 "$B" --benchmark_filter="$filter" --benchmark_out="$OUT/$name.json" "$@" > "$OUT/$name.txt" 2>&1
  mark "end $name rc=$?"
}
sleep 2
mark "start probe"
timeout -s KILL 60 python3 reports/h100-2026-12-06c/gemm_rate_probe.py --seconds 3 --rest 3 --out-json "$OUT/probe-bf16.json" > "$OUT/probe-bf16.txt" 2>&1
mark "end probe rc=$?"
sleep 3
bench square1 '^gemm_square_bf16/4096'
bench ns4096 '^ns_standard_bf16/4096x4096/min'
bench mix4096 '^gemm_mix_bf16/4096x4096/'
bench ns14336 '^ns_standard_bf16/4096x14336/min'
bench mix14336 '^gemm_mix_bf16/4096x14336/'
bench square2 '^gemm_square_(bf16|fp16)/4096'
F='^ns_(standard_bf16/4096x(4096|14336)|gram_fp16/4096x14336)/(triangle|tiles128)/'
bench tri1 "$F" --variants
bench tri2 "$F" --variants
sleep 1
kill $S
nvidia-smi -q -d CLOCK,POWER,TEMPERATURE,PERFORMANCE > "$OUT/smi-q-after.txt" 2>&1
cd "$OUT" && tar czf study.tgz *.json *.txt smi.csv smi.err && rm -f *.json *.txt smi.err smi.csv
