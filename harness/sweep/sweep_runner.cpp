#include "harness/sweep/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/sweep/shrink_failure.hpp"

namespace muoncheck {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kGenSize = 100;   // the generators draw from their full ranges at every size

// What one judgement of one scenario said.
struct Judgement {
  std::vector<std::string> failed;   // invariant ids with status FAIL
  std::string message;               // the first failure's message
  bool unsupported = false;
  bool inconclusive = false;         // a numeric question the case's precision cannot answer
  double spread = 0.0;               // its worst control-ensemble spread over an update
  ScenarioResult result;             // the verdicts themselves (for the executed counts)
};

Judgement judge(const Scenario& s, const SweepOptions& o, oracle::Precision p, const std::set<std::string>& only) {
  JudgeOptions jo;
  jo.faults = o.faults;
  jo.precision = p;
  jo.only = only;
  jo.timeout = o.timeout;
  jo.backend = o.backend;
  jo.comm = o.comm;
  jo.control_members = o.control_members;
  Judgement j;
  j.result = judge_scenario(s, jo);
  for (const auto& v : j.result.verdicts) {
    if (v.status == Status::unsupported) j.unsupported = true;
    if (v.status == Status::inconclusive) j.inconclusive = true;
    if (!(v.spread <= j.spread)) j.spread = std::isnan(v.spread) ? INFINITY : v.spread;
    if (v.status != Status::fail) continue;   // only a FAIL is a failure: shrinking never descends into INCONCLUSIVE
    if (j.failed.empty()) j.message = v.invariant + ": " + v.message;
    j.failed.push_back(v.invariant);
  }
  return j;
}

rc::Shrinkable<Scenario> case_shrinkable(uint64_t seed, int index, const generators::Focus& focus) {
  rc::Random random(seed);
  rc::Random r = random.split();
  for (int i = 0; i < index; ++i) r = random.split();
  return generators::scenario(focus)(r, kGenSize);
}

Scenario named(Scenario s, const std::string& name) {
  s.name = name;
  s.source = "<generated>";
  return s;
}

std::string case_name(const SweepOptions& o, int index) {
  std::string n = "sweep-s" + std::to_string(o.seed) + "-c" + std::to_string(index + 1);
  for (const auto& f : o.faults) n += "-" + f;
  return n;
}

std::string backend_flags(const SweepOptions& o) {
  std::string f;
  if (o.backend != impl::ComputeBackend::cpu) f += " --backend " + impl::compute_backend_name(o.backend);
  if (o.comm != impl::CommBackend::gloo) f += " --comm " + impl::comm_backend_name(o.comm);
  return f;
}

std::string repro_line(const std::string& path, const std::vector<std::string>& invariants, const SweepOptions& o) {
  std::string line = "muoncheck run " + path;
  if (!invariants.empty()) line += " --invariant " + invariants.front();
  for (const auto& f : o.faults) line += " --fault " + f;
  return line + backend_flags(o);
}

// The sweep that ends with case `index` (0-based): it regenerates and judges that case.
std::string sweep_repro_line(const SweepOptions& o, int index) {
  std::string line = "muoncheck sweep --seed " + std::to_string(o.seed) + " --cases " + std::to_string(index + 1);
  for (const auto& f : o.faults) line += " --fault " + f;
  if (o.focus.label != generators::Focus{}.label) line += " --focus " + o.focus.label;
  return line + backend_flags(o);
}

// Shrinks a confirmed failure, re-confirms the minimal case in float128 (walking
// back along the shrink path if a smaller case only failed in double) and saves it.
SweepCounterexample minimise(const rc::Shrinkable<Scenario>& failing, int index, const std::set<std::string>& confirmed,
                             const SweepOptions& o) {
  const std::string name = case_name(o, index);
  const ShrinkPath path = shrink_failure(
      failing, [&](const Scenario& s) { return !judge(named(s, name), o, oracle::Precision::float64, confirmed).failed.empty(); },
      o.max_shrink_judgements, o.max_shrink_seconds);
  SweepCounterexample c;
  c.found_after = index + 1;
  c.original = named(failing.value(), name);
  c.original_size = generators::size_of(c.original);
  c.shrink_judgements = path.judgements;
  for (size_t k = path.steps.size(); k-- > 0;) {
    Scenario s = named(path.steps[k].value(), name);
    const Judgement j = judge(s, o, oracle::Precision::float128, confirmed);
    if (j.failed.empty() && k > 0) continue;   // failed only in double: take the previous, larger case
    c.shrunk = s;
    c.invariants = j.failed.empty() ? std::vector<std::string>(confirmed.begin(), confirmed.end()) : j.failed;
    c.message = j.message;
    c.shrink_steps = static_cast<int>(k);
    break;
  }
  c.shrunk.description = "shrunk from case " + std::to_string(index + 1) + " of `muoncheck sweep --seed " +
                         std::to_string(o.seed) + "` (" + c.original.description + ")";
  c.shrunk_size = generators::size_of(c.shrunk);
  generators::check_round_trip(c.shrunk);
  std::filesystem::create_directories(o.cases_dir);
  c.path = (std::filesystem::path(o.cases_dir) / (name + ".json")).string();
  save_scenario(c.shrunk, c.path);
  c.repro = repro_line(c.path, c.invariants, o);
  c.regenerate = sweep_repro_line(o, index);
  return c;
}

}  // namespace

