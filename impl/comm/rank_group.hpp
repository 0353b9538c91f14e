// Runs one body per data-parallel rank, each on its own thread with its own connected
// GlooCommunicator (loopback TCP). A run gets a mesh of dp ranks that an earlier run of the
// process left connected after succeeding on every rank, or connects a new one through a
// fresh rendezvous store (so runs never collide); gloo_mesh_pool.hpp says why that is safe.
// The first rank to fail ends the run: its connections close so peers blocked on it fail
// fast, peers outside a collective abort at their next one, and the caller gets one Error.
#pragma once
#include <chrono>
#include <functional>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

// Calls body(comm) on dp threads (comm.rank() = 0..dp-1) and returns when all are done.
// `comm` agrees on every collective's signature first (agreeing_communicator.hpp), so a
// mismatch between ranks is a CommError{Infrastructure}, never a crash inside Gloo.
// On failure throws one muoncheck::Error for the root cause: the first failure recorded
// that is not an echo (CommError::peer_failure(): a peer's connection closed under us, or
// the run was aborted). Echoes are dropped; if there are only echoes, the first is used.
//   - a CommError from a collective is passed through unchanged
//     ("rank R: all_reduce (grad_reduce, step 3) failed: ..."),
//   - anything else becomes "rank R threw: <what>", keeping an Error's kind (so an
//     Unsupported from the engine stays Unsupported); other exceptions become Internal.
// So a body should let a CommError propagate unchanged (wrapping it hides that it is an echo).
// Never hangs as long as each body blocks only inside collectives: every collective ends
// within `timeout`, and a failing rank frees its peers at once. Communicators stay open
// until every rank is done, so a rank that finishes early never breaks a peer's last
// collective; a peer waiting for a collective that a finished rank never joins times out.
void run_ranks(int dp, std::chrono::milliseconds timeout, const std::function<void(Communicator&)>& body);

}  // namespace muoncheck::impl
