#include "harness/traces/trace_io.hpp"

#include <cmath>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "core/input_limits.hpp"
#include "core/json_reader.hpp"
#include "core/scenario_io.hpp"

namespace muoncheck {

namespace {

// JSON has no inf/nan: non-finite elements travel as the strings "inf", "-inf", "nan".
nlohmann::json values_to_json(const std::vector<double>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (double x : v) {
    if (std::isfinite(x)) a.push_back(x);
    else a.push_back(std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
  }
  return a;
}

std::vector<double> values_from_json(const nlohmann::json& a, const std::string& file, const std::string& path) {
  if (!a.is_array()) throw bad_input(file, path, "an array of numbers", describe_json(a));
  std::vector<double> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i];
    if (x.is_number()) out.push_back(x.get<double>());
    else if (x == "inf") out.push_back(std::numeric_limits<double>::infinity());
    else if (x == "-inf") out.push_back(-std::numeric_limits<double>::infinity());
    else if (x == "nan") out.push_back(std::numeric_limits<double>::quiet_NaN());
    else throw bad_input(file, path + "/" + std::to_string(i), "a number or \"inf\", \"-inf\", \"nan\"", describe_json(x));
  }
  return out;
}

nlohmann::json state_to_json(const ParamState& p) {
  nlohmann::json j = {{"weight", values_to_json(p.weight)}};
  if (!p.momentum.empty()) j["momentum"] = values_to_json(p.momentum);
  if (!p.adam_m.empty()) j["adam_m"] = values_to_json(p.adam_m), j["adam_v"] = values_to_json(p.adam_v);
  return j;
}

ParamState state_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  ParamState p;
  auto read = [&](const std::string& key, std::vector<double>& out) {
    if (const auto* v = r.raw(key)) out = values_from_json(*v, file, r.path_of(key));
  };
  if (!r.has("weight")) r.fail("weight", "an array of numbers (required)", "nothing");
  read("weight", p.weight);
  read("momentum", p.momentum);
  read("adam_m", p.adam_m);
  read("adam_v", p.adam_v);
  if (p.adam_m.size() != p.adam_v.size()) r.fail("adam_v", "as many elements as adam_m", std::to_string(p.adam_v.size()));
  r.finish();
  return p;
}

DType dtype_field(JsonObjectReader& r, const std::string& key, DType fallback) {
  const auto name = r.one_of(key, std::string(dtype_name(fallback)), {"fp32", "bf16", "fp16"});
  return *parse_dtype(name);
}

}  // namespace

nlohmann::json trace_to_json(const Trace& t) {
  using nlohmann::json;
  json scenario = {{"name", t.scenario_name}};
  if (!t.scenario_hash.empty()) scenario["hash"] = t.scenario_hash;
  if (t.scenario_json) scenario["json"] = *t.scenario_json;
  json j = {{"format", kTraceFormat},
            {"implementation", {{"name", t.impl_name}, {"version", t.impl_version}, {"details", t.impl_details}}},
            {"scenario", scenario}};
  if (!t.unsupported.empty()) j["unsupported"] = t.unsupported;
  if (!t.error.empty()) j["error"] = t.error;
  if (!t.unsupported.empty() || !t.error.empty()) return j;
  j["dtypes"] = {{"param", dtype_name(t.dtypes.param)}, {"grad_accum", dtype_name(t.dtypes.grad_accum)},
                 {"comm", dtype_name(t.dtypes.comm)}, {"ns", dtype_name(t.dtypes.ns)}, {"master", dtype_name(t.dtypes.master)}};
  json tags = json::array();
  for (const auto& g : t.tags) tags.push_back({{"name", g.name}, {"use_muon", g.use_muon}, {"num_heads", g.num_heads}});
  j["tags"] = tags;
  if (!t.initial.empty()) {
    json init = json::array();
    for (const auto& p : t.initial) init.push_back(state_to_json(p));
    j["initial"] = init;
  }
  json steps = json::array();
  for (const auto& s : t.steps) {
    json ps = json::array();
    for (const auto& p : s.params) ps.push_back(state_to_json(p));
    json sj = {{"step", s.step}, {"skipped", s.skipped}, {"loss_scale", s.loss_scale},
               {"loss_scale_after", s.loss_scale_after}, {"ns_calls", s.ns_calls}, {"params", ps}};
    if (s.loss && std::isfinite(*s.loss)) sj["loss"] = *s.loss;
    if (s.ns_unattributed) sj["ns_unattributed"] = s.ns_unattributed;
    steps.push_back(sj);
  }
  j["steps"] = steps;
  return j;
}

