// Attribution for the sweep of our own engine (`muoncheck sweep --fault ID --known-defects FILE`):
// the planted faults are its defects and a registry entry of kind "fault" is the fix that
// switches one off. The counterexample is attributed by counterfactual (attribution.hpp) and, with
// --known-defects, every entry living in our engine is checked on its witness: so the nightly's
// rule (red only on something new) is shown end to end on the CPU with no other implementation.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "harness/sweep/attribution.hpp"
#include "harness/sweep/known_defects.hpp"
#include "harness/sweep/sweep_runner.hpp"

namespace muoncheck {

// The version our engine answers to in a registry's "versions".
inline constexpr const char* kOwnEngineVersion = "muoncheck";

// `s` judged by our engine with o.faults on, less those the fixes switch off; an entry of another
// kind is a fix our engine cannot apply (fix_error names it).
FixRun judge_own_with_fixes(const Scenario& s, const SweepOptions& o, const KnownDefects& registry, const FixSet& fixes);

// Attributes the counterexample (sets its attribution) and, when known_defects_given, checks the
// registry's entries on their witnesses; returns the problems (each names the entry).
std::vector<std::string> attribute_own_sweep(const SweepOptions& o, const KnownDefects& registry, bool known_defects_given,
                                             SweepResult& r);

}  // namespace muoncheck
