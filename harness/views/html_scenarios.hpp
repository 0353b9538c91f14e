// The scenarios of a report as the HTML page shows them, for a person who reads it at a glance:
// an index (one row per scenario: its verdict counts, worst ratio metric/threshold, sensitivity,
// golden check and a link to its section), failing scenarios first; the console's INSENSITIVE
// and INCONCLUSIVE notes; the failing cases' repro lines; then one section per scenario, failing
// ones open and the others collapsed, each FAIL row linked to the line that reproduces it and
// the noise band drawn under the weight error. Reads only the JSON report.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace muoncheck {

// The part of the page between the run's header and the mutants/sweep sections.
std::string html_scenarios(const nlohmann::json& report);

// The CSS the part above needs (html_report puts it in the page's one <style>).
extern const char* const kScenarioStyle;

// The anchor of a scenario's section, and of the repro line of one of its FAIL verdicts.
std::string scenario_anchor(const std::string& scenario);
std::string repro_anchor(const std::string& scenario, const std::string& invariant);

}  // namespace muoncheck
