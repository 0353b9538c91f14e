// One self-contained HTML file from a muoncheck JSON report (no scripts, no network: inline CSS
// and SVG): the verdict and device, per scenario its verdicts and two plots — the weight error
// against the exact trajectory per step beside the control ensemble's (the band's measure) on a
// log axis, and the loss per step of the implementation beside the exact one — then the mutants'
// kill table and the sweep's result.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace muoncheck {

struct PlotSeries {
  std::string label;
  std::string color;
  std::vector<double> y;   // one value per step; non-finite or (log axis) non-positive values are gaps
};

// An SVG line plot of the series over their step index.
std::string svg_plot(const std::string& title, const std::vector<PlotSeries>& series, bool log_y);

std::string html_report(const nlohmann::json& report);

}  // namespace muoncheck
