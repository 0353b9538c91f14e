// Switching faults on (the fault catalogue, fault_catalogue.hpp): a FaultSet is read only by the code path the real bug lived
// in (a branch there asks `faults.has(Fault::x)`); it never edits outputs afterwards. Off by
// default. What each fault is, and everything else about it, is in fault_catalogue.hpp.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/faults/fault_catalogue.hpp"

namespace muoncheck::impl {

std::optional<Fault> parse_fault(std::string_view id);
std::string_view fault_id(Fault f);

class FaultSet {
 public:
  FaultSet() = default;
  // Throws Error{Usage} for an unknown id, Error{Unsupported} for a known but
  // unimplemented one.
  static FaultSet from_ids(const std::vector<std::string>& ids);
  bool has(Fault f) const { return (bits_ >> static_cast<unsigned>(f)) & 1u; }
  bool empty() const { return bits_ == 0; }
  void add(Fault f) { bits_ |= 1u << static_cast<unsigned>(f); }

 private:
  unsigned bits_ = 0;
};

}  // namespace muoncheck::impl
