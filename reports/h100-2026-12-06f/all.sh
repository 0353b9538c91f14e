#!/usr/bin/env bash
# Everything this session needs from one device command, most important first, each part archived
# as soon as it ends (a command cut off at its limit still returns what finished):
#   1. main's whole ns route (reports/h100-2026-12-06d/final.sh: gpu tests, bench with --parts, the
#      side by side, check --backend cuda) -> final.tgz                          230–280 s
#   2. the kernel mutants (shipped in .whl/mutants-f.tar.xz, the ablations in .whl/ablations-f.tar.xz) -> mutants.tgz      about 60 s
#   3. pending entry 17: main against the builds without each of this session's two changes,
#      alternating processes -> abl.tgz                                         about 120 s
#   4. the triangle kernel's timeline build -> timeline-err.txt                 about 40 s
set -u
t0=$SECONDS
bash reports/h100-2026-12-06d/final.sh
echo "== final: $((SECONDS - t0)) s"
tar xJf .whl/mutants-f.tar.xz -C build-cuda/bundle/bin; tar xJf .whl/ablations-f.tar.xz -C build-cuda/bundle/bin
scripts/gpu-run.sh kernel-mutants $OUT/mutants > /dev/null 2>&1; echo "== kernel mutants exit $?: $((SECONDS - t0)) s"
cat $OUT/mutants/kernel-mutants.json 2>/dev/null
(cd $OUT && tar czf mutants.tgz mutants && rm -rf mutants)
ALTERNATE_TIMEOUT=90 scripts/gpu-run.sh alternate $OUT/abl 2 "bench_ns_cuda ablation-without-in-place-q ablation-without-normalize-reverse" \
  --parts --benchmark_filter='^(ns_gram_fp16/4096x14336|ns_standard_bf16/4096x14336|ns_part_bf16/4096x(4096|14336)/normalize)(/cold)?/(min_time|iterations)' 2>&1 | tail -30
echo "== ablations: $((SECONDS - t0)) s"
(cd $OUT && tar czf abl.tgz abl && rm -rf abl)
timeout -s KILL 60 scripts/gpu-run.sh exec ablation-timeline --parts \
  --benchmark_filter='^ns_part_bf16/4096x(4096|14336)/(xxt|square)/min_time' > /dev/null 2> $OUT/timeline-err.txt
echo "== timeline exit $?: $((SECONDS - t0)) s"
grep span $OUT/timeline-err.txt | head -8
