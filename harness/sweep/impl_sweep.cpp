#include "harness/sweep/impl_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/sweep/case_features.hpp"
#include "harness/sweep/symptom.hpp"
#include "properties/invariant_table.hpp"
#include "harness/sweep/shrink_failure.hpp"
#include "harness/sweep/sweep_report.hpp"
#include "properties/variants.hpp"

namespace muoncheck {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kGenSize = 100;   // as the sweep of our own engine: full ranges at every size

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct TraceJudgement {
  std::vector<std::string> failed;
  std::vector<std::string> symptoms;   // one per failed invariant, in order (symptom.hpp)
  std::string message;
  bool unsupported = false;
  std::string error;        // the implementation's error, or why its trace could not be judged
  ScenarioResult result;
};

// The case's features (case_features.hpp) and, for a case with an implementation configuration,
// each knob's value as "knob NAME=VALUE": a defect keeps the knobs its minimal case needs.
std::vector<std::string> features_of(const Scenario& s) {
  auto out = case_features(s);
  if (!s.impl_config.empty()) {
    const nlohmann::json config = nlohmann::json::parse(s.impl_config);   // items() of a temporary would dangle
    for (const auto& [k, v] : config.items()) out.push_back("knob " + k + "=" + v.dump());
  }
  return out;
}

}  // namespace

bool fails_this_case(const Verdict& v) { return v.status == Status::fail && !v.partner_crashed; }

namespace {

// Whether a failure of `id` needs the case's partners to show again: its row of the invariant
// table compares against a gas or a stage re-split, the partners run_case runs.
bool is_relational(const std::string& id) {
  const auto* row = find_invariant(id);
  return row != nullptr && std::any_of(row->variants.begin(), row->variants.end(),
                                       [](VariantKind k) { return k == VariantKind::gas || k == VariantKind::stage; });
}

TraceJudgement judge_trace(const CaseRun& c, oracle::Precision p, const std::set<std::string>& only,
                           const ImplSweepOptions& o) {
  TraceJudgement j;
  j.unsupported = !c.trace.unsupported.empty();
  j.error = c.trace.error;
  auto source = [&](Trace t, const Scenario& s) {
    if (t.source.empty()) t.source = "<" + o.impl + " trace of " + s.name + ">";
    return t;
  };
  std::vector<std::pair<Scenario, Trace>> partners;   // its re-splits only serve its relations
  for (const auto& [s, t] : c.partners) partners.emplace_back(s, source(t, s));
  try {
    VerifyOptions vo;
    vo.precision = p;
    vo.only = only;
    vo.control_members = o.control_members;
    j.result = verify_one_trace(c.scenario, source(c.trace, c.scenario), partners, vo);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    j.error = std::string("its trace cannot be judged: ") + e.what();   // the implementation's fault
    j.failed = {"trajectory-conforms"};
    j.symptoms = {error_symptom(j.error)};
    j.message = "trajectory-conforms: " + j.error;
    return j;
  }
  for (const auto& v : j.result.verdicts) {
    if (!fails_this_case(v)) continue;
    if (j.failed.empty()) j.message = v.invariant + ": " + v.message;
    j.failed.push_back(v.invariant);
    j.symptoms.push_back(j.error.empty() ? verdict_symptom(c.scenario, v) : error_symptom(j.error));
  }
  return j;
}

Scenario named(Scenario s, const std::string& name) {
  s.name = name;
  s.source = "<generated>";
  return s;
}

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
  return s;
}

std::string case_name(const ImplSweepOptions& o, int index) {
  return file_safe(o.impl) + "-s" + std::to_string(o.seed) + "-c" + std::to_string(index + 1);
}

bool includes_all(const std::vector<std::string>& have, const std::vector<std::string>& need) {
  return std::all_of(need.begin(), need.end(), [&](const auto& x) { return std::count(have.begin(), have.end(), x) > 0; });
}

// The defect a confirmed failure belongs to: the same lead symptom (the same error, or the same
// first failing invariant with the same kind of tensor or miscount), and every feature of the
// defect's minimal case present. -1 for none.
int defect_of(const std::vector<ImplDefect>& defects, const std::string& lead, const std::vector<std::string>& features) {
  for (size_t d = 0; d < defects.size(); ++d)
    if (defects[d].symptom == lead && includes_all(features, defects[d].features)) return static_cast<int>(d);
  return -1;
}

std::string lead_of(const std::vector<std::string>& symptoms) { return symptoms.empty() ? "" : symptoms.front(); }

