// The defaults of a sweep, ours and another implementation's alike, in one place: the sweeps'
// options start from them and the option table shows them.
#pragma once
#include <cstdint>

namespace muoncheck {

inline constexpr int kDefaultSweepCases = 100;
inline constexpr std::uint64_t kDefaultSweepSeed = 1;
inline constexpr double kDefaultShrinkSeconds = 240;
inline constexpr int kDefaultMaxDefects = 6;
inline constexpr const char* kDefaultCasesDir = "out/cases";   // minimal cases and repro scripts: generated output

}  // namespace muoncheck
