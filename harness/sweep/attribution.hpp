// Attribution by counterfactual: what explains a failing case is the smallest set of known-defect
// fixes under which the implementation conforms on it, shown by re-running the case.
//
// Generic over a runner that takes a fix set (`FixTrial`: the case run and judged with those fixes
// applied). attribute(): run with every applicable fix; if the case still fails it is NEW (no
// known defect explains it); if it conforms, reduce the set to a 1-minimal set: with it the case
// conforms, without any one of its fixes it fails. The fixes whose code never ran with every fix
// applied (FixRun::unused) are left out of the search from the start: one re-run shows the rest
// conforms (else the search starts from every fix). The sets that explained earlier cases of the
// same sweep are tried first (most cases share a cause: one re-run each, where delta debugging
// (ddmin) takes about 2 log2 |fixes|); ddmin runs when none of them conforms. A fix the
// implementation cannot apply (the code it replaces has changed) is its own verdict, naming the
// entry. check_claim(): a stated attribution (a cause text's fixes) re-run; REJECTED when the case
// does not conform with exactly those fixes. Every verdict keeps its re-runs as evidence.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace muoncheck {

using FixSet = std::vector<std::string>;   // known-defect ids, in registry order

// One re-run of the case with a set of fixes.
struct FixRun {
  FixSet fixes;
  bool conforms = false;                 // every invariant judged on it passed
  std::vector<std::string> failed;       // the invariants that failed (or "ERROR")
  std::string message;                   // the first failure's message, or the error
  std::string fix_error;                 // non-empty: a fix could not be applied (names the entry)
  FixSet unused;                         // fixes applied whose code never ran on the case (as the
                                         // implementation reports it; empty: none reported)
};

using FixTrial = std::function<FixRun(const FixSet&)>;

enum class AttributionVerdict {
  not_asked,            // no fixes were given to try
  explained,            // conforms with `fixes` (1-minimal), fails without any one of them
  new_defect,           // still fails with every applicable fix: no known defect explains it
  fix_does_not_apply,   // a fix could not be applied to this implementation: the registry is stale
  fixed_run_declined,   // with every applicable fix the case is declined (inexpressible, not judged):
                        // neither explained nor shown new
  rejected,             // check_claim: the claimed fixes do not make the case conform
  confirmed,            // check_claim: they do
};

const char* verdict_name(AttributionVerdict v);

struct Attribution {
  AttributionVerdict verdict = AttributionVerdict::not_asked;
  FixSet fixes;            // explained / confirmed / rejected: the set; new: every fix tried
  std::vector<FixRun> runs;   // the evidence, in the order they ran
  std::string problem;     // fix_does_not_apply: the entry and why
  bool known = false;      // explained by fixes that are all in the known-defect list given
  bool minimal = true;     // false: ddmin stopped at max_runs, the set conforms but may not be minimal
  std::string text() const;   // one line for every view
};

// `failing`: the case's own run without fixes (it failed); counted as evidence, not re-run.
// `max_runs` bounds the re-runs (ddmin needs O(|fixes|^2) at worst) and `max_seconds` (0: none)
// their time, as a case that hangs under some fix sets takes its timeout on each; past either the
// smallest set found that conforms is kept, and the text says it may not be minimal (the first
// re-run, every fix applied, always runs).
// `hints`: sets that explained other cases, most useful first; a hint with a fix not applicable
// here is passed over, and at most kMaxHintsTried are re-run.
inline constexpr int kMaxHintsTried = 3;
Attribution attribute(const FixSet& applicable, const FixRun& failing, const FixTrial& run, int max_runs = 64,
                      const std::vector<FixSet>& hints = {}, double max_seconds = 0);

Attribution check_claim(const FixSet& claimed, const FixRun& failing, const FixTrial& run);

nlohmann::json attribution_json(const Attribution& a);

}  // namespace muoncheck
