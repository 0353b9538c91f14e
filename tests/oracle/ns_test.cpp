// Newton–Schulz properties: Gram ≡ standard in exact arithmetic (to ≥ 25 digits
// in float128), transpose equivariance, zero in → zero out, singular values in
// the quintic's band, per-head = NS per row block, and the three scale rules; with a
// per-iteration schedule: Gram ≡ standard still, iteration i on triple i (a list of equal triples
// is the single triple; a wrong last triple shows), and the iteration count the list gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/datagen.hpp"
#include "core/ns_schedules.hpp"
#include "oracle/muon.hpp"
#include "oracle/newton_schulz.hpp"

namespace muoncheck::oracle {
namespace {

template <class T>
Mat<T> sample(int64_t r, int64_t c, uint64_t seed) {
  Mat<T> m(r, c);
  for (int64_t e = 0; e < m.size(); ++e) m.a[e] = T(data::unit_value(data::hash6(seed, 9, r, c, e, 0)));
  return m;
}

template <class T>
T rel_diff(const Mat<T>& x, const Mat<T>& ref) {
  T d(0);
  for (size_t i = 0; i < x.a.size(); ++i) d += (x.a[i] - ref.a[i]) * (x.a[i] - ref.a[i]);
  return real_sqrt(d) / frobenius(ref);
}

// Eigenvalues of a symmetric matrix by cyclic Jacobi rotations (double).
std::vector<double> sym_eigenvalues(Mat<double> A) {
  const int64_t n = A.rows;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) off += A(i, j) * A(i, j);
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (A(p, q) == 0.0) continue;
        const double theta = (A(q, q) - A(p, p)) / (2 * A(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // A ← Jᵀ A J
          const double akp = A(k, p), akq = A(k, q);
          A(k, p) = c * akp - s * akq;
          A(k, q) = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = A(p, k), aqk = A(q, k);
          A(p, k) = c * apk - s * aqk;
          A(q, k) = s * apk + c * aqk;
        }
      }
  }
  std::vector<double> ev(n);
  for (int64_t i = 0; i < n; ++i) ev[i] = A(i, i);
  std::sort(ev.begin(), ev.end());
  return ev;
}

NsParams params(NsMethod m, int steps = 5) {
  NsParams p;
  p.method = m;
  p.steps = steps;
  return p;
}

TEST(OracleNs, gramEqualsStandardTo25DigitsInFloat128) {
  const ExactArith<f128> ar;
  for (auto [r, c] : {std::pair<int64_t, int64_t>{12, 40}, {40, 12}, {20, 28}})
    for (int steps : {3, 5, 7}) {
      const Mat<f128> U = sample<f128>(r, c, 1);
      const Mat<f128> g = newton_schulz(ar, U, params(NsMethod::gram, steps));
      const Mat<f128> st = newton_schulz(ar, U, params(NsMethod::standard, steps));
      const double digits = -std::log10(to_double(rel_diff(g, st)));
      EXPECT_GE(digits, 25.0) << r << "x" << c << " steps " << steps;
    }
}

NsParams scheduled(NsMethod m, const std::string& name) {
  NsParams p;
  p.method = m;
  p.coefficients = find_ns_schedule(name)->coefficients;
  p.steps = static_cast<int>(p.coefficients.size());
  return p;
}

// Gram's per-iteration form (Q ← Q(aᵢI + Zᵢ), R ← (aᵢI + Zᵢ)R(aᵢI + Zᵢ), the restart at 2) is
// the standard loop's polynomial composition for every named schedule.
TEST(OracleNs, gramEqualsStandardWithEverySchedule) {
  const ExactArith<f128> ar;
  for (const auto& sch : ns_schedules())
    for (auto [r, c] : {std::pair<int64_t, int64_t>{12, 40}, {40, 12}}) {
      const Mat<f128> U = sample<f128>(r, c, 11);
      const Mat<f128> g = newton_schulz(ar, U, scheduled(NsMethod::gram, sch.name));
      const Mat<f128> st = newton_schulz(ar, U, scheduled(NsMethod::standard, sch.name));
      EXPECT_GE(-std::log10(to_double(rel_diff(g, st))), 25.0) << sch.name << " " << r << "x" << c;
    }
}

TEST(OracleNs, iterationIUsesTripleI) {
  const ExactArith<double> ar;
  const Mat<double> U = sample<double>(10, 30, 12);
  for (NsMethod m : {NsMethod::standard, NsMethod::gram}) {
    NsParams same = params(m);
    same.coefficients.assign(5, NsCoefficients{});   // five copies of the default triple
    EXPECT_TRUE(newton_schulz(ar, U, same).a == newton_schulz(ar, U, params(m)).a) << int(m);
    NsParams q = scheduled(m, "quintic"), stale = q;
    stale.coefficients[4] = stale.coefficients[3];
    EXPECT_GT(rel_diff(newton_schulz(ar, U, stale), newton_schulz(ar, U, q)), 1e-3) << int(m);
    // The schedule's own first iteration is not the default triple's.
    NsParams first = q;
    first.steps = 1;
    first.coefficients.resize(1);
    NsParams dflt = params(m, 1);
    EXPECT_GT(rel_diff(newton_schulz(ar, U, first), newton_schulz(ar, U, dflt)), 1e-3) << int(m);
  }
}

