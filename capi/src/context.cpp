// context.cpp: the header's Contexts section.
#include <atomic>
#include <memory>
#include <new>
#include <system_error>
#include <thread>

#include "guard.hpp"
#include "handles.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace {

std::atomic<uint64_t> g_context_ids{1};

const char* const kStreamsOnCuda = "streams exist only on CUDA contexts; this one is on the CPU";

}  // namespace

extern "C" {

dirmn_status dirmn_context_create(dirmn_context** ctx, dirmn_backend backend, int device) {
  static const char* fn = "dirmn_context_create";
  return guarded(nullptr, fn, [&] {
    if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "ctx is NULL");
    if (backend != DIRMN_BACKEND_AUTO && backend != DIRMN_BACKEND_CPU &&
        backend != DIRMN_BACKEND_CUDA)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown backend %d",
                  static_cast<int>(backend));
    if (device < 0)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn, "device index %d is negative", device);
    std::unique_ptr<dirmn_context> c;
    try {
      c = std::make_unique<dirmn_context>();
      c->use = std::make_shared<UseFlag>();
    } catch (const std::bad_alloc&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the context");
    }
    c->id = g_context_ids.fetch_add(1);
    const int n_threads = dirmn::HostThreads::resolve(0);
    try {
      c->threads = std::make_shared<dirmn::HostThreads>(0);
    } catch (const std::bad_alloc&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the context's %d host threads", n_threads);
    } catch (const std::system_error&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "threads could not be started (%d host threads; the process may be at its "
                  "thread limit)",
                  n_threads);
    }

    bool want_cuda = backend == DIRMN_BACKEND_CUDA;
    if (backend == DIRMN_BACKEND_AUTO && dirmn::cuda_compiled()) {
      int n = 0;
      want_cuda = dirmn::cuda_device_count(&n).ok() && n > device;
    }
    BackendResult r;
    // Handing a backend to its shared_ptr allocates the control block.
    const auto share = [&](std::unique_ptr<dirmn::Backend> b,
                           std::shared_ptr<dirmn::Backend>* to) -> dirmn_status {
      try {
        *to = std::move(b);
      } catch (const std::bad_alloc&) {
        return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the context's backend handle");
      }
      return DIRMN_SUCCESS;
    };
    if (want_cuda) {
      if (!dirmn::cuda_compiled())
        return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE, fn,
                    "the CUDA backend was asked for, but dirmn was built without CUDA "
                    "(configure with -DDIRMN_CUDA=ON)");
      int n = 0;
      const BackendResult rc = dirmn::cuda_device_count(&n);
      if (!rc.ok() || device >= n)
        return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE, fn,
                    "CUDA device %d was asked for, but %d CUDA device(s) are usable%s%s", device, n,
                    rc.ok() ? "" : ": ", rc.ok() ? "" : rc.what);
      std::unique_ptr<dirmn::Backend> b = dirmn::make_cuda_backend(device, c->threads, &r);
      if (!b) return fail_backend(nullptr, fn, r);
      if (dirmn_status s = share(std::move(b), &c->backend)) return s;
      std::unique_ptr<dirmn::Backend> h = dirmn::make_cpu_backend(c->threads, &r);
      if (!h) return fail_backend(nullptr, fn, r);
      if (dirmn_status s = share(std::move(h), &c->host_backend)) return s;
    } else {
      std::unique_ptr<dirmn::Backend> b = dirmn::make_cpu_backend(c->threads, &r);
      if (!b) return fail_backend(nullptr, fn, r);
      if (dirmn_status s = share(std::move(b), &c->backend)) return s;
    }
    *ctx = c.release();
    return DIRMN_SUCCESS;
  });
}

