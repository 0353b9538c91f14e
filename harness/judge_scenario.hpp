// Judges one scenario: runs the implementation, the oracle and the control (and
// the variants the relational invariants need), then every applicable SPEC §6
// invariant. Flags choose which invariants run; they never change the math.
#pragma once
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "harness/scenario_result.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

enum class CheckMode { trajectory, stepwise, both };

struct JudgeOptions {
  std::vector<std::string> faults;
  CheckMode mode = CheckMode::both;
  oracle::Precision precision = oracle::Precision::float128;
  std::set<std::string> only;          // empty: every invariant
  std::chrono::milliseconds timeout{60000};
};

ScenarioResult judge_scenario(const Scenario& s, const JudgeOptions& opts);

}  // namespace muoncheck
