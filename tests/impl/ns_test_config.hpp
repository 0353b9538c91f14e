// The NS configuration a device test runs: a method and dtype, and optionally a named
// per-iteration schedule (core/ns_schedules.hpp) with as many steps as it has; else the
// default triple and step count.
#pragma once
#include "core/ns_schedules.hpp"
#include "core/scenario.hpp"
#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl {

inline NsConfig ns_test_config(NsMethod method, DType dtype, const char* schedule = nullptr) {
  OptimizerConfig o;
  o.ns_method = method;
  o.ns_dtype = dtype;
  if (schedule) {
    o.ns_coefficients = find_ns_schedule(schedule)->coefficients;
    o.ns_steps = static_cast<int>(o.ns_coefficients.size());
  }
  return NsConfig::from(o);
}

}  // namespace muoncheck::impl
