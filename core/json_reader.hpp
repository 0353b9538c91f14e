// A cursor over one JSON object of an input file that remembers its JSON path,
// so every error names the file, the path and what was expected. Reading a key
// marks it as known; finish() rejects any key nobody read (unknown keys are errors).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace muoncheck {

class JsonObjectReader {
 public:
  JsonObjectReader(const nlohmann::json& object, std::string file, std::string path);

  bool has(const std::string& key) const;
  std::string path_of(const std::string& key) const { return path_ + "/" + key; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // Each getter returns `fallback` when the key is absent and throws bad_input on a wrong type or range.
  std::string string(const std::string& key, const std::string& fallback, bool required = false);
  std::string one_of(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  bool boolean(const std::string& key, bool fallback);
  int64_t integer(const std::string& key, int64_t fallback, int64_t lo, int64_t hi);
  uint64_t unsigned_integer(const std::string& key, uint64_t fallback);
  double number(const std::string& key, double fallback, double lo, double hi, bool lo_open = false);
  std::optional<double> optional_number(const std::string& key, double lo, double hi);
  std::vector<double> numbers(const std::string& key, std::vector<double> fallback, size_t count);

  // Sub-objects and arrays: the callback receives a reader (or element) with its own path.
  void object(const std::string& key, const std::function<void(JsonObjectReader&)>& read);
  void array(const std::string& key, const std::function<void(const nlohmann::json&, const std::string& path)>& read);

  // A free-form value (null when absent), marked as read; its contents are not checked.
  const nlohmann::json* raw(const std::string& key) { return get(key); }

  // Throws bad_input naming the first key that no getter consumed.
  void finish() const;

  [[noreturn]] void fail(const std::string& key, const std::string& expected, const std::string& got = "") const;

 private:
  const nlohmann::json* get(const std::string& key);

  const nlohmann::json& object_;
  std::string file_, path_;
  std::set<std::string> seen_;
};

std::string describe_json(const nlohmann::json& v);  // "string \"x\"", "number 3", "object", ...

}  // namespace muoncheck
