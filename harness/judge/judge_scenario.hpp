// Judges one scenario: runs the implementation, the oracle and the control ensemble (and
// the variants the relational invariants need), then every applicable row of the
// invariant. Flags choose which invariants run; they never change the math.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "impl/run_impl.hpp"
#include "harness/judge/scenario_result.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "oracle/result_memo.hpp"
#include "properties/observation.hpp"

namespace muoncheck {

enum class CheckMode { trajectory, stepwise, both };

using impl::kDefaultCollectiveTimeout;   // impl/comm/communicator.hpp

struct JudgeOptions {
  std::vector<std::string> faults;
  CheckMode mode = CheckMode::both;
  oracle::Precision precision = oracle::Precision::float128;
  std::set<std::string> only;          // empty: every invariant
  std::chrono::milliseconds timeout = kDefaultCollectiveTimeout;
  impl::ComputeBackend backend = impl::ComputeBackend::cpu;   // --backend: where impl's math runs
  impl::CommBackend comm = impl::CommBackend::gloo;           // --comm: impl's collectives
  impl::NsKernel ns_kernel = impl::NsKernel::by_shape;        // --ns-kernel: a cuda backend's NS path
  int control_members = oracle::kDefaultControlMembers;   // --control-members: the noise ensemble's size
  int dp = 0;    // --dp: re-split each scenario's global batch over this many ranks (0: as written)
  // The flags `muoncheck run` needs to judge a scenario the same way (`--mode stepwise`, ...), taken
  // once from the command line that set these options; every result's repro vector repeats them.
  std::vector<std::string> run_flags;
  // The oracle and control results shared with other judgements (a suite's); null: the
  // judgement keeps its own. Never changes a result, only whether it is computed again.
  std::shared_ptr<oracle::ResultMemo> memo;
  // Called with every run of the implementation the judgement read — the scenario's own first
  // (repeat 0), then each variant and the repeat run (repeat 1) — e.g. to write each as a
  // trace (`run --write-trace`), so `verify` can judge the same runs.
  std::function<void(const Scenario&, const Observation&, int repeat)> on_run;
};

impl::ImplOptions impl_options(const JudgeOptions& o);

// `exact_out`, when given, receives the oracle trajectory the verdicts were judged
// against (so the golden check can reuse a float128 run instead of repeating it).
ScenarioResult judge_scenario(const Scenario& s, const JudgeOptions& opts, Trajectory* exact_out = nullptr);

// judge_scenario for a run of many scenarios: an Infrastructure or Internal error (a failed
// or mismatched collective, a timeout, out of memory) becomes the scenario's `error` and
// the caller goes on with the next one. Bad input and usage errors still propagate.
ScenarioResult judge_scenario_or_error(const Scenario& s, const JudgeOptions& opts, Trajectory* exact_out = nullptr);

}  // namespace muoncheck
