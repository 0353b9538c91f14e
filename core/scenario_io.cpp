#include "core/scenario_io.hpp"

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/bounded_json.hpp"
#include "core/datagen.hpp"
#include "core/error.hpp"
#include "core/input_limits.hpp"
#include "core/json_reader.hpp"
#include "core/llama_preset.hpp"
#include "core/ns_schedules.hpp"

namespace muoncheck {

namespace {


DType read_dtype(JsonObjectReader& r, const std::string& key, DType fallback) {
  return *parse_dtype(r.one_of(key, std::string(dtype_name(fallback)), {"fp32", "bf16", "fp16"}));
}

std::vector<int64_t> read_shape(const nlohmann::json& v, const std::string& file, const std::string& path) {
  const std::string expected = "an array of 1 to 4 positive integers";
  if (!v.is_array() || v.empty() || v.size() > 4) throw bad_input(file, path, expected, describe_json(v));
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& d = v[i];
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(limits::kMaxDim)) ||
        d.get<int64_t>() < 1 || d.get<int64_t>() > limits::kMaxDim)
      throw bad_input(file, path + "/" + std::to_string(i),
                      "a positive integer dimension of at most " + std::to_string(limits::kMaxDim), describe_json(d));
    shape.push_back(d.get<int64_t>());
    // Each factor is at most 2^22 and the running product at most 2^22: no overflow.
    elements *= shape.back();
    if (elements > limits::kMaxTensorElements)
      throw bad_input(file, path, "a shape of at most " + std::to_string(limits::kMaxTensorElements) + " elements",
                      describe_json(v) + " (more than " + std::to_string(limits::kMaxTensorElements) + " elements)");
  }
  return shape;
}

// The whole model against the resource limits, before any component allocates its state.
void check_model_size(JsonObjectReader& r, const ModelSpec& m, const char* key) {
  int64_t total = 0;
  for (const auto& p : m.params) {
    const int64_t n = element_count(p.shape);
    if (n > limits::kMaxTensorElements)
      r.fail(key, "params of at most " + std::to_string(limits::kMaxTensorElements) + " elements each",
             p.name + " with " + std::to_string(n));
    total += n;   // both at most 2^22 here: no overflow
    if (total > limits::kMaxModelElements)
      r.fail(key, "a model of at most " + std::to_string(limits::kMaxModelElements) + " elements in all",
             "more (reached at " + p.name + ")");
  }
}

void read_model(JsonObjectReader& r, ModelSpec& m) {
  const bool has_preset = r.has("preset"), has_params = r.has("params");
  if (has_preset == has_params)
    r.fail(has_preset ? "params" : "preset", "exactly one of model.preset or model.params",
           has_preset ? "both" : "neither");
  if (has_preset) {
    r.one_of("preset", "llama", {"llama"});
    LlamaPreset p;
    p.layers = static_cast<int>(r.integer("layers", p.layers, 1, 256));
    p.hidden = static_cast<int>(r.integer("hidden", p.hidden, 1, 1 << 16));
    p.intermediate = static_cast<int>(r.integer("intermediate", p.intermediate, 1, 1 << 18));
    p.heads = static_cast<int>(r.integer("heads", p.heads, 1, 1024));
    p.kv_heads = static_cast<int>(r.integer("kv_heads", p.kv_heads, 1, 1024));
    p.vocab = static_cast<int>(r.integer("vocab", p.vocab, 1, 1 << 20));
    p.tie_embeddings = r.boolean("tie_embeddings", p.tie_embeddings);
    if (p.hidden % p.heads != 0)
      r.fail("heads", "a divisor of hidden (" + std::to_string(p.hidden) + ")", std::to_string(p.heads));
    if (p.heads % p.kv_heads != 0)
      r.fail("kv_heads", "a divisor of heads (" + std::to_string(p.heads) + ")", std::to_string(p.kv_heads));
    m.preset = p;
    m.params = expand_llama(p);
    check_model_size(r, m, "preset");
    return;
  }
  std::set<std::string> names;
  r.array("params", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader pr(v, r.file(), path);
    ParamSpec p;
    p.name = pr.string("name", "", true);
    if (p.name.empty()) pr.fail("name", "a non-empty string", "\"\"");
    if (!names.insert(p.name).second) pr.fail("name", "a name not used by an earlier param", "duplicate \"" + p.name + "\"");
    if (!pr.has("shape")) pr.fail("shape", "an array of 1 to 4 positive integers (required)", "nothing");
    pr.array("shape", [](const nlohmann::json&, const std::string&) {});
    p.shape = read_shape(v.at("shape"), r.file(), pr.path_of("shape"));
    if (pr.has("num_heads")) {
      const int64_t h = pr.integer("num_heads", 1, 1, 1 << 16);
      const auto view = matrix_view(p.shape);
      if (p.shape.size() < 2) pr.fail("num_heads", "no head count on a rank-1 param");
      if (view.rows % h != 0)
        pr.fail("num_heads", "a divisor of the row count " + std::to_string(view.rows), std::to_string(h));
      p.num_heads = static_cast<int>(h);
    }
    pr.finish();
    m.params.push_back(std::move(p));
  });
  if (m.params.empty()) r.fail("params", "a non-empty array of {name, shape}", "an empty array");
  check_model_size(r, m, "params");
}

