// Judges implementations from their traces (`muoncheck verify`): every invariant a trace can
// show — trajectory-conforms against the oracle within the band of a control that emulates the
// dtypes the trace declares, ns-once-per-matrix-per-step, tagging-matches, overflow-skip-clean,
// and gas/dp/stage-invariant between traces of one implementation that re-split one global
// batch. Verdicts are the properties/ functions over plain trajectories; the records are the
// same ScenarioResult that `run` reports, so the table, repro lines and JSON report match.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "harness/judge/scenario_result.hpp"
#include "harness/traces/trace_io.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

struct TraceCase {
  Scenario scenario;        // the scenario the trace ran (a given file, or derived: see match_traces)
  std::string given_source; // the scenario file on the command line it belongs to
  Trace trace;
};

// Pairs each trace with its scenario: a given scenario of the same name (hashes must agree),
// else the scenario embedded in the trace when it re-splits a given one (same global batch,
// only dp/gas/micro_batch/stage/buckets differ). Throws BadInput otherwise.
std::vector<TraceCase> match_traces(const std::vector<Scenario>& given, const std::vector<Trace>& traces);

// True when a and b follow the same exact trajectory (SPEC §1): the same scenario up to how
// the global batch is split, the ZeRO stage and bucket sizes. Injections pin ranks and
// micro-steps, so scenarios with overflow injections relate only to themselves.
bool same_trajectory(const Scenario& a, const Scenario& b);

struct VerifyOptions {
  oracle::Precision precision = oracle::Precision::float128;
  std::set<std::string> only;   // empty: every invariant a trace can show
  int control_members = oracle::kDefaultControlMembers;   // the noise ensemble, in the scenario's dtypes
};

// The invariants a trace can show, in report order.
const std::vector<std::string>& trace_invariant_ids();

std::vector<ScenarioResult> verify_traces(const std::vector<TraceCase>& cases, const VerifyOptions& o);

}  // namespace muoncheck
