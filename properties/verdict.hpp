// The outcome of judging one invariant on one scenario: a status, the metric
// beside its threshold (pass when metric ≤ threshold), and a message that
// locates the worst case. Exact invariants use counts (threshold 0). INCONCLUSIVE: a numeric
// verdict whose question has no answer at the scenario's precision (properties/determinacy.hpp);
// neither OK nor FAIL, and not executed.
#pragma once
#include <string>
#include <vector>

namespace muoncheck {

enum class Status { pass, fail, unsupported, skipped, inconclusive };
std::string status_name(Status s);   // PASS, FAIL, UNSUPPORTED, SKIPPED, INCONCLUSIVE

struct Verdict {
  std::string invariant;    // invariant id, e.g. "ns-once-per-matrix-per-step"
  Status status = Status::skipped;
  double metric = 0.0;
  double threshold = 0.0;
  std::string message;
  // Weight-level tolerance verdicts: the band as a fraction of a step's exact update
  // ‖ΔW*‖, worst over steps and params (the smallest relative change of an update that
  // would surely be caught), and where; negative when the verdict has none.
  double sensitivity = -1.0;
  std::string sensitivity_where;
  // Numeric verdicts: the control ensemble's own spread over a step's exact update, worst over
  // steps and weights, and where (determinacy.hpp: at kUndeterminedAt or above the tensor is
  // undetermined); negative when the verdict has none.
  double spread = -1.0;
  std::string spread_where;

  static Verdict judge(std::string invariant, double metric, double threshold, std::string message);
  static Verdict skip(std::string invariant, std::string why);
  static Verdict unsupported(std::string invariant, std::string why);
};

}  // namespace muoncheck
