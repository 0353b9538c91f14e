// What the loader fuzz targets and the corpus replay check on one input: the loader
// either returns a value or throws Error{BadInput} — never another kind (exit 3), never
// another exception, never a crash. A loaded scenario is also within the resource limits
// and survives its own round trip (parse(to_json(s)) loads again).
#pragma once
#include <string>
#include <string_view>

namespace muoncheck::fuzz {

// "" when the loader behaved; otherwise one line saying what it did instead.
std::string check_scenario_loader(std::string_view input);
std::string check_trace_loader(std::string_view input);

}  // namespace muoncheck::fuzz