// The line that turns a saved case into a standalone script for the implementation swept.
std::string repro_line(const std::string& path, const ImplSweepOptions& o) {
  return "muoncheck repro " + path + " --for " + o.impl.substr(0, o.impl.find('='));
}

// Shrinks one confirmed failure with the implementation in the loop and confirms the minimal
// case in float128 (walking back along the path when a smaller case failed only in double).
ImplDefect shrink_defect(const rc::Shrinkable<Scenario>& failing, const CaseRun& run_of_case, int index,
                         const std::set<std::string>& confirmed, const std::string& error, const std::string& lead,
                         const ImplSweepOptions& o, RunnerPool& pool, ImplTime& time) {
  const std::string name = case_name(o, index);
  const bool partners = o.relational && std::any_of(confirmed.begin(), confirmed.end(), is_relational);
  std::map<std::string, CaseRun> runs{{scenario_hash(named(failing.value(), name)), run_of_case}};
  auto still_fails = [&](const Scenario& candidate) {
    const Scenario s = named(candidate, name);
    CaseRun c = pool.submit([&](const CaseRunner& run) { return run_impl_case(s, run, partners, index); }).get();
    time.implementation += c.seconds, time.steps += c.step_seconds;
    bool fails;
    if (!error.empty()) fails = !c.trace.error.empty() && error_kind(c.trace.error) == error_kind(error);
    else {
      if (!c.trace.error.empty() || !c.trace.unsupported.empty()) return false;
      fails = lead_of(judge_trace(c, oracle::Precision::float64, confirmed, o).symptoms) == lead;
    }
    if (fails) runs[scenario_hash(c.scenario)] = std::move(c);
    return fails;
  };
  const ShrinkPath path = shrink_failure(failing, still_fails, o.max_shrink_judgements, o.max_shrink_seconds);
  ImplDefect d;
  d.found_after = index + 1;
  d.error = !error.empty();
  d.symptom = lead;
  d.original = named(failing.value(), name);
  d.original_size = generators::size_of(d.original);
  d.shrink_judgements = path.judgements;
  d.shrink_exhausted = path.exhausted;
  Trace minimal;
  for (size_t k = path.steps.size(); k-- > 0;) {
    const Scenario s = named(path.steps[k].value(), name);
    const CaseRun& c = runs.at(scenario_hash(s));
    minimal = c.trace;
    const TraceJudgement j = judge_trace(c, oracle::Precision::float128,
                                         d.error ? std::set<std::string>{} : confirmed, o);
    if (lead_of(j.symptoms) != lead && k > 0) continue;
    d.shrunk = s;
    d.invariants = j.failed;
    d.error_text = j.error;
    d.message = d.error ? "ERROR: " + j.error : j.message;
    d.shrink_steps = static_cast<int>(k);
    break;
  }
  d.shrunk.description = "shrunk from case " + std::to_string(index + 1) + " of `muoncheck sweep --impl " + o.impl +
                         " --seed " + std::to_string(o.seed) + "` (" + d.original.description + ")";
  d.shrunk_size = generators::size_of(d.shrunk);
  d.features = features_of(d.shrunk);
  std::filesystem::create_directories(o.cases_dir);
  d.path = (std::filesystem::path(o.cases_dir) / (name + ".json")).string();
  save_scenario(d.shrunk, d.path);
  minimal.scenario_json = scenario_to_json(d.shrunk);   // the description changed; the trajectory did not
  minimal.scenario_hash.clear();
  save_trace(minimal, d.path.substr(0, d.path.size() - 5) + ".trace.json");
  d.repro = repro_line(d.path, o);
  return d;
}

// The case run again with `fixes` applied and judged with every invariant, failures confirmed
// in float128: one re-run of attribution's evidence.
FixRun fix_trial(const Scenario& s, const FixSet& fixes, bool partners, int index, const ImplSweepOptions& o,
                 const CaseRunner& run, ImplTime& time) {
  CaseRun c = run_impl_case(s, run, partners, index, fixes);
  time.implementation += c.seconds, time.steps += c.step_seconds;
  FixRun r;
  r.fixes = fixes;
  if (c.trace.error.rfind(kFixDoesNotApply, 0) == 0) {
    r.fix_error = c.trace.error.substr(std::string(kFixDoesNotApply).size());
    r.failed = {"ERROR"};
    r.message = c.trace.error;
    return r;
  }
  if (!c.trace.unsupported.empty()) {   // a fix that makes the case inexpressible shows nothing
    r.failed = {"UNSUPPORTED"};
    r.message = "declined with the fixes: " + c.trace.unsupported;
    return r;
  }
  const TraceJudgement quick = judge_trace(c, oracle::Precision::float64, {}, o);
  if (!quick.error.empty()) {
    r.failed = {"ERROR"};
    r.message = "ERROR: " + quick.error;
    return r;
  }
  if (!quick.failed.empty()) {
    const TraceJudgement sure = judge_trace(c, oracle::Precision::float128, {quick.failed.begin(), quick.failed.end()}, o);
    r.failed = sure.failed;
    r.message = sure.message;
  }
  r.conforms = r.failed.empty();
  r.unused = unused_in_every_run(c, fixes);
  return r;
}

