// The Scenario: everything that determines a run, as loaded and validated from one
// JSON file (see docs/scenario-format.md). Downstream code takes `const Scenario&`;
// flags select what runs but never change these numbers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace muoncheck {

struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;          // the layer shape (rank 1–4)
  std::optional<int> num_heads;        // explicit per-head tag from the scenario file
};

struct LlamaPreset {
  int layers = 2, hidden = 64, intermediate = 176, heads = 4, kv_heads = 2, vocab = 128;
  bool tie_embeddings = false;
};

struct ModelSpec {
  std::optional<LlamaPreset> preset;   // when set, `params` holds its expansion
  std::vector<ParamSpec> params;       // always the full, ordered parameter list
};

// Where the optimizer state (fp32 master, momentum, Adam moments) lives and its step runs:
// the accelerator, host memory, or swapped to a file (nvme). The semantics are the same; the
// field is for implementations with several paths.
enum class OffloadDevice { none, cpu, nvme };

// How the engine's dp ranks run: threads of this process, or processes (one per rank) that
// meet through a store and write their checkpoint shards to files (impl/run_processes.hpp).
// The semantics are the same; the state the ranks exchange takes another path.
enum class RankMode { threads, processes };

struct EngineConfig {
  int stage = 0, dp = 1, gas = 1, micro_batch = 1;
  bool zero_init = false;
  int64_t reduce_bucket_size = 500000000;
  int64_t allgather_bucket_size = 500000000;
  bool contiguous_gradients = true;
  DType param_dtype = DType::fp32;
  DType grad_accum_dtype = DType::fp32;
  DType comm_dtype = DType::fp32;
  OffloadDevice offload_optimizer = OffloadDevice::none;
  bool compile = false;          // an implementation's graph compiler (e.g. torch.compile of NS); no semantics
  RankMode ranks = RankMode::threads;
  int global_batch() const { return dp * gas * micro_batch; }
};

enum class MomentumForm { ema, sum };
enum class NsMethod { standard, gram };

// One Newton–Schulz iteration's polynomial: X ← aX + b(XXᵀ)X + c(XXᵀ)²X (docs/semantics.md §7).
// The default is the quintic of Keller Jordan's Muon, which DeepSpeed and torch.optim.Muon use.
struct NsCoefficients {
  double a = 3.4445, b = -4.7750, c = 2.0315;
  bool operator==(const NsCoefficients& o) const { return a == o.a && b == o.b && c == o.c; }
};
// max_dim: √max(r, c), emerging-optimizers' (and Megatron-core's) default "spectral" mode: moonlight without its 0.2.
enum class ScaleRule { deepspeed, moonlight, spectral, max_dim };
enum class ClipMode { raw_grad, update };
enum class ScalerType { none, static_scale, dynamic };
enum class OverflowValue { inf, nan };

struct AdamConfig {
  double lr = 3e-4, beta1 = 0.9, beta2 = 0.95, eps = 1e-10;
};

// A factor per optimizer step t (0-based, skipped steps included) that multiplies the
// Muon lr and the AdamW lr (docs/semantics.md, "Learning-rate schedules").
enum class LrShape { constant, linear_warmup, cosine, table };
struct LrSchedule {
  LrShape shape = LrShape::constant;
  int warmup_steps = 0;          // linear_warmup (≥ 1), cosine (≥ 0)
  int total_steps = 0;           // cosine: > warmup_steps
  double min_ratio = 0.0;        // cosine: the factor at and after total_steps
  // table: the factor of step t is factors[t]; the last one holds after the table ends. A schedule
  // no formula here says (an implementation's own) is written out step by step.
  std::vector<double> factors;
  bool operator==(const LrSchedule& o) const {   // spelled out: CUDA sources include this as C++17
    return shape == o.shape && warmup_steps == o.warmup_steps && total_steps == o.total_steps &&
           min_ratio == o.min_ratio && factors == o.factors;
  }
};

struct ParamGroup {
  std::string match;            // first group whose `match` is a substring of the name wins
  double lr_scale = 1.0;
  std::optional<double> weight_decay;  // absent: the optimizer's weight_decay
  std::optional<LrSchedule> lr_schedule;  // absent: the optimizer's lr_schedule
};

struct ClipConfig {
  double max_norm = 0.0;        // 0 disables clipping
  ClipMode mode = ClipMode::raw_grad;
};

