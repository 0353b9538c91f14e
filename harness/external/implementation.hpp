// The implementations muoncheck can run behind the resident protocol (docs/resident-protocol.md):
// one record each — its --impl name, where a version of it is installed, what its worker's
// environment needs, its repro template — and the list every command iterates over (sweep,
// nightly, verify --impl, repro, the option help). Every implementation's worker is the same
// generic one (`python3 -m adapters.worker --impl NAME`); its configuration space, declines and
// mapping come from the plugin itself (its hello line), so a plugin muoncheck does not list (one
// a package provides through the `muoncheck.implementations` entry point) needs no change here:
// `implementation_named` gives it the generic record.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/scenario.hpp"
#include "harness/external/resident_worker.hpp"
#include "harness/external/worker_process.hpp"
#include "harness/repro/deepspeed_repro.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck::external {

using ReproWriter = ReproFiles (*)(const Scenario& s, const Trace& t, const std::string& data_generator_source,
                                   const std::string& script_name, int control_members);

struct Implementation {
  std::string name;                   // the --impl / --for name (the plugin's)
  std::string title;                  // one line for the option help
  std::string sites_variable;         // $VAR/PREFIXVERSION holds version VERSION ("" none)
  std::string site_prefix;            // "ds-": $MUONCHECK_DEEPSPEED_SITES/ds-0.19.8
  std::string default_site_root;      // where a version lives when the variable is unset ("" none)
  std::vector<std::pair<std::string, std::string>> env;   // added to every worker's environment
  ReproWriter repro = nullptr;        // its standalone-script template (nullptr: none yet)
  std::string repro_run_prefix;       // what the printed run line puts before torchrun
};

// The built-in implementations, in the order the help lists them.
const std::vector<Implementation>& implementations();

// "a | b | c": the built-in names, for option help.
std::string implementation_names();

// The record of `name`: a built-in one, else the generic record of a plugin found by the worker
// (no site, no repro template). Throws Usage on a name that is not a plugin name.
Implementation implementation_named(const std::string& name);

// "NAME" or "NAME=VERSION" → (NAME, VERSION or ""). Throws Usage on an empty name.
std::pair<std::string, std::string> split_impl(const std::string& impl);

// Where version `version` of `impl` lives ("" : the environment's).
std::string default_site(const Implementation& impl, const std::string& version);

// The generic worker's command line for `impl` with options `o`.
WorkerCommand worker_command(const Implementation& impl, const ResidentWorkerOptions& o);

}  // namespace muoncheck::external
