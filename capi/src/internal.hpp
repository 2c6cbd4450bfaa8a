// internal.hpp: the handle types and error plumbing of the C ABI layer.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../../kernels/backend.hpp"
#include "../../kernels/histogram.hpp"
#include "dirmn.h"

namespace dirmn {
namespace capi {

// The shared parameter vectors dirmn_loglik last validated and converted,
// kept bit for bit with what they became. Evaluating one alpha again (a
// fitted model scoring several tables, a benchmark loop) then skips the
// validation and the exp of every entry, which for wide tables costs more
// than the device's whole pass: 16384 log-alphas take about 0.2 ms of host
// time on the H200's host, the table's likelihood 0.1 ms of GPU time.
struct ParamMemo {
  std::vector<double> input;  // the caller's values, vector-major (k x v)
  std::vector<double> alpha;  // their alphas, same layout
  dirmn_param kind = DIRMN_PARAM_ALPHA;
  int64_t n_vec = 0, v = 0;
  bool valid = false;

  // True when params (vector j, entry i at params[j * sj + i * si]) are,
  // bit for bit and of the same kind, the ones `alpha` was made from.
  bool matches(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
               dirmn_param kind_) const;
  // Records params as the source of `alpha` (valid on return; invalid and
  // returning false if the copy cannot be allocated).
  bool remember(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
                dirmn_param kind_);
};

}  // namespace capi
}  // namespace dirmn

struct dirmn_context {
  uint64_t id = 0;
  // Shared with every counts object made here, so counts stay destroyable
  // (and their device memory freeable) after the context handle is gone.
  std::shared_ptr<dirmn::Backend> backend;
  dirmn_precision precision = DIRMN_PRECISION_DOUBLE;
  dirmn::Interrupt interrupt;
  // CUDA contexts: a CPU backend for the operations the device lacks.
  std::shared_ptr<dirmn::Backend> host_backend;
  // The backend whose CPU threads run host-side work (fits, histogram
  // sums, mixture steps): a CUDA context's host backend, else the backend.
  dirmn::Backend& host_threads() const { return host_backend ? *host_backend : *backend; }
  std::vector<double> alpha_scratch;  // validated alpha, contiguous
  dirmn::capi::ParamMemo shared_params;  // dirmn_loglik's last shared alphas
  std::vector<double> out_scratch;    // results before they are copied out
  std::string last_error;
};

struct dirmn_counts {
  uint64_t context_id = 0;
  std::shared_ptr<dirmn::Backend> backend;     // declared before data: outlives it
  std::unique_ptr<dirmn::BackendCounts> data;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  double max_count = 0.0;
  double total = 0.0;
  uint32_t flags = 0;
  dirmn_storage storage = DIRMN_STORAGE_DENSE;
  int value_bits = 0;
  // Count histograms for shared-alpha sums and fits, kept while the row
  // weights they were built with are unchanged.
  std::unique_ptr<dirmn::Histograms> hist;
  // Where the backend keeps no host copy (CUDA), a CPU copy of the table:
  // for work that needs rows on the host (mixture initialisation) and for
  // operations the device backend does not implement.
  std::shared_ptr<dirmn::Backend> host_backend;   // declared before host_data
  std::unique_ptr<dirmn::BackendCounts> host_data;
  bool hist_weighted = false;
  std::vector<double> hist_weights;
};

namespace dirmn {
namespace capi {

// Records a failure: formats the message into the context (or, with a NULL
// context, into this thread's pre-context slot) and returns `status`.
dirmn_status fail(dirmn_context* ctx, dirmn_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// Formats a backend failure ("what" and a code) for the API function `fn`.
dirmn_status fail_backend(dirmn_context* ctx, const char* fn, const BackendResult& r);

void clear_error(dirmn_context* ctx);

// Validates row weights (finite, >= 0), naming the first bad row.
dirmn_status check_weights(dirmn_context* ctx, const char* fn, const double* w, int64_t rows);

// The validated table in host memory (the backend's or the host copy's);
// nullptr for counts wrapped from device memory.
const HostTable* host_view(const dirmn_counts* counts);

// Runs op(backend, backend_counts) on the counts' own backend, and where
// that reports NOT_SUPPORTED, on the CPU copy when there is one.
template <class Op>
BackendResult with_fallback(const dirmn_counts* counts, Op&& op) {
  BackendResult r = op(*counts->backend, *counts->data);
  if (r.status == DIRMN_ERROR_NOT_SUPPORTED && counts->host_data)
    r = op(*counts->host_backend, *counts->host_data);
  return r;
}

uint64_t next_context_id();

// Shape, type and stride checks shared by the host and device constructors.
dirmn_status check_dense_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                               dirmn_dtype dtype, int64_t row_stride, int64_t col_stride);
dirmn_status check_sparse_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                                int64_t nnz, dirmn_index_type index_type,
                                dirmn_dtype value_dtype);

// Builds the compact host table from caller data; on failure the message is
// recorded in ctx. Implemented in counts_build.cpp.
dirmn_status build_dense(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                         dirmn_dtype dtype, const void* data, int64_t row_stride,
                         int64_t col_stride, uint32_t flags, dirmn_storage storage,
                         int threads, HostTable* out);
dirmn_status build_sparse(dirmn_context* ctx, const char* fn, dirmn_sparse_format format,
                          int64_t rows, int64_t cols, int64_t nnz, dirmn_index_type index_type,
                          const void* ptr, const void* indices, dirmn_dtype value_dtype,
                          const void* values, uint32_t flags, dirmn_storage storage,
                          HostTable* out);

}  // namespace capi
}  // namespace dirmn
