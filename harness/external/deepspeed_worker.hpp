// DeepSpeed behind the resident protocol: the command line of adapters/deepspeed/resident_worker.py
// (resident_worker.hpp runs it), and where a DeepSpeed version is installed.
#pragma once
#include <string>

#include "harness/external/resident_worker.hpp"

namespace muoncheck::external {

// "deepspeed" or "deepspeed=0.19.8" (the --impl value) → the version ("" for none). Throws Usage.
std::string deepspeed_version_from_impl(const std::string& impl);

// The folder `site` defaults to for a version: $MUONCHECK_DEEPSPEED_SITES/ds-VERSION when that
// variable is set, else /tmp/muoncheck-site-ds-VERSION (where scripts/deepspeed-site.sh installs it).
std::string default_deepspeed_site(const std::string& version);

// The command line of a DeepSpeed worker of `o`; `adapter_dir` holds resident_worker.py ("": the
// data folder's adapters/deepspeed).
WorkerCommand deepspeed_worker_command(const ResidentWorkerOptions& o, const std::string& adapter_dir = "");

}  // namespace muoncheck::external
