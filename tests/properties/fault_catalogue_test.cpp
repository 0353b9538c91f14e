// The fault catalogue (impl/faults/fault_catalogue.hpp) names things of the layers above impl by
// string; each string must name something real: the symptom invariants are invariant ids, the
// scenarios load from scenarios/, the generator focus parses and narrows the general generator.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "properties/generators/focus.hpp"
#include "properties/invariant_table.hpp"

namespace muoncheck {
namespace {

using generators::Focus;

// True when f removes at least one choice of the general generator.
bool narrows(const Focus& f) {
  const Focus general;
  return f.min_stage != general.min_stage || f.max_stage != general.max_stage || f.min_dp != general.min_dp ||
         f.min_gas != general.min_gas || f.zero_init || f.per_head || f.mixed_shapes || f.groups ||
         f.low_precision_comm || f.injection || f.loss_scaler || f.clip || f.small_buckets || f.scaler_growth ||
         f.schedule || f.checkpoint || f.ns_schedule;
}

TEST(FaultCatalogue, SymptomsAreInvariantIds) {
  for (const auto& f : impl::fault_catalogue()) {
    EXPECT_FALSE(f.symptoms.empty()) << f.id;
    for (const auto& s : f.symptoms) EXPECT_TRUE(is_invariant_id(s)) << f.id << ": \"" << s << "\"";
  }
}

TEST(FaultCatalogue, ScenariosAreShippedScenarioFiles) {
  for (const auto& f : impl::fault_catalogue()) {
    EXPECT_FALSE(f.scenarios.empty()) << f.id;
    for (const auto& name : f.scenarios) {
      const std::string path = "scenarios/" + name + ".json";
      ASSERT_TRUE(std::filesystem::exists(path)) << f.id << ": " << path;
      EXPECT_EQ(load_scenario(path).name, name) << f.id;
    }
  }
}

TEST(FaultCatalogue, FocusParsesAndNarrowsTheGenerator) {
  for (const auto& f : impl::fault_catalogue()) {
    Focus focus;
    ASSERT_NO_THROW(focus = generators::focus_for_fault(f.id)) << f.id << ": \"" << f.focus << "\"";
    EXPECT_EQ(focus.label, f.id);
    EXPECT_TRUE(narrows(focus)) << f.id << ": \"" << f.focus << "\" leaves the general generator";
    EXPECT_LE(focus.min_stage, focus.max_stage) << f.id;
  }
}

TEST(FaultCatalogue, FocusClausesSetTheirFields) {
  const Focus f = generators::focus_from_clauses("x", "stage>=1 stage<=2 dp>=2 gas>=3 per-head scaler-growth");
  EXPECT_EQ(f.label, "x");
  EXPECT_EQ(f.min_stage, 1);
  EXPECT_EQ(f.max_stage, 2);
  EXPECT_EQ(f.min_dp, 2);
  EXPECT_EQ(f.min_gas, 3);
  EXPECT_TRUE(f.per_head);
  EXPECT_TRUE(f.scaler_growth);
  EXPECT_FALSE(f.zero_init || f.mixed_shapes || f.groups || f.low_precision_comm || f.injection || f.loss_scaler ||
               f.clip || f.small_buckets || f.ns_schedule);
}

TEST(FaultCatalogue, AnUnknownFocusClauseIsAnInternalError) {
  for (const char* bad : {"stage>=x", "dp<=2", "per_head", "stage=>1", "gas>="}) {
    try {
      generators::focus_from_clauses("x", bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Internal) << bad;
    }
  }
}

}  // namespace
}  // namespace muoncheck
