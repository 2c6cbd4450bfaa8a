// cuda_util.cuh: CUDA status handling and the small RAII types the backend
// builds on (device selection, grow-only device and pinned buffers).
//
// Every CUDA call the backend makes goes through DIRMN_CUDA_TRY, which turns
// a failure into a BackendResult naming the call. Non-sticky errors are
// cleared on the way out so the context stays usable after a failed call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "../backend.hpp"

namespace dirmn {
namespace cuda {

// Maps a CUDA status to a backend result. `what` is a static string naming
// the call (and, where useful, what it was for).
inline BackendResult from_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  // Clears the runtime's record of a non-sticky error; a sticky error (a
  // kernel fault) survives this and is reported again by later calls.
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation) return {DIRMN_ERROR_OUT_OF_MEMORY, what, static_cast<int>(e)};
  return {DIRMN_ERROR_DEVICE, what, static_cast<int>(e)};
}

#define DIRMN_CUDA_TRY(call, what)                                      \
  do {                                                                  \
    const cudaError_t dirmn_cuda_status_ = (call);                      \
    if (dirmn_cuda_status_ != cudaSuccess)                              \
      return ::dirmn::cuda::from_cuda(dirmn_cuda_status_, what);        \
  } while (0)

#define DIRMN_TRY(expr)                                                 \
  do {                                                                  \
    const ::dirmn::BackendResult dirmn_result_ = (expr);                \
    if (!dirmn_result_.ok()) return dirmn_result_;                      \
  } while (0)

// Makes `device` current for a scope and restores the caller's device after,
// so dirmn never changes the device a host thread (or PyTorch) had selected.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device_) status_ = cudaSetDevice(device_);
  }
  ~DeviceGuard() {
    if (previous_ >= 0 && previous_ != device_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  BackendResult result() const { return from_cuda(status_, "cudaSetDevice"); }

 private:
  int device_;
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

// Device memory that only grows: reserve() keeps the allocation when it is
// large enough, so repeated calls of one shape allocate nothing. Contents are
// not preserved across a growth.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int device) : device_(device) {}
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      device_ = o.device_;
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void set_device(int device) { device_ = device; }

  // The device must be current.
  BackendResult reserve(size_t bytes, const char* what) {
    if (bytes <= bytes_ && ptr_ != nullptr) return {};
    release();
    void* p = nullptr;
    DIRMN_CUDA_TRY(cudaMalloc(&p, bytes == 0 ? 1 : bytes), what);
    ptr_ = p;
    bytes_ = bytes;
    return {};
  }

  void release() {
    if (ptr_ == nullptr) return;
    DeviceGuard guard(device_);
    // A failure here (for example during process teardown, after the runtime
    // unloaded) leaves nothing to recover; the error is cleared, not raised.
    if (cudaFree(ptr_) != cudaSuccess) (void)cudaGetLastError();
    ptr_ = nullptr;
    bytes_ = 0;
  }

  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  int device_ = 0;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory, grow-only. Asynchronous copies from it return at
// once; the owner must not rewrite it before the copy has run (see
// CudaBackend's staging event).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  BackendResult reserve(size_t bytes, const char* what) {
    if (bytes <= bytes_ && ptr_ != nullptr) return {};
    release();
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
      const BackendResult r = from_cuda(e, what);
      // A failed page-locked allocation is a host out-of-memory condition.
      return {e == cudaErrorMemoryAllocation ? DIRMN_ERROR_OUT_OF_MEMORY : r.status, what, r.code};
    }
    ptr_ = p;
    bytes_ = bytes;
    return {};
  }
  void release() {
    if (ptr_ == nullptr) return;
    if (cudaFreeHost(ptr_) != cudaSuccess) (void)cudaGetLastError();
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Checks that `p` is memory kernels on `device` may access: device memory of
// that device, managed memory, or mapped host memory.
inline BackendResult check_device_pointer(const void* p, int device, const char* what_not_device) {
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return {DIRMN_ERROR_INVALID_ARGUMENT, what_not_device, static_cast<int>(e)};
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      if (attr.device != device) return {DIRMN_ERROR_INVALID_ARGUMENT, what_not_device, 0};
      return {};
    case cudaMemoryTypeManaged: return {};
    case cudaMemoryTypeHost:
      if (attr.devicePointer == p) return {};
      return {DIRMN_ERROR_INVALID_ARGUMENT, what_not_device, 0};
    default: return {DIRMN_ERROR_INVALID_ARGUMENT, what_not_device, 0};
  }
}

template <class T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}
template <class T>
__host__ __device__ constexpr T round_up(T a, T b) {
  return ceil_div(a, b) * b;
}

}  // namespace cuda
}  // namespace dirmn
