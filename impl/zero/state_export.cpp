// What a rank reports: after every step the full state is gathered (purpose
// state_export, which is not training traffic and changes nothing) into rank 0's
// trajectory, and each rank digests the state that must be identical everywhere.
#include "impl/zero/digest.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {

void RankEngine::export_state(StepRecord* rec) {
  // Five owned arrays per rank, concatenated: master, G, momentum, Adam m, Adam v.
  constexpr int kArrays = 5;
  const std::vector<float>* arrays[kArrays] = {&master_, &grad_record_, &momentum_, &adam_m_, &adam_v_};
  std::vector<float> grad_zero;
  if (grad_record_.size() != master_.size()) {
    grad_zero.assign(master_.size(), 0.0f);
    arrays[1] = &grad_zero;
  }
  const int64_t n = layout_.total();
  std::vector<std::vector<float>> full(kArrays);
  if (stage_ == 0) {
    for (int a = 0; a < kArrays; ++a) full[a] = *arrays[a];
  } else {
    std::vector<float> in;
    for (const auto* a : arrays) in.insert(in.end(), a->begin(), a->end());
    std::vector<int64_t> counts;
    for (int64_t c : layout_.owned_counts()) counts.push_back(kArrays * c);
    std::vector<float> out(static_cast<size_t>(kArrays * n));
    comm_.set_context({Purpose::state_export, Phase::boundary, rec ? rec->step : 0});
    comm_.all_gather_v(Buffer{in.data(), static_cast<int64_t>(in.size()), DType::fp32},
                       Buffer{out.data(), static_cast<int64_t>(out.size()), DType::fp32}, counts);
    for (auto& f : full) f.resize(static_cast<size_t>(n));
    int64_t block = 0;
    for (int r = 0; r < dp_; ++r) {
      const Range o = layout_.owned(r);
      for (int a = 0; a < kArrays; ++a)
        std::copy_n(out.begin() + block + a * o.size(), o.size(), full[a].begin() + o.begin);
      block += kArrays * o.size();
    }
  }

  std::vector<ParamState> states;
  if (rank_ == 0) {
    for (const auto& p : params_) {
      auto slice = [&](const std::vector<float>& v) {
        return std::vector<double>(v.begin() + p.flat_offset, v.begin() + p.flat_offset + p.numel);
      };
      ParamState st;
      st.weight = slice(full[0]);
      if (rec) st.grad = slice(full[1]);
      if (placement_.is_muon(p.index)) {
        st.momentum = slice(full[2]);
      } else {
        st.adam_m = slice(full[3]);
        st.adam_v = slice(full[4]);
      }
      states.push_back(std::move(st));
    }
  }
  if (!rec) {
    result_.trajectory.initial = std::move(states);
    return;
  }
  result_.digests.push_back(replicated_digest(*rec));
  rec->params = std::move(states);
  result_.trajectory.steps.push_back(std::move(*rec));
}

uint64_t RankEngine::replicated_digest(const StepRecord& rec) const {
  Digest d;
  d.add(rec.step);
  d.add(rec.skipped);
  d.add(rec.scale);
  d.add(rec.scaler_after.scale);
  d.add(rec.scaler_after.hysteresis);
  d.add(rec.scaler_after.good_streak);
  d.add(rec.good_steps_after);
  d.add(rec.loss);
  d.add(rec.grad_norm);
  if (stage_ <= 2) d.add(model_);                 // the param_dtype model is whole on every rank
  if (stage_ == 0) {                              // stage 0 replicates the optimizer too
    d.add(master_);
    d.add(momentum_);
    d.add(adam_m_);
    d.add(adam_v_);
  }
  return d.value();
}

}  // namespace muoncheck::impl