// A table schedule's factors: one per step from step 0, each a finite number in [0, 1e6] (a rate
// may grow past its base, as a range test's does), at most 100000 of them.
std::vector<double> read_lr_factors(JsonObjectReader& r) {
  const std::string expected = "a non-empty array of at most 100000 numbers in [0, 1e6], one per step (required for table)";
  const nlohmann::json* v = r.raw("factors");
  if (v == nullptr) r.fail("factors", expected, "nothing");
  if (!v->is_array() || v->empty() || v->size() > 100000) r.fail("factors", expected, describe_json(*v));
  std::vector<double> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    if (!e.is_number() || !std::isfinite(e.get<double>()) || e.get<double>() < 0.0 || e.get<double>() > 1e6)
      throw bad_input(r.file(), r.path_of("factors") + "/" + std::to_string(i), "a finite number in [0, 1e6]",
                      describe_json(e));
    out.push_back(e.get<double>());
  }
  return out;
}

// optimizer.lr_schedule and groups[i].lr_schedule: a shape and exactly the parameters it needs.
LrSchedule read_lr_schedule(JsonObjectReader& r) {
  LrSchedule sch;
  const auto shape = r.one_of("shape", "constant", {"constant", "linear_warmup", "cosine", "table"});
  sch.shape = shape == "constant"        ? LrShape::constant
              : shape == "linear_warmup" ? LrShape::linear_warmup
              : shape == "cosine"        ? LrShape::cosine
                                         : LrShape::table;
  auto not_for_shape = [&](const char* key) {
    if (r.has(key)) r.fail(key, std::string("no ") + key + " for shape " + shape, "a value");
  };
  if (sch.shape != LrShape::table) not_for_shape("factors");
  if (sch.shape == LrShape::constant) {
    for (const char* k : {"warmup_steps", "total_steps", "min_ratio"}) not_for_shape(k);
    return sch;
  }
  if (sch.shape == LrShape::linear_warmup) {
    if (!r.has("warmup_steps")) r.fail("warmup_steps", "an integer in [1, 100000] (required for linear_warmup)", "nothing");
    sch.warmup_steps = static_cast<int>(r.integer("warmup_steps", 1, 1, 100000));
    for (const char* k : {"total_steps", "min_ratio"}) not_for_shape(k);
    return sch;
  }
  if (sch.shape == LrShape::table) {
    for (const char* k : {"warmup_steps", "total_steps", "min_ratio"}) not_for_shape(k);
    sch.factors = read_lr_factors(r);
    return sch;
  }
  if (!r.has("total_steps")) r.fail("total_steps", "an integer in [1, 100000] (required for cosine)", "nothing");
  sch.total_steps = static_cast<int>(r.integer("total_steps", 1, 1, 100000));
  sch.warmup_steps = static_cast<int>(r.integer("warmup_steps", 0, 0, 100000));
  if (sch.warmup_steps >= sch.total_steps)
    r.fail("warmup_steps", "fewer than total_steps (" + std::to_string(sch.total_steps) + ")", std::to_string(sch.warmup_steps));
  sch.min_ratio = r.number("min_ratio", 0.0, 0.0, 1.0);
  return sch;
}

