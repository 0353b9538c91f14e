// Where this process sits in a launch of one process per rank, read from the launcher's
// environment: torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), Open MPI
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE) or Slurm (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, SLURM_NNODES), the first of them present. The address peers
// reach this process at: MUONCHECK_GLOO_HOST when set, else 127.0.0.1 when every rank is on
// this node, else this host's name.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "impl/comm/process_group.hpp"

namespace muoncheck::launch {

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();   // getenv

struct LauncherEnv {
  std::string launcher;                 // "torchrun", "openmpi" or "slurm"
  impl::ProcessPlacement placement;     // store_dir left empty
};

// Usage error when no launcher's variables are set, naming the variables looked for; a
// malformed value is a Usage error naming the variable and what it holds.
LauncherEnv launcher_env(const EnvLookup& env);

}  // namespace muoncheck::launch
