// A trace and an observation (properties/observation.hpp), both ways: the observation a trace
// shows, in the scenario's parameter order, with what it leaves out named in `missing`; and
// the trace of one of our engine's runs (`run --write-trace`), which shows everything.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "harness/traces/trace_io.hpp"
#include "properties/observation.hpp"

namespace muoncheck {

// Throws BadInput naming the file and JSON path when the trace does not fit the scenario
// (a tag per param, tensor sizes) or names a collective kind, purpose or phase that does not exist.
Observation observation_from_trace(const Scenario& s, const Trace& t);

// `repeat`: 0 for the scenario's run, 1 for the second run `deterministic` compares against.
Trace trace_from_observation(const Scenario& s, const Observation& o, const std::vector<std::string>& faults, int repeat);

}  // namespace muoncheck
