// --control-members: the size of the control ensemble that sets every noise band, one
// spec and one parser for every command that judges (and `noise`).
#pragma once
#include "harness/cli_args.hpp"

namespace muoncheck {

cli::OptionSpec control_members_option();
// The validated value (default oracle::kDefaultControlMembers); a Usage error outside [min, 64].
int control_members_from(const cli::Args& args, int min = 1);

}  // namespace muoncheck
