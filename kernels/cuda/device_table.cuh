// device_table.cuh: a counts table as the CUDA backend stores it, the table
// plan chosen for it, and the host-side entry points of the kernels (defined
// in the other .cu files of this folder).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../table/histogram.hpp"
#include "cuda_util.cuh"
#include "loglik_types.cuh"
#include "tuning.cuh"

namespace dirmn {
namespace cuda {

// Dense compact rows are padded to this many bytes so they can be read as
// 16-byte vectors.
constexpr int64_t kRowAlignBytes = 16;
// Zeroed entries after a CSR table's last, so the kernels' aligned block
// reads (up to 8 entries) never leave the arrays.
constexpr int64_t kCsrSlackEntries = 8;
// Dynamic shared memory a kernel gets without opting in.
constexpr size_t kDefaultSharedLimit = 48 * 1024;

// The rows ordered by total, made once per table the first time histograms
// are asked for: weighted row-total histograms are then segmented sums
// (deterministic, no atomics), and the unweighted one is kept on the host.
struct TotalsIndex {
  explicit TotalsIndex(int dev) : order(dev), offsets(dev), distinct(dev) {}
  bool built = false;
  int64_t runs = 0;              // distinct row totals (0 included)
  DeviceBuffer order;            // uint32, rows: row indices sorted by total
  DeviceBuffer offsets;          // int64, runs + 1: where each total's rows start
  DeviceBuffer distinct;         // uint32, runs: the distinct totals, ascending
  std::vector<double> value;     // the same, on the host
  std::vector<double> count;     // rows with each
  double lcoef_sum = 0.0;        // unweighted sum of the log multinomial coefficients
};

// The table's description (TableInfo: shape, statistics, form; vtype
// matches `cell` for the compact forms) and what the kernels read.
struct DeviceTable : TableInfo {
  explicit DeviceTable(int dev)
      : device(dev), values_buf(dev), row_ptr(dev), col_idx(dev), panel_ptr(dev),
        row_total(dev), row_lcoef(dev), totals(dev), row_adjust(dev), chunked(dev) {}

  int device = 0;
  double max_row_total = 0.0;
  CellType cell = CellType::U8;  // a caller's array (wrapped) or the compact form's type
  bool integral = true;
  bool col16 = false;
  int vec = 1;        // dense: cells per vector read
  int64_t pitch = 0;  // dense: elements between rows
  const void* values = nullptr;
  DeviceBuffer values_buf;
  DeviceBuffer row_ptr;    // int64, rows + 1
  DeviceBuffer col_idx;    // uint16 or uint32, nnz
  DeviceBuffer panel_ptr;  // uint32, rows x (panels + 1), panels > 1
  DeviceBuffer row_total;  // double, rows
  DeviceBuffer row_lcoef;  // double, rows
  TablePlan plan;
  mutable TotalsIndex totals;  // built lazily (histograms), from the fields above
  // The backend's per-row normalisers for its current likelihood tables
  // (launch_build_row_adjust), valid while row_adjust_gen equals the
  // backend's table generation.
  mutable DeviceBuffer row_adjust;
  mutable uint64_t row_adjust_gen = 0;
  // The chunk-major copy the tensor-core histograms read (rows rounded up
  // to 32, times cols bytes), made by the first mixture fit that uses it
  // and kept with the table for the fits after it.
  mutable DeviceBuffer chunked;

