#!/usr/bin/env bash
# Main's `ns` route (gpu tests, bench_ns_cuda with --parts, the side by side, check --backend cuda)
# with the clock log beside it; the outputs archived small enough to come back.
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $OUT/smi.csv & S=$!
NS_BENCH_ARGS=--parts SIDE_TIMEOUT=240 scripts/gpu-run.sh ns $OUT/ns
kill $S
gzip -f $OUT/smi.csv
cd $OUT/ns && rm -f inductor-cache.tgz && gzip -f check-cuda.json && \
  grep -E "scenarios:|golden|FAIL " check-cuda.txt > check-cuda-summary.txt; ls -la $OUT/ns
cd $OUT && mv smi.csv.gz ns/ && tar czf final.tgz ns && rm -rf ns
