#include "oracle/control_ensemble.hpp"

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "oracle/parallel.hpp"

namespace muoncheck::oracle {

std::string RoundingVariant::label() const {
  std::string s;
  switch (dot) {
    case DotOrder::sequential: s = "seq"; break;
    case DotOrder::reversed: s = "rev"; break;
    case DotOrder::pairwise: s = "pairwise"; break;
    case DotOrder::blocked: s = "blocked" + std::to_string(block); break;
  }
  s += fused_axpby ? "/fused" : "/unfused";
  s += norm_in_ns_dtype ? "/norm-ns" : "/norm-fp32";
  s += fp32_backward ? "/bw32" : "/bw-exact";
  const std::string offset = reduce_offset < 0 ? "(" + std::to_string(reduce_offset) + ")" : std::to_string(reduce_offset);
  switch (reduce) {
    case ReduceOrder::rank_order: s += "/rank"; break;
    case ReduceOrder::ring: s += "/ring+" + offset; break;
    case ReduceOrder::ring_reversed: s += "/ring-" + offset; break;
  }
  if (reduce != ReduceOrder::rank_order && reduce_start == ReduceStart::all_reduce_segment) s += "seg";
  if (reduce != ReduceOrder::rank_order && reduce_start == ReduceStart::partition) s += "part";
  if (random_rounding != 0) s += "/rr" + std::to_string(random_rounding);
  return s;
}

std::vector<RoundingVariant> control_members(int count) {
  if (count < 1) throw Error(ErrorKind::BadInput, "control ensemble: expected at least 1 member, got " + std::to_string(count));
  using D = DotOrder;
  using R = ReduceOrder;
  constexpr auto seg = ReduceStart::all_reduce_segment, part = ReduceStart::partition, elem = ReduceStart::element;
  // Eight deterministic sequences: every freedom appears both ways, and no two members
  // share their dot order, epilogue, norm and reduction all at once. Member 0 reduces as
  // Gloo's ring all-reduce does (segment s of the flat gradient from rank s−1 backwards),
  // member 1 as a ring reduce-scatter does (partition c forwards from rank c+1).
  const RoundingVariant base[8] = {
      {D::sequential, 32, true, true, true, R::ring_reversed, -1, seg, 0},   // the CPU implementation's order
      {D::reversed, 32, false, false, false, R::ring, 1, part, 0},
      {D::pairwise, 32, true, false, true, R::ring_reversed, 0, elem, 0},
      {D::blocked, 16, false, true, false, R::ring, 2, elem, 0},
      {D::sequential, 32, false, true, true, R::ring_reversed, 1, elem, 0},
      {D::blocked, 64, true, true, false, R::ring, 3, elem, 0},
      {D::blocked, 32, false, true, true, R::rank_order, 0, elem, 0},
      {D::reversed, 32, true, false, false, R::ring_reversed, 2, elem, 0},
  };
  std::vector<RoundingVariant> out;
  for (int k = 0; k < count; ++k) {
    RoundingVariant v = base[k % 8];
    // Members 6, 7 (and every later one) add Monte Carlo random rounding to every
    // rounding: the orders nobody enumerated. It costs ~5× a deterministic member.
    if (k >= 6) v.random_rounding = static_cast<uint64_t>(k - 5);
    out.push_back(v);
  }
  return out;
}

std::string control_fingerprint(const Scenario& s) {
  nlohmann::json j = scenario_to_json(s);
  j.erase("name");
  j.erase("description");
  j.erase("checkpoint");   // a resumed run follows the uninterrupted trajectory
  auto& e = j["engine"];
  for (const char* k : {"reduce_bucket_size", "allgather_bucket_size", "contiguous_gradients", "zero_init", "stage",
                        "offload_optimizer", "compile", "ranks"})
    e.erase(k);
  e["reduces_every_micro_step"] = s.engine.stage >= 2;
  e["update_through_lowp_gather"] = s.engine.stage >= 1 && s.engine.comm_dtype != DType::fp32;
  return j.dump();
}

namespace {
// Runs body(k) for every member, as tasks spread over the cores.
template <class Body>
void for_each_member(int count, Body body) {
  parallel_tasks(std::vector<double>(static_cast<size_t>(count), 1e9), body);
}
}  // namespace

std::vector<Trajectory> run_control_ensemble(const Scenario& s, int count) {
  const auto members = control_members(count);
  std::vector<Trajectory> out(members.size());
  for_each_member(count, [&](size_t k) { out[k] = run_control(s, members[k]); });
  return out;
}

std::vector<StepRecord> control_steps_from(const Scenario& s, int step, const TrainingState& before, int count) {
  const auto members = control_members(count);
  std::vector<StepRecord> out(members.size());
  for_each_member(count, [&](size_t k) { out[k] = control_step_from(s, step, before, members[k]); });
  return out;
}

}  // namespace muoncheck::oracle
