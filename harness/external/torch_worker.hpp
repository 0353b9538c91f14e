// torch.optim.Muon behind the resident protocol: the command line of
// adapters/torch/resident_worker.py (resident_worker.hpp runs it), and where a torch version is.
#pragma once
#include <string>

#include "harness/external/resident_worker.hpp"

namespace muoncheck::external {

// "torch" or "torch=2.11.0" (the --impl value) → the version ("" for none). Throws Usage.
std::string torch_version_from_impl(const std::string& impl);

// The folder `site` defaults to for a version: $MUONCHECK_TORCH_SITES/torch-VERSION when that
// variable is set (a `pip install --target` of that torch), else none: the environment's torch,
// which the worker's hello line must then show to be that version.
std::string default_torch_site(const std::string& version);

// The command line of a torch worker of `o`: `python -m adapters.torch.resident_worker` from the
// checkout; $MUONCHECK_TORCH_FACTORY (module:attribute) picks another optimizer factory.
WorkerCommand torch_worker_command(const ResidentWorkerOptions& o);

}  // namespace muoncheck::external