void SpreadTally::add(int case_number, double figure, bool inconclusive) {
  char decade[16];
  if (std::isinf(figure)) std::snprintf(decade, sizeof decade, "inf");
  else if (!(figure > 0)) std::snprintf(decade, sizeof decade, "0");   // no numeric verdict, or nothing moved
  else std::snprintf(decade, sizeof decade, "1e%+03d", std::clamp(static_cast<int>(std::floor(std::log10(figure))), -12, 12));
  ++by_decade[decade];
  if (!inconclusive && figure > widest_conclusive) widest_conclusive = figure, widest_conclusive_case = case_number;
  if (inconclusive && figure < narrowest_inconclusive) narrowest_inconclusive = figure, narrowest_inconclusive_case = case_number;
}

Scenario sweep_case(uint64_t seed, int index, const generators::Focus& focus, const std::string& name) {
  return named(case_shrinkable(seed, index, focus).value(), name);
}

SweepResult run_sweep(const SweepOptions& o) {
  if (o.cases < 1) throw Error(ErrorKind::Usage, "sweep: --cases must be at least 1");
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  SweepResult result;
  rc::Random random(o.seed);
  for (int i = 0; i < o.cases; ++i) {
    if (o.budget_seconds > 0 && elapsed() >= o.budget_seconds) {
      result.budget_exhausted = true;
      break;
    }
    const rc::Shrinkable<Scenario> shrinkable = generators::scenario(o.focus)(random.split(), kGenSize);
    const Scenario s = named(shrinkable.value(), case_name(o, i));
    generators::check_round_trip(s);
    const Judgement quick = judge(s, o, oracle::Precision::float64, {});
    ++result.cases_run;
    result.counts.add(quick.result, sweep_repro_line(o, i));
    if (quick.unsupported) ++result.unsupported;
    if (quick.inconclusive) ++result.inconclusive;
    result.spread.add(i + 1, quick.spread, quick.inconclusive);
    if (!quick.failed.empty()) {
      const std::set<std::string> suspects(quick.failed.begin(), quick.failed.end());
      const Judgement sure = judge(s, o, oracle::Precision::float128, suspects);
      if (sure.failed.empty()) {
        result.unconfirmed.push_back({i + 1, quick.failed, quick.message});
      } else {
        result.failure = minimise(shrinkable, i, {sure.failed.begin(), sure.failed.end()}, o);
      }
    }
    if (o.progress)
      o.progress(result.cases_run, o.cases, elapsed(), result.failure ? 1 : 0, static_cast<int>(result.unconfirmed.size()));
    if (result.failure) break;
  }
  result.seconds = elapsed();
  return result;
}

std::vector<std::string> sweep_executed_problems(const SweepOptions& o, const SweepResult& r) {
  return executed_problems(r.counts, o.min_executed, sweep_repro_line(o, std::max(0, r.cases_run - 1)));
}

}  // namespace muoncheck