  DenseView dense_view() const {
    DenseView v;
    v.values = values;
    v.pitch = pitch;
    v.rows = rows;
    v.cols = cols;
    v.row_total = row_total.get<double>();
    v.row_lcoef = row_lcoef.get<double>();
    return v;
  }
  CsrView csr_view() const {
    CsrView v;
    v.row_ptr = row_ptr.get<int64_t>();
    v.col = col_idx.get();
    v.values = values;
    v.panel_ptr = panel_ptr.get<uint32_t>();
    v.rows = rows;
    v.cols = cols;
    v.row_total = row_total.get<double>();
    v.row_lcoef = row_lcoef.get<double>();
    return v;
  }
};

// Chooses the table geometry from the table's statistics (fields above the
// plan must be set).
TablePlan make_plan(const DeviceTable& t);

// Width of the column panels that split `cols` columns into panels of at
// most `max_width` (a multiple of `group`, the columns one lane group reads
// per step): the width, a multiple of `group`, that leaves the least padding
// over all panels. Every panel's blocks then carry about the same work; a
// narrow last panel would finish early and leave its multiprocessors idle.
int64_t balanced_panel_width(int64_t cols, int64_t max_width, int64_t group);

struct LaunchEnv {
  cudaStream_t stream = nullptr;
  int device = 0;
  int sm_count = 1;
  // The loaded code has Hopper's warpgroup MMA (wgmma_available): the
  // tensor-core kernels take their sm_90a form.
  bool wgmma = false;
  // The loaded tensor-core kernels have their MMAs (tensor_mma_available).
  bool tensor_mma = false;
};

// Grid of a grid-stride kernel over `items` with kBlockThreads threads.
inline int stride_grid(int64_t items, int sm_count) {
  const int64_t want = ceil_div<int64_t>(std::max<int64_t>(items, 1), kBlockThreads);
  return static_cast<int>(std::min<int64_t>(want, int64_t{sm_count} * kStrideBlocksPerSm));
}

// Blocks of `kernel` that fit one multiprocessor with `smem` bytes of dynamic
// shared memory, raising the kernel's shared-memory limit where needed.
BackendResult kernel_occupancy(const void* kernel, size_t smem, int device, int* per_sm);
// Raises `kernel`'s dynamic shared-memory limit on `device` to at least
// `smem` where the default is too small; a no-op (no runtime call) once it
// has been raised that far.
BackendResult raise_shared_limit(const void* kernel, size_t smem, int device);

// loglik_tables.cu
BackendResult launch_build_tables(bool fast, const TableBuildArgs& args, const LaunchEnv& env);
BackendResult launch_finish_panels(int64_t rows, const double* row_total, const double* row_lcoef,
                                   const SharedAlphaArgs& args, const LaunchEnv& env);
// adjust[k * rows + b] = -(lpoch(A_k, N_b) - N_b log A_k), from args' sums
// and row-term tables.
BackendResult launch_build_row_adjust(int64_t rows, const double* row_total,
                                      const SharedAlphaArgs& args, double* adjust,
                                      const LaunchEnv& env);
// loglik_dense.cu
BackendResult launch_shared_dense(const TablePlan& plan, bool fast, const DenseView& view,
                                  const SharedAlphaArgs& args, const LaunchEnv& env);
BackendResult launch_rowwise_dense(const TablePlan& plan, const DenseView& view,
                                   const RowwiseArgs& args, const LaunchEnv& env);
// loglik_csr.cu
BackendResult launch_shared_csr(const TablePlan& plan, bool fast, const CsrView& view,
                                const SharedAlphaArgs& args, const LaunchEnv& env);
BackendResult launch_rowwise_csr(const TablePlan& plan, const CsrView& view,
                                 const RowwiseArgs& args, const LaunchEnv& env);

// histogram.cu: weighted per-column value histograms for k weightings
// (weights: rows x k, row-major, device memory; null for one unweighted
// histogram), hist: k x cols x bins, bins = max count + 1; 8-bit tables.
// `partial` is workspace the call may grow.
bool column_histogram_supported(const DeviceTable& t);
BackendResult launch_column_histograms(const DeviceTable& t, const double* weights, int64_t k,
                                       int bins, double* hist, DeviceBuffer& partial,
                                       const LaunchEnv& env);
// Whether the column-histogram grid of this table fits the launch limits
// (very wide dense tables exceed them; launch_column_histograms then
// reports NOT_SUPPORTED).
bool column_histograms_fit_grid(const DeviceTable& t, bool weighted, int bins);
// tensor_histogram.cu: the weighted column histograms of an EM's M step
// on the int8 tensor cores, for dense 8-bit tables with counts below 16 on
// devices of compute capability 8.0 or later. Exact for the weights rounded
// to 63-bit fixed point.
// Whether they serve this table and k weightings on the current device.
bool tensor_histograms_supported(const DeviceTable& t, int64_t k, const LaunchEnv& env);
// Makes t.chunked (stream-ordered).
BackendResult build_chunk_table(const DeviceTable& t, const LaunchEnv& env);
// As launch_column_histograms, from t.chunked; weights rows x k, >= 0,
// w_max[j] (device) at least the largest weight of weighting j: each
// weighting is scaled by a power of two at least its largest weight, so
// its weights are rounded to 2^-64 of it, however small it is.
BackendResult launch_tensor_histograms(const DeviceTable& t, const double* weights, const double* w_max,
                                       int64_t k, int bins, double* hist, DeviceBuffer& scratch,
                                       const LaunchEnv& env);
// The thresholds 1..T both tensor-core kernels test a table's counts
// against: T its largest count (at least 1).
inline int tensor_thresholds(const DeviceTable& t) { return std::max(1, static_cast<int>(t.max_count)); }
// tensor_loglik.cu: the log-likelihoods of a dense 8-bit table with counts
// below 16 under k >= 4 parameter vectors, on the int8 tensor cores (each
// vector's log terms in fixed point: 6 base-256 digits in double mode, 4 in
// fast mode). Whether they serve this table and k on the current device.
bool tensor_loglik_supported(const DeviceTable& t, int64_t k, const LaunchEnv& env);
// Whether the code the driver loaded for `device` has wgmma (an sm_90a
// image on a device of compute capability 9.0); asked once per context, on
// its stream (synchronously).
bool wgmma_available(int device, cudaStream_t stream);
// Whether the code the driver loaded for `device` has the tensor-core
// kernels' MMAs (the image came from compute capability 8.0 or later; in
// older targets their bodies are empty); asked once per context.
bool tensor_mma_available(int device);
// The fixed point's unit grows with the range of a vector's log terms, at
// most log(max alpha + 14) - log(min alpha) (counts up to 15): the backend
// takes the tensor cores only while that is at most kTensorLoglikMaxRange
// nats (alpha from 1e-19 to 1e8 spans 62), below 2^6, so the unit is at most
// 2^6 / 2^48 and a count's rounding at most 2^-43 = 1.1e-13 in double mode
// (2^-27 = 7.5e-9 in fast mode, 32 bits).
constexpr double kTensorLoglikTopShift = 14.0;
constexpr double kTensorLoglikMaxRange = 63.0;
// Makes the fixed-point tables (into `tables`, which the call may grow)
// from alpha (k x cols, device) and its sums (stream-ordered).
BackendResult build_tensor_loglik_tables(const DeviceTable& t, const double* alpha, const KSums* ksums,
                                         int64_t k, bool fast, DeviceBuffer& tables, const LaunchEnv& env);
// The log-likelihoods into a.out (a's row terms, sums, strides and `full`;
// a.k_total vectors), from the tables build_tensor_loglik_tables made with
// the same table, k and mode.
BackendResult launch_tensor_loglik(const DeviceTable& t, const SharedAlphaArgs& a, bool fast,
                                   const DeviceBuffer& tables, const LaunchEnv& env);
// Row-total statistics: tables with integer totals below 2^32.
bool totals_index_supported(const DeviceTable& t);
// Builds t.totals (synchronous).
BackendResult build_totals_index(const DeviceTable& t, TotalsIndex* ix, const LaunchEnv& env);
// For k weightings: seg_out[j * runs + i] = weight of the rows whose total
// is ix.value[i]; lcoef_out[j] = sum_b w_bj lcoef_b. Device pointers;
// `scratch` is workspace the call may grow.
BackendResult launch_total_sums(const DeviceTable& t, const TotalsIndex& ix, const double* weights,
                                int64_t k, double* seg_out, double* lcoef_out, DeviceBuffer& scratch,
                                const LaunchEnv& env);

// estep.cu: the E step of a mixture, responsibilities kept on the device.
// Per-row E-step values in aux: r_b lse_b, the largest responsibility
// change, lse_b.
constexpr int64_t kEmAux = 3;
struct EmDevice {
  int64_t rows = 0, k = 0;
  // The log-likelihoods: rows x k in L, or (L null, k <= kEmGroupMaxK) the
  // likelihood kernel's panel partials with what finishes a row (as
  // launch_finish_panels would), summed here instead.
  const double* L = nullptr;
  SharedAlphaArgs panel;
  const double* row_total = nullptr;
  const double* row_lcoef = nullptr;
  const double* row_w = nullptr;  // rows, or null for 1
  const double* z_old = nullptr;  // rows x k, the responsibilities before
  double* z = nullptr;            // rows x k, after
  double* w = nullptr;            // rows x k, r_b z_bj: the next M step's weights
  double* aux = nullptr;          // rows x kEmAux
  double* part = nullptr;         // em_reduced_columns(k) x em_reduce_runs(rows): partials
};
// Columns of the E step's reductions: [sum_b z_bj (k)][sum_b w_bj (k)]
// [sum_b r_b lse_b][max change][max_b w_bj (k)].
__host__ __device__ inline int64_t em_reduced_columns(int64_t k) { return 3 * k + 2; }
inline int64_t em_reduce_runs(int64_t rows) {
  return std::max<int64_t>(1, ceil_div<int64_t>(rows, kEmReduceRows));
}
// From the log-likelihoods (em.L, or em.panel's partials) and log_pi (k,
// device): z, w, aux, and reduced (em_reduced_columns).
BackendResult launch_estep(const EmDevice& em, const double* log_pi, double* reduced,
                           const LaunchEnv& env);

// mstep.cu: the M step's fits on the device -- Newton's method on log
// alpha from each component's histograms (launch_column_histograms' or
// launch_tensor_histograms' hist, launch_total_sums' seg_out), warm-started,
// as fit_from_histograms runs it on the host. Per component, status says
// what became of it, as backend.hpp's EmFitOutcome::Status: kNotFitted (the
// host's fit is needed: the multinomial limit, Minka's step), kFitted
// (alpha replaced, floored; log_prior and log_det set) or kNoCounts (the
// component's weights see no counts: alpha kept).
struct EmFitOut {
  int status = EmFitOutcome::kNotFitted;
  int iterations = 0;
  double log_prior = 0.0;  // the prior's log density at alpha (0 without a prior)
  double log_det = 0.0;    // log det of minus the objective's Hessian in log alpha
};
// Per component, the work area holds kEmFitArrays arrays of cols doubles
// (alpha, the trial alpha, gradient and Hessian diagonal at each, the step,
// each column's largest count),
// the row totals' cumulative band (at most em_fit_band_max(runs) long: the
// host keeps a band only within kHistBandFactor of its distinct totals) and
// their suffix sums (runs).
constexpr int64_t kEmFitArrays = 8;
__host__ __device__ inline int64_t em_fit_band_max(int64_t runs) {
  return static_cast<int64_t>(kHistBandFactor) * runs + static_cast<int64_t>(kHistBandSlack) +
         static_cast<int64_t>(kHistDenseMax);
}
__host__ __device__ inline int64_t em_fit_work_doubles(int64_t cols, int64_t runs) {
  return kEmFitArrays * cols + em_fit_band_max(runs) + runs;
}
struct EmFitArgs {
  int64_t k = 0, cols = 0;
  int bins = 0;
  const double* hist = nullptr;        // k x cols x bins
  const uint32_t* run_value = nullptr; // runs: the distinct row totals, ascending
  const double* run_weight = nullptr;  // k x runs
  int64_t runs = 0;
  const int* fit = nullptr;            // k: nonzero to fit component j
  double* alpha = nullptr;             // k x cols: warm starts in, fits out
  double* work = nullptr;              // k x em_fit_work_doubles(cols, runs)
  int64_t band_max = 0;                // em_fit_band_max(runs)
  EmFitOut* out = nullptr;             // k
  double tolerance = 0.0;
  int max_iterations = 0;
  double prior_shape = 0.0, prior_rate = 0.0;  // rate 0: no prior
  double prior_const = 0.0;            // shape log rate - lgamma(shape)
  double alpha_floor = 0.0;            // fitted alphas are at least this
};
BackendResult launch_em_fit(const EmFitArgs& args, const LaunchEnv& env);

// ingest_*.cu: building device tables.
// Copies a validated host table to the device (synchronous).
// `threads` narrow a CSR table's column indices to 16 bits on the host.
BackendResult upload_host_table(const HostTable& host, DeviceTable* t, HostThreads& threads,
                                const LaunchEnv& env);
// Validates a caller's device array and makes a table of it (synchronous).
BackendResult ingest_device_dense(const DenseInput& in, DeviceTable* t,
                                  CountsProblem* problem, const LaunchEnv& env);
BackendResult ingest_device_csr(const SparseInput& in, DeviceTable* t, CountsProblem* problem,
                                const LaunchEnv& env);

}  // namespace cuda
}  // namespace dirmn
