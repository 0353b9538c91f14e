// torch.optim.Muon as a second implementation on the harness side: the region the sweep draws in
// holds only what the torch adapter can run (and keeps the rest as drawn), the repro script is
// built from what the case's trace records, and --impl names parse for both implementations.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/external/deepspeed_worker.hpp"
#include "harness/external/torch_region.hpp"
#include "harness/external/torch_worker.hpp"
#include "harness/repro/torch_repro.hpp"
#include "harness/traces/trace_observation.hpp"
#include "impl/run_impl.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {
namespace {

TEST(TorchRegion, everyDrawnCaseIsOneTheAdapterCanRun) {
  const auto gen = external::torch_scenario({}, 2);
  rc::Random random(7);
  int fsdp2 = 0, ddp = 0;
  for (int i = 0; i < 60; ++i) {
    const Scenario s = gen(random.split(), 100).value();
    generators::check_round_trip(s);
    const auto& e = s.engine;
    const auto& o = s.optimizer;
    EXPECT_NE(e.stage, 1);
    EXPECT_EQ(e.dp, 2);
    EXPECT_FALSE(e.zero_init || e.compile || s.checkpoint || o.per_head);
    EXPECT_EQ(e.offload_optimizer, OffloadDevice::none);
    EXPECT_NE(e.param_dtype, DType::fp16);
    EXPECT_EQ(s.loss_scaler.type, ScalerType::none);
    EXPECT_TRUE(s.overflow.empty());
    EXPECT_EQ(o.momentum_form, MomentumForm::ema);
    EXPECT_EQ(o.ns_method, NsMethod::standard);
    EXPECT_EQ(o.ns_dtype, DType::bf16);
    EXPECT_EQ(o.clip.mode, ClipMode::raw_grad);
    if (e.stage == 0) {
      ++ddp;
      EXPECT_EQ(e.comm_dtype, e.param_dtype);
      EXPECT_EQ(e.grad_accum_dtype, e.param_dtype);
    } else {
      ++fsdp2;
      EXPECT_TRUE(e.comm_dtype == DType::fp32 || e.comm_dtype == e.param_dtype);
      EXPECT_EQ(e.grad_accum_dtype, e.comm_dtype);   // FSDP2 accumulates in its reduce_dtype
    }
  }
  EXPECT_GT(ddp, 0);
  EXPECT_GT(fsdp2, 0);
}

TEST(TorchWorker, implNamesParse) {
  EXPECT_EQ(external::torch_version_from_impl("torch"), "");
  EXPECT_EQ(external::torch_version_from_impl("torch=2.11.0"), "2.11.0");
  EXPECT_THROW(external::torch_version_from_impl("torch="), Error);
  EXPECT_THROW(external::torch_version_from_impl("deepspeed=0.19.8"), Error);
  EXPECT_EQ(external::deepspeed_version_from_impl("deepspeed=0.19.8"), "0.19.8");
  external::ResidentWorkerOptions o;
  o.dp = 2;
  const auto c = external::torch_worker_command(o);
  ASSERT_GE(c.argv.size(), 4u);
  EXPECT_EQ(c.argv[2], "torch.distributed.run");   // dp 2: under torchrun
  EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "adapters.torch.resident_worker"), c.argv.end());
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
