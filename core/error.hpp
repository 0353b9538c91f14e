// Errors are values with a kind. Library code throws muoncheck::Error (or returns
// it); only main() maps a kind to an exit code. A message is one line that says
// what went wrong and, for bad input, names the file, the JSON path and what was expected.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/input_limits.hpp"

namespace muoncheck {

enum class ErrorKind {
  BadInput,        // a scenario, trace or golden file is malformed (exit 2)
  Usage,           // the command line is wrong (exit 2)
  Unsupported,     // a valid scenario this component cannot run (reported, not fatal)
  Infrastructure,  // I/O, collectives, timeouts, devices (exit 3)
  Internal,        // a broken invariant of muoncheck itself (exit 3)
};

std::string_view kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// "FILE: at PATH: expected WHAT, got GOT" — the one format of every input error.
// PATH and GOT come from the input, so both are cut (clip_for_message) to keep the
// message one readable line whatever the file holds.
Error bad_input(const std::string& file, const std::string& json_path,
                const std::string& expected, const std::string& got = "");

// `text` cut to at most `max_chars` characters (never inside a UTF-8 sequence), with
// "… (N chars)" appended when it was cut.
std::string clip_for_message(std::string_view text, std::size_t max_chars = limits::kMessageValueChars);

}  // namespace muoncheck
