// The full command line of this process, set once by main(): reports record it and repro
// lines of a whole run repeat it.
#pragma once
#include <string>
#include <vector>

namespace muoncheck {

const std::vector<std::string>& process_argv();
void set_process_argv(int argc, char** argv);

}  // namespace muoncheck
