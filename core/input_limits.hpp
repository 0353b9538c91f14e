// The limits every input file is read under, in one place: the bounded JSON reader
// (bounded_json.hpp) enforces the document limits, the scenario and trace loaders the
// resource limits, before anything of that size is allocated. The JSON Schemas
// (scenarios/schema/scenario.schema.json, schemas/trace.schema.json) state the same
// numbers; tests/core/schema_parity_test.cpp fails when the two drift apart.
#pragma once
#include <cstddef>
#include <cstdint>

namespace muoncheck::limits {

// Document limits (any JSON muoncheck reads: scenario, trace, golden digest, report).
inline constexpr int kMaxJsonDepth = 64;                       // nested arrays/objects
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;   // 256 MiB
inline constexpr std::size_t kMaxJsonValues = std::size_t{1} << 23;    // 8,388,608 values
// A value from the input quoted in an error message is cut to this many characters.
inline constexpr std::size_t kMessageValueChars = 80;

// Scenario resource limits: the model must fit the oracle's float128 state in memory.
inline constexpr int64_t kMaxDim = int64_t{1} << 22;            // one dimension of a shape
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 22;  // elements of one param
inline constexpr int64_t kMaxModelElements = int64_t{1} << 22;   // elements of all params

// Trace resource limits: NS calls become one record each when a trace is judged.
inline constexpr int64_t kMaxNsCallsPerEntry = int64_t{1} << 16;  // one ns_calls count, or ns_unattributed
inline constexpr int64_t kMaxNsCallsPerTrace = int64_t{1} << 22;  // all steps together

}  // namespace muoncheck::limits
