#include "harness/external/resident_worker.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/external/resolved_scenario.hpp"

namespace muoncheck::external {

std::string impl_version(const std::string& impl, const std::string& name) {
  if (impl == name) return "";
  if (impl.rfind(name + "=", 0) == 0 && impl.size() > name.size() + 1) return impl.substr(name.size() + 1);
  throw Error(ErrorKind::Usage, "--impl: expected " + name + " or " + name + "=VERSION, got \"" + impl + "\"");
}

std::string worker_log_path(const ResidentWorkerOptions& o) {
  if (!o.log_path.empty()) return o.log_path;
  return "/tmp/muoncheck-" + o.implementation + "-" + (o.version.empty() ? std::string("env") : o.version) + "-dp" +
         std::to_string(o.dp) + (o.worker > 0 ? "-w" + std::to_string(o.worker) : std::string()) + ".log";
}

std::vector<std::pair<std::string, std::string>> worker_environment(const ResidentWorkerOptions& o) {
  std::string path = o.site;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += (path.empty() ? "" : ":") + std::string(old);
  std::vector<std::pair<std::string, std::string>> env{{"MUONCHECK_KNOWN_DEFECTS", o.known_defects}};
  const std::vector<std::pair<std::string, std::string>> rest{{"PYTHONPATH", path}, {"PYTHONUNBUFFERED", "1"}, {"MUONCHECK_DEVICE", o.device},
          // dp 1 runs without torchrun: its rendezvous store binds a port the kernel picks at that
          // bind (0), so workers started side by side cannot pick the same one (dp > 1: torchrun
          // --standalone does the same and hands its ranks the port)
          {"MASTER_PORT", "0"},
          {"NCCL_NVLS_ENABLE", "0"}, {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"}, {"NVSHMEM_DISABLE_NVLS", "1"}};
  env.insert(env.end(), rest.begin(), rest.end());
  return env;
}

std::vector<std::string> worker_argv(const ResidentWorkerOptions& o, const std::vector<std::string>& program) {
  std::vector<std::string> argv{o.python};
  if (o.dp > 1)
    argv.insert(argv.end(), {"-m", "torch.distributed.run", "--standalone", "--nproc-per-node", std::to_string(o.dp)});
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

ResidentWorker::ResidentWorker(ResidentWorkerOptions o, WorkerCommand command)
    : o_(std::move(o)), process_(std::move(command)) {
  if (o_.dp < 1) throw Error(ErrorKind::Usage, o_.implementation + " worker: dp must be at least 1");
}

std::string ResidentWorker::implementation() const {
  const auto& h = process_.hello();
  return o_.implementation + " " + (h.contains("version") ? h["version"].get<std::string>() : o_.version);
}

Trace ResidentWorker::error_trace(const Scenario& s, const std::string& why) const {
  Trace t;
  t.source = "<" + o_.implementation + " resident worker>";
  t.impl_name = process_.hello().value("name", o_.implementation);
  t.impl_version = process_.hello().value("version", o_.version);
  t.scenario_name = s.name;
  t.scenario_hash = scenario_hash(s);
  t.scenario_json = scenario_to_json(s);
  t.error = why;
  return t;
}

// "2.11.0+cu130" runs what "2.11.0" asks for: a local build tag is not another version.
static bool same_version(const std::string& running, const std::string& asked) {
  return running == asked || running.rfind(asked + "+", 0) == 0;
}

Trace ResidentWorker::run(const Scenario& s, const std::vector<std::string>& fixes) {
  nlohmann::json request = {{"scenario", resolved_scenario_json(s)}, {"extra_config", nullptr}};
  if (!fixes.empty()) request["fixes"] = fixes;   // known-defect fixes the worker applies for this case only
  // A worker that cannot start is this machine's problem (missing package, no GPU), not a
  // verdict about a case: Error{Infrastructure} ends the sweep.
  process_.ensure_started();
  if (!o_.version.empty() && !same_version(process_.hello().value("version", ""), o_.version)) {
    const std::string running = process_.hello().value("version", "?");
    process_.stop();
    throw Error(ErrorKind::Usage, o_.implementation + " worker: asked for " + o_.implementation + " " + o_.version +
                                      ", the worker runs " + running + " (site \"" + o_.site + "\")");
  }
  std::string answer;
  try {
    answer = process_.request(request.dump(), o_.case_timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Infrastructure) throw;
    return error_trace(s, std::string("worker lost: ") + e.what());
  }
  try {
    return trace_from_text(answer, "<" + implementation() + " resident worker, case " + s.name + ">");
  } catch (const Error& e) {
    process_.stop();
    return error_trace(s, std::string("unreadable trace: ") + e.what());
  }
}

}  // namespace muoncheck::external
