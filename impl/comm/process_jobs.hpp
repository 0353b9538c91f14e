// Runs on a ProcessGroup (process_group.hpp) what run_ranks runs on threads: one body per
// rank of a job, each with its own AgreeingCommunicator over the job's own mesh of ranks
// 0..dp-1 (Gloo through the job's key prefix, or NCCL bootstrapped by a unique id rank 0
// posts there). Rank 0 posts the job (any text: what to run), runs rank 0's body, and
// collects what every other rank's body returned (its reply, any text) or threw.
//
// Failure semantics are run_ranks': a failing rank closes its connections at once (peers
// fail fast, as echoes) and posts its error; rank 0 rethrows the root cause — the first
// non-echo failure in rank order, worded as run_ranks words it (rank_failures.hpp). A
// rank that posts nothing within 3 s of the failure (its process died, or it hangs outside
// a collective), or within the timeout plus 3 s of rank 0's own end, is the root cause
// when no rank failed on its own: CommError{Infrastructure} naming that rank and the
// collective its peers were in. A lost rank breaks the group: every later job throws that
// same error at once. Jobs run one at a time.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "impl/comm/communicator.hpp"
#include "impl/comm/process_group.hpp"

namespace muoncheck::impl {

struct JobShape {
  int dp = 1;                              // ranks 0..dp-1 of the group take part
  std::chrono::milliseconds timeout = kDefaultCollectiveTimeout;   // per collective, and the connect
  bool nccl = false;                       // NCCL on GPU local_rank, else Gloo
  std::string name;                        // what the job runs (a scenario), for messages
};

using RankBody = std::function<std::string(Communicator&)>;   // returns this rank's reply

// Rank 0. Returns every participant's reply, rank 0's own at [0].
std::vector<std::string> run_job(ProcessGroup& group, const std::string& job, const JobShape& shape, const RankBody& body);

// Once group.lost(): "rank R: process lost (...) during NAME" (this process's last job;
// a worker adds the error that job ended with here), or on rank 0 the error of the job that
// lost it, which names the collective.
std::string loss_message(ProcessGroup& group);
std::string last_job_name();   // "" before the first job

// A worker's view of a job: its shape and this rank's body (read from the job's text; a
// throw becomes this rank's error).
struct JobPlan {
  JobShape shape;
  RankBody body;
};

// A worker: serves jobs until rank 0's end message, and returns its exit code; nothing
// when rank 0 was lost (loss_message says more).
std::optional<int> serve_jobs(ProcessGroup& group, const std::function<JobPlan(const std::string& job)>& open);

}  // namespace muoncheck::impl
