// Exact invariants over what the implementation did, not what it computed: NS
// call counts, tags, skipped steps, collective dtypes and counts, replicated
// state across ranks, and run-to-run determinism. Thresholds are counts (0).
#pragma once
#include <optional>

#include "properties/run_bundle.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

Verdict ns_once_per_matrix_per_step(const RunBundle& b);
// Tags as decided on every rank, and as applied: each NS call's head count.
Verdict tagging_matches(const RunBundle& b);
Verdict overflow_skip_clean(const RunBundle& b);
// The dtype each training collective must travel in (docs/semantics.md §4, §8): gradient reductions and Muon
// gathers in comm_dtype, parameter gathers and the weight re-sync in param_dtype, NS results and
// scalars in fp32; nullopt for collectives that only serve the checks (state export).
std::optional<DType> required_wire_dtype(const Scenario& s, impl::Purpose purpose);
Verdict comm_dtype_respected(const RunBundle& b);
// `resplit_gas1` is the same scenario re-split to gas 1 (null when gas is already 1).
Verdict gathers_once_per_step(const RunBundle& b, const Observation* resplit_gas1);
Verdict ranks_agree(const RunBundle& b);
Verdict deterministic(const RunBundle& b, const Observation& second_run);

// The same judgements over the plain pieces they read, for results that come without an
// ImplResult (an implementation's trace, judged by `muoncheck verify`).
Verdict ns_once_per_matrix_per_step(const Trajectory& oracle, const Trajectory& impl);
Verdict tagging_matches(const std::vector<ParamTag>& expected, const std::vector<std::vector<ParamTag>>& tags_by_rank,
                        bool zero_init);
Verdict overflow_skip_clean(const Scenario& s, const Trajectory& oracle, const Trajectory& impl);

}  // namespace muoncheck
