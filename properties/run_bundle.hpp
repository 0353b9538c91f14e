// The plain data an invariant judges: the scenario, the observation of the implementation's
// run (trajectory, events, collectives, per-rank digests: properties/observation.hpp), the
// exact oracle's trajectory and the control ensemble's. Invariants are pure functions of a bundle.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "oracle/oracle.hpp"
#include "properties/observation.hpp"
#include "oracle/result_memo.hpp"
#include "properties/tensor_error.hpp"

namespace muoncheck {

struct RunBundle {
  const Scenario& scenario;
  const Observation& impl;   // what the implementation showed
  const Trajectory& oracle;
  const ControlEnsemble& controls;
  oracle::Precision precision;
  // Where the stepwise check gets its single steps; null: computed here and now. A memo
  // gives the very same steps (oracle/result_memo.hpp), only once per process.
  oracle::ResultMemo* memo = nullptr;
};

}  // namespace muoncheck
