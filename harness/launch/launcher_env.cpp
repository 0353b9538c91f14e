#include "harness/launch/launcher_env.hpp"

#include <unistd.h>

#include <cstdlib>

#include "core/error.hpp"

namespace muoncheck::launch {
namespace {

struct Names {
  const char* launcher;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;   // ranks on this node (Slurm: the node count instead)
};

constexpr Names kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NNODES"},
};

int integer(const EnvLookup& env, const char* name, std::optional<int> fallback, int min) {
  const auto text = env(name);
  if (!text) {
    if (fallback) return *fallback;
    throw Error(ErrorKind::Usage, std::string("ranks as processes: ") + name + " is not set");
  }
  char* end = nullptr;
  const long v = std::strtol(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0' || v < min || v > 1 << 20)
    throw Error(ErrorKind::Usage, std::string("ranks as processes: ") + name + "=\"" + *text +
                                      "\": expected an integer >= " + std::to_string(min));
  return static_cast<int>(v);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) throw Error(ErrorKind::Infrastructure, "ranks as processes: gethostname failed");
  return name;
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

LauncherEnv launcher_env(const EnvLookup& env) {
  for (const auto& n : kLaunchers) {
    if (!env(n.rank) || !env(n.world)) continue;
    LauncherEnv out;
    out.launcher = n.launcher;
    auto& p = out.placement;
    p.world = integer(env, n.world, std::nullopt, 1);
    p.rank = integer(env, n.rank, std::nullopt, 0);
    if (p.rank >= p.world)
      throw Error(ErrorKind::Usage, std::string("ranks as processes: ") + n.rank + " " + std::to_string(p.rank) +
                                        " is not below " + n.world + " " + std::to_string(p.world));
    p.local_rank = integer(env, n.local_rank, 0, 0);
    const bool slurm = out.launcher == "slurm";
    const int local = integer(env, n.local_world, slurm ? 1 : p.world, 1);
    const bool one_node = slurm ? local == 1 : local == p.world;
    if (const auto host = env("MUONCHECK_GLOO_HOST")) p.host = *host;
    else p.host = one_node ? "127.0.0.1" : host_name();
    return out;
  }
  throw Error(ErrorKind::Usage,
              "ranks as processes: no launcher environment (torchrun's RANK and WORLD_SIZE, Open MPI's "
              "OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, or Slurm's SLURM_PROCID and SLURM_NTASKS)");
}

}  // namespace muoncheck::launch
