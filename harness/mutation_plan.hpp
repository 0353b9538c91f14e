// Which scenarios exercise each fault's code path, and which invariants name its
// real symptom. `muoncheck mutants` runs each fault only on its scenarios (so the
// whole catalogue stays cheap) and requires a kill by a symptom invariant.
#pragma once
#include <string>
#include <vector>

namespace muoncheck {

struct FaultPlan {
  std::string fault;                    // catalogue id
  std::vector<std::string> scenarios;   // names in scenarios/
  std::vector<std::string> symptoms;    // invariants that name the bug's real symptom
  std::string why;                      // one line: why these scenarios reach the path
};

const std::vector<FaultPlan>& mutation_plan();
const FaultPlan* plan_for(const std::string& fault);

}  // namespace muoncheck
