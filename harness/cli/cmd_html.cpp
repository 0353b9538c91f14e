// muoncheck html REPORT.json -o FILE.html: the report as one self-contained page (harness/views/html_report.hpp).
#include <cstdio>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/write_output.hpp"
#include "harness/report/report_views.hpp"
#include "harness/views/html_report.hpp"

namespace muoncheck {
namespace {

void run(const cli::Args& args) {
  // `-o FILE` (the short form the parser leaves among the positionals) or `--out FILE`.
  std::vector<std::string> reports;
  auto out = args.value("out");
  const auto& pos = args.positionals();
  for (size_t i = 0; i < pos.size(); ++i) {
    if (pos[i] == "-o") {
      if (i + 1 >= pos.size()) throw Error(ErrorKind::Usage, "html: -o needs a value");
      if (out) throw Error(ErrorKind::Usage, "html: the output file given twice");
      out = pos[++i];
    } else {
      reports.push_back(pos[i]);
    }
  }
  if (reports.size() != 1) throw Error(ErrorKind::Usage, "html: give one report, REPORT.json");
  if (!out) throw Error(ErrorKind::Usage, "html: -o FILE.html is required");
  check_writable(*out);
  write_output(*out, html_report(load_report(reports[0])), "html");
}

}  // namespace

Command html_command() {
  return informational_command(
      {"html", "muoncheck html REPORT.json -o FILE.html",
       "Writes the report as one self-contained HTML page (inline CSS and SVG, nothing fetched): verdict\n"
       "and device, per scenario its verdicts, the weight error per step beside the control ensemble's and\n"
       "the loss per step beside the exact one, the mutants' kill table and the sweep's result.",
       options({"out/html"})},
      run);
}

}  // namespace muoncheck
