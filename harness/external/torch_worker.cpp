#include "harness/external/torch_worker.hpp"

#include <cstdlib>

namespace muoncheck::external {

std::string torch_version_from_impl(const std::string& impl) { return impl_version(impl, "torch"); }

std::string default_torch_site(const std::string& version) {
  if (version.empty()) return "";
  if (const char* root = std::getenv("MUONCHECK_TORCH_SITES"); root && *root) return std::string(root) + "/torch-" + version;
  return "";
}

WorkerCommand torch_worker_command(const ResidentWorkerOptions& o) {
  WorkerCommand c;
  c.argv = worker_argv(o, {"-m", "adapters.torch.resident_worker", "--socket", "{socket}"});
  c.env = worker_environment(o);
  c.log_path = worker_log_path(o);
  c.start_timeout = o.start_timeout;
  return c;
}

}  // namespace muoncheck::external
