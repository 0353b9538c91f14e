// The outcome of judging one invariant on one scenario: a status, the metric
// beside its threshold (pass when metric ≤ threshold), the worst case as data (WorstCase) and a
// message rendered from it. Exact invariants use counts (threshold 0). INCONCLUSIVE: a numeric
// verdict whose question has no answer at the scenario's precision (properties/determinacy.hpp);
// neither OK nor FAIL, and not executed.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace muoncheck {

enum class Status { pass, fail, unsupported, skipped, inconclusive };
std::string status_name(Status s);   // PASS, FAIL, UNSUPPORTED, SKIPPED, INCONCLUSIVE

// Where a verdict's worst case lies and how large it is: the data its message is rendered from
// (worst_case_text), so a reader of the report and the sweep's grouping of failures into defects
// read the same facts and never parse the prose.
struct WorstCase {
  // band: a tensor against the exact one (error: the implementation's, band: the control
  // ensemble's error the band is set from); count: `error` of `tensor` counted where `band` were
  // expected; difference: two runs' weights (`compared`: "RUN A vs RUN B"; error: their relative
  // difference, band: its band).
  enum class Measure { band, count, difference };
  Measure measure = Measure::band;
  int step = -1;         // -1: not one step
  std::string param;     // "": not one param
  std::string tensor;    // weight, momentum, adam_m, adam_v (and how the implementation lacked it); what a count counted
  double error = NAN;
  double band = NAN;
  std::string note;      // count: what qualifies it ("skipped step")
  std::string compared;  // difference: the two runs, "stage 0, dp 1 ... vs stage 1, dp 1 ..."
  std::string kind;      // difference: what differs between the runs in short ("stage 0 vs stage 1")
};

// "step 3 param NAME momentum" (band), "step 3 param NAME" (count, difference).
std::string where_text(const WorstCase& w);
// The part of a message a worst case renders: "step 3 param NAME momentum: error 0.5 vs control
// ensemble 0.01"; "step 0 param q: 1 NS calls, expected 0 (skipped step)"; "A vs B: worst relative
// weight difference 0.2 (band 0.01) at step 1 param w".
std::string worst_case_text(const WorstCase& w);

struct Verdict {
  std::string invariant;    // invariant id, e.g. "ns-once-per-matrix-per-step"
  Status status = Status::skipped;
  double metric = 0.0;
  double threshold = 0.0;
  std::string message;
  std::optional<WorstCase> worst;   // set where the verdict locates a worst case
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
  // A relation that failed because a partner run (a gas/dp/stage re-split) crashed in the
  // implementation: an ERROR carried by the relation, never a PASS of the partners that did run.
  // A sweep counts that crash apart (partner_errors) and does not blame this case for it.
  bool partner_crashed = false;

  static Verdict judge(std::string invariant, double metric, double threshold, std::string message);
  static Verdict skip(std::string invariant, std::string why);
  static Verdict unsupported(std::string invariant, std::string why);
  // A judged verdict whose message is `before` + worst_case_text(worst) + `after`.
  static Verdict located(std::string invariant, double metric, double threshold, WorstCase worst,
                         const std::string& before = "", const std::string& after = "");
};

// Why a verdict's message does not say what its worst-case record holds; "" when it does (or it
// has none). judge_observation checks every verdict with it.
std::string worst_case_disagreement(const Verdict& v);

}  // namespace muoncheck
