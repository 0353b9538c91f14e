// Small scenarios built in code for the oracle tests: each builder returns a
// complete Scenario a test then changes only where it differs (llama.cpp style).
#pragma once
#include <string>
#include <vector>

#include "core/llama_preset.hpp"
#include "core/scenario.hpp"

namespace muoncheck::oracle::testing {

inline ParamSpec param(std::string name, std::vector<int64_t> shape) { return ParamSpec{std::move(name), std::move(shape), {}}; }

// Two Muon matrices (one tall, one wide), a norm vector and an embedding: both optimizers.
inline Scenario small_mixed(std::string name = "small-mixed") {
  Scenario s;
  s.name = std::move(name);
  s.source = "<generated>";
  s.seed = 42;
  s.steps = 3;
  s.model.params = {param("model.embed_tokens.weight", {16, 8}), param("layers.0.up.weight", {24, 16}),
                    param("layers.0.down.weight", {16, 24}), param("layers.0.norm.weight", {16})};
  s.engine.dp = 2;
  s.engine.gas = 2;
  s.engine.micro_batch = 1;
  return s;
}

inline Scenario llama(int layers = 2) {
  Scenario s;
  s.name = "llama-test";
  s.source = "<generated>";
  s.seed = 8438;
  s.steps = 2;
  LlamaPreset p;
  p.layers = layers;
  s.model.preset = p;
  s.model.params = expand_llama(p);
  s.engine.stage = 3;
  s.engine.dp = 2;
  s.engine.micro_batch = 2;
  return s;
}

}  // namespace muoncheck::oracle::testing
