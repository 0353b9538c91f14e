// Writes a file so that readers see either the old content or the whole new one:
// write to a sibling temporary, flush, then rename over the target. A crash
// mid-write never leaves a half-written report or golden file.
#pragma once
#include <string>

namespace muoncheck {

void write_file_atomically(const std::string& path, const std::string& content);
std::string read_file(const std::string& path);  // throws BadInput when missing

}  // namespace muoncheck
