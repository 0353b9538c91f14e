#include "properties/generators/focus.hpp"

#include <charconv>
#include <string>

#include "core/error.hpp"
#include "impl/faults/fault_catalogue.hpp"

namespace muoncheck::generators {

namespace {

// "stage>=3" → (stage, >=, 3); false when `clause` is not NAME>=N or NAME<=N.
bool parse_bound(std::string_view clause, std::string_view& name, bool& at_least, int& n) {
  const auto op = clause.find_first_of("<>");
  if (op == std::string_view::npos || op + 2 > clause.size() || clause[op + 1] != '=') return false;
  name = clause.substr(0, op);
  at_least = clause[op] == '>';
  const auto digits = clause.substr(op + 2);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc() && end == digits.data() + digits.size();
}

bool apply_bound(Focus& f, std::string_view name, bool at_least, int n) {
  if (name == "stage") (at_least ? f.min_stage : f.max_stage) = n;
  else if (name == "dp" && at_least) f.min_dp = n;
  else if (name == "gas" && at_least) f.min_gas = n;
  else return false;
  return true;
}

bool apply_flag(Focus& f, std::string_view flag) {
  bool Focus::*field = nullptr;
  if (flag == "zero-init") field = &Focus::zero_init;
  else if (flag == "per-head") field = &Focus::per_head;
  else if (flag == "mixed-shapes") field = &Focus::mixed_shapes;
  else if (flag == "groups") field = &Focus::groups;
  else if (flag == "low-precision-comm") field = &Focus::low_precision_comm;
  else if (flag == "injection") field = &Focus::injection;
  else if (flag == "loss-scaler") field = &Focus::loss_scaler;
  else if (flag == "clip") field = &Focus::clip;
  else if (flag == "small-buckets") field = &Focus::small_buckets;
  else if (flag == "scaler-growth") field = &Focus::scaler_growth;
  else if (flag == "schedule") field = &Focus::schedule;
  else if (flag == "checkpoint") field = &Focus::checkpoint;
  else if (flag == "ns-schedule") field = &Focus::ns_schedule;
  else return false;
  f.*field = true;
  return true;
}

}  // namespace

Focus focus_from_clauses(std::string_view label, std::string_view clauses) {
  Focus f;
  f.label = std::string(label);
  size_t start = 0;
  while (start < clauses.size()) {
    size_t end = clauses.find(' ', start);
    if (end == std::string_view::npos) end = clauses.size();
    const auto clause = clauses.substr(start, end - start);
    start = end + 1;
    if (clause.empty()) continue;
    std::string_view name;
    bool at_least = false;
    int n = 0;
    const bool ok = parse_bound(clause, name, at_least, n) ? apply_bound(f, name, at_least, n) : apply_flag(f, clause);
    if (!ok)
      throw Error(ErrorKind::Internal, "focus of '" + f.label + "': unknown clause \"" + std::string(clause) + "\"");
  }
  return f;
}

Focus focus_for_fault(std::string_view id) {
  const impl::FaultInfo* fault = impl::find_fault(id);
  if (!fault) throw Error(ErrorKind::Usage, "no generator focus for fault '" + std::string(id) + "'");
  return focus_from_clauses(fault->id, fault->focus);
}

}  // namespace muoncheck::generators
