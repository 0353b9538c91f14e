// One self-contained HTML file from a muoncheck JSON report (no scripts, no network: inline CSS
// and SVG): the verdict and device, the scenarios (html_scenarios.hpp: an index with failures
// first, the INSENSITIVE and INCONCLUSIVE notes, then per scenario its verdicts, each FAIL linked
// to its repro line, and two plots — the weight error against the exact trajectory per step beside
// the control ensemble's with the band it allows, on a log axis, and the loss per step of the
// implementation beside the exact one), then the mutants' kill table and the sweep's result.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace muoncheck {

struct PlotSeries {
  std::string label;
  std::string color;
  std::vector<double> y;   // one value per step; non-finite or (log axis) non-positive values are gaps
  bool area = false;       // filled from the plot's floor up to y (a band), under the lines
};

// An SVG line plot of the series over their step index.
std::string svg_plot(const std::string& title, const std::vector<PlotSeries>& series, bool log_y);

std::string html_report(const nlohmann::json& report);

}  // namespace muoncheck
