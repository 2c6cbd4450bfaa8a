// fault_hooks.hpp: failure injection for the fault-injection driver, at
// build time (compiled only into dirmn_fault): the program's global
// operator new/delete and pthread_create (which std::thread calls) are
// replaced by versions that fail the n-th allocation, or the n-th thread
// creation, counted inside a Counting scope. A malloc shim under
// LD_PRELOAD would fight AddressSanitizer's interceptors; these forward to
// malloc and to the next pthread_create, which ASan intercepts as usual, so
// its leak check sees every block.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fault {

enum Kind { kAlloc = 0, kThread = 1 };

// Fails the n-th event of `kind` counted from now (n >= 1; 0: none).
void arm(Kind kind, int64_t n);
// Fails every allocation of at least `bytes` counted from now (0: none).
void arm_above(size_t bytes);
void disarm();

// Events counted, and failures injected, since the last reset().
int64_t counted(Kind kind);
int64_t injected();
void reset();

// Events are counted (and may fail) only while a Counting scope is open on
// some thread: the driver opens one around each library call, so that its
// own allocations are not counted; allocations on the library's worker
// threads during the call are.
struct Counting {
  Counting();
  ~Counting();
  Counting(const Counting&) = delete;
  Counting& operator=(const Counting&) = delete;
};

}  // namespace fault
