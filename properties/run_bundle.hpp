// The plain data an invariant judges: the scenario, the implementation's result
// (trajectory, events, collectives, per-rank digests), the exact oracle's
// trajectory and the control's. Invariants are pure functions of a bundle.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/run_impl.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

struct RunBundle {
  const Scenario& scenario;
  const impl::ImplResult& impl;
  const Trajectory& oracle;
  const Trajectory& control;
  oracle::Precision precision;
};

}  // namespace muoncheck
