#include "harness/report/report.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/atomic_file.hpp"
#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "harness/report/backend_info.hpp"
#include "harness/report/build_info.hpp"
#include "harness/judge/process_info.hpp"
#include "impl/comm/communicator.hpp"
#include "impl/math/compute.hpp"
#include "properties/determinacy.hpp"

namespace muoncheck {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf.data();
}

std::string host_name() {
  std::array<char, 256> buf{};
  return ::gethostname(buf.data(), buf.size()) == 0 ? std::string(buf.data()) : "unknown";
}

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

// Wall time per step of the judged run and the measured bandwidth of its Muon collectives.
nlohmann::json timing_json(const ScenarioResult& r) {
  double total = 0.0;
  int timed = 0;
  for (const auto& s : r.steps)
    if (s.seconds >= 0) total += s.seconds, ++timed;
  nlohmann::json purposes = nlohmann::json::object();
  for (const auto& [purpose, t] : r.timing_by_purpose)
    purposes[purpose] = {{"calls", t.calls}, {"bytes", t.bytes}, {"seconds", t.seconds}, {"algbw_gbps", t.algbw_gbps},
                         {"busbw_gbps", t.busbw_gbps}};
  return {{"ranks", r.ranks}, {"step_seconds_mean", timed > 0 ? nlohmann::json(total / timed) : nlohmann::json(nullptr)},
          {"collectives", purposes}};
}

nlohmann::json scenario_json(const ScenarioResult& r) {
  nlohmann::json inv = nlohmann::json::array(), steps = nlohmann::json::array(), repro = nlohmann::json::array();
  for (const auto& v : r.verdicts) {
    inv.push_back({{"id", v.invariant}, {"status", status_name(v.status)}, {"metric", number_or_null(v.metric)},
                   {"threshold", number_or_null(v.threshold)}, {"message", v.message}});
    if (v.sensitivity >= 0)
      inv.back()["sensitivity"] = {{"band_over_update", number_or_null(v.sensitivity)}, {"where", v.sensitivity_where}};
    if (v.partner_crashed) inv.back()["partner_crashed"] = true;   // the ERROR is a re-split partner's crash
    if (v.worst) {
      const auto& w = *v.worst;
      const char* measure = w.measure == WorstCase::Measure::band ? "band" : w.measure == WorstCase::Measure::count ? "count" : "difference";
      inv.back()["worst"] = {{"measure", measure}, {"step", w.step}, {"param", w.param}, {"tensor", w.tensor},
                             {"error", number_or_null(w.error)}, {"band", number_or_null(w.band)}};
      if (!w.note.empty()) inv.back()["worst"]["note"] = w.note;
      if (!w.compared.empty()) inv.back()["worst"]["compared"] = w.compared;
    }
    if (v.spread >= 0)
      inv.back()["determinacy"] = {{"spread_over_update", number_or_null(v.spread)}, {"where", v.spread_where},
                                   {"undetermined_at", kUndeterminedAt}};
  }
  for (const auto& line : failing_lines(r)) repro.push_back(line);
  for (const auto& s : r.steps) {
    steps.push_back({{"step", s.step}, {"loss", number_or_null(s.loss)}, {"skipped", s.skipped}, {"scale", s.scale},
                     {"ns_calls", s.ns_calls}, {"bytes_by_kind", s.bytes_by_kind}, {"bytes_by_purpose", s.bytes_by_purpose},
                     {"error_vs_oracle", number_or_null(s.error_vs_oracle)}, {"control_error", number_or_null(s.control_error)}});
    if (s.seconds >= 0) steps.back()["seconds"] = s.seconds;
    steps.back()["exact_loss"] = number_or_null(s.exact_loss);
    steps.back()["band"] = number_or_null(s.band);
  }
  nlohmann::json out = {{"scenario", r.scenario}, {"source", r.source}, {"scenario_hash", r.scenario_hash}, {"faults", r.faults},
                        {"wall_seconds", r.wall_seconds}, {"executed", executed_count(r)}, {"verdicts", r.verdicts.size()},
                        {"invariants", inv}, {"steps", steps}, {"repro", repro}};
  if (r.ranks > 0) out["timing"] = timing_json(r);
  if (const auto note = inconclusive_note(r); !note.empty()) out["notes"] = nlohmann::json::array({note});
  if (r.error) out["error"] = {{"kind", kind_name(r.error->kind)}, {"message", r.error->message}};
  std::string where;
  if (const double s = scenario_sensitivity(r, &where); s >= 0)
    out["sensitivity"] = {{"band_over_update", number_or_null(s)}, {"where", where}, {"insensitive", !(s <= kInsensitiveAbove)}};
  return out;
}

}  // namespace