// The version attribution asks the registry about: the option, else the one the case's trace names
// ("deepspeed 0.19.8" -> "0.19.8").
std::string version_of(const ImplSweepOptions& o, const std::string& implementation) {
  if (!o.version.empty()) return o.version;
  const auto space = implementation.rfind(' ');
  return space == std::string::npos ? implementation : implementation.substr(space + 1);
}

// The fix sets that explained this sweep's cases so far, the most frequent first.
std::vector<FixSet> explanations_so_far(const ImplSweepResult& r) {
  std::map<FixSet, int> count;
  for (const auto& f : r.failures)
    if (f.attribution.verdict == AttributionVerdict::explained) ++count[f.attribution.fixes];
  std::vector<std::pair<FixSet, int>> sets(count.begin(), count.end());
  std::stable_sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<FixSet> out;
  for (auto& [fixes, n] : sets) out.push_back(std::move(fixes));
  return out;
}

// The case re-run under the registry's fixes on one runner; `hints` are tried first.
Attribution attribute_case(const Scenario& s, const FixRun& failing, const std::vector<std::string>& failed, int index,
                           const std::string& version, const std::vector<FixSet>& hints, const ImplSweepOptions& o,
                           const CaseRunner& run, ImplTime& time) {
  const bool partners = o.relational && std::any_of(failed.begin(), failed.end(), is_relational);
  Attribution a = attribute(o.registry.applicable(version), failing, [&](const FixSet& fixes) {
    return fix_trial(s, fixes, partners, index, o, run, time);
  }, o.max_attribution_runs, hints, o.max_attribution_seconds);
  a.known = o.known_defects_given && a.verdict == AttributionVerdict::explained;
  return a;
}

FixRun failing_run(const std::vector<std::string>& failed, const std::string& message) {
  FixRun f;
  f.failed = failed;
  f.message = message;
  return f;
}

// An unshrunk failing case and its trace, saved where `muoncheck repro` finds them.
std::string save_case(const Scenario& s, Trace trace, const ImplSweepOptions& o) {
  std::filesystem::create_directories(o.cases_dir);
  const std::string path = (std::filesystem::path(o.cases_dir) / (s.name + ".json")).string();
  save_scenario(s, path);
  save_trace(trace, path.substr(0, path.size() - 5) + ".trace.json");
  return repro_line(path, o);
}

// One case evaluated on the lane that ran it: its judgement under the double oracle and, for a
// failure, the float128 confirmation and the registry's attribution, whose re-runs use the same
// runner. N lanes evaluate N cases side by side; only shrinking waits for the others.
struct CaseOutcome {
  CaseRun run;
  TraceJudgement quick;
  std::vector<std::string> failed, symptoms;   // confirmed: empty when it passed or was not confirmed
  std::string message;
  Attribution attribution;   // not asked without a registry or a confirmed failure
  ImplTime attribution_time;
};

CaseOutcome evaluate_case(const Scenario& s, int i, const std::vector<FixSet>& hints, const ImplSweepOptions& o,
                          const CaseRunner& runner) {
  CaseOutcome out;
  out.run = run_impl_case(s, runner, o.relational, i);
  const CaseRun& c = out.run;
  out.quick = judge_trace(c, oracle::Precision::float64, {}, o);
  const TraceJudgement& quick = out.quick;
  if (quick.failed.empty()) return out;
  out.failed = quick.failed, out.symptoms = quick.symptoms, out.message = quick.message;
  if (quick.error.empty()) {   // confirm in float128 (the same trace, the exact oracle)
    const TraceJudgement sure = judge_trace(c, oracle::Precision::float128, {quick.failed.begin(), quick.failed.end()}, o);
    out.failed = sure.failed, out.symptoms = sure.symptoms;
    if (!out.failed.empty()) out.message = sure.message;
  } else {
    out.message = "ERROR: " + quick.error;
  }
  if (!out.failed.empty() && !o.registry.defects.empty())
    out.attribution = attribute_case(s, failing_run(out.failed, out.message), out.failed, i,
                                     version_of(o, c.trace.implementation()), hints, o, runner, out.attribution_time);
  return out;
}

