#include "harness/cli/write_output.hpp"

#include <cstdio>

#include "core/atomic_file.hpp"

namespace muoncheck {

void write_output(const std::string& path, const std::string& text, const char* label) {
  write_file_atomically(path, text);
  std::printf("%s: %s\n", label, path.c_str());
}

}  // namespace muoncheck
