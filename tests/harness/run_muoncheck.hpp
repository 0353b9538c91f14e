// Runs the muoncheck binary of this build (MUONCHECK_BIN) with arguments, capturing its exit
// code and its stdout+stderr: the command-line tests' one way to call it.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace muoncheck::testing {

struct RunResult {
  int exit_code;
  std::string output;
};

inline RunResult run_muoncheck(const std::string& args) {
  const std::string cmd = std::string(MUONCHECK_BIN) + " " + args + " 2>&1";
  RunResult r{-1, ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace muoncheck::testing