void read_engine(JsonObjectReader& r, EngineConfig& e) {
  e.stage = static_cast<int>(r.integer("stage", e.stage, 0, 3));
  e.dp = static_cast<int>(r.integer("dp", e.dp, 1, 64));
  e.gas = static_cast<int>(r.integer("gas", e.gas, 1, 256));
  e.micro_batch = static_cast<int>(r.integer("micro_batch", e.micro_batch, 1, 4096));
  e.zero_init = r.boolean("zero_init", e.zero_init);
  if (e.zero_init && e.stage != 3) r.fail("zero_init", "false unless engine.stage is 3", "true at stage " + std::to_string(e.stage));
  e.reduce_bucket_size = r.integer("reduce_bucket_size", e.reduce_bucket_size, 1, int64_t{1} << 40);
  e.allgather_bucket_size = r.integer("allgather_bucket_size", e.allgather_bucket_size, 1, int64_t{1} << 40);
  e.contiguous_gradients = r.boolean("contiguous_gradients", e.contiguous_gradients);
  e.param_dtype = read_dtype(r, "param_dtype", DType::fp32);
  e.grad_accum_dtype = read_dtype(r, "grad_accum_dtype", e.param_dtype);
  e.comm_dtype = read_dtype(r, "comm_dtype", e.param_dtype);
  const std::string offload = r.one_of("offload_optimizer", "none", {"none", "cpu", "nvme"});
  e.offload_optimizer = offload == "none" ? OffloadDevice::none : offload == "cpu" ? OffloadDevice::cpu : OffloadDevice::nvme;
  e.compile = r.boolean("compile", e.compile);
  e.ranks = r.one_of("ranks", "threads", {"threads", "processes"}) == "threads" ? RankMode::threads : RankMode::processes;
}

NsCoefficients read_triple(const nlohmann::json& v, const std::string& file, const std::string& path) {
  if (!v.is_array() || v.size() != 3) throw bad_input(file, path, "a triple [a, b, c] of finite numbers", describe_json(v));
  double abc[3];
  for (size_t i = 0; i < 3; ++i) {
    const auto& e = v[i];
    if (!e.is_number() || !std::isfinite(e.get<double>()))
      throw bad_input(file, path + "/" + std::to_string(i), "a finite number", describe_json(e));
    abc[i] = e.get<double>();
  }
  return {abc[0], abc[1], abc[2]};
}

// ns_coefficients: one triple [a, b, c] for every iteration, a list of triples (one per
// iteration), or a schedule's name. A list fixes the iteration count: ns_steps, when given,
// must equal its length; absent, it is the length.
void read_ns_coefficients(JsonObjectReader& r, OptimizerConfig& o, bool steps_given) {
  const std::string key = "ns_coefficients";
  const auto* v = r.raw(key);
  if (!v) return;
  const std::string expected = "a triple [a, b, c], a list of ns_steps triples or a schedule name (one of " +
                               ns_schedule_names() + ")";
  if (v->is_string()) {
    const auto* sch = find_ns_schedule(v->get<std::string>());
    if (!sch) r.fail(key, expected, describe_json(*v));
    o.ns_schedule = sch->name;
    o.ns_coefficients = sch->coefficients;
  } else if (v->is_array() && !v->empty() && v->front().is_array()) {
    if (v->size() > 32) r.fail(key, "at most 32 triples (ns_steps is at most 32)", std::to_string(v->size()) + " triples");
    o.ns_coefficients.clear();
    for (size_t i = 0; i < v->size(); ++i) o.ns_coefficients.push_back(read_triple((*v)[i], r.file(), r.path_of(key) + "/" + std::to_string(i)));
  } else if (v->is_array() && v->size() == 3) {
    o.ns_coefficients = {read_triple(*v, r.file(), r.path_of(key))};
    return;
  } else {
    r.fail(key, expected, describe_json(*v));
  }
  const int n = static_cast<int>(o.ns_coefficients.size());
  if (!steps_given) o.ns_steps = n;
  if (o.ns_steps != n)
    r.fail(key, "one triple per iteration: " + std::to_string(o.ns_steps) + " (ns_steps)",
           std::to_string(n) + " triples" + (o.ns_schedule.empty() ? "" : " (schedule \"" + o.ns_schedule + "\")"));
}

