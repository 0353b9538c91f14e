// `muoncheck resolve SCENARIO`: the scenario as muoncheck understands it, every default filled
// in, the llama preset expanded and each parameter tagged (docs/semantics.md §3), as JSON. Adapters read this
// instead of re-implementing the defaults (adapters/common/scenario.py).
#include <cstdio>
#include <iostream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/external/resolved_scenario.hpp"
#include "harness/judge/scenario_selection.hpp"

namespace muoncheck {

namespace {

void run(const cli::Args& args) {
  if (args.positionals().size() != 1) throw Error(ErrorKind::Usage, "muoncheck resolve: give exactly one scenario");
  const auto s = select_scenarios(args.positionals(), option_text(args, "scenarios"), false).front();
  const std::string text = resolved_scenario_json(s).dump(2) + "\n";
  if (const auto out = args.value("out")) {
    check_writable(*out);
    write_file_atomically(*out, text);
    std::fprintf(stderr, "wrote %s\n", out->c_str());
  } else {
    std::cout << text;
  }
}

}  // namespace

Command resolve_command() {
  return informational_command(
      {"resolve", "muoncheck resolve SCENARIO [--out FILE]",
       "Prints SCENARIO (a .json path or a name in scenarios/) as muoncheck reads it: the canonical\n"
       "scenario with every default filled in (its hash is the scenario's), the parameter list with the\n"
       "llama preset expanded, each parameter's matrix view, the tagging of docs/semantics.md §3 (use_muon, tag_heads) and the\n"
       "lr_scale / weight_decay / lr_schedule its group gives it, the global batch, and always (the\n"
       "canonical scenario omits them at their defaults) engine_path {offload_optimizer, compile},\n"
       "lr_schedule, checkpoint (null, or save_after_step and the resume engine dp/stage/gas) and\n"
       "ns_coefficients: one [a, b, c] per NS iteration (a named schedule or a single triple expanded).\n"
       "Format muoncheck-resolved-scenario/1; the adapters read it (adapters/common/scenario.py).",
       options({"out/resolved", "scenarios"})},
      run);
}

}  // namespace muoncheck
