// large_alloc.hpp: an allocator for the large arrays a call fills once
// (drawn rows, gathered entries), backed by transparent huge pages where
// Linux offers them.
//
// Each page a fresh array touches costs a fault; in a virtual machine a
// fault costs about a microsecond, so filling 100 MB of fresh 4 KiB pages
// spends more time in the kernel than in the draws that fill them. Asking
// for 2 MiB pages (madvise(MADV_HUGEPAGE), honoured where THP is "always"
// or "madvise") takes one fault per 2 MiB. Small arrays, and every other
// platform, take the ordinary heap.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dirmn {

// Arrays from this size up are aligned to and advised as huge pages.
constexpr size_t kHugePageBytes = size_t{2} << 20;

inline void* large_allocate(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageBytes) {
    const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* p = std::aligned_alloc(kHugePageBytes, rounded);
    if (p == nullptr) throw std::bad_alloc();
    (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: refused, the pages are small
    return p;
  }
#endif
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// std::allocator's interface over large_allocate (stateless: every
// instance frees what another allocated).
template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(large_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const LargeAllocator<U>&) const noexcept { return false; }
};

// A vector whose large buffers are huge-page backed.
template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace dirmn
