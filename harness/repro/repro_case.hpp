// What every repro script of a minimal case holds, whichever implementation it runs: the case's
// parameter shapes, the fp32 master weights of the exact (float128) trajectory after each step
// and the band each step allows (alpha x the worst of the control ensemble's valid rounding
// sequences, plus a floor), as Python literals; and the Python model and data every script trains
// (a tree of modules named like the case's params, fed the samples of docs/semantics.md §1 by the embedded data
// generator). deepspeed_repro.hpp and torch_repro.hpp add the training loop of their implementation.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/scenario.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck {

struct ReproCaseData {
  std::string shapes;     // lines of `PARAM_SHAPES = [...]`: ("name", [dims]),
  std::string expected;   // lines of `EXPECTED = {...}`: "name": [[step 0 weights], ...],
  std::string band;       // lines of `BAND = {...}`: "name": [step 0 band, ...],
};

// Throws Usage when the case is too large to embed its expected weights (shrink it first).
ReproCaseData repro_case_data(const Scenario& s, int control_members);

std::string py_json(const nlohmann::json& j);   // a JSON value as a Python expression (json.loads)

// The script's data and model after its own constants: EXPECTED, BAND, the data generator's
// source (verbatim), then the Python classes and helpers every script trains with: P, Node, tree(),
// batch(step, micro_step, rank, device, dtype), relative_error(x, exact). They read SEED, DP,
// MICRO_BATCH and PARAM_SHAPES.
std::string repro_case_source(const ReproCaseData& data, const std::string& data_generator_source);

// The report skeleton's "expected vs observed": `who` raises (an ERROR case), or the verdicts
// verify gives the case's own trace, one line each.
std::string observed_verdicts(const Scenario& s, const Trace& t, int control_members, const std::string& who);

}  // namespace muoncheck
