// What this binary was built from, fixed at build time (cmake/build_info.cmake): reports record
// it, so a report says which commit and flags produced it wherever the binary runs.
#pragma once
#include <string>

namespace muoncheck {

struct BuildInfo {
  std::string git_commit;     // "unknown" outside a git checkout
  bool git_dirty = false;     // tracked files differed from the commit
  std::string build_type;     // CMAKE_BUILD_TYPE
  std::string cxx_flags;      // CMAKE_CXX_FLAGS and the build type's flags
  std::string cuda;           // "sm_90" etc., "" without CUDA
};

BuildInfo build_info();

}  // namespace muoncheck
