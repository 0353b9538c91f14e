// DeepSpeed behind the resident protocol (worker_process.hpp): one long-lived
// adapters/deepspeed/resident_worker.py job per (dp, DeepSpeed version), asked for one scenario
// at a time. A case the worker crashes or hangs on comes back as a trace with `error` set (an
// implementation ERROR) and the worker is restarted for the next case.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "core/scenario.hpp"
#include "harness/external/worker_process.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck::external {

struct DeepSpeedWorkerOptions {
  std::string version;                // "0.19.8"; empty: the one the Python path finds
  int dp = 1;                         // processes (one per GPU); dp 1 runs without torchrun
  std::string python = "python3";
  std::string site;                   // PYTHONPATH holding that DeepSpeed (empty: the environment's)
  std::string adapter_dir = "adapters/deepspeed";
  std::string device = "cuda";        // or "cpu": DeepSpeed's CPU accelerator over gloo
  std::string log_path;               // empty: /tmp/muoncheck-deepspeed-VERSION-dpN.log
  std::chrono::milliseconds start_timeout{std::chrono::minutes(10)};   // first start JIT-builds ops
  std::chrono::milliseconds case_timeout{std::chrono::minutes(2)};
};

// "deepspeed" or "deepspeed=0.19.8" (the --impl value) → the version ("" for none). Throws Usage.
std::string deepspeed_version_from_impl(const std::string& impl);

// The folder `site` defaults to for a version: $MUONCHECK_DEEPSPEED_SITES/ds-VERSION when that
// variable is set, else /tmp/muoncheck-site-ds-VERSION (where scripts/deepspeed-site.sh installs it).
std::string default_deepspeed_site(const std::string& version);

class DeepSpeedWorker {
 public:
  explicit DeepSpeedWorker(DeepSpeedWorkerOptions o);

  // The trace of one scenario. Never throws for the implementation's faults: a crash, hang or
  // garbled answer is a trace whose `error` says so (and names the worker's log).
  Trace run(const Scenario& s);

  const DeepSpeedWorkerOptions& options() const { return o_; }
  std::string implementation() const;   // "deepspeed 0.19.8" once started
  int restarts() const { return process_.starts() > 0 ? process_.starts() - 1 : 0; }

 private:
  Trace error_trace(const Scenario& s, const std::string& why) const;
  DeepSpeedWorkerOptions o_;
  WorkerProcess process_;
};

}  // namespace muoncheck::external
