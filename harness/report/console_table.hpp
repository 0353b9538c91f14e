// The console view of a run: per scenario, one row per invariant with its status
// and the metric beside its threshold, and how many verdicts were executed; then a
// pasteable list of failing cases, one repro line each. The same records feed the
// JSON report.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "harness/report/report.hpp"
#include "harness/judge/scenario_result.hpp"

namespace muoncheck {

void print_scenario_table(std::FILE* out, const ScenarioResult& r);
void print_golden_line(std::FILE* out, const GoldenResult& g);
// The failing cases (failed invariants, scenarios that judged nothing, golden failures), the
// summary line with the executed counts, and one "not OK:" line per executed-share problem.
void print_failures_and_summary(std::FILE* out, const std::vector<ScenarioResult>& results,
                                const std::vector<GoldenResult>& golden, const Summary& s);
// The executed counts of a run and one "not OK:" line per problem (commands without a suite summary).
void print_executed_counts(std::FILE* out, const ExecutedCounts& c, const std::vector<std::string>& problems);

}  // namespace muoncheck