// Adds one evaluated case to r; the cases are added in case order. `settle` is called before a
// shrink: it lets the cases in flight finish, so the shrink has the runners to itself.
void record_case(const rc::Shrinkable<Scenario>& shrinkable, int i, const CaseOutcome& out, const ImplSweepOptions& o,
                 RunnerPool& pool, const std::function<void()>& settle, ImplSweepResult& r) {
  const CaseRun& c = out.run;
  const Scenario& s = c.scenario;
  const Trace& trace = c.trace;
  const TraceJudgement& quick = out.quick;
  r.time.implementation += c.seconds + out.attribution_time.implementation;
  r.time.steps += c.step_seconds + out.attribution_time.steps;
  r.partner_runs += static_cast<int>(c.partners.size());
  for (const auto& pt : c.partners) r.partner_errors += !pt.second.error.empty();
  if (r.implementation.empty() && !trace.impl_version.empty()) r.implementation = trace.implementation();
  ++r.cases_run;
  r.counts.add(quick.result, "muoncheck sweep --impl " + o.impl + " --seed " + std::to_string(o.seed) +
                                   " --cases " + std::to_string(i + 1));
  if (quick.unsupported) {
    ++r.declined;
    ++r.declines_by_feature[decline_feature(trace.unsupported)];
  } else {
    for (const auto& f : features_of(s)) ++r.features_drawn[f];
  }
  if (!quick.error.empty()) ++r.errors;
  if (quick.failed.empty()) return;
  if (out.failed.empty()) {
    r.unconfirmed.push_back({i + 1, quick.failed, quick.message});
    return;
  }
  ImplFailure f{i + 1, out.failed, out.symptoms, out.message, features_of(s), -1, {}, out.attribution};
  const std::string lead = lead_of(out.symptoms);
  f.defect = defect_of(r.defects, lead, f.features);
  if (f.defect < 0 && static_cast<int>(r.defects.size()) < o.max_defects) {
    settle();
    ImplDefect d = shrink_defect(shrinkable, c, i, {out.failed.begin(), out.failed.end()}, quick.error, lead, o, pool,
                                 r.time);
    f.defect = defect_of(r.defects, d.symptom, d.features);
    if (f.defect < 0) {
      r.defects.push_back(std::move(d));
      f.defect = static_cast<int>(r.defects.size()) - 1;
    }
  }
  if (f.defect >= 0) ++r.defects[f.defect].occurrences;
  else f.repro = save_case(s, c.trace, o);   // matches no defect: kept, with its repro line
  if (!o.registry.defects.empty()) {
    ImplDefect* d = f.defect >= 0 ? &r.defects[f.defect] : nullptr;
    if (d && d->attribution.verdict == AttributionVerdict::not_asked) {   // its minimal case too
      const std::vector<FixSet> hints = explanations_so_far(r);
      d->attribution = pool.submit([&](const CaseRunner& run) {
        return attribute_case(d->shrunk, failing_run(d->invariants, d->message), d->invariants, d->found_after - 1,
                              version_of(o, trace.implementation()), hints, o, run, r.time);
      }).get();
    }
    r.explained += f.attribution.verdict == AttributionVerdict::explained;
    r.fresh += f.attribution.verdict == AttributionVerdict::new_defect;
  }
  r.failures.push_back(std::move(f));
}

// A case drawn and handed to a runner; its run comes back through `run`.
struct PendingCase {
  int index = 0;
  rc::Shrinkable<Scenario> shrinkable;
  std::future<CaseOutcome> outcome;
};

// " (with the fixes of X + Y)" for a witness judged with other entries' fixes, else "".
std::string needs_text(const FixSet& needs) {
  return needs.empty() ? "" : " (with the fixes of " + joined(needs, " + ") + ")";
}

