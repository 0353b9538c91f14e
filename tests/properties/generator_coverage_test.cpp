// The general generator reaches every edge case the sweep is meant to hunt in:
// 400 scenarios from a fixed seed, counted by feature; every feature must appear.
// (Weights are tuned for a realistic mix; this test only says nothing is unreachable.)
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <map>
#include <set>
#include <string>

#include "properties/generators/model_gen.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {
namespace {

std::set<std::string> features(const Scenario& s) {
  std::set<std::string> f;
  const auto& e = s.engine;
  const auto& o = s.optimizer;
  f.insert("stage " + std::to_string(e.stage));
  f.insert("dp " + std::to_string(e.dp));
  f.insert("gas " + std::to_string(e.gas));
  if (e.micro_batch > 1) f.insert("micro_batch > 1");
  if (e.zero_init) f.insert("zero_init");
  f.insert(std::string("param ") + std::string(dtype_name(e.param_dtype)));
  f.insert(std::string("accum ") + std::string(dtype_name(e.grad_accum_dtype)));
  f.insert(std::string("comm ") + std::string(dtype_name(e.comm_dtype)));
  const int64_t total = total_elements(s.model);
  if (e.reduce_bucket_size == 1) f.insert("1-element bucket");
  if (e.reduce_bucket_size > total) f.insert("bucket larger than the model");
  int64_t largest = 0;
  std::vector<int64_t> muon_sizes;
  std::set<int> heads;
  for (const auto& p : s.model.params) {
    const auto v = matrix_view(p.shape);
    largest = std::max(largest, element_count(p.shape));
    if (p.shape.size() == 1) f.insert("rank-1");
    if (p.shape.size() == 4) f.insert("rank-4");
    if (p.shape.size() == 2 && v.rows == 1 && v.cols > 1) f.insert("1xN");
    if (p.shape.size() == 2 && v.cols == 1 && v.rows > 1) f.insert("Nx1");
    if (p.shape.size() == 2 && v.rows == 1 && v.cols == 1) f.insert("1x1");
    if (p.shape.size() == 2 && v.rows == 2 && v.cols == 2) f.insert("2x2");
    if (v.rows >= 4 * v.cols) f.insert("tall");
    if (v.cols >= 4 * v.rows) f.insert("wide");
    if (e.dp > 1 && p.shape.size() >= 2 && v.rows % e.dp != 0) f.insert("rows not divisible by dp");
    if (generators::is_muon_param(p)) muon_sizes.push_back(element_count(p.shape));
    else if (p.shape.size() >= 2) f.insert("embed/lm_head matrix");
    if (p.num_heads) heads.insert(*p.num_heads);
  }
  if (e.reduce_bucket_size < largest) f.insert("bucket smaller than a param");
  if (std::set<int64_t>(muon_sizes.begin(), muon_sizes.end()).size() > 1) f.insert("mixed Muon shapes");
  if (heads.size() > 1) f.insert("different explicit head counts");
  if (s.model.preset) f.insert("llama preset");
  if (o.per_head) f.insert("per_head");
  f.insert(o.ns_method == NsMethod::gram ? "gram" : "standard");
  f.insert("scale " + std::to_string(static_cast<int>(o.scale_rule)));
  f.insert(o.momentum_form == MomentumForm::ema ? "ema" : "sum");
  if (!o.nesterov) f.insert("no nesterov");
  if (!o.ns_schedule.empty()) f.insert("ns schedule " + o.ns_schedule);
  if (o.clip.max_norm > 0) f.insert(o.clip.mode == ClipMode::raw_grad ? "clip raw_grad" : "clip update");
  if (!o.groups.empty()) f.insert("groups");
  if (o.weight_decay > 0) f.insert("weight decay");
  f.insert("scaler " + std::to_string(static_cast<int>(s.loss_scaler.type)));
  for (const char* pattern : {"none", "one-rank-one-micro-step", "every-micro-step-of-a-step", "consecutive-steps", "natural-fp16"})
    if (s.description.find(std::string("overflow ") + pattern + ")") != std::string::npos) f.insert(std::string("overflow ") + pattern);
  return f;
}

TEST(Generators, reachEveryEdgeCaseTheSweepHuntsFor) {
  std::map<std::string, int> seen;
  rc::Random random(20260601);
  const auto gen = generators::scenario();
  for (int i = 0; i < 400; ++i)
    for (const auto& f : features(gen(random.split(), 100).value())) ++seen[f];
  const std::vector<std::string> wanted = {
      "stage 0", "stage 1", "stage 2", "stage 3", "dp 1", "dp 2", "dp 3", "dp 4", "dp 8", "gas 1", "gas 2", "gas 8",
      "micro_batch > 1", "zero_init", "param fp32", "param bf16", "param fp16", "accum fp32", "accum bf16",
      "accum fp16", "comm fp32", "comm bf16", "comm fp16", "1-element bucket", "bucket larger than the model",
      "bucket smaller than a param", "rank-1", "rank-4", "1xN", "Nx1", "1x1", "2x2", "tall", "wide",
      "rows not divisible by dp", "embed/lm_head matrix", "mixed Muon shapes", "different explicit head counts",
      "llama preset", "per_head", "gram", "standard", "scale 0", "scale 1", "scale 2", "ema", "sum", "no nesterov",
      "clip raw_grad", "clip update", "groups", "weight decay", "scaler 0", "scaler 1", "scaler 2",
      "overflow none", "overflow one-rank-one-micro-step", "overflow every-micro-step-of-a-step",
      "overflow consecutive-steps", "overflow natural-fp16", "ns schedule quintic", "ns schedule polar_express",
      "ns schedule polar_express_5"};
  for (const auto& w : wanted) EXPECT_GT(seen[w], 0) << "the generator never produced: " << w;
}

}  // namespace
}  // namespace muoncheck
