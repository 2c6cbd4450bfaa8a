// fault_hooks.cpp: see fault_hooks.hpp.
#include "fault_hooks.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>

namespace fault {
namespace {

std::atomic<int> g_scopes{0};
std::atomic<int64_t> g_count[2];
std::atomic<int64_t> g_target[2];
std::atomic<size_t> g_above{0};
std::atomic<int64_t> g_injected{0};

// Whether this event (of `bytes`, for an allocation) is to fail.
bool should_fail(Kind kind, size_t bytes) {
  if (g_scopes.load(std::memory_order_relaxed) == 0) return false;
  const int64_t n = g_count[kind].fetch_add(1, std::memory_order_relaxed) + 1;
  const size_t above = g_above.load(std::memory_order_relaxed);
  if (n == g_target[kind].load(std::memory_order_relaxed) ||
      (kind == kAlloc && above > 0 && bytes >= above)) {
    g_injected.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void* allocate(size_t bytes, size_t align) noexcept {
  if (should_fail(kAlloc, bytes)) return nullptr;
  if (bytes == 0) bytes = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(bytes);
  void* p = nullptr;
  return posix_memalign(&p, align, bytes) == 0 ? p : nullptr;
}

void* allocate_or_throw(size_t bytes, size_t align) {
  void* p = allocate(bytes, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void arm(Kind kind, int64_t n) { g_target[kind].store(n); }
void arm_above(size_t bytes) { g_above.store(bytes); }
void disarm() {
  g_target[kAlloc].store(0);
  g_target[kThread].store(0);
  g_above.store(0);
}
int64_t counted(Kind kind) { return g_count[kind].load(); }
int64_t injected() { return g_injected.load(); }
void reset() {
  g_count[kAlloc].store(0);
  g_count[kThread].store(0);
  g_injected.store(0);
}

Counting::Counting() { g_scopes.fetch_add(1); }
Counting::~Counting() { g_scopes.fetch_sub(1); }

}  // namespace fault

// The replaceable global allocation functions ([new.delete]).
void* operator new(size_t n) { return fault::allocate_or_throw(n, 0); }
void* operator new[](size_t n) { return fault::allocate_or_throw(n, 0); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return fault::allocate(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return fault::allocate(n, 0); }
void* operator new(size_t n, std::align_val_t a) {
  return fault::allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return fault::allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fault::allocate(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fault::allocate(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

// Thread creation, as std::thread reaches it; EAGAIN is what the C library
// answers when a process may start no more threads.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                              void* (*start)(void*), void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Fn next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (fault::should_fail(fault::kThread, 0)) return EAGAIN;
  if (next == nullptr) return ENOSYS;
  return next(thread, attr, start, arg);
}
