#!/usr/bin/env bash
# This session's one device command, carrying build-cuda/bundle (main at 5caf7d5), .whl/ds,
# .whl/inductor-cache.tgz, .whl/mutants-g.tar.xz and .whl/cluster_occupancy (probe/):
#   1. how many clusters of 1–8 blocks of the triangle kernel's footprint run at once -> clusters.json   seconds
#   2. main's whole ns route (gpu tests, bench with --parts, the side by side, check --backend cuda) -> final.tgz   230–280 s
#   3. the kernel mutants built from the same sources -> mutants.tgz                                          about 60 s
#   4. pending entry 12 (its products; an H200 is the entry's card): X·Xᵀ, the squares, the dense GEMM alone -> products.json                   120 s at most
set -u
t0=$SECONDS
.whl/cluster_occupancy | tee $OUT/clusters.json
bash reports/h100-2026-12-06d/final.sh
echo "== final: $((SECONDS - t0)) s"
tar xJf .whl/mutants-g.tar.xz -C build-cuda/bundle/bin
scripts/gpu-run.sh kernel-mutants $OUT/mutants > /dev/null 2>&1; echo "== kernel mutants exit $?: $((SECONDS - t0)) s"
cat $OUT/mutants/kernel-mutants.json 2>/dev/null
(cd $OUT && tar czf mutants.tgz mutants && rm -rf mutants)
# 4. pending entry 12's products beside the route (X·Xᵀ, the squares, the dense GEMM alone) -> products.json   120 s at most
timeout -s KILL 120 scripts/gpu-run.sh exec bench_ns_cuda --products --benchmark_filter='^product_' \
  --benchmark_out=$OUT/products.json > /dev/null 2>&1; echo "== products exit $?: $((SECONDS - t0)) s"