// --known-defects: every entry living in this version shows its defect on its witness case
// without fixes and conforms there with its fix; else the list is stale, which fails the sweep.
void check_known_defects(const ImplSweepOptions& o, RunnerPool& pool, ImplSweepResult& r) {
  const std::string version = version_of(o, r.implementation);
  for (const auto& id : o.registry.applicable(version)) {
    const KnownDefect& d = *o.registry.find(id);
    const std::string where = "known defect " + id + " (" + o.registry.path + ")";
    Scenario w;
    try {
      w = named(load_scenario(d.witness), "known-" + id);
    } catch (const Error& e) {
      r.known_defect_problems.push_back(where + ": its witness cannot be read: " + e.what());
      continue;
    }
    if (!d.shows_on(o.device)) {
      r.known_defects_unchecked.push_back(id + ": shows on " + joined(d.devices, ", ") + " only, this sweep runs on " + o.device);
      continue;
    }
    const bool partners = o.relational && std::any_of(d.invariants.begin(), d.invariants.end(), is_relational);
    auto trial = [&](const FixSet& fixes) {
      return pool.submit([&](const CaseRunner& run) { return fix_trial(w, fixes, partners, 0, o, run, r.time); }).get();
    };
    const FixSet needs = o.registry.witness_fixes(d, version, false);
    const FixRun bare = trial(needs);
    if (bare.failed == std::vector<std::string>{"UNSUPPORTED"}) {   // this pool cannot run it: another dp, fp16 on a CPU
      r.known_defects_unchecked.push_back(id + ": its witness cannot run here (" + bare.message + ")");
      continue;
    }
    if (bare.conforms) {
      r.known_defect_problems.push_back(where + " no longer reproduces on " + (version.empty() ? "this version" : version) +
                                        ": its witness " + d.witness + " conforms without the fix" + needs_text(needs) + " (fixed upstream? remove the "
                                        "entry or narrow its versions)");
      continue;
    }
    const FixRun fixed = trial(o.registry.witness_fixes(d, version, true));
    if (!fixed.fix_error.empty()) r.known_defect_problems.push_back(where + ": the fix does not apply: " + fixed.fix_error);
    else if (!fixed.conforms)
      r.known_defect_problems.push_back(where + ": its fix does not make its witness " + d.witness + " conform: " + fixed.message);
    else r.known_defects_checked.push_back(id);
  }
}

}  // namespace

namespace {

// The seconds a trace says the implementation spent in its own steps and building its engine.
double own_seconds(const Trace& t) {
  double sum = 0;
  if (t.impl_details.contains("step_seconds") && t.impl_details["step_seconds"].is_array())
    for (const auto& x : t.impl_details["step_seconds"])
      if (x.is_number()) sum += x.get<double>();
  if (t.impl_details.contains("engine_setup_seconds") && t.impl_details["engine_setup_seconds"].is_number())
    sum += t.impl_details["engine_setup_seconds"].get<double>();
  return sum;
}

// Seconds this thread's runs waited for a worker that another of its lanes held: not the
// implementation's time, so run_impl_case leaves them out.
thread_local double waited_for_worker = 0;

}  // namespace

std::vector<CaseRunner> lanes_sharing(std::vector<CaseRunner> runners, int lanes) {
  std::vector<CaseRunner> out;
  for (auto& runner : runners) {
    auto shared = std::make_shared<CaseRunner>(std::move(runner));
    auto turn = std::make_shared<std::mutex>();
    for (int k = 0; k < std::max(1, lanes); ++k)
      out.push_back([shared, turn](const Scenario& s, const FixSet& fixes) {
        const auto asked = Clock::now();
        std::lock_guard<std::mutex> hold(*turn);
        waited_for_worker += since(asked);
        return (*shared)(s, fixes);
      });
  }
  return out;
}

CaseRun run_impl_case(const Scenario& s, const CaseRunner& run, bool with_partners, int index, const FixSet& fixes) {
  const auto t0 = Clock::now();
  const double waited_before = waited_for_worker;
  CaseRun c{s, run(s, fixes), {}};
  if (with_partners && c.trace.error.empty() && c.trace.unsupported.empty() && s.overflow.empty()) {
    std::vector<Scenario> partners;
    if (const Variant g = gas_variant(s); g.scenario) partners.push_back(*g.scenario);
    const auto stages = stage_variants(s);
    partners.push_back(stages[static_cast<size_t>(index) % stages.size()]);
    for (auto& p : partners) {
      p.source = "<generated>";
      Trace t = run(p, fixes);
      c.partners.emplace_back(std::move(p), std::move(t));
    }
  }
  c.seconds = since(t0) - (waited_for_worker - waited_before);
  c.step_seconds = own_seconds(c.trace);
  for (const auto& pt : c.partners) c.step_seconds += own_seconds(pt.second);
  return c;
}

