// collective.hpp: the header's communicators as the kernels' Communicator
// (comm.hpp), and what a collective entry point does around its body.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>

#include "../../kernels/comm.hpp"
#include "dirmn.h"
#include "handles.hpp"

namespace dirmn {
namespace capi {

// The caller's callbacks; `release` runs with the last holder (the handle
// and every counts object attached).
class CallbackCommunicator final : public Communicator {
 public:
  explicit CallbackCommunicator(const dirmn_communicator_callbacks& cb) : cb_(cb) {}
  ~CallbackCommunicator() override {
    if (cb_.release != nullptr) cb_.release(cb_.data);
  }
  int rank() const override { return cb_.rank; }
  int ranks() const override { return cb_.ranks; }
  BackendResult allreduce(int64_t* values, size_t count) override {
    const int e = cb_.allreduce_int64(cb_.data, values, count, 0);
    return e == 0 ? BackendResult{} : BackendResult{DIRMN_ERROR_COMMUNICATION, "allreduce_int64", e};
  }
  BackendResult allreduce(double* values, size_t count) override {
    const int e = cb_.allreduce_double(cb_.data, values, count, 0);
    return e == 0 ? BackendResult{} : BackendResult{DIRMN_ERROR_COMMUNICATION, "allreduce_double", e};
  }
  BackendResult broadcast(void* buffer, size_t bytes, int root) override {
    const int e = cb_.broadcast(cb_.data, buffer, bytes, root, 0);
    return e == 0 ? BackendResult{} : BackendResult{DIRMN_ERROR_COMMUNICATION, "broadcast", e};
  }

 private:
  dirmn_communicator_callbacks cb_;
};

// A collective entry point's body on counts attached to a communicator:
// the call's votes are the counts' for its duration, and a rank whose part
// failed before its first vote (a bad argument, memory) casts it on the way
// out, so that no other rank waits for it. Without a communicator, body().
template <class F>
dirmn_status collective(const dirmn_counts* counts, F&& body) {
  if (counts == nullptr || !counts->comm) return body();
  Collective call(*counts->comm);
  struct Attach {
    const dirmn_counts* c;
    ~Attach() { c->call = nullptr; }
  } attach{counts};
  counts->call = &call;
  const auto vote_failed = [&] {
    if (call.votes() > 0) return;
    try {
      call.agree({DIRMN_ERROR_INVALID_ARGUMENT, "", 0});
    } catch (const std::bad_alloc&) {  // nothing more to be done
    }
  };
  try {
    const dirmn_status s = body();
    if (s != DIRMN_SUCCESS) vote_failed();
    return s;
  } catch (...) {
    vote_failed();
    throw;
  }
}

// Within a collective body, a phase's vote on this rank's `local` status
// (its message already set): `local` where it failed, a failed vote's
// status where another rank's part failed. Without a collective call in
// flight on counts, `local`.
dirmn_status vote(dirmn_context* ctx, const char* fn, const dirmn_counts* counts, dirmn_status local);

// One scalar of a collective call's arguments, which every rank must pass
// alike, as a double (integers below 2^53 exactly; NaN equals NaN): the
// callbacks' doubles, since an engine's int64 may be a double too (R's).
struct Agreed {
  template <class T>
  Agreed(const char* n, T v) : name(n), value(static_cast<double>(v)) {}
  const char* name;
  double value;
};

// Within a collective body, before the call's first vote of its own: a
// vote, then every rank's `args` compared with rank 0's. INVALID_ARGUMENT
// on every rank, naming the first rank and argument that differ, where
// they do (different k or covariates would otherwise send sums of
// different sizes). Without a collective call in flight, SUCCESS.
dirmn_status agree_on_arguments(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                                std::initializer_list<Agreed> args);

// NOT_SUPPORTED for counts attached to a communicator, naming fn: the
// estimators that do not yet sum over ranks.
dirmn_status refuse_split(dirmn_context* ctx, const char* fn, const dirmn_counts* counts);

}  // namespace capi
}  // namespace dirmn
