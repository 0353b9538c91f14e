// The other views of a report a command writes: `--junit FILE` (JUnit XML for CI) and
// `--summary-md FILE` (a Markdown job summary), and reading a report back (diff, html).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>


namespace muoncheck {

struct ViewPaths {
  std::string junit;        // --junit FILE ("" none)
  std::string summary_md;   // --summary-md FILE ("" none)
  bool any() const { return !junit.empty() || !summary_md.empty(); }
};

// Writes the views asked for (none when both paths are empty).
void write_report_views(const nlohmann::json& report, const ViewPaths& paths);

// A report written by muoncheck (any command that writes one, sweep --json included), read
// through the bounded JSON reader. BadInput naming the file and JSON path otherwise.
nlohmann::json load_report(const std::string& path);

}  // namespace muoncheck
