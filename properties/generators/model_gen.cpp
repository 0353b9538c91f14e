#include "properties/generators/model_gen.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/llama_preset.hpp"
#include "properties/generators/choice.hpp"
#include "properties/generators/shape_gen.hpp"

namespace muoncheck::generators {

namespace {

enum class Kind { matrix, vector, conv };

struct Role {
  const char* leaf;   // appended to "l<i>."
  Kind kind;
  int heads_percent;  // chance of an explicit num_heads (when the param is Muon)
};

// First entry is what a role shrinks to: a plain Muon matrix.
const std::vector<std::pair<int, Role>>& roles() {
  static const std::vector<std::pair<int, Role>> r = {
      {15, {"mlp.up_proj.weight", Kind::matrix, 10}},
      {10, {"mlp.down_proj.weight", Kind::matrix, 10}},
      {10, {"self_attn.q_proj.weight", Kind::matrix, 50}},
      {8, {"self_attn.k_proj.weight", Kind::matrix, 50}},
      {8, {"self_attn.v_proj.weight", Kind::matrix, 50}},
      {6, {"self_attn.o_proj.weight", Kind::matrix, 10}},
      {6, {"embed_tokens.weight", Kind::matrix, 0}},      // AdamW by name
      {3, {"wte_Embed.weight", Kind::matrix, 0}},         // the rule ignores case
      {5, {"lm_head.weight", Kind::matrix, 0}},
      {12, {"input_layernorm.weight", Kind::vector, 0}},
      {5, {"mlp.up_proj.bias", Kind::vector, 0}},
      {10, {"conv.weight", Kind::conv, 10}},
  };
  return r;
}

rc::Gen<Shape> shape_of(Kind k) {
  return k == Kind::matrix ? matrix_shape() : k == Kind::vector ? vector_shape() : conv_shape();
}

std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 2; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// Picks inside gen::exec: one ordinary param at position i.
ParamSpec pick_param(int i, const ParamSpec* previous) {
  std::vector<std::pair<int, Role>> r = roles();
  const Role role = *weighted<Role>(r);
  ParamSpec p;
  p.name = "l" + std::to_string(i) + "." + role.leaf;
  // One in five repeats its neighbour's shape: windows of equal shapes exist too.
  const bool repeat = previous && previous->shape.size() == (role.kind == Kind::vector ? 1u : 2u) &&
                      role.kind != Kind::conv && *chance(20);
  p.shape = repeat ? previous->shape : *shape_of(role.kind);
  if (is_muon_param(p) && *chance(role.heads_percent)) {
    const auto d = divisors_above_one(matrix_view(p.shape).rows);
    if (!d.empty()) p.num_heads = static_cast<int>(*rc::gen::elementOf(d));
  }
  return p;
}

// Two Muon params side by side with different sizes: q with H heads beside k with
// K ≠ H heads of the same head_dim (per-head focus), or two matrices (mixed shapes).
std::vector<ParamSpec> pick_forced_pair(const Focus& f) {
  if (f.per_head) {
    const int64_t hd = *range(1, 6), cols = *range(2, 16);
    const int H = *int_range(2, 4);
    const int K = *rc::gen::suchThat(int_range(1, 4), [H](int k) { return k != H; });
    return {ParamSpec{"l0.self_attn.q_proj.weight", {H * hd, cols}, H},
            ParamSpec{"l1.self_attn.k_proj.weight", {K * hd, cols}, K}};
  }
  ParamSpec a{"l0.mlp.up_proj.weight", *matrix_shape(), std::nullopt};
  ParamSpec b{"l1.mlp.down_proj.weight", *matrix_shape(), std::nullopt};
  if (element_count(a.shape) == element_count(b.shape)) b.shape[0] += 1;
  return {a, b};
}

}  // namespace

bool is_muon_param(const ParamSpec& p) {
  std::string n = p.name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return p.shape.size() >= 2 && n.find("embed") == std::string::npos && n.find("lm_head") == std::string::npos;
}

rc::Gen<ModelSpec> custom_model(const Focus& f) {
  return rc::gen::exec([f] {
    ModelSpec m;
    const bool forced = f.per_head || f.mixed_shapes;
    if (forced) m.params = pick_forced_pair(f);
    const int n = *int_range(forced ? 2 : 1, 5);
    while (static_cast<int>(m.params.size()) < n) {
      const int i = static_cast<int>(m.params.size());
      m.params.push_back(pick_param(i, i > 0 ? &m.params.back() : nullptr));
    }
    return m;
  });
}

rc::Gen<ModelSpec> llama_model(const Focus& f) {
  return rc::gen::exec([f] {
    LlamaPreset p;
    p.layers = 1;   // already 11–12 params; a second layer adds cost, not new structure
    const int head_dim = *weighted<int>({{40, 2}, {30, 1}, {20, 4}, {10, 3}});
    p.heads = f.per_head ? *weighted<int>({{40, 2}, {30, 4}, {20, 3}, {10, 6}})
                         : *weighted<int>({{30, 1}, {30, 2}, {25, 4}, {15, 3}});
    p.hidden = p.heads * head_dim;
    std::vector<int> kv;
    for (int k = 1; k <= p.heads; ++k)
      if (p.heads % k == 0) kv.push_back(k);
    p.kv_heads = *rc::gen::elementOf(kv);
    p.intermediate = *int_range(2, 24);
    if (f.mixed_shapes && p.intermediate == p.hidden) p.intermediate += 1;   // MLP ≠ attention size
    p.vocab = *int_range(2, 24);
    p.tie_embeddings = *chance(30);
    ModelSpec m;
    m.preset = p;
    m.params = expand_llama(p);
    return m;
  });
}

rc::Gen<ModelSpec> model(const Focus& f) {
  const int llama_weight = f.per_head ? 50 : f.mixed_shapes ? 0 : 20;
  return weighted_gen<ModelSpec>({{100 - llama_weight, custom_model(f)}, {llama_weight, llama_model(f)}});
}

}  // namespace muoncheck::generators