// Polar Express ends on (15/8, −10/8, 3/8), the contraction towards σ = 1: after its eight
// iterations the singular values are within 1e-2 of 1, where the default quintic leaves them in
// its [0.6, 1.25] band.
TEST(OracleNs, polarExpressConvergesWhereTheQuinticOscillates) {
  const ExactArith<double> ar;
  const Mat<double> O = newton_schulz(ar, sample<double>(16, 48, 4), scheduled(NsMethod::standard, "polar_express"));
  const std::vector<double> ev = sym_eigenvalues(matmul(O, transpose(O)));
  EXPECT_NEAR(std::sqrt(ev.front()), 1.0, 1e-2);
  EXPECT_NEAR(std::sqrt(ev.back()), 1.0, 1e-2);
}

TEST(OracleNs, aListOfTheWrongLengthIsAnInternalError) {
  NsParams p = scheduled(NsMethod::standard, "quintic");
  p.steps = 4;
  try {
    newton_schulz(ExactArith<double>{}, sample<double>(4, 8, 1), p);
    FAIL() << "5 triples for 4 iterations accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
  }
}

TEST(OracleNs, gramAndStandardDifferOnlyByRoundingInTheControl) {
  const ControlArith ar{DType::fp32, DType::fp32, DType::fp32, DType::fp16};
  const Mat<double> U = sample<double>(16, 48, 2);
  const double d = rel_diff(newton_schulz(ar, U, params(NsMethod::gram)), newton_schulz(ar, U, params(NsMethod::standard)));
  EXPECT_GT(d, 0.0) << "fp16 rounding must leave a trace";
  EXPECT_LT(d, 0.05);
}

TEST(OracleNs, transposeInOutputTransposedOut) {
  const ExactArith<double> ar;
  for (NsMethod m : {NsMethod::standard, NsMethod::gram}) {
    const Mat<double> X = sample<double>(10, 26, 3);
    EXPECT_EQ(newton_schulz(ar, transpose(X), params(m)).a, transpose(newton_schulz(ar, X, params(m))).a);
  }
}

TEST(OracleNs, zeroInZeroOut) {
  const ExactArith<double> ar;
  for (NsMethod m : {NsMethod::standard, NsMethod::gram}) {
    const Mat<double> O = newton_schulz(ar, Mat<double>(8, 20), params(m));
    for (double v : O.a) EXPECT_EQ(v, 0.0);
  }
}

TEST(OracleNs, singularValuesLandInTheQuinticBand) {
  const ExactArith<double> ar;
  for (NsMethod m : {NsMethod::standard, NsMethod::gram}) {
    const Mat<double> O = newton_schulz(ar, sample<double>(16, 48, 4), params(m));
    const std::vector<double> ev = sym_eigenvalues(matmul(O, transpose(O)));  // σ²
    EXPECT_GE(std::sqrt(ev.front()), 0.6) << "method " << int(m);
    EXPECT_LE(std::sqrt(ev.back()), 1.25) << "method " << int(m);
    // An input's own singular values are far from 1 after normalization.
    const Mat<double> U = sample<double>(16, 48, 4);
    const double f = to_double(frobenius(U));
    EXPECT_LT(std::sqrt(sym_eigenvalues(matmul(U, transpose(U))).back()) / f, 0.6);
  }
}

TEST(OracleNs, perHeadIsNsPerRowBlockWithTheBlockScale) {
  const ExactArith<double> ar;
  OptimizerConfig o;
  o.scale_rule = ScaleRule::moonlight;
  const Mat<double> U = sample<double>(12, 8, 5);
  const Mat<double> O = orthogonalized_update(ar, U, 3, o);
  const double scale = 0.2 * std::sqrt(8.0);  // scale(hd = 4, n = 8)
  for (int h = 0; h < 3; ++h) {
    const Mat<double> want = newton_schulz(ar, row_block(U, 4 * h, 4), NsParams::from(o));
    const Mat<double> got = row_block(O, 4 * h, 4);
    for (size_t i = 0; i < want.a.size(); ++i) EXPECT_DOUBLE_EQ(got.a[i], want.a[i] * scale);
  }
  // Split ≠ whole: the heads are orthogonalized independently.
  EXPECT_GT(rel_diff(orthogonalized_update(ar, U, 0, o), O), 1e-3);
}

TEST(OracleNs, scaleRules) {
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::deepspeed, 176, 64), std::sqrt(176.0 / 64.0));
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::deepspeed, 64, 176), 1.0);
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::moonlight, 64, 176), 0.2 * std::sqrt(176.0));
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::spectral, 64, 176), std::sqrt(64.0 / 176.0));
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::max_dim, 64, 176), std::sqrt(176.0));
  EXPECT_DOUBLE_EQ(muon_scale<double>(ScaleRule::max_dim, 176, 64), std::sqrt(176.0));
}

TEST(OracleNs, productsDoNotDependOnTheThreadCount) {
  const Mat<f128> A = sample<f128>(70, 50, 6), B = sample<f128>(50, 64, 7);
  const int before = thread_count();
  set_thread_count(1);
  const Mat<f128> one = matmul(A, B), g1 = gram_matrix(A);
  set_thread_count(2);
  const Mat<f128> two = matmul(A, B), g2 = gram_matrix(A);
  set_thread_count(before);
  EXPECT_TRUE(one.a == two.a);
  EXPECT_TRUE(g1.a == g2.a);
  EXPECT_EQ(to_double(one(3, 5)), [&] {  // spot-check one element against a plain loop
    f128 s(0);
    for (int k = 0; k < 50; ++k) s += A(3, k) * B(k, 5);
    return to_double(s);
  }());
}

}  // namespace
}  // namespace muoncheck::oracle
