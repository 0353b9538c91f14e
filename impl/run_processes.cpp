#include "impl/run_processes.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "impl/faults/faults.hpp"
#include "impl/run_rank.hpp"
#include "impl/zero/shard_file.hpp"

namespace muoncheck::impl {
namespace {

// What a job runs: one leg of a scenario, how, and (a checkpoint scenario's legs) where its
// checkpoint lies: a directory under the store, named relative to it in the job's text
// (each process has its own path to the store).
struct EngineJob {
  Leg leg;
  ImplOptions opts;
  std::string checkpoint_name;
  CheckpointPlace checkpoint;
};

nlohmann::json job_json(const EngineJob& job) {
  const Leg& leg = job.leg;
  const ImplOptions& o = job.opts;
  nlohmann::json j{{"scenario", scenario_to_json(leg.scenario)}, {"source", leg.scenario.source},
                   {"first", leg.first}, {"end", leg.end}, {"saves", leg.saves}, {"resumes", leg.resumes},
                   {"faults", o.faults}, {"timeout_ms", o.timeout.count()}, {"backend", compute_backend_name(o.backend)},
                   {"comm", comm_backend_name(o.comm)}};
  const CheckpointPlace& at = job.checkpoint;
  if (leg.saves || leg.resumes)
    j["checkpoint"] = {{"dir", job.checkpoint_name}, {"dp", at.dp}, {"stage", at.stage}, {"next_step", at.next_step}};
  return j;
}

EngineJob job_from_json(const nlohmann::json& j, const std::string& store_dir) {
  // A variant's name ("x~z1") is no file stem: parse under a plain one, then restore it.
  nlohmann::json text = j.at("scenario");
  const std::string name = text.at("name").get<std::string>();
  text["name"] = "job";
  EngineJob job;
  Scenario& s = job.leg.scenario;
  s = parse_scenario(text, j.at("source").get<std::string>());
  s.name = name;
  s.source = j.at("source").get<std::string>();
  job.leg.first = j.at("first").get<int>();
  job.leg.end = j.at("end").get<int>();
  job.leg.saves = j.at("saves").get<bool>();
  job.leg.resumes = j.at("resumes").get<bool>();
  ImplOptions& o = job.opts;
  o.faults = j.at("faults").get<std::vector<std::string>>();
  o.timeout = std::chrono::milliseconds(j.at("timeout_ms").get<int64_t>());
  if (!parse_compute_backend(j.at("backend").get<std::string>(), o.backend) ||
      !parse_comm_backend(j.at("comm").get<std::string>(), o.comm))
    throw Error(ErrorKind::Internal, "job for " + s.name + ": unknown backend");
  if (j.contains("checkpoint")) {
    const auto& c = j.at("checkpoint");
    job.checkpoint_name = c.at("dir").get<std::string>();
    job.checkpoint = {(std::filesystem::path(store_dir) / job.checkpoint_name).string(), c.at("dp").get<int>(),
                      c.at("stage").get<int>(), c.at("next_step").get<int>()};
  }
  return job;
}

JobShape shape_of(const Scenario& s, const ImplOptions& o) {
  return {s.engine.dp, o.timeout, o.comm == CommBackend::nccl, s.name};
}

// Under NCCL, or with CUDA math, a process computes on its local rank's GPU.
int device_of(const ProcessGroup& g, const ImplOptions& o) {
  return o.backend == ComputeBackend::cuda || o.comm == CommBackend::nccl ? g.where().local_rank : 0;  // CHECK_EXCL_BR_LINE: another build's backend
}

// One rank's part of a job, on rank 0 as on a worker: a resumed leg first reads every
// saving rank's shard file, a saving leg writes this rank's after its last step.
RankObservation observe_job_rank(ProcessGroup& g, const EngineJob& job, Communicator& comm) {
  std::optional<EngineCheckpoint> from;
  if (job.leg.resumes) from = read_checkpoint_files(job.checkpoint);
  RankShard shard;
  RankObservation o = observe_rank(job.leg, FaultSet::from_ids(job.opts.faults), job.opts, comm, device_of(g, job.opts),
                                   from ? &*from : nullptr, job.leg.saves ? &shard : nullptr);
  if (job.leg.saves) write_shard_file(job.checkpoint, comm.rank(), shard);
  return o;
}

ImplResult run_leg(ProcessGroup& g, const EngineJob& job) {
  const auto t0 = std::chrono::steady_clock::now();
  RankObservation rank0;
  const auto replies = run_job(g, job_json(job).dump(), shape_of(job.leg.scenario, job.opts), [&](Communicator& comm) {
    rank0 = observe_job_rank(g, job, comm);
    return std::string();
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<RankObservation> ranks;
  ranks.push_back(std::move(rank0));
  for (size_t r = 1; r < replies.size(); ++r)
    ranks.push_back(observation_from_json(nlohmann::json::parse(replies[r]), "rank " + std::to_string(r) + "'s observation"));
  return assemble(job.leg, std::move(ranks), job.opts, wall);
}

}  // namespace

ImplResult run_on_processes(ProcessGroup& g, const Scenario& s, const ImplOptions& opts) {
  const std::vector<Leg> legs = legs_of(s);
  for (const Leg& leg : legs)
    if (leg.scenario.engine.dp > g.world())
      throw Error(ErrorKind::Unsupported, s.name + ": dp " + std::to_string(leg.scenario.engine.dp) + " needs " +
                                              std::to_string(leg.scenario.engine.dp) + " rank processes, this run has " +
                                              std::to_string(g.world()));
  // A checkpoint scenario's shards go to a directory of their own under the store.
  static std::atomic<int64_t> checkpoints{0};
  const std::string name = s.checkpoint ? "checkpoints/run-" + std::to_string(checkpoints++) : "";
  const Scenario& saving = legs.front().scenario;
  const CheckpointPlace at{(std::filesystem::path(g.where().store_dir) / name).string(), saving.engine.dp,
                           saving.engine.stage, legs.front().end};
  ImplResult out = run_legs(s, [&](const Leg& leg) { return run_leg(g, EngineJob{leg, opts, name, at}); });
  if (s.checkpoint) {
    std::error_code ignored;   // a shard left behind only takes room in this run's store
    std::filesystem::remove_all(at.dir, ignored);
  }
  return out;
}

std::optional<int> serve_engine_jobs(ProcessGroup& g) {
  return serve_jobs(g, [&g](const std::string& text) {
    auto job = std::make_shared<EngineJob>(job_from_json(nlohmann::json::parse(text), g.where().store_dir));
    JobPlan plan;
    plan.shape = shape_of(job->leg.scenario, job->opts);
    plan.body = [&g, job](Communicator& comm) { return observation_to_json(observe_job_rank(g, *job, comm)).dump(); };
    return plan;
  });
}

}  // namespace muoncheck::impl
