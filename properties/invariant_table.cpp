#include "properties/invariant_table.hpp"

#include <algorithm>
#include <cmath>

#include "properties/checkpoint_invariant.hpp"
#include "properties/event_invariants.hpp"
#include "properties/numeric_invariants.hpp"
#include "properties/relational_invariants.hpp"
#include "properties/scaler_invariant.hpp"
#include "properties/variants.hpp"

namespace muoncheck {

namespace {

std::string split_label(const Scenario& s) {
  const auto& e = s.engine;
  return "stage " + std::to_string(e.stage) + ", dp " + std::to_string(e.dp) + " × gas " + std::to_string(e.gas) +
         " × mb " + std::to_string(e.micro_batch) + ", buckets " + std::to_string(e.reduce_bucket_size) + "/" +
         std::to_string(e.allgather_bucket_size);
}

// What differs between a scenario and its variant of kind k, in short ("stage 0 vs stage 2").
std::string what_differs(VariantKind k, const Scenario& a, const Scenario& b) {
  auto pair = [](const std::string& name, int x, int y) {
    return name + " " + std::to_string(x) + " vs " + name + " " + std::to_string(y);
  };
  switch (k) {
    case VariantKind::gas: return pair("gas", a.engine.gas, b.engine.gas);
    case VariantKind::dp: return pair("dp", a.engine.dp, b.engine.dp);
    case VariantKind::stage: return pair("stage", a.engine.stage, b.engine.stage);
    default: return "buckets " + std::to_string(a.engine.reduce_bucket_size) + "/" + std::to_string(a.engine.allgather_bucket_size) +
                    " vs " + std::to_string(b.engine.reduce_bucket_size) + "/" + std::to_string(b.engine.allgather_bucket_size);
  }
}

// A relation whose partner run crashed: failed, marked so (Verdict::partner_crashed), with the
// crash as its ERROR message.
Verdict crashed_partner(const std::string& id, const std::string& why) {
  Verdict v = Verdict::judge(id, INFINITY, 0.0, "ERROR: the relation cannot hold: " + why);
  v.partner_crashed = true;
  return v;
}

Verdict missing_variant(const std::string& id, const Judging& j, const std::string& why, bool crashed = false) {
  if (crashed) return crashed_partner(id, why);
  return j.variants.when_missing() == Status::unsupported ? Verdict::unsupported(id, why) : Verdict::skip(id, why);
}

// The scenario's run against each variant of kind `k` (the worst comparison is the verdict).
Verdict relational(const std::string& id, VariantKind k, const Judging& j) {
  const auto& b = j.base;
  const auto vs = variant_scenarios(b.scenario, k);
  if (vs.scenarios.empty()) return Verdict::skip(id, vs.why_none);
  std::optional<Verdict> worst;
  std::string missing, crashed;
  for (const auto& v : vs.scenarios) {
    std::string why;
    const auto other = j.variants.run(v, k, true, why);
    if (!other) {
      (j.variants.crashed(v, k) ? crashed : missing) += ((j.variants.crashed(v, k) ? crashed : missing).empty() ? "" : "; ") + why;
      continue;
    }
    auto verdict = compare_runs(id, b.scenario, b.oracle, {split_label(b.scenario), &b.impl.trajectory, &b.controls},
                                {split_label(v), &other->observed->trajectory, other->controls});
    if (verdict.worst) verdict.worst->kind = what_differs(k, b.scenario, v);
    if (!worst || !(verdict.metric <= worst->metric)) worst = std::move(verdict);
  }
  if (!crashed.empty()) return crashed_partner(id, crashed);
  if (!worst) return missing_variant(id, j, missing);
  if (!missing.empty()) worst->message += " (not compared: " + missing + ")";
  return *worst;
}

Verdict gathers_row(const Judging& j) {
  const auto vs = variant_scenarios(j.base.scenario, VariantKind::gas1);
  if (vs.scenarios.empty()) return gathers_once_per_step(j.base, nullptr);
  std::string why;
  const auto other = j.variants.run(vs.scenarios.front(), VariantKind::gas1, false, why);
  if (!other) return missing_variant("gathers-once-per-step", j, why, j.variants.crashed(vs.scenarios.front(), VariantKind::gas1));
  return gathers_once_per_step(j.base, other->observed);
}

bool without_scaler(const Judging& j) {
  return j.base.scenario.loss_scaler.type == ScalerType::none && !j.base.impl.shows(ObservedPart::scaler_counters);
}

Verdict scaler_row(const Judging& j) {
  if (without_scaler(j))
    return Verdict::skip("scaler-state-exact", "not applicable: the scenario has no loss scaler and the implementation "
                                               "reports none (without one the counters never move)");
  return scaler_state_exact(j.base);
}

Verdict deterministic_row(const Judging& j) {
  std::string why;
  const auto again = j.variants.run(j.base.scenario, VariantKind::repeat, false, why);
  if (!again) return missing_variant("deterministic", j, why, j.variants.crashed(j.base.scenario, VariantKind::repeat));
  return deterministic(j.base, *again->observed);
}

Verdict checkpoint_row(const Judging& j) {
  const auto vs = variant_scenarios(j.base.scenario, VariantKind::uninterrupted);
  if (vs.scenarios.empty()) return Verdict::skip("checkpoint-resume-exact", vs.why_none);
  std::string why;
  const auto other = j.variants.run(vs.scenarios.front(), VariantKind::uninterrupted, true, why);
  if (!other)
    return missing_variant("checkpoint-resume-exact", j, why, j.variants.crashed(vs.scenarios.front(), VariantKind::uninterrupted));
  return checkpoint_resume_exact(j.base, *other->observed, *other->controls);
}

using P = ObservedPart;
using V = VariantKind;

}  // namespace

std::string variant_kind_name(VariantKind k) {
  switch (k) {
    case V::gas: return "gas";
    case V::dp: return "dp";
    case V::stage: return "stage";
    case V::bucket: return "bucket";
    case V::gas1: return "gas1";
    case V::repeat: return "repeat";
    case V::uninterrupted: return "uninterrupted";
  }
  return "?";
}

const std::vector<VariantKind>& all_variant_kinds() {
  static const std::vector<VariantKind> k = {V::gas, V::dp, V::stage, V::bucket, V::gas1, V::repeat, V::uninterrupted};
  return k;
}

VariantScenarios variant_scenarios(const Scenario& s, VariantKind k) {
  auto one = [](const Variant& v) {
    return v.scenario ? VariantScenarios{{*v.scenario}, ""} : VariantScenarios{{}, v.why_none};
  };
  switch (k) {
    case V::gas: return one(gas_variant(s));
    case V::dp: return one(dp_variant(s));
    case V::stage: return {stage_variants(s), "no other stage"};
    case V::bucket: return one(bucket_variant(s));
    case V::gas1: return one(gas1_resplit(s));
    case V::repeat: return {{s}, ""};
    case V::uninterrupted:
      return one(uninterrupted_variant(s));
  }
  return {};
}

const std::vector<InvariantRow>& invariant_table() {
  static const std::vector<InvariantRow> rows = {
      {"trajectory-conforms", {}, {}, false, [](const Judging& j) { return trajectory_conforms(j.base); }, true},
      {"step-conforms", {P::momentum, P::adam_moments, P::scaler_counters}, {}, false,
       [](const Judging& j) { return step_conforms(j.base); }, true},
      {"grad-plumbing-exact", {P::gradients}, {}, false, [](const Judging& j) { return grad_plumbing_exact(j.base); }},
      {"ns-once-per-matrix-per-step", {}, {}, false, [](const Judging& j) { return ns_once_per_matrix_per_step(j.base); }},
      {"tagging-matches", {}, {}, false, [](const Judging& j) { return tagging_matches(j.base); }},
      {"gas-invariant", {}, {V::gas}, true, [](const Judging& j) { return relational("gas-invariant", V::gas, j); }},
      {"dp-invariant", {}, {V::dp}, true, [](const Judging& j) { return relational("dp-invariant", V::dp, j); }},
      {"stage-invariant", {}, {V::stage}, true, [](const Judging& j) { return relational("stage-invariant", V::stage, j); }},
      {"bucket-invariant", {}, {V::bucket}, true, [](const Judging& j) { return relational("bucket-invariant", V::bucket, j); }},
      {"overflow-skip-clean", {}, {}, false, [](const Judging& j) { return overflow_skip_clean(j.base); }},
      {"scaler-state-exact", {P::scaler_counters}, {}, false, scaler_row},
      {"comm-dtype-respected", {P::collectives}, {}, false, [](const Judging& j) { return comm_dtype_respected(j.base); }},
      {"gathers-once-per-step", {P::collectives}, {V::gas1}, false, gathers_row},
      {"ranks-agree", {P::replicated_digests}, {}, false, [](const Judging& j) { return ranks_agree(j.base); }},
      {"deterministic", {}, {V::repeat}, false, deterministic_row},
      {"checkpoint-resume-exact", {}, {V::uninterrupted}, true, checkpoint_row},
  };
  return rows;
}

const InvariantRow* find_invariant(const std::string& id) {
  for (const auto& r : invariant_table())
    if (r.id == id) return &r;
  return nullptr;
}

const std::vector<std::string>& invariant_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (const auto& r : invariant_table()) out.push_back(r.id);
    return out;
  }();
  return ids;
}

bool is_invariant_id(const std::string& id) { return find_invariant(id) != nullptr; }

Verdict judge_row(const InvariantRow& row, const Judging& j) {
  for (const auto part : row.needs) {
    // Without a loss scaler the scaler's state is the scenario's constant one and the step count
    // the steps taken: an implementation without a scaler has no counters to show.
    if (part == ObservedPart::scaler_counters && without_scaler(j)) continue;
    if (!j.base.impl.shows(part)) return Verdict::unsupported(row.id, "the observation does not show " + part_name(part));
  }
  return row.judge(j);
}

}  // namespace muoncheck
