// use.cpp: the context's use flag (see use.hpp).
#include "use.hpp"

namespace dirmn {
namespace capi {

InUse::InUse(UseFlag& flag) noexcept : flag_(flag) {
  std::thread::id none;
  const std::thread::id me = std::this_thread::get_id();
  if (flag.owner.compare_exchange_strong(none, me))
    state_ = kTaken;
  else
    state_ = none == me ? kReentered : kBusy;
}

InUse::~InUse() {
  if (state_ == kTaken) release(flag_);
}

Take take_for_destroy(UseFlag& flag) noexcept {
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id none;
  if (flag.owner.compare_exchange_strong(none, me)) return Take::kTaken;
  if (none == me) return Take::kReentered;
  // Asleep, not spinning: on a machine of two cores a spin takes one from
  // the call it waits for. The count is raised before the flag is tried
  // under the mutex, and release() stores the flag before it reads the
  // count (both sequentially consistent), so either the try sees the flag
  // free or the release sees the waiter and notifies under the mutex.
  flag.waiters.fetch_add(1);
  {
    std::unique_lock<std::mutex> lock(flag.mutex);
    for (;;) {
      none = std::thread::id();
      if (flag.owner.compare_exchange_strong(none, me)) break;
      flag.released.wait(lock);
    }
  }
  flag.waiters.fetch_sub(1);
  return Take::kTaken;
}

void release(UseFlag& flag) noexcept {
  while (Deferrable* d = flag.deferred) {
    flag.deferred = d->deferred_next;
    d->deferred_free(d);
  }
  flag.owner.store(std::thread::id());
  if (flag.waiters.load() > 0) {
    { std::lock_guard<std::mutex> lock(flag.mutex); }
    flag.released.notify_all();
  }
}

void defer_free(UseFlag& flag, Deferrable* handle) noexcept {
  handle->deferred_next = flag.deferred;
  flag.deferred = handle;
}

}  // namespace capi
}  // namespace dirmn
