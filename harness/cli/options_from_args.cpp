#include "harness/cli/options_from_args.hpp"

#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli/option_table.hpp"
#include "properties/invariant_table.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

std::vector<std::string> run_flags_from(const cli::Args& args, std::string_view precision_key) {
  std::vector<std::string> flags;
  for (const std::string_view key : {std::string_view("mode"), precision_key, std::string_view("backend"),
                                     std::string_view("comm"), std::string_view("ns-kernel"), std::string_view("dp"),
                                     std::string_view("control-members")}) {
    const auto& name = option_entry(key).spec.name;
    const std::string text = option_text(args, key);
    if (!text.empty() && text != option_entry(name).spec.default_text) flags.insert(flags.end(), {"--" + name, text});
  }
  return flags;
}

JudgeOptions judge_options_from(const cli::Args& args, std::string_view precision_key) {
  JudgeOptions o;
  o.faults = args.values("fault");
  o.mode = mode_from(args);
  o.precision = precision_from(args, precision_key);
  o.run_flags = run_flags_from(args, precision_key);
  for (const auto& id : args.values("invariant")) {
    if (!is_invariant_id(id)) throw Error(ErrorKind::Usage, "--invariant: unknown invariant \"" + id + "\"");
    o.only.insert(id);
  }
  o.timeout = timeout_from(args);
  o.backend = backend_from(args);
  o.comm = comm_from(args);
  o.ns_kernel = ns_kernel_from(args);
  o.control_members = control_members_from(args);
  o.dp = dp_from(args);
  return o;
}

std::vector<std::string> with_judge_options(const std::vector<std::string>& more) {
  std::vector<std::string> keys = {"fault", "mode",  "oracle-precision", "invariant",      "timeout-ms",
                                   "backend", "comm", "ns-kernel", "dp",  "control-members", "ranks", "store"};
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

ViewPaths view_paths_from(const cli::Args& args) {
  ViewPaths p{args.value_or("junit", ""), args.value_or("summary-md", "")};
  for (const auto* path : {&p.junit, &p.summary_md})
    if (!path->empty()) check_writable(*path);   // before the work, not after
  return p;
}

SuiteOptions suite_options_from(const cli::Args& args, std::string command, std::string_view report_key) {
  SuiteOptions o;
  o.judge = judge_options_from(args);
  o.command = std::move(command);
  o.views = view_paths_from(args);
  o.report_path = option_text(args, report_key);
  if (!o.report_path.empty()) check_writable(o.report_path);   // before the suite runs, not after
  o.min_executed = min_executed_from(args);
  return o;
}

}  // namespace muoncheck
