// guard.hpp: the one entry and exit of every exported function. It clears
// the error slot the call reports into, runs the body, and turns anything
// the body throws into a status and a message, so that no exception
// crosses the C boundary (the way mlverse-torch's lantern wraps its C entry
// points).
#pragma once

#include <exception>
#include <new>
#include <system_error>

#include "errors.hpp"

namespace dirmn {
namespace capi {

// Whether a call starts by clearing the slot it reports into. Queries of a
// const handle (dirmn_context_get_threads, ...) leave the last failure's
// message for the caller to read.
enum class Clear { kYes, kNo };

// Runs body() for `fn`, reporting into ctx's slot (the thread's when ctx is
// null).
template <class F>
dirmn_status guarded(const dirmn_context* ctx, const char* fn, F&& body,
                     Clear clear = Clear::kYes) noexcept {
  auto* c = const_cast<dirmn_context*>(ctx);
  if (clear == Clear::kYes) clear_error(ctx);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(c, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory");
  } catch (const std::system_error&) {
    return fail(c, DIRMN_ERROR_OUT_OF_MEMORY, fn, "threads could not be started");
  } catch (const std::exception& e) {
    return fail(c, DIRMN_ERROR_INTERNAL, fn, "unexpected exception (%s)", e.what());
  } catch (...) {
    return fail(c, DIRMN_ERROR_INTERNAL, fn, "unexpected exception");
  }
}

// The same for functions that need a context: NULL_POINTER without one.
template <class F>
dirmn_status with_context(const dirmn_context* ctx, const char* fn, F&& body,
                          Clear clear = Clear::kYes) noexcept {
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "context is NULL");
  return guarded(ctx, fn, static_cast<F&&>(body), clear);
}

}  // namespace capi
}  // namespace dirmn