void read_optimizer(JsonObjectReader& r, OptimizerConfig& o) {
  o.lr = r.number("lr", o.lr, 0.0, 1e3);
  o.momentum = r.number("momentum", o.momentum, 0.0, 0.999999);
  o.nesterov = r.boolean("nesterov", o.nesterov);
  o.momentum_form = r.one_of("momentum_form", "ema", {"ema", "sum"}) == "ema" ? MomentumForm::ema : MomentumForm::sum;
  o.ns_method = r.one_of("ns_method", "gram", {"standard", "gram"}) == "gram" ? NsMethod::gram : NsMethod::standard;
  o.ns_steps = static_cast<int>(r.integer("ns_steps", o.ns_steps, 1, 32));
  read_ns_coefficients(r, o, r.has("ns_steps"));
  o.ns_dtype = read_dtype(r, "ns_dtype", o.ns_method == NsMethod::standard ? DType::bf16 : DType::fp16);
  const auto rule = r.one_of("scale_rule", "deepspeed", {"deepspeed", "moonlight", "spectral", "max_dim"});
  o.scale_rule = rule == "deepspeed"   ? ScaleRule::deepspeed
                 : rule == "moonlight" ? ScaleRule::moonlight
                 : rule == "spectral"  ? ScaleRule::spectral
                                       : ScaleRule::max_dim;
  o.weight_decay = r.number("weight_decay", o.weight_decay, 0.0, 1e3);
  o.per_head = r.boolean("per_head", o.per_head);
  r.object("lr_schedule", [&](JsonObjectReader& l) { o.lr_schedule = read_lr_schedule(l); });
  r.object("adam", [&](JsonObjectReader& a) {
    o.adam.lr = a.number("lr", o.adam.lr, 0.0, 1e3);
    const auto betas = a.numbers("betas", {o.adam.beta1, o.adam.beta2}, 2);
    for (int i = 0; i < 2; ++i)
      if (betas[i] < 0.0 || betas[i] >= 1.0)
        throw bad_input(a.file(), a.path_of("betas") + "/" + std::to_string(i), "a number in [0, 1)", std::to_string(betas[i]));
    o.adam.beta1 = betas[0], o.adam.beta2 = betas[1];
    o.adam.eps = a.number("eps", o.adam.eps, 0.0, 1.0, true);
  });
  r.array("groups", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader g(v, r.file(), path);
    ParamGroup pg;
    pg.match = g.string("match", "", true);
    if (pg.match.empty()) g.fail("match", "a non-empty substring of parameter names", "\"\"");
    pg.lr_scale = g.number("lr_scale", 1.0, 0.0, 1e6);
    pg.weight_decay = g.optional_number("weight_decay", 0.0, 1e3);
    if (g.has("lr_schedule")) g.object("lr_schedule", [&](JsonObjectReader& l) { pg.lr_schedule = read_lr_schedule(l); });
    g.finish();
    o.groups.push_back(pg);
  });
  r.object("clip", [&](JsonObjectReader& c) {
    o.clip.max_norm = c.number("max_norm", o.clip.max_norm, 0.0, 1e30);
    o.clip.mode = c.one_of("mode", "raw_grad", {"raw_grad", "update"}) == "raw_grad" ? ClipMode::raw_grad : ClipMode::update;
  });
}

void read_scaler(JsonObjectReader& r, LossScalerConfig& c) {
  const auto type = r.one_of("type", "none", {"none", "static", "dynamic"});
  c.type = type == "none" ? ScalerType::none : type == "static" ? ScalerType::static_scale : ScalerType::dynamic;
  c.initial_scale_power = static_cast<int>(r.integer("initial_scale_power", c.initial_scale_power, -24, 64));
  c.scale_window = static_cast<int>(r.integer("scale_window", c.scale_window, 1, 1 << 30));
  c.hysteresis = static_cast<int>(r.integer("hysteresis", c.hysteresis, 1, 1 << 20));
  c.min_scale = r.number("min_scale", c.min_scale, 0.0, 1e30, true);
}

