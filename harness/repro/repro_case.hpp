// What every repro script of a minimal case holds, whichever implementation it runs: the case's
// parameter shapes, the fp32 master weights of the exact (float128) trajectory after each step
// and the band each step allows (alpha x the worst of the control ensemble's valid rounding
// sequences, plus a floor), as Python literals; and the Python model and data every script trains
// (a tree of modules named like the case's params, fed the SPEC samples by the embedded data
// generator). deepspeed_repro.hpp and torch_repro.hpp add the training loop of their implementation.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/scenario.hpp"

namespace muoncheck {

struct ReproCaseData {
  std::string shapes;     // lines of `PARAM_SHAPES = [...]`: ("name", [dims]),
  std::string expected;   // lines of `EXPECTED = {...}`: "name": [[step 0 weights], ...],
  std::string band;       // lines of `BAND = {...}`: "name": [step 0 band, ...],
};

// Throws Usage when the case is too large to embed its expected weights (shrink it first).
ReproCaseData repro_case_data(const Scenario& s, int control_members);

// The Python classes and helpers after the data: P, Node, tree(), batch(step, micro_step, rank,
// device, dtype), relative_error(x, exact). They read SEED, DP, MICRO_BATCH, PARAM_SHAPES and the
// data generator's functions.
const char* repro_model_source();

std::string py_json(const nlohmann::json& j);   // a JSON value as a Python expression (json.loads)

}  // namespace muoncheck
