// cuda_support.hpp: shared test helpers that need the CUDA runtime: device
// memory a test case owns. Empty unless the tests are built with CUDA
// (DIRMN_TEST_CUDA), like the cases that use it; host helpers are in
// support.hpp.
#pragma once

#if defined(DIRMN_TEST_CUDA)

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dirmn_test {

// Device memory for a test, freed on scope exit.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count) : n(count) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(count, 1) * sizeof(T)) == cudaSuccess);
  }
  DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    REQUIRE(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> to_host() const {
    std::vector<T> h(n);
    REQUIRE(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
  }
};

}  // namespace dirmn_test

#endif  // DIRMN_TEST_CUDA
