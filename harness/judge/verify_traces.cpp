#include "harness/judge/verify_traces.hpp"

#include <chrono>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "properties/event_invariants.hpp"
#include "properties/numeric_invariants.hpp"
#include "properties/relational_invariants.hpp"

namespace muoncheck {

namespace {

// Everything verify computes for one trace before the relational pass.
struct Judged {
  const TraceCase* c = nullptr;
  bool runnable = false;
  Trajectory impl, exact;   // exact masked to the tensor kinds the trace shows
  ControlEnsemble controls;   // likewise
};

nlohmann::json batch_key(const Scenario& s) {
  auto j = scenario_to_json(s);
  j.erase("name");
  j.erase("description");
  j.erase("checkpoint");   // a resumed run follows the uninterrupted trajectory
  for (const char* k : {"dp", "gas", "micro_batch", "stage", "zero_init", "reduce_bucket_size", "allgather_bucket_size",
                        "contiguous_gradients", "offload_optimizer", "compile"})
    j["engine"].erase(k);
  j["global_batch"] = s.engine.global_batch();
  return j;
}

std::string split_label(const Scenario& s) {
  return "stage " + std::to_string(s.engine.stage) + ", dp " + std::to_string(s.engine.dp) + " × gas " +
         std::to_string(s.engine.gas) + " × mb " + std::to_string(s.engine.micro_batch);
}

// The trace's tags, NS counts and states reordered into the scenario's parameter order.
Trajectory impl_trajectory(const Scenario& s, const Trace& t) {
  const auto& params = s.model.params;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < t.tags.size(); ++i) at[t.tags[i].name] = i;
  if (t.tags.size() != params.size())
    throw bad_input(t.source, "/tags", std::to_string(params.size()) + " tags, one per param of scenario " + s.name,
                    std::to_string(t.tags.size()));
  std::vector<size_t> order;
  for (const auto& p : params) {
    auto it = at.find(p.name);
    if (it == at.end()) throw bad_input(t.source, "/tags", "a tag named \"" + p.name + "\" (a param of scenario " + s.name + ")", "none");
    order.push_back(it->second);
  }
  // `where` is the JSON path of the state list ("/initial", "/steps/3/params").
  auto check_sizes = [&](const std::vector<ParamState>& states, const std::string& where) {
    for (size_t p = 0; p < params.size(); ++p) {
      const auto& st = states[order[p]];
      const auto n = static_cast<size_t>(element_count(params[p].shape));
      const std::string path = where + "/" + std::to_string(order[p]) + "/";
      const std::string expected = std::to_string(n) + " elements (param " + params[p].name + ")";
      if (st.weight.size() != n) throw bad_input(t.source, path + "weight", expected, std::to_string(st.weight.size()));
      if (!st.momentum.empty() && st.momentum.size() != n)
        throw bad_input(t.source, path + "momentum", expected, std::to_string(st.momentum.size()));
      if (!st.adam_m.empty() && st.adam_m.size() != n)
        throw bad_input(t.source, path + "adam_m", expected, std::to_string(st.adam_m.size()));
    }
  };
  Trajectory out;
  out.producer = t.implementation();
  for (size_t p = 0; p < params.size(); ++p) out.tags.push_back(t.tags[order[p]]);
  if (t.initial.empty()) {
    out.initial = oracle::initial_state(s).params;   // SPEC initial weights are exact in every dtype
  } else {
    check_sizes(t.initial, "/initial");
    for (size_t p = 0; p < params.size(); ++p) out.initial.push_back(t.initial[order[p]]);
  }
  int good = 0;
  for (const auto& ts : t.steps) {
    check_sizes(ts.params, "/steps/" + std::to_string(ts.step) + "/params");
    StepRecord r;
    r.step = ts.step;
    r.loss = ts.loss.value_or(NAN);
    r.skipped = ts.skipped;
    r.scale = ts.loss_scale;
    r.scaler_after.scale = ts.loss_scale_after;
    r.good_steps_after = good += ts.skipped ? 0 : 1;   // a trace carries no step count: derived
    r.grad_norm = NAN;
    for (size_t p = 0; p < params.size(); ++p) {
      for (int k = 0; k < ts.ns_calls[order[p]]; ++k)
        r.ns_calls.push_back({ts.step, static_cast<int>(p), 0, out.tags[p].num_heads});
      r.params.push_back(ts.params[order[p]]);
    }
    for (int k = 0; k < ts.ns_unattributed; ++k) r.ns_calls.push_back({ts.step, -1, 0, 0});
    out.steps.push_back(std::move(r));
  }
  return out;
}

// Which kinds of optimizer state a trace shows at all (a trace may leave out momentum or
// the Adam moments everywhere; it may not leave them out for some params only).
struct ShownKinds {
  bool momentum = false, adam = false;
};
ShownKinds shown_kinds(const Trajectory& impl) {
  ShownKinds k;
  for (const auto& st : impl.steps)
    for (const auto& p : st.params) k.momentum = k.momentum || !p.momentum.empty(), k.adam = k.adam || !p.adam_m.empty();
  return k;
}

// A reference trajectory cut down to the tensor kinds the trace shows, so a trace without
// momentum is judged on its weights rather than failed for a tensor it never claimed. A kind
// the trace shows anywhere is required everywhere (a missing one fails by name).
Trajectory masked(Trajectory ref, ShownKinds k) {
  auto cut = [&](std::vector<ParamState>& ps) {
    for (auto& p : ps) {
      p.grad.clear();
      if (!k.momentum) p.momentum.clear();
      if (!k.adam) p.adam_m.clear(), p.adam_v.clear();
    }
  };
  cut(ref.initial);
  for (auto& st : ref.steps) cut(st.params);
  return ref;
}

// The trace's declared dtypes that are wider (a larger unit roundoff) than the scenario's:
// the band always comes from the scenario, so an implementation cannot pick its own.
std::string wider_dtypes(const Scenario& s, const TraceDTypes& d) {
  std::string out;
  auto check = [&](const char* what, DType declared, DType scenario) {
    if (unit_roundoff(declared) > unit_roundoff(scenario))
      out += (out.empty() ? "" : ", ") + std::string(what) + " " + std::string(dtype_name(declared)) + " (scenario: " +
             std::string(dtype_name(scenario)) + ")";
  };
  check("param", d.param, s.engine.param_dtype);
  check("accum", d.grad_accum, s.engine.grad_accum_dtype);
  check("comm", d.comm, s.engine.comm_dtype);
  check("NS", d.ns, s.optimizer.ns_dtype);
  return out;
}

void fill_steps(ScenarioResult& r, const Judged& j) {
  const auto errors = per_step_errors(j.impl, j.exact, j.controls);
  for (size_t t = 0; t < j.impl.steps.size(); ++t) {
    StepReport s = step_report_of(j.impl.steps[t], static_cast<int>(t));
    if (t < errors.size()) s.error_vs_oracle = errors[t].impl, s.control_error = errors[t].control;
    if (t < j.exact.steps.size()) s.exact_loss = j.exact.steps[t].loss;
    r.steps.push_back(s);
  }
}

}  // namespace

