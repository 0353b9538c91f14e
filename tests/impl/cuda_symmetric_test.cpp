// The symmetric-product path of the device Newton–Schulz (label gpu; skipped without a device):
//  - a product computed as lower-triangle blocks plus the mirror (tiles and our
//    triangle kernel that writes each block with its transpose; B = A, or 2A in another buffer) is
//    exactly symmetric and equals the full GEMM within fp32-accumulation rounding, element by
//    element; D starts poisoned with NaN, so a skipped mirror (or an unwritten block) fails;
//  - mirror_lower alone, on both of its kernels (16-byte pieces when m and the base allow,
//    else pairs, else single elements), m with and without a partial 64-tile: the upper
//    triangle becomes the lower's transpose bit for bit, the lower triangle is left as it was;
//  - plus_identity (gram's Q = Z + aI) rounds each diagonal element once and copies the rest
//    bit for bit, out of place and in place;
//  - the strips kernel with the second block of every cluster idling before each job (its ring's
//    barriers under skew) writes the same bits as with its blocks timed together;
//  - a whole NS run under each split stays within the conformance band against the fp32 CPU
//    reference (err ≤ 4·err(cpu) + 8u, as cuda_compute_test) and is bit-identical across its
//    eager run, its graph capture and a graph replay.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "ns_test_config.hpp"
#include "relative_error.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/ns_cuda.hpp"
#include "impl/math/cuda/ns_streamed.hpp"
#include "impl/math/cuda/triangle_strips.hpp"
#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {
namespace {

std::vector<float> values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(gen);
  return v;
}

