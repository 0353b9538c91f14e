// The `muoncheck` command line: dispatches to a subcommand and is the only place
// that chooses an exit code (0 ok, 1 conformance failure, 2 bad input/usage,
// 3 infrastructure). Every error prints one line naming its kind.
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/judge/process_info.hpp"
#include "harness/launch/process_launch.hpp"

namespace {

std::vector<muoncheck::Command> commands() { return muoncheck::all_commands(); }

void print_usage(std::ostream& out) {
  out << "usage: muoncheck COMMAND [ARGS] (muoncheck COMMAND --help for each)\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = "  " + c.spec.name;
    name.resize(12, ' ');
    out << name << c.spec.synopsis << "\n";
  }
  out << "\nexit codes: 0 success, 1 conformance failure, 2 bad input or usage, 3 infrastructure error\n";
}

int exit_code(muoncheck::ErrorKind kind) {
  switch (kind) {
    case muoncheck::ErrorKind::BadInput:
    case muoncheck::ErrorKind::Usage: return 2;
    case muoncheck::ErrorKind::Unsupported:
    case muoncheck::ErrorKind::Infrastructure:
    case muoncheck::ErrorKind::Internal: return 3;
  }
  return 3;
}

// Runs `f`; an error is printed as one line and becomes its exit code.
int exit_code_of(const std::function<int()>& f) {
  try {
    return f();
  } catch (const muoncheck::Error& e) {
    std::cerr << "muoncheck: " << muoncheck::kind_name(e.kind()) << ": " << e.what() << "\n";
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "muoncheck: internal: " << e.what() << "\n";
    return 3;
  }
}

// --ranks processes (run, check, mutants, sweep): this process is one rank of a launch.
bool ranks_as_processes(const muoncheck::Command& c, const muoncheck::cli::Args& args) {
  for (const auto& o : c.spec.options)
    if (o.name == "ranks") {
      const auto mode = muoncheck::option_text(args, "ranks");
      if (mode != "threads" && mode != "processes")
        throw muoncheck::Error(muoncheck::ErrorKind::Usage, "--ranks: expected threads|processes, got \"" + mode + "\"");
      return mode == "processes";
    }
  return false;
}

muoncheck::launch::ProcessRun process_run(const muoncheck::Command& c, const muoncheck::cli::Args& args) {
  const std::string name = c.spec.name;
  const char* report_key = name == "check" ? "report/check" : name == "run" ? "report" : "json";
  return {name, muoncheck::option_text(args, report_key), muoncheck::option_text(args, "store"),
          muoncheck::timeout_from(args)};
}

}  // namespace

int main(int argc, char** argv) {
  muoncheck::set_process_argv(argc, argv);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" || std::string(argv[1]) == "help") {
    print_usage(std::cout);
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  for (const auto& c : commands()) {
    if (c.spec.name != name) continue;
    return exit_code_of([&] {
      const auto args = muoncheck::cli::Args::parse(c.spec, std::vector<std::string>(argv + 2, argv + argc));
      if (args.help()) {
        std::cout << muoncheck::cli::help_text(c.spec);
        return 0;
      }
      const auto run = [&] { return c.run(args) == muoncheck::Outcome::success ? 0 : 1; };
      if (!ranks_as_processes(c, args)) return run();
      // Rank 0's own errors become its exit code, which it then tells the other ranks.
      return muoncheck::launch::run_as_process_rank(muoncheck::launch::launcher_env(muoncheck::launch::process_environment()),
                                                    process_run(c, args), [&] { return exit_code_of(run); });
    });
  }
  std::cerr << "muoncheck: usage: unknown command \"" << name << "\"\n";
  print_usage(std::cerr);
  return 2;
}
