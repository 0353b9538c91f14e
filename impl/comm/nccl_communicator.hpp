// Communicator over NCCL: one rank per GPU. Buffers stay host memory (the engine's
// contract); each collective stages them through device memory on the rank's own
// stream. NCCL communicators are created non-blocking, so every collective (and the
// init) honours the timeout and the shared abort flag by polling, never by hanging:
// a timeout or peer failure aborts the NCCL communicator and throws CommError.
// Two ways in: run_ranks_nccl (one process, all local GPUs, group init) and
// nccl_connect (one process per rank, bootstrapped by an ncclUniqueId in hex).
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

// Like run_ranks (rank_group.hpp), with rank r on CUDA device r. Throws Unsupported when
// fewer than dp devices are visible. The body also gets the device ordinal.
void run_ranks_nccl(int dp, std::chrono::milliseconds timeout,
                    const std::function<void(Communicator&, int device)>& body);

// Multi-process bootstrap: rank 0 makes the id, every process passes it (e.g. through a
// file or the environment) to nccl_connect with its own rank and device.
std::string nccl_unique_id_hex();
std::unique_ptr<Communicator> nccl_connect(const std::string& unique_id_hex, int rank, int size, int device,
                                           std::chrono::milliseconds timeout);

std::string nccl_version();   // "2.28.9" (the library loaded at run time)

}  // namespace muoncheck::impl
