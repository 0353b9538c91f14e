#include "core/error.hpp"

namespace muoncheck {

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

Error bad_input(const std::string& file, const std::string& json_path,
                const std::string& expected, const std::string& got) {
  std::string msg = file + ": at " + (json_path.empty() ? "/" : json_path) + ": expected " + expected;
  if (!got.empty()) msg += ", got " + got;
  return Error(ErrorKind::BadInput, msg);
}

}  // namespace muoncheck
