// thread_pool.hpp: the host threads of a context, shared by every layer
// below the C ABI (table building, backends, models). A small fixed pool runs
// one parallel loop at a time. The calling thread takes part in the loop and
// is the only one that polls the interrupt callback, because bindings'
// callbacks (R, Julia) may only run on the thread that called into dirmn.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dirmn {

// The caller's interrupt callback (a dirmn_interrupt_fn), polled from the
// calling thread during long work -- table building, the backends' passes,
// the estimators' iterations; true means stop.
struct Interrupt {
  int (*fn)(void*) = nullptr;
  void* user = nullptr;
  bool poll() const { return fn != nullptr && fn(user) != 0; }
};

class ThreadPool {
 public:
  // Starts threads - 1 workers (the caller is the last thread). Throws
  // std::system_error or std::bad_alloc when threads cannot be started.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs body(chunk) for every chunk in [0, chunks), spread over the pool.
  // `poll` is called on the calling thread between its chunks; when it returns
  // true no further chunks start and run() returns false once started chunks
  // finish. Chunks run concurrently: body must only write chunk-private data,
  // and must not throw on a worker thread (that ends the process); an
  // exception from a chunk the caller runs stops the loop and is rethrown
  // once the workers have left it.
  bool run(int64_t chunks, const std::function<void(int64_t)>& body,
           const std::function<bool()>& poll);

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* body_ = nullptr;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<bool> cancel_{false};
  // Workers the current loop still wants: a worker takes one when it wakes.
  // The caller withdraws the rest once every chunk has started, so it never
  // waits for a worker that has not woken up yet (on a busy or virtual
  // machine a wake-up can take longer than a small loop).
  int tickets_ = 0;
  int active_ = 0;  // workers inside drain()
  bool stop_ = false;
};

// A context's host threads: a pool whose size may change between calls.
// Every backend of the context and every table it builds share one.
class HostThreads {
 public:
  // Starts `threads` threads (0: one per core). Throws std::system_error or
  // std::bad_alloc when they cannot be started.
  explicit HostThreads(int threads) : pool_(std::make_unique<ThreadPool>(resolve(threads))) {}

  int size() const { return pool_->size(); }

  // Replaces the pool by one of `threads` threads (0: one per core). False
  // when they cannot be started; the old pool then stays.
  bool resize(int threads);

  // ThreadPool::run on the current pool.
  bool run(int64_t chunks, const std::function<void(int64_t)>& body,
           const std::function<bool()>& poll) {
    return pool_->run(chunks, body, poll);
  }

  // Runs body(i) for i in [0, n) without polling: on the calling thread
  // alone where there is one index or one thread. Bodies write only data of
  // their own i and must not throw.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& body);

  // The same, on the calling thread alone where the whole loop costs less
  // than kInlineWork units (a unit: about a cell's arithmetic): waking the
  // threads and waiting for them costs tens of microseconds, more than a
  // small table's pass (an EM iteration on mite makes several).
  static constexpr int64_t kInlineWork = int64_t{1} << 15;
  void parallel_for(int64_t n, const std::function<void(int64_t)>& body, double work) {
    if (work < static_cast<double>(kInlineWork)) {
      for (int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    parallel_for(n, body);
  }
  // run(), likewise (the interrupt polled once, before).
  bool run(int64_t chunks, const std::function<void(int64_t)>& body,
           const std::function<bool()>& poll, double work) {
    if (work < static_cast<double>(kInlineWork)) {
      if (poll && poll()) return false;
      for (int64_t i = 0; i < chunks; ++i) body(i);
      return true;
    }
    return run(chunks, body, poll);
  }

  // 0 (one thread per core) resolved to the core count.
  static int resolve(int threads);

 private:
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace dirmn
