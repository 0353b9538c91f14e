#include "impl/comm/process_jobs.hpp"

#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <gloo/rendezvous/prefix_store.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "impl/comm/agreeing_communicator.hpp"
#include "impl/comm/gloo_communicator.hpp"
#include "impl/comm/rank_failures.hpp"
#ifdef MUONCHECK_HAVE_CUDA
#include "impl/comm/nccl_communicator.hpp"
#endif

namespace muoncheck::impl {
namespace {

using Clock = std::chrono::steady_clock;
// How long the job's other ranks get to post after a failure (they fail at once, as
// echoes, unless dead or hung); keeps a lost rank's run within the timeout plus 5 s.
constexpr std::chrono::milliseconds kGrace{3000};

std::string job_key(int64_t n) { return "job/" + std::to_string(n); }
std::string result_key(int64_t n, int rank) { return job_key(n) + "/result/" + std::to_string(rank); }

// A failure as it travels: enough to rethrow it as the rank threw it.
nlohmann::json error_json(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const CommError& c) {
    return {{"comm", true}, {"kind", static_cast<int>(c.kind())}, {"rank", c.rank()}, {"op", c.op()},
            {"message", c.what()}, {"echo", c.peer_failure()}};
  } catch (const Error& x) {
    return {{"comm", false}, {"kind", static_cast<int>(x.kind())}, {"message", x.what()}};
  } catch (const std::exception& x) {
    return {{"comm", false}, {"kind", -1}, {"message", x.what()}};
  } catch (...) {
    return {{"comm", false}, {"kind", -1}, {"message", "an exception that is not a std::exception"}};
  }
}

std::exception_ptr error_from_json(const nlohmann::json& j) {
  const int kind = j.at("kind").get<int>();
  const std::string message = j.at("message").get<std::string>();
  if (j.at("comm").get<bool>())
    return std::make_exception_ptr(CommError(static_cast<ErrorKind>(kind), j.at("rank").get<int>(),
                                             j.at("op").get<std::string>(), message, j.at("echo").get<bool>()));
  if (kind < 0) return std::make_exception_ptr(std::runtime_error(message));
  return std::make_exception_ptr(Error(static_cast<ErrorKind>(kind), message));
}

std::string error_reply(const std::exception_ptr& e) { return nlohmann::json{{"error", error_json(e)}}.dump(); }

// This process's rank of job n: its communicator (and the store view it connected through).
struct JobRank {
  std::unique_ptr<gloo::rendezvous::PrefixStore> store;
  std::unique_ptr<Communicator> comm;
};

void connect(ProcessGroup& g, int64_t n, const JobShape& shape, JobRank& j) {
  if (shape.nccl) {  // CHECK_EXCL_BR_LINE: another build's backend
    // CHECK_EXCL_START: another build's backend
#ifdef MUONCHECK_HAVE_CUDA
    const std::string key = job_key(n) + "/nccl_id";
    if (g.rank() == 0) g.set(key, nccl_unique_id_hex());
    const auto id = g.get(key, Clock::now() + shape.timeout);
    if (!id)
      throw CommError(ErrorKind::Infrastructure, g.rank(), "connect",
                      "rank " + std::to_string(g.rank()) + ": connect (nccl) failed: no unique id from rank 0");
    j.comm = nccl_connect(*id, g.rank(), shape.dp, g.where().local_rank, shape.timeout);
    return;
#else
    throw Error(ErrorKind::Unsupported, "comm nccl: this muoncheck was built without CUDA (-DMUONCHECK_CUDA=OFF)");
#endif
    // CHECK_EXCL_STOP
  }
  j.store = std::make_unique<gloo::rendezvous::PrefixStore>(job_key(n) + "/mesh", g.store());
  j.comm = std::make_unique<GlooCommunicator>(g.rank(), shape.dp, *j.store, shape.timeout, &g.stopping(), g.device());
}

// Runs this process's rank of the job: its reply, or its error with its connections
// closed at once (peers then fail fast, as echoes).
std::exception_ptr run_rank(ProcessGroup& g, int64_t n, const JobShape& shape, const RankBody& body, JobRank& job,
                            std::string& reply) {
  try {
    connect(g, n, shape, job);
    AgreeingCommunicator agreeing(*job.comm);   // a mismatch throws here, never in the transport
    reply = body(agreeing);
    return nullptr;
  } catch (...) {
    auto e = std::current_exception();
    job.comm.reset();
    return e;
  }
}

// The value at `key` within `deadline`; once the group is stopping (a lost peer), at most
// kGrace more: the survivors' posts still arrive, the lost rank's never will.
std::optional<std::string> collect(ProcessGroup& g, const std::string& key, Clock::time_point deadline) {
  if (auto v = g.get(key, deadline)) return v;
  return g.get(key, std::min(deadline, Clock::now() + kGrace), true);
}

[[noreturn]] void throw_lost(int who, const RankFailures::Entry* echo, std::exception_ptr& broken) {
  std::string op = "result", seen;
  if (echo) {
    try {
      std::rethrow_exception(echo->error);
    } catch (const CommError& c) {
      op = c.op();
      seen = "; rank " + std::to_string(echo->rank) + " saw: " + c.what();
    } catch (...) {
    }
  }
  broken = std::make_exception_ptr(
      CommError(ErrorKind::Infrastructure, who, op,
                "rank " + std::to_string(who) + ": " + op + " failed: process lost or not answering (no word from it within " +
                    std::to_string(kGrace.count() / 1000) + " s of its peers' end" + seen + ")"));
  std::rethrow_exception(broken);
}

// Held by the job under way; guards every group's broken().
std::timed_mutex& one_job_at_a_time() {
  static std::timed_mutex m;
  return m;
}

// What this process last did, for the message when a rank is lost: the last job's name and
// (a worker) the error that job ended with here.
struct JobNotes {
  std::mutex mutex;
  std::string job, error;
};
JobNotes& notes() {
  static JobNotes n;
  return n;
}

void note(const std::string& job, const std::string& error) {
  std::lock_guard<std::mutex> lock(notes().mutex);
  notes().job = job;
  notes().error = error;
}

}  // namespace

