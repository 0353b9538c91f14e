// Named Newton–Schulz coefficient schedules: per-iteration (a, b, c) lists that other Muon
// implementations ship, by the names their users know, with the numbers exactly as published
// (the sources are in docs/scenario-format.md, "Newton–Schulz coefficient schedules"). A scenario
// names one as `optimizer.ns_coefficients: "NAME"`; its length is the iteration count it was designed for.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck {

struct NsSchedule {
  std::string name;
  std::string source;                         // where the numbers are published, one line
  std::vector<NsCoefficients> coefficients;   // one triple per iteration
};

const std::vector<NsSchedule>& ns_schedules();
const NsSchedule* find_ns_schedule(const std::string& name);   // nullptr when unknown
std::string ns_schedule_names();                                // "\"quintic\", ..." for messages

}  // namespace muoncheck
