// muoncheck diff OLD.json NEW.json: tonight's report against last night's (harness/views/report_diff.hpp).
#include <cstdio>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/report_views.hpp"
#include "harness/views/report_diff.hpp"

namespace muoncheck {
namespace {

Outcome run(const cli::Args& args) {
  if (args.positionals().size() != 2) throw Error(ErrorKind::Usage, "diff: give two reports, OLD.json NEW.json");
  const auto& old_path = args.positionals()[0];
  const auto& new_path = args.positionals()[1];
  const auto d = diff_reports(load_report(old_path), load_report(new_path));
  for (const auto& r : d.regressions) std::printf("REGRESSION  %s\n", r.c_str());
  for (const auto& i : d.improvements) std::printf("improved    %s\n", i.c_str());
  std::printf("%zu regression(s), %zu improvement(s): %s -> %s\n", d.regressions.size(), d.improvements.size(),
              old_path.c_str(), new_path.c_str());
  return d.regressed() ? Outcome::conformance_failure : Outcome::success;
}

}  // namespace

Command diff_command() {
  return {{"diff", "muoncheck diff OLD.json NEW.json",
           "Compares two reports (e.g. last night's and tonight's nightly). A regression: a scenario that\n"
           "disappeared; an invariant that newly FAILs or is no longer executed; a PASS whose metric/threshold\n"
           "grew more than 2x and now exceeds 0.5 (the band moves by up to 1.76x when one rounding order\n"
           "leaves the control ensemble); a fault no longer killed; a sweep that newly found a case.\n"
           "Exit 1 on any regression.",
           {}},
          run};
}

}  // namespace muoncheck
