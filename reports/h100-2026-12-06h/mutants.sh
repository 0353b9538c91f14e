#!/usr/bin/env bash
# Every kernel mutant (scripts/kernel-mutants/, nine) built from main's sources, carrying
# build-cuda/bundle and .whl/mutants-h.tar.xz: the unmutated kernel tests must pass, then each
# mutant must fail them or hang (killed after 60 s) -> mutants.tgz                      2–6 min
set -u
t0=$SECONDS
tar xJf .whl/mutants-h.tar.xz -C build-cuda/bundle/bin
scripts/gpu-run.sh kernel-mutants $OUT/mutants > /dev/null 2>&1; echo "== kernel mutants exit $?: $((SECONDS - t0)) s"
cat $OUT/mutants/kernel-mutants.json 2>/dev/null
(cd $OUT && tar czf mutants.tgz mutants && rm -rf mutants)
