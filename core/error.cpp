#include "core/error.hpp"

namespace muoncheck {

namespace {
constexpr std::size_t kMessageChars = limits::kMessageValueChars;
}  // namespace

std::string_view kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadInput: return "bad-input";
    case ErrorKind::Usage: return "usage";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Infrastructure: return "infrastructure";
    case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

std::string clip_for_message(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // a UTF-8 continuation byte
  return std::string(text.substr(0, cut)) + "… (" + std::to_string(text.size()) + " chars)";
}

Error bad_input(const std::string& file, const std::string& json_path,
                const std::string& expected, const std::string& got) {
  // A path is made of the file's own keys: cut it a little longer than a value.
  std::string msg = file + ": at " + (json_path.empty() ? "/" : clip_for_message(json_path, 2 * kMessageChars)) +
                    ": expected " + expected;
  if (!got.empty()) msg += ", got " + clip_for_message(got, kMessageChars);
  return Error(ErrorKind::BadInput, msg);
}

}  // namespace muoncheck
