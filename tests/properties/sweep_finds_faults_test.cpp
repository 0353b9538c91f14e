// The sweep has teeth: for every fault of the catalogue, a bounded sweep with that
// fault switched on (the general generator, narrowed by the fault's focus) finds a
// counterexample, shrinks it, saves it, and the saved file reproduces the failure —
// while the correct implementation passes the same invariant on the same file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/scenario_io.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "impl/faults/faults.hpp"

namespace muoncheck {
namespace {

class SweepFindsFault : public ::testing::TestWithParam<std::string> {};

Status verdict_on(const Scenario& s, const std::vector<std::string>& faults, const std::string& invariant) {
  JudgeOptions o;
  o.faults = faults;
  o.only = {invariant};
  const auto r = judge_scenario(s, o);
  return r.verdicts.empty() ? Status::skipped : r.verdicts.front().status;
}

TEST_P(SweepFindsFault, withinABoundedSweepAndTheSavedCaseReproducesIt) {
  const std::string fault = GetParam();
  SweepOptions o;
  o.cases = 12;
  o.seed = 1;
  o.faults = {fault};
  o.focus = generators::focus_for_fault(fault);
  o.cases_dir = (std::filesystem::path(::testing::TempDir()) / "muoncheck-sweep-cases").string();
  o.max_shrink_judgements = 20;    // enough to show shrinking; the CLI shrinks further
  o.max_shrink_seconds = 20;
  const SweepResult r = run_sweep(o);
  ASSERT_TRUE(r.failure) << "fault " << fault << " survived " << r.cases_run << " cases";
  const auto& c = *r.failure;
  ASSERT_FALSE(c.invariants.empty());
  const auto size = generators::size_of(c.shrunk);
  EXPECT_LE(size.elements, generators::size_of(c.original).elements);
  std::printf("[ fault    ] %s found after %d case(s) by %s; shrunk to %s\n", fault.c_str(), c.found_after,
              c.invariants.front().c_str(), generators::describe(size).c_str());

  // The repro line's file, loaded from disk, fails the same invariant with the fault…
  const Scenario saved = load_scenario(c.path);
  EXPECT_EQ(verdict_on(saved, {fault}, c.invariants.front()), Status::fail) << c.repro;
  // …and is not noise: the correct implementation passes it (or it does not apply).
  EXPECT_NE(verdict_on(saved, {}, c.invariants.front()), Status::fail) << "without --fault: " << c.repro;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, SweepFindsFault, ::testing::ValuesIn(impl::fault_ids()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace muoncheck
