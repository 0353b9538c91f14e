// The trace format "muoncheck-trace/1" (docs/trace-format.md, reports/trace.schema.json):
// what an implementation under test reports about one scenario run — its name and version,
// the scenario it ran, the dtypes it really used, the tags it decided, and per step the skip
// decision, loss scale, NS calls per param and the state after the step. Readers reject
// unknown keys and name the file and JSON path of every error; writers round-trip doubles.
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

constexpr const char* kTraceFormat = "muoncheck-trace/1";

// The dtypes the implementation actually computed in (the control emulates these).
struct TraceDTypes {
  DType param = DType::fp32, grad_accum = DType::fp32, comm = DType::fp32;
  DType ns = DType::fp16;        // Newton–Schulz arithmetic
  DType master = DType::fp32;    // master weights and optimizer state
};

struct TraceStep {
  int step = 0;
  bool skipped = false;
  std::optional<double> loss;
  double loss_scale = 1.0;        // the scale this step's backward used
  double loss_scale_after = 1.0;  // after the scaler's bookkeeping
  std::vector<int> ns_calls;      // per param, in tag order
  int ns_unattributed = 0;        // NS calls the implementation could not tie to a param
  std::vector<ParamState> params; // state after the step (weight; momentum / Adam moments optional)
};

struct Trace {
  std::string source;             // the file it was read from
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
