// Judges implementations from their traces (`muoncheck verify`) on the one judging path
// (judge_observation.hpp): each trace of a given scenario is an observation, judged by every row
// of the invariant table; a row whose part the trace leaves out is UNSUPPORTED naming it. The
// variant runs the relational rows compare against (properties/invariant_table.hpp:
// gas/dp/stage/bucket re-splits, the gas-1 re-split, a repeat) are the other traces given, found
// by the variant's scenario hash (`muoncheck variants SCENARIO --out-dir DIR` writes those scenarios);
// a variant with no trace is UNSUPPORTED naming it. The records are the same ScenarioResult that
// `run` reports, so the table, repro lines and JSON report match.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/scenario.hpp"
#include "harness/judge/scenario_result.hpp"
#include "harness/traces/trace_io.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "oracle/result_memo.hpp"

namespace muoncheck {

struct TraceCase {
  Scenario scenario;        // the scenario the trace ran (a given file, or derived: see match_traces)
  std::string given_source; // the scenario file on the command line it belongs to
  Trace trace;
  bool given = false;       // its scenario is a given one (else: a variant of one)
};

// Pairs each trace with its scenario: a given scenario of the same name (hashes must agree),
// else the scenario embedded in the trace when it re-splits a given one (same global batch,
// only dp/gas/micro_batch/stage/buckets differ: a variant). Throws BadInput otherwise.
std::vector<TraceCase> match_traces(const std::vector<Scenario>& given, const std::vector<Trace>& traces);

// True when a and b follow the same exact trajectory (docs/semantics.md §2): the same scenario up to how
// the global batch is split, the ZeRO stage and bucket sizes. Injections pin ranks and
// micro-steps, so scenarios with overflow injections relate only to themselves.
bool same_trajectory(const Scenario& a, const Scenario& b);

struct VerifyOptions {
  oracle::Precision precision = oracle::Precision::float128;
  std::set<std::string> only;   // empty: every invariant
  int control_members = oracle::kDefaultControlMembers;   // the noise ensemble, in the scenario's dtypes
  std::vector<std::string> flags;   // what a repro line repeats to judge the same way (`--oracle-precision double`)
};

// One result per trace of a given scenario (repeat 0); the traces of variants and repeats
// serve the relational rows of those.
std::vector<ScenarioResult> verify_traces(const std::vector<TraceCase>& cases, const VerifyOptions& o);

// One implementation's trace of `s`, judged beside the traces of its variants (`variants`: each a
// scenario and its trace, serving the relational rows only): the one result, never none.
ScenarioResult verify_one_trace(const Scenario& s, const Trace& t,
                                const std::vector<std::pair<Scenario, Trace>>& variants, const VerifyOptions& o);

}  // namespace muoncheck
