#include "harness/judge/judge_observation.hpp"

#include <memory>
#include <utility>

#include "core/error.hpp"
#include "properties/numeric_invariants.hpp"

namespace muoncheck {

namespace {

bool shows_all(const Observation& o) {
  return o.shows(ObservedPart::momentum) && o.shows(ObservedPart::adam_moments) && o.shows(ObservedPart::gradients);
}

void fill_steps(ScenarioResult& r, const RunBundle& b) {
  const auto errors = per_step_errors(b);
  // Every rank logs the same collectives with their logical size; count each once (rank 0's log).
  std::map<int, std::map<std::string, long long>> by_kind, by_purpose;
  if (!b.impl.collectives_by_rank.empty())
    for (const auto& c : b.impl.collectives_by_rank.front())
      if (c.purpose != impl::Purpose::state_export) {
        by_kind[c.step][impl::collective_name(c.kind)] += c.bytes;
        by_purpose[c.step][impl::purpose_name(c.purpose)] += c.bytes;
      }
  const auto& steps = b.impl.trajectory.steps;
  for (size_t t = 0; t < steps.size(); ++t) {
    StepReport s = step_report_of(steps[t], static_cast<int>(t));
    if (t < b.oracle.steps.size()) s.exact_loss = b.oracle.steps[t].loss;
    s.bytes_by_kind = by_kind[static_cast<int>(t)];
    s.bytes_by_purpose = by_purpose[static_cast<int>(t)];
    if (t < errors.size()) s.error_vs_oracle = errors[t].impl, s.control_error = errors[t].control;
    r.steps.push_back(s);
  }
  r.ranks = b.scenario.engine.dp;
}

}  // namespace

Trajectory shown_part_of(Trajectory ref, const Observation& o) {
  const bool momentum = o.shows(ObservedPart::momentum), adam = o.shows(ObservedPart::adam_moments),
             grads = o.shows(ObservedPart::gradients);
  auto cut = [&](std::vector<ParamState>& ps) {
    for (auto& p : ps) {
      if (!grads) p.grad.clear();
      if (!momentum) p.momentum.clear();
      if (!adam) p.adam_m.clear(), p.adam_v.clear();
    }
  };
  cut(ref.initial);
  for (auto& st : ref.steps) cut(st.params);
  return ref;
}

void judge_observation(ScenarioResult& r, const ObservationInputs& in, Trajectory* exact_out) {
  const auto exact_run = in.memo.exact(in.scenario, in.precision);
  if (exact_out) *exact_out = *exact_run;
  // Cut copies only for an observation that leaves a part out; our engine's shows all.
  std::shared_ptr<const Trajectory> exact = exact_run;
  const ControlEnsemble* controls = &in.controls;
  ControlEnsemble cut_controls;
  if (!shows_all(in.observed)) {
    exact = std::make_shared<const Trajectory>(shown_part_of(*exact_run, in.observed));
    for (const auto& m : in.controls) cut_controls.push_back(shown_part_of(m, in.observed));
    controls = &cut_controls;
  }
  const RunBundle b{in.scenario, in.observed, *exact, *controls, in.precision, &in.memo};
  fill_steps(r, b);
  const Judging j{b, in.variants};
  for (const auto& row : invariant_table()) {
    if (!in.only.empty() && in.only.count(row.id) == 0) continue;
    if (const auto it = in.skipped.find(row.id); it != in.skipped.end()) {
      r.verdicts.push_back(Verdict::skip(row.id, it->second));
      continue;
    }
    r.verdicts.push_back(judge_row(row, j));
    // A message renders its worst case; one that says otherwise is muoncheck's bug, not a verdict.
    if (const auto why = worst_case_disagreement(r.verdicts.back()); !why.empty()) throw Error(ErrorKind::Internal, why);
  }
}

}  // namespace muoncheck
