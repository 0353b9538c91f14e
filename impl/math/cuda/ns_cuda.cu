// Newton–Schulz on the device: cuBLASLt GEMMs (symmetric products as lower triangles plus a
// mirror), the normalization and Q = Z + aI kernels, replayed as CUDA graphs when a run
// recurs. See ns_cuda.hpp for the contract and the rounding model.
#include "impl/math/cuda/ns_cuda.hpp"

#include <cstring>
#include <utility>

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {
namespace {

uint64_t bits(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

uint64_t address(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// The loop a run takes: gram's on a wide matrix only; on a square one gram is the standard loop.
NsMethod loop_of(const NsConfig& cfg, int64_t m, int64_t n) {
  return cfg.method == NsMethod::gram && m != n ? NsMethod::gram : NsMethod::standard;
}

}  // namespace

// Why the symmetric products of a large NS take the strips (triangle_strips.hpp) and, where they
// do not fit, the ping-pong triangle kernel (triangle_product.hpp): both write each 128-block once
// with its transpose and fill the chip at m > 2048, where they beat cuBLASLt's 128-tiles and the
// dense GEMM; at m <= 2048 and for per-head blocks there are too few blocks to fill the chip and
// the full GEMM is faster. Where neither kernel runs (not sm_90a, unaligned operands) the product
// runs as the tiles. The figures and the command that measures them: docs/gpu.md, "Benchmark".
SymmetricPlan ns_split_for(int64_t m) {
  if (m <= 2048 || m % 128 != 0) return {};
  return {SymmetricSplit::strips, 0};   // where they fit and pay, else the ping-pong triangle (fitted)
}

NsDevice::NsDevice(cublasHandle_t handle, cudaStream_t stream, NsOptions options)
    : stream_(stream), options_(options) {
  (void)handle;
}

SymmetricPlan NsDevice::split_of(const NsOptions& o, int64_t m) {
  return o.split ? fitted(*o.split, m) : ns_split_for(m);
}

void NsDevice::symmetric(SymmetricPlan plan, int batch, int64_t m, int64_t k, float alpha, const void* a, int64_t lda,
                         int64_t sa, const void* b, bool b_transposed, int64_t ldb, int64_t sb, float beta,
                         const void* c, void* d) {
  SymmetricProblem p;
  p.dtype = dtype_;
  p.batch = batch;
  p.m = m, p.k = k;
  p.a = a, p.lda = lda, p.sa = sa;
  p.b = b, p.ldb = ldb, p.sb = sb, p.b_transposed = b_transposed;
  p.b_symmetric = !b_transposed;   // every m×m operand here is a polynomial in one symmetric matrix, mirrored
  p.alpha = alpha, p.beta = beta;
  p.c = c, p.d = d;
  const SymmetricSplit ran = sym_.run(plan, p, stream_);
  ++issued_as_[static_cast<size_t>(ran)];
  if (!ran_as_planned(plan, m, ran)) ++split_fallbacks_;
}

GemmProblem ns_apply_problem(DType t, int batch, int64_t m, int64_t n, const void* a, const void* b, const void* c,
                             void* d) {
  const int64_t eb = dtype_bytes(t), mm = m * m, mn = m * n;
  GemmProblem g;
  g.dtype = t;
  g.m = m, g.n = n, g.k = m;
  g.lda = m, g.ldb = n, g.ldc = g.ldd = n;
  g.sa = mm, g.sb = mn, g.sc = g.sd = mn;
  g.batch = batch;
  g.align_a = alignment(a, mm * eb), g.align_b = alignment(b, mn * eb);
  g.align_c = alignment(c, mn * eb), g.align_d = alignment(d, mn * eb);
  return g;
}

void NsDevice::apply(int batch, int64_t m, int64_t n, float alpha, const void* a, const void* b, float beta,
                     const void* c, void* d) {
  if (beta == 0.0f) c = d;
  gemm_.run(ns_apply_problem(dtype_, batch, m, n, a, b, c, d), alpha, a, b, beta, c, d, stream_);
}

// X (m×n, m ≤ n): A = XXᵀ; B = bA + cA²; X ← aX + BX. Each line one GEMM (B's with the bA term
// and X's with the aX term in the epilogue, reading C and writing D elsewhere).
void* NsDevice::standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int64_t mm = m * m, mn = m * n;
  void* a = a_.get();
  void* b = b_.get();
  void* cur = x;
  void* nxt = x2_.get();
  for (int i = 0; i < cfg.steps; ++i) {
    const NsTriple& k = cfg.at(i);
    symmetric(split_, batch, m, n, 1.0f, cur, n, mn, cur, true, n, mn, 0.0f, nullptr, a);   // A = XXᵀ
    symmetric(split_, batch, m, m, k.c, a, m, mm, a, false, m, mm, k.b, a, b);             // B = cA² + bA
    apply(batch, m, n, 1.0f, b, cur, k.a, cur, nxt);                                                // X' = BX + aX
    std::swap(cur, nxt);
  }
  return cur;
}

// DeepSpeed's zeropower_via_gram_newtonschulz (docs/semantics.md §7), X m×n with m < n. Every m×m product
// is a polynomial in R times another, hence symmetric.
void* NsDevice::gram(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int64_t mm = m * m, mn = m * n;
  void* r = a_.get();
  void* z = b_.get();
  void* q = q_.get();
  void* q2 = q2_.get();
  void* t = t_.get();
  void* cur = x;
  void* nxt = x2_.get();
  auto square = [&](float alpha, const void* lhs, const void* rhs, float beta, const void* c, void* d) {
    symmetric(split_, batch, m, m, alpha, lhs, m, mm, rhs, false, m, mm, beta, c, d);
  };
  bool have_q = false;
  symmetric(split_, batch, m, n, 1.0f, cur, n, mn, cur, true, n, mn, 0.0f, nullptr, r);   // R = XXᵀ
  for (int i = 0; i < cfg.steps; ++i) {
    const NsTriple& k = cfg.at(i);
    if (i == 2) {                                                                                // restart
      if (have_q) {
        apply(batch, m, n, 1.0f, q, cur, 0.0f, nullptr, nxt);                                    // X = QX
        std::swap(cur, nxt);
      }
      symmetric(split_, batch, m, n, 1.0f, cur, n, mn, cur, true, n, mn, 0.0f, nullptr, r);
      have_q = false;
    }
    // A Q's first Z is written into Q's buffer and becomes Q = Z + aI there, in place, once R's
    // update has read it: Q differs from Z only on its diagonal, so no copy of Z is made.
    const bool first_z = !have_q;
    void* const zi = first_z ? q : z;
    square(k.c, r, r, k.b, r, zi);                                                               // Z = cR² + bR
    if (have_q) {
      square(1.0f, zi, q, k.a, q, q2);                                                           // Q = ZQ + aQ
      std::swap(q, q2);
    }
    if (i < cfg.steps - 1 && i + 1 != 2) {
      square(1.0f, zi, r, k.a, r, t);                                                            // T = ZR + aR
      square(1.0f, zi, t, k.a, t, r);                                                            // R = ZT + aT
    }
    if (first_z) {
      plus_identity(dtype_, q, q, batch, m, k.a, stream_);                                       // Q = Z + aI
      have_q = true;
    }
  }
  if (!have_q) return cur;
  apply(batch, m, n, 1.0f, q, cur, 0.0f, nullptr, nxt);                                          // QX
  return nxt;
}

void NsDevice::reserve(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const size_t eb = static_cast<size_t>(dtype_bytes(cfg.dtype)), mm = m * m * eb * batch, mn = m * n * eb * batch;
  x2_.reserve(mn);
  a_.reserve(mm);
  b_.reserve(mm);
  if (loop_of(cfg, m, n) == NsMethod::gram) q_.reserve(mm), q2_.reserve(mm), t_.reserve(mm);
  scratch_.reserve(normalize_scratch_bytes(batch, m * n));
}

void* NsDevice::iterate(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  if (!resident_) return on_gemms(x, batch, m, n, cfg);
  resident_standard(x, batch - tail_, m, n, cfg, stream_);
  if (tail_ > 0) {   // the kernel's programmatic dependent: its blocks start once all of the kernel's have
    void* const tail_x = static_cast<unsigned char*>(x) + (batch - tail_) * m * n * dtype_bytes(dtype_);
    streamed_standard(tail_x, tail_, m, n, cfg, streamed_scratch_.get(), true, stream_);
  }
  return x;
}

void* NsDevice::on_gemms(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  normalize(dtype_, x, batch, m * n, scratch_.get(), stream_);
  return loop_of(cfg, m, n) == NsMethod::gram ? gram(x, batch, m, n, cfg) : standard(x, batch, m, n, cfg);
}

int NsDevice::tail_for(const void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) const {
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0;   // the streamed kernel's tensor map needs it
  if (!aligned || options_.streamed_tail == false) return 0;
  return options_.streamed_tail ? streamed_part(batch, m, n, cfg) : streamed_tail(batch, m, n, cfg);
}

void* NsDevice::run(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  if (m > n) throw Error(ErrorKind::Internal, "NsDevice::run: expects m <= n (transpose tall matrices first)");
  if (batch < 1 || m < 1) return x;
  dtype_ = cfg.dtype;
  split_ = split_of(options_, m);
  using R = NsOptions::Resident;
  resident_ = !options_.split && options_.resident != R::never && resident_fits(batch, m, n, cfg) &&
              (options_.resident == R::always || resident_pays(batch, m, n));
  tail_ = resident_ ? tail_for(x, batch, m, n, cfg) : 0;
  if (!resident_) reserve(batch, m, n, cfg);
  if (tail_ > 0) streamed_scratch_.reserve(streamed_scratch_bytes(tail_, true, n));
  if (!options_.graphs) return iterate(x, batch, m, n, cfg);
  // Bounded caches: a graph holds the addresses of the tile pointer arrays, so both go together.
  if (graphs_.size() > 64 || sym_.cached_arrays() > 1024) {
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (NS caches)");
    graphs_.clear();
    sym_.clear_arrays();
  }
  GraphCache::Key key{address(x),
                      static_cast<uint64_t>(batch),
                      static_cast<uint64_t>(m),
                      static_cast<uint64_t>(n),
                      static_cast<uint64_t>(cfg.method),
                      static_cast<uint64_t>(cfg.steps),
                      static_cast<uint64_t>(cfg.dtype),
                      static_cast<uint64_t>(resident_),
                      static_cast<uint64_t>(tail_),
                      address(streamed_scratch_.get()),
                      static_cast<uint64_t>(split_.split),
                      static_cast<uint64_t>(split_.param),
                      address(x2_.get()),
                      address(a_.get()),
                      address(b_.get()),
                      address(q_.get()),
                      address(q2_.get()),
                      address(t_.get()),
                      address(scratch_.get())};
  for (int i = 0; i < cfg.steps; ++i)   // every iteration's coefficients are baked into the graph's launches
    for (float f : {cfg.at(i).a, cfg.at(i).b, cfg.at(i).c}) key.push_back(bits(f));
  return graphs_.run(key, stream_, [&] { return iterate(x, batch, m, n, cfg); });
}

NsFlops NsDevice::flops(int batch, int64_t m, int64_t n, const NsConfig& cfg, const NsOptions& options) {
  const double fraction = issued_fraction(split_of(options, m), m);   // of every symmetric product
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  const double xxt = 2 * M * M * N, mmm = 2 * M * M * M, qx = 2 * M * M * N;
  NsFlops f;
  auto add = [&](double nominal, double fraction, bool symmetric) {
    f.nominal += nominal * batch;
    f.issued += nominal * fraction * batch;
    f.symmetric += nominal * (symmetric ? (M + 1) / (2 * M) : 1.0) * batch;
  };
  auto gram = [&] { add(xxt, fraction, true); };     // X·Xᵀ
  auto square = [&] { add(mmm, fraction, true); };   // an m×m polynomial in one symmetric matrix
  auto apply = [&] { add(qx, 1.0, false); };   // B·X or Q·X
  if (loop_of(cfg, m, n) == NsMethod::standard) {
    for (int i = 0; i < cfg.steps; ++i) gram(), square(), apply();
    return f;
  }
  gram();
  bool have_q = false;
  for (int i = 0; i < cfg.steps; ++i) {
    if (i == 2) {
      if (have_q) apply();
      gram();
      have_q = false;
    }
    square();                                   // Z
    if (have_q) square();                       // ZQ
    have_q = true;
    if (i < cfg.steps - 1 && i + 1 != 2) square(), square();
  }
  if (have_q) apply();
  return f;
}

}  // namespace muoncheck::impl::cuda
