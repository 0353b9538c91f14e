// Where the time of one judgement goes: for the first N cases of a sweep (or named
// scenarios), each part judge_scenario runs is timed on its own — the implementation's
// runs (the scenario, its relational variants, the gas-1 re-split, the determinism
// re-run), the oracle, the control ensembles, the stepwise re-oracle, and the bare
// rank-group set-up and teardown (an empty body on dp ranks). Wall and process CPU
// (user + sys) per part; numbers are printed, never asserted. Each part runs fresh and
// alone, so the table is the cost of the work: judge_scenario itself runs the
// implementation's runs two at a time (judge_runs.hpp) and takes oracle and control
// results from the memo where another judgement of the process already computed them.
//   judgement_phases [--cases N] [--seed S] [--precision double|float128] [SCENARIO...]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/sweep/sweep_runner.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "impl/comm/rank_group.hpp"
#include "impl/run_impl.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/numeric_invariants.hpp"
#include "properties/variants.hpp"

namespace mc = muoncheck;

namespace {

struct Clock {
  double wall = 0, cpu = 0;
  static Clock now() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto sec = [](timeval t) { return t.tv_sec + t.tv_usec * 1e-6; };
    return {std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
            sec(u.ru_utime) + sec(u.ru_stime)};
  }
};

struct Part {
  double wall = 0, cpu = 0;
  int count = 0;
};

std::map<std::string, Part> parts;
std::vector<std::string> order;
bool verbose = false;

template <class F>
auto timed(const std::string& name, F&& f) {
  if (!parts.count(name)) order.push_back(name);
  const Clock a = Clock::now();
  struct Add {
    const std::string& name;
    Clock a;
    ~Add() {
      const Clock b = Clock::now();
      auto& p = parts[name];
      p.wall += b.wall - a.wall, p.cpu += b.cpu - a.cpu, ++p.count;
    }
  } add{name, a};
  return f();
}

void judge_parts(const mc::Scenario& s, mc::oracle::Precision p) {
  const mc::impl::ImplOptions io;
  mc::impl::ImplResult base;
  try {
    base = timed("impl: the scenario", [&] { return mc::impl::run_impl(s, io); });
  } catch (const mc::Error&) {
    return;   // unsupported: judge_scenario stops here too
  }
  if (verbose) {
    std::map<std::string, int> kinds;
    for (const auto& c : base.collectives_by_rank.front()) ++kinds[mc::impl::collective_name(c.kind)];
    std::printf("%s: dp %d gas %d stage %d steps %d params %zu, %zu collectives (", s.name.c_str(), s.engine.dp,
                s.engine.gas, s.engine.stage, s.steps, s.model.params.size(), base.collectives_by_rank.front().size());
    for (const auto& [k, n] : kinds) std::printf(" %s %d", k.c_str(), n);
    std::printf(" ), %.3f s\n", base.wall_seconds);
  }
  timed("rank group set-up/teardown only (dp " + std::to_string(s.engine.dp) + ")",
        [&] { mc::impl::run_ranks(s.engine.dp, io.timeout, [](mc::impl::Communicator&) {}); return 0; });
  const auto exact = timed("oracle " + mc::oracle::precision_name(p), [&] { return mc::oracle::run_oracle(s, p); });
  std::set<std::string> fingerprints{mc::oracle::control_fingerprint(s)};
  const auto controls = timed("control ensemble: the scenario", [&] { return mc::oracle::run_control_ensemble(s, 8); });
  const mc::Observation observed = mc::observation_of(base);
  const mc::RunBundle b{s, observed, exact, controls, p};
  timed("stepwise (oracle + ensemble from impl state)", [&] { return mc::step_conforms(b); });
  std::vector<mc::Scenario> variants;
  for (const auto& v : {mc::gas_variant(s), mc::dp_variant(s), mc::bucket_variant(s)})
    if (v.scenario) variants.push_back(*v.scenario);
  for (const auto& v : mc::stage_variants(s)) variants.push_back(v);
  for (const auto& v : variants) {
    try {
      timed("impl: relational variants", [&] { return mc::impl::run_impl(v, io); });
    } catch (const mc::Error&) {
      continue;
    }
    if (fingerprints.insert(mc::oracle::control_fingerprint(v)).second)
      timed("control ensemble: variants (distinct)", [&] { return mc::oracle::run_control_ensemble(v, 8); });
  }
  if (const auto g = mc::gas1_resplit(s); g.scenario)
    timed("impl: gas-1 re-split (gathers-once)", [&] { return mc::impl::run_impl(*g.scenario, io); });
  timed("impl: determinism re-run", [&] { return mc::impl::run_impl(s, io); });
}

}  // namespace

int main(int argc, char** argv) {
  int cases = 10;
  uint64_t seed = 1;
  mc::oracle::Precision p = mc::oracle::Precision::float64;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) cases = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--precision" && i + 1 < argc) mc::oracle::parse_precision(argv[++i], p);
    else if (a == "--verbose") verbose = true;
    else names.push_back(a);
  }
  std::vector<mc::Scenario> scenarios;
  if (!names.empty()) scenarios = mc::select_scenarios(names, "scenarios", false);
  if (names.empty())
    for (int i = 0; i < cases; ++i) scenarios.push_back(mc::sweep_case(seed, i, {}, "case" + std::to_string(i + 1)));
  const Clock t0 = Clock::now();
  for (const auto& s : scenarios) judge_parts(s, p);
  const Clock t1 = Clock::now();
  std::printf("%-52s %6s %9s %9s\n", "part", "count", "wall s", "cpu s");
  for (const auto& n : order)
    std::printf("%-52s %6d %9.2f %9.2f\n", n.c_str(), parts[n].count, parts[n].wall, parts[n].cpu);
  std::printf("%-52s %6zu %9.2f %9.2f\n", "total", scenarios.size(), t1.wall - t0.wall, t1.cpu - t0.cpu);
}
