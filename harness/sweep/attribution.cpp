#include "harness/sweep/attribution.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "harness/sweep/sweep_report.hpp"

namespace muoncheck {

namespace {

// The re-runs of one case, each fix set run at most once; the first fix that cannot be applied
// stops the search (its error is the verdict).
class Trials {
 public:
  Trials(const FixRun& failing, const FixTrial& run, int max_runs, double max_seconds = 0)
      : run_(run), max_runs_(max_runs), max_seconds_(max_seconds), start_(std::chrono::steady_clock::now()) {
    FixRun f = failing;
    f.fixes.clear();
    f.conforms = false;
    record(f);
  }

  // Whether the case conforms with `fixes`; false past max_runs or after a fix failed to apply.
  bool conforms(const FixSet& fixes) {
    const std::set<std::string> key(fixes.begin(), fixes.end());
    if (const auto it = seen_.find(key); it != seen_.end()) return runs_[it->second].conforms;
    if (!fix_error_.empty()) return false;
    if (reruns_ >= max_runs_ || (reruns_ > 0 && max_seconds_ > 0 && seconds_so_far() >= max_seconds_)) {
      exhausted_ = true;
      return false;
    }
    ++reruns_;
    FixRun r = run_(fixes);
    r.fixes = fixes;
    if (!r.fix_error.empty()) {
      fix_error_ = r.fix_error;
      r.conforms = false;
    }
    record(r);
    return r.conforms;
  }

  std::vector<FixRun> runs() const { return runs_; }
  const std::string& fix_error() const { return fix_error_; }
  bool exhausted() const { return exhausted_; }

 private:
  double seconds_so_far() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void record(const FixRun& r) {
    seen_[std::set<std::string>(r.fixes.begin(), r.fixes.end())] = runs_.size();
    runs_.push_back(r);
  }

