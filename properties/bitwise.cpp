#include "properties/bitwise.hpp"

#include <bit>
#include <cstdint>

namespace muoncheck {

namespace {

bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

std::string diff(const std::vector<double>& a, const std::vector<double>& b, const std::string& where) {
  if (a.size() != b.size()) return where + " size " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return where + "[" + std::to_string(i) + "]";
  return "";
}

std::string diff(const std::vector<ParamState>& a, const std::vector<ParamState>& b, const std::string& where) {
  if (a.size() != b.size()) return where + " param count";
  for (size_t p = 0; p < a.size(); ++p) {
    const std::string at = where + " p" + std::to_string(p) + ".";
    for (auto d : {diff(a[p].weight, b[p].weight, at + "weight"), diff(a[p].grad, b[p].grad, at + "grad"),
                   diff(a[p].momentum, b[p].momentum, at + "momentum"), diff(a[p].adam_m, b[p].adam_m, at + "adam_m"),
                   diff(a[p].adam_v, b[p].adam_v, at + "adam_v")})
      if (!d.empty()) return d;
  }
  return "";
}

std::string diff(const StepRecord& a, const StepRecord& b) {
  const std::string at = "step " + std::to_string(a.step);
  if (a.step != b.step || a.skipped != b.skipped || a.good_steps_after != b.good_steps_after) return at + " record";
  if (!same(a.loss, b.loss)) return at + " loss";
  if (!same(a.scale, b.scale) || !same(a.scaler_after.scale, b.scaler_after.scale) ||
      a.scaler_after.hysteresis != b.scaler_after.hysteresis || a.scaler_after.good_streak != b.scaler_after.good_streak)
    return at + " loss scaler";
  if (!same(a.grad_norm, b.grad_norm)) return at + " grad_norm";
  if (a.ns_calls.size() != b.ns_calls.size()) return at + " NS call count";
  for (size_t i = 0; i < a.ns_calls.size(); ++i) {
    const NsCall &x = a.ns_calls[i], &y = b.ns_calls[i];
    if (x.step != y.step || x.param != y.param || x.rank != y.rank || x.heads != y.heads) return at + " NS call " + std::to_string(i);
  }
  return diff(a.params, b.params, at);
}

}  // namespace

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) { return diff(a, b, "").empty(); }

std::string first_bitwise_difference(const Trajectory& a, const Trajectory& b) {
  if (a.producer != b.producer) return "producer";
  if (a.tags.size() != b.tags.size()) return "tag count";
  for (size_t p = 0; p < a.tags.size(); ++p)
    if (a.tags[p].name != b.tags[p].name || a.tags[p].use_muon != b.tags[p].use_muon ||
        a.tags[p].num_heads != b.tags[p].num_heads)
      return "tag of p" + std::to_string(p);
  if (auto d = diff(a.initial, b.initial, "initial"); !d.empty()) return d;
  if (a.steps.size() != b.steps.size()) return "step count";
  for (size_t t = 0; t < a.steps.size(); ++t)
    if (auto d = diff(a.steps[t], b.steps[t]); !d.empty()) return d;
  return "";
}

}  // namespace muoncheck
