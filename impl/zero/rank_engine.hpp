// One data-parallel rank of the ZeRO engine (docs/semantics.md §4, §8). It holds only its share:
// stage ≥1 the fp32 master weights and optimizer state of its partition, stage ≥2 the
// gradient partition, stage 3 the param_dtype model partition (gathered per micro-step
// for the forward/backward and released). Every collective goes through `comm`; the
// optimizer math (NS, elementwise kernels) through `math` (impl/math/compute.hpp), which
// run_impl wraps in CountingCompute: the engine labels each NS call, it never records one.
// Files: engine_setup.cpp (params, tagging, partitioning), engine_micro.cpp (forward,
// backward, gradient reduction), engine_boundary.cpp (overflow, clip, AdamW, scaler,
// re-sync), muon_step.cpp (distributed Muon), state_export.cpp (trajectory, digests),
// checkpoint.cpp (save a rank's shard, restore from a checkpoint of any dp).
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/comm/communicator.hpp"
#include "impl/faults/faults.hpp"
#include "impl/math/compute.hpp"
#include "impl/math/newton_schulz.hpp"
#include "impl/zero/checkpoint.hpp"
#include "impl/zero/flat_layout.hpp"
#include "impl/zero/loss_scaler.hpp"
#include "impl/zero/ns_placement.hpp"
#include "impl/zero/param_handle.hpp"

namespace muoncheck::impl {

struct RankResult {
  int rank = 0;
  std::vector<ParamTag> tags;
  std::vector<uint64_t> digests;                 // one per step: the replicated state
  std::vector<double> step_seconds;              // wall time of each step's training work
                                                 // (micro-steps and optimizer step, not the export)
  Trajectory trajectory;                         // rank 0: complete but for NS events (run_impl adds
                                                 // them from every rank's CountingCompute log)
  ScalerState scaler_at_start;                   // the state `trajectory.initial` goes with
  int good_steps_at_start = 0;
};

class RankEngine {
 public:
  RankEngine(const Scenario& s, const FaultSet& faults, Communicator& comm, Compute& math);
  // Steps [first, end) (end -1: to the last), with state export; the state before `first`
  // (initial, or restored) is exported as the trajectory's initial state.
  void run(int first = 0, int end = -1);
  // checkpoint.cpp: this rank's part of a checkpoint; replace the state by a checkpoint's
  // (saved at any dp and stage), before run().
  RankShard save_shard() const;
  void restore(const EngineCheckpoint& ck);
  RankResult take_result() { return std::move(result_); }

  const FlatLayout& layout() const { return layout_; }
  const std::vector<ParamHandle>& params() const { return params_; }

 private:
  // engine_setup.cpp
  void build_params();
  // engine_micro.cpp
  void micro_step(int step, int k);
  std::vector<float> gather_model_for_forward(int step);
  // engine_boundary.cpp
  void optimizer_step(int step);
  void reduce_at_boundary(int step);
  void apply_muon(const std::vector<float>& update_owned, int step);
  void apply_adamw(int step);
  void resync_model(int step);
  DType scalar_wire() const;   // fp32; comm_dtype under "scalars-in-comm-dtype"
  // muon_step.cpp: returns Muon updates O (owned-indexed, zero outside Muon params).
  std::vector<float> muon_step(int step, const float* grad_owned, bool advance_momentum, Phase phase);
  void advance_momentum(const float* grad_owned, double grad_factor);
  // state_export.cpp
  void export_state(StepRecord* rec);
  uint64_t replicated_digest(const StepRecord& rec) const;

  void context(Purpose p, Phase ph, int step) { comm_.set_context({p, ph, step}); }
  int64_t at(int64_t flat) const { return flat - owned_.begin; }   // owned-array index
  double rate(double base, int p, int step) const;
  double lr_muon(int p, int step) const;
  double lr_adam(int p, int step) const;
  double weight_decay(int p) const;

  const Scenario& s_;
  FaultSet faults_;
  Communicator& comm_;
  Compute& math_;
  int rank_, dp_, stage_;
  FlatLayout layout_;
  NsConfig ns_;
  std::vector<ParamHandle> params_;
  std::vector<ParamTag> tags_;
  NsPlacement placement_;
  Range owned_;                        // master/optimizer/gradient range (stage 0: all)
  Range norm_range_;                   // the slice this rank adds to global norms

  std::vector<float> model_;           // param_dtype values: stage 0–2 flat N, stage 3 owned_
  std::vector<float> master_, momentum_, adam_m_, adam_v_;   // fp32, owned_
  std::vector<float> grad_acc_;        // grad_accum_dtype: stage 0/1 flat N, stage 2/3 owned_
  std::vector<float> grad_;            // G at the boundary, owned_
  std::vector<float> local_unreduced_; // this rank's own accumulated gradient (fault path only)
  LossScaler scaler_;
  int good_steps_ = 0;
  double loss_local_ = 0.0;            // Σ loss over this rank's samples of the step
  std::vector<float> grad_record_;     // G as recorded (unscaled, unclipped), owned_
  RankResult result_;
  std::chrono::steady_clock::time_point step_start_;
};

}  // namespace muoncheck::impl
