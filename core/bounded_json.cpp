#include "core/bounded_json.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/input_limits.hpp"

namespace muoncheck {

namespace {

using json = nlohmann::json;

// The JSON pointer escape of one object key (RFC 6901).
std::string escape_key(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Walks the SAX events, keeping the JSON path of the value being read. Returns false
// (stopping the parse) at the first limit crossed, with the error kept for the caller.
class LimitChecker : public nlohmann::json_sax<json> {
 public:
  explicit LimitChecker(const std::string& file) : file_(file) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    frames_.back().key = escape_key(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string& last_token, const nlohmann::detail::exception& ex) override {
    if (ex.id == 406)  // out_of_range: a number beyond ±DBL_MAX
      return fail("a number within the range of a double (magnitude below 1.8e308)", "number " + last_token);
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while
    // parsing value - invalid literal; last read: '1x'" -> "line 1, column 9: invalid literal; ..."
    std::string what = ex.what();
    if (const auto at = what.find(" at line "); at != std::string::npos) {
      const auto colon = what.find(": ", at);
      const auto dash = what.find(" - ", at);
      if (colon != std::string::npos && dash != std::string::npos && dash > colon)
        what = what.substr(at + 4, colon - at - 4) + ": " + what.substr(dash + 3);
    }
    return fail("valid JSON", what);
  }

  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string key;
  };

  // The path of the value the parser is at.
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) p += "/" + (f.array ? std::to_string(f.index) : f.key);
    return p;
  }

  bool fail(const std::string& expected, const std::string& got) {
    if (error_.empty()) error_ = bad_input(file_, path(), expected, got).what();
    return false;
  }

  bool count() {
    if (++values_ > limits::kMaxJsonValues)
      return fail("at most " + std::to_string(limits::kMaxJsonValues) + " JSON values in the file", "more");
    return true;
  }

  bool value() {
    if (!count()) return false;
    advance();
    return true;
  }

  bool open(bool array) {
    if (!count()) return false;
    if (static_cast<int>(frames_.size()) >= limits::kMaxJsonDepth)
      return fail("arrays and objects nested at most " + std::to_string(limits::kMaxJsonDepth) + " deep",
                  "a deeper nesting");
    frames_.push_back({array, 0, ""});
    return true;
  }

  bool close() {
    frames_.pop_back();
    advance();
    return true;
  }

  // After a complete value: the next element of an enclosing array has the next index.
  void advance() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }

  const std::string& file_;
  std::vector<Frame> frames_;
  std::size_t values_ = 0;
  std::string error_;
};

}  // namespace

json parse_json_bounded(std::string_view text, const std::string& file) {
  if (text.size() > limits::kMaxFileBytes)
    throw bad_input(file, "", "at most " + std::to_string(limits::kMaxFileBytes) + " bytes",
                    std::to_string(text.size()) + " bytes");
  LimitChecker checker(file);
  if (!json::sax_parse(text, &checker)) {
    if (checker.error().empty()) throw bad_input(file, "", "valid JSON", "a parse that stopped early");
    throw Error(ErrorKind::BadInput, checker.error());
  }
  // Within the limits: the DOM build can neither fail nor recurse deeper than kMaxJsonDepth.
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // the check pass above should have caught it
    throw bad_input(file, "", "valid JSON", e.what());
  }
}

json read_json_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(ErrorKind::BadInput, path + ": cannot open the " + what + " (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::BadInput, path + ": cannot open the " + what + " (it is a folder)");
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > limits::kMaxFileBytes)
    throw bad_input(path, "", "a " + what + " of at most " + std::to_string(limits::kMaxFileBytes) + " bytes",
                    std::to_string(st.st_size) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::BadInput, path + ": cannot open the " + what + " (" + std::strerror(errno) + ")");
  // Read at most one byte past the limit, so a pipe or a growing file is bounded too.
  std::string text;
  std::vector<char> chunk(1 << 16);
  while (in && text.size() <= limits::kMaxFileBytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  return parse_json_bounded(text, path);
}

}  // namespace muoncheck
