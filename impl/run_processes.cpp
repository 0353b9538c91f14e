#include "impl/run_processes.hpp"

#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "impl/faults/faults.hpp"
#include "impl/run_rank.hpp"

namespace muoncheck::impl {
namespace {

nlohmann::json job_json(const Scenario& s, const ImplOptions& o) {
  return {{"scenario", scenario_to_json(s)}, {"source", s.source}, {"faults", o.faults},
          {"timeout_ms", o.timeout.count()}, {"backend", compute_backend_name(o.backend)},
          {"comm", comm_backend_name(o.comm)}};
}

Scenario job_scenario(const nlohmann::json& j, ImplOptions& o) {
  // A variant's name ("x~z1") is no file stem: parse under a plain one, then restore it.
  nlohmann::json text = j.at("scenario");
  const std::string name = text.at("name").get<std::string>();
  text["name"] = "job";
  Scenario s = parse_scenario(text, j.at("source").get<std::string>());
  s.name = name;
  s.source = j.at("source").get<std::string>();
  o.faults = j.at("faults").get<std::vector<std::string>>();
  o.timeout = std::chrono::milliseconds(j.at("timeout_ms").get<int64_t>());
  if (!parse_compute_backend(j.at("backend").get<std::string>(), o.backend) ||
      !parse_comm_backend(j.at("comm").get<std::string>(), o.comm))
    throw Error(ErrorKind::Internal, "job for " + s.name + ": unknown backend");
  return s;
}

JobShape shape_of(const Scenario& s, const ImplOptions& o) {
  return {s.engine.dp, o.timeout, o.comm == CommBackend::nccl, s.name};
}

// Under NCCL, or with CUDA math, a process computes on its local rank's GPU.
int device_of(const ProcessGroup& g, const ImplOptions& o) {
  return o.backend == ComputeBackend::cuda || o.comm == CommBackend::nccl ? g.where().local_rank : 0;  // CHECK_EXCL_BR_LINE: another build's backend
}

}  // namespace

ImplResult run_on_processes(ProcessGroup& g, const Scenario& s, const ImplOptions& opts) {
  if (s.engine.dp > g.world())
    throw Error(ErrorKind::Unsupported, s.name + ": dp " + std::to_string(s.engine.dp) + " needs " +
                                            std::to_string(s.engine.dp) + " rank processes, this run has " +
                                            std::to_string(g.world()));
  const FaultSet faults = FaultSet::from_ids(opts.faults);
  RankObservation rank0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto replies = run_job(g, job_json(s, opts).dump(), shape_of(s, opts), [&](Communicator& comm) {
    rank0 = observe_rank(s, faults, opts, comm, device_of(g, opts));
    return std::string();
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<RankObservation> ranks;
  ranks.push_back(std::move(rank0));
  for (size_t r = 1; r < replies.size(); ++r)
    ranks.push_back(observation_from_json(nlohmann::json::parse(replies[r]), "rank " + std::to_string(r) + "'s observation"));
  return assemble(std::move(ranks), opts, wall);
}

std::optional<int> serve_engine_jobs(ProcessGroup& g) {
  return serve_jobs(g, [&g](const std::string& text) {
    auto opts = std::make_shared<ImplOptions>();
    auto s = std::make_shared<Scenario>(job_scenario(nlohmann::json::parse(text), *opts));
    JobPlan plan;
    plan.shape = shape_of(*s, *opts);
    plan.body = [&g, s, opts](Communicator& comm) {
      return observation_to_json(observe_rank(*s, FaultSet::from_ids(opts->faults), *opts, comm, device_of(g, *opts))).dump();
    };
    return plan;
  });
}

}  // namespace muoncheck::impl
