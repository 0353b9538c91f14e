// run_impl with ranks as processes: rank 0's process runs the harness and calls run_impl
// as always; each run becomes a job of the process group (comm/process_jobs.hpp) whose
// text is the scenario and the options, and whose reply from every other rank is what that
// rank observed (rank_observation.hpp). Rank 0 assembles the same ImplResult as threads
// (run_rank.hpp). Workers run serve_engine_jobs instead of a command. A run at a dp beyond
// the group's world is Unsupported; one at a smaller dp uses ranks 0..dp-1. A checkpoint
// scenario is two jobs: in the saving one every rank writes its shard file to a directory
// of its own under the store (impl/zero/shard_file.hpp), in the resumed one (at the same or
// another dp) every rank reads them all; rank 0 removes the directory after the resume.
#pragma once
#include <optional>

#include "core/scenario.hpp"
#include "impl/comm/process_jobs.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck::impl {

ImplResult run_on_processes(ProcessGroup& group, const Scenario& s, const ImplOptions& opts);
std::optional<int> serve_engine_jobs(ProcessGroup& group);   // serve_jobs with the engine's jobs

}  // namespace muoncheck::impl
