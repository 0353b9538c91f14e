#!/usr/bin/env bash
# Pending entry 12 on an H200 (the card issue 29's targets were set on), carrying build-cuda/bundle
# (main at 5caf7d5), .whl/ds and .whl/inductor-cache.tgz: main's whole ns route with the clock log
# (final.tgz, 280 s on an H100) and the products alone (products.json, 120 s at most).
set -u
t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv | tee $OUT/card.csv
bash reports/h100-2026-12-06d/final.sh
echo "== final: $((SECONDS - t0)) s"
timeout -s KILL 120 scripts/gpu-run.sh exec bench_ns_cuda --products --benchmark_filter='^product_' \
  --benchmark_out=$OUT/products.json > /dev/null 2>&1; echo "== products exit $?: $((SECONDS - t0)) s"
