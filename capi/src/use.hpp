// use.hpp: who is inside a call on a context, what waits for that call to
// return, and what it frees when it does.
//
// A context serves one call at a time (the header's Contexts section). The
// entry guard takes the context's UseFlag without a lock or an allocation;
// a destroy on another thread sleeps until the call returns; a destroy of a
// counts object or mixture from a callback of the call (an R finalizer run
// by a collection in a progress handler, a Julia close there) cannot free a
// handle the call may be using, so the handle is queued on the flag and
// freed when the call returns -- through a link inside the handle itself,
// since nothing may be allocated there.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace dirmn {
namespace capi {

// The part of a handle that queues it for a deferred free.
struct Deferrable {
  Deferrable* deferred_next = nullptr;
  void (*deferred_free)(Deferrable*) = nullptr;
};

struct UseFlag {
  // The thread inside a call (std::thread::id() when none).
  std::atomic<std::thread::id> owner{std::thread::id()};
  // Destroys asleep on `released`: a release takes the mutex only when
  // there are some.
  std::atomic<int> waiters{0};
  std::mutex mutex;
  std::condition_variable released;
  // Handles destroyed from a callback of the call in flight, freed when it
  // returns. Only the owner thread touches the list.
  Deferrable* deferred = nullptr;
};

// Holds a UseFlag for the calling thread while it lives, where it was free.
// Takes no lock and allocates nothing.
class InUse {
 public:
  enum State { kTaken, kReentered, kBusy };
  explicit InUse(UseFlag& flag) noexcept;
  ~InUse();
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;
  State state() const { return state_; }

 private:
  UseFlag& flag_;
  State state_ = kBusy;
};

// For the destroy functions. kTaken: the flag is held (after sleeping while
// a call on another thread held it); free the handle, then release().
// kReentered: this thread is inside a call on the context (a callback),
// which may be using the handle.
enum class Take { kTaken, kReentered };
Take take_for_destroy(UseFlag& flag) noexcept;

// Frees the handles queued by defer_free, gives the flag up and wakes the
// destroys waiting for it.
void release(UseFlag& flag) noexcept;

// Queues `handle` (whose deferred_free frees it) to be freed when the call
// that holds `flag` on this thread returns.
void defer_free(UseFlag& flag, Deferrable* handle) noexcept;

}  // namespace capi
}  // namespace dirmn
