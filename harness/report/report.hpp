// The JSON conformance report (schemas/report.schema.json, "muoncheck-report/1"):
// run metadata, per-scenario verdicts, executed counts and steps, golden results,
// repro lines and a summary. Written atomically, so a crash never leaves half a report.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/judge/executed_counts.hpp"
#include "harness/judge/scenario_result.hpp"

namespace muoncheck {

constexpr const char* kReportSchema = "muoncheck-report/1";

struct RunMetadata {
  std::string command;      // "check", "run", ...
  std::string backend = "cpu";
  double min_executed = kDefaultMinExecuted;   // --min-executed: the gate on executed verdicts
};

struct Summary;
// The report of a run from its results and its summary (computed once, by summarize).
nlohmann::json build_report(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                            const std::vector<GoldenResult>& golden, const Summary& sum);
void write_report(const std::string& path, const nlohmann::json& report);
// A report read back (by tests and tools), bounded like every input; its "schema" must be
// kReportSchema. Throws Error{BadInput} "FILE: at /schema: expected ..., got ...".
nlohmann::json read_report(const std::string& path);
// j (read from path) when it is a muoncheck report, else BadInput naming path and /schema.
nlohmann::json checked_report(const std::string& path, nlohmann::json j);

// Counts of PASS/FAIL/UNSUPPORTED/SKIPPED/INCONCLUSIVE over every verdict, golden failures, and the
// executed counts with the reasons they make the run not OK (executed_counts.hpp).
struct Summary {
  int pass = 0, fail = 0, unsupported = 0, skipped = 0, inconclusive = 0, golden_fail = 0;
  int errors = 0;   // scenarios that could not be judged (ScenarioResult::error)
  ExecutedCounts counts;
  std::vector<std::string> executed_problems;
  bool ok() const { return fail == 0 && golden_fail == 0 && errors == 0 && executed_problems.empty(); }
};

// After the report is written: when scenarios errored and nothing failed, the error of the
// run (the first scenario error's kind; exit 3), naming how many and the first. Returns
// without throwing otherwise — a FAIL is the louder news, and exit 1 says it.
void throw_if_only_errors(const Summary& s, const std::vector<ScenarioResult>& results);
// A run's summary, computed once per run and passed to every view; `meta` gives the gate (min_executed).
Summary summarize(const std::vector<ScenarioResult>& results, const std::vector<GoldenResult>& golden,
                  const RunMetadata& meta);

}  // namespace muoncheck
