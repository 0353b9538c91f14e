#include "harness/external/deepspeed_worker.hpp"

#include <cstdlib>

#include "harness/install/data_root.hpp"

namespace muoncheck::external {

std::string deepspeed_version_from_impl(const std::string& impl) { return impl_version(impl, "deepspeed"); }

std::string default_deepspeed_site(const std::string& version) {
  if (version.empty()) return "";
  if (const char* root = std::getenv("MUONCHECK_DEEPSPEED_SITES"); root && *root)
    return std::string(root) + "/ds-" + version;
  return "/tmp/muoncheck-site-ds-" + version;
}

WorkerCommand deepspeed_worker_command(const ResidentWorkerOptions& o, const std::string& adapter_dir) {
  WorkerCommand c;
  const std::string dir = adapter_dir.empty() ? data_path("adapters/deepspeed") : adapter_dir;
  c.argv = worker_argv(o, {dir + "/resident_worker.py", "--socket", "{socket}"});
  c.env = worker_environment(o);
  c.env.emplace_back("DS_BUILD_OPS", "0");
  c.log_path = worker_log_path(o);
  c.start_timeout = o.start_timeout;
  return c;
}

}  // namespace muoncheck::external
