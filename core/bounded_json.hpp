// The one way muoncheck turns input text into JSON. A first, non-recursive SAX pass
// checks the document against core/input_limits.hpp (nesting depth, value count, size)
// and that every number fits a double; only then is the DOM built, so a hostile file can
// neither exhaust the stack (nlohmann's DOM copy and compare recurse) nor memory.
// Every failure is Error{BadInput} "FILE: at /json/path: expected X, got Y".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace muoncheck {

// `file` names the input in errors.
nlohmann::json parse_json_bounded(std::string_view text, const std::string& file);

// Reads `path` (at most limits::kMaxFileBytes, checked before reading) and parses it
// bounded. `what` says what the file should be ("scenario file", "trace"), for the
// error when it cannot be opened.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace muoncheck
