#include "harness/external/implementation.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "harness/repro/torch_repro.hpp"

namespace muoncheck::external {

const std::vector<Implementation>& implementations() {
  static const std::vector<Implementation> list = {
      {"deepspeed", "DeepSpeed's Muon under ZeRO (adapters/deepspeed)", "MUONCHECK_DEEPSPEED_SITES", "ds-",
       "/tmp/muoncheck-site-ds-", {{"DS_BUILD_OPS", "0"}}, deepspeed_repro, "TORCH_COMPILE_DISABLE=1 "},
      {"torch", "torch.optim.Muon under DDP/FSDP2 (adapters/torch)", "MUONCHECK_TORCH_SITES", "torch-", "", {},
       torch_repro, ""},
  };
  return list;
}

std::string implementation_names() {
  std::string out;
  for (const auto& i : implementations()) out += (out.empty() ? "" : " | ") + i.name;
  return out;
}

Implementation implementation_named(const std::string& name) {
  for (const auto& i : implementations())
    if (i.name == name) return i;
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.-") != std::string::npos)
    throw Error(ErrorKind::Usage, "--impl: \"" + name + "\" is not a plugin name (lower-case letters, digits, '_', '.', '-'; "
                                  "built in: " + implementation_names() + ", or any plugin of entry point group "
                                  "muoncheck.implementations)");
  Implementation generic;
  generic.name = name;
  generic.title = "plugin " + name + " (entry point group muoncheck.implementations)";
  return generic;
}

std::pair<std::string, std::string> split_impl(const std::string& impl) {
  const auto eq = impl.find('=');
  const std::string name = impl.substr(0, eq);
  const std::string version = eq == std::string::npos ? "" : impl.substr(eq + 1);
  if (name.empty() || (eq != std::string::npos && version.empty()))
    throw Error(ErrorKind::Usage, "--impl: expected NAME or NAME=VERSION, got \"" + impl + "\"");
  return {name, version};
}

std::string default_site(const Implementation& impl, const std::string& version) {
  if (version.empty()) return "";
  if (!impl.sites_variable.empty())
    if (const char* root = std::getenv(impl.sites_variable.c_str()); root && *root)
      return std::string(root) + "/" + impl.site_prefix + version;
  return impl.default_site_root.empty() ? "" : impl.default_site_root + version;
}

WorkerCommand worker_command(const Implementation& impl, const ResidentWorkerOptions& o) {
  WorkerCommand c;
  c.argv = worker_argv(o, {"-m", "adapters.worker", "--impl", impl.name, "--socket", "{socket}"});
  c.env = worker_environment(o);
  c.env.insert(c.env.end(), impl.env.begin(), impl.env.end());
  c.log_path = worker_log_path(o);
  c.start_timeout = o.start_timeout;
  return c;
}

}  // namespace muoncheck::external
