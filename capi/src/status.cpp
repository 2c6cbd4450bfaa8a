// status.cpp: the header's Version and Status sections, and the queries of
// the last failure.
#include <cstring>

#include "guard.hpp"
#include "handles.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

extern "C" {

unsigned dirmn_version_number(void) { return DIRMN_VERSION_NUMBER; }

const char* dirmn_version_string(void) {
#define DIRMN_STR2(x) #x
#define DIRMN_STR(x) DIRMN_STR2(x)
  return DIRMN_STR(DIRMN_VERSION_MAJOR) "." DIRMN_STR(DIRMN_VERSION_MINOR) "." DIRMN_STR(
      DIRMN_VERSION_PATCH);
#undef DIRMN_STR
#undef DIRMN_STR2
}

const char* dirmn_status_string(dirmn_status status) {
  switch (status) {
    case DIRMN_SUCCESS: return "success";
    case DIRMN_ERROR_NULL_POINTER: return "null pointer";
    case DIRMN_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case DIRMN_ERROR_INVALID_COUNTS: return "invalid counts";
    case DIRMN_ERROR_INVALID_PARAMETER: return "invalid parameter";
    case DIRMN_ERROR_DIMENSION_MISMATCH: return "dimension mismatch";
    case DIRMN_ERROR_WRONG_CONTEXT: return "wrong context";
    case DIRMN_ERROR_OUT_OF_MEMORY: return "out of memory";
    case DIRMN_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case DIRMN_ERROR_DEVICE: return "device error";
    case DIRMN_ERROR_OVERFLOW: return "size overflow";
    case DIRMN_ERROR_CANCELLED: return "cancelled";
    case DIRMN_ERROR_NOT_SUPPORTED: return "not supported";
    case DIRMN_ERROR_CONTEXT_IN_USE: return "context in use";
    case DIRMN_ERROR_COMMUNICATION: return "communication failed";
    case DIRMN_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* dirmn_status_name(dirmn_status status) {
  switch (status) {
    case DIRMN_SUCCESS: return "DIRMN_SUCCESS";
    case DIRMN_ERROR_NULL_POINTER: return "DIRMN_ERROR_NULL_POINTER";
    case DIRMN_ERROR_INVALID_ARGUMENT: return "DIRMN_ERROR_INVALID_ARGUMENT";
    case DIRMN_ERROR_INVALID_COUNTS: return "DIRMN_ERROR_INVALID_COUNTS";
    case DIRMN_ERROR_INVALID_PARAMETER: return "DIRMN_ERROR_INVALID_PARAMETER";
    case DIRMN_ERROR_DIMENSION_MISMATCH: return "DIRMN_ERROR_DIMENSION_MISMATCH";
    case DIRMN_ERROR_WRONG_CONTEXT: return "DIRMN_ERROR_WRONG_CONTEXT";
    case DIRMN_ERROR_OUT_OF_MEMORY: return "DIRMN_ERROR_OUT_OF_MEMORY";
    case DIRMN_ERROR_BACKEND_UNAVAILABLE: return "DIRMN_ERROR_BACKEND_UNAVAILABLE";
    case DIRMN_ERROR_DEVICE: return "DIRMN_ERROR_DEVICE";
    case DIRMN_ERROR_OVERFLOW: return "DIRMN_ERROR_OVERFLOW";
    case DIRMN_ERROR_CANCELLED: return "DIRMN_ERROR_CANCELLED";
    case DIRMN_ERROR_NOT_SUPPORTED: return "DIRMN_ERROR_NOT_SUPPORTED";
    case DIRMN_ERROR_CONTEXT_IN_USE: return "DIRMN_ERROR_CONTEXT_IN_USE";
    case DIRMN_ERROR_COMMUNICATION: return "DIRMN_ERROR_COMMUNICATION";
    case DIRMN_ERROR_INTERNAL: return "DIRMN_ERROR_INTERNAL";
  }
  return "DIRMN_STATUS_UNKNOWN";
}

const char* dirmn_last_error(const dirmn_context* ctx) {
  return dirmn::capi::slot_of(ctx).message;
}

dirmn_status dirmn_last_error_location(const dirmn_context* ctx, dirmn_error_location* location) {
  // Records no failure of its own: the location asked about stays.
  if (location == nullptr) return DIRMN_ERROR_NULL_POINTER;
  if (location->size < offsetof(dirmn_error_location, argument) + sizeof(const char*))
    return DIRMN_ERROR_INVALID_ARGUMENT;
  const ErrorSlot& s = dirmn::capi::slot_of(ctx);
  dirmn_error_location full;
  std::memset(&full, 0, sizeof full);
  full.size = location->size;
  full.argument = s.where.argument;
  full.row = s.where.row;
  full.column = s.where.column;
  full.vector = s.where.vector;
  full.index = s.where.index;
  full.has_value = s.where.has_value ? 1 : 0;
  full.value = s.where.has_value ? s.where.value : 0.0;
  full.detail = s.message + s.detail_at;
  full.has_integer_value = s.where.has_integer ? 1 : 0;
  full.integer_value = s.where.has_integer ? s.where.integer : 0;
  std::memcpy(location, &full, location->size < sizeof full ? location->size : sizeof full);
  return DIRMN_SUCCESS;
}

int dirmn_backend_compiled(dirmn_backend backend) {
  switch (backend) {
    case DIRMN_BACKEND_AUTO:
    case DIRMN_BACKEND_CPU: return 1;
    case DIRMN_BACKEND_CUDA: return dirmn::cuda_compiled() ? 1 : 0;
  }
  return 0;
}

dirmn_status dirmn_cuda_device_count(int* count) {
  static const char* fn = "dirmn_cuda_device_count";
  return dirmn::capi::guarded(nullptr, fn, [&] {
    if (count == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "count is NULL");
    *count = 0;
    if (!dirmn::cuda_compiled())
      return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE, fn, "dirmn was built without CUDA");
    int n = 0;
    const dirmn::BackendResult r = dirmn::cuda_device_count(&n);
    if (!r.ok()) return dirmn::capi::fail_backend(nullptr, fn, r);
    *count = n;
    return DIRMN_SUCCESS;
  }, dirmn::capi::Clear::kNo);
}

}  // extern "C"
