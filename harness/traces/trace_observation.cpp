#include "harness/traces/trace_observation.hpp"

#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

namespace {

using impl::CollectiveKind;
using impl::Phase;
using impl::Purpose;

// The enum value whose name is `name`, among `all` (named by `name_of`); BadInput otherwise.
template <class E, class NameOf>
E named(const std::vector<E>& all, NameOf name_of, const std::string& name, const std::string& file, const std::string& path) {
  std::string names;
  for (const auto e : all) {
    if (name_of(e) == name) return e;
    names += (names.empty() ? "" : ", ") + name_of(e);
  }
  throw bad_input(file, path, "one of " + names, "\"" + name + "\"");
}

const std::vector<CollectiveKind> kKinds = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                            CollectiveKind::all_gather, CollectiveKind::all_gather_v,
                                            CollectiveKind::gather,     CollectiveKind::scatter};
const std::vector<Purpose> kPurposes = {Purpose::grad_reduce,   Purpose::param_gather, Purpose::muon_gather,
                                        Purpose::muon_exchange, Purpose::ns_internal,  Purpose::weight_sync,
                                        Purpose::scalar,        Purpose::state_export};
const std::vector<Phase> kPhases = {Phase::micro_step, Phase::boundary};

// order[p]: the trace's index of the scenario's param p (tags are matched by name).
std::vector<size_t> param_order(const Scenario& s, const Trace& t, const std::vector<ParamTag>& tags, const std::string& where) {
  const auto& params = s.model.params;
  if (tags.size() != params.size())
    throw bad_input(t.source, where, std::to_string(params.size()) + " tags, one per param of scenario " + s.name,
                    std::to_string(tags.size()));
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < tags.size(); ++i) at[tags[i].name] = i;
  std::vector<size_t> order;
  for (const auto& p : params) {
    auto it = at.find(p.name);
    if (it == at.end()) throw bad_input(t.source, where, "a tag named \"" + p.name + "\" (a param of scenario " + s.name + ")", "none");
    order.push_back(it->second);
  }
  return order;
}

// `where` is the JSON path of the state list ("/initial", "/steps/3/params").
void check_sizes(const Scenario& s, const Trace& t, const std::vector<size_t>& order, const std::vector<ParamState>& states,
                 const std::string& where) {
  const auto& params = s.model.params;
  for (size_t p = 0; p < params.size(); ++p) {
    const auto& st = states[order[p]];
    const auto n = static_cast<size_t>(element_count(params[p].shape));
    const std::string path = where + "/" + std::to_string(order[p]) + "/";
    const std::string expected = std::to_string(n) + " elements (param " + params[p].name + ")";
    auto check = [&](const std::vector<double>& v, const char* key) {
      if (!v.empty() && v.size() != n) throw bad_input(t.source, path + key, expected, std::to_string(v.size()));
    };
    if (st.weight.size() != n) throw bad_input(t.source, path + "weight", expected, std::to_string(st.weight.size()));
    check(st.grad, "grad");
    check(st.momentum, "momentum");
    check(st.adam_m, "adam_m");
  }
}

// The parts a trace leaves out everywhere (a part shown for some params or steps only is
// shown: a missing tensor then fails by name where the invariant reads it).
std::vector<ObservedPart> missing_parts(const Trace& t) {
  bool muon = false, adamw = false, momentum = false, adam = false, grads = false, scaler = !t.steps.empty();
  for (const auto& g : t.tags) (g.use_muon ? muon : adamw) = true;
  for (const auto& st : t.steps) {
    scaler = scaler && st.scaler.has_value();
    for (const auto& p : st.params)
      momentum = momentum || !p.momentum.empty(), adam = adam || !p.adam_m.empty(), grads = grads || !p.grad.empty();
  }
  std::vector<ObservedPart> out;
  if (muon && !momentum) out.push_back(ObservedPart::momentum);
  if (adamw && !adam) out.push_back(ObservedPart::adam_moments);
  if (!grads) out.push_back(ObservedPart::gradients);
  if (!scaler) out.push_back(ObservedPart::scaler_counters);
  if (!t.collectives_by_rank) out.push_back(ObservedPart::collectives);
  if (!t.digests_by_rank) out.push_back(ObservedPart::replicated_digests);
  out.push_back(ObservedPart::resumed_state);   // the format has no field for the state right after a load
  return out;
}

}  // namespace

