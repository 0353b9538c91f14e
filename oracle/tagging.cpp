#include "oracle/tagging.hpp"

#include <algorithm>
#include <cctype>

#include "oracle/oracle.hpp"

namespace muoncheck::oracle {

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool use_muon(const ParamSpec& p) {
  const std::string n = lower(p.name);
  return p.shape.size() >= 2 && n.find("embed") == std::string::npos && n.find("lm_head") == std::string::npos;
}

std::string leaf_module(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(name.substr(start, dot - start));
  parts.push_back(name.substr(start));
  if (parts.size() >= 2 && (parts.back() == "weight" || parts.back() == "bias")) return parts[parts.size() - 2];
  return parts.back();
}

int head_count(const Scenario& s, const ParamSpec& p) {
  if (!s.optimizer.per_head || !use_muon(p)) return 0;
  if (p.num_heads) return *p.num_heads;
  if (!s.model.preset) return 0;
  const LlamaPreset& L = *s.model.preset;
  if (L.heads <= 0 || L.hidden % L.heads != 0) return 0;
  const int64_t head_dim = L.hidden / L.heads;
  const std::string leaf = leaf_module(p.name);
  int count = 0;
  if (leaf == "q_proj" || leaf == "query" || leaf == "wq") count = L.heads;
  else if (leaf == "k_proj" || leaf == "key" || leaf == "wk" || leaf == "v_proj" || leaf == "value" || leaf == "wv")
    count = L.kv_heads;
  if (count <= 0) return 0;
  return matrix_view(p.shape).rows == count * head_dim ? count : 0;
}

// `placeholders` is deliberately unused: tags come from the layer shapes in the
// scenario, which zero.Init does not change (DeepSpeed #8438 read the local shape).
std::vector<ParamTag> tag_params(const Scenario& s, bool /*placeholders*/) {
  std::vector<ParamTag> tags;
  for (const auto& p : s.model.params) tags.push_back(ParamTag{p.name, use_muon(p), head_count(s, p)});
  return tags;
}

}  // namespace muoncheck::oracle
