#include "harness/judge/process_info.hpp"

namespace muoncheck {

namespace {
std::vector<std::string>& argv_storage() {
  static std::vector<std::string> argv;
  return argv;
}
}  // namespace

const std::vector<std::string>& process_argv() { return argv_storage(); }

void set_process_argv(int argc, char** argv) { argv_storage().assign(argv, argv + argc); }

}  // namespace muoncheck
