// Other implementations on the harness side: the list of implementations and the generic record a
// plugin muoncheck does not list gets, every one started as the one generic worker; a plugin's space
// read from its hello line (malformed ones named) and drawn knob by knob; the torch repro script
// built from what the case's trace records.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/external/implementation.hpp"
#include "harness/external/plugin_space.hpp"
#include "harness/repro/torch_repro.hpp"
#include "harness/traces/trace_observation.hpp"
#include "impl/run_impl.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {
namespace {

TEST(Implementations, namesParseAndEveryOneStartsTheGenericWorker) {
  EXPECT_EQ(external::split_impl("torch"), std::make_pair(std::string("torch"), std::string()));
  EXPECT_EQ(external::split_impl("deepspeed=0.19.8"), std::make_pair(std::string("deepspeed"), std::string("0.19.8")));
  EXPECT_THROW(external::split_impl("torch="), Error);
  EXPECT_THROW(external::split_impl("=1.0"), Error);
  EXPECT_THROW(external::implementation_named("Not A Plugin"), Error);
  // a plugin muoncheck does not list gets the generic record: no site, no repro template
  const auto other = external::implementation_named("mymuon");
  EXPECT_EQ(other.name, "mymuon");
  EXPECT_EQ(other.repro, nullptr);
  EXPECT_EQ(external::default_site(other, "1.0"), "");
  EXPECT_NE(external::implementation_named("deepspeed").repro, nullptr);
  EXPECT_NE(external::implementation_names().find("torch"), std::string::npos);
  for (const auto& impl : {external::implementation_named("torch"), external::implementation_named("deepspeed"), other}) {
    external::ResidentWorkerOptions o;
    o.dp = 2;
    o.implementation = impl.name;
    const auto c = external::worker_command(impl, o);
    ASSERT_GE(c.argv.size(), 10u);
    EXPECT_EQ(c.argv[2], "torch.distributed.run");   // dp 2: under torchrun
    const auto m = std::find(c.argv.begin(), c.argv.end(), "adapters.worker");
    ASSERT_NE(m, c.argv.end());
    EXPECT_EQ(*(m + 1), "--impl");
    EXPECT_EQ(*(m + 2), impl.name);
  }
}

TEST(PluginSpace, aMalformedSpaceIsAnErrorNamingThePluginAndTheField) {
  const auto hello = [](nlohmann::json space) { return nlohmann::json{{"hello", "muoncheck-resident/2"}, {"space", space}}; };
  const auto says = [&](const nlohmann::json& h, const std::string& what) {
    try {
      external::space_from_hello(h, "mymuon");
      ADD_FAILURE() << "accepted " << h.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("plugin mymuon"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  says(nlohmann::json{{"hello", "muoncheck-resident/2"}}, "space");
  says(hello({{"knobs", 3}}), "space");
  says(hello({{"knobs", {{{"values", {1}}}}}}), "space.knobs[0].name");
  says(hello({{"knobs", {{{"name", "a"}, {"values", nlohmann::json::array()}}}}}), "space.knobs[0].values");
  says(hello({{"knobs", {{{"name", "a"}, {"values", {{{"x", 1}}}}}}}}), "JSON scalars");
  says(hello({{"knobs", {{{"name", "a"}, {"values", {1, 2}}, {"fields", {{{"engine.stage", 1}}}}}}}}), "space.knobs[0].fields");
  says(hello({{"knobs", {{{"name", "a"}, {"values", {1}}}, {{"name", "a"}, {"values", {2}}}}}}), "space.knobs[1].name");
  says(nlohmann::json{{"hello", "muoncheck-resident/2"}, {"error", "plugin 'mymuon': cannot be loaded: ImportError"}},
       "could not load it");
}

TEST(PluginSpace, configurationsAreDrawnFromTheKnobsAndShrinkTowardsTheDefaults) {
  const auto space = external::space_from_hello(
      {{"space", {{"knobs", {{{"name", "stage"}, {"values", {1, 0, 2, 3}}, {"fields", {{{"engine.stage", 1}}, {{"engine.stage", 0}},
                                                                                   {{"engine.stage", 2}}, {{"engine.stage", 3}}}}},
                             {{"name", "overlap"}, {"values", {false, true}}}}}}}},
      "x");
  EXPECT_EQ(external::default_config(space), (nlohmann::json{{"stage", 1}, {"overlap", false}}));
  const auto gen = external::config_gen(space);
  rc::Random random(3);
  std::set<std::string> seen;
  for (int i = 0; i < 80; ++i) {
    auto drawn = gen(random.split(), 100);
    seen.insert(drawn.value().dump());
    // greedy shrinking ends at the defaults: every knob shrinks towards its first value
    for (bool moved = true; moved;) {
      moved = false;
      for (auto s = drawn.shrinks().next(); s; s = drawn.shrinks().next()) {
        drawn = *s;
        moved = true;
        break;
      }
    }
    EXPECT_EQ(drawn.value(), external::default_config(space));
  }
  EXPECT_EQ(seen.size(), 8u);   // every combination drawn
}

// --knob NAME=V1,V2: the knob is drawn from those values only (their fields kept with them); an
// unknown knob or value is a usage error naming the spec.
TEST(PluginSpace, aHeldKnobIsDrawnOnlyFromItsGivenValues) {
  const auto space = external::space_from_hello(
      {{"space", {{"knobs", {{{"name", "stage"}, {"values", {1, 0, 2, 3}}, {"fields", {{{"engine.stage", 1}}, {{"engine.stage", 0}},
                                                                                   {{"engine.stage", 2}}, {{"engine.stage", 3}}}}},
                             {{"name", "precision"}, {"values", {"fp32", "bf16", "fp16_static"}}}}}}}},
      "x");
  const auto held = external::restricted(space, {"stage=3,2", "precision=fp16_static"});
  EXPECT_EQ(held.knobs[0].values, (std::vector<nlohmann::json>{3, 2}));
  EXPECT_EQ(held.knobs[0].fields[0], (nlohmann::json{{"engine.stage", 3}}));
  const auto gen = external::config_gen(held);
  rc::Random random(5);
  std::set<std::string> seen;
  for (int i = 0; i < 40; ++i) seen.insert(gen(random.split(), 100).value().dump());
  EXPECT_EQ(seen, (std::set<std::string>{R"({"precision":"fp16_static","stage":2})", R"({"precision":"fp16_static","stage":3})"}));
  for (const std::string bad : {"stages=1", "stage=7", "precision=fp8", "stage"}) {
    try {
      external::restricted(space, {bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("--knob " + bad), std::string::npos) << e.what();
    }
  }
}

TEST(TorchRepro, theScriptRebuildsTheOptimizersTheTraceRecords) {
  Scenario s = load_scenario("scenarios/torch/torch-thin-z3-dp1-fp32.json");
  Trace t = trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0);
  EXPECT_THROW(torch_repro(s, t, "# datagen\n", "x_repro.py", 3), Error);   // no adapter settings: refused
  t.impl_name = "torch.optim.Muon";
  t.impl_version = "0.0-test";
  t.impl_details["parallelism"] = "fsdp2";
  t.impl_details["reshard_after_forward"] = true;
  t.impl_details["mp_reduce_dtype"] = "fp32";
  t.impl_details["optimizers"] = nlohmann::json::array({{{"class", "Muon"}, {"defaults", {{"nesterov", true}}},
                                                         {"groups", nlohmann::json::array()}}});
  nlohmann::json lr = nlohmann::json::array();
  for (int step = 0; step < s.steps; ++step) lr.push_back(std::vector<double>(s.model.params.size(), 0.02));
  t.impl_details["lr_by_step"] = lr;
  const ReproFiles f = torch_repro(s, t, "# datagen\n", "x_repro.py", 3);
  EXPECT_NE(f.script.find("OPTIMIZERS = json.loads"), std::string::npos);
  EXPECT_NE(f.script.find("\"reshard_after_forward\":true"), std::string::npos);
  EXPECT_NE(f.script.find("LR = {\n    \"layers.0.weight\": [0.02"), std::string::npos) << f.script.substr(0, 3000);
  EXPECT_NE(f.script.find("EXPECTED = {"), std::string::npos);
  EXPECT_NE(f.report.find("- trajectory-conforms: **PASS**"), std::string::npos) << f.report;
}

}  // namespace
}  // namespace muoncheck
