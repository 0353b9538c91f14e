// A short Markdown summary of a muoncheck JSON report for a CI job summary
// ($GITHUB_STEP_SUMMARY): verdict and counts, every failing line with its repro, the kill table,
// the sweep's result and the device it ran on.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace muoncheck {

std::string summary_markdown(const nlohmann::json& report);

}  // namespace muoncheck
