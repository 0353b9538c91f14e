#include "impl/faults/faults.hpp"

#include "core/error.hpp"

namespace muoncheck::impl {

std::optional<Fault> parse_fault(std::string_view id) {
  const FaultInfo* f = find_fault(id);
  return f ? std::optional<Fault>(f->fault) : std::nullopt;
}

std::string_view fault_id(Fault f) {
  for (const auto& i : fault_catalogue())
    if (i.fault == f) return i.id;
  return "?";
}

FaultSet FaultSet::from_ids(const std::vector<std::string>& ids) {
  FaultSet set;
  for (const auto& id : ids) {
    const FaultInfo* f = find_fault(id);
    if (!f) {
      std::string known;
      for (const auto& k : fault_ids()) known += (known.empty() ? "" : ", ") + k;
      throw Error(ErrorKind::Usage, "unknown fault id '" + id + "' (known: " + known + ")");
    }
    if (!f->implemented)
      throw Error(ErrorKind::Unsupported, "fault '" + id + "' is catalogued but not implemented in impl:cpu");
    set.add(f->fault);
  }
  return set;
}

}  // namespace muoncheck::impl
