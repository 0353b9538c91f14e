// Generators of the scenario fields for learning-rate schedules and checkpoint-resume.
// The general generator draws them rarely and only after every other field (so the fields
// drawn before keep their values); the `schedule` and `checkpoint` focus flags force them.
#pragma once
#include <optional>

#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::generators {

rc::Gen<LrSchedule> lr_schedule(int steps);
// The optimizer's schedule and, under the schedule focus, a group schedule that differs
// from it at step 0 (a group with lr_scale > 0, so overwriting it changes the trajectory).
void add_schedules(Scenario& s, const Focus& f);
// A save after some step but the last; under the checkpoint focus mostly a resume at
// another dp of the same global batch (never while an injection after the save pins a rank).
rc::Gen<std::optional<CheckpointConfig>> checkpoint(const Scenario& s, const Focus& f);

}  // namespace muoncheck::generators
