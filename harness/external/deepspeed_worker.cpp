#include "harness/external/deepspeed_worker.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/external/resolved_scenario.hpp"

namespace muoncheck::external {

namespace {

WorkerCommand command_for(const DeepSpeedWorkerOptions& o) {
  WorkerCommand c;
  const std::string script = o.adapter_dir + "/resident_worker.py";
  if (o.dp == 1) c.argv = {o.python, script, "--socket", "{socket}"};
  else
    c.argv = {o.python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", std::to_string(o.dp),
              script, "--socket", "{socket}"};
  std::string path = o.site;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += (path.empty() ? "" : ":") + std::string(old);
  c.env = {{"PYTHONPATH", path}, {"PYTHONUNBUFFERED", "1"}, {"DS_BUILD_OPS", "0"}, {"MUONCHECK_DEVICE", o.device},
           {"MASTER_PORT", "{port}"},   // dp 1 runs without torchrun: its own rendezvous port
           {"NCCL_NVLS_ENABLE", "0"}, {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"}, {"NVSHMEM_DISABLE_NVLS", "1"}};
  c.log_path = o.log_path.empty()
                   ? "/tmp/muoncheck-deepspeed-" + (o.version.empty() ? std::string("env") : o.version) + "-dp" +
                         std::to_string(o.dp) + ".log"
                   : o.log_path;
  c.start_timeout = o.start_timeout;
  return c;
}

}  // namespace

std::string deepspeed_version_from_impl(const std::string& impl) {
  if (impl == "deepspeed") return "";
  if (impl.rfind("deepspeed=", 0) == 0 && impl.size() > 10) return impl.substr(10);
  throw Error(ErrorKind::Usage, "--impl: expected deepspeed or deepspeed=VERSION, got \"" + impl + "\"");
}

std::string default_deepspeed_site(const std::string& version) {
  if (version.empty()) return "";
  if (const char* root = std::getenv("MUONCHECK_DEEPSPEED_SITES"); root && *root)
    return std::string(root) + "/ds-" + version;
  return "/tmp/muoncheck-site-ds-" + version;
}

DeepSpeedWorker::DeepSpeedWorker(DeepSpeedWorkerOptions o) : o_(std::move(o)), process_(command_for(o_)) {
  if (o_.dp < 1) throw Error(ErrorKind::Usage, "deepspeed worker: dp must be at least 1");
}

std::string DeepSpeedWorker::implementation() const {
  const auto& h = process_.hello();
  return "deepspeed " + (h.contains("version") ? h["version"].get<std::string>() : o_.version);
}

Trace DeepSpeedWorker::error_trace(const Scenario& s, const std::string& why) const {
  Trace t;
  t.source = "<deepspeed resident worker>";
  t.impl_name = "deepspeed";
  t.impl_version = o_.version;
  t.scenario_name = s.name;
  t.scenario_hash = scenario_hash(s);
  t.scenario_json = scenario_to_json(s);
  t.error = why;
  return t;
}

Trace DeepSpeedWorker::run(const Scenario& s) {
  const nlohmann::json request = {{"scenario", resolved_scenario_json(s)}, {"extra_config", nullptr}};
  // A worker that cannot start is this machine's problem (missing DeepSpeed, no GPU), not a
  // verdict about a case: Error{Infrastructure} ends the sweep.
  process_.ensure_started();
  std::string answer;
  try {
    answer = process_.request(request.dump(), o_.case_timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Infrastructure) throw;
    return error_trace(s, std::string("worker lost: ") + e.what());
  }
  if (!o_.version.empty() && process_.hello().value("version", "") != o_.version) {
    process_.stop();
    throw Error(ErrorKind::Usage, "deepspeed worker: asked for DeepSpeed " + o_.version + ", the worker runs " +
                                      process_.hello().value("version", "?") + " (site \"" + o_.site + "\")");
  }
  try {
    return trace_from_text(answer, "<deepspeed " + o_.version + " resident worker, case " + s.name + ">");
  } catch (const Error& e) {
    process_.stop();
    return error_trace(s, std::string("unreadable trace: ") + e.what());
  }
}

}  // namespace muoncheck::external