Trace trace_from_json(const nlohmann::json& j, const std::string& file) {
  Trace t;
  t.source = file;
  JsonObjectReader r(j, file, "");
  const auto format = r.string("format", "", true);
  if (format != kTraceFormat) r.fail("format", std::string("\"") + kTraceFormat + "\"", "\"" + format + "\"");
  r.object("implementation", [&](JsonObjectReader& ir) {
    t.impl_name = ir.string("name", "", true);
    t.impl_version = ir.string("version", "", true);
    if (const auto* d = ir.raw("details")) {   // free-form
      if (!d->is_object()) ir.fail("details", "an object", describe_json(*d));
      t.impl_details = *d;
    }
    ir.finish();
  });
  if (!r.has("implementation")) r.fail("implementation", "an object (required)", "nothing");
  if (!r.has("scenario")) r.fail("scenario", "an object (required)", "nothing");
  r.object("scenario", [&](JsonObjectReader& sr) {
    t.scenario_name = sr.string("name", "", true);
    t.scenario_hash = sr.string("hash", "");
    if (const auto* sj = sr.raw("json")) {   // checked when verify parses it as a scenario
      if (!sj->is_object()) sr.fail("json", "a scenario object", describe_json(*sj));
      t.scenario_json = *sj;
    }
    sr.finish();
  });
  t.unsupported = r.string("unsupported", "");
  t.error = r.string("error", "");
  if (!t.unsupported.empty() || !t.error.empty()) {
    r.finish();
    return t;
  }
  if (r.has("dtypes"))
    r.object("dtypes", [&](JsonObjectReader& dr) {
      t.dtypes.param = dtype_field(dr, "param", DType::fp32);
      t.dtypes.grad_accum = dtype_field(dr, "grad_accum", t.dtypes.param);
      t.dtypes.comm = dtype_field(dr, "comm", t.dtypes.param);
      t.dtypes.ns = dtype_field(dr, "ns", DType::fp16);
      t.dtypes.master = dtype_field(dr, "master", DType::fp32);
      dr.finish();
    });
  else r.fail("dtypes", "an object (required)", "nothing");
  if (!r.has("tags")) r.fail("tags", "an array (required)", "nothing");
  r.array("tags", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader tr(v, file, path);
    ParamTag tag;
    tag.name = tr.string("name", "", true);
    tag.use_muon = tr.boolean("use_muon", false);
    tag.num_heads = static_cast<int>(tr.integer("num_heads", 0, 0, 1 << 20));
    (void)tr.integer("ns_heads_seen", 0, 0, 1 << 20);   // informative: the batch size NS saw
    tr.finish();
    t.tags.push_back(tag);
  });
  if (r.has("initial"))
    r.array("initial", [&](const nlohmann::json& v, const std::string& path) { t.initial.push_back(state_from_json(v, file, path)); });
  if (!r.has("steps")) r.fail("steps", "an array (required)", "nothing");
  int64_t ns_calls_total = 0;
  r.array("steps", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader sr(v, file, path);
    TraceStep s;
    s.step = static_cast<int>(sr.integer("step", static_cast<int64_t>(t.steps.size()), 0, 1 << 30));
    if (s.step != static_cast<int>(t.steps.size())) sr.fail("step", std::to_string(t.steps.size()), std::to_string(s.step));
    s.skipped = sr.boolean("skipped", false);
    if (sr.has("loss")) s.loss = sr.number("loss", 0.0, -INFINITY, INFINITY);
    s.loss_scale = sr.number("loss_scale", 1.0, 0.0, INFINITY, true);
    if (!sr.has("loss_scale_after")) sr.fail("loss_scale_after", "a positive number (required)", "nothing");
    s.loss_scale_after = sr.number("loss_scale_after", 1.0, 0.0, INFINITY, true);
    // Judging a trace makes one record per NS call: the counts are bounded before that.
    auto count_calls = [&](int64_t n, const std::string& path) {
      ns_calls_total += n;
      if (ns_calls_total > limits::kMaxNsCallsPerTrace)
        throw bad_input(file, path, "at most " + std::to_string(limits::kMaxNsCallsPerTrace) + " NS calls in the whole trace",
                        "more (reached here)");
    };
    s.ns_unattributed = static_cast<int>(sr.integer("ns_unattributed", 0, 0, limits::kMaxNsCallsPerEntry));
    count_calls(s.ns_unattributed, sr.path_of("ns_unattributed"));
    if (!sr.has("ns_calls")) sr.fail("ns_calls", "an array of counts, one per tag (required)", "nothing");
    sr.array("ns_calls", [&](const nlohmann::json& c, const std::string& cp) {
      const std::string expected = "a count (integer in [0, " + std::to_string(limits::kMaxNsCallsPerEntry) + "])";
      if (!c.is_number_integer() || (c.is_number_unsigned() && c.get<uint64_t>() > static_cast<uint64_t>(limits::kMaxNsCallsPerEntry)) ||
          c.get<int64_t>() < 0 || c.get<int64_t>() > limits::kMaxNsCallsPerEntry)
        throw bad_input(file, cp, expected, describe_json(c));
      count_calls(c.get<int64_t>(), cp);
      s.ns_calls.push_back(static_cast<int>(c.get<int64_t>()));
    });
    if (s.ns_calls.size() != t.tags.size()) sr.fail("ns_calls", std::to_string(t.tags.size()) + " counts (one per tag)", std::to_string(s.ns_calls.size()));
    if (!sr.has("params")) sr.fail("params", "an array of states, one per tag (required)", "nothing");
    sr.array("params", [&](const nlohmann::json& p, const std::string& pp) { s.params.push_back(state_from_json(p, file, pp)); });
    if (s.params.size() != t.tags.size()) sr.fail("params", std::to_string(t.tags.size()) + " states (one per tag)", std::to_string(s.params.size()));
    sr.finish();
    t.steps.push_back(std::move(s));
  });
  if (!t.initial.empty() && t.initial.size() != t.tags.size())
    r.fail("initial", std::to_string(t.tags.size()) + " states (one per tag)", std::to_string(t.initial.size()));
  r.finish();
  return t;
}

Trace load_trace(const std::string& path) { return trace_from_json(read_json_file(path, "trace"), path); }

Trace trace_from_text(std::string_view text, const std::string& source) {
  return trace_from_json(parse_json_bounded(text, source), source);
}

void save_trace(const Trace& t, const std::string& path) { write_file_atomically(path, trace_to_json(t).dump() + "\n"); }

}  // namespace muoncheck
