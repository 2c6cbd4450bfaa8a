// backend.hpp: the steps a compute backend (CPU, CUDA) offers, and which of
// them it supports for a stored table. The estimators (models/) are written
// against these steps alone; stored_table.hpp decides where each runs.
// capi/ has validated every argument and converted parameters to plain
// alpha; a backend only computes. Backends never word messages: they return
// a status and a static description (for device failures, the call that
// failed) that capi/ turns into one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dirmn.h"
#include "table/histogram.hpp"
#include "table/input.hpp"
#include "table/large_alloc.hpp"
#include "table/table.hpp"
#include "thread_pool.hpp"

namespace dirmn {

// Outcome of a backend call. `what` is a static description (for example the
// CUDA call that failed), never owned memory.
struct BackendResult {
  dirmn_status status = DIRMN_SUCCESS;
  const char* what = "";
  int code = 0;  // backend-specific (e.g. a cudaError_t)
  bool ok() const { return status == DIRMN_SUCCESS; }
};

// The steps, with the bits dirmn_counts_info reports them by.
enum class Step : uint32_t {
  kLoglik = DIRMN_STEP_LOGLIK,
  kLoglikRowwise = DIRMN_STEP_LOGLIK_ROWWISE,
  kDerivativesRowwise = DIRMN_STEP_DERIVATIVES_ROWWISE,
  kHistograms = DIRMN_STEP_HISTOGRAMS,
  kMixtureEm = DIRMN_STEP_MIXTURE_EM,
  kMixtureFits = DIRMN_STEP_MIXTURE_FITS,
};
constexpr Step kAllSteps[] = {Step::kLoglik,    Step::kLoglikRowwise, Step::kDerivativesRowwise,
                              Step::kHistograms, Step::kMixtureEm,    Step::kMixtureFits};

// A counts table as a backend stores it.
class BackendCounts {
 public:
  virtual ~BackendCounts() = default;
};

// Rows whose largest count reaches this are evaluated in regrouped form:
// lpoch(alpha*, n*) - lpoch(A, N) = lpoch(alpha*, A - alpha*) -
// lpoch(alpha* + n*, (A - alpha*) + (N - n*)), where * is the row's largest
// count. Both sides are exact, but on the left two terms of size ~N log N
// cancel to a small result and double rounding of them (~1e-8 at N = 2^24)
// would swamp it; on the right nothing large is subtracted as long as the
// rest of alpha, A - alpha*, is below n* (checked per row and alpha).
// Stored tables keep each row's largest count (row_peak) from this size on.
constexpr double kRegroupMinCount = kRowPeakMinCount;

// One likelihood request. Parameters arrive as validated alpha, contiguous:
// k vectors of length cols (shared alpha), or rows vectors (rowwise).
struct LoglikRequest {
  const double* alpha = nullptr;  // host memory
  // Nonzero: alpha's contents are those of the last request with the same
  // version (the C ABI layer's parameter memo), so tables made from them
  // may be reused without comparing them. 0: unknown.
  uint64_t alpha_version = 0;
  int64_t k = 1;
  bool rowwise = false;
  bool full = false;
  bool fast = false;         // DIRMN_PRECISION_FAST
  double* out = nullptr;     // host or device memory (out_on_device)
  int64_t out_stride_row = 1;
  int64_t out_stride_k = 1;
  bool out_on_device = false;
  bool async = false;
};

// Per-row derivatives with per-row alpha. Outputs are contiguous host
// arrays (rows, rows x cols row-major, rows x cols, rows); any may be null,
// except that log_param with hessian_diag needs gradient too.
struct RowwiseDerivRequest {
  const double* alpha = nullptr;  // rows x cols, contiguous
  bool full = false;
  bool log_param = false;         // derivatives with respect to log alpha
  double* loglik = nullptr;
  double* gradient = nullptr;
  double* hessian_diag = nullptr;
  double* hessian_scalar = nullptr;
};

// ---- Mixture EM -------------------------------------------------------------

// What an E step leaves for the EM loop: sums over rows (in a fixed order,
// so they repeat bit for bit).
struct EmStep {
  double loglik = 0.0;      // sum_b r_b lse_b (r the row weights, lse the row's log-sum-exp)
  double max_change = 0.0;  // largest |z_new - z_old|
  std::vector<double> z_sum, w_sum;  // per component: sum_b z_bj, sum_b w_bj
};

// The M step's component fits (EmState::fit_components): Newton's method on
// each component's weighted histograms, a bounded number of safeguarded
// steps from a warm start (a generalized EM), to convergence from a cold
// one.
struct EmFitSettings {
  double tolerance = 0.0;
  int warm_iterations = 0;  // at most this many steps from a warm start
  int full_iterations = 0;  // ... and from the method of moments' start
  double prior_shape = 0.0, prior_rate = 0.0;  // rate 0: no prior
  double alpha_floor = 0.0;      // every fitted alpha is at least this
  double limit_precision = 0.0;  // ML's multinomial limit: the proportions times this
  // The histograms' weights are the caller's times 2^-weight_exponent
  // (models/weights.hpp); the prior and log_det follow (as FitSettings').
  int weight_exponent = 0;
};
struct EmFitOutcome {
  // kNotFitted: not asked for. kFitted: alpha replaced. kNoCounts: the
  // component's weights see no counts; its alpha is kept.
  enum Status { kNotFitted = 0, kFitted = 1, kNoCounts = 2 };
  std::vector<int> status;      // per component
  std::vector<char> converged;  // kFitted components: whether the fit converged
  // kFitted components: the prior's log density, and the log det of the
  // caller's Hessian in log alpha (each fitted column's entry times
  // 2^weight_exponent).
  std::vector<double> log_prior, log_det;
  // Fits that the state's own device did not make ran on the host.
  bool host_fallback = false;
  void reset(int64_t k) {
    const size_t n = static_cast<size_t>(k);
    status.assign(n, kNotFitted);
    converged.assign(n, 0);
    log_prior.assign(n, 0.0);
    log_det.assign(n, 0.0);
    host_fallback = false;
  }
};

// The responsibilities of a mixture and the steps of its EM that read them,
// on one stored table with k components. The same few steps on every
// backend; one EM loop (models/mixture.cpp) drives them.
class EmState {
 public:
  virtual ~EmState() = default;
  // Sets the responsibilities z and the M step's weights w (rows x k,
  // row-major, host memory; w_bj = r_b z_bj). The responsibilities before
  // the last E step (download's z_prev) stay as they were.
  virtual BackendResult begin(const double* z, const double* w) = 0;
  // The k histograms of the current weights, in one pass over the table,
  // kept where fit_components reads them.
  virtual BackendResult histograms(const Interrupt& interrupt) = 0;
  // For each component j with fit[j], from the histograms kept by the last
  // histograms(): the fit from the start alpha + j * cols (host, k x cols)
  // where warm[j], else from the method of moments' start; a fitted
  // component's alpha replaces its start. *out is reset to k components
  // first. The fits run where the histograms are, or on `threads` (the
  // host's engine, host_fit.hpp).
  virtual BackendResult fit_components(const EmFitSettings& settings, const char* fit,
                                       const char* warm, HostThreads& threads, double* alpha,
                                       EmFitOutcome* out) = 0;
  // The E step for alpha (k x cols, host) and log_pi (k): the rows x k full
  // log-likelihoods, turned into new z and w by log-sum-exp.
  virtual BackendResult e_step(const double* alpha, const double* log_pi, EmStep* out,
                               const Interrupt& interrupt) = 0;
  // Copies the current z, the z before the last E step (rows x k) and the
  // rows' log-sum-exp of the last E step (rows) to host memory; any may be
  // null.
  virtual BackendResult download(double* z, double* z_prev, double* lse) = 0;
  // The histograms the last histograms() kept, where they are in host
  // memory (fit_components reads them; a table split over ranks sums them
  // over the ranks in place first); null where a device keeps them.
  virtual std::vector<Histograms>* host_histograms() { return nullptr; }
};

// ---- Sampling ---------------------------------------------------------------

// A table drawn from the Dirichlet-multinomial (dirmn_sample), row by row
// as math/dm_draw.hpp draws it, so that every backend draws the same table
// for a seed.
struct SampleRequest {
  int64_t rows = 0, cols = 0;
  // Validated alphas, each vector contiguous: k vectors (rowwise false) or
  // one per row (rowwise true; k is then rows).
  const double* alpha = nullptr;
  int64_t k = 1;
  bool rowwise = false;
  // Row b's size: sizes[b * sizes_stride], validated (below 2^31).
  const int64_t* sizes = nullptr;
  int64_t sizes_stride = 0;
  // k > 1, not rowwise: row b's vector, validated (models/sample.hpp's
  // resolve_components draws it where the caller gave weights).
  const int64_t* component = nullptr;
  uint64_t seed = 0;
  // Row b draws as row first_row + b of the seed's table (its stream).
  uint64_t first_row = 0;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;  // the stored form of the table made
};

// A table's rows in host memory as CSR: column indices ascending within
// each row, no zeros. Written once and read once: huge-page backed.
struct CsrRows {
  LargeVector<int64_t> ptr;    // rows + 1
  LargeVector<int64_t> col;    // nnz
  LargeVector<int32_t> count;  // nnz
};

// ---- The backend ------------------------------------------------------------

class Backend {
 public:
  virtual ~Backend() = default;
  virtual dirmn_backend kind() const = 0;
  virtual int device() const = 0;
  // Whether this backend runs `step` for `counts` itself.
  virtual bool supports(Step step, const BackendCounts& counts) const = 0;

