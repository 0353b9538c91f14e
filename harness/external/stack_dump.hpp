// Where a hung worker was stuck, read from the Python stacks its ranks wrote to its log just
// before the harness gave up on them (faulthandler's "Timeout (H:MM:SS)!" dumps, armed per request
// by adapters/common/resident.py from the request's deadline_s). A hang is an ERROR of the case;
// the place it hung in tells one hang from another and is where a maintainer starts reading.
#pragma once
#include <set>
#include <string>

namespace muoncheck::external {

// What the log says of a hang, from the text the request added to it: first each line
// "muoncheck: rank R raised TYPE: MESSAGE" (a rank that raised while the others waited in the
// implementation's collectives: adapters/common/ranks.py raised_noted), as "rank R raised ...";
// then per distinct place over the stack dumps "stuck at F:L in FUNC < CALLER < CALLER (innermost:
// F:L in FUNC)", with "N ranks " in front where several ranks hung in the same place; joined by
// "; ". The place is the innermost frame of the implementation's own code (not torch's, the
// standard library's or the adapters') and its callers there, one frame per file, three at most;
// where the implementation has none, the same in the adapters' code, else the innermost frame.
// Paths are cut after site-packages/, before adapters/, or to their last four parts. "" when the text has neither.
std::string stuck_at(const std::string& log_text);

// The ranks that wrote "muoncheck: rank R raised ..." in `log_text`. A case answered with an error
// where fewer ranks raised than the worker has leaves the others inside a collective: the worker
// must not take another request (ResidentWorker restarts it).
std::set<int> ranks_that_raised(const std::string& log_text);

}  // namespace muoncheck::external
