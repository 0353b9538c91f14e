// Each catalogued fault is a real deviation on its own path: switched on in a scenario
// that reaches that path, it changes what the engine does; unknown ids are usage errors.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "impl/faults/faults.hpp"
#include "impl/run_impl.hpp"
#include "impl_scenarios.hpp"

namespace muoncheck::impl {
namespace {

using testing::small_llama;
using testing::two_layer;

size_t ns_calls(const ImplResult& r) {
  size_t n = 0;
  for (const auto& st : r.trajectory.steps) n += st.ns_calls.size();
  return n;
}

bool same_weights(const ImplResult& a, const ImplResult& b) {
  for (size_t t = 0; t < a.trajectory.steps.size(); ++t)
    for (size_t p = 0; p < a.trajectory.steps[t].params.size(); ++p)
      if (a.trajectory.steps[t].params[p].weight != b.trajectory.steps[t].params[p].weight) return false;
  return true;
}

TEST(Faults, CatalogueListsEachFaultOnceInEnumOrderAndRejectsUnknownIds) {
  const auto& catalogue = fault_catalogue();
  ASSERT_FALSE(catalogue.empty());
  EXPECT_LE(catalogue.size(), 8 * sizeof(unsigned)) << "FaultSet keeps one bit per fault";
  for (size_t i = 0; i < catalogue.size(); ++i) {
    const auto& f = catalogue[i];
    EXPECT_EQ(static_cast<size_t>(f.fault), i) << f.id;   // dense: FaultSet's bits
    EXPECT_EQ(parse_fault(f.id), f.fault);
    EXPECT_EQ(fault_id(f.fault), f.id);
    EXPECT_EQ(find_fault(f.id), &f);
    EXPECT_TRUE(f.implemented) << f.id;
    EXPECT_FALSE(f.bug.empty() || f.effect.empty() || f.why.empty()) << f.id;
  }
  EXPECT_EQ(fault_ids().size(), catalogue.size());
  try {
    FaultSet::from_ids({"no-such-fault"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

TEST(Faults, Zero3MuonPerMicrobatchRunsNsOnEveryMicroStep) {
  Scenario s = two_layer(3, 2, 4, 1, 2);
  s.model.params.erase(s.model.params.begin() + 1);    // two Muon params only
  EXPECT_EQ(ns_calls(run_impl(s)), 4u);                // 2 params × 2 steps
  const ImplResult bad = run_impl(s, {{"zero3-muon-per-microbatch"}});
  EXPECT_EQ(ns_calls(bad), 16u);                       // × gas 4
  EXPECT_FALSE(same_weights(bad, run_impl(s)));
}

TEST(Faults, TagPlaceholderShapeTagsNothingUnderZeroInit) {
  Scenario s = small_llama(3, 2, 1);
  s.engine.zero_init = true;
  const ImplResult bad = run_impl(s, {{"tag-placeholder-shape"}});
  for (const auto& t : bad.trajectory.tags) EXPECT_FALSE(t.use_muon) << t.name;
  EXPECT_EQ(ns_calls(bad), 0u);
  s.engine.zero_init = false;                          // materialized params hide the bug
  const ImplResult hidden = run_impl(s, {{"tag-placeholder-shape"}});
  EXPECT_EQ(ns_calls(hidden), 14u);
}

// A scenario that reaches each remaining fault's path; the fault must change the run.
struct Case {
  std::string fault;
  Scenario scenario;
};

std::vector<Case> reaching_cases() {
  std::vector<Case> c;
  {
    Scenario s = small_llama(1, 2, 2);
    s.engine.comm_dtype = DType::bf16;
    c.push_back({"gather-in-partition-dtype", s});
  }
  {
    Scenario s = small_llama(2, 2, 3);
    s.loss_scaler.type = ScalerType::dynamic;
    s.overflow.push_back({1, 0, 0, "model.layers.0.self_attn.q_proj.weight", 3, OverflowValue::inf});
    c.push_back({"momentum-on-overflow", s});
  }
  {
    Scenario s = small_llama(0, 2, 2);
    c.push_back({"stage0-no-newton-schulz", s});
  }
  {
    Scenario s = small_llama(1, 2, 2);
    s.optimizer.clip.max_norm = 0.05;
    c.push_back({"clip-muon-update", s});
  }
  {
    Scenario s = small_llama(2, 2, 2);
    s.loss_scaler.type = ScalerType::static_scale;
    s.loss_scaler.initial_scale_power = 8;
    c.push_back({"muon-on-scaled-grads", s});
  }
  {
    Scenario s = small_llama(2, 2, 2);
    s.engine.reduce_bucket_size = 500;
    c.push_back({"skip-muon-large-param", s});
  }
  {
    Scenario s = small_llama(1, 2, 2);
    s.optimizer.groups.push_back({"mlp", 0.5, 0.1});
    c.push_back({"drop-param-groups", s});
  }
  {
    Scenario s = two_layer(1, 4, 2, 1, 2);            // layers.0 straddles ranks 0 and 1
    c.push_back({"straddle-partial-reduce", s});
  }
  {
    Scenario s = small_llama(2, 2, 2);
    s.optimizer.per_head = true;
    c.push_back({"per-head-dropped-call-site", s});
  }
  {
    Scenario s = small_llama(3, 2, 2);
    s.optimizer.per_head = true;
    c.push_back({"per-head-stale-binding", s});
  }
  {
    Scenario s = small_llama(3, 2, 2);
    c.push_back({"mixed-shape-window-gather", s});
  }
  return c;
}

TEST(Faults, EveryFaultChangesARunThatReachesItsPath) {
  for (const Case& c : reaching_cases()) {
    SCOPED_TRACE(c.fault);
    const ImplResult good = run_impl(c.scenario);
    const ImplResult bad = run_impl(c.scenario, {{c.fault}});
    EXPECT_TRUE(!same_weights(good, bad) || ns_calls(good) != ns_calls(bad));
  }
}

// The scaler fault changes no weight until a later overflow; it changes the counter at
// the growth itself: hysteresis 2, one overflow spends a unit, the growth that follows
// must restore it.
TEST(Faults, ScalerHysteresisKeptLeavesTheCounterSpentAfterAGrowth) {
  Scenario s = two_layer(1, 2, 1, 1, 4);
  s.loss_scaler.type = ScalerType::dynamic;
  s.loss_scaler.initial_scale_power = 8;
  s.loss_scaler.scale_window = 2;
  s.loss_scaler.hysteresis = 2;
  s.overflow.push_back({0, 0, 1, "layers.1.weight", 4, OverflowValue::inf});
  const ImplResult good = run_impl(s);
  const ImplResult bad = run_impl(s, {{"scaler-hysteresis-kept"}});
  ASSERT_TRUE(good.trajectory.steps[0].skipped);
  EXPECT_EQ(good.trajectory.steps[2].scaler_after.scale, 512.0);       // grew after steps 1 and 2
  EXPECT_EQ(good.trajectory.steps[2].scaler_after.hysteresis, 2);
  EXPECT_EQ(bad.trajectory.steps[2].scaler_after.scale, 512.0);
  EXPECT_EQ(bad.trajectory.steps[2].scaler_after.hysteresis, 1);
  EXPECT_EQ(good.trajectory.steps[1].scaler_after.hysteresis, bad.trajectory.steps[1].scaler_after.hysteresis);
}

TEST(Faults, AFaultLeavesRunsOffItsPathUnchanged) {
  Scenario s = small_llama(1, 2, 2);                   // stage 1, no groups, no scaler, no per-head
  const ImplResult good = run_impl(s);
  for (const char* f : {"stage0-no-newton-schulz", "drop-param-groups", "per-head-dropped-call-site",
                        "zero3-muon-per-microbatch", "scaler-hysteresis-kept"}) {
    EXPECT_TRUE(same_weights(good, run_impl(s, {{f}}))) << f;
  }
}

// The enum name a branch uses for a catalogue id: "zero3-muon-per-microbatch" → "Fault::zero3_muon_per_microbatch".
std::string branch_name(std::string_view id) {
  std::string n = "Fault::" + std::string(id);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each row's code_path names exactly the impl/ files whose branches ask for that fault, and every
// fault a branch asks for has a row (tests run from the source root).
TEST(Faults, CodePathListsExactlyTheFilesWhoseBranchesConsultTheFault) {
  std::map<std::string, std::set<std::string>> consulted;   // "Fault::x" → files
  for (const auto& e : std::filesystem::recursive_directory_iterator("impl")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh")) continue;
    if (e.path().parent_path() == "impl/faults") continue;   // the catalogue itself
    const std::string text = file_text(e.path());
    for (size_t at = text.find("Fault::"); at != std::string::npos; at = text.find("Fault::", at + 1)) {
      size_t end = at + 7;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      consulted[text.substr(at, end - at)].insert(e.path().generic_string());
    }
  }
  ASSERT_FALSE(consulted.empty()) << "no impl/ sources found from " << std::filesystem::current_path();
  std::set<std::string> catalogued;
  for (const auto& f : fault_catalogue()) {
    const std::string name = branch_name(f.id);
    catalogued.insert(name);
    const std::set<std::string> listed(f.code_path.begin(), f.code_path.end());
    EXPECT_EQ(listed, consulted[name]) << f.id;
  }
  for (const auto& [name, files] : consulted)
    EXPECT_TRUE(catalogued.count(name)) << name << " is consulted in " << *files.begin() << " but has no catalogue row";
}

}  // namespace
}  // namespace muoncheck::impl