Observation observation_from_trace(const Scenario& s, const Trace& t) {
  const auto& params = s.model.params;
  const auto order = param_order(s, t, t.tags, "/tags");
  Observation o;
  o.missing = missing_parts(t);
  auto& out = o.trajectory;
  out.producer = t.implementation();
  for (size_t p = 0; p < params.size(); ++p) out.tags.push_back(t.tags[order[p]]);
  std::vector<int> scenario_index(params.size());   // trace tag index → scenario param index
  for (size_t p = 0; p < params.size(); ++p) scenario_index[order[p]] = static_cast<int>(p);
  if (t.initial.empty()) {
    out.initial = oracle::initial_state(s).params;   // the initial weights of docs/semantics.md §1 are exact in every dtype
  } else {
    check_sizes(s, t, order, t.initial, "/initial");
    for (size_t p = 0; p < params.size(); ++p) out.initial.push_back(t.initial[order[p]]);
  }
  int good = 0;
  for (const auto& ts : t.steps) {
    check_sizes(s, t, order, ts.params, "/steps/" + std::to_string(ts.step) + "/params");
    StepRecord r;
    r.step = ts.step;
    r.loss = ts.loss.value_or(NAN);
    r.skipped = ts.skipped;
    r.scale = ts.loss_scale;
    r.scaler_after.scale = ts.loss_scale_after;
    good += ts.skipped ? 0 : 1;
    r.good_steps_after = good;   // derived where the trace carries no step count
    r.scaler_after.hysteresis = s.loss_scaler.hysteresis;   // ... and no counter (it moves only with a dynamic scaler)
    if (ts.scaler) {
      r.scaler_after.hysteresis = ts.scaler->hysteresis;
      r.scaler_after.good_streak = ts.scaler->good_streak;
      r.good_steps_after = ts.scaler->good_steps;
    }
    r.grad_norm = ts.grad_norm.value_or(NAN);
    if (ts.ns_events) {
      for (const auto& e : *ts.ns_events)
        r.ns_calls.push_back({ts.step, e.param < 0 ? -1 : scenario_index[static_cast<size_t>(e.param)], e.rank, e.heads});
    } else {
      for (size_t p = 0; p < params.size(); ++p)
        for (int k = 0; k < ts.ns_calls[order[p]]; ++k) r.ns_calls.push_back({ts.step, static_cast<int>(p), 0, out.tags[p].num_heads});
      for (int k = 0; k < ts.ns_unattributed; ++k) r.ns_calls.push_back({ts.step, -1, 0, 0});
    }
    for (size_t p = 0; p < params.size(); ++p) r.params.push_back(ts.params[order[p]]);
    out.steps.push_back(std::move(r));
  }
  if (t.tags_by_rank) {
    for (size_t rank = 0; rank < t.tags_by_rank->size(); ++rank) {
      const auto& tags = (*t.tags_by_rank)[rank];
      const auto ro = param_order(s, t, tags, "/ranks/" + std::to_string(rank) + "/tags");
      o.tags_by_rank.emplace_back();
      for (size_t p = 0; p < params.size(); ++p) o.tags_by_rank.back().push_back(tags[ro[p]]);
    }
  } else {
    o.tags_by_rank = {out.tags};
  }
  if (t.collectives_by_rank)
    for (size_t rank = 0; rank < t.collectives_by_rank->size(); ++rank) {
      o.collectives_by_rank.emplace_back();
      const auto& log = (*t.collectives_by_rank)[rank];
      for (size_t i = 0; i < log.size(); ++i) {
        const auto& c = log[i];
        const std::string path = "/ranks/" + std::to_string(rank) + "/collectives/" + std::to_string(i) + "/";
        impl::CollectiveRecord x;
        x.rank = static_cast<int>(rank);
        x.kind = named(kKinds, impl::collective_name, c.kind, t.source, path + "kind");
        x.purpose = named(kPurposes, impl::purpose_name, c.purpose, t.source, path + "purpose");
        x.phase = named(kPhases, impl::phase_name, c.phase, t.source, path + "phase");
        x.dtype = c.dtype;
        x.elements = c.elements;
        x.bytes = c.bytes;
        x.step = c.step;
        o.collectives_by_rank.back().push_back(x);
      }
    }
  if (t.digests_by_rank) o.replicated_digest_by_rank = *t.digests_by_rank;
  return o;
}

Trace trace_from_observation(const Scenario& s, const Observation& o, const std::vector<std::string>& faults, int repeat) {
  Trace t;
  t.impl_name = "muoncheck-impl";
  t.impl_version = MUONCHECK_VERSION;
  t.impl_details = {{"backend", "cpu"}, {"dp", s.engine.dp}, {"faults", faults}};
  t.repeat = repeat;
  t.scenario_name = s.name;
  t.scenario_hash = scenario_hash(s);
  t.scenario_json = scenario_to_json(s);
  // The implementation computes in exactly the scenario's dtypes (docs/semantics.md §8).
  t.dtypes = {s.engine.param_dtype, s.engine.grad_accum_dtype, s.engine.comm_dtype, s.optimizer.ns_dtype, DType::fp32};
  t.tags = o.tags_by_rank.empty() ? o.trajectory.tags : o.tags_by_rank.front();
  t.initial = o.trajectory.initial;
  for (const auto& st : o.trajectory.steps) {
    TraceStep ts;
    ts.step = st.step;
    ts.skipped = st.skipped;
    ts.loss = st.loss;
    ts.loss_scale = st.scale;
    ts.loss_scale_after = st.scaler_after.scale;
    ts.scaler = TraceScaler{st.scaler_after.hysteresis, st.scaler_after.good_streak, st.good_steps_after};
    ts.grad_norm = st.grad_norm;
    ts.ns_calls.assign(t.tags.size(), 0);
    ts.ns_events.emplace();
    for (const auto& c : st.ns_calls) {
      const bool attributed = c.param >= 0 && c.param < static_cast<int>(ts.ns_calls.size());
      if (attributed) ++ts.ns_calls[static_cast<size_t>(c.param)];
      else ++ts.ns_unattributed;
      ts.ns_events->push_back({attributed ? c.param : -1, c.rank, c.heads});
    }
    ts.params = st.params;
    t.steps.push_back(std::move(ts));
  }
  t.tags_by_rank = o.tags_by_rank;
  t.collectives_by_rank.emplace();
  for (const auto& log : o.collectives_by_rank) {
    t.collectives_by_rank->emplace_back();
    for (const auto& c : log)
      t.collectives_by_rank->back().push_back({impl::collective_name(c.kind), impl::purpose_name(c.purpose),
                                               impl::phase_name(c.phase), c.dtype, c.elements, c.bytes, c.step});
  }
  t.digests_by_rank = o.replicated_digest_by_rank;
  return t;
}

}  // namespace muoncheck
