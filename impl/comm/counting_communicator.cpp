#include "impl/comm/counting_communicator.hpp"

#include <chrono>

namespace muoncheck::impl {

std::string to_string(const CollectiveRecord& r) {
  return collective_name(r.kind) + "(dtype=" + std::string(dtype_name(r.dtype)) +
         ",elements=" + std::to_string(r.elements) + ",bytes=" + std::to_string(r.bytes) +
         ",purpose=" + purpose_name(r.purpose) + ",phase=" + phase_name(r.phase) +
         ",step=" + std::to_string(r.step) + ",rank=" + std::to_string(r.rank) + ")";
}

template <class Call>
void CountingCommunicator::timed(CollectiveKind kind, DType dtype, int64_t elements, Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  seconds_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  log_.push_back(CollectiveRecord{inner_.rank(), kind, dtype, elements, elements * dtype_bytes(dtype),
                                  ctx_.purpose, ctx_.phase, ctx_.step});
}

void CountingCommunicator::set_context(const CommContext& ctx) {
  ctx_ = ctx;
  inner_.set_context(ctx);
}

void CountingCommunicator::all_reduce(Buffer buf) {
  timed(CollectiveKind::all_reduce, buf.dtype, buf.count, [&] { inner_.all_reduce(buf); });
}

void CountingCommunicator::reduce_scatter(Buffer in, Buffer out) {
  timed(CollectiveKind::reduce_scatter, in.dtype, in.count, [&] { inner_.reduce_scatter(in, out); });
}

void CountingCommunicator::all_gather(Buffer in, Buffer out) {
  timed(CollectiveKind::all_gather, out.dtype, out.count, [&] { inner_.all_gather(in, out); });
}

void CountingCommunicator::all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) {
  timed(CollectiveKind::all_gather_v, out.dtype, out.count, [&] { inner_.all_gather_v(in, out, counts); });
}

std::map<int, StepSummary> summarize_by_step(const std::vector<CollectiveRecord>& log) {
  std::map<int, StepSummary> out;
  for (const auto& r : log) {
    StepSummary& s = out[r.step];
    for (CommTotals* t : {&s.by_kind[r.kind], &s.by_purpose[r.purpose], &s.by_phase[r.phase]}) {
      t->calls += 1;
      t->bytes += r.bytes;
    }
  }
  return out;
}

}  // namespace muoncheck::impl
