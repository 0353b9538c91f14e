// The one table of command-line options every `muoncheck` command draws from: each entry's
// name, whether it takes a value, whether it repeats, its help and its default (as text,
// shown in --help). A command builds its option list by key (`options({"fault", "mode"})`);
// a key the table lacks, or two keys of one option name in one command, is an Internal error.
//
// An option name means one thing in every command (a FILE, a folder, a switch: the table test
// holds it). Where only its default or its help differs by command, it has one entry per
// command, keyed "NAME/VARIANT" (e.g. `report/check`, defaulting to out/latest.json, beside
// `report`); an entry without a variant has key == name. Nothing else may share a name.
//
// Where a value is parsed, the parser below is the one every command uses, and it reads
// the default from the same entry --help shows, so the two cannot drift apart.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/cli_args.hpp"
#include "harness/judge/judge_scenario.hpp"

namespace muoncheck {

struct OptionEntry {
  std::string key;        // "NAME" or "NAME/VARIANT"; unique in the table
  cli::OptionSpec spec;   // what a command's spec holds: name, takes_value, repeatable, help, default
};

const std::vector<OptionEntry>& option_table();
// The entry of `key`; Internal error when the table has none.
const OptionEntry& option_entry(std::string_view key);
// The specs of `keys`, in that order; Internal error on an unknown key or a name given twice.
std::vector<cli::OptionSpec> options(const std::vector<std::string>& keys);

// The value given for `key`'s option, or its entry's default text ("" when none).
std::string option_text(const cli::Args& args, std::string_view key);

// Parsers: each a Usage error naming the option and the value it got.
std::chrono::milliseconds timeout_from(const cli::Args& args);   // --timeout-ms, a positive integer
// --seed, a non-negative integer; "seed/nightly" also takes `date` (its default): the UTC date as YYYYMMDD.
std::uint64_t seed_from(const cli::Args& args, std::string_view key = "seed");
// --oracle-precision (key "oracle-precision" or "oracle-precision/mutants") or oracle's --precision.
oracle::Precision precision_from(const cli::Args& args, std::string_view key = "oracle-precision");
impl::ComputeBackend backend_from(const cli::Args& args);        // --backend cpu|cuda
impl::CommBackend comm_from(const cli::Args& args);              // --comm gloo|nccl
impl::NsKernel ns_kernel_from(const cli::Args& args);            // --ns-kernel default|resident|gemms
CheckMode mode_from(const cli::Args& args);                      // --mode trajectory|stepwise|both
int dp_from(const cli::Args& args);                              // --dp in [1, 64]; 0 when not given
int control_members_from(const cli::Args& args, int min = 1);    // --control-members in [min, 64]
double min_executed_from(const cli::Args& args);                 // --min-executed in [0, 1]
int workers_from(const cli::Args& args);                          // --workers in [1, 16]
int positive_int_from(const cli::Args& args, std::string_view key);   // --cases, --sweep-cases
double seconds_from(const cli::Args& args, std::string_view key);     // --budget: seconds >= 0
double number_from(const cli::Args& args, std::string_view key);      // --min-digits

}  // namespace muoncheck
