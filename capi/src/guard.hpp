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
#include "handles.hpp"
#include "use.hpp"

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

// The answer to a call on a context that another call holds. Another thread
// gets its message in the thread's slot (dirmn_last_error(NULL)): the
// context's slot belongs to the call in flight. A callback of a call on the
// same thread gets it in the context's slot, which only that thread uses.
inline dirmn_status refuse_in_use(const dirmn_context* ctx, const char* fn, InUse::State state) {
  if (state == InUse::kBusy)
    return fail(nullptr, DIRMN_ERROR_CONTEXT_IN_USE, fn,
                "the context is in use by a call on another thread (a context serves one call "
                "at a time; use one context per thread)");
  return fail(const_cast<dirmn_context*>(ctx), DIRMN_ERROR_CONTEXT_IN_USE, fn,
              "called from a callback of a call on the same context (only queries may be: "
              "dirmn_last_error, dirmn_last_error_location, dirmn_context_get_threads, ...)");
}

// The same as guarded() for functions that need a context: NULL_POINTER
// without one, CONTEXT_IN_USE while another call holds it. A query
// (Clear::kNo, which changes nothing) is served from a callback of a call on
// the same thread; anything else is refused there too.
template <class F>
dirmn_status with_context(const dirmn_context* ctx, const char* fn, F&& body,
                          Clear clear = Clear::kYes) noexcept {
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "context is NULL");
  InUse use(*ctx->use);
  if (use.state() == InUse::kBusy || (use.state() == InUse::kReentered && clear == Clear::kYes))
    return refuse_in_use(ctx, fn, use.state());
  return guarded(ctx, fn, static_cast<F&&>(body), clear);
}

// For the query functions of a handle that belongs to a context (counts,
// mixtures: `flag` is their context's), reporting into the thread's slot.
template <class F>
dirmn_status with_owner(const UseFlag* flag, const char* fn, F&& body) noexcept {
  if (flag == nullptr) return guarded(nullptr, fn, static_cast<F&&>(body), Clear::kNo);
  InUse use(*const_cast<UseFlag*>(flag));
  if (use.state() == InUse::kBusy) return refuse_in_use(nullptr, fn, use.state());
  return guarded(nullptr, fn, static_cast<F&&>(body), Clear::kNo);
}

}  // namespace capi
}  // namespace dirmn
