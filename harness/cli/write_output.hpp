// A command's output file: written atomically, then named on stdout as "LABEL: PATH" (the
// line scripts and CI logs look for).
#pragma once
#include <string>

namespace muoncheck {

void write_output(const std::string& path, const std::string& text, const char* label);

}  // namespace muoncheck
