#include "impl/run_rank.hpp"

#include "impl/comm/counting_communicator.hpp"
#include "impl/math/counting_compute.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {
namespace {

// The saving leg (`a`) continued by the resumed one (`b`): one trajectory, per-rank logs and
// digests of both (a rank index present in one of them only has that one's), and the state
// the resumed engine started from.
ImplResult joined(ImplResult a, ImplResult b) {
  for (auto& step : b.trajectory.steps) a.trajectory.steps.push_back(std::move(step));
  a.step_seconds.insert(a.step_seconds.end(), b.step_seconds.begin(), b.step_seconds.end());
  auto append = [](auto& into, auto& from) {
    if (into.size() < from.size()) into.resize(from.size());
    for (size_t r = 0; r < from.size(); ++r) into[r].insert(into[r].end(), from[r].begin(), from[r].end());
  };
  append(a.collectives_by_rank, b.collectives_by_rank);
  append(a.collective_seconds_by_rank, b.collective_seconds_by_rank);
  append(a.replicated_digest_by_rank, b.replicated_digest_by_rank);
  for (size_t r = a.tags_by_rank.size(); r < b.tags_by_rank.size(); ++r) a.tags_by_rank.push_back(b.tags_by_rank[r]);
  a.resumed_state = std::move(b.resumed_state);
  a.wall_seconds += b.wall_seconds;
  return a;
}

}  // namespace

std::vector<Leg> legs_of(const Scenario& s) {
  if (!s.checkpoint) return {Leg{s, 0, s.steps, false, false}};
  const int k = s.checkpoint->save_after_step;
  Scenario resumed = without_checkpoint(s);
  resumed.engine = resume_engine(s);
  return {Leg{without_checkpoint(s), 0, k + 1, true, false}, Leg{std::move(resumed), k + 1, s.steps, false, true}};
}

ImplResult run_legs(const Scenario& s, const std::function<ImplResult(const Leg&)>& run_leg) {
  std::optional<ImplResult> out;
  for (const Leg& leg : legs_of(s)) out = out ? joined(std::move(*out), run_leg(leg)) : run_leg(leg);
  return std::move(*out);
}

RankObservation observe_rank(const Leg& leg, const FaultSet& faults, const ImplOptions& opts, Communicator& comm,
                             int device, const EngineCheckpoint* from, RankShard* save) {
  CountingCommunicator counting(comm);
  const auto backend = make_compute(opts.backend, device, opts.ns_kernel);
  CountingCompute math(*backend, comm.rank());
  RankEngine engine(leg.scenario, faults, counting, math);
  RankObservation o;
  o.flat_elements = engine.layout().total();
  o.partition_elements = engine.layout().partition_size();
  if (from) engine.restore(*from);
  engine.run(leg.first, leg.end);
  if (save) *save = engine.save_shard();
  o.engine = engine.take_result();
  o.collectives = counting.log();
  o.collective_seconds = counting.seconds();
  o.ns_calls = math.log();
  return o;
}

ImplResult assemble(const Leg& leg, std::vector<RankObservation> ranks, const ImplOptions& opts, double wall_seconds) {
  ImplResult out;
  out.wall_seconds = wall_seconds;
  out.flat_elements = ranks[0].flat_elements;
  out.partition_elements = ranks[0].partition_elements;
  if (leg.resumes)
    out.resumed_state = TrainingState{ranks[0].engine.trajectory.initial, ranks[0].engine.scaler_at_start,
                                      ranks[0].engine.good_steps_at_start};
  out.trajectory = std::move(ranks[0].engine.trajectory);
  out.step_seconds = std::move(ranks[0].engine.step_seconds);
  std::vector<std::vector<NsCall>> ns_logs;
  for (auto& r : ranks) {
    out.tags_by_rank.push_back(std::move(r.engine.tags));
    out.replicated_digest_by_rank.push_back(std::move(r.engine.digests));
    out.collectives_by_rank.push_back(std::move(r.collectives));
    out.collective_seconds_by_rank.push_back(std::move(r.collective_seconds));
    ns_logs.push_back(std::move(r.ns_calls));
  }
  // NS events come only from the decorators' logs: what ran, on every rank (a resumed leg's
  // steps start after the checkpoint).
  const int end = out.trajectory.steps.empty() ? 0 : out.trajectory.steps.back().step + 1;
  const auto calls = ns_calls_by_step(ns_logs, end);
  for (auto& step : out.trajectory.steps) step.ns_calls = calls[static_cast<size_t>(step.step)];
  out.faults = opts.faults;
  return out;
}

}  // namespace muoncheck::impl