std::string loss_message(ProcessGroup& g) {
  const auto lost = g.lost();
  std::unique_lock<std::timed_mutex> job(one_job_at_a_time(), std::defer_lock);
  if (job.try_lock_for(std::chrono::milliseconds(100)) && g.broken()) {   // a job failed on it: its words
    try {
      std::rethrow_exception(g.broken());
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  std::lock_guard<std::mutex> lock(notes().mutex);
  return "rank " + (lost ? std::to_string(*lost) : std::string("?")) +
         ": process lost (its control connection closed) during " + (notes().job.empty() ? "the first run" : notes().job) +
         (notes().error.empty() ? "" : "; rank " + std::to_string(g.rank()) + " saw: " + notes().error);
}

std::string last_job_name() {
  std::lock_guard<std::mutex> lock(notes().mutex);
  return notes().job;
}

std::vector<std::string> run_job(ProcessGroup& g, const std::string& job, const JobShape& shape, const RankBody& body) {
  std::exception_ptr& broken = g.broken();
  std::lock_guard<std::timed_mutex> lock(one_job_at_a_time());
  if (broken) std::rethrow_exception(broken);
  if (shape.dp < 1 || shape.dp > g.world())
    throw Error(ErrorKind::Unsupported, "dp " + std::to_string(shape.dp) + " needs " + std::to_string(shape.dp) +
                                            " rank processes, this run has " + std::to_string(g.world()));
  if (const auto lost = g.lost()) throw_lost(*lost, nullptr, broken);
  const int64_t n = g.next_job();
  g.set(job_key(n), job);
  note(shape.name, "");
  std::vector<std::string> replies(static_cast<size_t>(shape.dp));
  JobRank mine;
  RankFailures failures;
  if (auto e = run_rank(g, n, shape, body, mine, replies[0])) failures.record(0, e);
  g.set(result_key(n, 0), failures.entries.empty() ? "{}" : error_reply(failures.entries[0].error));
  const auto deadline = Clock::now() + (failures.entries.empty() ? shape.timeout + kGrace : kGrace);
  std::vector<int> silent;
  for (int r = 1; r < shape.dp; ++r) {
    const auto text = collect(g, result_key(n, r), deadline);
    if (!text) {
      silent.push_back(r);
      continue;
    }
    const auto j = nlohmann::json::parse(*text);
    if (j.contains("error")) failures.record(r, error_from_json(j.at("error")));
    else replies[static_cast<size_t>(r)] = j.at("reply").get<std::string>();
  }
  mine.comm.reset();   // every rank is done (or gone): closing breaks nobody's collective

  const auto* root = failures.root_cause();
  const auto lost = g.lost();
  if ((!silent.empty() || lost) && (!root || root->echo))
    throw_lost(lost ? *lost : silent.front(), root, broken);
  if (root) {
    try {
      rethrow_as_one_error(root->rank, root->error);
    } catch (...) {
      if (!silent.empty()) broken = std::current_exception();
      throw;
    }
  }
  return replies;
}

std::optional<int> serve_jobs(ProcessGroup& g, const std::function<JobPlan(const std::string& job)>& open) {
  for (int64_t n = 0;; ++n) {
    const auto text = g.get(job_key(n), Clock::time_point::max());
    if (!text) return g.ended();   // rank 0's end, or nothing: rank 0 lost
    JobPlan plan;
    try {
      plan = open(*text);
    } catch (...) {   // every participant fails alike; rank 0 reports it
      g.set(result_key(n, g.rank()), error_reply(std::current_exception()));
      continue;
    }
    note(plan.shape.name, "");
    if (g.rank() >= plan.shape.dp) continue;
    JobRank job;
    std::string reply;
    if (auto e = run_rank(g, n, plan.shape, plan.body, job, reply)) {
      note(plan.shape.name, error_json(e).at("message").get<std::string>());
      g.set(result_key(n, g.rank()), error_reply(e));
      continue;
    }
    g.set(result_key(n, g.rank()), nlohmann::json{{"reply", reply}}.dump());
    // Keep the connections until every rank of the job is done (as run_ranks does).
    const auto deadline = Clock::now() + plan.shape.timeout + kGrace;
    for (int r = 0; r < plan.shape.dp; ++r)
      if (!g.get(result_key(n, r), deadline)) break;
  }
}

}  // namespace muoncheck::impl
