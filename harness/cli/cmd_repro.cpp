// `muoncheck repro CASE --for NAME`: a minimal case (the scenario `sweep --impl` saved and the
// trace beside it, CASE.trace.json) as a standalone script of that implementation and a report
// skeleton, by the repro template its record names (harness/external/implementation.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/external/implementation.hpp"

namespace muoncheck {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::BadInput, path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void run(const cli::Args& args) {
  if (args.positionals().size() != 1) throw Error(ErrorKind::Usage, "muoncheck repro: give exactly one case (a scenario file)");
  const std::string impl = option_text(args, "for");
  const external::Implementation record = external::implementation_named(impl);
  if (!record.repro)
    throw Error(ErrorKind::Usage, "--for " + impl + ": no repro template for this implementation (those with one: " +
                                      external::implementation_names() + ")");
  const std::string path = args.positionals().front();
  const Scenario s = load_scenario(path);
  std::string trace_path = path;
  if (trace_path.size() > 5 && trace_path.substr(trace_path.size() - 5) == ".json") trace_path.resize(trace_path.size() - 5);
  trace_path += ".trace.json";
  if (!std::filesystem::exists(trace_path))
    throw Error(ErrorKind::BadInput, path + ": no trace beside it (" + trace_path + "; `muoncheck sweep --impl " + impl + "` writes one)");
  const Trace t = load_trace(trace_path);
  const std::string out = option_text(args, "out-dir/repro");
  std::filesystem::create_directories(out);
  const std::string script_name = s.name + "_repro.py";
  const std::string datagen = read_text(option_text(args, "adapter-dir") + "/datagen.py");
  const ReproFiles f = record.repro(s, t, datagen, script_name, control_members_from(args));
  const auto script = (std::filesystem::path(out) / script_name).string();
  const auto report = (std::filesystem::path(out) / (s.name + ".md")).string();
  write_file_atomically(script, f.script);
  write_file_atomically(report, f.report);
  std::printf("script: %s\nreport skeleton: %s\nrun: %storchrun --nproc-per-node %d %s\n", script.c_str(), report.c_str(),
              record.repro_run_prefix.c_str(), s.engine.dp, script.c_str());
}

}  // namespace

Command repro_command() {
  return informational_command(
      {"repro", "muoncheck repro CASE.json --for " + external::implementation_names() + " [--out-dir DIR]",
       "Writes a standalone script of the implementation (" + external::implementation_names() + ") for a\n"
       "minimal case found by `sweep --impl NAME`\n"
       "(CASE.json and the CASE.trace.json beside it): it prints each step's error against the float128\n"
       "oracle next to the band and exits 1 while the defect shows; and a Markdown report skeleton.",
       options({"for", "out-dir/repro", "adapter-dir", "control-members"})},
      run);
}

}  // namespace muoncheck
