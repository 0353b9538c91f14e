// The launcher's environment read as a rank's place: torchrun, Open MPI and Slurm, the
// address peers reach a rank at, and a clear Usage error for a missing or bad variable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "harness/launch/launcher_env.hpp"

namespace muoncheck::launch {
namespace {

using ::testing::HasSubstr;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string usage_error(const std::map<std::string, std::string>& vars) {
  try {
    launcher_env(env_of(vars));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    return e.what();
  }
  return "no error";
}

TEST(LauncherEnv, TorchrunOnOneNodeUsesLoopback) {
  const auto e = launcher_env(env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "4"},
                                      {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.placement.rank, 3);
  EXPECT_EQ(e.placement.world, 4);
  EXPECT_EQ(e.placement.local_rank, 3);
  EXPECT_EQ(e.placement.host, "127.0.0.1");
}

TEST(LauncherEnv, SeveralNodesUseThisHostsNameOrTheOneGiven) {
  const auto torch = launcher_env(env_of({{"RANK", "9"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "8"}}));
  EXPECT_EQ(torch.placement.local_rank, 1);
  EXPECT_NE(torch.placement.host, "127.0.0.1");
  EXPECT_FALSE(torch.placement.host.empty());
  const auto slurm = launcher_env(env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                                          {"SLURM_NNODES", "2"}, {"MUONCHECK_GLOO_HOST", "10.0.0.7"}}));
  EXPECT_EQ(slurm.launcher, "slurm");
  EXPECT_EQ(slurm.placement.rank, 5);
  EXPECT_EQ(slurm.placement.world, 8);
  EXPECT_EQ(slurm.placement.local_rank, 1);
  EXPECT_EQ(slurm.placement.host, "10.0.0.7");
}

TEST(LauncherEnv, OpenMpiAndSlurmOnOneNode) {
  const auto mpi = launcher_env(env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  EXPECT_EQ(mpi.launcher, "openmpi");
  EXPECT_EQ(mpi.placement.rank, 1);
  EXPECT_EQ(mpi.placement.host, "127.0.0.1");
  const auto slurm = launcher_env(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
  EXPECT_EQ(slurm.placement.local_rank, 0);
  EXPECT_EQ(slurm.placement.host, "127.0.0.1");
}

TEST(LauncherEnv, TorchrunWinsOverTheSlurmAllocationItRunsIn) {
  const auto e = launcher_env(env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.placement.rank, 2);
}

TEST(LauncherEnv, MissingOrBadVariablesAreUsageErrors) {
  EXPECT_THAT(usage_error({}), HasSubstr("no launcher environment"));
  EXPECT_THAT(usage_error({{"RANK", "0"}}), HasSubstr("no launcher environment"));
  EXPECT_THAT(usage_error({{"RANK", "x"}, {"WORLD_SIZE", "4"}}), HasSubstr("RANK=\"x\": expected an integer >= 0"));
  EXPECT_THAT(usage_error({{"RANK", "4"}, {"WORLD_SIZE", "4"}}), HasSubstr("RANK 4 is not below WORLD_SIZE 4"));
  EXPECT_THAT(usage_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), HasSubstr("WORLD_SIZE=\"0\": expected an integer >= 1"));
  EXPECT_THAT(usage_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "-1"}}), HasSubstr("LOCAL_RANK=\"-1\""));
}

}  // namespace
}  // namespace muoncheck::launch