// One stream and the fp32 staging between host vectors and NS-dtype device buffers.
class Device {
 public:
  Device() { check(cudaStreamCreate(&stream), "cudaStreamCreate"); }
  ~Device() { (void)cudaStreamDestroy(stream); }
  void upload(DType t, const std::vector<float>& host, void* dst) {
    auto* f = static_cast<float*>(staging_.reserve(sizeof(float) * host.size()));
    check(cudaMemcpy(f, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    to_dtype(t, f, dst, static_cast<int64_t>(host.size()), stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  std::vector<float> download(DType t, const void* src, int64_t n) {
    auto* f = static_cast<float*>(staging_.reserve(sizeof(float) * n));
    from_dtype_scaled(t, src, f, n, 1.0f, stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<float> host(static_cast<size_t>(n));
    check(cudaMemcpy(host.data(), f, sizeof(float) * n, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
  }
  cudaStream_t stream = nullptr;

 private:
  DeviceBuffer staging_;
};

// Values as the NS dtype holds them (the host copy of what the device sees).
std::vector<float> rounded(Device& dev, DType t, const std::vector<float>& v) {
  DeviceBuffer b;
  b.reserve(static_cast<size_t>(dtype_bytes(t)) * v.size());
  dev.upload(t, v, b.get());
  return dev.download(t, b.get(), static_cast<int64_t>(v.size()));
}

// Each of the batch's m×m matrices made symmetric: its upper triangle the lower's transpose.
void mirror_each(std::vector<float>& a, int batch, int64_t m) {
  const int64_t mm = m * m;
  for (int b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < i; ++j) a[b * mm + j * m + i] = a[b * mm + i * m + j];
}

TEST(SymmetricPlanArithmetic, FitsTheShapeAndCountsTheIssuedWork) {
  EXPECT_EQ(fitted({SymmetricSplit::tiles, 128}, 4096).split, SymmetricSplit::tiles);
  EXPECT_EQ(fitted({SymmetricSplit::tiles, 128}, 128).split, SymmetricSplit::full);    // one block: nothing saved
  EXPECT_EQ(fitted({SymmetricSplit::tiles, 96}, 4096).split, SymmetricSplit::full);    // does not divide
  EXPECT_DOUBLE_EQ(issued_fraction({SymmetricSplit::tiles, 128}, 4096), 33.0 / 64);  // 528 of 1024 blocks
  EXPECT_EQ(fitted({SymmetricSplit::triangle, 0}, 256).split, SymmetricSplit::triangle);
  EXPECT_EQ(fitted({SymmetricSplit::triangle, 0}, 128).split, SymmetricSplit::full);   // one tile
  EXPECT_EQ(fitted({SymmetricSplit::triangle, 0}, 4000).split, SymmetricSplit::full);  // 128 does not divide
  EXPECT_DOUBLE_EQ(issued_fraction({SymmetricSplit::triangle, 0}, 4096), 33.0 / 64);
  EXPECT_EQ(fitted({SymmetricSplit::strips, 0}, 4096), (SymmetricPlan{SymmetricSplit::strips, 0}));
  EXPECT_EQ(fitted({SymmetricSplit::strips, 1}, 512), (SymmetricPlan{SymmetricSplit::strips, 1}));
  EXPECT_EQ(fitted({SymmetricSplit::strips, 0}, 384).split, SymmetricSplit::triangle);   // 256 does not divide
  EXPECT_EQ(fitted({SymmetricSplit::strips, 0}, 128).split, SymmetricSplit::full);
  EXPECT_DOUBLE_EQ(issued_fraction({SymmetricSplit::strips, 0}, 4096), 33.0 / 64);
  EXPECT_TRUE(ran_as_planned({SymmetricSplit::strips, 0}, 4096, SymmetricSplit::triangle));   // two operands
  EXPECT_TRUE(ran_as_planned({SymmetricSplit::strips, 1}, 4096, SymmetricSplit::strips));
  EXPECT_FALSE(ran_as_planned({SymmetricSplit::strips, 0}, 4096, SymmetricSplit::full));
  EXPECT_TRUE(ran_as_planned({SymmetricSplit::triangle, 0}, 4096, SymmetricSplit::triangle));
  EXPECT_FALSE(ran_as_planned({SymmetricSplit::triangle, 0}, 4096, SymmetricSplit::tiles));
  EXPECT_DOUBLE_EQ(issued_fraction({}, 4096), 1.0);
  // The default's choice (ns_cuda.cu; one H100, docs/gpu.md): both NS's products on
  // the strips where they fit and pay, else on the ping-pong triangle; small matrices as the full GEMM.
  EXPECT_EQ(ns_split_for(4096), (SymmetricPlan{SymmetricSplit::strips, 0}));
  EXPECT_EQ(ns_split_for(2304), (SymmetricPlan{SymmetricSplit::strips, 0}));
  EXPECT_EQ(fitted(ns_split_for(2176), 2176).split, SymmetricSplit::triangle);   // 256 does not divide
  EXPECT_EQ(ns_split_for(2048), SymmetricPlan{});
  EXPECT_EQ(ns_split_for(4000), SymmetricPlan{});
}

struct ProductCase {
  const char* name;
  DType dtype;
  SymmetricPlan plan;
  int batch;
  bool gram;   // X·Xᵀ (k = 160); else B = c·A·A + b·A with A symmetric (the epilogue form)
  int64_t m = 96;
  bool two_operands = false;   // square only: B = 2A in a buffer of its own (A and B commute exactly), else B = A
};

class SymmetricProductTest : public ::testing::TestWithParam<ProductCase> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

TEST_P(SymmetricProductTest, IsExactlySymmetricAndMatchesTheFullGemm) {
  const ProductCase c = GetParam();
  const int64_t m = c.m, k = c.gram ? 160 : m, mm = m * m, eb = dtype_bytes(c.dtype);
  const float alpha = c.gram ? 1.0f : 2.0315f, beta = c.gram ? 0.0f : -4.7750f;
  Device dev;
  // A: batch × m×k, symmetric when square; C = A (the bA term).
  std::vector<float> a = values(c.batch * m * k, 7 + c.batch);
  if (!c.gram) mirror_each(a, c.batch, m);
  a = rounded(dev, c.dtype, a);
  std::vector<float> bv = a;
  if (c.two_operands)
    for (int b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) bv[b * mm + i * m + j] = 2.0f * a[b * mm + i * m + j];
  DeviceBuffer da, db, full, sym;
  da.reserve(eb * a.size()), db.reserve(eb * a.size()), full.reserve(eb * mm * c.batch), sym.reserve(eb * mm * c.batch);
  dev.upload(c.dtype, a, da.get());
  dev.upload(c.dtype, bv, db.get());
  LtGemm gemm;
  SymmetricProduct product(gemm);
  SymmetricProblem p;
  p.dtype = c.dtype;
  p.batch = c.batch;
  p.m = m, p.k = k;
  p.a = da.get(), p.lda = k, p.sa = m * k;
  p.b = c.two_operands ? db.get() : da.get(), p.ldb = k, p.sb = m * k, p.b_transposed = c.gram, p.b_symmetric = !c.gram;
  p.alpha = alpha, p.beta = beta, p.c = c.gram ? nullptr : da.get();
  p.d = full.get();
  ASSERT_EQ(product.run({}, p, dev.stream), SymmetricSplit::full);
  check(cudaMemset(sym.get(), 0xFF, eb * mm * c.batch), "cudaMemset");   // NaN in every dtype
  p.d = sym.get();
  ASSERT_EQ(product.run(c.plan, p, dev.stream), c.plan.split) << c.name << ": the split did not run";
  const std::vector<float> f = dev.download(c.dtype, full.get(), mm * c.batch);
  const std::vector<float> s = dev.download(c.dtype, sym.get(), mm * c.batch);

  // |Δ| ≤ 2u·|D| (one rounding each) + 2·k·2⁻²⁴·|α|·(|A||B|)ᵢⱼ (fp32 sums in another order)
  //      + 4·2⁻²⁴·(|α|·(|A||B|)ᵢⱼ + |β·Cᵢⱼ|) (the fp32 epilogue, fused or not).
  const double u = unit_roundoff(c.dtype), e32 = std::ldexp(1.0, -24);
  const double gamma = (2.0 * k + 4) * e32 * std::fabs(alpha);
  int asymmetric = 0, apart = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) {
        const size_t e = b * mm + i * m + j;
        if (!(s[e] == s[b * mm + j * m + i])) ++asymmetric;
        double abs_dot = 0;
        for (int64_t q = 0; q < k; ++q)
          abs_dot += std::fabs(a[b * m * k + i * k + q]) * std::fabs(c.gram ? bv[b * m * k + j * k + q] : bv[b * mm + q * m + j]);
        const double c_ij = c.gram ? 0.0 : std::fabs(beta * a[b * mm + i * m + j]);
        const double bound = 2 * u * std::max(std::fabs(f[e]), std::fabs(s[e])) + gamma * abs_dot + 4 * e32 * c_ij;
        if (!(std::fabs(double(s[e]) - f[e]) <= bound)) ++apart;
      }
  EXPECT_EQ(asymmetric, 0) << c.name << ": elements whose mirror differs (a skipped mirror leaves NaN)";
  EXPECT_EQ(apart, 0) << c.name << ": elements outside fp32-accumulation rounding of the full GEMM";
}

INSTANTIATE_TEST_SUITE_P(
    Splits, SymmetricProductTest,
    ::testing::Values(ProductCase{"xxt_tiles32_bf16", DType::bf16, {SymmetricSplit::tiles, 32}, 1, true},
                      ProductCase{"xxt_tiles32_batch3_fp16", DType::fp16, {SymmetricSplit::tiles, 32}, 3, true},
                      ProductCase{"square_tiles16_fp16", DType::fp16, {SymmetricSplit::tiles, 16}, 1, false},
                      ProductCase{"square_tiles32_batch3_bf16", DType::bf16, {SymmetricSplit::tiles, 32}, 3, false},
                      // Our kernel (128-tiles; k = 160 ends in a part-filled step the TMA fills with zeros).
                      ProductCase{"xxt_triangle_bf16", DType::bf16, {SymmetricSplit::triangle, 0}, 1, true, 256},
                      ProductCase{"xxt_triangle_batch3_fp16", DType::fp16, {SymmetricSplit::triangle, 0}, 3, true, 384},
                      ProductCase{"square_triangle_bf16", DType::bf16, {SymmetricSplit::triangle, 0}, 1, false, 256},
                      ProductCase{"square_triangle_batch3_fp16", DType::fp16, {SymmetricSplit::triangle, 0}, 3, false, 384},
                      ProductCase{"square_two_operands_triangle_bf16", DType::bf16, {SymmetricSplit::triangle, 0}, 2, false, 256, true},
                      // More tiles than an H200 has multiprocessors (132): blocks take several, and
                      // both of a block's multiplying warpgroups (ping-pong) write some.
                      ProductCase{"xxt_triangle_pingpong_batch8_bf16", DType::bf16, {SymmetricSplit::triangle, 0}, 8, true, 768},
                      ProductCase{"square_triangle_pingpong_batch7_fp16", DType::fp16, {SymmetricSplit::triangle, 0}, 7, false, 768},
                      ProductCase{"square_two_operands_tiles32_fp16", DType::fp16, {SymmetricSplit::tiles, 32}, 1, false, 96, true},
                      // The strips (param 1: even where they take more rounds than the triangle):
                      // one 2 × 2 block below the diagonal and two on it (m = 512); three below
                      // it, an odd diagonal (a lone tile and a repeated strip) over a batch (768);
                      // 4096² from k = 160, two job pairs a cluster on 132 multiprocessors.
                      ProductCase{"xxt_strips_bf16", DType::bf16, {SymmetricSplit::strips, 1}, 1, true, 512},
                      ProductCase{"square_strips_batch3_fp16", DType::fp16, {SymmetricSplit::strips, 1}, 3, false, 768},
                      ProductCase{"xxt_strips_batch2_fp16", DType::fp16, {SymmetricSplit::strips, 1}, 2, true, 1024},
                      ProductCase{"xxt_strips_4096_bf16", DType::bf16, {SymmetricSplit::strips, 1}, 1, true, 4096}),
    [](const auto& info) { return std::string(info.param.name); });

// The strips' ring under skew: a block that copies into its partner's slot (the shared panels)
// before the partner has read it changes the partner's tile; a lag of about 20 µs before each job
// lets the other block run ahead by the whole ring, so any such refill happens every time. With
// the ring's barriers intact the lagging product has the bits of the one timed together.
struct LagCase {
  const char* name;
  DType dtype;
  int batch;
  int64_t m, k;
  bool gram;   // X·Xᵀ (X m×k); else A·A with A symmetric (k = m)
};

class StripsUnderLagTest : public ::testing::TestWithParam<LagCase> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

TEST_P(StripsUnderLagTest, WriteTheBitsOfTheBlocksTimedTogether) {
  const LagCase c = GetParam();
  const int64_t m = c.m, k = c.gram ? c.k : c.m, mm = m * m, eb = dtype_bytes(c.dtype), out = c.batch * mm;
  Device dev;
  std::vector<float> a = values(c.batch * m * k, 11 + c.batch);
  if (!c.gram) mirror_each(a, c.batch, m);
  DeviceBuffer da, together, lagging;
  da.reserve(eb * a.size()), together.reserve(eb * out), lagging.reserve(eb * out);
  dev.upload(c.dtype, a, da.get());
  SymmetricProblem p;
  p.dtype = c.dtype;
  p.batch = c.batch;
  p.m = m, p.k = k;
  p.a = p.b = da.get(), p.lda = p.ldb = k, p.sa = p.sb = m * k;
  p.b_transposed = c.gram, p.b_symmetric = !c.gram;
  p.alpha = c.gram ? 1.0f : 2.0315f, p.beta = c.gram ? 0.0f : -4.7750f, p.c = c.gram ? nullptr : da.get();
  ASSERT_TRUE(strips_fit(p)) << c.name << ": the strips do not run here";
  std::vector<std::vector<float>> runs;
  for (const auto& [d, timing] : {std::pair{&together, StripsTiming::together},
                                  std::pair{&lagging, StripsTiming::second_block_lags}}) {
    check(cudaMemset(d->get(), 0xFF, eb * out), "cudaMemset");   // NaN in every dtype
    p.d = d->get();
    triangle_strips(p, dev.stream, timing);
    runs.push_back(dev.download(c.dtype, d->get(), out));
  }
  int unwritten = 0;
  for (float x : runs[0]) unwritten += std::isnan(x) ? 1 : 0;
  EXPECT_EQ(unwritten, 0) << c.name << ": elements the strips left unwritten";
  int differ = 0;
  for (int64_t e = 0; e < out; ++e) differ += std::memcmp(&runs[0][e], &runs[1][e], sizeof(float)) != 0 ? 1 : 0;
  EXPECT_EQ(differ, 0) << c.name << ": elements that differ when one block of each cluster lags";
}

INSTANTIATE_TEST_SUITE_P(
    Skewed, StripsUnderLagTest,
    // Nine k-steps a job over a ring of four, 100 job pairs (up to two a cluster on 132
    // multiprocessors); a square of twelve k-steps with a diagonal strip repeated in place of an odd one.
    ::testing::Values(LagCase{"xxt_batch40_bf16", DType::bf16, 40, 512, 576, true},
                      LagCase{"square_batch3_fp16", DType::fp16, 3, 768, 768, false}),
    [](const auto& info) { return std::string(info.param.name); });

struct MirrorCase {
  const char* name;
  DType dtype;
  int batch;
  int64_t m;
  int64_t offset;   // elements from the buffer's start: 1 misaligns the 16-byte pieces
};

class MirrorTest : public ::testing::TestWithParam<MirrorCase> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

TEST_P(MirrorTest, UpperBecomesTheLowersTransposeAndTheLowerStays) {
  const MirrorCase c = GetParam();
  const int64_t mm = c.m * c.m, n = c.batch * mm;
  Device dev;
  const std::vector<float> lower = rounded(dev, c.dtype, values(n, static_cast<uint32_t>(c.m + c.batch)));
  std::vector<float> start = lower;   // the upper triangle NaN, as an unwritten product block
  for (int b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = i + 1; j < c.m; ++j) start[b * mm + i * c.m + j] = std::nanf("");
  DeviceBuffer buf;
  const int64_t eb = dtype_bytes(c.dtype);
  buf.reserve(eb * (n + c.offset));
  void* d = static_cast<char*>(buf.get()) + eb * c.offset;
  dev.upload(c.dtype, start, d);
  mirror_lower(c.dtype, d, c.batch, c.m, dev.stream);
  const std::vector<float> out = dev.download(c.dtype, d, n);
  int wrong_upper = 0, changed_lower = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.m; ++j) {
        const float got = out[b * mm + i * c.m + j];
        if (j > i && !(got == lower[b * mm + j * c.m + i])) ++wrong_upper;
        if (j <= i && !(got == lower[b * mm + i * c.m + j])) ++changed_lower;
      }
  EXPECT_EQ(wrong_upper, 0) << c.name << ": upper elements that are not the lower's transpose";
  EXPECT_EQ(changed_lower, 0) << c.name << ": lower elements the mirror overwrote";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, MirrorTest,
    ::testing::Values(MirrorCase{"vectors_bf16_m256", DType::bf16, 1, 256, 0},
                      MirrorCase{"vectors_bf16_partial_tile_batch3", DType::bf16, 3, 200, 0},
                      MirrorCase{"vectors_fp16_one_piece", DType::fp16, 2, 8, 0},
                      MirrorCase{"vectors_fp32_partial_tile", DType::fp32, 2, 100, 0},
                      MirrorCase{"elements_bf16_misaligned", DType::bf16, 2, 200, 1},
                      MirrorCase{"pairs_fp16_m_not_a_piece", DType::fp16, 1, 130, 0},
                      MirrorCase{"elements_bf16_odd_m", DType::bf16, 2, 97, 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PlusIdentity, RoundsTheDiagonalOnceAndCopiesTheRest) {
  MUONCHECK_REQUIRE_GPU();
  for (DType t : {DType::fp16, DType::bf16, DType::fp32})
    for (bool in_place : {false, true}) {
      const int batch = 3;
      const int64_t m = 130, mm = m * m;
      const float a = 3.4445f;
      Device dev;
      const std::vector<float> z = rounded(dev, t, values(batch * mm, 11));
      std::vector<float> want = z;
      for (int b = 0; b < batch; ++b)
        for (int64_t i = 0; i < m; ++i) want[b * mm + i * m + i] = z[b * mm + i * m + i] + a;
      want = rounded(dev, t, want);   // z + a added in fp32 as the kernel does, rounded once
      DeviceBuffer dz, dq;
      dz.reserve(dtype_bytes(t) * batch * mm), dq.reserve(dtype_bytes(t) * batch * mm);
      dev.upload(t, z, dz.get());
      void* q = in_place ? dz.get() : dq.get();
      plus_identity(t, dz.get(), q, batch, m, a, dev.stream);
      const std::vector<float> got = dev.download(t, q, batch * mm);
      int wrong = 0;
      for (size_t e = 0; e < got.size(); ++e) wrong += !(got[e] == want[e]);
      EXPECT_EQ(wrong, 0) << dtype_name(t) << (in_place ? " in place" : " out of place");
    }
}

struct NsCase {
  const char* name;
  int batch;
  int64_t m, n;
  NsMethod method;
  DType dtype;
  NsOptions options;
  bool resident = false;   // the run must be the resident kernel (else it must not be)
  const char* schedule = nullptr;   // a named per-iteration schedule (core/ns_schedules.hpp), else the one triple
};

class SymmetricNsTest : public ::testing::TestWithParam<NsCase> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

// Per matrix of the batch: the CPU NS (newton_schulz) in cfg's dtype.
std::vector<float> cpu_ns(const std::vector<float>& x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  std::vector<float> out;
  for (int b = 0; b < batch; ++b) {
    Mat u(m, n);
    std::copy_n(x.begin() + b * m * n, m * n, u.v.begin());
    const Mat o = newton_schulz(u, cfg);
    out.insert(out.end(), o.v.begin(), o.v.end());
  }
  return out;
}

TEST_P(SymmetricNsTest, StaysInTheConformanceBandAndReplaysBitIdentically) {
  const NsCase c = GetParam();
  const NsConfig cfg = ns_test_config(c.method, c.dtype, c.schedule);
  NsConfig ref_cfg = cfg;
  ref_cfg.dtype = DType::fp32;
  const int64_t count = c.batch * c.m * c.n;
  const std::vector<float> x = values(count, static_cast<uint32_t>(c.m * 31 + c.n));
  Device dev;
  DeviceBuffer dx;
  dx.reserve(static_cast<size_t>(dtype_bytes(c.dtype)) * count);
  NsDevice ns(nullptr, dev.stream, c.options);
  std::vector<std::vector<float>> runs;
  for (int r = 0; r < 3; ++r) {   // eager, captured, replayed
    dev.upload(c.dtype, x, dx.get());
    const void* o = ns.run(dx.get(), c.batch, c.m, c.n, cfg);
    runs.push_back(dev.download(c.dtype, o, count));
  }
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), sizeof(float) * count), 0) << c.name << ": capture differs";
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[2].data(), sizeof(float) * count), 0) << c.name << ": replay differs";
  EXPECT_EQ(ns.split_fallbacks(), 0) << c.name << ": a symmetric product fell back from its split (ran_as_planned)";
  if (c.options.split && c.options.split->split == SymmetricSplit::strips) {
    EXPECT_GT(ns.issued_as(SymmetricSplit::strips), 0) << c.name << ": the strips kernel took no product";
  }
  EXPECT_EQ(ns.ran_resident(), c.resident) << c.name << ": the resident kernel " << (c.resident ? "did not run" : "ran");
  const std::vector<float> ref = cpu_ns(x, c.batch, c.m, c.n, ref_cfg), on_cpu = cpu_ns(x, c.batch, c.m, c.n, cfg);
  const double e_cpu = relative_error(on_cpu, ref), e_gpu = relative_error(runs[0], ref);
  const double band = 4 * e_cpu + 8 * unit_roundoff(c.dtype) + (c.dtype == DType::fp32 ? 1e-4 : 0.0);
  EXPECT_LE(e_gpu, band) << c.name << ": err(cuda) " << e_gpu << ", err(cpu) " << e_cpu;
}

using S = SymmetricSplit;
using R = NsOptions::Resident;
// The options that force a split (a production route or its fallback) on every product.
NsOptions split(S s, int64_t param = 0) {
  NsOptions o;
  o.split = SymmetricPlan{s, param};
  return o;
}
// The options that force the resident kernel on or off, and its part-filled round streamed or not.
NsOptions resident(R r, std::optional<bool> streamed = std::nullopt) {
  NsOptions o;
  o.resident = r;
  o.streamed_tail = streamed;
  return o;
}
INSTANTIATE_TEST_SUITE_P(
    Splits, SymmetricNsTest,
    ::testing::Values(NsCase{"standard_tiles32_bf16", 1, 128, 192, NsMethod::standard, DType::bf16, split(S::tiles, 32)},
                      NsCase{"standard_tiles128_bf16", 1, 256, 384, NsMethod::standard, DType::bf16, split(S::tiles, 128)},
                      NsCase{"gram_tiles32_fp16", 1, 96, 256, NsMethod::gram, DType::fp16, split(S::tiles, 32)},
                      NsCase{"gram_per_head_tiles32_fp16", 4, 64, 128, NsMethod::gram, DType::fp16, split(S::tiles, 32)},
                      NsCase{"gram_tiles16_fp32", 1, 64, 160, NsMethod::gram, DType::fp32, split(S::tiles, 16)},
                      NsCase{"standard_triangle_bf16", 1, 384, 520, NsMethod::standard, DType::bf16, split(S::triangle)},
                      NsCase{"gram_triangle_batch2_fp16", 2, 256, 640, NsMethod::gram, DType::fp16, split(S::triangle)},
                      NsCase{"standard_strips_bf16", 1, 512, 520, NsMethod::standard, DType::bf16, split(S::strips, 1)},
                      // X·Xᵀ and R·R on the strips, the two-operand products on the ping-pong kernel
                      NsCase{"gram_strips_fp16", 1, 512, 640, NsMethod::gram, DType::fp16, split(S::strips, 1)},
                      // The resident kernel: per-head blocks, the widest slice, ragged shapes
                      // (scalar loads, padded rows and columns), a per-iteration schedule, rounds,
                      // and the same per-head shape on the GEMMs for comparison.
                      NsCase{"resident_per_head_bf16", 3, 128, 1024, NsMethod::standard, DType::bf16, resident(R::always), true},
                      NsCase{"resident_full_width_fp16", 1, 128, 4096, NsMethod::standard, DType::fp16, resident(R::always), true},
                      NsCase{"resident_ragged_bf16", 2, 37, 301, NsMethod::standard, DType::bf16, resident(R::always), true},
                      NsCase{"resident_square_gram_fp16", 2, 96, 96, NsMethod::gram, DType::fp16, resident(R::always), true},
                      NsCase{"resident_polar_express_bf16", 4, 64, 512, NsMethod::standard, DType::bf16,
                             resident(R::always), true, "polar_express"},
                      // More matrices than clusters run at once (15 on the H200): each cluster works
                      // through its share in rounds (the last one part-filled).
                      NsCase{"resident_rounds_bf16", 40, 64, 512, NsMethod::standard, DType::bf16, resident(R::always, false), true},
                      NsCase{"gemms_per_head_bf16", 3, 128, 1024, NsMethod::standard, DType::bf16,
                             resident(R::never)}),
    [](const auto& info) { return std::string(info.param.name); });

// The default's rule (resident_pays): rounds that pay, matrices not too small, more than one.
TEST(ResidentRule, RunsWhereItsRoundsPay) {
  MUONCHECK_REQUIRE_GPU();
  const int c = resident_active_clusters(4096);
  ASSERT_GT(c, 2) << "the resident kernel does not launch on this device";
  EXPECT_TRUE(resident_pays(c, 128, 4096));
  EXPECT_TRUE(resident_pays(2, 128, 4096));
  EXPECT_TRUE(resident_pays(4 * c + 4, 128, 4096)) << "64 heads on the H200: five rounds, the last holding 4";
  EXPECT_EQ(resident_partial_round(4 * c + 4, 4096), 4);
  EXPECT_EQ(resident_partial_round(c, 4096), 0) << "one full round";
  NsConfig bf16;
  bf16.method = NsMethod::standard;
  bf16.dtype = DType::bf16;
  if (streamed_beside_capacity(4096) >= 4) {
    EXPECT_EQ(streamed_tail(4 * c + 4, 128, 4096, bf16), 4) << "64 heads on the H200: four rounds, 4 streamed beside them";
  }
  EXPECT_EQ(streamed_tail(c + 2, 128, 4096, bf16), 0) << "one full round: the second round is faster";
  EXPECT_EQ(streamed_tail(3 * c + 3, 128, 4096, bf16), 0) << "three full rounds: a fourth is faster";
  EXPECT_EQ(streamed_tail(2 * c, 128, 4096, bf16), 0) << "no part-filled round";
  EXPECT_TRUE(resident_pays(c + 1, 128, 4096)) << "a second round for one matrix";
  EXPECT_FALSE(resident_pays(1, 128, 4096));
  EXPECT_TRUE(resident_pays(c, 128, 1024));
  EXPECT_FALSE(resident_pays(2 * c, 128, 1024)) << "several rounds of smaller matrices";
  EXPECT_FALSE(resident_pays(c, 32, 128)) << "tiny matrices";
  NsConfig cfg;
  cfg.method = NsMethod::standard;
  cfg.dtype = DType::bf16;
  Device dev;
  DeviceBuffer dx;
  const size_t bytes = 2 * static_cast<size_t>(c + 2) * 128 * 4096;   // the largest batch below, bf16
  dx.reserve(bytes);
  ASSERT_EQ(cudaMemset(dx.get(), 0, bytes), cudaSuccess);
  NsDevice ns(nullptr, dev.stream);
  ns.run(dx.get(), c, 128, 4096, cfg);
  EXPECT_TRUE(ns.ran_resident());
  EXPECT_EQ(ns.streamed_matrices(), 0);
  ns.run(dx.get(), c + 1, 128, 4096, cfg);
  EXPECT_TRUE(ns.ran_resident());
  EXPECT_EQ(ns.streamed_matrices(), 0) << "one matrix after a full round stays on the kernel";
  ns.run(dx.get(), c + 2, 128, 4096, cfg);
  EXPECT_TRUE(ns.ran_resident()) << "a second round of two matrices";
  EXPECT_EQ(ns.streamed_matrices(), 0) << "two matrices after a full round stay on the kernel";
}

// A batch two rounds and three matrices long with the tail on the streamed kernel: the resident
// kernel's matrices are bit for bit its results without a tail, the last three bit for bit what
// the streamed kernel gives those three alone, eager, captured and replayed.
TEST(StreamedTail, RunsBesideTheKernelWithEachOnesBits) {
  MUONCHECK_REQUIRE_GPU();
  constexpr int64_t m = 128, n = 1024;
  const int c = resident_active_clusters(n);
  ASSERT_GT(c, 0) << "the resident kernel does not launch on this device";
  ASSERT_GE(streamed_beside_capacity(n), 3) << "no room beside the resident kernel on this device";
  const int batch = 2 * c + 3;
  const NsConfig cfg = ns_test_config(NsMethod::standard, DType::bf16, nullptr);
  const int64_t count = batch * m * n, tail_count = 3 * m * n;
  const std::vector<float> x = values(count, 78);
  Device dev;
  DeviceBuffer dx;
  dx.reserve(2 * static_cast<size_t>(count));
  auto run = [&](NsOptions o, int* streamed = nullptr) {
    NsDevice ns(nullptr, dev.stream, o);
    std::vector<float> out;
    for (int r = 0; r < 3; ++r) {   // eager, captured, replayed: each the same bits
      dev.upload(DType::bf16, x, dx.get());
      std::vector<float> got = dev.download(DType::bf16, ns.run(dx.get(), batch, m, n, cfg), count);
      if (r > 0) {
        EXPECT_EQ(std::memcmp(got.data(), out.data(), sizeof(float) * count), 0) << "run " << r;
      }
      out = std::move(got);
    }
    if (streamed != nullptr) *streamed = ns.streamed_matrices();
    return out;
  };
  int streamed = -1;
  const std::vector<float> both = run(resident(R::always, true), &streamed);
  const std::vector<float> kernel = run(resident(R::always, false));
  const std::vector<float> last(x.end() - tail_count, x.end());
  dev.upload(DType::bf16, last, dx.get());
  DeviceBuffer scratch;
  scratch.reserve(streamed_scratch_bytes(3, false, n));
  streamed_standard(dx.get(), 3, m, n, cfg, scratch.get(), false, dev.stream);
  const std::vector<float> alone = dev.download(DType::bf16, dx.get(), tail_count);
  EXPECT_EQ(streamed, 3);
  EXPECT_EQ(std::memcmp(both.data(), kernel.data(), sizeof(float) * (count - tail_count)), 0) << "the kernel's matrices";
  EXPECT_EQ(std::memcmp(both.data() + (count - tail_count), alone.data(), sizeof(float) * tail_count), 0)
      << "the streamed kernel's matrices";
  EXPECT_NE(std::memcmp(both.data() + (count - tail_count), kernel.data() + (count - tail_count), sizeof(float) * tail_count), 0)
      << "the tail ran on the resident kernel";
}

// The streamed kernel alone on the resident kernel's shapes (ragged rows and columns, a square
// matrix, a per-iteration schedule, rounds of a grid smaller than the batch): in the conformance
// band of the CPU NS, the same bits twice.
struct StreamedCase {
  const char* name;
  int batch;
  int64_t m, n;
  DType dtype;
  bool beside;   // the grid sized for the room beside the resident kernel (6 clusters on the H200)
  const char* schedule = nullptr;
};
class StreamedNsTest : public ::testing::TestWithParam<StreamedCase> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};
TEST_P(StreamedNsTest, StaysInTheConformanceBandWithTheSameBitsEachRun) {
  const StreamedCase c = GetParam();
  const NsConfig cfg = ns_test_config(NsMethod::standard, c.dtype, c.schedule);
  ASSERT_TRUE(streamed_fits(c.m, c.n, cfg)) << c.name << ": the streamed kernel does not run here";
  NsConfig ref_cfg = cfg;
  ref_cfg.dtype = DType::fp32;
  const int64_t count = c.batch * c.m * c.n;
  const std::vector<float> x = values(count, static_cast<uint32_t>(c.m * 17 + c.n));
  Device dev;
  DeviceBuffer dx, scratch;
  dx.reserve(static_cast<size_t>(dtype_bytes(c.dtype)) * count);
  scratch.reserve(streamed_scratch_bytes(c.batch, c.beside, c.n));
  std::vector<std::vector<float>> runs;
  for (int r = 0; r < 2; ++r) {
    dev.upload(c.dtype, x, dx.get());
    streamed_standard(dx.get(), c.batch, c.m, c.n, cfg, scratch.get(), c.beside, dev.stream);
    runs.push_back(dev.download(c.dtype, dx.get(), count));
  }
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), sizeof(float) * count), 0) << c.name << ": runs differ";
  const std::vector<float> ref = cpu_ns(x, c.batch, c.m, c.n, ref_cfg), on_cpu = cpu_ns(x, c.batch, c.m, c.n, cfg);
  const double e_cpu = relative_error(on_cpu, ref), e_gpu = relative_error(runs[0], ref);
  const double band = 4 * e_cpu + 8 * unit_roundoff(c.dtype);
  EXPECT_LE(e_gpu, band) << c.name << ": err(streamed) " << e_gpu << ", err(cpu) " << e_cpu;
}
INSTANTIATE_TEST_SUITE_P(
    Shapes, StreamedNsTest,
    ::testing::Values(StreamedCase{"per_head_bf16", 3, 128, 1024, DType::bf16, false},
                      StreamedCase{"full_width_fp16", 2, 128, 4096, DType::fp16, false},
                      StreamedCase{"ragged_bf16", 2, 37, 304, DType::bf16, false},
                      StreamedCase{"square_fp16", 2, 96, 96, DType::fp16, false},
                      StreamedCase{"polar_express_bf16", 4, 64, 512, DType::bf16, false, "polar_express"},
                      StreamedCase{"rounds_beside_bf16", 7, 128, 4096, DType::bf16, true}),
    [](const auto& info) { return std::string(info.param.name); });

