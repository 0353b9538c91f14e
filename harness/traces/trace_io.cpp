#include "harness/traces/trace_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
nlohmann::json value_to_json(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

nlohmann::json values_to_json(const std::vector<double>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (double x : v) a.push_back(value_to_json(x));
  return a;
}

// One element of that encoding: a number, or "inf", "-inf", "nan".
std::optional<double> value_from_json(const nlohmann::json& x) {
  if (x.is_number()) return x.get<double>();
  if (x == "inf") return std::numeric_limits<double>::infinity();
  if (x == "-inf") return -std::numeric_limits<double>::infinity();
  if (x == "nan") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

std::vector<double> values_from_json(const nlohmann::json& a, const std::string& file, const std::string& path) {
  if (!a.is_array()) throw bad_input(file, path, "an array of numbers", describe_json(a));
  std::vector<double> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = value_from_json(a[i]);
    if (!x) throw bad_input(file, path + "/" + std::to_string(i), "a number or \"inf\", \"-inf\", \"nan\"", describe_json(a[i]));
    out.push_back(*x);
  }
  return out;
}

nlohmann::json state_to_json(const ParamState& p) {
  nlohmann::json j = {{"weight", values_to_json(p.weight)}};
  if (!p.grad.empty()) j["grad"] = values_to_json(p.grad);
  if (!p.momentum.empty()) j["momentum"] = values_to_json(p.momentum);
  if (!p.adam_m.empty()) j["adam_m"] = values_to_json(p.adam_m), j["adam_v"] = values_to_json(p.adam_v);
  return j;
}

ParamState state_from_json(const nlohmann::json& j, const std::string& file, const std::string& path, int version) {
  JsonObjectReader r(j, file, path);
  ParamState p;
  auto read = [&](const std::string& key, std::vector<double>& out) {
    if (const auto* v = r.raw(key)) out = values_from_json(*v, file, r.path_of(key));
  };
  if (!r.has("weight")) r.fail("weight", "an array of numbers (required)", "nothing");
  read("weight", p.weight);
  if (version >= 2) read("grad", p.grad);
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

std::string hex_digest(uint64_t d) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(d));
  return buf;
}

nlohmann::json tags_to_json(const std::vector<ParamTag>& tags) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& g : tags) a.push_back({{"name", g.name}, {"use_muon", g.use_muon}, {"num_heads", g.num_heads}});
  return a;
}

ParamTag tag_from_json(const nlohmann::json& v, const std::string& file, const std::string& path) {
  JsonObjectReader tr(v, file, path);
  ParamTag tag;
  tag.name = tr.string("name", "", true);
  tag.use_muon = tr.boolean("use_muon", false);
  tag.num_heads = static_cast<int>(tr.integer("num_heads", 0, 0, 1 << 20));
  (void)tr.integer("ns_heads_seen", 0, 0, 1 << 20);   // informative: the batch size NS saw
  tr.finish();
  return tag;
}

// The /2 per-rank block: every rank's tags, collectives and digests (each part in all ranks or none).
nlohmann::json ranks_to_json(const Trace& t) {
  nlohmann::json ranks = nlohmann::json::array();
  size_t n = 0;
  if (t.tags_by_rank) n = std::max(n, t.tags_by_rank->size());
  if (t.collectives_by_rank) n = std::max(n, t.collectives_by_rank->size());
  if (t.digests_by_rank) n = std::max(n, t.digests_by_rank->size());
  for (size_t r = 0; r < n; ++r) {
    nlohmann::json j = nlohmann::json::object();
    if (t.tags_by_rank && r < t.tags_by_rank->size()) j["tags"] = tags_to_json((*t.tags_by_rank)[r]);
    if (t.collectives_by_rank && r < t.collectives_by_rank->size()) {
      nlohmann::json log = nlohmann::json::array();
      for (const auto& c : (*t.collectives_by_rank)[r])
        log.push_back({{"kind", c.kind}, {"dtype", dtype_name(c.dtype)}, {"elements", c.elements}, {"bytes", c.bytes},
                       {"purpose", c.purpose}, {"phase", c.phase}, {"step", c.step}});
      j["collectives"] = log;
    }
    if (t.digests_by_rank && r < t.digests_by_rank->size()) {
      nlohmann::json d = nlohmann::json::array();
      for (const auto x : (*t.digests_by_rank)[r]) d.push_back(hex_digest(x));
      j["digests"] = d;
    }
    ranks.push_back(j);
  }
  return ranks;
}

