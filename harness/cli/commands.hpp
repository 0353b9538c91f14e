// The `muoncheck` subcommands. Each returns an Outcome (or throws Error); only
// main() turns that into an exit code: 0 success, 1 conformance failure,
// 2 bad input or usage, 3 infrastructure error.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/cli/cli_args.hpp"

namespace muoncheck {

enum class Outcome { success, conformance_failure };

struct Command {
  cli::CommandSpec spec;
  std::function<Outcome(const cli::Args&)> run;
};

// A command that judges nothing (oracle, noise, html): it succeeds unless it throws.
Command informational_command(cli::CommandSpec spec, std::function<void(const cli::Args&)> run);

Command oracle_command();
Command certify_command();
Command golden_command();
Command check_command();
Command run_command();
Command mutants_command();
Command nightly_command();
Command verify_command();
Command noise_command();
Command sweep_command();
Command diff_command();
Command html_command();
Command variants_command();
Command resolve_command();
Command pairs_command();
Command repro_command();

// Every command, in the order `muoncheck --help` lists them.
std::vector<Command> all_commands();

}  // namespace muoncheck
