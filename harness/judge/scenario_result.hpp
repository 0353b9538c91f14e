// What judging one scenario produced: verdicts per invariant, a per-step record
// (loss, skip, scale, NS calls, traffic by collective kind, error against the
// oracle beside the control's), and the repro line of every failure. The JSON
// report and the console table are two views of these records.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/trajectory.hpp"
#include "impl/comm/collective_bandwidth.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

struct StepReport {
  int step = 0;
  double loss = 0.0;
  bool skipped = false;
  double scale = 1.0;
  int ns_calls = 0;
  // Training traffic of the step (state export for checks excluded): the logical size of each
  // collective (nccl-tests' "size"), counted once per collective, by kind and by purpose.
  std::map<std::string, long long> bytes_by_kind;
  std::map<std::string, long long> bytes_by_purpose;
  double error_vs_oracle = 0.0;                     // worst relative error of impl weights
  double control_error = 0.0;                       // the control's at the same place
  double seconds = -1.0;                            // wall time of the step's training work (-1: unknown)
  double exact_loss = 0.0;                          // the exact trajectory's loss at the same step
};

// Why a scenario could not be judged at all: a collective failed or mismatched in some rank,
// a timeout, or a broken invariant of muoncheck. The run goes on with the next scenario.
struct ScenarioError {
  ErrorKind kind = ErrorKind::Infrastructure;
  std::string message;
};

struct ScenarioResult {
  std::string scenario;
  std::string source;
  std::string scenario_hash;
  std::vector<std::string> faults;
  std::vector<Verdict> verdicts;
  std::vector<StepReport> steps;
  double wall_seconds = 0.0;
  int ranks = 0;                                    // dp of the run judged (0: no impl run)
  std::map<std::string, impl::Bandwidth> timing_by_purpose;   // rank 0's, by purpose: muon_gather, muon_exchange
  // The argument vector that judges this scenario again as this run did, built once when it is
  // judged: `muoncheck run SOURCE --fault F... FLAGS` (run_repro), or `verify`'s own. Every repro
  // line of the scenario is this vector, with `--invariant ID` for a failed invariant.
  std::vector<std::string> repro;
  std::optional<ScenarioError> error;   // set: no verdicts, the scenario is reported as an error
  std::string inconclusive_cause;        // what an INCONCLUSIVE verdict's NOTE names as the cause (determinacy.hpp)
};

struct GoldenResult {
  std::string scenario;
  bool ok = false;
  double worst_relative = 0.0;
  std::string message;
};

// A report step from a trajectory step: loss, skip, scale and NS calls (traffic and
// errors are filled by the caller, which has them).
StepReport step_report_of(const StepRecord& st, int step);

// The scenario's sensitivity: how large a change of one step's update (relative to
// ‖ΔW*‖) the weight band may hide — step-conforms's figure, else trajectory-conforms's;
// negative when neither ran. Above kInsensitiveAbove the console flags the scenario.
inline constexpr double kInsensitiveAbove = 0.10;
double scenario_sensitivity(const ScenarioResult& r, std::string* where = nullptr);

// The NOTE a scenario with INCONCLUSIVE verdicts gets: which ones, and the cause; empty without.
std::string inconclusive_note(const ScenarioResult& r);

// `muoncheck run SOURCE`, each fault as `--fault F`, then `flags` (JudgeOptions::run_flags).
std::vector<std::string> run_repro(const std::string& source, const std::vector<std::string>& faults,
                                   const std::vector<std::string>& flags);

// The scenario's repro vector as one line; with an invariant, the line that reproduces that verdict.
std::string repro_line(const ScenarioResult& r);
std::string repro_line(const ScenarioResult& r, const std::string& invariant);

// Every line that shows a scenario's problem again: one per failed invariant, else its error's,
// else, when it executed nothing, its first invariant's (the console and the report print these).
std::vector<std::string> failing_lines(const ScenarioResult& r);

}  // namespace muoncheck
