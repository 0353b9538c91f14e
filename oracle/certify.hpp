// Certified digits of the oracle's trajectory (docs/invariants.md): the agreement between a
// float128 run and a cpp_bin_float_50 run of the same scenario, step by step.
// digits = −log10(max over params of ‖X₁₂₈ − X₅₀‖_F / max(‖X₅₀‖_F, tiny)), capped at
// kMaxDigits (identical tensors, e.g. all-zero momentum, certify the cap).
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck::oracle {

inline constexpr double kMaxDigits = 40.0;

struct CertifiedStep {
  int step = 0;
  bool skipped = false;
  double weights = kMaxDigits;   // min over all params
  double momentum = kMaxDigits;  // min over Muon params (the cap when there are none)
  double adam = kMaxDigits;      // min over AdamW params, both moments
  double min() const;            // the step's certified digits
};

struct Certificate {
  std::string scenario;
  std::vector<CertifiedStep> steps;
  double min_digits = kMaxDigits;  // over all steps and kinds
};

// Runs the scenario in float128 and bin50 (each in full, steps interleaved).
Certificate certify(const Scenario& s);

}  // namespace muoncheck::oracle