// The resident and streamed kernels' normalization alone (0 iterations): their Σx² takes |x| by bit
// moves, which would turn an infinity or NaN into a finite value; the thread that meets one sums
// through the conversion instead (the streamed kernel: contributes +∞ or NaN). So each kernel gives
// what the GEMM path's normalize gives (the same bits, or
// NaN where it has NaN), with an infinity or a NaN in a matrix, subnormals and zeros in another.
TEST(ResidentNormalization, CarriesInfinitiesAndNansIntoTheNormAsTheGemmPathDoes) {
  MUONCHECK_REQUIRE_GPU();
  ASSERT_GT(resident_active_clusters(1024), 0) << "the resident kernel does not launch on this device";
  constexpr int batch = 2;
  constexpr int64_t m = 128, n = 1024, count = batch * m * n;
  for (DType t : {DType::bf16, DType::fp16})
    for (float special : {INFINITY, NAN, 0.0f}) {
      std::vector<float> x = values(count, 5);
      x[77] = special;                                                   // matrix 0
      for (int64_t i = m * n; i < m * n + 512; ++i) x[i] = i % 3 == 0 ? 0.0f : (t == DType::bf16 ? 1e-39f : 3e-6f);   // matrix 1: zeros, subnormals
      NsConfig cfg = ns_test_config(NsMethod::standard, t, nullptr);
      cfg.steps = 0;
      Device dev;
      DeviceBuffer dx;
      dx.reserve(2 * static_cast<size_t>(count));
      auto run = [&](R r) {
        NsOptions o = resident(r);
        o.graphs = false;
        NsDevice ns(nullptr, dev.stream, o);
        dev.upload(t, x, dx.get());
        std::vector<float> out = dev.download(t, ns.run(dx.get(), batch, m, n, cfg), count);
        EXPECT_EQ(ns.ran_resident(), r == R::always);
        return out;
      };
      const std::vector<float> gemms = run(R::never);
      DeviceBuffer scratch;
      scratch.reserve(streamed_scratch_bytes(batch, false, n));
      dev.upload(t, x, dx.get());
      streamed_standard(dx.get(), batch, m, n, cfg, scratch.get(), false, dev.stream);
      const std::vector<float> streamed = dev.download(t, dx.get(), count);
      for (const auto& [name, kernel] : {std::pair{"resident", run(R::always)}, std::pair{"streamed", streamed}}) {
        int64_t differ = 0, nans = 0;
        for (int64_t i = 0; i < count; ++i) {
          nans += std::isnan(kernel[i]);
          differ += !(std::isnan(kernel[i]) && std::isnan(gemms[i])) && std::memcmp(&kernel[i], &gemms[i], sizeof(float)) != 0;
        }
        EXPECT_EQ(differ, 0) << name << ", " << dtype_name(t) << " with " << special << " at [77]";
        if (!std::isfinite(special)) {
          EXPECT_GT(nans, 0) << name << ", " << dtype_name(t) << ": " << special << " left no NaN behind";
        }
      }
    }
}

}  // namespace
}  // namespace muoncheck::impl::cuda
