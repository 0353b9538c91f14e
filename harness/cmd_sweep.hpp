// `muoncheck sweep`: the command that runs a property sweep (cmd_sweep_runner.hpp)
// and reports it (cmd_sweep_report.hpp). Declared apart from commands.hpp so the
// sweep enters the command line with one include and one list entry in main.cpp.
#pragma once
#include "harness/commands.hpp"

namespace muoncheck {
Command sweep_command();
}  // namespace muoncheck