void read_overflow(JsonObjectReader& r, Scenario& s) {
  r.array("overflow", [&](const nlohmann::json& v, const std::string& path) {
    JsonObjectReader o(v, r.file(), path);
    OverflowInjection inj;
    inj.step = static_cast<int>(o.integer("step", 0, 0, s.steps - 1));
    inj.micro_step = static_cast<int>(o.integer("micro_step", 0, 0, s.engine.gas - 1));
    inj.rank = static_cast<int>(o.integer("rank", 0, 0, s.engine.dp - 1));
    inj.param = o.string("param", "", true);
    const int p = param_index(s, inj.param);
    if (p < 0) o.fail("param", "the name of a parameter of the model", "\"" + inj.param + "\"");
    const int64_t n = element_count(s.model.params[p].shape);
    inj.index = o.integer("index", 0, 0, n - 1);
    inj.value = o.one_of("value", "inf", {"inf", "nan"}) == "inf" ? OverflowValue::inf : OverflowValue::nan;
    o.finish();
    s.overflow.push_back(inj);
  });
}

// checkpoint: after the model, engine, overflow and steps it refers to.
void read_checkpoint(JsonObjectReader& r, Scenario& s) {
  CheckpointConfig c;
  if (s.steps < 2) r.fail("save_after_step", "a scenario of at least 2 steps (a step after the save)", std::to_string(s.steps) + " step");
  if (!r.has("save_after_step")) r.fail("save_after_step", "an integer in [0, steps - 2] (required)", "nothing");
  c.save_after_step = static_cast<int>(r.integer("save_after_step", 0, 0, s.steps - 2));
  r.object("resume", [&](JsonObjectReader& res) {
    const int batch = s.engine.dp * s.engine.gas;   // dp · gas stays; micro_batch stays
    if (res.has("dp")) {
      const int dp = static_cast<int>(res.integer("dp", s.engine.dp, 1, 64));
      if (batch % dp != 0)
        res.fail("dp", "a divisor of engine.dp × engine.gas (" + std::to_string(batch) + "), so the global batch stays",
                 std::to_string(dp));
      for (const auto& inj : s.overflow)
        if (inj.step > c.save_after_step && dp != s.engine.dp)
          res.fail("dp", "engine.dp (" + std::to_string(s.engine.dp) + ") while an overflow injection after step " +
                             std::to_string(c.save_after_step) + " names a rank", std::to_string(dp));
      c.resume.dp = dp;
    }
    if (res.has("stage")) c.resume.stage = static_cast<int>(res.integer("stage", s.engine.stage, 0, 3));
  });
  s.checkpoint = c;
}

}  // namespace

Scenario parse_scenario(const nlohmann::json& j, const std::string& source, const std::string& expect_stem) {
  JsonObjectReader r(j, source, "");
  Scenario s;
  s.source = source;
  r.string("$schema", "");  // editors' hint; carries no semantics
  s.name = r.string("name", "", true);
  if (s.name.empty() || s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos)
    r.fail("name", "a non-empty id of letters, digits, '.', '_' or '-'", "\"" + s.name + "\"");
  if (!expect_stem.empty() && s.name != expect_stem)
    r.fail("name", "the file's stem \"" + expect_stem + "\"", "\"" + s.name + "\"");
  s.description = r.string("description", "");
  s.seed = r.unsigned_integer("seed", 0);
  s.steps = static_cast<int>(r.integer("steps", 3, 1, 100000));
  if (!r.has("model")) r.fail("model", "an object with preset or params (required)", "nothing");
  r.object("model", [&](JsonObjectReader& m) { read_model(m, s.model); });
  r.object("engine", [&](JsonObjectReader& e) { read_engine(e, s.engine); });
  r.object("optimizer", [&](JsonObjectReader& o) { read_optimizer(o, s.optimizer); });
  r.object("loss_scaler", [&](JsonObjectReader& l) { read_scaler(l, s.loss_scaler); });
  read_overflow(r, s);
  r.object("tolerance", [&](JsonObjectReader& t) {
    s.tolerance.alpha = t.number("alpha", s.tolerance.alpha, 1.0, 1e6);
    s.tolerance.floor_ulps = t.number("floor_ulps", s.tolerance.floor_ulps, 0.0, 1e9);
    s.tolerance.why = t.string("why", "");
  });
  if (r.has("checkpoint")) r.object("checkpoint", [&](JsonObjectReader& c) { read_checkpoint(c, s); });
  if (const auto* config = r.raw("implementation_config")) {
    if (!config->is_object()) r.fail("implementation_config", "an object of knob values", describe_json(*config));
    s.impl_config = config->dump();
  }
  r.finish();
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_json_file(path, "scenario file"), path, std::filesystem::path(path).stem().string());
}

