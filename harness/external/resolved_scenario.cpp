#include "harness/external/resolved_scenario.hpp"

#include "core/scenario_io.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

nlohmann::json resolved_scenario_json(const Scenario& s) {
  const auto tags = oracle::tag_params(s, false);
  nlohmann::json params = nlohmann::json::array();
  for (size_t i = 0; i < s.model.params.size(); ++i) {
    const auto& p = s.model.params[i];
    const auto view = matrix_view(p.shape);
    params.push_back({{"index", i}, {"name", p.name}, {"shape", p.shape}, {"rows", view.rows},
                      {"cols", view.cols}, {"num_heads", p.num_heads ? *p.num_heads : 0},
                      {"use_muon", tags[i].use_muon}, {"tag_heads", tags[i].num_heads},
                      {"lr_scale", lr_scale_for(s, p.name)}, {"weight_decay", weight_decay_for(s, p.name)}});
  }
  const auto& e = s.engine;
  return {{"format", kResolvedScenarioFormat},
          {"hash", scenario_hash(s)},
          {"scenario", scenario_to_json(s)},
          {"params", params},
          {"global_batch", static_cast<int64_t>(e.dp) * e.gas * e.micro_batch}};
}

}  // namespace muoncheck
