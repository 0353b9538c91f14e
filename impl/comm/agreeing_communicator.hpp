// Decorator that makes every collective agree on its signature before it runs: each rank
// first all-gathers a small fixed-size header (collective kind, dtype, counts) and
// compares it with its peers'. A mismatch — ranks in different collectives, or the same
// one with different sizes — then throws CommError{Infrastructure} on every rank alike,
// instead of reaching the transport, where Gloo's event-loop thread enforces sizes with
// an exception nobody can catch (std::terminate: the whole process, report and all, gone).
// The header always has the same size, so its own exchange can never mismatch; a rank
// that never joins still ends in the inner backend's timeout (named after the collective
// asked for). A rank whose own arguments are inconsistent fails before the exchange, with
// the inner backends' "bad arguments" CommError{Internal}.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

// What a collective claims on one rank, as exchanged (all fields identical on every rank
// of a correct run; all_gather_v's own in.count differs per rank and is checked locally).
struct CollectiveSignature {
  std::array<int64_t, 6> words{};  // kind, dtype, count a, count b, counts hash (all_gather_v), sequence
  std::string describe() const;    // "all_reduce of 4 fp32 (collective #3)"
  bool operator==(const CollectiveSignature&) const = default;
};

class AgreeingCommunicator final : public Communicator {
 public:
  explicit AgreeingCommunicator(Communicator& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void all_reduce(Buffer buf) override;
  void reduce_scatter(Buffer in, Buffer out) override;
  void all_gather(Buffer in, Buffer out) override;
  void all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) override;
  void set_context(const CommContext& ctx) override;

 private:
  // Exchanges `mine` with every rank; throws CommError{Infrastructure} naming each rank's
  // signature when they differ.
  void agree(CollectiveKind kind, int64_t dtype, int64_t a, int64_t b, int64_t c);
  // This rank's own arguments are inconsistent: CommError{Internal}, before any exchange.
  [[noreturn]] void bad_args(CollectiveKind kind, const std::string& what) const;

  Communicator& inner_;
  CommContext ctx_;
  int64_t sequence_ = 0;
};

}  // namespace muoncheck::impl
