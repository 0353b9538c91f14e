// run_oracle / run_control / step_from / initial_state: thin drivers over the
// step engine, choosing the number type and the rounding policy.
#include "oracle/oracle.hpp"

#include "oracle/control_ensemble.hpp"
#include "oracle/engine.hpp"

namespace muoncheck::oracle {

std::string precision_name(Precision p) {
  switch (p) {
    case Precision::float64: return "double";
    case Precision::float128: return "float128";
    case Precision::bin50: return "bin50";
  }
  return "?";
}

bool parse_precision(const std::string& s, Precision& out) {
  for (Precision p : {Precision::float64, Precision::float128, Precision::bin50})
    if (s == precision_name(p)) { out = p; return true; }
  return false;
}

namespace {

template <class Ar>
Trajectory run_engine(const Scenario& s, Ar ar, std::string producer) {
  Engine<Ar> e(s, ar);
  Trajectory tr;
  tr.producer = std::move(producer);
  tr.tags = e.tags();
  tr.initial = e.training_state().params;
  for (int t = 0; t < s.steps; ++t) tr.steps.push_back(e.step(t));
  return tr;
}

template <class Ar>
StepRecord one_step(const Scenario& s, Ar ar, int step, const TrainingState& before) {
  Engine<Ar> e(s, ar);
  e.load(before);
  return e.step(step);
}

}  // namespace

Trajectory run_oracle(const Scenario& s, Precision p) {
  const std::string producer = "oracle:" + precision_name(p);
  switch (p) {
    case Precision::float64: return run_engine(s, ExactArith<f64>{}, producer);
    case Precision::float128: return run_engine(s, ExactArith<f128>{}, producer);
    case Precision::bin50: return run_engine(s, ExactArith<bin50>{}, producer);
  }
  throw Error(ErrorKind::Internal, "run_oracle: unknown precision");
}

Trajectory run_control(const Scenario& s) { return run_control(s, RoundingVariant{}); }

Trajectory run_control(const Scenario& s, const RoundingVariant& member) {
  return run_engine(s, ControlArith::from(s, member), "control:" + member.label());
}

StepRecord control_step_from(const Scenario& s, int step, const TrainingState& before, const RoundingVariant& member) {
  return one_step(s, ControlArith::from(s, member), step, before);
}

TrainingState initial_state(const Scenario& s) {
  return Engine<ExactArith<f64>>(s, ExactArith<f64>{}).training_state();
}

StepRecord step_from(const Scenario& s, int step, const TrainingState& before, Precision p) {
  switch (p) {
    case Precision::float64: return one_step(s, ExactArith<f64>{}, step, before);
    case Precision::float128: return one_step(s, ExactArith<f128>{}, step, before);
    case Precision::bin50: return one_step(s, ExactArith<bin50>{}, step, before);
  }
  throw Error(ErrorKind::Internal, "step_from: unknown precision");
}

}  // namespace muoncheck::oracle
