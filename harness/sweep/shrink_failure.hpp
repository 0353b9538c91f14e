// Shrinking a failing generated scenario: greedy descent through RapidCheck's
// shrink tree (the first smaller scenario that still fails is taken, then its
// shrinks are tried), bounded by a number of judgements and by time. Every step
// of the path is kept so a caller can fall back to a larger, confirmed case.
#pragma once
#include <functional>
#include <vector>

#include <rapidcheck.h>

#include "core/scenario.hpp"

namespace muoncheck {

struct ShrinkPath {
  std::vector<rc::Shrinkable<Scenario>> steps;   // steps[0] is the original failing case
  int judgements = 0;
  bool exhausted = false;                         // stopped by a bound, not at a local minimum
};

ShrinkPath shrink_failure(const rc::Shrinkable<Scenario>& failing,
                          const std::function<bool(const Scenario&)>& still_fails, int max_judgements,
                          double max_seconds);

}  // namespace muoncheck
