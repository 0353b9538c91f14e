// Another implementation behind the resident protocol (docs/resident-protocol.md,
// worker_process.hpp): one long-lived job of the generic worker (`python3 -m adapters.worker
// --impl NAME`) per (implementation, version, dp), asked for one case at a time — a scenario and
// the plugin's configuration — and, in between, to map a configuration onto a scenario or a
// scenario onto a configuration. A case the worker crashes or hangs on comes back as a trace with
// `error` set (an implementation ERROR) and the worker is restarted for the next case; a plugin
// that cannot be loaded or declares a malformed space is the case's ERROR with its message.
#pragma once
#include <chrono>
#include <optional>
#include <string>

#include "core/scenario.hpp"
#include "harness/external/plugin_space.hpp"
#include "harness/external/worker_process.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck::external {

// The Python a worker runs under: $MUONCHECK_PYTHON (the installed `muoncheck` command sets it to
// the interpreter it was installed for, so a worker sees that environment's packages wherever
// PATH points), else python3.
std::string worker_python();

struct ResidentWorkerOptions {
  std::string implementation;         // "deepspeed", "torch": the --impl name, in messages and log names
  std::string version;                // "0.19.8", "2.11.0"; empty: the one the Python path finds
  int dp = 1;                         // processes (one per GPU); dp 1 runs without torchrun
  std::string python = worker_python();
  std::string site;                   // PYTHONPATH holding that version (empty: the environment's)
  std::string device = "cuda";        // or "cpu" (gloo)
  std::string log_path;               // empty: /tmp/muoncheck-IMPL-VERSION-dpN[-wK]-PID.log (worker K; PID: this muoncheck)
  int worker = 0;                     // K in 1..N when N workers run side by side (`--workers N`,
                                      // N > 1): its own log; 0: the only one
  std::chrono::milliseconds start_timeout{std::chrono::minutes(10)};   // the first start may JIT-build ops
  std::chrono::milliseconds case_timeout{std::chrono::minutes(2)};
  std::vector<std::string> fixes;     // the plugin's fixes every case runs with (ids)
  std::string known_defects;          // the registry whose fixes a request may name (absolute path; the
                                      // worker reads it from $MUONCHECK_KNOWN_DEFECTS); "": the plugin's own
};

// A map, from_scenario or declines answer: exactly one of the three is set.
struct MapAnswer {
  std::optional<nlohmann::json> value;   // the canonical scenario (map) or the config (from_scenario)
  std::string declined;                  // "knob K: reason"
  std::string error;                     // the plugin raised, or answered something else
};

// "NAME" or "NAME=VERSION" (the --impl value) → the version ("" for none). Throws Usage otherwise.
std::string impl_version(const std::string& impl, const std::string& name);

// The log a worker of these options writes (log_path, or its default).
std::string worker_log_path(const ResidentWorkerOptions& o);

// The environment every worker gets: PYTHONPATH (site first), unbuffered output, the device, a
// rendezvous port its store picks when it binds (MASTER_PORT 0), never NVLink multicast.
std::vector<std::pair<std::string, std::string>> worker_environment(const ResidentWorkerOptions& o);

// `argv` after the interpreter (a script or "-m", module; then its arguments, "{socket}" in them):
// under torchrun (--standalone, one process per rank) when dp > 1.
std::vector<std::string> worker_argv(const ResidentWorkerOptions& o, const std::vector<std::string>& program);

class ResidentWorker {
 public:
  ResidentWorker(ResidentWorkerOptions o, WorkerCommand command);

  // The trace of one case: the scenario and its `impl_config` (none: every knob at its default).
  // Never throws for the implementation's faults: a crash, hang or garbled answer is a trace whose
  // `error` says so (and names the worker's log); so is a plugin that cannot be loaded.
  // `fixes`: known-defect fixes for this case only, on top of options().fixes (attribution re-runs).
  Trace run(const Scenario& s, const std::vector<std::string>& fixes = {});

  // The plugin's space (starts the worker). Throws Error{BadInput} naming the plugin and the field
  // for a malformed one, Error{Infrastructure} when no worker starts.
  const PluginSpace& space();

  // {"map": {config, scenario}}: the canonical scenario the oracle judges for `config` applied to
  // `canonical`; {"from_scenario": canonical}: the config expressing it. Never throw for the
  // plugin's faults (a crash or hang is `error`).
  MapAnswer map(const nlohmann::json& config, const nlohmann::json& canonical);
  MapAnswer from_scenario(const nlohmann::json& canonical);
  // {"declines": {config, scenario}} with the resolved scenario: `declined` when the plugin
  // declines it on this device in any process world, else `value` (an empty object).
  MapAnswer declines(const nlohmann::json& config, const nlohmann::json& resolved);

  const ResidentWorkerOptions& options() const { return o_; }
  std::string implementation() const;   // "deepspeed 0.19.8" once started
  int restarts() const { return process_.starts() > 0 ? process_.starts() - 1 : 0; }
  const std::string& log_path() const { return process_.log_path(); }

 private:
  Trace error_trace(const Scenario& s, const std::string& why) const;
  Trace declined_trace(const Scenario& s, const std::string& why) const;
  void start_checked();
  MapAnswer ask(const nlohmann::json& request, const std::string& key);
  ResidentWorkerOptions o_;
  WorkerProcess process_;
  std::optional<PluginSpace> space_;
};

}  // namespace muoncheck::external
