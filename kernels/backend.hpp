// backend.hpp: the one internal interface between the C ABI layer (capi/) and
// the compute backends (CPU, CUDA). capi/ validates every argument, converts
// parameters to plain alpha and builds the compact host table; a backend only
// computes. Backends never format error strings: they return a status and,
// for device failures, a static description that capi/ turns into a message.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dirmn.h"

namespace dirmn {

// How a stored count is encoded. Integer counts use the narrowest unsigned
// type holding the table's largest count; real-valued or very large counts
// use double.
enum class ValueType : uint8_t { U8 = 0, U16 = 1, U32 = 2, F64 = 3 };

inline int value_bits(ValueType t) {
  switch (t) {
    case ValueType::U8: return 8;
    case ValueType::U16: return 16;
    case ValueType::U32: return 32;
    case ValueType::F64: return 64;
  }
  return 64;
}

inline size_t value_bytes(ValueType t) { return static_cast<size_t>(value_bits(t) / 8); }

// A validated counts table in compact form, in host memory. Dense tables are
// row-major (rows x cols); sparse tables are CSR with sorted column indices
// and no stored zeros.
struct HostTable {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  bool sparse = false;
  bool real_valued = false;
  ValueType vtype = ValueType::U8;
  double max_count = 0.0;
  double total = 0.0;
  std::vector<unsigned char> values;  // rows*cols (dense) or nnz (sparse) encoded counts
  std::vector<int64_t> row_ptr;       // sparse: rows + 1 offsets
  std::vector<uint32_t> col_idx;      // sparse: nnz column indices
  std::vector<double> row_total;      // N_b
  std::vector<double> row_lcoef;      // lgamma(N_b + 1) - sum_v lgamma(n_bv + 1)
  std::vector<double> row_max;        // largest count in each row
  std::vector<int64_t> row_argmax;    // its column (the first, on ties)
  std::vector<double> col_max;        // largest count in each column
  std::vector<int64_t> col_nnz;       // nonzeros in each column
};

// Outcome of a backend call. `what` is a static description (for example the
// CUDA call that failed), never owned memory.
struct BackendResult {
  dirmn_status status = DIRMN_SUCCESS;
  const char* what = "";
  int code = 0;  // backend-specific (e.g. a cudaError_t)
  bool ok() const { return status == DIRMN_SUCCESS; }
};

// Polled from the calling thread during long work; true means stop.
struct Interrupt {
  dirmn_interrupt_fn fn = nullptr;
  void* user = nullptr;
  bool poll() const { return fn != nullptr && fn(user) != 0; }
};

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
constexpr double kRegroupMinCount = 65536.0;

// One likelihood request. Parameters arrive as validated alpha, contiguous:
// k vectors of length cols (shared alpha), or rows vectors (rowwise).
struct LoglikRequest {
  const double* alpha = nullptr;  // host memory
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

struct Histograms;

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

// A caller's table in device memory (dirmn_counts_wrap_device). capi/ has
// checked sizes, strides, dtype and options; the backend checks the memory and
// the values.
struct DeviceDenseInput {
  int64_t rows = 0;
  int64_t cols = 0;
  dirmn_dtype dtype = DIRMN_FLOAT32;  // INT32, FLOAT32 or FLOAT64
  const void* data = nullptr;
  int64_t row_stride = 0;  // elements; 0 where rows == 1
  int64_t col_stride = 0;  // elements; 0 where cols == 1
  bool real_valued = false;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
};

// A caller's CSR table in device memory (dirmn_counts_wrap_device_sparse).
struct DeviceCsrInput {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  dirmn_index_type index_type = DIRMN_INDEX_INT32;
  const void* ptr = nullptr;      // rows + 1 entries
  const void* indices = nullptr;  // nnz entries (NULL when nnz == 0)
  dirmn_dtype value_dtype = DIRMN_FLOAT32;
  const void* values = nullptr;   // nnz entries (NULL when nnz == 0)
  bool real_valued = false;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
};

// What a backend found wrong with device data, for capi/ to word. Which
// fields mean something depends on `kind`.
struct CountsProblem {
  enum Kind : uint8_t {
    kNone = 0,
    kBadCount,     // row, col, value, why
    kBadPointer,   // entry (index into ptr), value, prev (ptr[entry - 1]), nnz
    kBadIndex,     // entry (index into indices), row, value (the index)
    kRepeatedIndex // row, col
  };
  Kind kind = kNone;
  int64_t row = -1;
  int64_t col = -1;
  int64_t entry = -1;
  double value = 0.0;
  double prev = 0.0;
  const char* why = "";  // static text, for kBadCount
};

// The description of a table a backend made from device data, for the
// counts handle (mirrors the HostTable fields capi/ would otherwise read).
struct CountsSummary {
  int64_t nnz = 0;
  double max_count = 0.0;
  double total = 0.0;
  bool sparse = false;
  int value_bits = 0;  // 0: the caller's array is referenced, not copied
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual dirmn_backend kind() const = 0;
  virtual int device() const = 0;
  virtual BackendResult set_threads(int threads) = 0;
  virtual int threads() const = 0;
  // Runs body(i) for i in [0, n), on the backend's host threads where it has
  // them (bodies must write only data of their own i, must not throw, and
  // do no interrupt polling).
  virtual void parallel_for(int64_t n, const std::function<void(int64_t)>& body) {
    for (int64_t i = 0; i < n; ++i) body(i);
  }
  // A backend without host threads of its own may borrow these (a CPU
  // backend's) for its host-side work; null: none.
  virtual void use_host_threads(std::shared_ptr<Backend> /*threads*/) {}
  // Takes a validated host table; on success *out holds the backend's copy.
  virtual BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out) = 0;
  virtual BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                               const Interrupt& interrupt) = 0;
  virtual BackendResult row_totals(const BackendCounts& counts, double* host_out) = 0;
  // Count histograms of the table with optional row weights (rows entries,
  // validated by the caller), built in one pass.
  // (histograms_multi with one weighting; defined in histogram.cpp).
  virtual BackendResult histograms(const BackendCounts& counts, const double* weights,
                                   Histograms* out, const Interrupt& interrupt);
  // Count histograms for k weightings at once (weights: rows x k,
  // row-major), in one pass over the table: the M step of a mixture.
  virtual BackendResult histograms_multi(const BackendCounts&, const double* weights, int64_t k,
                                         std::vector<Histograms>* out,
                                         const Interrupt& interrupt) {
    (void)weights; (void)k; (void)out; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "count histograms on this backend", 0};
  }
  // Mixture EM with the responsibilities kept beside the table (the CUDA
  // backend, for tables whose histograms it makes): em_begin sets the
  // responsibilities z and M-step weights w (rows x k, row-major, host) and
  // the row weights (rows, or null for 1); em_histograms builds the k
  // histograms of the current w in one pass (into *out, or kept on the
  // device for em_fit when out is null); em_estep evaluates the rows x k
  // full log-likelihoods for alpha (k x cols) and log_pi (k) and replaces z
  // and w by the E step's (keeping the previous z); em_download copies the
  // current and previous z (rows x k) and the per-row log-sum-exp (rows) to
  // the host (any may be null). NOT_SUPPORTED where the backend lacks them:
  // the EM loop then runs on the host.
  struct EmStep {
    double loglik = 0.0;      // sum_b r_b lse_b
    double max_change = 0.0;  // largest |z_new - z_old|
    std::vector<double> z_sum, w_sum;  // per component: sum_b z_bj, sum_b w_bj
  };
  virtual BackendResult em_begin(const BackendCounts&, int64_t k, const double* z, const double* w,
                                 const double* row_weights) {
    (void)k; (void)z; (void)w; (void)row_weights;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM on this backend", 0};
  }
  virtual BackendResult em_histograms(const BackendCounts&, int64_t k, std::vector<Histograms>* out) {
    (void)k; (void)out;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM on this backend", 0};
  }
  // The M step's fits where the last em_histograms(..., nullptr) left the
  // histograms: for each component j with fit[j], Newton's method from the
  // warm start alpha + j * cols (host, k x cols), as fit_from_histograms
  // with these settings; a fitted component's alpha is replaced by the fit
  // (each at least alpha_floor). Components the backend does not fit as the
  // host would (the multinomial limit, Minka's step) come back kHost: the
  // caller fits those from em_fetch_histograms.
  struct EmFitSettings {
    double tolerance = 0.0;
    int max_iterations = 0;
    double prior_shape = 0.0, prior_rate = 0.0;  // rate 0: no prior
    double alpha_floor = 0.0;
  };
  struct EmFitOutcome {
    enum Status { kHost = 0, kFitted = 1, kNoCounts = 2 };
    std::vector<int> status;                 // per component
    std::vector<double> log_prior, log_det;  // as FitOutcome's, for kFitted components
  };
  virtual BackendResult em_fit(const BackendCounts&, int64_t k, const EmFitSettings& settings,
                               const char* fit, double* alpha, EmFitOutcome* out) {
    (void)k; (void)settings; (void)fit; (void)alpha; (void)out;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device M-step fits on this backend", 0};
  }
  // The host histograms of the last em_histograms (made with out null).
  virtual BackendResult em_fetch_histograms(const BackendCounts&, int64_t k, std::vector<Histograms>* out) {
    (void)k; (void)out;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM on this backend", 0};
  }
  virtual BackendResult em_estep(const BackendCounts&, int64_t k, const double* alpha,
                                 const double* log_pi, EmStep* out, const Interrupt& interrupt) {
    (void)k; (void)alpha; (void)log_pi; (void)out; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM on this backend", 0};
  }
  virtual BackendResult em_download(const BackendCounts&, int64_t k, double* z, double* z_prev,
                                    double* lse) {
    (void)k; (void)z; (void)z_prev; (void)lse;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM on this backend", 0};
  }
  // The validated table in host memory, where the backend keeps one
  // (nullptr otherwise: the C ABI layer then keeps its own copy).
  virtual const HostTable* host_table(const BackendCounts&) const { return nullptr; }
  virtual BackendResult rowwise_derivatives(const BackendCounts&, const RowwiseDerivRequest& req,
                                            const Interrupt& interrupt) {
    (void)req; (void)interrupt;
    return {DIRMN_ERROR_NOT_SUPPORTED, "per-row derivatives on this backend", 0};
  }
  // CUDA-only services; the CPU backend reports NOT_SUPPORTED.
  virtual BackendResult set_stream(void* stream) = 0;
  virtual BackendResult get_stream(void** stream) const = 0;
  virtual BackendResult synchronize() = 0;
  // Device-memory input (CUDA only). On INVALID_COUNTS or INVALID_ARGUMENT
  // *problem says where; on success *out and *summary are set.
  virtual BackendResult wrap_device_dense(const DeviceDenseInput& in,
                                          std::unique_ptr<BackendCounts>* out,
                                          CountsSummary* summary, CountsProblem* problem) {
    (void)in; (void)out; (void)summary; (void)problem;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
  virtual BackendResult wrap_device_csr(const DeviceCsrInput& in,
                                        std::unique_ptr<BackendCounts>* out,
                                        CountsSummary* summary, CountsProblem* problem) {
    (void)in; (void)out; (void)summary; (void)problem;
    return {DIRMN_ERROR_NOT_SUPPORTED, "device arrays need a CUDA context", 0};
  }
};

std::unique_ptr<Backend> make_cpu_backend(int threads, BackendResult* result);

// Defined by the CUDA backend when it is compiled in, else by a stub that
// reports BACKEND_UNAVAILABLE.
bool cuda_compiled();
BackendResult cuda_device_count(int* count);
std::unique_ptr<Backend> make_cuda_backend(int device, BackendResult* result);

}  // namespace dirmn
