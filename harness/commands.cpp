// The list of `muoncheck` commands: main() dispatches over it, the option-table test checks it.
#include "harness/commands.hpp"
#include "harness/cmd_sweep.hpp"

namespace muoncheck {

std::vector<Command> all_commands() {
  return {check_command(),   run_command(),     oracle_command(), certify_command(),
          golden_command(),  mutants_command(), nightly_command(), sweep_command(),
          verify_command(),  noise_command(),   diff_command(),    html_command()};
}

}  // namespace muoncheck
