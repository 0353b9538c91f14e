#include "oracle/certify.hpp"

#include <algorithm>
#include <cmath>

#include "oracle/engine.hpp"

namespace muoncheck::oracle {

double CertifiedStep::min() const { return std::min({weights, momentum, adam}); }

namespace {

// −log10 of the relative Frobenius difference of one tensor pair, capped.
double digits(const Mat<f128>& lo, const Mat<bin50>& hi) {
  if (lo.a.empty()) return kMaxDigits;
  bin50 diff(0), ref(0);
  for (size_t i = 0; i < lo.a.size(); ++i) {
    const bin50 d = widen(lo.a[i]) - hi.a[i];
    diff += d * d;
    ref += hi.a[i] * hi.a[i];
  }
  if (!real_isfinite(diff) || !real_isfinite(ref)) return 0.0;
  if (diff == 0) return kMaxDigits;
  const bin50 tiny(1e-300);
  const bin50 rel = sqrt(diff) / std::max(sqrt(ref), tiny);
  return std::clamp(-static_cast<double>(log10(rel)), 0.0, kMaxDigits);
}

}  // namespace

Certificate certify(const Scenario& s) {
  Engine<ExactArith<f128>> lo(s, {});
  Engine<ExactArith<bin50>> hi(s, {});
  Certificate c;
  c.scenario = s.name;
  for (int t = 0; t < s.steps; ++t) {
    const StepRecord r = lo.step(t);
    hi.step(t);
    CertifiedStep cs;
    cs.step = t;
    cs.skipped = r.skipped;
    const auto& a = lo.state();
    const auto& b = hi.state();
    for (size_t p = 0; p < a.weight.size(); ++p) {
      cs.weights = std::min(cs.weights, digits(a.weight[p], b.weight[p]));
      cs.momentum = std::min(cs.momentum, digits(a.momentum[p], b.momentum[p]));
      cs.adam = std::min({cs.adam, digits(a.adam_m[p], b.adam_m[p]), digits(a.adam_v[p], b.adam_v[p])});
    }
    c.min_digits = std::min(c.min_digits, cs.min());
    c.steps.push_back(cs);
  }
  return c;
}

}  // namespace muoncheck::oracle
