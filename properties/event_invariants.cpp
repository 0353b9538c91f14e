#include "properties/event_invariants.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>

#include "core/trajectory_json.hpp"
#include "properties/bitwise.hpp"
#include "properties/followed_decisions.hpp"
#include "properties/followed_decisions.hpp"

namespace muoncheck {

namespace {

using impl::CollectiveRecord;
using impl::Phase;
using impl::Purpose;

std::string tag_text(const ParamTag& t) {
  return std::string(t.use_muon ? "muon" : "adamw") + (t.num_heads ? "/" + std::to_string(t.num_heads) + " heads" : "");
}

// Muon gathers of each step (and the collectives inside a sharded NS), summed over ranks.
std::map<int, int> muon_gathers_per_step(const Observation& r) {
  std::map<int, int> n;
  for (const auto& log : r.collectives_by_rank)
    for (const auto& c : log)
      if (c.purpose == Purpose::muon_gather || c.purpose == Purpose::ns_internal) ++n[c.step];
  return n;
}

}  // namespace

Verdict ns_once_per_matrix_per_step(const RunBundle& b) {
  return judged_on_followed(b, [&](const Trajectory& reference) { return ns_once_per_matrix_per_step(reference, b.impl.trajectory); });
}

Verdict ns_once_per_matrix_per_step(const Trajectory& oracle, const Trajectory& impl) {
  const auto& tags = oracle.tags;
  double off = 0;
  std::optional<WorstCase> first;   // the first miscount
  auto count = [](size_t t, std::string param, double have, double want, std::string note) {
    WorstCase w;
    w.measure = WorstCase::Measure::count;
    w.step = static_cast<int>(t), w.param = std::move(param), w.tensor = "NS calls";
    w.error = have, w.band = want, w.note = std::move(note);
    return w;
  };
  // Counted per rank: a param's update may be computed on each rank that holds part of it (a
  // replicated computation, e.g. a matrix straddling two partitions), but no rank may run it
  // twice in a step, and one rank at least must run it on a good step.
  for (size_t t = 0; t < oracle.steps.size(); ++t) {
    const bool skipped = oracle.steps[t].skipped;
    std::map<int, int> calls;                  // the most calls one rank made, per param
    std::map<std::pair<int, int>, int> by_rank;
    if (t < impl.steps.size())
      for (const auto& c : impl.steps[t].ns_calls) calls[c.param] = std::max(calls[c.param], ++by_rank[{c.param, c.rank}]);
    // A call tied to no param of the model (an implementation that cannot say whose matrix
    // it orthogonalized) is never one of the expected calls.
    for (const auto& [param, n] : calls)
      if (param < 0 || param >= static_cast<int>(tags.size())) {
        off += n;
        if (!first) first = count(t, "", n, 0, "tied to no param");
      }
    for (size_t p = 0; p < tags.size(); ++p) {
      const int want = (tags[p].use_muon && !skipped) ? 1 : 0;
      const int have = calls.count(static_cast<int>(p)) ? calls[static_cast<int>(p)] : 0;
      // A skipped step may have computed the update before the overflow was known and discarded
      // it (overflow-skip-clean judges that the state is untouched): once, never twice.
      const bool discarded = skipped && tags[p].use_muon && have == 1;
      if (have != want && !discarded) {
        off += std::abs(have - want);
        if (!first) first = count(t, tags[p].name, have, want, skipped ? "skipped step" : "");
      }
    }
  }
  int total = 0;
  for (const auto& st : impl.steps) total += static_cast<int>(st.ns_calls.size());
  if (!first)
    return Verdict::judge("ns-once-per-matrix-per-step", off, 0,
                          std::to_string(total) + " NS calls over " + std::to_string(oracle.steps.size()) +
                              " steps, each Muon matrix at most once per rank and on one rank at least per good step");
  return Verdict::located("ns-once-per-matrix-per-step", off, 0, *first, "",
                          "; " + std::to_string(total) + " NS calls in all");
}

Verdict tagging_matches(const RunBundle& b) {
  Verdict v = tagging_matches(b.oracle.tags, b.impl.tags_by_rank, b.scenario.engine.zero_init);
  // The tag as applied: every NS call must use the head count its param was tagged with.
  double wrong = 0;
  std::string first;
  for (const auto& st : b.impl.trajectory.steps)
    for (const auto& c : st.ns_calls) {
      if (c.param < 0 || static_cast<size_t>(c.param) >= b.oracle.tags.size()) continue;
      const auto& want = b.oracle.tags[static_cast<size_t>(c.param)];
      if (c.heads == want.num_heads) continue;
      if (wrong++ == 0)
        first = "step " + std::to_string(c.step) + " rank " + std::to_string(c.rank) + " " + want.name + ": NS applied " +
                std::to_string(c.heads) + " heads, tagged " + std::to_string(want.num_heads);
    }
  if (wrong == 0) return v;
  return Verdict::judge("tagging-matches", v.metric + wrong, 0, first + (v.status == Status::fail ? "; " + v.message : ""));
}

Verdict tagging_matches(const std::vector<ParamTag>& expected, const std::vector<std::vector<ParamTag>>& tags_by_rank,
                        bool zero_init) {
  double wrong = 0;
  std::string first;
  int muon = 0;
  for (const auto& t : expected) muon += t.use_muon;
  for (size_t r = 0; r < tags_by_rank.size(); ++r) {
    const auto& have = tags_by_rank[r];
    for (size_t p = 0; p < expected.size(); ++p) {
      const auto& want = expected[p];
      const bool same = p < have.size() && have[p].use_muon == want.use_muon && have[p].num_heads == want.num_heads;
      if (!same) {
        ++wrong;
        if (first.empty())
          first = "rank " + std::to_string(r) + " " + want.name + ": " + (p < have.size() ? tag_text(have[p]) : "missing") +
                  ", expected " + tag_text(want);
      }
    }
  }
  int impl_muon = 0;
  if (!tags_by_rank.empty())
    for (const auto& t : tags_by_rank[0]) impl_muon += t.use_muon;
  const std::string counts = "impl tags " + std::to_string(impl_muon) + " Muon params, oracle " + std::to_string(muon) +
                             (zero_init ? " (zero_init placeholders)" : "");
  return Verdict::judge("tagging-matches", wrong, 0, wrong == 0 ? counts : first + "; " + counts);
}

Verdict overflow_skip_clean(const RunBundle& b) {
  return judged_on_followed(b, [&](const Trajectory& reference) { return overflow_skip_clean(b.scenario, reference, b.impl.trajectory); });
}

Verdict overflow_skip_clean(const Scenario& scenario, const Trajectory& oracle, const Trajectory& impl) {
  const auto& impl_steps = impl.steps;
  bool any = false;
  for (const auto& s : oracle.steps) any = any || s.skipped;
  for (const auto& s : impl_steps) any = any || s.skipped;
  if (!any && scenario.overflow.empty())
    return Verdict::skip("overflow-skip-clean", "no step overflows in this scenario");
  double bad = 0;
  std::string first;
  auto note = [&](const std::string& m) {
    ++bad;
    if (first.empty()) first = m;
  };
  for (size_t t = 0; t < oracle.steps.size() && t < impl_steps.size(); ++t) {
    const auto& want = oracle.steps[t];
    const auto& have = impl_steps[t];
    const std::string at = "step " + std::to_string(t) + ": ";
    if (want.skipped != have.skipped) note(at + (have.skipped ? "skipped, the oracle did not" : "not skipped, the oracle skipped"));
    if (have.scaler_after.scale != want.scaler_after.scale)
      note(at + "loss scale after the step " + std::to_string(have.scaler_after.scale) + ", expected " + std::to_string(want.scaler_after.scale));
    if (!have.skipped) continue;
    // NS may run before the overflow is known if its result is discarded: the state below says so
    const auto& before = t == 0 ? impl.initial : impl_steps[t - 1].params;
    for (size_t p = 0; p < have.params.size() && p < before.size(); ++p) {
      const auto& x = have.params[p];
      const auto& y = before[p];
      const auto& name = scenario.model.params[p].name;
      // Bit for bit: a state an undetermined step left non-finite stays the same NaN when untouched.
      if (!bit_identical(x.weight, y.weight)) note(at + name + " weight changed on a skipped step");
      if (!y.momentum.empty() && !bit_identical(x.momentum, y.momentum)) note(at + name + " momentum changed on a skipped step");
      if (y.momentum.empty() && !x.momentum.empty() && t > 0) note(at + name + " momentum appeared on a skipped step");
      if (!y.adam_m.empty() && (!bit_identical(x.adam_m, y.adam_m) || !bit_identical(x.adam_v, y.adam_v)))
        note(at + name + " Adam moments changed on a skipped step");
    }
    const int good_before = t == 0 ? 0 : impl_steps[t - 1].good_steps_after;
    if (have.good_steps_after != good_before) note(at + "the step count advanced on a skipped step");
  }
  return Verdict::judge("overflow-skip-clean", bad, 0, bad == 0 ? "skipped steps leave every state tensor bit-identical; scale follows the scaler rule" : first);
}

std::optional<DType> required_wire_dtype(const Scenario& s, Purpose purpose) {
  switch (purpose) {
    case Purpose::grad_reduce:
    case Purpose::muon_gather: return s.engine.comm_dtype;     // §4.2, §5: gradients and NS inputs
    case Purpose::param_gather:
    case Purpose::weight_sync: return s.engine.param_dtype;    // the model copy travels as it is stored
    case Purpose::ns_internal: return s.optimizer.ns_dtype;    // the NS iterate, wherever it is computed
    case Purpose::muon_exchange:                                // NS results are applied to fp32 masters unrounded
    case Purpose::scalar: return DType::fp32;                   // overflow flag, loss, norms
    case Purpose::state_export: return std::nullopt;            // gathered for the checks, not training
  }
  return std::nullopt;
}

Verdict comm_dtype_respected(const RunBundle& b) {
  double bad = 0;
  std::string first;
  std::map<std::string, int> checked;
  for (const auto& log : b.impl.collectives_by_rank)
    for (const auto& c : log) {
      const auto want = required_wire_dtype(b.scenario, c.purpose);
      if (!want) continue;
      ++checked[impl::purpose_name(c.purpose) + " (" + std::string(dtype_name(*want)) + ")"];
      if (c.dtype != *want) {
        ++bad;
        if (first.empty()) first = impl::to_string(c) + ", expected " + std::string(dtype_name(*want));
      }
    }
  if (checked.empty()) return Verdict::skip("comm-dtype-respected", "no training collective ran");
  std::string counts;
  for (const auto& [what, n] : checked) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  return Verdict::judge("comm-dtype-respected", bad, 0, bad == 0 ? "all in their dtype: " + counts : first + "; checked " + counts);
}

Verdict gathers_once_per_step(const RunBundle& b, const Observation* resplit_gas1) {
  double bad = 0;
  std::string first;
  for (const auto& log : b.impl.collectives_by_rank)
    for (const auto& c : log)
      if ((c.purpose == Purpose::muon_gather || c.purpose == Purpose::muon_exchange || c.purpose == Purpose::ns_internal) &&
          c.phase == Phase::micro_step) {
        ++bad;
        if (first.empty()) first = impl::to_string(c) + " ran inside a micro-step";
      }
  const auto mine = muon_gathers_per_step(b.impl);
  std::string detail;
  if (resplit_gas1) {
    const auto ref = muon_gathers_per_step(*resplit_gas1);
    const auto& ref_steps = resplit_gas1->trajectory.steps;
    for (const auto& [step, n] : mine) {
      // Natural overflow depends on the split (a gas-1 micro-step sums more samples in
      // param_dtype): a step the re-split skipped has no count to compare against.
      if (step >= 0 && step < static_cast<int>(ref_steps.size()) && ref_steps[step].skipped &&
          !(step < static_cast<int>(b.impl.trajectory.steps.size()) && b.impl.trajectory.steps[step].skipped))
        continue;
      const int want = ref.count(step) ? ref.at(step) : 0;
      if (n > want) {
        bad += n - want;
        if (first.empty())
          first = "step " + std::to_string(step) + ": " + std::to_string(n) + " Muon gathers at gas " +
                  std::to_string(b.scenario.engine.gas) + ", " + std::to_string(want) + " at gas 1";
      }
    }
    detail = " (same count as the gas-1 re-split)";
  }
  int total = 0;
  for (const auto& [step, n] : mine) total += n;
  return Verdict::judge("gathers-once-per-step", bad, 0,
                        bad == 0 ? std::to_string(total) + " Muon gathers over all steps, all at the boundary" + detail : first);
}

Verdict ranks_agree(const RunBundle& b) {
  const auto& d = b.impl.replicated_digest_by_rank;
  // A checkpoint resumed at another dp ran steps 0..k on dp ranks and the rest on the
  // resume dp; rank r's digests are those of the steps it ran, in step order.
  const int dp = std::max(b.scenario.engine.dp, 0), resumed_dp = std::max(resume_engine(b.scenario).dp, 0);
  const int save = b.scenario.checkpoint ? b.scenario.checkpoint->save_after_step : INT_MAX;
  auto ran = [&](size_t r, size_t t) { return static_cast<int>(r) < (static_cast<long long>(t) <= save ? dp : resumed_dp); };
  const size_t ranks = std::max(static_cast<size_t>(std::max(dp, resumed_dp)), d.size());
  if (ranks < 2) return Verdict::skip("ranks-agree", "one rank: nothing is replicated");
  // Every rank digests its replicated state after every step that ran (skipped ones too):
  // a rank with no digest for a step has not shown it agrees, so it counts as a difference.
  const size_t steps = std::max(static_cast<size_t>(std::max(b.scenario.steps, 0)), b.impl.trajectory.steps.size());
  double bad = 0;
  std::string first;
  auto note = [&](double n, const std::string& m) {
    bad += n;
    if (first.empty()) first = m;
  };
  for (size_t r = 0; r < ranks; ++r) {
    size_t want = 0;
    for (size_t t = 0; t < steps; ++t) want += ran(r, t);
    const size_t have = r < d.size() ? d[r].size() : 0;
    if (have < want)
      note(static_cast<double>(want - have), "rank " + std::to_string(r) + " recorded " + std::to_string(have) +
                                                 " digests for " + std::to_string(want) + " steps that ran" +
                                                 (have == 0 ? " (nothing)" : ""));
  }
  for (size_t r = 1; r < d.size(); ++r)
    for (size_t t = 0, i = 0; t < d[0].size() && i < d[r].size(); ++t) {
      if (!ran(r, t)) continue;
      if (d[r][i++] != d[0][t]) note(1, "rank " + std::to_string(r) + " differs from rank 0 after step " + std::to_string(t));
    }
  return Verdict::judge("ranks-agree", bad, 0,
                        bad == 0 ? "replicated tensors bit-identical on all " + std::to_string(ranks) + " ranks after each of " +
                                       std::to_string(steps) + " steps"
                                 : first);
}

Verdict deterministic(const RunBundle& b, const Observation& second) {
  double bad = 0;
  std::string first;
  auto note = [&](const std::string& m) {
    ++bad;
    if (first.empty()) first = m;
  };
  // Bit patterns, not ==: a skipped step's recorded gradient may hold the same NaN twice.
  if (const auto where = first_bitwise_difference(b.impl.trajectory, second.trajectory); !where.empty())
    note("trajectories (state, NS events, losses) differ between two runs, first at " + where);
  if (b.impl.collectives_by_rank != second.collectives_by_rank) note("collective logs differ between two runs");
  if (b.impl.replicated_digest_by_rank != second.replicated_digest_by_rank) note("replicated-state digests differ between two runs");
  return Verdict::judge("deterministic", bad, 0, bad == 0 ? "two runs bit-identical, events included" : first);
}

}  // namespace muoncheck
