#include "harness/external/resident_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/external/resolved_scenario.hpp"
#include "harness/external/stack_dump.hpp"
#include "harness/install/data_root.hpp"

namespace muoncheck::external {

std::string worker_python() {
  const char* p = std::getenv("MUONCHECK_PYTHON");
  return p && *p ? p : "python3";
}

std::string worker_log_path(const ResidentWorkerOptions& o) {
  if (!o.log_path.empty()) return o.log_path;
  // this muoncheck's pid in the name: two runs side by side never write one log (a hang's ERROR
  // reads the stacks its own worker wrote there)
  return "/tmp/muoncheck-" + o.implementation + "-" + (o.version.empty() ? std::string("env") : o.version) + "-dp" +
         std::to_string(o.dp) + (o.worker > 0 ? "-w" + std::to_string(o.worker) : std::string()) + "-" +
         std::to_string(::getpid()) + ".log";
}

std::vector<std::pair<std::string, std::string>> worker_environment(const ResidentWorkerOptions& o) {
  // The adapters package (`adapters.*`) is imported from the data folder, not the current one.
  std::string path = o.site.empty() ? data_root() : o.site + ":" + data_root();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += (path.empty() ? "" : ":") + std::string(old);
  return {{"MUONCHECK_KNOWN_DEFECTS", o.known_defects}, {"PYTHONPATH", path}, {"PYTHONUNBUFFERED", "1"}, {"MUONCHECK_DEVICE", o.device},
          // dp 1 runs without torchrun: its rendezvous store binds a port the kernel picks at that
          // bind (0), so workers started side by side cannot pick the same one (dp > 1: torchrun
          // --standalone does the same and hands its ranks the port)
          {"MASTER_PORT", "0"},
          {"NCCL_NVLS_ENABLE", "0"}, {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"}, {"NVSHMEM_DISABLE_NVLS", "1"}};
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

Trace ResidentWorker::declined_trace(const Scenario& s, const std::string& why) const {
  Trace t = error_trace(s, "");
  t.error.clear();
  t.unsupported = why;
  return t;
}

// Starts the worker and checks it runs the version asked for. A worker that cannot start is this
// machine's problem (missing package, no GPU), not a verdict about a case: Error{Infrastructure}.
void ResidentWorker::start_checked() {
  process_.ensure_started();
  if (!o_.version.empty() && !same_version(process_.hello().value("version", ""), o_.version)) {
    const std::string running = process_.hello().value("version", "?");
    const std::string why = process_.hello().value("error", "");   // the plugin did not load (an import failed)
    process_.stop();
    throw Error(ErrorKind::Usage, o_.implementation + " worker: asked for " + o_.implementation + " " + o_.version +
                                      ", the worker runs " + running + " (site \"" + o_.site + "\")" +
                                      (why.empty() ? "" : ": " + why));
  }
}

const PluginSpace& ResidentWorker::space() {
  if (!space_) {
    start_checked();
    try {
      space_ = space_from_hello(process_.hello(), o_.implementation);
    } catch (const Error&) {
      process_.stop();   // a worker whose plugin could not load exits after its hello
      throw;
    }
  }
  return *space_;
}

Trace ResidentWorker::run(const Scenario& s, const std::vector<std::string>& fixes) {
  if (s.impl_problem.rfind(kDeclinedDraw, 0) == 0) return declined_trace(s, s.impl_problem.substr(std::string(kDeclinedDraw).size()));
  if (!s.impl_problem.empty()) return error_trace(s, s.impl_problem);
  try {
    space();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    return error_trace(s, e.what());   // a plugin that cannot load, or a malformed space: the case's ERROR
  }
  nlohmann::json request = {{"scenario", resolved_scenario_json(s)},
                            {"config", s.impl_config.empty() ? nlohmann::json::object() : nlohmann::json::parse(s.impl_config)},
                            {"fixes", o_.fixes},
                            // each rank dumps its stack to the log shortly before this, so a hang's ERROR says where
                            {"deadline_s", std::chrono::duration<double>(o_.case_timeout).count()}};
  for (const auto& f : fixes)
    if (std::find(o_.fixes.begin(), o_.fixes.end(), f) == o_.fixes.end()) request["fixes"].push_back(f);
  std::string answer;
  try {
    answer = process_.request(request.dump(), o_.case_timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Infrastructure) throw;
    space_.reset();
    return error_trace(s, std::string("worker lost: ") + e.what());
  }
  try {
    Trace trace = trace_from_text(answer, "<" + implementation() + " resident worker, case " + s.name + ">");
    // An error that not every rank raised leaves the others in a collective the next request would
    // meet: that request gets a fresh worker.
    if (!trace.error.empty() && o_.dp > 1)
      if (const auto raised = ranks_that_raised(process_.request_log()); !raised.empty() && static_cast<int>(raised.size()) < o_.dp) {
        process_.stop();
        space_.reset();
      }
    return trace;
  } catch (const Error& e) {
    process_.stop();
    space_.reset();
    return error_trace(s, std::string("unreadable trace: ") + e.what());
  }
}

MapAnswer ResidentWorker::ask(const nlohmann::json& request, const std::string& key) {
  MapAnswer a;
  try {
    space();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    a.error = e.what();
    return a;
  }
  std::string line;
  try {
    line = process_.request(request.dump(), o_.case_timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Infrastructure) throw;
    space_.reset();
    a.error = std::string("worker lost: ") + e.what();
    return a;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const std::exception&) {
    process_.stop();
    space_.reset();
    a.error = "plugin " + o_.implementation + ": answered a " + request.begin().key() + " request with a line that is not JSON: " +
              clip_for_message(line, 120);
    return a;
  }
  if (j.is_object() && j.contains(key) && j[key].is_object()) a.value = j[key];
  else if (j.is_object() && j.contains("declined") && j["declined"].is_string()) a.declined = j["declined"].get<std::string>();
  else if (j.is_object() && j.contains("error") && j["error"].is_string()) a.error = j["error"].get<std::string>();
  else
    a.error = "plugin " + o_.implementation + ": a " + request.begin().key() + " answer needs \"" + key +
              "\" (an object) or \"declined\", got " + clip_for_message(j.dump(), 120);
  return a;
}

MapAnswer ResidentWorker::map(const nlohmann::json& config, const nlohmann::json& canonical) {
  return ask({{"map", {{"config", config}, {"scenario", canonical}}}}, "scenario");
}

MapAnswer ResidentWorker::from_scenario(const nlohmann::json& canonical) {
  return ask({{"from_scenario", canonical}}, "config");
}

MapAnswer ResidentWorker::declines(const nlohmann::json& config, const nlohmann::json& resolved) {
  return ask({{"declines", {{"config", config}, {"scenario", resolved}}}}, "runnable");
}

}  // namespace muoncheck::external
