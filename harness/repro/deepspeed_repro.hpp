// From a minimal case (a scenario the sweep saved, and the DeepSpeed trace beside it) to what a
// maintainer can run and read: a standalone torch + DeepSpeed script that trains the case with
// the exact DeepSpeed config the adapter used, prints per step and param the fp32 master weight's
// error against the float128 oracle next to the band eight valid rounding sequences allow, and
// exits 1 while any is outside it (or while DeepSpeed raises, for an ERROR case); and a report
// skeleton in Markdown: versions, config, the numbers, the suspected code location to fill in.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck {

struct ReproFiles {
  std::string script;   // NAME_repro.py
  std::string report;   // NAME.md
};

// `data_generator_source`: adapters/common/datagen.py, embedded verbatim (the data
// generator, checked bit for bit against core/datagen.cpp). Throws Usage when the trace does not
// carry the DeepSpeed config (written by adapters/deepspeed/resident_worker.py) or the case is too
// large to embed its expected weights.
ReproFiles deepspeed_repro(const Scenario& s, const Trace& t, const std::string& data_generator_source,
                           const std::string& script_name, int control_members);

}  // namespace muoncheck
