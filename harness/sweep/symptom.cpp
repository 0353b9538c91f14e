#include "harness/sweep/failure_symptom.hpp"

#include <cctype>
#include <cstdlib>

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

// "worst at step 3 param NAME momentum (not exported by the implementation): error ..." ->
// "momentum (not exported by the implementation) of a Muon matrix". What the trace lacks as a whole
// ("the trace shows no momentum") is left out: it follows from the case (no AdamW param, no state
// the adapter can read there), not from the defect.
std::string trajectory_symptom(const Scenario& s, const std::string& message) {
  if (message.rfind("the implementation failed", 0) == 0) return "the implementation failed";
  const size_t at = message.find(" param ");
  if (message.rfind("worst at step ", 0) != 0 || at == std::string::npos) return message.substr(0, message.find(':'));
  const size_t name_start = at + 7, name_end = message.find(' ', name_start);
  if (name_end == std::string::npos) return "unparsed worst tensor";
  const size_t kind_end = message.find(':', name_end);
  return message.substr(name_end + 1, kind_end - name_end - 1) + " of " +
         param_role(s, message.substr(name_start, name_end - name_start));
}

// "step 0 NAME: 1 NS calls, expected 0 (skipped step); ..." -> "NS on a skipped step".
std::string ns_symptom(const std::string& message) {
  if (message.find("(skipped step)") != std::string::npos) return "NS on a skipped step";
  if (message.find("tied to no param") != std::string::npos) return "NS calls tied to no param";
  const size_t calls = message.find(" NS calls, expected ");
  if (calls == std::string::npos) return "NS count";
  size_t start = calls;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(message[start - 1]))) --start;
  const long have = std::strtol(message.c_str() + start, nullptr, 10);
  const long want = std::strtol(message.c_str() + calls + 20, nullptr, 10);
  return have < want ? "NS call missing" : "NS call extra";
}

// "stage 0, dp 1 × gas 1 ... vs stage 1, dp 1 ..." -> "stage 0 vs stage 1".
std::string stage_symptom(const std::string& message) {
  const size_t vs = message.find(" vs stage ");
  if (message.rfind("stage ", 0) != 0 || vs == std::string::npos) return "stage comparison";
  auto stage_at = [&](size_t pos) { return message.substr(pos, message.find(',', pos) - pos); };
  return "stage " + stage_at(6) + " vs stage " + stage_at(vs + 10);
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

std::string failure_symptom(const Scenario& s, const std::string& invariant, const std::string& message) {
  std::string what;
  if (invariant == "trajectory-conforms") what = trajectory_symptom(s, message);
  else if (invariant == "ns-once-per-matrix-per-step") what = ns_symptom(message);
  else if (invariant == "stage-invariant") what = stage_symptom(message);
  return what.empty() ? invariant : invariant + ": " + what;
}

}  // namespace muoncheck
