#include "harness/judge/verify_traces.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/judge/judge_observation.hpp"
#include "harness/traces/trace_observation.hpp"
#include "properties/invariant_table.hpp"
#include "properties/determinacy.hpp"

namespace muoncheck {

namespace {

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

// The variant `v` itself, under whatever name (a shipped sibling scenario serves as well).
bool same_but_name(const Scenario& v, const Scenario& s) {
  Scenario x = v;
  x.name = s.name;
  x.description = s.description;
  return scenario_hash(x) == scenario_hash(s);
}

// `e` is one of the variants the invariant table compares `s` against (stage variants exist
// for scenarios with overflow injections too, which same_trajectory never relates).
bool is_variant_of(const Scenario& s, const Scenario& e) {
  for (const auto k : all_variant_kinds())
    for (const auto& v : variant_scenarios(s, k).scenarios)
      if (same_but_name(v, e)) return true;
  return false;
}

// The variant runs of one implementation's judgement: the other traces given, by the
// variant's scenario hash and the repeat index. A variant with no trace is UNSUPPORTED.
class TraceVariantRuns final : public VariantRuns {
 public:
  TraceVariantRuns(const std::vector<TraceCase>& cases, const std::vector<std::optional<Observation>>& observed,
                   oracle::ResultMemo& memo, int members, size_t base)
      : cases_(cases), observed_(observed), memo_(memo), members_(members), base_(base) {}

  std::optional<ObservedRun> run(const Scenario& v, VariantKind k, bool controls, std::string& why) override {
    const std::string hash = scenario_hash(v);
    const int repeat = k == VariantKind::repeat ? 1 : 0;
    for (size_t i = 0; i < cases_.size(); ++i) {
      const auto& c = cases_[i];
      if (!observed_[i] || c.trace.repeat != repeat || !same_but_name(v, c.scenario) ||
          c.trace.implementation() != cases_[base_].trace.implementation())
        continue;
      used.push_back(&c);
      ObservedRun out{&*observed_[i], nullptr};
      if (controls) {
        const auto ensemble = memo_.ensemble(c.scenario, members_);
        auto& cut = cut_.emplace_back();
        for (const auto& m : *ensemble) cut.push_back(shown_part_of(m, *observed_[i]));
        out.controls = &cut;
      }
      return out;
    }
    for (const auto& c : cases_)   // traced, but declined or failed: say so, with the implementation's words
      if (c.trace.repeat == repeat && same_but_name(v, c.scenario) && (!c.trace.unsupported.empty() || !c.trace.error.empty())) {
        why = "variant " + v.name + (c.trace.error.empty() ? " declined by the implementation: " + c.trace.unsupported
                                                          : " failed in the implementation: " + c.trace.error);
        return std::nullopt;
      }
    why = repeat ? "no second trace (\"repeat\": 1) of scenario " + v.name + " was given"
                 : "no trace of variant " + v.name + " (scenario hash " + hash + ") was given (`muoncheck variants` writes it)";
    return std::nullopt;
  }
  Status when_missing() const override { return Status::unsupported; }
  bool crashed(const Scenario& v, VariantKind k) const override {
    const int repeat = k == VariantKind::repeat ? 1 : 0;
    for (const auto& c : cases_)
      if (c.trace.repeat == repeat && same_but_name(v, c.scenario) && !c.trace.error.empty()) return true;
    return false;
  }

  std::vector<const TraceCase*> used;   // the variant traces read, for the repro line

 private:
  const std::vector<TraceCase>& cases_;
  const std::vector<std::optional<Observation>>& observed_;
  oracle::ResultMemo& memo_;
  int members_;
  size_t base_;
  std::deque<ControlEnsemble> cut_;
};

}  // namespace

bool same_trajectory(const Scenario& a, const Scenario& b) {
  if (!a.overflow.empty() || !b.overflow.empty()) return false;
  if (a.engine.global_batch() != b.engine.global_batch()) return false;
  Scenario x = a;   // a with b's split, stage and buckets: equal to b when only those differ
  x.name = b.name;
  x.description = b.description;
  auto& e = x.engine;
  const auto& f = b.engine;
  e.dp = f.dp, e.gas = f.gas, e.micro_batch = f.micro_batch, e.stage = f.stage, e.zero_init = f.zero_init;
  e.reduce_bucket_size = f.reduce_bucket_size, e.allgather_bucket_size = f.allgather_bucket_size;
  e.contiguous_gradients = f.contiguous_gradients;
  return scenario_hash(x) == scenario_hash(b);
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
      out.push_back({*named, named->source, t, true});
      continue;
    }
    if (!embedded)
      throw Error(ErrorKind::BadInput, t.source + ": traced scenario " + t.scenario_name +
                                           " is not among the given scenarios and the trace does not embed it");
    if (!t.scenario_hash.empty() && t.scenario_hash != scenario_hash(*embedded))
      throw Error(ErrorKind::BadInput, t.source + ": the embedded scenario does not hash to " + t.scenario_hash);
    const Scenario* base = nullptr;
    for (const auto& s : given)
      if (same_trajectory(s, *embedded) || is_variant_of(s, *embedded)) base = &s;
    if (!base)
      throw Error(ErrorKind::BadInput, t.source + ": traced scenario " + t.scenario_name +
                                           " is neither a given scenario nor a re-split of one");
    embedded->source = base->source;
    out.push_back({*embedded, base->source, t, false});
  }
  return out;
}

