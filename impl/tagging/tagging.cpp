#include "impl/tagging/tagging.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace muoncheck::impl {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

// Heads of a preset attention projection, 0 when the leaf is not one (or the rows disagree).
int preset_heads(const LlamaPreset& preset, const std::string& leaf, int64_t rows) {
  int heads = 0;
  if (is_one_of(leaf, {"q_proj", "query", "wq"})) heads = preset.heads;
  else if (is_one_of(leaf, {"k_proj", "key", "wk", "v_proj", "value", "wv"})) heads = preset.kv_heads;
  if (heads <= 0 || preset.heads <= 0) return 0;
  const int64_t head_dim = preset.hidden / preset.heads;
  return rows == heads * head_dim ? heads : 0;
}

}  // namespace

std::string leaf_module(const std::string& param_name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = param_name.find('.', start);
    parts.push_back(param_name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() >= 2 && is_one_of(parts.back(), {"weight", "bias"})) return parts[parts.size() - 2];
  return parts.back();
}

ParamTag tag_param(const Scenario& s, const ParamHandle& p, const FaultSet& faults) {
  // The zero.Init bug (#8438) read the tensor in hand; the layer shape lives in ds_shape.
  const std::vector<int64_t>& shape =
      faults.has(Fault::tag_placeholder_shape) ? p.local_shape : p.ds_shape;  // CHECK_EXCL_BR_LINE: fault path
  ParamTag tag;
  tag.name = p.name;
  const std::string lname = lower(p.name);
  tag.use_muon = shape.size() >= 2 && lname.find("embed") == std::string::npos &&
                 lname.find("lm_head") == std::string::npos;
  if (!tag.use_muon || !s.optimizer.per_head) return tag;

  const int64_t rows = shape[0];
  if (p.explicit_heads) {
    if (*p.explicit_heads <= 0 || rows % *p.explicit_heads != 0)
      throw Error(ErrorKind::Unsupported, "per-head param " + p.name + ": " + std::to_string(rows) +
                                              " rows do not split into " +
                                              std::to_string(*p.explicit_heads) + " heads");
    tag.num_heads = *p.explicit_heads;
  } else if (s.model.preset) {
    tag.num_heads = preset_heads(*s.model.preset, leaf_module(p.name), rows);
  }
  return tag;
}

std::vector<ParamTag> tag_params(const Scenario& s, const std::vector<ParamHandle>& params,
                                 const FaultSet& faults) {
  std::vector<ParamTag> tags;
  tags.reserve(params.size());
  for (const auto& p : params) tags.push_back(tag_param(s, p, faults));
  return tags;
}

}  // namespace muoncheck::impl