void throw_if_only_errors(const Summary& s, const std::vector<ScenarioResult>& results) {
  if (s.errors == 0 || s.fail > 0 || s.golden_fail > 0) return;
  for (const auto& r : results)
    if (r.error)
      throw Error(r.error->kind, std::to_string(s.errors) + " of " + std::to_string(results.size()) +
                                     " scenarios could not be judged; first: " + r.scenario + ": " + r.error->message);
}

Summary summarize(const std::vector<ScenarioResult>& results, const std::vector<GoldenResult>& golden,
                  const RunMetadata& meta) {
  Summary s;
  s.counts = executed_counts_of(results);
  s.executed_problems = executed_problems(s.counts, meta.min_executed, this_command_line());
  for (const auto& r : results) {
    s.errors += r.error ? 1 : 0;
    for (const auto& v : r.verdicts) {
      switch (v.status) {
        case Status::pass: ++s.pass; break;
        case Status::fail: ++s.fail; break;
        case Status::unsupported: ++s.unsupported; break;
        case Status::skipped: ++s.skipped; break;
        case Status::inconclusive: ++s.inconclusive; break;
      }
    }
  }
  for (const auto& g : golden) s.golden_fail += !g.ok;
  return s;
}

nlohmann::json build_report(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                            const std::vector<GoldenResult>& golden, const Summary& sum) {
  nlohmann::json scen = nlohmann::json::array(), gold = nlohmann::json::array(), repro = nlohmann::json::array();
  for (const auto& r : results) {
    scen.push_back(scenario_json(r));
    for (const auto& line : scen.back()["repro"]) repro.push_back(line);
  }
  for (const auto& g : golden) {
    gold.push_back({{"scenario", g.scenario}, {"status", g.ok ? "PASS" : "FAIL"},
                    {"worst_relative", number_or_null(g.worst_relative)}, {"message", g.message}});
    if (!g.ok) repro.push_back("muoncheck golden check " + g.scenario);
  }
  nlohmann::json idle = nlohmann::json::array();
  for (const auto& i : sum.counts.idle) idle.push_back(i.scenario);
  const BuildInfo build = build_info();
  return {{"schema", kReportSchema},
          {"metadata",
           {{"time", utc_now()},
            {"command", meta.command},
            {"argv", process_argv()},
            {"git_commit", build.git_commit},
            {"git_dirty", build.git_dirty},
            {"build", {{"type", build.build_type}, {"cxx_flags", build.cxx_flags}, {"cuda", build.cuda}}},
            {"muoncheck_version", MUONCHECK_VERSION},
            {"backend", meta.backend},
            {"compiler", compiler_description()},
            {"gloo_version", gloo_version()},
            {"gpus", impl::cuda_device_count()},
            {"nccl_version", impl::nccl_library_version()},
            {"host", host_name()}}},
          {"scenarios", scen},
          {"golden", gold},
          {"repro", repro},
          {"summary",
           {{"ok", sum.ok()}, {"pass", sum.pass}, {"fail", sum.fail}, {"errors", sum.errors}, {"unsupported", sum.unsupported},
            {"skipped", sum.skipped}, {"inconclusive", sum.inconclusive}, {"golden_fail", sum.golden_fail}, {"scenarios", results.size()},
            {"executed", sum.counts.executed}, {"verdicts", sum.counts.verdicts},
            {"executed_share", sum.counts.share()}, {"min_executed", meta.min_executed},
            {"idle_scenarios", idle}, {"executed_problems", sum.executed_problems}}}};
}

void write_report(const std::string& path, const nlohmann::json& report) {
  write_file_atomically(path, report.dump(2) + "\n");
}

nlohmann::json read_report(const std::string& path) { return checked_report(path, read_json_file(path, "report")); }

nlohmann::json checked_report(const std::string& path, nlohmann::json j) {
  const auto* schema = j.is_object() && j.contains("schema") ? &j["schema"] : nullptr;
  if (!schema || *schema != kReportSchema)
    throw bad_input(path, schema ? "/schema" : "", std::string("a report with \"schema\": \"") + kReportSchema + "\"",
                    schema ? describe_json(*schema) : describe_json(j));
  return j;
}

}  // namespace muoncheck
