// The plain-data result of running a scenario, the one shape in which the oracle,
// the control and the implementation hand their results to the harness. Values
// are doubles (the oracle converts from its Real); tensors are row-major in the
// layer shape. A tensor a component does not have (momentum of an AdamW param) is empty.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace muoncheck {

struct ParamTag {
  std::string name;
  bool use_muon = false;
  int num_heads = 0;        // 0: not split by heads
};

struct NsCall {
  int step = 0;
  int param = 0;            // index in the model's parameter list
  int rank = 0;             // the rank that ran it (0 for the oracle)
  int heads = 0;            // 0 when the call was not split by heads
};

struct ParamState {
  std::vector<double> weight;     // fp32 master weight (the oracle: exact)
  std::vector<double> grad;       // the step's accumulated, reduced, unscaled, unclipped G
  std::vector<double> momentum;   // Muon params
  std::vector<double> adam_m;     // AdamW params
  std::vector<double> adam_v;
};

// The loss scaler's whole state; with the params it is everything a step reads.
struct ScalerState {
  double scale = 1.0;
  int hysteresis = 0;             // counter of §4.3 (starts at loss_scaler.hysteresis)
  int good_streak = 0;            // consecutive good steps since the last change
};

struct StepRecord {
  int step = 0;
  double loss = 0.0;              // mean over the global batch at the weights before the step
  bool skipped = false;
  double scale = 1.0;             // loss scale used in this step
  ScalerState scaler_after;       // after the scaler's bookkeeping
  int good_steps_after = 0;       // AdamW's t after this step
  double grad_norm = 0.0;         // ‖G‖₂ of the unscaled, unclipped gradient (inf/nan on overflow)
  std::vector<NsCall> ns_calls;
  std::vector<ParamState> params; // state after the step, one per model param
};

// Everything needed to run one more step (stepwise checks start the oracle here).
struct TrainingState {
  std::vector<ParamState> params;
  ScalerState scaler;
  int good_steps = 0;
};

struct Trajectory {
  std::string producer;           // "oracle:float128", "control", "impl:cpu", ...
  std::vector<ParamTag> tags;
  std::vector<ParamState> initial;
  std::vector<StepRecord> steps;
};

}  // namespace muoncheck
