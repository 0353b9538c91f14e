// checkpoint-resume-exact: a run saved after step k and resumed continues as the
// uninterrupted run (the scenario without `checkpoint`). Two claims:
//  1. the state the resumed run starts from — every weight, momentum and Adam moment, the
//     Adam step count and the loss-scaler state — is bit-identical to the state saved after
//     step k, at any resume dp/stage (re-partitioning moves values, it never rounds them);
//  2. resumed at the same dp and stage, every later step is bit-identical to the
//     uninterrupted run's; at another dp/stage (whose reductions round in another order) the
//     weights agree within the relational band (properties/relational_invariants.hpp).
// For a trace, (1) reads the trace's state at the resume where it records one; without it
// only (2) can be judged, within the band (a trace's resume may re-round).
#pragma once
#include "core/trajectory.hpp"
#include "properties/run_bundle.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// `uninterrupted`: the implementation's run of without_checkpoint(b.scenario), with its
// control ensemble; skipped when the scenario has no checkpoint.
Verdict checkpoint_resume_exact(const RunBundle& b, const impl::ImplResult& uninterrupted,
                                const ControlEnsemble& uninterrupted_controls);

// Claim 1 alone: how many values of `resumed` differ (bit pattern) from the state recorded
// after step `saved.step`, and the first of them in `first`.
double resumed_state_differences(const StepRecord& saved, const TrainingState& resumed, std::string& first);

}  // namespace muoncheck
