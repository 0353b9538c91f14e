// The control (oracle + dtype rounding) against the exact oracle: its error is
// the rounding noise a correct implementation may show — nonzero, and of the
// order of the dtypes' unit roundoff, growing from fp32 to bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "oracle/control_dot.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "oracle/parallel.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

double rel_err(const std::vector<double>& x, const std::vector<double>& ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    d += (x[i] - ref[i]) * (x[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  return std::sqrt(d) / std::max(std::sqrt(n), 1e-300);
}

// max over params of the relative error of (weight − initial weight), the part
// the optimizer wrote (the initial weights are exact in every dtype); `whole`:
// of the weight itself, the error measure of docs/semantics.md §9.
double update_err(const Trajectory& c, const Trajectory& x, int step, bool whole = false) {
  double worst = 0;
  for (size_t p = 0; p < x.initial.size(); ++p) {
    std::vector<double> dc = c.steps[step].params[p].weight, dx = x.steps[step].params[p].weight;
    for (size_t i = 0; i < dc.size() && !whole; ++i) { dc[i] -= x.initial[p].weight[i]; dx[i] -= x.initial[p].weight[i]; }
    worst = std::max(worst, rel_err(dc, dx));
  }
  return worst;
}

// global_batch 32 ≥ the matrices' 16 columns: G has full rank. (With rank-deficient
// G, 16-bit NS noise in the null space grows ~a^steps to O(1): the control shows it.)
Scenario full_rank(std::string name) {
  Scenario s = testing::small_mixed(std::move(name));
  s.engine.micro_batch = 8;
  return s;
}

TEST(OracleControl, bf16ScenarioShowsSmallNonzeroRoundingNoise) {
  Scenario s = full_rank("control-bf16");
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
  s.optimizer.ns_method = NsMethod::standard;
  s.optimizer.ns_dtype = DType::bf16;
  const Trajectory exact = run_oracle(s, Precision::float128), ctrl = run_control(s);
  EXPECT_EQ(ctrl.producer, "control:seq/fused/norm-ns/bw32/ring-(-1)seg");   // the reference member
  for (int t = 0; t < s.steps; ++t) {
    const double e = update_err(ctrl, exact, t);
    EXPECT_GT(e, 1e-3) << "step " << t << ": bf16 (u = 2^-8) must leave a trace";
    EXPECT_LT(e, 0.1) << "step " << t;
    const double w = update_err(ctrl, exact, t, true);
    EXPECT_GT(w, 0.0);
    EXPECT_LT(w, 1e-2);
    EXPECT_EQ(ctrl.steps[t].ns_calls.size(), exact.steps[t].ns_calls.size());
  }
  // Weights stay fp32 values; gradients of a bf16 model are bf16-rounded sums.
  for (double w : ctrl.steps[2].params[1].weight) EXPECT_EQ(static_cast<double>(static_cast<float>(w)), w);
}

TEST(OracleControl, noiseShrinksWithWiderDtypes) {
  Scenario s = full_rank("control-fp32");
  s.optimizer.ns_method = NsMethod::gram;
  s.optimizer.ns_dtype = DType::fp32;
  const Trajectory exact = run_oracle(s, Precision::float64);
  const double e32 = update_err(run_control(s), exact, s.steps - 1, true);
  s.optimizer.ns_dtype = DType::fp16;
  const double e16 = update_err(run_control(s), exact, s.steps - 1, true);
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
  s.optimizer.ns_dtype = DType::bf16;
  const double ebf = update_err(run_control(s), exact, s.steps - 1, true);
  EXPECT_GT(e32, 0.0);
  EXPECT_LT(e32, 1e-6) << "fp32 everywhere: errors of a few fp32 ulps";
  EXPECT_LT(e32, e16);
  EXPECT_LT(e16, ebf);
}

TEST(ControlEnsemble, MembersAreDistinctValidSequencesAndMemberZeroIsTheReference) {
  const auto members = control_members(kDefaultControlMembers);
  ASSERT_EQ(members.size(), 8u);
  EXPECT_EQ(members[0].label(), RoundingVariant{}.label());   // the CPU implementation's order
  int random = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    random += members[i].random_rounding != 0;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(members[i].label(), members[j].label());
  }
  EXPECT_GT(random, 0) << "some members must use Monte Carlo random rounding";
  EXPECT_LT(random, 8) << "and some must be deterministic orders";
  EXPECT_EQ(control_members(12).size(), 12u);
  EXPECT_THROW(control_members(0), Error);
}

// Every member is an honest sample: close to the exact trajectory (within a few
// times the reference's error), different from the others, and deterministic
// whatever the thread count.
TEST(ControlEnsemble, MembersSpreadAroundTheExactTrajectoryDeterministically) {
  Scenario s = full_rank("ensemble-bf16");
  s.engine.dp = 4;   // ring orders differ from rank order only from dp 3 on
  s.engine.micro_batch = 2;
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
  s.optimizer.ns_dtype = DType::bf16;
  const Trajectory exact = run_oracle(s, Precision::float64);
  set_thread_count(2);
  const auto a = run_control_ensemble(s, kDefaultControlMembers);
  set_thread_count(1);
  const auto b = run_control_ensemble(s, kDefaultControlMembers);
  set_thread_count(2);
  ASSERT_EQ(a.size(), 8u);
  const double reference = update_err(a[0], exact, s.steps - 1, true);
  for (size_t k = 0; k < a.size(); ++k) {
    for (size_t t = 0; t < a[k].steps.size(); ++t)
      for (size_t p = 0; p < a[k].steps[t].params.size(); ++p)
        ASSERT_EQ(a[k].steps[t].params[p].weight, b[k].steps[t].params[p].weight) << "member " << k << " depends on threads";
    const double e = update_err(a[k], exact, s.steps - 1, true);
    EXPECT_GT(e, 0.0) << a[k].producer;
    EXPECT_LT(e, 10 * reference) << a[k].producer << " is not an honest sample";
    for (size_t j = 0; j < k; ++j)
      EXPECT_NE(a[k].steps.back().params[1].weight, a[j].steps.back().params[1].weight)
          << a[k].producer << " and " << a[j].producer << " round identically";
  }
}

// The interleaved kernel forms each product exactly as the one-at-a-time kernel does.
TEST(ControlEnsemble, FourAtATimeProductsAreBitIdenticalToOneAtATime) {
  std::vector<double> a(77), b(4 * 77);
  for (size_t i = 0; i < a.size(); ++i) a[i] = round_to(DType::bf16, std::sin(0.37 * i) / 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = round_to(DType::bf16, std::cos(0.11 * i + 1));
  const double* rows[4] = {&b[0], &b[77], &b[154], &b[231]};
  for (const auto& m : control_members(12)) {
    for (DType out : {DType::fp32, DType::bf16, DType::fp16}) {
      const ControlDot dot{out, m.dot, m.block, m.random_rounding};
      for (int64_t k : {0, 1, 5, 64, 77}) {
        double four[4];
        dot.dot4(a.data(), rows, k, four);
        for (int l = 0; l < 4; ++l) ASSERT_EQ(four[l], dot(a.data(), rows[l], k)) << m.label() << " k " << k << " lane " << l;
      }
    }
  }
}

// A step from a given state: member k's step equals the k-th member run's step from the same state.
TEST(ControlEnsemble, StepsFromAStateMatchTheFreeRuns) {
  Scenario s = full_rank("ensemble-steps");
  s.optimizer.ns_dtype = DType::fp16;
  const auto runs = run_control_ensemble(s, 4);
  TrainingState before{runs[2].steps[0].params, runs[2].steps[0].scaler_after, runs[2].steps[0].good_steps_after};
  for (auto& p : before.params) p.grad.clear();
  const auto steps = control_steps_from(s, 1, before, 4);
  EXPECT_EQ(steps[2].params[1].weight, runs[2].steps[1].params[1].weight);
  EXPECT_NE(steps[1].params[1].weight, runs[2].steps[1].params[1].weight);
}

}  // namespace
}  // namespace muoncheck::oracle