void ranks_from_json(Trace& t, JsonObjectReader& r, const std::string& file) {
  int64_t records = 0;
  std::vector<std::vector<ParamTag>> tags;
  std::vector<std::vector<TraceCollective>> logs;
  std::vector<std::vector<uint64_t>> digests;
  int with_tags = 0, with_logs = 0, with_digests = 0, ranks = 0;
  r.array("ranks", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader rr(v, file, path);
    ++ranks;
    if (rr.has("tags")) {
      ++with_tags;
      tags.emplace_back();
      rr.array("tags", [&](const nlohmann::json& g, const std::string& gp) { tags.back().push_back(tag_from_json(g, file, gp)); });
    }
    if (rr.has("collectives")) {
      ++with_logs;
      logs.emplace_back();
      rr.array("collectives", [&](const nlohmann::json& c, const std::string& cp) {
        if (++records > limits::kMaxNsCallsPerTrace)
          throw bad_input(file, cp, "at most " + std::to_string(limits::kMaxNsCallsPerTrace) + " collective records", "more");
        JsonObjectReader cr(c, file, cp);
        TraceCollective x;
        x.kind = cr.string("kind", "", true);
        x.dtype = dtype_field(cr, "dtype", DType::fp32);
        x.elements = cr.integer("elements", 0, 0, int64_t{1} << 40);
        x.bytes = cr.integer("bytes", 0, 0, int64_t{1} << 42);
        x.purpose = cr.string("purpose", "", true);
        x.phase = cr.string("phase", "", true);
        x.step = static_cast<int>(cr.integer("step", 0, 0, 1 << 30));
        cr.finish();
        logs.back().push_back(x);
      });
    }
    if (rr.has("digests")) {
      ++with_digests;
      digests.emplace_back();
      rr.array("digests", [&](const nlohmann::json& d, const std::string& dp) {
        const std::string text = d.is_string() ? d.get<std::string>() : "";
        char* end = nullptr;
        const unsigned long long x = std::strtoull(text.c_str(), &end, 16);
        if (text.size() != 16 || end != text.c_str() + text.size()) throw bad_input(file, dp, "16 hex digits", describe_json(d));
        digests.back().push_back(x);
      });
    }
    rr.finish();
  });
  auto all_or_none = [&](int with, const char* part) {
    if (with != 0 && with != ranks)
      r.fail("ranks", std::string("\"") + part + "\" in every rank or in none", std::to_string(with) + " of " + std::to_string(ranks));
    return with > 0;
  };
  if (all_or_none(with_tags, "tags")) t.tags_by_rank = std::move(tags);
  if (all_or_none(with_logs, "collectives")) t.collectives_by_rank = std::move(logs);
  if (all_or_none(with_digests, "digests")) t.digests_by_rank = std::move(digests);
}