Scenario parse_scenario_text(std::string_view text, const std::string& source, const std::string& expect_stem) {
  return parse_scenario(parse_json_bounded(text, source), source, expect_stem);
}

std::string to_string(MomentumForm v) { return v == MomentumForm::ema ? "ema" : "sum"; }
std::string to_string(NsMethod v) { return v == NsMethod::gram ? "gram" : "standard"; }
std::string to_string(ScaleRule v) {
  switch (v) {
    case ScaleRule::deepspeed: return "deepspeed";
    case ScaleRule::moonlight: return "moonlight";
    case ScaleRule::spectral: return "spectral";
    case ScaleRule::max_dim: return "max_dim";
  }
  return "deepspeed";
}
std::string to_string(ClipMode v) { return v == ClipMode::raw_grad ? "raw_grad" : "update"; }
std::string to_string(ScalerType v) {
  return v == ScalerType::none ? "none" : v == ScalerType::static_scale ? "static" : "dynamic";
}
std::string to_string(OverflowValue v) { return v == OverflowValue::inf ? "inf" : "nan"; }
std::string to_string(LrShape v) {
  return v == LrShape::constant ? "constant" : v == LrShape::linear_warmup ? "linear_warmup" : v == LrShape::cosine ? "cosine" : "table";
}
std::string to_string(OffloadDevice v) {
  return v == OffloadDevice::none ? "none" : v == OffloadDevice::cpu ? "cpu" : "nvme";
}

std::string to_string(RankMode v) { return v == RankMode::threads ? "threads" : "processes"; }

namespace {
// A schedule with exactly the parameters its shape has (what the loader accepts).
nlohmann::json lr_schedule_to_json(const LrSchedule& sch) {
  nlohmann::json j = {{"shape", to_string(sch.shape)}};
  if (sch.shape == LrShape::table) {
    j["factors"] = sch.factors;
    return j;
  }
  if (sch.shape != LrShape::constant) j["warmup_steps"] = sch.warmup_steps;
  if (sch.shape == LrShape::cosine) j["total_steps"] = sch.total_steps, j["min_ratio"] = sch.min_ratio;
  return j;
}

// As read: a schedule by its name, a single triple as [a, b, c] (every earlier scenario keeps its
// canonical JSON and hash), a per-iteration list as its triples.
nlohmann::json ns_coefficients_to_json(const OptimizerConfig& o) {
  if (!o.ns_schedule.empty()) return o.ns_schedule;
  if (o.ns_coefficients.size() == 1) return ns_triple_json(o.ns_coefficients.front());
  return ns_iterations_json(o);
}
}  // namespace

nlohmann::json ns_triple_json(const NsCoefficients& k) { return nlohmann::json::array({k.a, k.b, k.c}); }

nlohmann::json ns_iterations_json(const OptimizerConfig& o) {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < o.ns_steps; ++i) list.push_back(ns_triple_json(ns_coefficients_at(o, i)));
  return list;
}

