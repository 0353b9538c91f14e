// Facts about the build and the backends that reports record.
#pragma once
#include <string>

namespace muoncheck {

std::string compiler_description();   // e.g. "GCC 12.2.0"
std::string gloo_version();           // e.g. "0.5.0"

}  // namespace muoncheck
