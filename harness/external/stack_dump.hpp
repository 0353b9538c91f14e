// Where a hung worker was stuck, read from the Python stacks its ranks wrote to its log just
// before the harness gave up on them (faulthandler's "Timeout (H:MM:SS)!" dumps, armed per request
// by adapters/common/resident.py from the request's deadline_s). A hang is an ERROR of the case;
// the place it hung in tells one hang from another and is where a maintainer starts reading.
#pragma once
#include <string>

namespace muoncheck::external {

// "stuck at F:L in FUNC < CALLER < CALLER (innermost: F:L in FUNC)" per distinct place over the
// dumps in `log_text`, with "N ranks " in front where several ranks hung in the same place, joined
// by "; ". The place is the innermost frame of the implementation's own code (not torch's, the
// standard library's or the adapters') with up to two of its callers in that code, else the
// innermost frame; paths are cut after site-packages/ or to their last four parts. "" when the text
// holds no dump.
std::string stuck_at(const std::string& log_text);

}  // namespace muoncheck::external
