// `--impl` of sweep and nightly: the sweep against another implementation (DeepSpeed through its
// resident worker), from the command line to its summary and JSON record.
#pragma once
#include "harness/cli/cli_args.hpp"
#include "harness/cli/commands.hpp"

namespace muoncheck {

// A Usage error when --workers is given without --impl (what sweep and nightly check first).
void reject_workers_without_impl(const cli::Args& args);

// Runs `muoncheck sweep --impl ...` with `cases` cases and `budget` seconds (0: none).
Outcome run_impl_sweep_command(const cli::Args& args, int cases, double budget_seconds);

}  // namespace muoncheck
