// What grows with dp: one scenario's global batch re-split over dp = 1, 2, 4, ... ranks
// (threads, Gloo on loopback; same trajectory at every dp) and, per dp, the collectives
// a rank runs per step (count, logical bytes, mean wall time of one), the engine run's wall
// and CPU time, and the oracle's cost (float128 exact trajectory and the control ensemble,
// which never depend on ranks being threads or processes). One JSON object per dp on stdout.
// usage: bench_dp_scaling SCENARIO.json GLOBAL_BATCH DP... (each DP dividing GLOBAL_BATCH)
// Memory per rank is measured with the ranks as processes (bench/dp_scaling.sh).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/scenario_io.hpp"
#include "impl/run_impl.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/result_memo.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

template <class F>
std::pair<double, double> timed(F&& f) {   // wall, CPU seconds
  const auto t0 = Clock::now();
  const double c0 = cpu_seconds();
  f();
  return {std::chrono::duration<double>(Clock::now() - t0).count(), cpu_seconds() - c0};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace muoncheck;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCENARIO.json GLOBAL_BATCH DP...\n", argv[0]);
    return 2;
  }
  try {
    const Scenario base = load_scenario(argv[1]);
    const int global = std::atoi(argv[2]);
    for (int a = 3; a < argc; ++a) {
      const int dp = std::atoi(argv[a]);
      if (dp < 1 || global % dp != 0) throw Error(ErrorKind::Usage, "dp " + std::string(argv[a]) + " does not divide the global batch");
      Scenario s = base;
      s.engine.dp = dp;
      s.engine.gas = 1;
      s.engine.micro_batch = global / dp;
      impl::ImplResult r;
      constexpr int kRuns = 3;   // the fastest of three: the machine is shared
      double wall = 1e30, cpu = 1e30;
      for (int i = 0; i < kRuns; ++i) {
        const auto [w, c] = timed([&] { r = impl::run_impl(s); });
        if (w < wall) wall = w, cpu = c;
      }
      const int steps = static_cast<int>(r.trajectory.steps.size());
      long long count = 0, bytes = 0;
      double seconds = 0;
      const auto& log = r.collectives_by_rank.front();
      for (size_t i = 0; i < log.size(); ++i) {
        if (log[i].purpose == impl::Purpose::state_export) continue;   // checks only, not training
        ++count;
        bytes += log[i].bytes;
        seconds += r.collective_seconds_by_rank.front()[i];
      }
      oracle::ResultMemo memo;
      const auto [exact_wall, exact_cpu] = timed([&] { memo.exact(s, oracle::Precision::float128); });
      const auto [ens_wall, ens_cpu] = timed([&] { memo.ensemble(s, oracle::kDefaultControlMembers); });
      const nlohmann::json row = {
          {"dp", dp}, {"steps", steps}, {"flat_elements", r.flat_elements}, {"partition_elements", r.partition_elements},
          {"collectives_per_rank_step", static_cast<double>(count) / steps},
          {"bytes_per_rank_step", static_cast<double>(bytes) / steps},
          {"seconds_per_collective", count ? seconds / count : 0.0},
          {"impl_wall_s", wall}, {"impl_cpu_s", cpu},
          {"oracle_float128_wall_s", exact_wall}, {"oracle_float128_cpu_s", exact_cpu},
          {"control_ensemble_wall_s", ens_wall}, {"control_ensemble_cpu_s", ens_cpu}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_dp_scaling: %s\n", e.what());
    return 3;
  }
  return 0;
}
