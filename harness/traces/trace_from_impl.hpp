// The trace of our own implementation's run of a scenario (producer "muoncheck-impl"):
// what `muoncheck run --trace` writes, so `verify` can judge impl/ like any other.
// Kept apart from trace_io so the trace format itself depends on core/ only.
#pragma once
#include "harness/traces/trace_io.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck {

Trace trace_from_impl(const Scenario& s, const impl::ImplResult& r);

}  // namespace muoncheck
