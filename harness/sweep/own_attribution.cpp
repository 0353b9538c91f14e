#include "harness/sweep/own_attribution.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/judge/judge_scenario.hpp"

namespace muoncheck {

namespace {

FixRun judge_faults(const Scenario& s, const SweepOptions& o, const std::vector<std::string>& faults, oracle::Precision p,
                    const std::set<std::string>& only) {
  JudgeOptions jo;
  jo.faults = faults;
  jo.precision = p;
  jo.only = only;
  jo.timeout = o.timeout;
  jo.backend = o.backend;
  jo.comm = o.comm;
  jo.control_members = o.control_members;
  FixRun r;
  for (const auto& v : judge_scenario(s, jo).verdicts) {
    if (v.status != Status::fail) continue;
    if (r.failed.empty()) r.message = v.invariant + ": " + v.message;
    r.failed.push_back(v.invariant);
  }
  r.conforms = r.failed.empty();
  return r;
}

}  // namespace

FixRun judge_own_with_fixes(const Scenario& s, const SweepOptions& o, const KnownDefects& registry, const FixSet& fixes) {
  std::vector<std::string> faults = o.faults;
  for (const auto& id : fixes) {
    const KnownDefect* d = registry.find(id);
    if (!d || d->fix.kind != "fault") {
      FixRun r;
      r.fixes = fixes;
      r.failed = {"ERROR"};
      r.fix_error = "known defect " + id + ": " + (d ? "a fix of kind " + d->fix.kind + ", which our engine cannot apply" : "no such entry");
      r.message = r.fix_error;
      return r;
    }
    faults.erase(std::remove(faults.begin(), faults.end(), d->fix.target), faults.end());
  }
  FixRun quick = judge_faults(s, o, faults, oracle::Precision::float64, {});
  if (!quick.conforms) {   // confirmed in float128, as every sweep failure is
    FixRun sure = judge_faults(s, o, faults, oracle::Precision::float128, {quick.failed.begin(), quick.failed.end()});
    quick.failed = sure.failed, quick.message = sure.failed.empty() ? "" : sure.message, quick.conforms = sure.conforms;
  }
  quick.fixes = fixes;
  return quick;
}

std::vector<std::string> attribute_own_sweep(const SweepOptions& o, const KnownDefects& registry, bool known_defects_given,
                                             SweepResult& r) {
  std::vector<std::string> problems;
  const FixSet applicable = registry.applicable(kOwnEngineVersion);
  if (r.failure) {
    auto& c = *r.failure;
    FixRun failing;
    failing.failed = c.invariants;
    failing.message = c.message;
    c.attribution = attribute(applicable, failing, [&](const FixSet& fixes) { return judge_own_with_fixes(c.shrunk, o, registry, fixes); });
    c.attribution.known = known_defects_given && c.attribution.verdict == AttributionVerdict::explained;
  }
  if (!known_defects_given) return problems;
  for (const auto& id : applicable) {
    const KnownDefect& d = *registry.find(id);
    const std::string where = "known defect " + id + " (" + registry.path + ")";
    Scenario w;
    try {
      w = load_scenario(d.witness);
    } catch (const Error& e) {
      problems.push_back(where + ": its witness cannot be read: " + e.what());
      continue;
    }
    if (judge_own_with_fixes(w, o, registry, registry.witness_fixes(d, kOwnEngineVersion, false)).conforms) {
      problems.push_back(where + " no longer reproduces: its witness " + d.witness + " conforms without the fix (fixed? "
                         "remove the entry or narrow its versions)");
      continue;
    }
    const FixRun fixed = judge_own_with_fixes(w, o, registry, registry.witness_fixes(d, kOwnEngineVersion, true));
    if (!fixed.fix_error.empty()) problems.push_back(where + ": the fix does not apply: " + fixed.fix_error);
    else if (!fixed.conforms) problems.push_back(where + ": its fix does not make its witness " + d.witness + " conform: " + fixed.message);
  }
  return problems;
}

}  // namespace muoncheck
