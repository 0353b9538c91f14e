// The `muoncheck` command line: dispatches to a subcommand and is the only place
// that chooses an exit code (0 ok, 1 conformance failure, 2 bad input/usage,
// 3 infrastructure). Every error prints one line naming its kind.
#include <iostream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/judge/process_info.hpp"

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
    try {
      const auto args = muoncheck::cli::Args::parse(c.spec, std::vector<std::string>(argv + 2, argv + argc));
      if (args.help()) {
        std::cout << muoncheck::cli::help_text(c.spec);
        return 0;
      }
      return c.run(args) == muoncheck::Outcome::success ? 0 : 1;
    } catch (const muoncheck::Error& e) {
      std::cerr << "muoncheck: " << muoncheck::kind_name(e.kind()) << ": " << e.what() << "\n";
      return exit_code(e.kind());
    } catch (const std::exception& e) {
      std::cerr << "muoncheck: internal: " << e.what() << "\n";
      return 3;
    }
  }
  std::cerr << "muoncheck: usage: unknown command \"" << name << "\"\n";
  print_usage(std::cerr);
  return 2;
}