void dirmn_context_destroy(dirmn_context* ctx) {
  if (ctx == nullptr) return;
  const std::shared_ptr<UseFlag> use = ctx->use;  // outlives ctx
  // The call in flight holds the context itself, and its caller reads
  // the context's message after it returns: the context cannot be freed
  // under it, even later.
  if (take_for_destroy(*use) == Take::kReentered) {
    fail(nullptr, DIRMN_ERROR_CONTEXT_IN_USE, "dirmn_context_destroy",
         "called from a callback of a call on this context: the context is kept (destroy it "
         "after the call returns)");
    return;
  }
  delete ctx;
  release(*use);
}

dirmn_status dirmn_context_backend(const dirmn_context* ctx, dirmn_backend* backend, int* device) {
  return with_context(ctx, "dirmn_context_backend", [&] {
    if (backend) *backend = ctx->backend->kind();
    if (device) *device = ctx->backend->device();
    return DIRMN_SUCCESS;
  }, dirmn::capi::Clear::kNo);
}

dirmn_status dirmn_context_set_threads(dirmn_context* ctx, int threads) {
  static const char* fn = "dirmn_context_set_threads";
  return with_context(ctx, fn, [&] {
    if (threads < 0)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "threads (%d) is negative", threads);
    if (!ctx->threads->resize(threads))
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "threads could not be started (%d host threads asked for: the process is at its "
                  "thread limit or out of memory); the context keeps its %d",
                  dirmn::HostThreads::resolve(threads), ctx->threads->size());
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_context_get_threads(const dirmn_context* ctx, int* threads) {
  static const char* fn = "dirmn_context_get_threads";
  return with_context(ctx, fn, [&] {
    if (threads == nullptr)
      return fail(const_cast<dirmn_context*>(ctx), DIRMN_ERROR_NULL_POINTER, fn, "threads is NULL");
    *threads = ctx->threads->size();
    return DIRMN_SUCCESS;
  }, dirmn::capi::Clear::kNo);
}

dirmn_status dirmn_context_set_precision(dirmn_context* ctx, dirmn_precision precision) {
  static const char* fn = "dirmn_context_set_precision";
  return with_context(ctx, fn, [&] {
    if (precision != DIRMN_PRECISION_DOUBLE && precision != DIRMN_PRECISION_FAST)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown precision %d",
                  static_cast<int>(precision));
    ctx->precision = precision;
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_context_set_interrupt(dirmn_context* ctx, dirmn_interrupt_fn fn_ptr,
                                         void* user_data) {
  return with_context(ctx, "dirmn_context_set_interrupt", [&] {
    ctx->interrupt.fn = fn_ptr;
    ctx->interrupt.user = user_data;
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_context_set_stream(dirmn_context* ctx, void* stream) {
  static const char* fn = "dirmn_context_set_stream";
  return with_context(ctx, fn, [&] {
    const BackendResult r = ctx->backend->set_stream(stream);
    if (r.status == DIRMN_ERROR_NOT_SUPPORTED) return fail(ctx, r.status, fn, "%s", kStreamsOnCuda);
    return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
  });
}

dirmn_status dirmn_context_get_stream(const dirmn_context* ctx, void** stream) {
  static const char* fn = "dirmn_context_get_stream";
  return with_context(ctx, fn, [&] {
    auto* mctx = const_cast<dirmn_context*>(ctx);  // only its error slot is written
    if (stream == nullptr) return fail(mctx, DIRMN_ERROR_NULL_POINTER, fn, "stream is NULL");
    const BackendResult r = ctx->backend->get_stream(stream);
    if (r.status == DIRMN_ERROR_NOT_SUPPORTED) return fail(mctx, r.status, fn, "%s", kStreamsOnCuda);
    return r.ok() ? DIRMN_SUCCESS : fail_backend(mctx, fn, r);
  }, dirmn::capi::Clear::kNo);
}

dirmn_status dirmn_context_synchronize(dirmn_context* ctx) {
  static const char* fn = "dirmn_context_synchronize";
  return with_context(ctx, fn, [&] {
    const BackendResult r = ctx->backend->synchronize();
    return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
  });
}

}  // extern "C"
