// What a failure looks like, in words that stay the same from one case of a defect to the next,
// read from the failing verdict's worst-case record (properties/verdict.hpp), never from its prose:
// the failing invariant and, where its record names one, the kind of thing that broke.
// trajectory-conforms names the tensor (weight, momentum, an Adam moment; whether the trace had it)
// and the role of its param (Muon matrix, per-head projection, Muon weight of rank 3/4, AdamW param);
// ns-once-per-matrix-per-step names the miscount (a call missing, extra, on a skipped step, tied to
// no param); stage-invariant names the two stages; an implementation error is its text with every
// number as N. The sweep groups failures into defects by their lead symptom (that of the first
// failing invariant) and shrinks a failure only to cases with the same lead symptom, so a minimal
// case shows the defect it was found for, not another one the shrinker slid into.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// The error's first 80 characters with every run of digits as N.
std::string error_kind(const std::string& error);

// One failing verdict as a symptom: e.g. "trajectory-conforms: momentum of a Muon matrix",
// "ns-once-per-matrix-per-step: NS on a skipped step", "stage-invariant: stage 0 vs stage 1".
std::string verdict_symptom(const Scenario& s, const Verdict& v);

// An implementation error as a symptom: "ERROR: " + error_kind(error).
std::string error_symptom(const std::string& error);

}  // namespace muoncheck