const std::vector<std::string>& trace_invariant_ids() {
  static const std::vector<std::string> ids = {"trajectory-conforms", "ns-once-per-matrix-per-step", "tagging-matches",
                                               "gas-invariant",       "dp-invariant",                "stage-invariant",
                                               "overflow-skip-clean", "checkpoint-resume-exact"};
  return ids;
}

bool same_trajectory(const Scenario& a, const Scenario& b) {
  if (!a.overflow.empty() || !b.overflow.empty()) return false;
  return batch_key(a) == batch_key(b);
}

std::vector<TraceCase> match_traces(const std::vector<Scenario>& given, const std::vector<Trace>& traces) {
  std::vector<TraceCase> out;
  for (const auto& t : traces) {
    const Scenario* named = nullptr;
    for (const auto& s : given)
      if (s.name == t.scenario_name) named = &s;
    std::optional<Scenario> embedded;
    if (t.scenario_json) embedded = parse_scenario(*t.scenario_json, t.source + " (embedded scenario)", t.scenario_name);
    if (named) {
      const auto want = scenario_hash(*named);
      if (!t.scenario_hash.empty() && t.scenario_hash != want)
        throw Error(ErrorKind::BadInput, t.source + ": traced scenario " + t.scenario_name + " has hash " + t.scenario_hash +
                                             ", the given file " + named->source + " has " + want + " (a different scenario)");
      if (embedded && scenario_hash(*embedded) != want)
        throw Error(ErrorKind::BadInput, t.source + ": the embedded scenario " + t.scenario_name + " differs from " + named->source);
      out.push_back({*named, named->source, t});
      continue;
    }
    if (!embedded)
      throw Error(ErrorKind::BadInput, t.source + ": traced scenario " + t.scenario_name +
                                           " is not among the given scenarios and the trace does not embed it");
    if (!t.scenario_hash.empty() && t.scenario_hash != scenario_hash(*embedded))
      throw Error(ErrorKind::BadInput, t.source + ": the embedded scenario does not hash to " + t.scenario_hash);
    const Scenario* base = nullptr;
    for (const auto& s : given)
      if (same_trajectory(s, *embedded)) base = &s;
    if (!base)
      throw Error(ErrorKind::BadInput, t.source + ": traced scenario " + t.scenario_name +
                                           " is neither a given scenario nor a re-split of one");
    embedded->source = base->source;
    out.push_back({*embedded, base->source, t});
  }
  return out;
}

