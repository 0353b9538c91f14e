// The trace format "muoncheck-trace/2" (docs/trace-format.md, schemas/trace.schema.json; /1 is
// still read): what an implementation under test reports about one scenario run — its name and
// version, the scenario it ran, the dtypes it really used, the tags it decided, and per step the
// skip decision, loss scale, NS calls per param and the state after the step; from /2 on also,
// each optional, the scaler's counters, the gradients, each NS call's rank and heads, every
// rank's tags, collective log and digests of its replicated state, and which run of the
// scenario it is (the repeat `deterministic` compares against). Readers reject unknown keys and
// name the file and JSON path of every error; writers round-trip doubles and write /2.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck {

constexpr const char* kTraceFormat = "muoncheck-trace/2";
constexpr const char* kTraceFormatV1 = "muoncheck-trace/1";

// The dtypes the implementation actually computed in (the control emulates these).
struct TraceDTypes {
  DType param = DType::fp32, grad_accum = DType::fp32, comm = DType::fp32;
  DType ns = DType::fp16;        // Newton–Schulz arithmetic
  DType master = DType::fp32;    // master weights and optimizer state
};

// The loss scaler's counters after a step and AdamW's step count (/2).
struct TraceScaler {
  int hysteresis = 0;
  int good_streak = 0;
  int good_steps = 0;
};

// One NS call (/2): the tag it orthogonalized (-1: none), the rank that ran it, its heads.
struct TraceNsEvent {
  int param = -1;
  int rank = 0;
  int heads = 0;
};

// One collective as one rank issued it (/2). kind, purpose and phase are the names of
// docs/trace-format.md; the trace reader checks the shape, verify checks the names.
struct TraceCollective {
  std::string kind, purpose, phase;
  DType dtype = DType::fp32;
  int64_t elements = 0, bytes = 0;
  int step = 0;
};

struct TraceStep {
  int step = 0;
  bool skipped = false;
  std::optional<double> loss;
  double loss_scale = 1.0;        // the scale this step's backward used
  double loss_scale_after = 1.0;  // after the scaler's bookkeeping
  std::vector<int> ns_calls;      // per param, in tag order
  int ns_unattributed = 0;        // NS calls the implementation could not tie to a param
  std::vector<ParamState> params; // state after the step (weight; grad, momentum, Adam moments optional)
  std::optional<TraceScaler> scaler;        // /2, optional
  std::optional<double> grad_norm;          // /2, optional
  std::optional<std::vector<TraceNsEvent>> ns_events;   // /2, optional: agrees with ns_calls
};

struct Trace {
  std::string source;             // the file it was read from
  int version = 2;                // the format's version it was read in (1 or 2)
  int repeat = 0;                 // 0: the scenario's run; 1: a second, separate run of it
  std::string impl_name, impl_version;
  nlohmann::json impl_details = nlohmann::json::object();
  std::string scenario_name;
  std::string scenario_hash;      // empty when the writer could not compute it
  std::optional<nlohmann::json> scenario_json;   // the full scenario, when embedded
  std::string unsupported;        // non-empty: the implementation declined the scenario
  std::string error;              // non-empty: the implementation failed while running it
  TraceDTypes dtypes;
  std::vector<ParamTag> tags;     // as the implementation decided them
  std::vector<ParamState> initial;   // optional: the state before step 0
  std::vector<TraceStep> steps;
  // /2, each optional: every rank's tags, collective log, and digest (16 hex digits) of its
  // replicated state after every step.
  std::optional<std::vector<std::vector<ParamTag>>> tags_by_rank;
  std::optional<std::vector<std::vector<TraceCollective>>> collectives_by_rank;
  std::optional<std::vector<std::vector<uint64_t>>> digests_by_rank;

  std::string implementation() const { return impl_name + " " + impl_version; }
};

nlohmann::json trace_to_json(const Trace& t);
Trace trace_from_json(const nlohmann::json& j, const std::string& source);
// Both read bounded (core/bounded_json.hpp) and bound the NS call counts
// (core/input_limits.hpp); every error is BadInput naming the file and JSON path.
Trace load_trace(const std::string& path);
Trace trace_from_text(std::string_view text, const std::string& source);
void save_trace(const Trace& t, const std::string& path);  // atomic write

}  // namespace muoncheck
