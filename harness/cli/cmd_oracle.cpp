// `muoncheck oracle SCENARIO`: the exact trajectory (or the control) of one
// scenario, as a readable summary or as JSON.
#include <cstdio>
#include <iostream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/trajectory_json.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

namespace {

void print_summary(const Scenario& s, const Trajectory& t) {
  int muon = 0, heads = 0;
  for (const auto& tag : t.tags) muon += tag.use_muon, heads += tag.num_heads > 0;
  std::printf("%s  (%s)  %zu params, %d tagged for Muon (%d per-head), %zu for AdamW\n", s.name.c_str(),
              t.producer.c_str(), t.tags.size(), muon, heads, t.tags.size() - muon);
  std::printf("%5s  %-22s %-8s %-12s %-14s %s\n", "step", "loss", "skipped", "scale", "grad_norm", "ns_calls");
  for (const auto& st : t.steps)
    std::printf("%5d  %-22.17g %-8s %-12g %-14.6g %zu\n", st.step, st.loss, st.skipped ? "yes" : "no", st.scale,
                st.grad_norm, st.ns_calls.size());
}

void run(const cli::Args& args) {
  if (args.positionals().size() != 1) throw Error(ErrorKind::Usage, "muoncheck oracle: give exactly one scenario");
  const auto s = select_scenarios(args.positionals(), option_text(args, "scenarios"), false).front();
  const oracle::Precision p = precision_from(args, "precision");
  if (args.flag("control") && args.value("precision"))
    throw Error(ErrorKind::Usage, "muoncheck oracle: --control runs in double with dtype emulation; drop --precision");
  if (const auto out = args.value("out")) check_writable(*out);   // before the oracle runs
  const Trajectory t = args.flag("control") ? oracle::run_control(s) : oracle::run_oracle(s, p);
  if (auto out = args.value("out")) {
    write_file_atomically(*out, trajectory_to_json(t).dump() + "\n");
    std::fprintf(stderr, "wrote %s\n", out->c_str());
  }
  if (args.flag("print-json")) std::cout << trajectory_to_json(t, false).dump(2) << "\n";
  else print_summary(s, t);
}

}  // namespace

Command oracle_command() {
  return informational_command(
      {"oracle", "muoncheck oracle SCENARIO [--precision double|float128|bin50] [--control] [--out FILE] [--print-json]",
       "Computes the exact Muon trajectory of SCENARIO (a .json path or a name in scenarios/):\n"
       "tags, and per step the loss, skip, loss scale, gradient norm, NS calls and every state tensor.\n"
       "--print-json prints the trajectory without its tensors; --out FILE writes it whole.",
       options({"precision", "control", "out/trajectory", "print-json", "scenarios"})},
      run);
}

}  // namespace muoncheck