FixSet unused_in_every_run(const CaseRun& c, const FixSet& fixes) {
  auto unused_in = [](const Trace& t) {
    std::set<std::string> out;
    if (const auto u = t.impl_details.find("fixes_unused"); u != t.impl_details.end() && u->is_array())
      for (const auto& id : *u)
        if (id.is_string()) out.insert(id.get<std::string>());
    return out;
  };
  std::set<std::string> unused = unused_in(c.trace);
  for (const auto& [_, t] : c.partners) {
    std::set<std::string> both;
    for (const auto& id : unused_in(t))
      if (unused.count(id)) both.insert(id);
    unused = std::move(both);
  }
  FixSet out;
  for (const auto& f : fixes)
    if (unused.count(f)) out.push_back(f);
  return out;
}

std::string decline_feature(const std::string& unsupported) {
  return clip_for_message(unsupported.substr(0, unsupported.find(':')), 60);
}

ImplSweepResult run_impl_sweep(const ImplSweepOptions& o, const rc::Gen<Scenario>& gen, std::vector<CaseRunner> runners) {
  if (o.cases < 1) throw Error(ErrorKind::Usage, "sweep: --cases must be at least 1");
  const auto start = Clock::now();
  ImplSweepResult r;
  r.workers = static_cast<int>(runners.size());
  RunnerPool pool(lanes_sharing(std::move(runners), o.lanes_per_worker));
  rc::Random random(o.seed);
  std::deque<PendingCase> in_flight;   // in case order, at most one per lane
  int drawn = 0;
  auto start_cases = [&] {   // drawn here, in order, from the one generator: same seed, same cases
    while (drawn < o.cases && !r.budget_exhausted && static_cast<int>(in_flight.size()) < pool.size()) {
      if (o.budget_seconds > 0 && since(start) >= o.budget_seconds) {
        r.budget_exhausted = true;
        break;
      }
      const int i = drawn++;
      // a configuration the plugin declines is counted under its knob and drawn again: the case
      // number counts cases the implementation runs
      rc::Shrinkable<Scenario> shrinkable = gen(random.split(), kGenSize);
      Scenario s = named(shrinkable.value(), case_name(o, i));
      for (int in_a_row = 1; s.impl_problem.rfind(kDeclinedDraw, 0) == 0; ++in_a_row) {
        ++r.declined_draws;
        ++r.declines_by_feature[decline_feature(s.impl_problem.substr(std::string(kDeclinedDraw).size()))];
        if (in_a_row >= o.max_declined_in_a_row)
          throw Error(ErrorKind::BadInput, o.impl + ": " + std::to_string(in_a_row) + " configurations in a row were declined "
                                           "(the last: " + s.impl_problem + "): its space has nothing this machine can run");
        shrinkable = gen(random.split(), kGenSize);
        s = named(shrinkable.value(), case_name(o, i));
      }
      generators::check_round_trip(s);
      // with several runners the hints are the explanations of the cases recorded before this one
      // started: they order attribution's trials, never change whether a case is explained
      auto outcome = pool.submit([s = std::move(s), i, hints = explanations_so_far(r), &o](const CaseRunner& runner) {
        return evaluate_case(s, i, hints, o, runner);
      });
      in_flight.push_back({i, std::move(shrinkable), std::move(outcome)});
    }
  };
  const auto settle = [&] {
    for (auto& p : in_flight) p.outcome.wait();
  };
  start_cases();
  while (!in_flight.empty()) {
    PendingCase p = std::move(in_flight.front());
    in_flight.pop_front();
    const CaseOutcome out = p.outcome.get();   // a runner's exception (a worker that cannot start) ends the sweep
    start_cases();                             // the runner it freed takes the next case
    record_case(p.shrinkable, p.index, out, o, pool, settle, r);
    if (o.recorded) {
      r.seconds = since(start);
      o.recorded(r);
    }
    if (o.progress)
      o.progress(r.cases_run, o.cases, since(start), static_cast<int>(r.failures.size()), static_cast<int>(r.unconfirmed.size()));
  }
  if (o.known_defects_given) check_known_defects(o, pool, r);
  r.seconds = since(start);
  return r;
}

bool ImplSweepResult::failed() const {
  if (!known_defect_problems.empty()) return true;
  return std::any_of(failures.begin(), failures.end(), [](const auto& f) { return !f.attribution.known; });
}

}  // namespace muoncheck
