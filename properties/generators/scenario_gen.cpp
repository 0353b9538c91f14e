#include "properties/generators/scenario_gen.hpp"

#include <ostream>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "properties/generators/choice.hpp"
#include "properties/generators/config_gen.hpp"
#include "properties/generators/model_gen.hpp"
#include "properties/generators/overflow_gen.hpp"
#include "properties/generators/resume_gen.hpp"

namespace muoncheck::generators {

rc::Gen<Scenario> scenario(const Focus& f) {
  return rc::gen::exec([f] {
    Scenario s;
    s.name = "generated";
    s.source = "<generated>";
    s.model = *model(f);
    const OverflowPattern pattern = *overflow_pattern(f);
    s.steps = *weighted<int>({{20, 1}, {35, 2}, {30, 3}, {15, 4}}) ;
    s.steps = std::max(s.steps, min_steps(pattern, f));
    s.engine = *engine(s.model, f, pattern == OverflowPattern::natural_fp16);
    s.optimizer = *optimizer(s.model, f);
    s.loss_scaler = *loss_scaler(pattern, f);
    s.overflow = *injections(pattern, s);
    s.seed = static_cast<uint64_t>(*range(0, 9999));
    add_schedules(s, f);   // drawn last: the fields above keep the values they had before schedules existed
    s.checkpoint = *checkpoint(s, f);
    s.description = "generated (focus " + f.label + ", overflow " + to_string(pattern) + ")";
    return s;
  });
}

void check_round_trip(const Scenario& s) {
  const nlohmann::json once = scenario_to_json(s);
  const nlohmann::json twice = scenario_to_json(parse_scenario(once, "<round-trip of " + s.name + ">"));
  if (once == twice) return;
  const nlohmann::json diff = nlohmann::json::diff(once, twice);
  throw Error(ErrorKind::Internal, "scenario " + s.name + " does not round-trip through the loader: " + diff.dump());
}

ScenarioSize size_of(const Scenario& s) {
  return {static_cast<int>(s.model.params.size()), s.steps, s.engine.dp, s.engine.gas, total_elements(s.model)};
}

std::string describe(const ScenarioSize& z) {
  return std::to_string(z.params) + " params (" + std::to_string(z.elements) + " elements), " +
         std::to_string(z.steps) + " steps, dp " + std::to_string(z.dp) + ", gas " + std::to_string(z.gas);
}

}  // namespace muoncheck::generators

namespace muoncheck {
void showValue(const Scenario& s, std::ostream& os) { os << scenario_to_json(s).dump(); }
}  // namespace muoncheck
