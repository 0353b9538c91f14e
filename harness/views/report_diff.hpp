// Tonight's report against last night's: what got worse. A regression is
//   - a scenario of the old report missing from the new one;
//   - an invariant that was not FAIL and now is (golden comparisons too);
//   - an invariant executed before (PASS/FAIL) and now SKIPPED or UNSUPPORTED (lost coverage);
//   - a PASS whose ratio metric/threshold grew by more than kRatioGrowth and is now above
//     kRatioFloor (see below);
//   - a fault killed before and not now; a sweep that was OK and now is not, or a sweep finding
//     (defect or case) not explained by a known defect whose message is new.
// kRatioGrowth = 2: the noise band moves by up to 1.76× when one valid rounding order is left
// out of the control ensemble (docs/invariants.md, leave-one-out), so a larger growth is more
// than a change of rounding order explains. kRatioFloor = 0.5: below half the band a ratio is
// rounding noise whichever way it moves.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace muoncheck {

inline constexpr double kRatioGrowth = 2.0;
inline constexpr double kRatioFloor = 0.5;

struct ReportDiff {
  std::vector<std::string> regressions;
  std::vector<std::string> improvements;   // FAIL -> PASS, newly executed, newly killed
  bool regressed() const { return !regressions.empty(); }
};

ReportDiff diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report);

}  // namespace muoncheck
