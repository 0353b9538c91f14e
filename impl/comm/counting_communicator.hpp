// Decorator that forwards every collective to an inner Communicator and records it under
// the CommContext last set (which it also forwards, so errors name purpose and step).
// A record is appended only after the inner collective returned: the log is what ran.
// Beside each record it keeps the call's wall time (seconds(), same index): timing is not
// part of a record, so two runs' logs still compare equal event for event.
// bytes = the logical size of the whole tensor the collective works on (nccl-tests' "size").
#pragma once
#include <map>
#include <string>
#include <vector>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

// elements/bytes per kind (identical on every rank):
//   all_reduce      buf.count                 reduce_scatter  in.count  (= dp · out.count)
//   all_gather      out.count (= dp·in.count) all_gather_v    out.count (= Σ counts)
// bytes = elements · dtype_bytes(dtype): the payload in the dtype it travelled in.
struct CollectiveRecord {
  int rank = 0;
  CollectiveKind kind = CollectiveKind::all_reduce;
  DType dtype = DType::fp32;
  int64_t elements = 0;
  int64_t bytes = 0;
  Purpose purpose = Purpose::grad_reduce;
  Phase phase = Phase::boundary;
  int step = 0;

  bool operator==(const CollectiveRecord&) const = default;
};

// "all_gather(dtype=bf16,elements=6,bytes=12,purpose=muon_gather,phase=boundary,step=0,rank=1)"
std::string to_string(const CollectiveRecord& r);

class CountingCommunicator final : public Communicator {
 public:
  explicit CountingCommunicator(Communicator& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void all_reduce(Buffer buf) override;
  void reduce_scatter(Buffer in, Buffer out) override;
  void all_gather(Buffer in, Buffer out) override;
  void all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) override;
  void set_context(const CommContext& ctx) override;

  const CommContext& context() const { return ctx_; }
  const std::vector<CollectiveRecord>& log() const { return log_; }
  const std::vector<double>& seconds() const { return seconds_; }
  void clear_log() {
    log_.clear();
    seconds_.clear();
  }

 private:
  template <class Call>
  void timed(CollectiveKind kind, DType dtype, int64_t elements, Call&& call);

  Communicator& inner_;
  CommContext ctx_;
  std::vector<CollectiveRecord> log_;
  std::vector<double> seconds_;
};

struct CommTotals {
  int64_t calls = 0;
  int64_t bytes = 0;
  bool operator==(const CommTotals&) const = default;
};

// One optimizer step's traffic, split three ways (each split sums to the same totals).
struct StepSummary {
  std::map<CollectiveKind, CommTotals> by_kind;
  std::map<Purpose, CommTotals> by_purpose;
  std::map<Phase, CommTotals> by_phase;
};

// step → summary, over the records given (one rank's log, or several ranks' concatenated).
std::map<int, StepSummary> summarize_by_step(const std::vector<CollectiveRecord>& log);

}  // namespace muoncheck::impl
