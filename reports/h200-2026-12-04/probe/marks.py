#!/usr/bin/env python3
"""Writes a copy of impl/math/cuda/ns_streamed.cu with clock64 marks at the phase boundaries (thread 0
of block 0 prints the cycles between marks once the matrix loop is done). Build the copy in place of
the source, run `bench_ns_cuda --resident-sweep --benchmark_filter=ns_streamed_alone/1x128x4096/steps5`,
and restore the source. Every mark is a __syncthreads, so the probe measures phases, not overlap.
Usage: marks.py SRC OUT"""
import sys

src, out = sys.argv[1:]
s = open(src).read()


def after(anchor, code):
    global s
    assert s.count(anchor) == 1, anchor
    s = s.replace(anchor, anchor + code)


after('  bool arrived = false;     // this block has arrived on the cluster barrier and not yet waited\n',
      '  long long mk[80]; int nm = 0;\n  auto mark = [&] { __syncthreads(); if (nm < 80) mk[nm++] = clock64(); };\n  mark();\n')
after("    // Pass 1: Σx² over this block's columns.\n", '    mark();\n')
after('    const bool markstein_ok = finite && markstein_exact(big, denom, inverse) && markstein_exact(tiny, denom, inverse);\n',
      '    mark();\n')
after('    for (int it = 0; it < k.steps; ++it) {\n', '    mark();\n')
after('      for (int c = 2; c < chunks; c += 2) partial_pair(c, std::false_type{});\n      wgmma::wait<0>();\n', '      mark();\n')
after('      if (tid == 0) tma::arrive_expect(bar, kPartialBytes);\n', '      mark();\n')
after('      cluster_arrive();   // this block\'s slot is read\n      arrived = true;\n', '      mark();\n')
after('      symmetric_b<T>(a, a_shared, k.b[it], k.c[it], wg, ww, lane);\n', '      mark();\n')
after('    wgmma::wait<0>();\n    tma::wait_bulk<0>();   // this matrix\'s stores are done before its slots and scratch are reused\n    __syncthreads();\n',
      '    mark();\n')
after('  if (arrived) cluster_wait();\n  cluster.sync();   // no block leaves while the other may still read its shared memory\n',
      '  if (blockIdx.x == 0 && tid == 0 && nm > 1) {\n    printf("MARKS");\n'
      '    for (int i = 1; i < nm; ++i) printf(" %lld", mk[i] - mk[i - 1]);\n    printf("\\n");\n  }\n')
s = s.replace('#include <cooperative_groups.h>\n', '#include <cooperative_groups.h>\n#include <cstdio>\n')
open(out, 'w').write(s)
