// cuda_unavailable.cpp: the CUDA entry points of a build without CUDA. The
// API stays the same; asking for CUDA reports that it was not compiled in.
#include "backend.hpp"

namespace dirmn {

bool cuda_compiled() { return false; }

BackendResult cuda_device_count(int* count) {
  *count = 0;
  return {DIRMN_ERROR_BACKEND_UNAVAILABLE, "dirmn was built without CUDA", 0};
}

std::unique_ptr<Backend> make_cuda_backend(int, std::shared_ptr<HostThreads>, BackendResult* result) {
  *result = {DIRMN_ERROR_BACKEND_UNAVAILABLE, "dirmn was built without CUDA", 0};
  return nullptr;
}

}  // namespace dirmn
