// Where each Muon param's Newton–Schulz runs (docs/semantics.md §8): the i-th Muon param in model
// order runs on rank i mod dp, at every stage (0 included), so NS work is spread
// round-robin and each matrix is orthogonalized exactly once per step.
#pragma once
#include <vector>

#include "core/trajectory.hpp"

namespace muoncheck::impl {

class NsPlacement {
 public:
  NsPlacement(const std::vector<ParamTag>& tags, int dp) {
    owner_.assign(tags.size(), -1);
    for (size_t p = 0; p < tags.size(); ++p)
      if (tags[p].use_muon) {
        owner_[p] = static_cast<int>(muon_.size()) % dp;
        muon_.push_back(static_cast<int>(p));
      }
  }
  const std::vector<int>& muon_params() const { return muon_; }   // model order
  int owner(int param) const { return owner_[static_cast<size_t>(param)]; }   // -1: not Muon
  bool is_muon(int param) const { return owner(param) >= 0; }

 private:
  std::vector<int> muon_;
  std::vector<int> owner_;
};

}  // namespace muoncheck::impl
