// What a sweep against another implementation says: the closing lines (throughput, declines per
// feature, features drawn, each defect with its minimal case and repro line) and its JSON record.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>

#include "harness/sweep/impl_sweep.hpp"

namespace muoncheck {

void print_impl_sweep_summary(std::FILE* out, const ImplSweepOptions& o, const ImplSweepResult& r);
nlohmann::json impl_sweep_json(const ImplSweepOptions& o, const ImplSweepResult& r);

}  // namespace muoncheck