std::vector<ScenarioResult> verify_traces(const std::vector<TraceCase>& cases, const VerifyOptions& o) {
  auto wanted = [&](const std::string& id) { return o.only.empty() || o.only.count(id) > 0; };
  std::vector<std::optional<Observation>> observed(cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].trace.unsupported.empty() && cases[i].trace.error.empty())
      observed[i] = observation_from_trace(cases[i].scenario, cases[i].trace);
  oracle::ResultMemo memo;
  std::vector<ScenarioResult> results;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (!c.given || c.trace.repeat != 0) continue;   // a variant's or a repeat's trace: read by the rows below
    const auto start = std::chrono::steady_clock::now();
    const auto& s = c.scenario;
    auto& r = results.emplace_back();
    r.scenario = s.name + " [" + c.trace.implementation() + "]";
    r.source = c.trace.source;
    r.scenario_hash = scenario_hash(s);
    r.repro = {"muoncheck", "verify", c.given_source, "--trace", c.trace.source};
    r.inconclusive_cause = inconclusive_cause(s);
    for (const auto& id : invariant_ids()) {
      if (!wanted(id)) continue;
      if (!c.trace.unsupported.empty()) r.verdicts.push_back(Verdict::unsupported(id, c.trace.unsupported));
      else if (!c.trace.error.empty())
        r.verdicts.push_back(id == "trajectory-conforms" ? Verdict::judge(id, INFINITY, 1.0, "the implementation failed: " + c.trace.error)
                                                         : Verdict::skip(id, "the implementation failed before finishing"));
    }
    if (!observed[i]) continue;
    TraceVariantRuns variants(cases, observed, memo, o.control_members, i);
    const auto controls = memo.ensemble(s, o.control_members);
    judge_observation(r, {s, *observed[i], *controls, memo, o.precision, variants, o.only, {}});
    for (auto& v : r.verdicts) {
      if (v.invariant != "trajectory-conforms") continue;
      if (const auto wider = wider_dtypes(s, c.trace.dtypes); !wider.empty())
        v.message += "; the trace declares wider dtypes than the scenario: " + wider + " (band from the scenario's)";
      for (const auto part : {ObservedPart::momentum, ObservedPart::adam_moments})
        if (!observed[i]->shows(part)) v.message += "; the trace shows no " + part_name(part);
    }
    for (const auto* used : variants.used) {   // the scenarios first, then their traces
      const auto has = [&](const std::string& a) { return std::find(r.repro.begin(), r.repro.end(), a) != r.repro.end(); };
      if (!has(used->trace.source)) r.repro.insert(r.repro.end(), {"--trace", used->trace.source});
      if (used->given_source != c.given_source && !has(used->given_source))
        r.repro.insert(r.repro.begin() + 2, used->given_source);
    }
    r.repro.insert(r.repro.end(), o.flags.begin(), o.flags.end());
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return results;
}

ScenarioResult verify_one_trace(const Scenario& s, const Trace& t,
                                const std::vector<std::pair<Scenario, Trace>>& variants, const VerifyOptions& o) {
  std::vector<TraceCase> cases{TraceCase{s, s.source, t, true}};
  for (const auto& [v, vt] : variants) cases.push_back(TraceCase{v, s.source, vt, false});
  auto results = verify_traces(cases, o);
  if (results.empty()) throw Error(ErrorKind::Internal, "verify judged no trace of " + s.name);
  return std::move(results.front());
}

}  // namespace muoncheck
