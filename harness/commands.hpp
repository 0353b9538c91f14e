// The `muoncheck` subcommands. Each returns an Outcome (or throws Error); only
// main() turns that into an exit code: 0 success, 1 conformance failure,
// 2 bad input or usage, 3 infrastructure error.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/cli_args.hpp"

namespace muoncheck {

enum class Outcome { success, conformance_failure };

struct Command {
  cli::CommandSpec spec;
  std::function<Outcome(const cli::Args&)> run;
};

Command oracle_command();
Command certify_command();
Command golden_command();
Command check_command();
Command run_command();
Command mutants_command();
Command nightly_command();
Command verify_command();
Command noise_command();
Command diff_command();
Command html_command();

// Every command (sweep_command() included, cmd_sweep.hpp), in the order `muoncheck --help` lists them.
std::vector<Command> all_commands();

// The full command line of this process, for reports and repro lines.
const std::vector<std::string>& process_argv();
void set_process_argv(int argc, char** argv);

}  // namespace muoncheck
