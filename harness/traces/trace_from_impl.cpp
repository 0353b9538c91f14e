#include "harness/traces/trace_from_impl.hpp"

#include "core/scenario_io.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck {

Trace trace_from_impl(const Scenario& s, const impl::ImplResult& r) {
  Trace t;
  t.impl_name = "muoncheck-impl";
  t.impl_version = MUONCHECK_VERSION;
  t.impl_details = {{"backend", "cpu"}, {"dp", s.engine.dp}, {"faults", r.faults}};
  t.scenario_name = s.name;
  t.scenario_hash = scenario_hash(s);
  t.scenario_json = scenario_to_json(s);
  // The implementation computes in exactly the scenario's dtypes (SPEC §5).
  t.dtypes = {s.engine.param_dtype, s.engine.grad_accum_dtype, s.engine.comm_dtype, s.optimizer.ns_dtype, DType::fp32};
  t.tags = r.tags_by_rank.empty() ? std::vector<ParamTag>{} : r.tags_by_rank.front();
  t.initial = r.trajectory.initial;
  for (auto& p : t.initial) p.grad.clear();
  for (const auto& st : r.trajectory.steps) {
    TraceStep ts;
    ts.step = st.step;
    ts.skipped = st.skipped;
    ts.loss = st.loss;
    ts.loss_scale = st.scale;
    ts.loss_scale_after = st.scaler_after.scale;
    ts.ns_calls.assign(t.tags.size(), 0);
    for (const auto& c : st.ns_calls) {
      if (c.param >= 0 && c.param < static_cast<int>(ts.ns_calls.size())) ++ts.ns_calls[c.param];
      else ++ts.ns_unattributed;
    }
    ts.params = st.params;
    for (auto& p : ts.params) p.grad.clear();
    t.steps.push_back(std::move(ts));
  }
  return t;
}

}  // namespace muoncheck