  // Takes a validated host table; on success *out holds the backend's copy
  // and *info describes it.
  virtual BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out,
                              TableInfo* info) = 0;
  // The same from a table the caller keeps (a device context's host
  // backend takes it over next, so that a large table is not copied on the
  // host first). The default copies it and adopts the copy.
  virtual BackendResult adopt_copy(const HostTable& table, std::unique_ptr<BackendCounts>* out,
                                   TableInfo* info) {
    HostTable copy;
    try {
      copy = table;
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host copy of a counts table", 0};
    }
    return adopt(std::move(copy), out, info);
  }
  // Device-memory input (CUDA only): validates and stores it. On
  // INVALID_COUNTS or INVALID_ARGUMENT *problem says where.
  virtual BackendResult wrap_device_dense(const DenseInput& in, std::unique_ptr<BackendCounts>* out,
                                          TableInfo* info, CountsProblem* problem) {
    (void)in; (void)out; (void)info; (void)problem;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
  virtual BackendResult wrap_device_sparse(const SparseInput& in,
                                           std::unique_ptr<BackendCounts>* out, TableInfo* info,
                                           CountsProblem* problem) {
    (void)in; (void)out; (void)info; (void)problem;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
  // The validated table in host memory, where the backend keeps one.
  virtual const HostTable* host_table(const BackendCounts&) const { return nullptr; }
  // Draws a table on this backend and stores it there (validated by
  // construction: integer counts below 2^31). NOT_SUPPORTED where the
  // backend draws none itself (the host draws it then); OUT_OF_MEMORY,
  // CANCELLED (the interrupt, polled between batches of rows), DEVICE.
  virtual BackendResult sample(const SampleRequest& req, std::unique_ptr<BackendCounts>* out,
                               TableInfo* info, const Interrupt& interrupt) {
    (void)req; (void)out; (void)info; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "tables drawn on this backend", 0};
  }
  // The rows of a table this backend drew (sample), copied to host memory
  // as CSR. NOT_SUPPORTED for other tables.
  virtual BackendResult download_rows(const BackendCounts& counts, CsrRows* out) {
    (void)counts; (void)out;
    return {DIRMN_ERROR_NOT_SUPPORTED, "host copies of this backend's tables", 0};
  }

  virtual BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                               const Interrupt& interrupt) = 0;
  virtual BackendResult row_totals(const BackendCounts& counts, double* host_out) = 0;
  // Count histograms for k weightings at once (weights: rows x k,
  // row-major, validated; null for one unweighted histogram), in one pass.
  virtual BackendResult histograms(const BackendCounts& counts, const double* weights, int64_t k,
                                   std::vector<Histograms>* out, const Interrupt& interrupt) {
    (void)counts; (void)weights; (void)k; (void)out; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "count histograms on this backend", 0};
  }
  virtual BackendResult rowwise_derivatives(const BackendCounts& counts,
                                            const RowwiseDerivRequest& req,
                                            const Interrupt& interrupt) {
    (void)counts; (void)req; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "per-row derivatives on this backend", 0};
  }
  // A mixture's state beside the table, for k components with row weights
  // (rows entries, host; null for 1). NOT_SUPPORTED where the backend
  // keeps none for this table or k.
  virtual BackendResult make_em_state(const BackendCounts& counts, int64_t k,
                                      const double* row_weights, std::unique_ptr<EmState>* out) {
    (void)counts; (void)k; (void)row_weights; (void)out;
    return {DIRMN_ERROR_NOT_SUPPORTED, "a mixture's state beside the table", 0};
  }

  // The caller's arrays in device memory (CUDA only; NOT_SUPPORTED
  // elsewhere). check_caller_device: `p` is memory of this backend's
  // device that its kernels may use, else INVALID_ARGUMENT (what_not_device).
  // read_/write_caller_device: the same check, then a copy of `bytes`
  // between it and host memory in the order of the context's stream,
  // waited for.
  virtual BackendResult check_caller_device(const void* p, const char* what_not_device) const {
    (void)p; (void)what_not_device;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
  virtual BackendResult read_caller_device(void* host_dst, const void* src, size_t bytes,
                                           const char* what_not_device) {
    (void)host_dst; (void)src; (void)bytes; (void)what_not_device;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
  virtual BackendResult write_caller_device(void* dst, const void* host_src, size_t bytes,
                                            const char* what_not_device) {
    (void)dst; (void)host_src; (void)bytes; (void)what_not_device;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }

  // CUDA only; the CPU backend reports NOT_SUPPORTED (and synchronizes
  // trivially).
  virtual BackendResult set_stream(void* stream) = 0;
  virtual BackendResult get_stream(void** stream) const = 0;
  virtual BackendResult synchronize() = 0;
};

// The CPU backend, on the context's host threads.
std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<HostThreads> threads,
                                          BackendResult* result);

// Defined by the CUDA backend when it is compiled in, else by a stub that
// reports BACKEND_UNAVAILABLE. The host threads serve its host-side work.
bool cuda_compiled();
BackendResult cuda_device_count(int* count);
std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<HostThreads> threads,
                                           BackendResult* result);

}  // namespace dirmn
