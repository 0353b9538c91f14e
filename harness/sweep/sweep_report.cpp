#include "harness/sweep/sweep_report.hpp"

#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "impl/math/compute.hpp"
#include "impl/run_impl.hpp"
#include "properties/determinacy.hpp"

namespace muoncheck {

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

nlohmann::json size_json(const generators::ScenarioSize& z) {
  return {{"params", z.params}, {"elements", z.elements}, {"steps", z.steps}, {"dp", z.dp}, {"gas", z.gas}};
}

void print_sweep_progress(std::FILE* out, int done, int total, double seconds, int failures, int unconfirmed) {
  static const bool tty = isatty(fileno(out));
  if (!tty && done % 25 != 0 && done != total && failures == 0) return;   // logs get a line every 25 cases
  std::fprintf(out, "%scase %d/%d  %.1fs  failures %d  unconfirmed %d%s", tty ? "\r" : "", done, total, seconds,
               failures, unconfirmed, tty ? "  " : "\n");
  std::fflush(out);
}

void print_sweep_summary(std::FILE* out, const SweepOptions& o, const SweepResult& r) {
  std::fprintf(out, "\nsweep seed %llu%s%s: %d case%s in %.1fs (%.1f cases/min), %d unsupported%s\n",
               static_cast<unsigned long long>(o.seed), o.faults.empty() ? "" : ", fault ",
               joined(o.faults, " ").c_str(), r.cases_run, r.cases_run == 1 ? "" : "s", r.seconds, r.cases_per_minute(),
               r.unsupported, r.budget_exhausted ? " (stopped by --budget)" : "");
  if (r.inconclusive > 0)
    std::fprintf(out, "%d case%s INCONCLUSIVE (a numeric question its precision cannot answer; judged on, never shrunk towards); "
                      "smallest figure there %.3g (case %d)\n",
                 r.inconclusive, r.inconclusive == 1 ? "" : "s", r.spread.narrowest_inconclusive, r.spread.narrowest_inconclusive_case);
  std::fprintf(out, "widest control-ensemble spread of a conclusive case: %.3g of an update (case %d; INCONCLUSIVE from %g)\n",
               r.spread.widest_conclusive, r.spread.widest_conclusive_case, kUndeterminedAt);
  for (const auto& u : r.unconfirmed)
    std::fprintf(out, "note: case %d failed %s with the double oracle but passed in float128 (not a failure): %s\n",
                 u.index, joined(u.invariants, ", ").c_str(), u.message.c_str());
  // Last, so it cannot be missed: how much was judged, and why that is not OK.
  auto print_counts = [&] {
    std::fprintf(out, "%s over the cases' first judgements\n", executed_text(r.counts).c_str());
    for (const auto& p : sweep_executed_problems(o, r)) std::fprintf(out, "not OK: %s\n", p.c_str());
  };
  if (!r.failure) {
    for (const auto& p : r.known_defect_problems) std::fprintf(out, "not OK: %s\n", p.c_str());
    if (o.faults.empty())
      std::fprintf(out, "%sno generated scenario violated an invariant\n", sweep_executed_problems(o, r).empty() && !r.failed() ? "PASS: " : "");
    else std::fprintf(out, "NOT FOUND: fault %s survived %d cases\n", joined(o.faults, " ").c_str(), r.cases_run);
    print_counts();
    return;
  }
  const auto& c = *r.failure;
  if (c.attribution.known) std::fprintf(out, "KNOWN DEFECT after %d cases: %s\n", c.found_after, c.message.c_str());
  else if (o.faults.empty()) std::fprintf(out, "FAIL after %d cases: %s\n", c.found_after, c.message.c_str());
  else std::fprintf(out, "found fault %s after %d cases: %s\n", joined(o.faults, " ").c_str(), c.found_after, c.message.c_str());
  std::fprintf(out, "invariants failing on the minimal case (float128): %s\n", joined(c.invariants, ", ").c_str());
  std::fprintf(out, "shrunk in %d steps (%d judgements) from %s\n  to %s\n", c.shrink_steps, c.shrink_judgements,
               describe(c.original_size).c_str(), describe(c.shrunk_size).c_str());
  std::fprintf(out, "minimal scenario: %s\n%s\nregenerate: %s\n", c.path.c_str(), c.repro.c_str(), c.regenerate.c_str());
  if (c.attribution.verdict != AttributionVerdict::not_asked) std::fprintf(out, "attribution: %s\n", c.attribution.text().c_str());
  for (const auto& p : r.known_defect_problems) std::fprintf(out, "not OK: %s\n", p.c_str());
  print_counts();
}

nlohmann::json case_record_json(const SweepCaseRecord& c) {
  using nlohmann::json;
  json idle = json::array();
  for (const auto& i : c.counts.idle) idle.push_back({{"scenario", i.scenario}, {"why", i.why}, {"repro", i.repro}});
  json unconfirmed = nullptr;
  if (c.unconfirmed) unconfirmed = {{"invariants", c.unconfirmed->invariants}, {"message", c.unconfirmed->message}};
  return {{"case", c.number}, {"unsupported", c.unsupported}, {"inconclusive", c.inconclusive},
          {"spread", std::isfinite(c.spread) ? json(c.spread) : json(nullptr)},   // null: infinite (a NaN verdict)
          {"executed", c.counts.executed}, {"verdicts", c.counts.verdicts}, {"skipped", c.counts.skipped},
          {"unsupported_verdicts", c.counts.unsupported}, {"inconclusive_verdicts", c.counts.inconclusive},
          {"idle", idle}, {"unconfirmed", unconfirmed}, {"failed", c.failed}};
}

nlohmann::json sweep_json(const SweepOptions& o, const SweepResult& r) {
  using nlohmann::json;
  json j = {{"command", "sweep"},           {"seed", o.seed},
            {"cases_requested", o.cases},   {"cases_run", r.cases_run},
            {"budget_seconds", o.budget_seconds}, {"budget_exhausted", r.budget_exhausted},
            {"faults", o.faults},           {"focus", o.focus.label},
            {"seconds", r.seconds},         {"cases_per_minute", r.cases_per_minute()},
            {"unsupported", r.unsupported}, {"inconclusive_cases", r.inconclusive},
            {"spread_over_update", {{"by_decade", r.spread.by_decade},
                                    {"widest_conclusive", r.spread.widest_conclusive},
                                    {"widest_conclusive_case", r.spread.widest_conclusive_case},
                                    {"narrowest_inconclusive", std::isfinite(r.spread.narrowest_inconclusive) ? json(r.spread.narrowest_inconclusive) : json(nullptr)},
                                    {"narrowest_inconclusive_case", r.spread.narrowest_inconclusive_case},
                                    {"undetermined_at", kUndeterminedAt}}},
            {"oracle_precision", "double, failures confirmed in float128"},
            {"executed", r.counts.executed}, {"verdicts", r.counts.verdicts},
            {"executed_share", r.counts.share()}, {"min_executed", o.min_executed},
            {"executed_problems", sweep_executed_problems(o, r)}};
  j["shard"] = {{"index", o.shard + 1}, {"count", o.shards}};
  j["backend"] = impl::compute_backend_name(o.backend);
  j["comm"] = impl::comm_backend_name(o.comm);
  json cases = json::array();
  for (const auto& c : r.cases) cases.push_back(case_record_json(c));
  j["cases"] = cases;
  json unconfirmed = json::array();
  for (const auto& u : r.unconfirmed)
    unconfirmed.push_back({{"case", u.index}, {"invariants", u.invariants}, {"message", u.message}});
  j["unconfirmed"] = unconfirmed;
  if (r.failure) {
    const auto& c = *r.failure;
    j["failure"] = {{"found_after", c.found_after},       {"invariants", c.invariants},
                    {"message", c.message},               {"original", size_json(c.original_size)},
                    {"shrunk", size_json(c.shrunk_size)}, {"shrink_steps", c.shrink_steps},
                    {"shrink_judgements", c.shrink_judgements}, {"scenario_file", c.path},
                    {"repro", c.repro}, {"regenerate", c.regenerate}, {"attribution", attribution_json(c.attribution)}};
  } else {
    j["failure"] = nullptr;
  }
  // The record every sweep writes (impl_sweep_report.cpp the same): defects, failing cases, the
  // known-defect check, and the verdict. Our sweep stops at its first failure: one case, one defect.
  json defects = json::array(), failures = json::array();
  if (r.failure) {
    json d = j["failure"];
    d["occurrences"] = 1;
    defects.push_back(d);
    failures.push_back({{"case", r.failure->found_after}, {"invariants", r.failure->invariants}, {"message", r.failure->message},
                        {"defect", 1}, {"attribution", attribution_json(r.failure->attribution)}});
  }
  j["defects"] = defects;
  j["failures"] = failures;
  j["failing_cases"] = failures.size();
  j["known_defects"] = r.known_defects.empty() ? json(nullptr) : json{{"file", r.known_defects}, {"given", true}};
  j["known_defect_problems"] = r.known_defect_problems;
  j["ok"] = !r.failed() && sweep_executed_problems(o, r).empty();
  return j;
}

void write_sweep_json(const std::string& path, const SweepOptions& o, const SweepResult& r) {
  write_file_atomically(path, sweep_json(o, r).dump(2) + "\n");
}

}  // namespace muoncheck
