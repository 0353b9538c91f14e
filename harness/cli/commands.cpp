// The list of `muoncheck` commands: main() dispatches over it, the option-table test checks it.
#include "harness/cli/commands.hpp"

#include <utility>

namespace muoncheck {

Command informational_command(cli::CommandSpec spec, std::function<void(const cli::Args&)> run) {
  return {std::move(spec), [run = std::move(run)](const cli::Args& args) {
            run(args);
            return Outcome::success;
          }};
}

std::vector<Command> all_commands() {
  return {check_command(),   run_command(),     oracle_command(), certify_command(),
          golden_command(),  mutants_command(), nightly_command(), sweep_command(),
          verify_command(),  variants_command(), noise_command(),  diff_command(),    html_command(),
          resolve_command(), pairs_command(),
          repro_command()};
}

}  // namespace muoncheck
