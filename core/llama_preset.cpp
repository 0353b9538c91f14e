#include "core/llama_preset.hpp"

#include <string>

namespace muoncheck {

std::vector<ParamSpec> expand_llama(const LlamaPreset& p) {
  const int64_t hd = p.hidden / p.heads;
  std::vector<ParamSpec> out;
  auto add = [&](std::string name, std::vector<int64_t> shape) {
    out.push_back(ParamSpec{std::move(name), std::move(shape), std::nullopt});
  };
  add("model.embed_tokens.weight", {p.vocab, p.hidden});
  for (int i = 0; i < p.layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    add(l + "self_attn.q_proj.weight", {p.heads * hd, p.hidden});
    add(l + "self_attn.k_proj.weight", {p.kv_heads * hd, p.hidden});
    add(l + "self_attn.v_proj.weight", {p.kv_heads * hd, p.hidden});
    add(l + "self_attn.o_proj.weight", {p.hidden, p.hidden});
    add(l + "mlp.gate_proj.weight", {p.intermediate, p.hidden});
    add(l + "mlp.up_proj.weight", {p.intermediate, p.hidden});
    add(l + "mlp.down_proj.weight", {p.hidden, p.intermediate});
    add(l + "input_layernorm.weight", {p.hidden});
    add(l + "post_attention_layernorm.weight", {p.hidden});
  }
  add("model.norm.weight", {p.hidden});
  if (!p.tie_embeddings) add("lm_head.weight", {p.vocab, p.hidden});
  return out;
}

}  // namespace muoncheck