nlohmann::json scenario_to_json(const Scenario& s) {
  using nlohmann::json;
  json j;
  j["name"] = s.name;
  if (!s.description.empty()) j["description"] = s.description;
  j["seed"] = s.seed;
  j["steps"] = s.steps;
  if (s.model.preset) {
    const auto& p = *s.model.preset;
    j["model"] = {{"preset", "llama"}, {"layers", p.layers}, {"hidden", p.hidden}, {"intermediate", p.intermediate},
                  {"heads", p.heads}, {"kv_heads", p.kv_heads}, {"vocab", p.vocab}, {"tie_embeddings", p.tie_embeddings}};
  } else {
    json params = json::array();
    for (const auto& p : s.model.params) {
      json pj = {{"name", p.name}, {"shape", p.shape}};
      if (p.num_heads) pj["num_heads"] = *p.num_heads;
      params.push_back(pj);
    }
    j["model"] = {{"params", params}};
  }
  const auto& e = s.engine;
  j["engine"] = {{"stage", e.stage}, {"dp", e.dp}, {"gas", e.gas}, {"micro_batch", e.micro_batch},
                 {"zero_init", e.zero_init}, {"reduce_bucket_size", e.reduce_bucket_size},
                 {"allgather_bucket_size", e.allgather_bucket_size}, {"contiguous_gradients", e.contiguous_gradients},
                 {"param_dtype", dtype_name(e.param_dtype)}, {"grad_accum_dtype", dtype_name(e.grad_accum_dtype)},
                 {"comm_dtype", dtype_name(e.comm_dtype)}};
  const auto& o = s.optimizer;
  json groups = json::array();
  for (const auto& g : o.groups) {
    json gj = {{"match", g.match}, {"lr_scale", g.lr_scale}};
    if (g.weight_decay) gj["weight_decay"] = *g.weight_decay;
    if (g.lr_schedule) gj["lr_schedule"] = lr_schedule_to_json(*g.lr_schedule);
    groups.push_back(gj);
  }
  j["optimizer"] = {{"lr", o.lr}, {"momentum", o.momentum}, {"nesterov", o.nesterov},
                    {"momentum_form", to_string(o.momentum_form)}, {"ns_method", to_string(o.ns_method)},
                    {"ns_steps", o.ns_steps}, {"ns_coefficients", ns_coefficients_to_json(o)},
                    {"ns_dtype", dtype_name(o.ns_dtype)}, {"scale_rule", to_string(o.scale_rule)},
                    {"weight_decay", o.weight_decay}, {"per_head", o.per_head},
                    {"adam", {{"lr", o.adam.lr}, {"betas", {o.adam.beta1, o.adam.beta2}}, {"eps", o.adam.eps}}},
                    {"groups", groups},
                    {"clip", {{"max_norm", o.clip.max_norm}, {"mode", to_string(o.clip.mode)}}}};
  // Fields added after the format's first release are written only when they differ
  // from their defaults, so every earlier scenario keeps its canonical JSON and hash.
  if (!(o.lr_schedule == LrSchedule{})) j["optimizer"]["lr_schedule"] = lr_schedule_to_json(o.lr_schedule);
  if (e.offload_optimizer != OffloadDevice::none) j["engine"]["offload_optimizer"] = to_string(e.offload_optimizer);
  if (e.compile) j["engine"]["compile"] = true;
  if (e.ranks != RankMode::threads) j["engine"]["ranks"] = to_string(e.ranks);
  const auto& l = s.loss_scaler;
  j["loss_scaler"] = {{"type", to_string(l.type)}, {"initial_scale_power", l.initial_scale_power},
                      {"scale_window", l.scale_window}, {"hysteresis", l.hysteresis}, {"min_scale", l.min_scale}};
  json ov = json::array();
  for (const auto& i : s.overflow)
    ov.push_back({{"step", i.step}, {"micro_step", i.micro_step}, {"rank", i.rank}, {"param", i.param},
                  {"index", i.index}, {"value", to_string(i.value)}});
  j["overflow"] = ov;
  j["tolerance"] = {{"alpha", s.tolerance.alpha}, {"floor_ulps", s.tolerance.floor_ulps}};
  if (!s.tolerance.why.empty()) j["tolerance"]["why"] = s.tolerance.why;
  if (s.checkpoint) {
    j["checkpoint"] = {{"save_after_step", s.checkpoint->save_after_step}};
    nlohmann::json resume = nlohmann::json::object();
    if (s.checkpoint->resume.dp) resume["dp"] = *s.checkpoint->resume.dp;
    if (s.checkpoint->resume.stage) resume["stage"] = *s.checkpoint->resume.stage;
    if (!resume.empty()) j["checkpoint"]["resume"] = resume;
  }
  if (!s.impl_config.empty()) j["implementation_config"] = nlohmann::json::parse(s.impl_config);
  return j;
}

void save_scenario(const Scenario& s, const std::string& path) {
  write_file_atomically(path, scenario_to_json(s).dump(2) + "\n");
}

std::string scenario_hash(const Scenario& s) {
  const std::string text = scenario_to_json(s).dump();
  uint64_t h = 0;
  for (unsigned char c : text) h = data::splitmix64(h ^ c);
  std::ostringstream out;
  out << std::hex;
  out.width(16);
  out.fill('0');
  out << h;
  return out.str();
}

}  // namespace muoncheck
