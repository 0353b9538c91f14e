#include "properties/generators/overflow_gen.hpp"

#include "properties/generators/choice.hpp"

namespace muoncheck::generators {

namespace {

// Inside gen::exec: one injection at (step, micro_step, rank) into a random element.
OverflowInjection inject_at(const Scenario& s, int step, int micro_step, int rank) {
  OverflowInjection inj;
  inj.step = step, inj.micro_step = micro_step, inj.rank = rank;
  const int p = *int_range(0, static_cast<int>(s.model.params.size()) - 1);
  inj.param = s.model.params[static_cast<size_t>(p)].name;
  inj.index = *range(0, element_count(s.model.params[static_cast<size_t>(p)].shape) - 1);
  inj.value = *weighted<OverflowValue>({{70, OverflowValue::inf}, {30, OverflowValue::nan}});
  return inj;
}

}  // namespace

std::string to_string(OverflowPattern p) {
  switch (p) {
    case OverflowPattern::none: return "none";
    case OverflowPattern::one_rank_one_micro_step: return "one-rank-one-micro-step";
    case OverflowPattern::every_micro_step_of_a_step: return "every-micro-step-of-a-step";
    case OverflowPattern::consecutive_steps: return "consecutive-steps";
    case OverflowPattern::natural_fp16: return "natural-fp16";
  }
  return "?";
}

rc::Gen<OverflowPattern> overflow_pattern(const Focus& f) {
  return weighted<OverflowPattern>({{f.injection ? 0 : 65, OverflowPattern::none},
                                    {10, OverflowPattern::one_rank_one_micro_step},
                                    {8, OverflowPattern::every_micro_step_of_a_step},
                                    {8, OverflowPattern::consecutive_steps},
                                    {f.injection ? 0 : 9, OverflowPattern::natural_fp16}});
}

int min_steps(OverflowPattern p, const Focus& f) {
  if (f.scaler_growth) return 3;
  return p == OverflowPattern::consecutive_steps ? 2 : 1;
}

rc::Gen<LossScalerConfig> loss_scaler(OverflowPattern p, const Focus& f) {
  return rc::gen::exec([p, f] {
    LossScalerConfig c;
    if (p == OverflowPattern::natural_fp16) {
      c.type = ScalerType::dynamic;
      c.initial_scale_power = *int_range(14, 24);
      c.hysteresis = *int_range(1, 2);
      c.scale_window = *weighted<int>({{50, 1000}, {25, 1}, {25, 2}});
      return c;
    }
    const bool hysteresis_matters = p == OverflowPattern::consecutive_steps || f.scaler_growth;
    c.type = hysteresis_matters ? ScalerType::dynamic
             : f.loss_scaler    ? *weighted<ScalerType>({{50, ScalerType::static_scale}, {50, ScalerType::dynamic}})
                                : *weighted<ScalerType>({{60, ScalerType::none}, {15, ScalerType::static_scale}, {25, ScalerType::dynamic}});
    if (c.type == ScalerType::none) return c;
    c.initial_scale_power = *int_range(f.loss_scaler ? 1 : 0, c.type == ScalerType::static_scale ? 12 : 16);
    c.scale_window = *weighted<int>({{f.scaler_growth ? 0 : 40, 1000}, {30, 1}, {30, 2}});
    c.hysteresis = *weighted<int>({{40, 2}, {f.scaler_growth ? 0 : 40, 1}, {20, 3}});
    c.min_scale = *weighted<double>({{80, 1.0}, {20, 0.25}});
    return c;
  });
}

rc::Gen<std::vector<OverflowInjection>> injections(OverflowPattern p, const Scenario& s) {
  return rc::gen::exec([p, s] {
    std::vector<OverflowInjection> out;
    const int dp = s.engine.dp, gas = s.engine.gas, steps = s.steps;
    switch (p) {
      case OverflowPattern::none:
      case OverflowPattern::natural_fp16: break;
      case OverflowPattern::one_rank_one_micro_step:
        out.push_back(inject_at(s, *int_range(0, steps - 1), *int_range(0, gas - 1), *int_range(0, dp - 1)));
        break;
      case OverflowPattern::every_micro_step_of_a_step: {
        const int t = *int_range(0, steps - 1);
        for (int k = 0; k < gas; ++k) out.push_back(inject_at(s, t, k, *int_range(0, dp - 1)));
        break;
      }
      case OverflowPattern::consecutive_steps: {
        const int first = *int_range(0, steps - 2);
        const int last = *int_range(first + 1, std::min(steps - 1, first + 2));
        for (int t = first; t <= last; ++t)
          out.push_back(inject_at(s, t, *int_range(0, gas - 1), *int_range(0, dp - 1)));
        break;
      }
    }
    return out;
  });
}

}  // namespace muoncheck::generators
