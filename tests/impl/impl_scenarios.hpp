// Small scenarios the impl tests share, built in code (the loader's defaults apply:
// fp32 everywhere unless a test says otherwise).
#pragma once
#include <string>

#include "core/llama_preset.hpp"
#include "core/scenario.hpp"

namespace muoncheck::impl::testing {

// Two 64×64 Muon layers and one AdamW vector: a matrix straddles ranks at dp ≥ 2.
inline Scenario two_layer(int stage, int dp, int gas = 1, int micro_batch = 1, int steps = 2) {
  Scenario s;
  s.name = "impl-two-layer";
  s.seed = 8600;
  s.steps = steps;
  s.model.params = {{"layers.0.weight", {64, 64}, std::nullopt},
                    {"norm.weight", {40}, std::nullopt},
                    {"layers.1.weight", {64, 64}, std::nullopt}};
  s.engine.stage = stage;
  s.engine.dp = dp;
  s.engine.gas = gas;
  s.engine.micro_batch = micro_batch;
  return s;
}

// A small llama preset (hidden 16, 2 layers): every param kind, several per bucket.
inline Scenario small_llama(int stage, int dp, int steps = 2) {
  Scenario s;
  s.name = "impl-small-llama";
  s.seed = 8438;
  s.steps = steps;
  LlamaPreset p;
  p.hidden = 16;
  p.intermediate = 40;
  p.heads = 4;
  p.kv_heads = 2;
  p.vocab = 32;
  s.model.preset = p;
  s.model.params = expand_llama(p);
  s.engine.stage = stage;
  s.engine.dp = dp;
  s.engine.micro_batch = 2;
  return s;
}

// fp32 all the way, NS included: stage/dp comparisons then measure only summation order.
inline Scenario& all_fp32(Scenario& s) {
  s.optimizer.ns_method = NsMethod::standard;
  s.optimizer.ns_dtype = DType::fp32;
  return s;
}

}  // namespace muoncheck::impl::testing
