#include "thread_pool.hpp"

#include <algorithm>
#include <new>
#include <system_error>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace dirmn {

ThreadPool::ThreadPool(int threads) {
  const int extra = threads > 1 ? threads - 1 : 0;
  workers_.reserve(static_cast<size_t>(extra));
  try {
    for (int i = 0; i < extra; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain() {
  const auto& body = *body_;
  for (;;) {
    if (cancel_.load(std::memory_order_relaxed)) return;
    const int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
    if (c >= chunks_) return;
    body(c);
  }
}

void ThreadPool::worker_loop() {
#if defined(__linux__)
  // A name users see in top -H, gdb and /proc/<pid>/task/*/comm, and by which
  // the bindings' tests tell the pool's threads from their runtime's own.
  pthread_setname_np(pthread_self(), "dirmn-worker");
#endif
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || tickets_ > 0; });
      if (stop_) return;
      --tickets_;
      ++active_;
    }
    drain();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_.notify_one();
    }
  }
}

bool ThreadPool::run(int64_t chunks, const std::function<void(int64_t)>& body,
                     const std::function<bool()>& poll) {
  if (chunks <= 0) return true;
  const int helpers = static_cast<int>(
      std::min<int64_t>(static_cast<int64_t>(workers_.size()), chunks - 1));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    cancel_.store(false, std::memory_order_relaxed);
    tickets_ = helpers;
  }
  for (int i = 0; i < helpers; ++i) wake_.notify_one();

  // Every chunk has started (or the loop was cancelled, or the caller's
  // chunk threw): workers still asleep are not needed; wait only for those
  // at work, which may still read body_.
  const auto finish = [&] {
    std::unique_lock<std::mutex> lock(mutex_);
    tickets_ = 0;
    done_.wait(lock, [&] { return active_ == 0; });
    body_ = nullptr;
  };
  bool cancelled = false;
  try {
    for (;;) {
      if (poll && poll()) {
        cancelled = true;
        cancel_.store(true, std::memory_order_relaxed);
        break;
      }
      const int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks_) break;
      body(c);
    }
  } catch (...) {
    cancel_.store(true, std::memory_order_relaxed);
    finish();
    throw;
  }
  finish();
  return !cancelled;
}

int HostThreads::resolve(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

bool HostThreads::resize(int threads) {
  const int n = resolve(threads);
  if (n == pool_->size()) return true;
  try {
    pool_ = std::make_unique<ThreadPool>(n);
  } catch (const std::system_error&) {
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

void HostThreads::parallel_for(int64_t n, const std::function<void(int64_t)>& body) {
  if (n <= 1 || pool_->size() == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  pool_->run(n, body, [] { return false; });
}

}  // namespace dirmn
