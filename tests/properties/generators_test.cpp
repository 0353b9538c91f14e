// Properties of the generators themselves: every scenario is a valid, supported
// scenario file, small enough for a sweep, with head counts that divide their rows;
// and each fault's focus really narrows the space to that fault's code path.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "impl/faults/faults.hpp"
#include "impl/run_impl.hpp"
#include "properties/generators/model_gen.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {
namespace {

using generators::Focus;

RC_GTEST_PROP(Generators, produceScenariosThatRoundTripThroughTheLoader, ()) {
  const Scenario s = *generators::scenario();
  generators::check_round_trip(s);     // throws (and so fails) with the JSON diff
  impl::check_supported(s, {});        // and the implementation accepts it
}

RC_GTEST_PROP(Generators, keepEveryScenarioSmall, ()) {
  const Scenario s = *generators::scenario();
  RC_ASSERT(s.steps >= 1 && s.steps <= 4);
  RC_ASSERT(s.engine.dp >= 1 && s.engine.dp <= 8);
  RC_ASSERT(s.engine.gas >= 1 && s.engine.gas <= 8);
  RC_ASSERT(s.model.params.size() <= 12u);
  for (const auto& p : s.model.params) {
    RC_ASSERT(p.shape.size() >= 1u && p.shape.size() <= 4u);
    const auto v = matrix_view(p.shape);
    RC_ASSERT(v.rows <= 48 && v.cols <= 48);
  }
}

RC_GTEST_PROP(Generators, giveHeadCountsThatDivideTheRows, ()) {
  const Scenario s = *generators::scenario();
  for (const auto& p : s.model.params)
    if (p.num_heads) RC_ASSERT(matrix_view(p.shape).rows % *p.num_heads == 0);
}

bool has_scale(const Scenario& s) { return s.loss_scaler.type != ScalerType::none && s.loss_scaler.initial_scale_power > 0; }

RC_GTEST_PROP(Generators, honourEveryFaultsFocus, ()) {
  const auto& catalogue = impl::fault_catalogue();
  const auto& info = *rc::gen::elementOf(catalogue);
  const Focus f = generators::focus_for_fault(info.id);
  const Scenario s = *generators::scenario(f);
  RC_ASSERT(s.engine.stage >= f.min_stage && s.engine.stage <= f.max_stage);
  RC_ASSERT(s.engine.dp >= f.min_dp);
  RC_ASSERT(s.engine.gas >= f.min_gas);
  if (f.zero_init) RC_ASSERT(s.engine.zero_init);
  if (f.per_head) RC_ASSERT(s.optimizer.per_head);
  if (f.low_precision_comm) RC_ASSERT(s.engine.comm_dtype != DType::fp32);
  if (f.injection) RC_ASSERT(!s.overflow.empty());
  if (f.loss_scaler) RC_ASSERT(has_scale(s));
  if (f.clip) RC_ASSERT(s.optimizer.clip.max_norm > 0 && s.optimizer.clip.mode == ClipMode::raw_grad);
  if (f.ns_schedule) {
    RC_ASSERT(s.optimizer.ns_coefficients.size() > 1u);
    RC_ASSERT(s.optimizer.ns_coefficients.size() == static_cast<size_t>(s.optimizer.ns_steps));
  }
  if (f.groups) {
    RC_ASSERT(!s.optimizer.groups.empty());
    RC_ASSERT(s.optimizer.groups.front().lr_scale != 1.0);
  }
  if (f.small_buckets) {
    int64_t largest_muon = 0;
    for (const auto& p : s.model.params)
      if (generators::is_muon_param(p)) largest_muon = std::max(largest_muon, element_count(p.shape));
    RC_PRE(largest_muon > 1);   // a model of 1-element Muon params has no smaller bucket
    RC_ASSERT(s.engine.reduce_bucket_size < largest_muon);
  }
  if (f.mixed_shapes) {
    std::vector<int64_t> sizes;
    for (const auto& p : s.model.params)
      if (generators::is_muon_param(p)) sizes.push_back(element_count(p.shape));
    RC_ASSERT(std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end());
  }
}

TEST(Generators, refuseAFocusForAnUnknownFault) {
  EXPECT_THROW(generators::focus_for_fault("no-such-fault"), Error);
}

}  // namespace
}  // namespace muoncheck
