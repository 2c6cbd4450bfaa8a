// comm.hpp: a caller's communicator as the layers below capi use it, and
// the agreement that keeps a collective call's ranks in step.
//
// A table split by rows over several processes is summed over them by the
// caller's own engine (capi adapts the header's callbacks to this class).
// Every collective operation must be entered by every rank the same number
// of times in the same order, so a rank whose part fails cannot simply
// return: it votes, and every other rank learns of the failure from the same
// vote instead of waiting on it for ever. Double sums go over the wire as
// one slot per rank and are added here in rank order, so they do not
// depend on the engine's reduction order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend.hpp"

namespace dirmn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // In-place sums over the ranks. COMMUNICATION (what: the callback's name,
  // code: what it returned) where the callback fails.
  virtual BackendResult allreduce(int64_t* values, size_t count) = 0;
  virtual BackendResult allreduce(double* values, size_t count) = 0;
  // root's bytes to every rank.
  virtual BackendResult broadcast(void* buffer, size_t bytes, int root) = 0;
  // A number that every rank draws the same of at the same collective step:
  // marks what a collective call built (histograms), so that later calls
  // can tell whether every rank still holds the same thing.
  int64_t next_serial() { return ++serial_; }

 private:
  int64_t serial_ = 0;
};

// One collective call's votes. Every rank votes at the same points; a rank
// whose part failed before its first vote casts it on the way out (capi).
class Collective {
 public:
  // Ranks whose votes take no allocation (agree).
  static constexpr size_t kInlineRanks = 256;

  explicit Collective(Communicator& comm) : comm_(comm) {}
  Communicator& comm() const { return comm_; }
  int votes() const { return votes_; }

  // Every rank's `local` outcome, agreed: `local` where this rank's part
  // failed; where another's did, CANCELLED if the first failed rank was
  // cancelled, else COMMUNICATION with code = that rank (what: ""); a
  // callback's failure. Throws std::bad_alloc only
  // beyond kInlineRanks ranks.
  BackendResult agree(const BackendResult& local);

  // Each rank's `x`, in rank order, on every rank (out: ranks entries; no
  // allocation where it holds that many already, as a phase sizes it
  // before its first vote).
  BackendResult gather(int64_t x, std::vector<int64_t>* out);
  BackendResult gather(double x, std::vector<double>* out);

 private:
  Communicator& comm_;
  int votes_ = 0;
};

}  // namespace dirmn
