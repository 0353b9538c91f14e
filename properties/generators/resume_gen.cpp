#include "properties/generators/resume_gen.hpp"

#include <vector>

#include "properties/generators/choice.hpp"
#include "properties/generators/model_gen.hpp"

namespace muoncheck::generators {

rc::Gen<LrSchedule> lr_schedule(int steps) {
  return rc::gen::exec([steps] {
    LrSchedule sch;
    sch.shape = *weighted<LrShape>({{30, LrShape::constant}, {35, LrShape::linear_warmup}, {35, LrShape::cosine}});
    if (sch.shape == LrShape::linear_warmup) sch.warmup_steps = *int_range(2, steps + 2);
    if (sch.shape == LrShape::cosine) {
      sch.warmup_steps = *int_range(0, steps - 1);
      sch.total_steps = sch.warmup_steps + *int_range(1, steps + 1);
      sch.min_ratio = *weighted<double>({{50, 0.0}, {50, 0.1}});
    }
    return sch;
  });
}

void add_schedules(Scenario& s, const Focus& f) {
  if (!f.schedule && !*chance(15)) return;
  s.optimizer.lr_schedule = *lr_schedule(s.steps);
  if (!f.schedule) return;
  if (s.optimizer.groups.empty()) s.optimizer.groups.push_back(ParamGroup{s.model.params.front().name, 1.0, {}, {}});
  ParamGroup& g = s.optimizer.groups.front();
  if (g.lr_scale == 0.0) g.lr_scale = 0.5;
  // Factor 1 at step 0 (constant) against a warmup (< 1 at step 0), or the other way round.
  const bool warm = lr_factor(s.optimizer.lr_schedule, 0) == 1.0;
  g.lr_schedule = warm ? LrSchedule{LrShape::linear_warmup, *int_range(2, 4), 0, 0.0, {}} : LrSchedule{};
}

rc::Gen<std::optional<CheckpointConfig>> checkpoint(const Scenario& s, const Focus& f) {
  return rc::gen::exec([s, f]() -> std::optional<CheckpointConfig> {
    if (s.steps < 2 || (!f.checkpoint && !*chance(10))) return std::nullopt;
    CheckpointConfig c;
    c.save_after_step = *int_range(0, s.steps - 2);
    bool pinned = false;
    for (const auto& inj : s.overflow) pinned = pinned || inj.step > c.save_after_step;
    // The general generator resumes where it saved (a bit-identical continuation); the
    // focus also moves to another dp of the same global batch and to another stage.
    if (!f.checkpoint) return c;
    std::vector<std::pair<int, int>> dps;
    const int batch = s.engine.dp * s.engine.gas;
    for (int d = 1; d <= 8 && !pinned; ++d)
      if (batch % d == 0 && d != s.engine.dp) dps.push_back({10, d});
    if (!dps.empty() && *chance(60)) c.resume.dp = *weighted<int>(dps);
    if (*chance(30)) c.resume.stage = *int_range(0, 3);
    return c;
  });
}

}  // namespace muoncheck::generators