// A step's /2 fields: the scaler's counters, ‖G‖, and each NS call (counted like ns_calls).
void step_v2_from_json(TraceStep& s, JsonObjectReader& sr, const std::string& file, size_t tags) {
  if (sr.has("scaler"))
    sr.object("scaler", [&](JsonObjectReader& cr) {
      TraceScaler c;
      c.hysteresis = static_cast<int>(cr.integer("hysteresis", 0, 0, 1 << 30));
      c.good_streak = static_cast<int>(cr.integer("good_streak", 0, 0, 1 << 30));
      c.good_steps = static_cast<int>(cr.integer("good_steps", 0, 0, 1 << 30));
      cr.finish();
      s.scaler = c;
    });
  if (const auto* g = sr.raw("grad_norm")) s.grad_norm = values_from_json(nlohmann::json::array({*g}), file, sr.path_of("grad_norm"))[0];
  if (!sr.has("ns_events")) return;
  std::vector<TraceNsEvent> events;
  std::vector<int> per_tag(tags, 0);
  int unattributed = 0;
  sr.array("ns_events", [&](const nlohmann::json& v, const std::string& path) {
    if (static_cast<int64_t>(events.size()) >= limits::kMaxNsCallsPerEntry)
      throw bad_input(file, path, "at most " + std::to_string(limits::kMaxNsCallsPerEntry) + " NS calls in a step", "more");
    JsonObjectReader er(v, file, path);
    TraceNsEvent e;
    e.param = static_cast<int>(er.integer("param", -1, -1, static_cast<int64_t>(tags) - 1));
    e.rank = static_cast<int>(er.integer("rank", 0, 0, 1 << 20));
    e.heads = static_cast<int>(er.integer("heads", 0, 0, 1 << 20));
    er.finish();
    if (e.param >= 0) ++per_tag[static_cast<size_t>(e.param)];
    else ++unattributed;
    events.push_back(e);
  });
  if (per_tag != s.ns_calls || unattributed != s.ns_unattributed)
    sr.fail("ns_events", "the calls ns_calls and ns_unattributed count", std::to_string(events.size()) + " events that count otherwise");
  s.ns_events = std::move(events);
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
  if (t.repeat) j["repeat"] = t.repeat;
  if (!t.unsupported.empty()) j["unsupported"] = t.unsupported;
  if (!t.error.empty()) j["error"] = t.error;
  if (!t.unsupported.empty() || !t.error.empty()) return j;
  j["dtypes"] = {{"param", dtype_name(t.dtypes.param)}, {"grad_accum", dtype_name(t.dtypes.grad_accum)},
                 {"comm", dtype_name(t.dtypes.comm)}, {"ns", dtype_name(t.dtypes.ns)}, {"master", dtype_name(t.dtypes.master)}};
  j["tags"] = tags_to_json(t.tags);
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
    if (s.loss) sj["loss"] = value_to_json(*s.loss);
    if (s.ns_unattributed) sj["ns_unattributed"] = s.ns_unattributed;
    if (s.scaler)
      sj["scaler"] = {{"hysteresis", s.scaler->hysteresis}, {"good_streak", s.scaler->good_streak}, {"good_steps", s.scaler->good_steps}};
    if (s.grad_norm) sj["grad_norm"] = values_to_json({*s.grad_norm})[0];
    if (s.ns_events) {
      json ev = json::array();
      for (const auto& e : *s.ns_events) ev.push_back({{"param", e.param}, {"rank", e.rank}, {"heads", e.heads}});
      sj["ns_events"] = ev;
    }
    steps.push_back(sj);
  }
  j["steps"] = steps;
  if (t.tags_by_rank || t.collectives_by_rank || t.digests_by_rank) j["ranks"] = ranks_to_json(t);
  return j;
}

Trace trace_from_json(const nlohmann::json& j, const std::string& file) {
  Trace t;
  t.source = file;
  JsonObjectReader r(j, file, "");
  const auto format = r.string("format", "", true);
  if (format != kTraceFormat && format != kTraceFormatV1)
    r.fail("format", std::string("\"") + kTraceFormat + "\" or \"" + kTraceFormatV1 + "\"", "\"" + format + "\"");
  t.version = format == kTraceFormat ? 2 : 1;
  const bool v2 = t.version >= 2;   // a /1 trace with a /2 key fails as an unknown key
  if (v2) t.repeat = static_cast<int>(r.integer("repeat", 0, 0, 1));
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
  r.array("tags", [&](const nlohmann::json& v, const std::string& path) { t.tags.push_back(tag_from_json(v, file, path)); });
  if (r.has("initial"))
    r.array("initial", [&](const nlohmann::json& v, const std::string& path) { t.initial.push_back(state_from_json(v, file, path, t.version)); });
  if (!r.has("steps")) r.fail("steps", "an array (required)", "nothing");
  int64_t ns_calls_total = 0;
  r.array("steps", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader sr(v, file, path);
    TraceStep s;
    s.step = static_cast<int>(sr.integer("step", static_cast<int64_t>(t.steps.size()), 0, 1 << 30));
    if (s.step != static_cast<int>(t.steps.size())) sr.fail("step", std::to_string(t.steps.size()), std::to_string(s.step));
    s.skipped = sr.boolean("skipped", false);
    if (const auto* loss = sr.raw("loss")) {   // an overflowed step's may be non-finite: the elements' encoding
      s.loss = value_from_json(*loss);
      if (!s.loss) sr.fail("loss", "a number or \"inf\", \"-inf\", \"nan\"", describe_json(*loss));
    }
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
    sr.array("params", [&](const nlohmann::json& p, const std::string& pp) { s.params.push_back(state_from_json(p, file, pp, t.version)); });
    if (s.params.size() != t.tags.size()) sr.fail("params", std::to_string(t.tags.size()) + " states (one per tag)", std::to_string(s.params.size()));
    if (v2) step_v2_from_json(s, sr, file, t.tags.size());
    sr.finish();
    t.steps.push_back(std::move(s));
  });
  if (v2 && r.has("ranks")) ranks_from_json(t, r, file);
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
