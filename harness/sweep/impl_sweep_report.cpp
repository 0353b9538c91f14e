#include "harness/sweep/impl_sweep_report.hpp"

#include "core/scenario_io.hpp"
#include "harness/sweep/sweep_report.hpp"

namespace muoncheck {

namespace {

// The share of the workers' time spent in the implementation: time.implementation (summed over
// the workers) over seconds × workers.
double implementation_share(const ImplSweepResult& r) {
  return r.seconds > 0 ? r.time.implementation / (r.seconds * r.workers) : 0.0;
}

}  // namespace

void print_impl_sweep_summary(std::FILE* out, const ImplSweepOptions& o, const ImplSweepResult& r) {
  const int ran = r.cases_run - r.declined;
  std::fprintf(out, "\nsweep --impl %s (%s) seed %llu: %d case%s in %.1fs on %d worker%s (%.1f cases/min; %.0f%% of the "
               "workers' time in the implementation, %.0f%% in its own steps), %d declined (%.0f%%), %d ERROR%s\n",
               o.impl.c_str(), r.implementation.empty() ? "?" : r.implementation.c_str(),
               static_cast<unsigned long long>(o.seed), r.cases_run, r.cases_run == 1 ? "" : "s", r.seconds, r.workers,
               r.workers == 1 ? "" : "s", r.cases_per_minute(), 100 * implementation_share(r),
               r.seconds > 0 ? 100 * r.time.steps / (r.seconds * r.workers) : 0.0, r.declined,
               r.cases_run ? 100.0 * r.declined / r.cases_run : 0.0, r.errors, r.budget_exhausted ? " (stopped by --budget)" : "");
  const int draws = r.cases_run + r.declined_draws;
  if (r.declined_draws)
    std::fprintf(out, "%d configuration%s drawn, %d declined when drawn and drawn again (%.0f%%)\n", draws,
                 draws == 1 ? "" : "s", r.declined_draws, 100.0 * r.declined_draws / draws);
  for (const auto& [feature, n] : r.declines_by_feature)
    std::fprintf(out, "  declined %4d  (%4.1f%% of the draws)  %s\n", n, draws ? 100.0 * n / draws : 0.0, feature.c_str());
  if (r.partner_runs)
    std::fprintf(out, "%d gas/stage re-splits run for the relational invariants, %d of them raised (such an ERROR is a "
                 "defect of its own, shrunk when the sweep draws that case)\n", r.partner_runs, r.partner_errors);
  std::fprintf(out, "features over the %d cases run:", ran);
  for (const auto& [feature, n] : r.features_drawn) std::fprintf(out, " %s %d;", feature.c_str(), n);
  std::fprintf(out, "\n");
  for (const auto& u : r.unconfirmed)
    std::fprintf(out, "note: case %d failed %s with the double oracle but passed in float128 (not a failure)\n", u.index,
                 joined(u.invariants, ", ").c_str());
  std::fprintf(out, "%zu failing case%s, %zu defect%s\n", r.failures.size(), r.failures.size() == 1 ? "" : "s",
               r.defects.size(), r.defects.size() == 1 ? "" : "s");
  for (size_t k = 0; k < r.defects.size(); ++k) {
    const auto& d = r.defects[k];
    std::fprintf(out, "DEFECT %zu (%d case%s, first case %d): %s\n  symptom: %s\n  needs: %s\n  shrunk in %d steps (%d runs%s) from %s\n"
                 "  to %s\n  minimal case: %s\n  %s\n",
                 k + 1, d.occurrences, d.occurrences == 1 ? "" : "s", d.found_after, d.message.c_str(),
                 d.symptom.c_str(), joined(d.features, ", ").c_str(), d.shrink_steps, d.shrink_judgements,
                 d.shrink_exhausted ? ", stopped by a bound" : "", describe(d.original_size).c_str(),
                 describe(d.shrunk_size).c_str(), d.path.c_str(), d.repro.c_str());
  }
  int unattributed = 0;
  for (const auto& f : r.failures) unattributed += f.defect < 0;
  if (unattributed)
    std::fprintf(out, "%d failing case%s unattributed (no defect's symptom and features match; --max-defects %d reached):\n",
                 unattributed, unattributed == 1 ? "" : "s", o.max_defects);
  for (const auto& f : r.failures)
    if (f.defect < 0)
      std::fprintf(out, "  case %d: %s\n    %s\n", f.index, f.symptoms.empty() ? "?" : f.symptoms.front().c_str(), f.repro.c_str());
  if (!o.registry.defects.empty()) {
    std::fprintf(out, "attribution by counterfactual (%zu known defect%s of %s): %d failing case%s explained, %d NEW, %d other\n",
                 o.registry.defects.size(), o.registry.defects.size() == 1 ? "" : "s", o.registry.path.c_str(), r.explained,
                 r.explained == 1 ? "" : "s", r.fresh, static_cast<int>(r.failures.size()) - r.explained - r.fresh);
    for (size_t k = 0; k < r.defects.size(); ++k)
      std::fprintf(out, "  DEFECT %zu: %s\n", k + 1, r.defects[k].attribution.text().c_str());
    for (const auto& f : r.failures)
      if (f.attribution.verdict != AttributionVerdict::explained)
        std::fprintf(out, "  case %d: %s\n", f.index, f.attribution.text().c_str());
  }
  if (o.known_defects_given)
    std::fprintf(out, "known defects checked on their witnesses: %s\n", r.known_defects_checked.empty() ? "none" : joined(r.known_defects_checked, ", ").c_str());
  for (const auto& u : r.known_defects_unchecked) std::fprintf(out, "known defect not checked here: %s\n", u.c_str());
  for (const auto& p : r.known_defect_problems) std::fprintf(out, "not OK: %s\n", p.c_str());
  std::fprintf(out, "%s%s over the cases' first judgements\n", !r.failed() ? "PASS: " : "",
               executed_text(r.counts).c_str());
  for (const auto& p : executed_problems(r.counts, o.min_executed, this_command_line()))
    std::fprintf(out, "not OK: %s\n", p.c_str());
}

nlohmann::json impl_sweep_json(const ImplSweepOptions& o, const ImplSweepResult& r) {
  using nlohmann::json;
  json j = {{"command", "sweep"}, {"impl", o.impl}, {"implementation", r.implementation}, {"seed", o.seed},
            {"cases_requested", o.cases}, {"cases_run", r.cases_run}, {"declined", r.declined},
            {"declined_draws", r.declined_draws}, {"draws", r.cases_run + r.declined_draws},
            {"declines_by_feature", r.declines_by_feature}, {"features_drawn", r.features_drawn},
            {"errors", r.errors}, {"partner_runs", r.partner_runs}, {"partner_errors", r.partner_errors}, {"seconds", r.seconds}, {"workers", r.workers},
            {"implementation_seconds", r.time.implementation},   // summed over the workers
            {"implementation_share", implementation_share(r)},     // of seconds × workers
            {"step_seconds", r.time.steps},   // in the implementation's own steps, summed over the workers
            // the harness's overhead: each worker's wall time less the implementation's own steps, per case
            {"overhead_seconds_per_case", r.cases_run ? (r.seconds * r.workers - r.time.steps) / r.cases_run : 0.0},
            {"overhead_share", r.seconds > 0 ? 1.0 - r.time.steps / (r.seconds * r.workers) : 0.0},
            {"cases_per_minute", r.cases_per_minute()}, {"budget_seconds", o.budget_seconds},
            {"budget_exhausted", r.budget_exhausted}, {"oracle_precision", "double, failures confirmed in float128"},
            {"executed", r.counts.executed}, {"verdicts", r.counts.verdicts},
            {"executed_share", r.counts.share()},
            {"executed_problems", executed_problems(r.counts, o.min_executed, this_command_line())}};
  json failures = json::array(), defects = json::array(), unconfirmed = json::array();
  int unattributed = 0;
  for (const auto& f : r.failures) {
    json x = {{"case", f.index}, {"invariants", f.invariants}, {"symptoms", f.symptoms}, {"message", f.message},
              {"features", f.features}, {"defect", f.defect < 0 ? json(nullptr) : json(f.defect + 1)}};
    if (f.defect < 0) x["repro"] = f.repro, ++unattributed;
    x["attribution"] = attribution_json(f.attribution);
    failures.push_back(std::move(x));
  }
  j["unattributed"] = unattributed;
  for (const auto& d : r.defects)
    defects.push_back({{"found_after", d.found_after}, {"occurrences", d.occurrences}, {"error", d.error},
                       {"symptom", d.symptom},
                       {"invariants", d.invariants}, {"message", d.message}, {"features", d.features},
                       {"original", size_json(d.original_size)}, {"shrunk", size_json(d.shrunk_size)},
                       {"shrink_steps", d.shrink_steps}, {"shrink_judgements", d.shrink_judgements},
                       {"shrink_exhausted", d.shrink_exhausted}, {"scenario_file", d.path}, {"repro", d.repro},
                       {"scenario", scenario_to_json(d.shrunk)}, {"attribution", attribution_json(d.attribution)}});
  // A defect is known only when every case grouped under it was explained as known.
  for (size_t k = 0; k < r.defects.size(); ++k) {
    bool all_known = r.defects[k].occurrences > 0;
    for (const auto& f : r.failures)
      if (f.defect == static_cast<int>(k)) all_known = all_known && f.attribution.known;
    defects[k]["attribution"]["known"] = all_known;
  }
  for (const auto& u : r.unconfirmed)
    unconfirmed.push_back({{"case", u.index}, {"invariants", u.invariants}, {"message", u.message}});
  j["failures"] = failures;
  j["failing_cases"] = r.failures.size();
  j["explained"] = r.explained;
  j["new"] = r.fresh;
  j["known_defects"] = o.registry.path.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json{{"file", o.registry.path}, {"entries", o.registry.defects.size()},
                                                                {"given", o.known_defects_given}, {"checked", r.known_defects_checked},
                                                                {"unchecked", r.known_defects_unchecked}};
  j["known_defect_problems"] = r.known_defect_problems;
  j["ok"] = !r.failed() && executed_problems(r.counts, o.min_executed, this_command_line()).empty();
  j["defects"] = defects;
  j["unconfirmed"] = unconfirmed;
  return j;
}

}  // namespace muoncheck
