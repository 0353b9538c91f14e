#include "harness/external/resolved_scenario.hpp"

#include "core/scenario_io.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

namespace {

// Every parameter of the schedule, whatever its shape (the canonical scenario writes only those
// its shape has), so a reader needs no defaults.
nlohmann::json full_schedule(const LrSchedule& sch) {
  return {{"shape", to_string(sch.shape)}, {"warmup_steps", sch.warmup_steps},
          {"total_steps", sch.total_steps}, {"min_ratio", sch.min_ratio}, {"factors", sch.factors}};
}

// The fields the canonical scenario leaves out at their defaults (scenario_to_json keeps every
// earlier scenario's hash), written here always: the checkpoint with its resume engine resolved.
nlohmann::json checkpoint_json(const Scenario& s) {
  if (!s.checkpoint) return nullptr;
  const EngineConfig after = resume_engine(s);
  return {{"save_after_step", s.checkpoint->save_after_step},
          {"resume", {{"dp", after.dp}, {"stage", after.stage}, {"gas", after.gas}, {"zero_init", after.zero_init}}}};
}

}  // namespace

nlohmann::json resolved_scenario_json(const Scenario& s) {
  const auto tags = oracle::tag_params(s, false);
  nlohmann::json params = nlohmann::json::array();
  for (size_t i = 0; i < s.model.params.size(); ++i) {
    const auto& p = s.model.params[i];
    const auto view = matrix_view(p.shape);
    params.push_back({{"index", i}, {"name", p.name}, {"shape", p.shape}, {"rows", view.rows},
                      {"cols", view.cols}, {"num_heads", p.num_heads ? *p.num_heads : 0},
                      {"use_muon", tags[i].use_muon}, {"tag_heads", tags[i].num_heads},
                      {"lr_scale", lr_scale_for(s, p.name)}, {"weight_decay", weight_decay_for(s, p.name)},
                      {"lr_schedule", full_schedule(lr_schedule_for(s, p.name))}});
  }
  const auto& e = s.engine;
  return {{"format", kResolvedScenarioFormat},
          {"hash", scenario_hash(s)},
          {"scenario", scenario_to_json(s)},
          {"params", params},
          {"global_batch", static_cast<int64_t>(e.dp) * e.gas * e.micro_batch},
          {"engine_path", {{"offload_optimizer", to_string(e.offload_optimizer)}, {"compile", e.compile}}},
          {"lr_schedule", full_schedule(s.optimizer.lr_schedule)},
          {"ns_coefficients", ns_iterations_json(s.optimizer)},
          {"checkpoint", checkpoint_json(s)}};
}

}  // namespace muoncheck
