// The one scenario generator the sweep and the property tests share: a model, an
// overflow pattern, 1–4 steps, an engine, an optimizer, a loss scaler and
// injections, composed so every choice can shrink. Every generated scenario is a
// valid scenario file: it round-trips through parse_scenario(scenario_to_json(s)).
#pragma once
#include <iosfwd>
#include <string>

#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::generators {

rc::Gen<Scenario> scenario(const Focus& f = {});

// Throws Error{Internal} naming the first difference when `s` does not survive
// scenario_to_json → parse_scenario → scenario_to_json unchanged.
void check_round_trip(const Scenario& s);

// The size of a scenario as the sweep reports it.
struct ScenarioSize {
  int params = 0, steps = 0, dp = 0, gas = 0;
  int64_t elements = 0;
};
ScenarioSize size_of(const Scenario& s);
std::string describe(const ScenarioSize& z);   // "3 params (120 elements), 2 steps, dp 2, gas 1"

}  // namespace muoncheck::generators

namespace muoncheck {
// How RapidCheck prints a Scenario in a counterexample: its JSON.
void showValue(const Scenario& s, std::ostream& os);
}  // namespace muoncheck