struct OptimizerConfig {
  double lr = 0.02, momentum = 0.95;
  bool nesterov = true;
  MomentumForm momentum_form = MomentumForm::ema;
  NsMethod ns_method = NsMethod::gram;
  int ns_steps = 5;
  // One triple: every iteration uses it. More: iteration i uses triple i (exactly ns_steps of them).
  std::vector<NsCoefficients> ns_coefficients{NsCoefficients{}};
  std::string ns_schedule;       // the named schedule they come from (core/ns_schedules.hpp); "" for numbers
  DType ns_dtype = DType::fp16;  // default: bf16 for standard, fp16 for gram
  ScaleRule scale_rule = ScaleRule::deepspeed;
  double weight_decay = 0.0;
  bool per_head = false;
  LrSchedule lr_schedule;        // default constant: factor 1 at every step
  AdamConfig adam;
  std::vector<ParamGroup> groups;
  ClipConfig clip;
};

struct LossScalerConfig {
  ScalerType type = ScalerType::none;
  int initial_scale_power = 16;
  int scale_window = 1000;
  int hysteresis = 2;
  double min_scale = 1.0;
};

struct OverflowInjection {
  int step = 0, micro_step = 0, rank = 0;
  std::string param;            // parameter name
  int64_t index = 0;            // flat element index in the layer shape
  OverflowValue value = OverflowValue::inf;
};

struct Tolerance {
  double alpha = 4.0;           // impl may be this many times noisier than the control
  double floor_ulps = 8.0;      // plus this many unit roundoffs of the storage dtype
  std::string why;
};

// Save the full training state after step `save_after_step`, tear the run down, resume
// from the saved state (at the resume dp/stage; absent: the run's own) and continue. The
// exact trajectory is the uninterrupted one; a resume at another dp keeps the global
// batch (gas becomes dp·gas / resume dp).
struct ResumeConfig {
  std::optional<int> dp, stage;
};
struct CheckpointConfig {
  int save_after_step = 0;
  ResumeConfig resume;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;           // the file it was loaded from ("<generated>" otherwise)
  uint64_t seed = 0;
  int steps = 3;
  ModelSpec model;
  EngineConfig engine;
  OptimizerConfig optimizer;
  LossScalerConfig loss_scaler;
  std::vector<OverflowInjection> overflow;
  Tolerance tolerance;
  std::optional<CheckpointConfig> checkpoint;
  // An implementation's configuration this case runs it with (`sweep --impl`, `verify --impl`):
  // its knob values as a JSON object's text, "" for none. No semantics: the oracle never reads
  // it; it is part of the case (written, hashed) so a saved case reruns with it.
  std::string impl_config;
  // Why a generated case cannot run as drawn (its mapping was declined or failed: "declined: ..."
  // or "error: ..."); "" when it can. Never written: a saved case maps again.
  std::string impl_problem;
};

// How impl_problem says the plugin declined the case (the reason follows): a sweep counts it and
// draws again, a worker answers it with a declined trace.
inline constexpr const char* kDeclinedDraw = "declined: ";

// The matrix view of a layer shape: (shape[0], prod(rest)); rank 1 is (1, n).
struct MatrixView {
  int64_t rows = 1, cols = 1;
};
MatrixView matrix_view(const std::vector<int64_t>& shape);
int64_t element_count(const std::vector<int64_t>& shape);
int64_t total_elements(const ModelSpec& model);

// Lookups used by both sides.
int param_index(const Scenario& s, const std::string& name);  // -1 when absent
const ParamGroup* group_for(const Scenario& s, const std::string& param_name);
double lr_scale_for(const Scenario& s, const std::string& param_name);      // groups applied
double weight_decay_for(const Scenario& s, const std::string& param_name);  // groups applied
double initial_loss_scale(const LossScalerConfig& c);

// The coefficients iteration i (0-based, < ns_steps) of a Newton–Schulz call uses.
const NsCoefficients& ns_coefficients_at(const OptimizerConfig& o, int iteration);

// Learning-rate schedules: the factor of step t, the schedule a param follows (its group's
// lr_schedule, else the optimizer's), and the step's rates: lr · lr_scale · factor(t).
double lr_factor(const LrSchedule& sch, int t);
const LrSchedule& lr_schedule_for(const Scenario& s, const std::string& param_name);
double muon_lr_at(const Scenario& s, const std::string& param_name, int t);
double adam_lr_at(const Scenario& s, const std::string& param_name, int t);

// Checkpoint-resume: the scenario without its checkpoint (the uninterrupted run), and the
// engine the run resumes on (resume dp/stage applied, gas re-split; the scenario itself
// when it has no checkpoint).
Scenario without_checkpoint(const Scenario& s);
EngineConfig resume_engine(const Scenario& s);

}  // namespace muoncheck
