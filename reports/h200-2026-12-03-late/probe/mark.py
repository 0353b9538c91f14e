import sys
src = open(sys.argv[1]).read()
def ins(anchor, text, after=True):
    global src
    if src.count(anchor) != 1:
        print('skipped mark at', repr(anchor[:50]), src.count(anchor)); return
    i = src.index(anchor) + (len(anchor) if after else 0)
    src = src[:i] + text + src[i:]
src = src.replace('namespace {\n\nnamespace cg', '__device__ long long g_probe[132][16];\n__device__ unsigned long long g_time[2];\nnamespace {\n\nnamespace cg', 1)
ins('  // The cluster\'s matrices one after the other (one when the grid holds a cluster per matrix).\n', '  long long last_ = clock64();\n  if (tid == 0 && blockIdx.x == 0) { unsigned long long gt; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt)); g_time[0] = gt; g_probe[0][15] = last_; }\n#define MARK(k) do { if (tid == 0) { __syncwarp(1); long long now_ = clock64(); g_probe[blockIdx.x][k] += now_ - last_; last_ = now_; } } while (0)\n', after=False)
ins('    double* red = lay.reduce();\n', '    MARK(0);\n', after=False)
ins('    const float denom = reinterpret_cast', '    MARK(1);\n', after=False)
ins('    wgmma::proxy_fence();   // the first X ← aX + BX reads the normalized X through wgmma\n    __syncthreads();\n', '    MARK(2);\n')
ins('      const uint32_t parity = static_cast<uint32_t>(round * k.steps', '      MARK(3);\n', after=False)
ins('        tma::wait_cluster(partials_bar, parity);\n', '        MARK(4);\n')
ins('      if (tid == 0) tma::arrive_expect(a_bar, kRemoteABytes);', '      MARK(5);\n', after=False)
ins('      if (tid == 0) tma::arrive_expect(a_bar, remote_a_bytes);', '      MARK(5);\n', after=False)
ins('      __syncthreads();   // and its own units of A\n', '      MARK(6);\n')
ins('      __syncthreads();   // and this block\'s own units of A are in place\n', '      MARK(6);\n')
ins('      wgmma::proxy_fence();   // A is read by wgmma next\n      __syncthreads();\n', '      MARK(7);\n')
ins('        wgmma::proxy_fence();   // X ← aX + BX reads B through wgmma\n        __syncthreads();\n      }\n', '      MARK(8);\n')
ins('        wgmma::proxy_fence();   // the next iteration\'s products read the new X\n        __syncthreads();\n      }\n', '      MARK(9);\n')
# end of the rounds loop: the line before the loop's closing brace that precedes the kernel's final part
tail = '\n  }\n  if (kVectors && tid == 0) tma::wait_stores();' if 'tma::wait_stores();   // the stores' in src else '\n  }\n  // No block leaves'
ins(tail, '', after=False)
i = src.index(tail)
src = src[:i] + '\n    MARK(10);' + src[i:]
ins('  cluster.sync();\n#else', '')
src = src.replace('  cluster.sync();\n#else', '  cluster.sync();\n  if (tid == 0 && blockIdx.x == 0) { unsigned long long gt; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt)); g_time[1] = gt; g_probe[0][14] = clock64(); }\n#else', 1)
open(sys.argv[2], 'w').write(src)
