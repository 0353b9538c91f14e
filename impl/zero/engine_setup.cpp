// Building a rank: the flat layout, params (full, or placeholders under zero_init),
// tagging on the layer shapes, then partitioning the model and optimizer state.
#include <cmath>

#include "core/datagen.hpp"
#include "core/error.hpp"
#include "impl/math/lowp.hpp"
#include "impl/tagging/tagging.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {
namespace {

std::vector<int64_t> numels_of(const Scenario& s) {
  std::vector<int64_t> n;
  for (const auto& p : s.model.params) n.push_back(element_count(p.shape));
  return n;
}

// Initial weight of flat element f of param p (docs/semantics.md §1).
float initial_value(const Scenario& s, const ParamHandle& p, int64_t f) {
  const MatrixView mv = matrix_view(p.ds_shape);
  return static_cast<float>(data::initial_weight(s.seed, p.index, f - p.flat_offset,
                                                 static_cast<int>(p.ds_shape.size()), mv.cols));
}

// The engine's NS configuration. Fault ns-schedule-stale-last: the last iteration of a
// per-iteration schedule takes the triple before it.
NsConfig ns_config_for(const Scenario& s, const FaultSet& faults) {
  NsConfig c = NsConfig::from(s.optimizer);
  if (faults.has(Fault::ns_schedule_stale_last) && c.coefficients.size() > 1)  // CHECK_EXCL_BR_LINE: fault path
    c.coefficients.back() = c.coefficients[c.coefficients.size() - 2];
  return c;
}

}  // namespace

RankEngine::RankEngine(const Scenario& s, const FaultSet& faults, Communicator& comm, Compute& math)
    : s_(s),
      faults_(faults),
      comm_(comm),
      math_(math),
      rank_(comm.rank()),
      dp_(comm.size()),
      stage_(s.engine.stage),
      layout_(numels_of(s), comm.size()),
      ns_(ns_config_for(s, faults)),
      placement_({}, 1),
      scaler_(s.loss_scaler, faults) {
  if (dp_ != s.engine.dp)
    throw Error(ErrorKind::Internal, "rank engine built with " + std::to_string(dp_) + " ranks for dp " +
                                         std::to_string(s.engine.dp));
  if (s.model.params.empty()) throw Error(ErrorKind::Unsupported, "the model has no parameters");
  result_.rank = rank_;
  build_params();
}

void RankEngine::build_params() {
  const int64_t n = layout_.total();
  const bool placeholders = stage_ == 3 && s_.engine.zero_init;
  owned_ = stage_ == 0 ? Range{0, n} : layout_.owned(rank_);
  norm_range_ = layout_.owned(rank_);
  const DType pd = s_.engine.param_dtype;

  // 1. Create the params. zero.Init builds each as a placeholder holding only this
  //    rank's slice; otherwise every rank materializes the full model first.
  std::vector<float> full;
  for (int p = 0; p < layout_.num_params(); ++p) {
    const auto& spec = s_.model.params[static_cast<size_t>(p)];
    ParamHandle h;
    h.index = p;
    h.name = spec.name;
    h.ds_shape = spec.shape;
    h.flat_offset = layout_.param(p).begin;
    h.numel = layout_.param(p).size();
    h.explicit_heads = spec.num_heads;
    h.local_shape = placeholders ? std::vector<int64_t>{intersect(layout_.param(p), owned_).size()} : spec.shape;
    params_.push_back(h);
  }
  if (placeholders) {
    model_.assign(static_cast<size_t>(owned_.size()), 0.0f);
    for (const auto& h : params_) {
      const Range x = intersect(layout_.param(h.index), owned_);
      for (int64_t f = x.begin; f < x.end; ++f) model_[at(f)] = round_dtype(pd, initial_value(s_, h, f));
    }
  } else {
    full.assign(static_cast<size_t>(n), 0.0f);
    for (const auto& h : params_)
      for (int64_t f = h.flat_offset; f < h.flat_offset + h.numel; ++f) full[f] = initial_value(s_, h, f);
  }

  // 2. Tag while the params are as the user script sees them (placeholders or full).
  tags_ = tag_params(s_, params_, faults_);
  placement_ = NsPlacement(tags_, dp_);
  result_.tags = tags_;

  // 3. Partition: fp32 master and optimizer state for the owned range; the
  //    param_dtype model stays whole at stages 0–2 and keeps only its slice at stage 3.
  if (!placeholders) {
    master_.assign(full.begin() + owned_.begin, full.begin() + owned_.end);
    if (stage_ == 3) {
      model_.resize(static_cast<size_t>(owned_.size()));
      for (int64_t f = owned_.begin; f < owned_.end; ++f) model_[at(f)] = round_dtype(pd, full[f]);
      for (auto& h : params_) h.local_shape = {intersect(layout_.param(h.index), owned_).size()};
    } else {
      model_.resize(static_cast<size_t>(n));
      for (int64_t f = 0; f < n; ++f) model_[f] = round_dtype(pd, full[f]);
    }
  } else {
    master_.assign(static_cast<size_t>(owned_.size()), 0.0f);
    for (const auto& h : params_) {
      const Range x = intersect(layout_.param(h.index), owned_);
      for (int64_t f = x.begin; f < x.end; ++f) master_[at(f)] = initial_value(s_, h, f);
    }
  }
  momentum_.assign(master_.size(), 0.0f);
  adam_m_.assign(master_.size(), 0.0f);
  adam_v_.assign(master_.size(), 0.0f);
  grad_.assign(master_.size(), 0.0f);
  grad_acc_.assign(stage_ <= 1 ? static_cast<size_t>(n) : master_.size(), 0.0f);
}

// The rates of step t (lr · lr_scale · schedule factor, core/scenario.hpp). drop-param-groups
// forgets the groups altogether; group-schedule-overwritten keeps their lr_scale but drives
// every group with the optimizer's schedule, as a scheduler that writes one rate into all
// groups does.
double RankEngine::rate(double base, int p, int step) const {
  const auto& name = params_[static_cast<size_t>(p)].name;
  if (faults_.has(Fault::drop_param_groups)) return base * lr_factor(s_.optimizer.lr_schedule, step);  // CHECK_EXCL_BR_LINE: fault path
  const LrSchedule& sch = faults_.has(Fault::group_schedule_overwritten) ? s_.optimizer.lr_schedule  // CHECK_EXCL_BR_LINE: fault path
                                                                         : lr_schedule_for(s_, name);
  return base * lr_scale_for(s_, name) * lr_factor(sch, step);
}

double RankEngine::lr_muon(int p, int step) const { return rate(s_.optimizer.lr, p, step); }
double RankEngine::lr_adam(int p, int step) const { return rate(s_.optimizer.adam.lr, p, step); }

double RankEngine::weight_decay(int p) const {
  const auto& name = params_[static_cast<size_t>(p)].name;
  return faults_.has(Fault::drop_param_groups) ? s_.optimizer.weight_decay : weight_decay_for(s_, name);  // CHECK_EXCL_BR_LINE: fault path
}

}  // namespace muoncheck::impl
