#include "oracle/result_memo.hpp"

#include <cstring>

#include "oracle/control_ensemble.hpp"

namespace muoncheck::oracle {

namespace {

size_t bytes_of(const std::vector<ParamState>& ps) {
  size_t n = 0;
  for (const auto& p : ps) n += 8 * (p.weight.size() + p.grad.size() + p.momentum.size() + p.adam_m.size() + p.adam_v.size());
  return n + sizeof(ParamState) * ps.size();
}

size_t bytes_of(const std::vector<Trajectory>& ts) {
  size_t n = 0;
  for (const auto& t : ts) n += oracle::bytes_of(t);
  return n;
}

size_t bytes_of(const std::vector<StepRecord>& rs) {
  size_t n = 0;
  for (const auto& r : rs) n += oracle::bytes_of(r);
  return n;
}

void append(std::string& out, const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }

void append(std::string& out, const std::vector<double>& v) {
  const uint64_t n = v.size();
  append(out, &n, sizeof n);
  append(out, v.data(), 8 * v.size());
}

}  // namespace

size_t bytes_of(const Trajectory& t) {
  size_t n = bytes_of(t.initial);
  for (const auto& s : t.steps) n += bytes_of(s);
  return n;
}

size_t bytes_of(const StepRecord& r) { return sizeof(StepRecord) + bytes_of(r.params) + sizeof(NsCall) * r.ns_calls.size(); }

std::string state_key(const TrainingState& st) {
  std::string out;
  const uint64_t params = st.params.size();
  append(out, &params, sizeof params);
  for (const auto& p : st.params)
    for (const auto* v : {&p.weight, &p.grad, &p.momentum, &p.adam_m, &p.adam_v}) append(out, *v);
  append(out, &st.scaler.scale, sizeof st.scaler.scale);
  append(out, &st.scaler.hysteresis, sizeof st.scaler.hysteresis);
  append(out, &st.scaler.good_streak, sizeof st.scaler.good_streak);
  append(out, &st.good_steps, sizeof st.good_steps);
  return out;
}

template <class V, class Make>
std::shared_ptr<const V> ResultMemo::get(const std::string& key, Make make) {
  std::promise<std::shared_ptr<const void>> promise;
  std::shared_future<std::shared_ptr<const void>> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      by_age_.splice(by_age_.begin(), by_age_, it->second.age);
      ++counts_.hits;
      return std::static_pointer_cast<const V>(it->second.value);
    }
    if (auto it = computing_.find(key); it != computing_.end()) {   // another thread is on it: wait for that
      ++counts_.hits;
      pending = it->second;
    } else {
      ++counts_.misses;
      computing_[key] = promise.get_future().share();
    }
  }
  if (pending.valid()) return std::static_pointer_cast<const V>(pending.get());
  std::shared_ptr<const V> value;
  try {
    value = std::make_shared<const V>(make());
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex_);
    computing_.erase(key);
    throw;
  }
  promise.set_value(value);
  const size_t bytes = bytes_of(*value) + key.size();
  std::lock_guard<std::mutex> lock(mutex_);
  computing_.erase(key);
  if (entries_.count(key) == 0 && bytes <= max_bytes_) {
    by_age_.push_front(key);
    entries_[key] = Entry{value, bytes, by_age_.begin()};
    counts_.bytes += bytes;
    evict_locked();
  }
  return value;
}

void ResultMemo::evict_locked() {
  while (counts_.bytes > max_bytes_ && !by_age_.empty()) {
    const auto it = entries_.find(by_age_.back());
    counts_.bytes -= it->second.bytes;
    entries_.erase(it);
    by_age_.pop_back();
  }
}

std::shared_ptr<const Trajectory> ResultMemo::exact(const Scenario& s, Precision p) {
  return get<Trajectory>("exact " + precision_name(p) + "\n" + control_fingerprint(s), [&] { return run_oracle(s, p); });
}

std::shared_ptr<const std::vector<Trajectory>> ResultMemo::ensemble(const Scenario& s, int members) {
  return get<std::vector<Trajectory>>("ensemble " + std::to_string(members) + "\n" + control_fingerprint(s),
                                      [&] { return run_control_ensemble(s, members); });
}

std::shared_ptr<const StepRecord> ResultMemo::exact_step(const Scenario& s, int step, const TrainingState& before,
                                                         Precision p) {
  const std::string start = state_key(before);
  if (step == 0 && start == state_key(initial_state(s))) {   // the trajectory's own step 0
    const auto whole = exact(s, p);
    if (!whole->steps.empty()) return std::shared_ptr<const StepRecord>(whole, &whole->steps.front());
  }
  return get<StepRecord>("step " + precision_name(p) + " " + std::to_string(step) + "\n" + control_fingerprint(s) + "\n" + start,
                         [&] { return step_from(s, step, before, p); });
}

std::shared_ptr<const std::vector<StepRecord>> ResultMemo::member_steps(const Scenario& s, int step,
                                                                        const TrainingState& before, int members) {
  const std::string start = state_key(before);
  if (step == 0 && start == state_key(initial_state(s))) {   // each member trajectory's own step 0
    const auto whole = ensemble(s, members);
    std::vector<StepRecord> firsts;
    for (const auto& t : *whole)
      if (!t.steps.empty()) firsts.push_back(t.steps.front());
    if (firsts.size() == whole->size()) return std::make_shared<const std::vector<StepRecord>>(std::move(firsts));
  }
  return get<std::vector<StepRecord>>(
      "members " + std::to_string(members) + " " + std::to_string(step) + "\n" + control_fingerprint(s) + "\n" + start,
      [&] { return control_steps_from(s, step, before, members); });
}

ResultMemo::Counts ResultMemo::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace muoncheck::oracle
