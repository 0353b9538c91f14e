#include "harness/sweep/symptom.hpp"

#include <cctype>

#include "oracle/tagging.hpp"

namespace muoncheck {

namespace {

std::string param_role(const Scenario& s, const std::string& name) {
  for (const auto& p : s.model.params) {
    if (p.name != name) continue;
    if (!oracle::use_muon(p)) return "an AdamW param";
    if (oracle::head_count(s, p) > 0) return "a per-head Muon projection";
    if (p.shape.size() > 2) return "a Muon weight of rank " + std::to_string(p.shape.size());
    return "a Muon matrix";
  }
  return "an unnamed param";
}

std::string miscount(const WorstCase& w) {
  if (w.note == "skipped step") return "NS on a skipped step";
  if (w.param.empty()) return "NS calls tied to no param";
  return w.error < w.band ? "NS call missing" : "NS call extra";
}

}  // namespace

std::string error_kind(const std::string& error) {
  std::string k;
  for (char ch : error.substr(0, 80)) {
    const bool digit = std::isdigit(static_cast<unsigned char>(ch)) != 0;
    if (!digit) k += ch;
    else if (k.empty() || k.back() != 'N') k += 'N';
  }
  return k;
}

std::string error_symptom(const std::string& error) { return "ERROR: " + error_kind(error); }

std::string verdict_symptom(const Scenario& s, const Verdict& v) {
  if (!v.worst) return v.invariant;
  const WorstCase& w = *v.worst;
  std::string what;
  if (v.invariant == "trajectory-conforms") what = w.tensor + " of " + param_role(s, w.param);
  else if (v.invariant == "ns-once-per-matrix-per-step") what = miscount(w);
  else if (v.invariant == "stage-invariant") what = w.kind;
  return what.empty() ? v.invariant : v.invariant + ": " + what;
}

}  // namespace muoncheck
