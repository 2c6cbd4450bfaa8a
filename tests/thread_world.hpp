// thread_world.hpp: a communicator whose ranks are threads of one process
// (shared slots and a barrier), for the communicator's tests and for
// bench_ranks: every rank's own context and counts, the same collective
// calls a program under MPI makes, and the bytes each callback moved.
// Catch2-free.
#pragma once

#include <dirmn.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace dirmn_world {

// n ranks' shared slots and a reusable barrier. A callback failure is
// injected at one call index on every rank at once, as an MPI collective
// fails for all.
class World {
 public:
  explicit World(int n) : n_(n), slots_(static_cast<size_t>(n)) {}
  int ranks() const { return n_; }
  int fail_at = -1;    // the call index (per rank) that fails, -1: none
  int fail_code = 0;
  // What the callbacks moved, counted once (on rank 0): the bytes each rank
  // passed to allreduce, and the bytes broadcast.
  size_t reduced_bytes = 0, broadcast_bytes = 0;

  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const long gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }

  template <class T>
  int allreduce(int rank, T* x, size_t n, int call) {
    if (rank == 0) reduced_bytes += n * sizeof(T);
    slots_[static_cast<size_t>(rank)] = x;
    wait();
    std::vector<T> sum(n, T(0));
    for (int r = 0; r < n_; ++r) {
      const T* y = static_cast<const T*>(slots_[static_cast<size_t>(r)]);
      for (size_t i = 0; i < n; ++i) sum[i] += y[i];
    }
    wait();
    std::copy(sum.begin(), sum.end(), x);
    wait();
    return call == fail_at ? fail_code : 0;
  }

  int broadcast(int rank, void* buf, size_t bytes, int root, int call) {
    if (rank == 0) broadcast_bytes += bytes;
    slots_[static_cast<size_t>(rank)] = buf;
    wait();
    if (rank != root) std::memcpy(buf, slots_[static_cast<size_t>(root)], bytes);
    wait();
    return call == fail_at ? fail_code : 0;
  }

 private:
  int n_;
  std::vector<void*> slots_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
};

// One rank's callbacks' data.
struct Rank {
  World* world = nullptr;
  int rank = 0;
  int calls = 0;
  std::atomic<int>* released = nullptr;
};

inline int allreduce_i64(void* d, int64_t* x, size_t n, int) {
  auto* r = static_cast<Rank*>(d);
  return r->world->allreduce(r->rank, x, n, r->calls++);
}
inline int allreduce_f64(void* d, double* x, size_t n, int) {
  auto* r = static_cast<Rank*>(d);
  return r->world->allreduce(r->rank, x, n, r->calls++);
}
inline int broadcast(void* d, void* buf, size_t bytes, int root, int) {
  auto* r = static_cast<Rank*>(d);
  return r->world->broadcast(r->rank, buf, bytes, root, r->calls++);
}
inline void release(void* d) { static_cast<Rank*>(d)->released->fetch_add(1); }

inline dirmn_communicator_callbacks callbacks_of(Rank* r) {
  dirmn_communicator_callbacks cb;
  std::memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.rank = r->rank;
  cb.ranks = r->world->ranks();
  cb.allreduce_int64 = allreduce_i64;
  cb.allreduce_double = allreduce_f64;
  cb.broadcast = broadcast;
  cb.data = r;
  cb.release = release;
  return cb;
}

}  // namespace dirmn_world
