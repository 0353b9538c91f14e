// From a minimal case found by `muoncheck sweep --impl torch` (the scenario the sweep saved and the
// torch trace beside it) to a standalone torch-only script: it trains the case with the optimizers
// the adapter built (classes, defaults and groups from the trace's `optimizers`, the lr of every
// step from its `lr_by_step`) under the DDP or FSDP2 settings the trace records, prints per step
// and param the fp32 master weight's error against the float128 oracle next to the band, and exits
// 1 while any is outside it (or while torch raises, for an ERROR case); and a report skeleton.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "harness/repro/deepspeed_repro.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck {

// Throws Usage when the trace does not carry the adapter's settings (traces of
// adapters/torch/run.py and resident_worker.py do) or the case is too large to embed.
ReproFiles torch_repro(const Scenario& s, const Trace& t, const std::string& data_generator_source,
                       const std::string& script_name, int control_members);

}  // namespace muoncheck