std::vector<ScenarioResult> verify_traces(const std::vector<TraceCase>& cases, const VerifyOptions& o) {
  auto wanted = [&](const std::string& id) { return o.only.empty() || o.only.count(id) > 0; };
  std::vector<Judged> judged(cases.size());
  std::vector<ScenarioResult> results(cases.size());
  std::vector<double> seconds(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto& c = cases[i];
    const auto& s = c.scenario;
    auto& r = results[i];
    auto& j = judged[i];
    j.c = &c;
    r.scenario = s.name + " [" + c.trace.implementation() + "]";
    r.source = c.trace.source;
    r.scenario_hash = scenario_hash(s);
    r.repro_command = "muoncheck verify " + c.given_source + " --trace " + c.trace.source;
    auto add = [&](Verdict v) {
      if (wanted(v.invariant)) r.verdicts.push_back(std::move(v));
    };
    if (!c.trace.unsupported.empty()) {
      for (const auto& id : trace_invariant_ids()) add(Verdict::unsupported(id, c.trace.unsupported));
      continue;
    }
    if (!c.trace.error.empty()) {
      for (const auto& id : trace_invariant_ids())
        add(id == "trajectory-conforms" ? Verdict::judge(id, INFINITY, 1.0, "the implementation failed: " + c.trace.error)
                                        : Verdict::skip(id, "the implementation failed before finishing"));
      continue;
    }
    j.runnable = true;
    j.impl = impl_trajectory(s, c.trace);
    const ShownKinds kinds = shown_kinds(j.impl);
    j.exact = masked(oracle::run_oracle(s, o.precision), kinds);
    for (auto& m : oracle::run_control_ensemble(s, o.control_members)) j.controls.push_back(masked(std::move(m), kinds));
    fill_steps(r, j);
    auto conforms = trajectory_conforms(s, j.impl, j.exact, j.controls);
    if (const auto wider = wider_dtypes(s, c.trace.dtypes); !wider.empty())
      conforms.message += "; the trace declares wider dtypes than the scenario: " + wider + " (band from the scenario's)";
    if (!kinds.momentum || !kinds.adam)
      conforms.message += std::string("; the trace shows no ") + (!kinds.momentum && !kinds.adam ? "momentum or Adam moments" : !kinds.momentum ? "momentum" : "Adam moments");
    add(conforms);
    add(ns_once_per_matrix_per_step(j.exact, j.impl));
    add(tagging_matches(j.exact.tags, {j.impl.tags}, s.engine.zero_init));
    seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // Relational: each trace against every other trace of the same implementation that follows
  // the same exact trajectory; the worst comparison is the verdict.
  for (size_t i = 0; i < cases.size(); ++i) {
    auto& r = results[i];
    if (!judged[i].runnable) continue;
    const auto& si = cases[i].scenario;
    std::map<std::string, Verdict> worst;
    for (size_t k = 0; k < cases.size(); ++k) {
      if (k == i || !judged[k].runnable || cases[k].trace.implementation() != cases[i].trace.implementation()) continue;
      const auto& sk = cases[k].scenario;
      if (!same_trajectory(si, sk)) continue;
      const auto& ei = si.engine;
      const auto& ek = sk.engine;
      const bool split = ei.dp != ek.dp || ei.gas != ek.gas || ei.micro_batch != ek.micro_batch;
      std::string id;
      // A checkpoint trace beside the uninterrupted run's (within the band: a trace's resume may re-round).
      if (si.checkpoint && !sk.checkpoint && !split && ei.stage == ek.stage) id = "checkpoint-resume-exact";
      else if (split && ei.stage == ek.stage) id = ei.dp == ek.dp ? "gas-invariant" : "dp-invariant";
      else if (!split && ei.stage != ek.stage) id = "stage-invariant";
      if (id.empty()) continue;
      auto v = compare_runs(id, si, judged[i].exact, {split_label(si), &judged[i].impl, &judged[i].controls},
                            {split_label(sk) + " (" + cases[k].trace.source + ")", &judged[k].impl, &judged[k].controls});
      auto it = worst.find(id);
      if (it == worst.end() || !(v.metric <= it->second.metric)) worst[id] = v;
      r.repro_command += " --trace " + cases[k].trace.source;
      if (cases[k].given_source != cases[i].given_source &&
          r.repro_command.find(" " + cases[k].given_source + " ") == std::string::npos)
        r.repro_command.insert(std::string("muoncheck verify ").size(), cases[k].given_source + " ");
    }
    std::vector<Verdict> ordered;
    for (const auto& v : r.verdicts) ordered.push_back(v);
    r.verdicts.clear();
    for (const auto& id : trace_invariant_ids()) {
      if (!wanted(id)) continue;
      bool found = false;
      for (const auto& v : ordered)
        if (v.invariant == id) r.verdicts.push_back(v), found = true;
      if (found) continue;
      if (worst.count(id)) r.verdicts.push_back(worst.at(id));
      else if (id == "gas-invariant" || id == "stage-invariant")
        r.verdicts.push_back(Verdict::skip(id, "no other trace of this implementation re-splits this global batch" +
                                                   std::string(id == "stage-invariant" ? " at another stage" : "")));
      else if (id == "checkpoint-resume-exact")
        r.verdicts.push_back(Verdict::skip(id, si.checkpoint ? "no trace of the uninterrupted run (this scenario without checkpoint) beside it"
                                                             : "no checkpoint in the scenario"));
      else if (id == "overflow-skip-clean") {
        auto v = overflow_skip_clean(si, judged[i].exact, judged[i].impl);
        bool momentum = false;
        for (const auto& st : judged[i].impl.steps)
          for (const auto& p : st.params) momentum = momentum || !p.momentum.empty();
        if (v.status != Status::skipped && !momentum) v.message += " (the trace has no momentum: weights and scale only)";
        r.verdicts.push_back(v);
      }
    }
    r.wall_seconds = seconds[i];
  }
  return results;
}

}  // namespace muoncheck