  const FixTrial& run_;
  int max_runs_;
  double max_seconds_;
  std::chrono::steady_clock::time_point start_;
  int reruns_ = 0;
  bool exhausted_ = false;
  std::string fix_error_;
  std::vector<FixRun> runs_;
  std::map<std::set<std::string>, size_t> seen_;
};

FixSet without(const FixSet& c, const FixSet& part) {
  FixSet out;
  for (const auto& x : c)
    if (std::find(part.begin(), part.end(), x) == part.end()) out.push_back(x);
  return out;
}

// Zeller's ddmin with "the case conforms" as the property kept: `c` conforms; returns a subset
// that conforms and from which no single fix can be removed (when the runs allowed it).
FixSet ddmin(FixSet c, Trials& t) {
  size_t n = 2;
  while (c.size() >= 2) {
    const size_t chunk = (c.size() + n - 1) / n;
    std::vector<FixSet> parts;
    for (size_t i = 0; i < c.size(); i += chunk) parts.emplace_back(c.begin() + i, c.begin() + std::min(c.size(), i + chunk));
    bool reduced = false;
    for (const auto& p : parts)
      if (t.conforms(p)) {
        c = p, n = 2, reduced = true;
        break;
      }
    if (!reduced && parts.size() > 2)
      for (const auto& p : parts)
        if (const FixSet rest = without(c, p); t.conforms(rest)) {
          c = rest, n = std::max<size_t>(n - 1, 2), reduced = true;
          break;
        }
    if (reduced) continue;
    if (n >= c.size()) break;
    n = std::min(c.size(), 2 * n);
  }
  return c;
}

// The first hint that is a subset of `ran` (the applicable fixes whose code ran) and conforms, else
// ddmin's set from `ran` when it conforms, else from every applicable fix.
FixSet conforming_subset(const FixSet& applicable, const FixSet& ran, const std::vector<FixSet>& hints, Trials& t) {
  int tried = 0;
  for (const auto& h : hints) {
    if (tried >= kMaxHintsTried) break;
    if (h.empty() || !std::all_of(h.begin(), h.end(), [&](const auto& x) {
          return std::find(ran.begin(), ran.end(), x) != ran.end();
        }))
      continue;
    ++tried;
    if (t.conforms(h)) return h;
  }
  if (ran.size() < applicable.size() && t.conforms(ran)) return ddmin(ran, t);
  return ddmin(applicable, t);
}

}  // namespace

const char* verdict_name(AttributionVerdict v) {
  switch (v) {
    case AttributionVerdict::not_asked: return "not-asked";
    case AttributionVerdict::explained: return "explained";
    case AttributionVerdict::new_defect: return "new";
    case AttributionVerdict::fix_does_not_apply: return "fix-does-not-apply";
    case AttributionVerdict::fixed_run_declined: return "fixed-run-declined";
    case AttributionVerdict::rejected: return "rejected";
    case AttributionVerdict::confirmed: return "confirmed";
  }
  return "?";
}

Attribution attribute(const FixSet& applicable, const FixRun& failing, const FixTrial& run, int max_runs,
                      const std::vector<FixSet>& hints, double max_seconds) {
  Attribution a;
  if (applicable.empty()) {
    a.verdict = AttributionVerdict::new_defect;
    a.runs = {failing};
    return a;
  }
  Trials t(failing, run, max_runs, max_seconds);
  if (!t.conforms(applicable)) {
    a.runs = t.runs();
    a.fixes = applicable;
    const FixRun& fixed = a.runs.back();
    if (!t.fix_error().empty()) a.verdict = AttributionVerdict::fix_does_not_apply, a.problem = t.fix_error();
    else if (fixed.failed == std::vector<std::string>{"UNSUPPORTED"})   // nothing was judged with the fixes
      a.verdict = AttributionVerdict::fixed_run_declined, a.problem = fixed.message;
    else a.verdict = AttributionVerdict::new_defect;
    return a;
  }
  FixSet minimal = conforming_subset(applicable, without(applicable, t.runs().back().unused), hints, t);
  // 1-minimality shown, not assumed: each fix of the final set left out once, again after any
  // removal (ddmin ran most of these already; the trials are cached)
  for (bool removed = true; removed;) {
    removed = false;
    for (const FixSet tried = minimal; const auto& x : tried)
      if (t.conforms(without(minimal, {x}))) {
        minimal = without(minimal, {x});
        removed = true;
        break;
      }
  }
  a.runs = t.runs();
  if (!t.fix_error().empty()) {
    a.verdict = AttributionVerdict::fix_does_not_apply;
    a.problem = t.fix_error();
    a.fixes = applicable;
    return a;
  }
  a.verdict = AttributionVerdict::explained;
  a.fixes = minimal;
  a.minimal = !t.exhausted();
  return a;
}

Attribution check_claim(const FixSet& claimed, const FixRun& failing, const FixTrial& run) {
  Trials t(failing, run, 1);
  const bool ok = t.conforms(claimed);
  Attribution a;
  a.fixes = claimed;
  a.runs = t.runs();
  if (!t.fix_error().empty()) a.verdict = AttributionVerdict::fix_does_not_apply, a.problem = t.fix_error();
  else a.verdict = ok ? AttributionVerdict::confirmed : AttributionVerdict::rejected;
  return a;
}

std::string Attribution::text() const {
  const std::string set = fixes.empty() ? "(none)" : joined(fixes, " + ");
  const std::string reruns = std::to_string(runs.empty() ? 0 : runs.size() - 1) + " re-run" + (runs.size() == 2 ? "" : "s");
  auto first_failure = [&] {
    for (const auto& r : runs)
      if (r.fixes.size() == fixes.size() && !r.conforms) return r.message;
    return std::string();
  };
  switch (verdict) {
    case AttributionVerdict::not_asked: return "";
    case AttributionVerdict::explained:
      return std::string(known ? (fixes.size() == 1 ? "known defect " : "known defects ") : "explained by ") + set +
             ": conforms with " + (fixes.size() == 1 ? "its fix" : "these fixes") + (minimal ? ", fails without any one" : " (may not be minimal: re-run bound reached)") +
             " (" + reruns + ")";
    case AttributionVerdict::new_defect:
      return fixes.empty() ? "NEW: no known-defect fix applies to this implementation"
                           : "NEW: still fails with every applicable fix (" + set + "): " + first_failure() + " (" + reruns + ")";
    case AttributionVerdict::fix_does_not_apply: return "fix does not apply: " + problem;
    case AttributionVerdict::fixed_run_declined:
      return "undecided: with every applicable fix (" + set + ") nothing is judged, " + problem + " (" + reruns + ")";
    case AttributionVerdict::rejected:
      return "attribution to " + set + " REJECTED: the case still fails with " + (fixes.size() == 1 ? "its fix" : "these fixes") + ": " + first_failure();
    case AttributionVerdict::confirmed: return "attribution to " + set + " confirmed: the case conforms with " + (fixes.size() == 1 ? "its fix" : "these fixes");
  }
  return "";
}

nlohmann::json attribution_json(const Attribution& a) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : a.runs) {
    nlohmann::json x = {{"fixes", r.fixes}, {"conforms", r.conforms}, {"failed", r.failed}, {"message", r.message}};
    if (!r.fix_error.empty()) x["fix_error"] = r.fix_error;
    if (!r.unused.empty()) x["unused"] = r.unused;
    runs.push_back(std::move(x));
  }
  nlohmann::json j = {{"verdict", verdict_name(a.verdict)}, {"fixes", a.fixes}, {"known", a.known}, {"minimal", a.minimal},
                      {"runs", runs}, {"text", a.text()}};
  if (!a.problem.empty()) j["problem"] = a.problem;
  return j;
}

}  // namespace muoncheck
