// Prints muoncheck's generated data for a scenario as JSON, so the Python adapters can be
// checked against the C++ generator bit for bit (datagen_match.py): raw hashes, every
// param's initial weights, and inputs/targets of a few (step, sample) keys.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/datagen.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"

int main(int argc, char** argv) {
  using namespace muoncheck;
  if (argc != 2) {
    std::cerr << "usage: datagen_dump SCENARIO.json\n";
    return 2;
  }
  try {
    const Scenario s = load_scenario(argv[1]);
    nlohmann::json out = {{"scenario", s.name}, {"seed", std::to_string(s.seed)}};
    nlohmann::json hashes = nlohmann::json::array();
    for (uint64_t w : {0ull, 1ull, 7ull, 0xFFFFFFFFFFFFFFFFull})   // uint64 as strings: JSON numbers are doubles
      hashes.push_back({{"words", {std::to_string(s.seed), "2", std::to_string(w), "3", "5", std::to_string(w * 977)}},
                        {"h", std::to_string(data::hash6(s.seed, 2, w, 3, 5, w * 977))}});
    out["hashes"] = hashes;
    nlohmann::json params = nlohmann::json::array();
    for (size_t p = 0; p < s.model.params.size(); ++p) {
      const auto& spec = s.model.params[p];
      const auto mv = matrix_view(spec.shape);
      const int rank = static_cast<int>(spec.shape.size());
      std::vector<double> init;
      for (int64_t e = 0; e < element_count(spec.shape); ++e)
        init.push_back(data::initial_weight(s.seed, static_cast<int>(p), e, rank, mv.cols));
      nlohmann::json samples = nlohmann::json::array();
      const int64_t n = mv.cols, m = rank == 1 ? mv.cols : mv.rows;
      for (int step : {0, 1, 5})
        for (int64_t j : {0, 3, 17}) {
          std::vector<double> x, y;
          for (int64_t e = 0; e < n; ++e) x.push_back(data::input_value(s.seed, static_cast<int>(p), step, j, e));
          for (int64_t e = 0; e < m; ++e) y.push_back(data::target_value(s.seed, static_cast<int>(p), step, j, e));
          samples.push_back({{"step", step}, {"sample", j}, {"x", x}, {"y", y}});
        }
      params.push_back({{"name", spec.name}, {"initial", init}, {"samples", samples}});
    }
    out["params"] = params;
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const Error& e) {
    std::cerr << "datagen_dump: " << e.what() << "\n";
    return 2;
  }
}
