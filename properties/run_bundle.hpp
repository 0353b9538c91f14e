// The plain data an invariant judges: the scenario, the implementation's result
// (trajectory, events, collectives, per-rank digests), the exact oracle's
// trajectory and the control ensemble's. Invariants are pure functions of a bundle.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/run_impl.hpp"
#include "oracle/oracle.hpp"
#include "oracle/result_memo.hpp"
#include "properties/tensor_error.hpp"

namespace muoncheck {

struct RunBundle {
  const Scenario& scenario;
  const impl::ImplResult& impl;
  const Trajectory& oracle;
  const ControlEnsemble& controls;
  oracle::Precision precision;
  // Where the stepwise check gets its single steps; null: computed here and now. A memo
  // gives the very same steps (oracle/result_memo.hpp), only once per process.
  oracle::ResultMemo* memo = nullptr;
};

}  // namespace muoncheck
