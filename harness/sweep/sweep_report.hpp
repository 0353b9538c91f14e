// How a sweep reports itself: the progress line while it runs, the closing lines
// (throughput, the counterexample and its repro line) and the JSON record written
// by --json. Printing only; the sweep's records come from sweep_runner.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/sweep/sweep_runner.hpp"

namespace muoncheck {

// "case 12/300  41.2s  failures 0  unconfirmed 0", rewritten in place on a terminal.
// Shared by the sweep reports (ours and --impl): "a, b, c" and a case's size as JSON.
std::string joined(const std::vector<std::string>& v, const std::string& sep);
nlohmann::json size_json(const generators::ScenarioSize& z);

void print_sweep_progress(std::FILE* out, int done, int total, double seconds, int failures, int unconfirmed);
void print_sweep_summary(std::FILE* out, const SweepOptions& o, const SweepResult& r);
// The record: totals, the counterexample, and every case's own counts ("cases"), so the records of
// a sweep's shards merge into the record of the whole (sweep_merge.hpp).
nlohmann::json sweep_json(const SweepOptions& o, const SweepResult& r);
nlohmann::json case_record_json(const SweepCaseRecord& c);
void write_sweep_json(const std::string& path, const SweepOptions& o, const SweepResult& r);

}  // namespace muoncheck
