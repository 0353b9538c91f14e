#include "harness/report/report_views.hpp"

#include "core/atomic_file.hpp"
#include <utility>

#include "core/bounded_json.hpp"
#include "harness/report/report.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/summary_markdown.hpp"

namespace muoncheck {

void write_report_views(const nlohmann::json& report, const ViewPaths& paths) {
  if (!paths.junit.empty()) write_file_atomically(paths.junit, junit_xml(report));
  if (!paths.summary_md.empty()) write_file_atomically(paths.summary_md, summary_markdown(report));
}

nlohmann::json load_report(const std::string& path) {
  // The bounded reader (depth, size, number range) either way; a sweep's record has no schema.
  auto j = read_json_file(path, "report");
  if (j.is_object() && !j.contains("schema") && j.value("command", "") == "sweep") return j;
  return checked_report(path, std::move(j));
}

}  // namespace muoncheck
