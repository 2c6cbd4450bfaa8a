// communicator.cpp: the header's Communicators section.
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "args.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"

struct dirmn_communicator {
  std::shared_ptr<dirmn::capi::CallbackCommunicator> impl;
};

namespace dirmn {
namespace capi {

dirmn_status refuse_split(dirmn_context* ctx, const char* fn, const dirmn_counts* counts) {
  if (counts == nullptr || !counts->comm) return DIRMN_SUCCESS;
  return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
              "the counts are one rank's rows of a table split over a communicator: %s does not "
              "sum over ranks in this release (dirmn_fit, dirmn_loglik_sum, "
              "dirmn_overdispersion_test, dirmn_reg_fit and the mixture fits do)",
              fn);
}

dirmn_status vote(dirmn_context* ctx, const char* fn, const dirmn_counts* counts, dirmn_status local) {
  if (counts == nullptr || counts->call == nullptr) return local;
  const BackendResult r =
      counts->call->agree(local == DIRMN_SUCCESS ? BackendResult{} : BackendResult{local, "", 0});
  if (local != DIRMN_SUCCESS) return local;
  return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
}

dirmn_status agree_on_arguments(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                                std::initializer_list<Agreed> args) {
  if (counts == nullptr || counts->call == nullptr) return DIRMN_SUCCESS;
  dirmn::Collective& c = *counts->call;
  const size_t R = static_cast<size_t>(c.comm().ranks()), n = args.size();
  std::vector<double> slots;
  dirmn_status local = DIRMN_SUCCESS;
  try {
    slots.assign(R * n, 0.0);
  } catch (const std::bad_alloc&) {
    local = fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the ranks' arguments");
  }
  if (dirmn_status s = vote(ctx, fn, counts, local)) return s;
  size_t i = static_cast<size_t>(c.comm().rank()) * n;
  for (const Agreed& a : args) slots[i++] = a.value;
  if (const BackendResult r = c.comm().allreduce(slots.data(), slots.size()); !r.ok())
    return fail_backend(ctx, fn, r);
  for (size_t q = 1; q < R; ++q) {
    size_t j = 0;
    for (const Agreed& a : args) {
      const double mine = slots[q * n + j], first = slots[j];
      if (mine != first && !(std::isnan(mine) && std::isnan(first)))
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "rank %zu's %s (%.17g) differs from rank 0's (%.17g): every rank of a collective call "
                    "passes the same",
                    q, a.name, mine, first);
      ++j;
    }
  }
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn

extern "C" {

dirmn_status dirmn_communicator_create(dirmn_communicator** comm,
                                       const dirmn_communicator_callbacks* callbacks) {
  static const char* fn = "dirmn_communicator_create";
  using dirmn::capi::fail;
  return dirmn::capi::guarded(nullptr, fn, [&] {
    if (comm == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "comm is NULL");
    *comm = nullptr;
    if (callbacks == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "callbacks is NULL");
    if (callbacks->size < sizeof(dirmn_communicator_callbacks))
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "callbacks->size (%zu) is too small; set it to sizeof(dirmn_communicator_callbacks)",
                  callbacks->size);
    if (callbacks->ranks < 1)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn, "callbacks->ranks (%d) is below 1",
                  callbacks->ranks);
    if (callbacks->rank < 0 || callbacks->rank >= callbacks->ranks)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn, "callbacks->rank (%d) is outside [0, %d)",
                  callbacks->rank, callbacks->ranks);
    const struct {
      const char* what;
      bool missing;
    } needed[] = {{"callbacks->allreduce_int64", callbacks->allreduce_int64 == nullptr},
                  {"callbacks->allreduce_double", callbacks->allreduce_double == nullptr},
                  {"callbacks->broadcast", callbacks->broadcast == nullptr}};
    for (const auto& n : needed)
      if (n.missing) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "%s is NULL", n.what);
    dirmn_communicator_callbacks cb = *callbacks;
    cb.size = sizeof cb;
    try {
      auto c = std::make_unique<dirmn_communicator>();
      c->impl = std::make_shared<dirmn::capi::CallbackCommunicator>(cb);
      *comm = c.release();
    } catch (const std::bad_alloc&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the communicator");
    }
    return DIRMN_SUCCESS;
  });
}

void dirmn_communicator_destroy(dirmn_communicator* comm) { delete comm; }

dirmn_status dirmn_communicator_get_rank(const dirmn_communicator* comm, int* rank, int* ranks) {
  static const char* fn = "dirmn_communicator_get_rank";
  if (comm == nullptr) return dirmn::capi::fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "comm is NULL");
  if (rank != nullptr) *rank = comm->impl->rank();
  if (ranks != nullptr) *ranks = comm->impl->ranks();
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_counts_set_communicator(dirmn_context* ctx, dirmn_counts* counts,
                                           dirmn_communicator* comm) {
  static const char* fn = "dirmn_counts_set_communicator";
  return dirmn::capi::with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    if (comm == nullptr) {
      if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
      counts->comm.reset();
      counts->histograms = dirmn::HistogramCache();
      return DIRMN_SUCCESS;
    }
    // Collective from here: a local failure is voted, never just returned.
    // The gather's vector is had before the vote: nothing allocates after it.
    dirmn::Collective c(*comm->impl);
    dirmn_status local = check_counts_use(ctx, fn, counts);
    std::vector<int64_t> cols;
    if (local == DIRMN_SUCCESS) {
      try {
        cols.assign(static_cast<size_t>(comm->impl->ranks()), 0);
      } catch (const std::bad_alloc&) {
        local = fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the ranks' column counts");
      }
    }
    dirmn::BackendResult r =
        c.agree(local == DIRMN_SUCCESS ? dirmn::BackendResult{} : dirmn::BackendResult{local, "", 0});
    if (local != DIRMN_SUCCESS) return local;
    if (!r.ok()) return fail_backend(ctx, fn, r);
    if (!(r = c.gather(counts->info.cols, &cols)).ok()) return fail_backend(ctx, fn, r);
    for (size_t q = 1; q < cols.size(); ++q)
      if (cols[q] != cols[0])
        return fail(ctx, DIRMN_ERROR_DIMENSION_MISMATCH, fn,
                    "rank %zu's counts have %" PRId64 " columns, rank 0's %" PRId64
                    " (every rank's rows of a table have its columns)",
                    q, cols[q], cols[0]);
    counts->histograms = dirmn::HistogramCache();
    counts->comm = comm->impl;
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
