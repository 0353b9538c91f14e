#include "core/json_reader.hpp"

#include <cmath>

#include "core/error.hpp"

namespace muoncheck {

std::string describe_json(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string: return "string " + v.dump();
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "number " + v.dump();
    case nlohmann::json::value_t::array: return "array of " + std::to_string(v.size());
    case nlohmann::json::value_t::object: return "object";
    default: return "value " + v.dump();
  }
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string file, std::string path)
    : object_(object), file_(std::move(file)), path_(std::move(path)) {
  if (!object_.is_object()) throw bad_input(file_, path_, "an object", describe_json(object_));
}

bool JsonObjectReader::has(const std::string& key) const { return object_.contains(key); }

const nlohmann::json* JsonObjectReader::get(const std::string& key) {
  seen_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void JsonObjectReader::fail(const std::string& key, const std::string& expected, const std::string& got) const {
  throw bad_input(file_, path_of(key), expected, got);
}

std::string JsonObjectReader::string(const std::string& key, const std::string& fallback, bool required) {
  const auto* v = get(key);
  if (!v) {
    if (required) fail(key, "a string (required)", "nothing");
    return fallback;
  }
  if (!v->is_string()) fail(key, "a string", describe_json(*v));
  return v->get<std::string>();
}

std::string JsonObjectReader::one_of(const std::string& key, const std::string& fallback,
                                     const std::vector<std::string>& allowed) {
  const auto* v = get(key);
  if (!v) return fallback;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  if (!v->is_string()) fail(key, "one of " + list, describe_json(*v));
  const auto s = v->get<std::string>();
  for (const auto& a : allowed)
    if (a == s) return s;
  fail(key, "one of " + list, describe_json(*v));
}

bool JsonObjectReader::boolean(const std::string& key, bool fallback) {
  const auto* v = get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, "a boolean", describe_json(*v));
  return v->get<bool>();
}

int64_t JsonObjectReader::integer(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
  const auto* v = get(key);
  if (!v) return fallback;
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v->is_number_integer()) fail(key, range, describe_json(*v));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) fail(key, range, describe_json(*v));
  const int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) fail(key, range, describe_json(*v));
  return x;
}

uint64_t JsonObjectReader::unsigned_integer(const std::string& key, uint64_t fallback) {
  const auto* v = get(key);
  if (!v) return fallback;
  if (!v->is_number_unsigned()) fail(key, "an unsigned 64-bit integer", describe_json(*v));
  return v->get<uint64_t>();
}

static std::string range_text(double lo, double hi, bool lo_open) {
  auto fmt = [](double x) {
    if (std::isinf(x)) return std::string(x > 0 ? "inf" : "-inf");
    nlohmann::json j = x;
    return j.dump();
  };
  return std::string("a number in ") + (lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + "]";
}

double JsonObjectReader::number(const std::string& key, double fallback, double lo, double hi, bool lo_open) {
  const auto* v = get(key);
  if (!v) return fallback;
  if (!v->is_number()) fail(key, range_text(lo, hi, lo_open), describe_json(*v));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi || (lo_open && x == lo)) fail(key, range_text(lo, hi, lo_open), describe_json(*v));
  return x;
}

std::optional<double> JsonObjectReader::optional_number(const std::string& key, double lo, double hi) {
  if (!has(key)) {
    seen_.insert(key);
    return std::nullopt;
  }
  return number(key, 0.0, lo, hi);
}

std::vector<double> JsonObjectReader::numbers(const std::string& key, std::vector<double> fallback, size_t count) {
  const auto* v = get(key);
  if (!v) return fallback;
  const std::string expected = "an array of " + std::to_string(count) + " numbers";
  if (!v->is_array() || v->size() != count) fail(key, expected, describe_json(*v));
  std::vector<double> out;
  for (size_t i = 0; i < count; ++i) {
    const auto& e = (*v)[i];
    if (!e.is_number() || !std::isfinite(e.get<double>()))
      throw bad_input(file_, path_of(key) + "/" + std::to_string(i), "a finite number", describe_json(e));
    out.push_back(e.get<double>());
  }
  return out;
}

void JsonObjectReader::object(const std::string& key, const std::function<void(JsonObjectReader&)>& read) {
  const auto* v = get(key);
  static const nlohmann::json empty = nlohmann::json::object();
  JsonObjectReader sub(v ? *v : empty, file_, path_of(key));
  read(sub);
  sub.finish();
}

void JsonObjectReader::array(const std::string& key,
                             const std::function<void(const nlohmann::json&, const std::string&)>& read) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_array()) fail(key, "an array", describe_json(*v));
  for (size_t i = 0; i < v->size(); ++i) read((*v)[i], path_of(key) + "/" + std::to_string(i));
}

void JsonObjectReader::finish() const {
  std::string known;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!seen_.count(it.key())) {
      for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
      throw bad_input(file_, path_of(it.key()), "no such key (known keys here: " + known + ")", "unknown key \"" + it.key() + "\"");
    }
  }
}

}  // namespace muoncheck
