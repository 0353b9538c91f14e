// `--impl NAME` of sweep, nightly and verify: another implementation through its plugin's generic
// resident worker (harness/external/implementation.hpp), from the command line to its summary and
// JSON record. The sweep draws the plugin's knobs with RapidCheck together with the base scenario
// (each knob shrinking towards its default), has the plugin map each drawn configuration onto the
// scenario it judges, and runs the case; verify asks the plugin for the configuration of each
// given scenario and judges the given scenario.
#pragma once
#include "harness/cli/cli_args.hpp"
#include "harness/cli/commands.hpp"

namespace muoncheck {

// A Usage error when --workers is given without --impl (what sweep and nightly check first).
void reject_workers_without_impl(const cli::Args& args);

// Runs `muoncheck sweep --impl ...` with `cases` cases and `budget` seconds (0: none).
Outcome run_impl_sweep_command(const cli::Args& args, int cases, double budget_seconds);

// Runs `muoncheck verify --impl NAME SCENARIO...`: the plugin's worker on each given scenario (and
// its re-splits, for the relational invariants), each judged as `verify` judges a trace.
Outcome run_impl_verify_command(const cli::Args& args);

}  // namespace muoncheck
