#include "core/ns_schedules.hpp"

namespace muoncheck {

const std::vector<NsSchedule>& ns_schedules() {
  static const std::vector<NsSchedule> all = {
      {"quintic",
       "Megatron-core's default coefficient_type \"quintic\" (NVIDIA-NeMo/Emerging-Optimizers muon_utils.py), "
       "the same five triples as Dion's zeropower_via_newtonschulz5 and modded-nanogpt's train_gpt_medium.py",
       {{4.0848, -6.8946, 2.9270},
        {3.9505, -6.3029, 2.6377},
        {3.7418, -5.5913, 2.3037},
        {2.8769, -3.1427, 1.2046},
        {2.8366, -3.0525, 1.2012}}},
      {"polar_express",
       "Megatron-core's coefficient_type \"polar_express\" (NVIDIA-NeMo/Emerging-Optimizers muon_utils.py), "
       "Polar Express (arXiv:2505.16932) for 8 iterations with its 1.01 safety factor applied",
       {{8.2051, -22.9019, 16.4607},
        {4.0664, -2.8612, 0.5184},
        {3.9096, -2.8234, 0.5250},
        {3.2856, -2.4153, 0.4853},
        {2.2779, -1.6198, 0.3985},
        {1.8726, -1.2307, 0.3585},
        {1.8564, -1.2132, 0.3568},
        {1.8750, -1.2500, 0.3750}}},
      {"polar_express_5",
       "modded-nanogpt's train_gpt.py polar_express_coeffs (also nanochat's): Polar Express (arXiv:2505.16932) "
       "computed for num_iters=5, safety_factor=2e-2, cushion=2",
       {{8.156554524902461, -22.48329292557795, 15.878769915207462},
        {4.042929935166739, -2.808917465908714, 0.5000178451051316},
        {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
        {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
        {2.3465413258596377, -1.7097828382687081, 0.42323551169305323}}},
  };
  return all;
}

const NsSchedule* find_ns_schedule(const std::string& name) {
  for (const auto& s : ns_schedules())
    if (s.name == name) return &s;
  return nullptr;
}

std::string ns_schedule_names() {
  std::string out;
  for (const auto& s : ns_schedules()) out += (out.empty() ? "\"" : ", \"") + s.name + "\"";
  return out;
}
}  // namespace muoncheck
