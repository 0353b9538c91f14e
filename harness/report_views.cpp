#include "harness/report_views.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/summary_markdown.hpp"

namespace muoncheck {

std::vector<cli::OptionSpec> report_view_options() {
  return {{"junit", true, false, "also write the verdicts as JUnit XML to FILE (one testcase per scenario and invariant)"},
          {"summary-md", true, false, "also write a short Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)"}};
}

ViewPaths ViewPaths::from(const cli::Args& args) { return {args.value_or("junit", ""), args.value_or("summary-md", "")}; }

void write_report_views(const nlohmann::json& report, const ViewPaths& paths) {
  if (!paths.junit.empty()) write_file_atomically(paths.junit, junit_xml(report));
  if (!paths.summary_md.empty()) write_file_atomically(paths.summary_md, summary_markdown(report));
}

nlohmann::json load_report(const std::string& path) {
  const std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::BadInput, path + ": not JSON: " + e.what());
  }
  const bool report = j.is_object() && j.value("schema", "") == "muoncheck-report/1";
  const bool sweep = j.is_object() && j.value("command", "") == "sweep";
  if (!report && !sweep)
    throw Error(ErrorKind::BadInput, path + ": at /schema: expected \"muoncheck-report/1\" (or a sweep --json report), got " +
                                         (j.is_object() && j.contains("schema") ? j["schema"].dump().substr(0, 80) : std::string("none")));
  return j;
}

}  // namespace muoncheck
