// cuda_backend.cu: the CUDA backend -- one device, one stream (its own or the
// caller's), and a grow-only workspace reused across calls.
//
// A shared-alpha call is, on the context's stream:
//   1. upload alpha and (A_k, log A_k) through a page-locked staging buffer,
//   2. build the per-call tables (one small kernel),
//   3. one pass over the counts (one kernel; a second combines column
//      panels of very wide tables),
//   4. for host results, a copy back into page-locked memory and a wait.
// Steps 1-2 are skipped when alpha and the table geometry equal the previous
// call's (a byte comparison on the host): the tables are still in the
// workspace.
//
// Asynchronous calls return after step 3. Everything they read stays valid
// until the stream passes it: the staging buffer is rewritten only after an
// event shows the previous upload has run, workspace buffers grow only after
// the stream has drained, and a stream switch makes the new stream wait for
// the old one.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "../histogram.hpp"
#include "device_table.cuh"

namespace dirmn {
namespace cuda {
namespace {

// Parameters up to this size go through the page-locked staging buffer;
// larger ones are copied from the caller's (pageable) memory, which the
// runtime stages itself before cudaMemcpyAsync returns.
constexpr size_t kStagingMax = size_t{64} << 20;

// Downloaded histograms become the host's dense form in blocks of this many
// columns; from kParallelFormCols columns (over all weightings) on, the
// blocks run on the context's host threads.
constexpr int64_t kFormBlockCols = 128;
constexpr int64_t kParallelFormCols = 512;

class CudaBackend;

class CudaCounts final : public BackendCounts {
 public:
  CudaCounts(CudaBackend* owner, int device) : owner_(owner), table(device) {}
  ~CudaCounts() override;
  CudaBackend* owner_;
  DeviceTable table;
};

// Sum of alpha with Kahan compensation, as the CPU backend forms it.
double kahan_sum(const double* a, int64_t n) {
  double s = 0.0, comp = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = a[i] - comp;
    const double t = s + y;
    comp = (t - s) - y;
    s = t;
  }
  return s;
}

// Bins of a table's histograms by value: counts 0 .. max_count.
int histogram_bins(const DeviceTable& t) { return static_cast<int>(t.max_count) + 1; }

// What the tables in the workspace were built from.
struct TableKey {
  int cut = 0;
  int64_t panel_cols = 0;
  int panels = 0;
  int vec = 0;
  int lanes = 0;
  int64_t row_term_len = 0;
  int64_t cols = 0;
  int64_t k = 0;
  int bundle = 0;
  bool fast = false;
  bool operator==(const TableKey& o) const {
    return cut == o.cut && panel_cols == o.panel_cols && panels == o.panels && vec == o.vec &&
           lanes == o.lanes && row_term_len == o.row_term_len && cols == o.cols && k == o.k &&
           bundle == o.bundle && fast == o.fast;
  }
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, int sm_count)
      : device_(device), sm_count_(sm_count), params_(device), tables_(device),
        row_terms_(device), out_(device), partial_(device), rowwise_alpha_(device),
        hist_(device), hist_partial_(device), hist_scratch_(device), fit_(device), em_(device),
        tensor_tables_(device) {}

  ~CudaBackend() override {
    DeviceGuard guard(device_);
    if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
    params_.release();
    tables_.release();
    tensor_tables_.release();
    row_terms_.release();
    out_.release();
    partial_.release();
    rowwise_alpha_.release();
    hist_.release();
    hist_partial_.release();
    hist_scratch_.release();
    fit_.release();
    em_.release();
    stage_.release();
    host_out_.release();
    if (stage_done_ != nullptr) (void)cudaEventDestroy(stage_done_);
    if (switch_event_ != nullptr) (void)cudaEventDestroy(switch_event_);
    if (own_stream_ != nullptr) (void)cudaStreamDestroy(own_stream_);
    (void)cudaGetLastError();
  }

  BackendResult init() {
    DIRMN_CUDA_TRY(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
    DIRMN_CUDA_TRY(cudaEventCreateWithFlags(&stage_done_, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
    DIRMN_CUDA_TRY(cudaEventCreateWithFlags(&switch_event_, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
    stream_ = own_stream_;
    wgmma_ = wgmma_available(device_, stream_);
    tensor_mma_ = tensor_mma_available(device_);
    return {};
  }

  dirmn_backend kind() const override { return DIRMN_BACKEND_CUDA; }
  int device() const override { return device_; }
  BackendResult set_threads(int) override { return {}; }
  int threads() const override { return 1; }

  // Row statistics made once with the table, like the row totals: the rows'
  // order by total, which every histogram of a table whose histograms are
  // made on the device uses.
  // A failure (device memory) is not the caller's problem yet: the
  // likelihoods never need the order, and histograms build it when asked.
  BackendResult prepare_totals(const DeviceTable& t) {
    if (!column_histogram_supported(t) || !totals_index_supported(t)) return {};
    if (!build_totals_index(t, &t.totals, env()).ok()) {
      t.totals.built = false;
      (void)cudaGetLastError();
    }
    return {};
  }

  BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
    if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
    const BackendResult r = upload_host_table(table, &c->table, env());
    if (!r.ok()) return r;
    DIRMN_TRY(prepare_totals(c->table));
    *out = std::move(c);
    return {};
  }

  BackendResult wrap_device_dense(const DeviceDenseInput& in, std::unique_ptr<BackendCounts>* out,
                                  CountsSummary* summary, CountsProblem* problem) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    DIRMN_TRY(check_device_pointer(in.data, device_,
                                   "device_data is not device memory of this context's device"));
    std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
    if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
    DIRMN_TRY(ingest_device_dense(in, &c->table, problem, env()));
    DIRMN_TRY(prepare_totals(c->table));
    fill_summary(c->table, summary);
    *out = std::move(c);
    return {};
  }

  BackendResult wrap_device_csr(const DeviceCsrInput& in, std::unique_ptr<BackendCounts>* out,
                                CountsSummary* summary, CountsProblem* problem) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    DIRMN_TRY(check_device_pointer(in.ptr, device_,
                                   "device_ptr is not device memory of this context's device"));
    if (in.nnz > 0) {
      DIRMN_TRY(check_device_pointer(in.indices, device_,
                                     "device_indices is not device memory of this context's device"));
      DIRMN_TRY(check_device_pointer(in.values, device_,
                                     "device_values is not device memory of this context's device"));
    }
    std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
    if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
    DIRMN_TRY(ingest_device_csr(in, &c->table, problem, env()));
    DIRMN_TRY(prepare_totals(c->table));
    fill_summary(c->table, summary);
    *out = std::move(c);
    return {};
  }

  BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                       const Interrupt& interrupt) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    if (req.out_on_device)
      DIRMN_TRY(check_device_pointer(req.out, device_,
                                     "out is not device memory of this context's device"));
    const int64_t kk = req.rowwise ? 1 : req.k;
    double* out = req.out;
    int64_t out_sr = req.out_stride_row, out_sk = req.out_stride_k;
    if (!req.out_on_device) {
      DIRMN_TRY(grow(out_, static_cast<size_t>(t.rows * kk) * sizeof(double),
                     "cudaMalloc (results)"));
      out = out_.get<double>();
      out_sr = kk;
      out_sk = 1;
    }
    DIRMN_TRY(req.rowwise ? run_rowwise(t, req, out, out_sr) : run_shared(t, req, out, out_sr, out_sk));
    if (!req.out_on_device) return copy_results_out(t.rows, kk, req);
    if (!req.async) DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return {};
  }

  // One pass over the device table gives the per-column histograms; the
  // row-total histograms are segmented sums over the rows ordered by total
  // (an order made once per table). Tables other than 8-bit ones report
  // NOT_SUPPORTED and the C ABI layer uses its host copy.
  BackendResult histograms_multi(const BackendCounts& counts, const double* weights, int64_t k,
                                 std::vector<Histograms>* out, const Interrupt& interrupt) override {
    return histograms_k(counts, weights, k, out, interrupt);
  }

  // weights: host memory, or device memory when device_weights.
  // tensor_w_max: for the EM's M step on the tensor cores (t.chunked made),
  // each weighting's largest weight (device memory; weights are too).
  BackendResult histograms_k(const BackendCounts& counts, const double* weights, int64_t k,
                             std::vector<Histograms>* out, const Interrupt&,
                             bool device_weights = false, const double* tensor_w_max = nullptr) {
    DIRMN_TRY(make_histograms(counts, weights, k, device_weights, tensor_w_max));
    return fetch_histograms(counts, k, weights != nullptr, out);
  }

  // Where make_histograms leaves its results in hist_ (doubles):
  // [hist k x cols x bins][total sums k x runs][lcoef sums k], the last two
  // for weighted histograms only; row weights follow when uploaded.
  struct HistLayout {
    size_t cells, runs, results;
    double* hist;
    double* seg;
    double* lcoef;
  };
  HistLayout hist_layout(const DeviceTable& t, int64_t k, bool weighted) const {
    HistLayout l;
    const size_t kk = static_cast<size_t>(k);
    l.cells = static_cast<size_t>(t.cols) * static_cast<size_t>(histogram_bins(t));
    l.runs = static_cast<size_t>(t.totals.runs);
    l.results = kk * l.cells + (weighted ? kk * l.runs + kk : 0);
    l.hist = hist_.get<double>();
    l.seg = l.hist ? l.hist + kk * l.cells : nullptr;
    l.lcoef = l.seg ? l.seg + kk * l.runs : nullptr;
    return l;
  }

  // The k histograms on the device, in hist_ (hist_layout).
  BackendResult make_histograms(const BackendCounts& counts, const double* weights, int64_t k,
                                bool device_weights, const double* tensor_w_max) {
    const bool tensor = tensor_w_max != nullptr;
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    if (!column_histogram_supported(t) || !totals_index_supported(t))
      return {DIRMN_ERROR_NOT_SUPPORTED, "device histograms of a table wider than 8 bits", 0};
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    em_hist_valid_ = false;
    const LaunchEnv e = env();
    TotalsIndex& ix = t.totals;
    if (!ix.built) DIRMN_TRY(build_totals_index(t, &ix, e));
    const int bins = histogram_bins(t);
    const size_t rows = static_cast<size_t>(t.rows);
    const size_t kk = static_cast<size_t>(k);
    const size_t results = hist_layout(t, k, weights != nullptr).results;
    const bool upload_weights = weights && !device_weights;
    DIRMN_TRY(grow(hist_, (results + (upload_weights ? rows * kk : 0)) * sizeof(double),
                   "cudaMalloc (histogram workspace)"));
    const HistLayout l = hist_layout(t, k, weights != nullptr);
    const double* d_w = device_weights ? weights : l.hist + results;
    if (upload_weights)
      DIRMN_TRY(upload(l.hist + results, weights, rows * kk * sizeof(double), "cudaMemcpyAsync (row weights)"));
    // The tensor cores' workspace (8 bytes per row and weighting) may not
    // fit where the general kernels' does: they are the fallback.
    BackendResult hr;
    if (tensor) hr = launch_tensor_histograms(t, d_w, tensor_w_max, k, bins, l.hist, hist_partial_, e);
    if (!tensor || hr.status == DIRMN_ERROR_OUT_OF_MEMORY)
      hr = launch_column_histograms(t, weights ? d_w : nullptr, k, bins, l.hist, hist_partial_, e);
    DIRMN_TRY(hr);
    if (weights) DIRMN_TRY(launch_total_sums(t, ix, d_w, k, l.seg, l.lcoef, hist_scratch_, e));
    return {};
  }

  // Downloads what make_histograms left and forms the host's histograms.
  BackendResult fetch_histograms(const BackendCounts& counts, int64_t k, bool weighted,
                                 std::vector<Histograms>* out) {
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    const TotalsIndex& ix = t.totals;
    const int bins = histogram_bins(t);
    const HistLayout l = hist_layout(t, k, weighted);
    const size_t kk = static_cast<size_t>(k), runs = l.runs;
    try {
      DIRMN_TRY(host_out_.reserve(l.results * sizeof(double), "cudaHostAlloc (histograms)"));
      DIRMN_CUDA_TRY(cudaMemcpyAsync(host_out_.get(), l.hist, l.results * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream_),
                     "cudaMemcpyAsync (histograms)");
      DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      const double* h_hist = host_out_.get<double>();
      const double* h_seg = h_hist + kk * l.cells;
      const double* h_lcoef = h_seg + kk * runs;
      // Column histograms are rewritten in place (every field): an EM calls
      // this once per iteration with the same shapes, and making the
      // objects anew cost more than filling them.
      out->resize(kk);
      for (size_t j = 0; j < kk; ++j) {
        (*out)[j].cols = t.cols;
        if ((*out)[j].column.size() != static_cast<size_t>(t.cols))
          (*out)[j].column.assign(static_cast<size_t>(t.cols), Histogram());
      }
      DIRMN_TRY(column_forms(h_hist, k, t.cols, bins, out));
      std::atomic<bool> out_of_memory{false};
      const auto total_of = [&](int64_t jj) {
        const size_t j = static_cast<size_t>(jj);
        Histograms& o = (*out)[j];
        const double* w_tot = weighted ? h_seg + j * runs : ix.count.data();
        try {
          HistogramBuilder tot(kHistTotalIndexMax);
          for (size_t i = 0; i < runs; ++i) tot.add(ix.value[i], w_tot[i]);
          o.total = tot.finish();
        } catch (const std::bad_alloc&) {
          out_of_memory = true;
        }
        o.lcoef_sum = weighted ? h_lcoef[j] : ix.lcoef_sum;
      };
      if (host_threads_ && k > 1)
        host_threads_->parallel_for(k, total_of);
      else
        for (int64_t j = 0; j < k; ++j) total_of(j);
      if (out_of_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for histograms", 0};
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for histograms", 0};
    }
    return {};
  }

  // The dense cumulative form of k x cols downloaded histograms (by value,
  // `bins` each) into the columns of *out, sized already: in blocks of
  // columns, on the host threads when there are enough of them.
  BackendResult column_forms(const double* by_value, int64_t k, int64_t cols, int bins,
                             std::vector<Histograms>* out) {
    const int64_t per_k = ceil_div<int64_t>(cols, kFormBlockCols);
    std::atomic<bool> out_of_memory{false};
    const auto block = [&](int64_t q) {
      const int64_t j = q / per_k, v0 = (q % per_k) * kFormBlockCols;
      const int64_t v1 = std::min(cols, v0 + kFormBlockCols);
      Histograms& o = (*out)[static_cast<size_t>(j)];
      try {
        for (int64_t v = v0; v < v1; ++v)
          histogram_from_value_weights(by_value + (j * cols + v) * bins, bins,
                                       &o.column[static_cast<size_t>(v)]);
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
      }
    };
    if (host_threads_ && k * cols >= kParallelFormCols)
      host_threads_->parallel_for(k * per_k, block);
    else
      for (int64_t q = 0; q < k * per_k; ++q) block(q);
    if (out_of_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for histograms", 0};
    return {};
  }

  void use_host_threads(std::shared_ptr<Backend> threads) override { host_threads_ = std::move(threads); }

  // ---- Mixture EM with device-resident responsibilities -------------------

  struct EmLayout {
    double* z[2];
    double* w;
    double* aux;
    double* row_w;
    double* L;
    double* log_pi;
    double* reduced;  // em_reduced_columns(k): the E step's sums, then max_b w_bj
    double* w_max;    // the last k of them: each weighting's largest weight
    double* part;
    size_t doubles;
  };

  static EmLayout em_layout(double* base, int64_t rows, int64_t k) {
    EmLayout l;
    const size_t n = static_cast<size_t>(rows * k), r = static_cast<size_t>(rows);
    const size_t kk = static_cast<size_t>(k);
    l.z[0] = base;
    l.z[1] = base + n;
    l.w = base + 2 * n;
    l.aux = base + 3 * n;
    l.row_w = l.aux + static_cast<size_t>(kEmAux) * r;
    l.L = l.row_w + r;
    l.log_pi = l.L + n;
    l.reduced = l.log_pi + kk;
    l.w_max = l.reduced + 2 * kk + 2;
    const size_t columns = static_cast<size_t>(em_reduced_columns(k));
    l.part = l.reduced + columns;
    l.doubles = 4 * n + (static_cast<size_t>(kEmAux) + 1) * r + kk +
                columns * (1 + static_cast<size_t>(em_reduce_runs(rows)));
    return l;
  }

  BackendResult em_check(const BackendCounts& counts, int64_t k) const {
    if (em_table_ != &static_cast<const CudaCounts&>(counts).table || em_k_ != k)
      return {DIRMN_ERROR_INTERNAL, "device EM state of another table or k", 0};
    return {};
  }

  BackendResult em_begin(const BackendCounts& counts, int64_t k, const double* z, const double* w,
                         const double* row_weights) override {
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    if (!column_histogram_supported(t) || !totals_index_supported(t) ||
        !column_histograms_fit_grid(t, true, histogram_bins(t)) ||
        em_reduced_columns(k) > kMaxGridY)
      return {DIRMN_ERROR_NOT_SUPPORTED, "device EM for this table (wider than 8 bits, or too wide) or k", 0};
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    em_table_ = nullptr;
    em_hist_valid_ = false;
    const EmLayout probe = em_layout(nullptr, t.rows, k);
    DIRMN_TRY(grow(em_, probe.doubles * sizeof(double), "cudaMalloc (mixture state)"));
    const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
    const size_t n = static_cast<size_t>(t.rows * k) * sizeof(double);
    em_cur_ = 0;
    DIRMN_TRY(upload(l.z[0], z, n, "cudaMemcpyAsync (responsibilities)"));
    DIRMN_TRY(upload(l.w, w, n, "cudaMemcpyAsync (M-step weights)"));
    if (row_weights)
      DIRMN_TRY(upload(l.row_w, row_weights, static_cast<size_t>(t.rows) * sizeof(double),
                       "cudaMemcpyAsync (row weights)"));
    // Each weighting's largest weight, where the E step leaves it: the
    // tensor-core histograms scale by it.
    try {
      std::vector<double> w_max(static_cast<size_t>(k), 0.0);
      for (int64_t b = 0; b < t.rows; ++b)
        for (int64_t j = 0; j < k; ++j)
          w_max[static_cast<size_t>(j)] = std::max(w_max[static_cast<size_t>(j)], w[b * k + j]);
      DIRMN_TRY(upload(l.w_max, w_max.data(), static_cast<size_t>(k) * sizeof(double),
                       "cudaMemcpyAsync (largest weights)"));
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the mixture state", 0};
    }
    em_row_weights_ = row_weights != nullptr;
    // The chunk-major copy is made once per table. If there is no room for
    // it, the M step keeps the general kernels.
    em_tensor_ = false;
    if (tensor_histograms_supported(t, k, env())) {
      if (t.chunked.get() == nullptr) {
        const BackendResult rc = build_chunk_table(t, env());
        if (!rc.ok()) {
          t.chunked.release();
          if (rc.status != DIRMN_ERROR_OUT_OF_MEMORY) return rc;
        }
      }
      em_tensor_ = t.chunked.get() != nullptr;
    }
    em_table_ = &t;
    em_k_ = k;
    return {};
  }

  BackendResult em_histograms(const BackendCounts& counts, int64_t k,
                              std::vector<Histograms>* out) override {
    DIRMN_TRY(em_check(counts, k));
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
    DIRMN_TRY(make_histograms(counts, l.w, k, true, em_tensor_ ? l.w_max : nullptr));
    em_hist_valid_ = true;
    if (out == nullptr) return {};
    return fetch_histograms(counts, k, true, out);
  }

  BackendResult em_fetch_histograms(const BackendCounts& counts, int64_t k,
                                    std::vector<Histograms>* out) override {
    DIRMN_TRY(em_check(counts, k));
    if (!em_hist_valid_) return {DIRMN_ERROR_INTERNAL, "no device M-step histograms to fetch", 0};
    return fetch_histograms(counts, k, true, out);
  }

  BackendResult em_fit(const BackendCounts& counts, int64_t k, const EmFitSettings& s,
                       const char* fit, double* alpha, EmFitOutcome* out) override {
    DIRMN_TRY(em_check(counts, k));
    if (!em_hist_valid_) return {DIRMN_ERROR_INTERNAL, "no device M-step histograms to fit", 0};
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    const HistLayout hl = hist_layout(t, k, true);
    const size_t kk = static_cast<size_t>(k);
    const size_t n_alpha = kk * static_cast<size_t>(t.cols);
    // Layout of fit_: [alpha k x cols][out k][fit flags k, padded to
    // doubles][work]; the first three go up as one staged copy.
    const size_t work = kk * static_cast<size_t>(em_fit_work_doubles(t.cols, t.totals.runs));
    const size_t alpha_bytes = n_alpha * sizeof(double);
    const size_t out_bytes = kk * sizeof(EmFitOut);
    const size_t up_bytes = alpha_bytes + out_bytes + round_up<size_t>(kk * sizeof(int), sizeof(double));
    DIRMN_TRY(grow(fit_, up_bytes + work * sizeof(double), "cudaMalloc (M-step fits)"));
    char* base = static_cast<char*>(fit_.get());
    double* d_alpha = reinterpret_cast<double*>(base);
    EmFitOut* d_out = reinterpret_cast<EmFitOut*>(base + alpha_bytes);
    int* d_fit = reinterpret_cast<int*>(base + alpha_bytes + out_bytes);
    double* d_work = reinterpret_cast<double*>(base + up_bytes);
    std::vector<EmFitOut> res;
    std::vector<int> flags;
    try {
      res.resize(kk);
      flags.resize(kk);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the M-step fits", 0};
    }
    for (size_t j = 0; j < kk; ++j) flags[j] = fit[j] ? 1 : 0;
    if (up_bytes > kStagingMax) {
      DIRMN_TRY(upload(d_alpha, alpha, alpha_bytes, "cudaMemcpyAsync (M-step warm starts)"));
      DIRMN_TRY(upload(d_out, res.data(), out_bytes, "cudaMemcpyAsync (M-step outcomes)"));
      DIRMN_TRY(upload(d_fit, flags.data(), kk * sizeof(int), "cudaMemcpyAsync (M-step flags)"));
    } else {
      void* stage = nullptr;
      DIRMN_TRY(stage_for(up_bytes, &stage));
      char* st = static_cast<char*>(stage);
      std::memcpy(st, alpha, alpha_bytes);
      std::memcpy(st + alpha_bytes, res.data(), out_bytes);
      std::memcpy(st + alpha_bytes + out_bytes, flags.data(), kk * sizeof(int));
      DIRMN_TRY(upload_staged(base, up_bytes, "cudaMemcpyAsync (M-step warm starts)"));
    }
    EmFitArgs a;
    a.k = k;
    a.cols = t.cols;
    a.bins = histogram_bins(t);
    a.hist = hl.hist;
    a.run_value = t.totals.distinct.get<uint32_t>();
    a.run_weight = hl.seg;
    a.runs = t.totals.runs;
    a.fit = d_fit;
    a.alpha = d_alpha;
    a.work = d_work;
    a.band_max = em_fit_band_max(t.totals.runs);
    a.out = d_out;
    a.tolerance = s.tolerance;
    a.max_iterations = s.max_iterations;
    a.prior_shape = s.prior_shape;
    a.prior_rate = s.prior_rate;
    a.prior_const = s.prior_rate > 0.0 ? s.prior_shape * std::log(s.prior_rate) - std::lgamma(s.prior_shape) : 0.0;
    a.alpha_floor = s.alpha_floor;
    DIRMN_TRY(launch_em_fit(a, env()));
    DIRMN_TRY(host_out_.reserve(alpha_bytes + out_bytes, "cudaHostAlloc (M-step fits)"));
    DIRMN_CUDA_TRY(cudaMemcpyAsync(host_out_.get(), base, alpha_bytes + out_bytes, cudaMemcpyDeviceToHost,
                                   stream_),
                   "cudaMemcpyAsync (M-step fits)");
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    const double* h_alpha = host_out_.get<double>();
    std::memcpy(res.data(), static_cast<const char*>(host_out_.get()) + alpha_bytes, out_bytes);
    out->status.assign(kk, EmFitOutcome::kHost);
    out->log_prior.assign(kk, 0.0);
    out->log_det.assign(kk, 0.0);
    for (size_t j = 0; j < kk; ++j) {
      if (!fit[j]) continue;
      if (res[j].status == kEmFitFitted) {
        out->status[j] = EmFitOutcome::kFitted;
        out->log_prior[j] = res[j].log_prior;
        out->log_det[j] = res[j].log_det;
        std::memcpy(alpha + j * static_cast<size_t>(t.cols), h_alpha + j * static_cast<size_t>(t.cols),
                    static_cast<size_t>(t.cols) * sizeof(double));
      } else if (res[j].status == kEmFitNoCounts) {
        out->status[j] = EmFitOutcome::kNoCounts;
      }
    }
    return {};
  }

  BackendResult em_estep(const BackendCounts& counts, int64_t k, const double* alpha,
                         const double* log_pi, EmStep* out, const Interrupt& interrupt) override {
    DIRMN_TRY(em_check(counts, k));
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
    DIRMN_TRY(upload(l.log_pi, log_pi, static_cast<size_t>(k) * sizeof(double),
                     "cudaMemcpyAsync (mixing weights)"));
    LoglikRequest req;
    req.alpha = alpha;
    req.k = k;
    req.full = true;
    req.out = l.L;
    req.out_stride_row = k;
    req.out_stride_k = 1;
    req.out_on_device = true;
    req.async = true;
    // Up to kEmGroupMaxK components (and kEmFusedPanels panels) the E step
    // finishes the panels itself.
    SharedAlphaArgs panel;
    DIRMN_TRY(run_shared(t, req, l.L, k, 1, k <= kEmGroupMaxK ? &panel : nullptr));
    EmDevice em;
    em.rows = t.rows;
    em.k = k;
    em.L = k <= kEmGroupMaxK && panel.panels > 1 ? nullptr : l.L;
    em.panel = panel;
    em.row_total = t.row_total.get<double>();
    em.row_lcoef = t.row_lcoef.get<double>();
    em.row_w = em_row_weights_ ? l.row_w : nullptr;
    em.z_old = l.z[em_cur_];
    em.z = l.z[1 - em_cur_];
    em.w = l.w;
    em.aux = l.aux;
    em.part = l.part;
    DIRMN_TRY(launch_estep(em, l.log_pi, l.reduced, env()));
    em_cur_ = 1 - em_cur_;
    em_hist_valid_ = false;  // they were of the weights just replaced
    std::vector<double> red(static_cast<size_t>(2 * k + 2));
    DIRMN_CUDA_TRY(cudaMemcpyAsync(red.data(), l.reduced, red.size() * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync (E-step sums)");
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    out->z_sum.assign(red.begin(), red.begin() + k);
    out->w_sum.assign(red.begin() + k, red.begin() + 2 * k);
    out->loglik = red[static_cast<size_t>(2 * k)];
    out->max_change = red[static_cast<size_t>(2 * k + 1)];
    return {};
  }

  BackendResult em_download(const BackendCounts& counts, int64_t k, double* z, double* z_prev,
                            double* lse) override {
    DIRMN_TRY(em_check(counts, k));
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
    const size_t n = static_cast<size_t>(t.rows * k) * sizeof(double);
    if (z)
      DIRMN_CUDA_TRY(cudaMemcpyAsync(z, l.z[em_cur_], n, cudaMemcpyDeviceToHost, stream_),
                     "cudaMemcpyAsync (responsibilities)");
    if (z_prev)
      DIRMN_CUDA_TRY(cudaMemcpyAsync(z_prev, l.z[1 - em_cur_], n, cudaMemcpyDeviceToHost, stream_),
                     "cudaMemcpyAsync (responsibilities)");
    if (lse && t.rows > 0)
      DIRMN_CUDA_TRY(cudaMemcpy2DAsync(lse, sizeof(double), l.aux + 2, kEmAux * sizeof(double),
                                       sizeof(double), static_cast<size_t>(t.rows),
                                       cudaMemcpyDeviceToHost, stream_),
                     "cudaMemcpy2DAsync (row log-likelihoods)");
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return {};
  }

  BackendResult row_totals(const BackendCounts& counts, double* host_out) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
    DIRMN_CUDA_TRY(cudaMemcpyAsync(host_out, t.row_total.get(),
                                   static_cast<size_t>(t.rows) * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync (row totals)");
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return {};
  }

  BackendResult set_stream(void* stream) override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    cudaStream_t next = stream != nullptr ? static_cast<cudaStream_t>(stream) : own_stream_;
    if (next == stream_) return {};
    // Work already queued on the old stream still reads the workspace: the
    // new stream starts after it.
    DIRMN_CUDA_TRY(cudaEventRecord(switch_event_, stream_), "cudaEventRecord (stream switch)");
    DIRMN_CUDA_TRY(cudaStreamWaitEvent(next, switch_event_, 0), "cudaStreamWaitEvent (stream switch)");
    stream_ = next;
    return {};
  }

  BackendResult get_stream(void** stream) const override {
    *stream = static_cast<void*>(stream_);
    return {};
  }

  BackendResult synchronize() override {
    DeviceGuard guard(device_);
    DIRMN_TRY(guard.result());
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return {};
  }

  // Waits for the stream before a counts object's memory is freed; errors
  // have nowhere to go from a destructor and are cleared.
  void drain_quietly() {
    DeviceGuard guard(device_);
    if (cudaStreamSynchronize(stream_) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  LaunchEnv env() const {
    LaunchEnv e;
    e.stream = stream_;
    e.device = device_;
    e.sm_count = sm_count_;
    e.wgmma = wgmma_;
    e.tensor_mma = tensor_mma_;
    return e;
  }

  static void fill_summary(const DeviceTable& t, CountsSummary* s) {
    s->nnz = t.nnz;
    s->max_count = t.max_count;
    s->total = t.total;
    s->sparse = t.sparse;
    s->value_bits = t.wrapped ? 0 : cell_bytes(t.cell) * 8;
  }

  // Grows a workspace buffer. Queued work may still read the old allocation,
  // so the stream drains first (growth is rare: buffers never shrink).
  BackendResult grow(DeviceBuffer& buf, size_t bytes, const char* what) {
    if (bytes <= buf.bytes() && buf.get() != nullptr) return {};
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return buf.reserve(bytes, what);
  }

  // Copies `bytes` of host memory to `dst` in stream order; the host memory
  // may be reused as soon as this returns.
  BackendResult upload(void* dst, const void* src, size_t bytes, const char* what) {
    if (bytes > kStagingMax) {
      DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), what);
      return {};
    }
    void* stage = nullptr;
    DIRMN_TRY(stage_for(bytes, &stage));
    std::memcpy(stage, src, bytes);
    return upload_staged(dst, bytes, what);
  }

  // The staging buffer, once the last upload from it has run.
  BackendResult stage_for(size_t bytes, void** stage) {
    if (stage_pending_) {
      DIRMN_CUDA_TRY(cudaEventSynchronize(stage_done_), "cudaEventSynchronize (staging buffer)");
      stage_pending_ = false;
    }
    DIRMN_TRY(stage_.reserve(bytes, "cudaHostAlloc (parameter staging)"));
    *stage = stage_.get();
    return {};
  }

  BackendResult upload_staged(void* dst, size_t bytes, const char* what) {
    DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, stage_.get(), bytes, cudaMemcpyHostToDevice, stream_), what);
    DIRMN_CUDA_TRY(cudaEventRecord(stage_done_, stream_), "cudaEventRecord (staging buffer)");
    stage_pending_ = true;
    return {};
  }

  BackendResult copy_results_out(int64_t rows, int64_t kk, const LoglikRequest& req) {
    const size_t bytes = static_cast<size_t>(rows * kk) * sizeof(double);
    DIRMN_TRY(host_out_.reserve(bytes, "cudaHostAlloc (results)"));
    DIRMN_CUDA_TRY(cudaMemcpyAsync(host_out_.get(), out_.get(), bytes, cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync (results to host)");
    DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    const double* src = host_out_.get<double>();
    if (req.out_stride_row == kk && req.out_stride_k == 1) {
      std::memcpy(req.out, src, bytes);
    } else {
      for (int64_t b = 0; b < rows; ++b)
        for (int64_t j = 0; j < kk; ++j)
          req.out[b * req.out_stride_row + j * req.out_stride_k] = src[b * kk + j];
    }
    return {};
  }

  BackendResult run_rowwise(const DeviceTable& t, const LoglikRequest& req, double* out,
                            int64_t out_sr) {
    const size_t bytes = static_cast<size_t>(t.rows * t.cols) * sizeof(double);
    DIRMN_TRY(grow(rowwise_alpha_, bytes, "cudaMalloc (row-wise alpha)"));
    DIRMN_TRY(upload(rowwise_alpha_.get(), req.alpha, bytes, "cudaMemcpyAsync (row-wise alpha)"));
    RowwiseArgs a;
    a.alpha = rowwise_alpha_.get<double>();
    a.out = out;
    a.out_sr = out_sr;
    a.full = req.full;
    return t.sparse ? launch_rowwise_csr(t.plan, t.csr_view(), a, env())
                    : launch_rowwise_dense(t.plan, t.dense_view(), a, env());
  }

  // The table geometry of one call. CSR tables keep the plan made at upload
  // (their panel offsets depend on it). Dense tables evaluating several
  // parameter vectors bundle them (loglik_types.cuh) and use narrower
  // column panels so that a bundle's tables share a block: every cell is
  // then read once per panel for all of them, instead of once per vector
  // over the whole width. Tables too tall to bundle within the budget take
  // one vector per pass.
  static TablePlan call_plan(const DeviceTable& t, int64_t K, size_t entry, int* k_group) {
    TablePlan p = t.plan;
    const int64_t budget = static_cast<int64_t>(kTableBudgetBytes / entry);
    const int64_t per_col = static_cast<int64_t>(p.cut);
    if (t.sparse || K == 1) {
      *k_group = static_cast<int>(std::max<int64_t>(
          1, std::min<int64_t>({K, kMaxKGroup, budget / (per_col * p.panel_cols)})));
      return p;
    }
    const int64_t kg = bundle_vectors(K, static_cast<int>(entry));
    int64_t group = static_cast<int64_t>(p.vec) * p.lanes_per_row;
    if (p.lanes_per_row == 32 && budget / (kg * per_col) < group) {
      p.lanes_per_row = 16;  // narrower lane groups allow narrower panels
      group = static_cast<int64_t>(p.vec) * 16;
    }
    if (budget / (kg * per_col) < group) {
      *k_group = 1;
      return t.plan;
    }
    const int64_t width = (budget / (kg * per_col)) / group * group;
    p.panel_cols = std::min(round_up<int64_t>(t.cols, group), width);
    if (p.panel_cols < t.cols) p.panel_cols = balanced_panel_width(t.cols, p.panel_cols, group);
    p.panels = static_cast<int>(ceil_div<int64_t>(t.cols, p.panel_cols));
    *k_group = static_cast<int>(kg);
    return p;
  }

  // With `unfinished` and up to kEmFusedPanels column panels, the panels'
  // partial sums are left for the caller to finish (*unfinished says how);
  // otherwise they are finished here and *unfinished (if given) is left as
  // it was (panels = 1 as constructed: the results are in `out`).
  BackendResult run_shared(const DeviceTable& t, const LoglikRequest& req, double* out,
                           int64_t out_sr, int64_t out_sk, SharedAlphaArgs* unfinished = nullptr) {
    const int64_t K = req.k;
    const size_t entry = req.fast ? sizeof(float) : sizeof(double);
    int k_group = 1;
    const TablePlan plan = call_plan(t, K, entry, &k_group);
    const size_t alpha_bytes = static_cast<size_t>(K * t.cols) * sizeof(double);
    const size_t ksum_bytes = static_cast<size_t>(K) * sizeof(KSums);
    TableKey key;
    key.cut = plan.cut;
    key.panel_cols = plan.panel_cols;
    key.panels = plan.panels;
    key.vec = plan.vec;
    key.lanes = plan.lanes_per_row;
    key.row_term_len = plan.row_term_len;
    key.cols = t.cols;
    key.k = K;
    key.bundle = !t.sparse && k_group > 1 ? k_group : 0;
    key.fast = req.fast;
    const bool reuse = tables_valid_ && key == table_key_ &&
                       std::memcmp(cached_alpha_.data(), req.alpha, alpha_bytes) == 0;
    if (!reuse) DIRMN_TRY(rebuild_tables(t, plan, req, key, alpha_bytes, ksum_bytes));

    SharedAlphaArgs a;
    a.tables = tables_.get();
    a.cut = plan.cut;
    a.panel_cols = plan.panel_cols;
    a.panels = plan.panels;
    a.vec = plan.vec;
    a.lanes_per_row = plan.lanes_per_row;
    a.k_total = static_cast<int>(K);
    a.k_group = k_group;
    a.cols = t.cols;
    a.integral = t.integral;
    a.all_fit = t.integral && t.max_count < static_cast<double>(plan.cut);
    a.ksums = static_cast<const KSums*>(params_.get());
    a.alpha = reinterpret_cast<const double*>(static_cast<const char*>(params_.get()) + ksum_bytes);
    a.row_term = row_terms_.get<double>();
    a.row_term_len = plan.row_term_len;
    a.out = out;
    a.out_sr = out_sr;
    a.out_sk = out_sk;
    a.full = req.full;
    // Several vectors over a table of small counts: the tensor cores, in one
    // pass (the lookup tables above still give the row terms).
    if (alpha_log_range_ <= kTensorLoglikMaxRange && tensor_loglik_supported(t, K, env())) {
      if (tensor_tables_gen_ != tables_gen_ || tensor_tables_thresholds_ != tensor_thresholds(t)) {
        tensor_tables_gen_ = 0;
        DIRMN_TRY(build_tensor_loglik_tables(t, a.alpha, a.ksums, K, req.fast, tensor_tables_, env()));
        tensor_tables_gen_ = tables_gen_;
        tensor_tables_thresholds_ = tensor_thresholds(t);
      }
      return launch_tensor_loglik(t, a, req.fast, tensor_tables_, env());
    }
    if (plan.panels == 1) {
      // The per-row normalisers for these tables, made once per alpha.
      if (t.row_adjust_gen != tables_gen_) {
        t.row_adjust_gen = 0;
        DIRMN_TRY(grow(t.row_adjust, static_cast<size_t>(K * t.rows) * sizeof(double),
                       "cudaMalloc (row normalisers)"));
        DIRMN_TRY(launch_build_row_adjust(t.rows, t.row_total.get<double>(), a,
                                          t.row_adjust.get<double>(), env()));
        t.row_adjust_gen = tables_gen_;
      }
      a.row_adjust = t.row_adjust.get<double>();
    }
    if (plan.panels > 1) {
      DIRMN_TRY(grow(partial_, static_cast<size_t>(plan.panels) * static_cast<size_t>(t.rows * K) * sizeof(double),
                     "cudaMalloc (panel partial sums)"));
      a.partial = partial_.get<double>();
    }
    DIRMN_TRY(t.sparse ? launch_shared_csr(plan, req.fast, t.csr_view(), a, env())
                       : launch_shared_dense(plan, req.fast, t.dense_view(), a, env()));
    // Many panels are finished here, a thread per row and vector: summing
    // them in the E step's lanes, fewer, waits on each load.
    if (unfinished != nullptr && plan.panels <= kEmFusedPanels) {
      *unfinished = a;
      return {};
    }
    if (plan.panels > 1)
      DIRMN_TRY(launch_finish_panels(t.rows, t.row_total.get<double>(), t.row_lcoef.get<double>(), a, env()));
    return {};
  }

  BackendResult rebuild_tables(const DeviceTable& t, const TablePlan& plan, const LoglikRequest& req,
                               const TableKey& key, size_t alpha_bytes, size_t ksum_bytes) {
    tables_valid_ = false;
    const int64_t K = req.k;
    try {
      cached_alpha_.resize(alpha_bytes / sizeof(double));
      ksums_host_.resize(static_cast<size_t>(K));
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host copy of alpha", 0};
    }
    alpha_log_range_ = 0.0;
    for (int64_t j = 0; j < K; ++j) {
      const double* aj = req.alpha + j * t.cols;
      const double a = kahan_sum(aj, t.cols);
      ksums_host_[static_cast<size_t>(j)] = KSums{a, std::log(a)};
      const auto [lo, hi] = std::minmax_element(aj, aj + t.cols);
      // A NaN (alpha the API has not checked) must not pass for in range.
      const double range = std::log(*hi + kTensorLoglikTopShift) - std::log(*lo);
      if (!(range <= alpha_log_range_)) alpha_log_range_ = std::isnan(range) ? HUGE_VAL : range;
    }
    const size_t param_bytes = ksum_bytes + alpha_bytes;
    DIRMN_TRY(grow(params_, param_bytes, "cudaMalloc (parameters)"));
    if (param_bytes <= kStagingMax) {
      void* stage = nullptr;
      DIRMN_TRY(stage_for(param_bytes, &stage));
      std::memcpy(stage, ksums_host_.data(), ksum_bytes);
      std::memcpy(static_cast<char*>(stage) + ksum_bytes, req.alpha, alpha_bytes);
      DIRMN_TRY(upload_staged(params_.get(), param_bytes, "cudaMemcpyAsync (parameters)"));
    } else {
      DIRMN_TRY(upload(params_.get(), ksums_host_.data(), ksum_bytes, "cudaMemcpyAsync (parameters)"));
      DIRMN_TRY(upload(static_cast<char*>(params_.get()) + ksum_bytes, req.alpha, alpha_bytes,
                       "cudaMemcpyAsync (parameters)"));
    }
    const size_t entry = req.fast ? sizeof(float) : sizeof(double);
    // Bundled tables fill their last bundle.
    const int64_t k_tables = key.bundle > 0 ? round_up<int64_t>(K, key.bundle) : K;
    const size_t table_bytes = static_cast<size_t>(k_tables) * static_cast<size_t>(plan.panels) *
                               static_cast<size_t>(plan.cut) * static_cast<size_t>(plan.panel_cols) * entry;
    DIRMN_TRY(grow(tables_, table_bytes, "cudaMalloc (likelihood tables)"));
    DIRMN_TRY(grow(row_terms_, static_cast<size_t>(K * plan.row_term_len) * sizeof(double),
                   "cudaMalloc (row-term tables)"));
    TableBuildArgs b;
    b.ksums = static_cast<const KSums*>(params_.get());
    b.alpha = reinterpret_cast<const double*>(static_cast<const char*>(params_.get()) + ksum_bytes);
    b.k_total = static_cast<int>(K);
    b.cols = t.cols;
    b.cut = plan.cut;
    b.panel_cols = plan.panel_cols;
    b.panels = plan.panels;
    b.vec = plan.vec;
    b.lanes = plan.lanes_per_row;
    b.tables = tables_.get();
    b.bundle = key.bundle;
    b.row_term = row_terms_.get<double>();
    b.row_term_len = plan.row_term_len;
    DIRMN_TRY(launch_build_tables(req.fast, b, env()));
    std::memcpy(cached_alpha_.data(), req.alpha, alpha_bytes);
    table_key_ = key;
    tables_valid_ = true;
    ++tables_gen_;  // every table's row normalisers are now stale
    return {};
  }

  int device_;
  int sm_count_;
  bool wgmma_ = false;
  bool tensor_mma_ = false;
  cudaStream_t own_stream_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t stage_done_ = nullptr;
  cudaEvent_t switch_event_ = nullptr;
  bool stage_pending_ = false;
  DeviceBuffer params_;     // [KSums x K][alpha K x cols]
  DeviceBuffer tables_;
  DeviceBuffer row_terms_;
  DeviceBuffer out_;
  DeviceBuffer partial_;
  DeviceBuffer rowwise_alpha_;
  DeviceBuffer hist_;  // histograms of fits: k x cols x bins, row-total sums, row weights
  DeviceBuffer hist_partial_;  // per-block partial histograms (tensor path: weight digits too)
  DeviceBuffer hist_scratch_;  // row-total sums: per-run shares of the weighted lcoef sums
  DeviceBuffer fit_;           // the M step's fits on the device (em_fit)
  std::shared_ptr<Backend> host_threads_;  // the context's CPU backend, for host-side work
  DeviceBuffer em_;            // mixture state (em_layout)
  const DeviceTable* em_table_ = nullptr;  // the table em_ belongs to
  int64_t em_k_ = 0;
  int em_cur_ = 0;             // which z buffer is current
  bool em_row_weights_ = false;
  bool em_tensor_ = false;     // the M step's histograms run on the tensor cores
  bool em_hist_valid_ = false; // hist_ holds the histograms of the EM's current weights
  PinnedBuffer stage_;
  PinnedBuffer host_out_;
  bool tables_valid_ = false;
  uint64_t tables_gen_ = 1;  // bumped whenever the tables change
  // The tensor-core likelihood's fixed-point tables: of the lookup tables'
  // alpha, columns, k and mode while tensor_tables_gen_ equals tables_gen_,
  // and for tables of tensor_tables_thresholds_ thresholds (the pairs per
  // column).
  DeviceBuffer tensor_tables_;
  uint64_t tensor_tables_gen_ = 0;
  int tensor_tables_thresholds_ = 0;
  // The tables' alpha: the largest log(max alpha + 14) - log(min alpha)
  // of a vector (see kTensorLoglikMaxRange).
  double alpha_log_range_ = 0.0;
  TableKey table_key_;
  std::vector<double> cached_alpha_;
  std::vector<KSums> ksums_host_;
};

CudaCounts::~CudaCounts() { owner_->drain_quietly(); }

bool absent_device(cudaError_t e) {
  return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver;
}

}  // namespace

bool cuda_compiled() { return true; }

BackendResult cuda_device_count(int* count) {
  *count = 0;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (absent_device(e)) return {};
    return from_cuda(e, "cudaGetDeviceCount");
  }
  *count = n;
  return {};
}

std::unique_ptr<Backend> make_cuda_backend(int device, BackendResult* result) {
  int n = 0;
  *result = cuda_device_count(&n);
  if (!result->ok()) return nullptr;
  if (device < 0 || device >= n) {
    *result = {DIRMN_ERROR_BACKEND_UNAVAILABLE, "no such CUDA device", 0};
    return nullptr;
  }
  DeviceGuard guard(device);
  if (!(*result = guard.result()).ok()) return nullptr;
  // Creates the device's primary context now, so a device that is busy
  // (exclusive mode) or broken fails here rather than in a later call.
  const cudaError_t e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    *result = from_cuda(e, "cudaFree (creating the device context)");
    return nullptr;
  }
  int sm_count = 0;
  const cudaError_t ea = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (ea != cudaSuccess) {
    *result = from_cuda(ea, "cudaDeviceGetAttribute");
    return nullptr;
  }
  std::unique_ptr<CudaBackend> b(new (std::nothrow) CudaBackend(device, std::max(sm_count, 1)));
  if (!b) {
    *result = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a CUDA context", 0};
    return nullptr;
  }
  *result = b->init();
  if (!result->ok()) return nullptr;
  return b;
}

}  // namespace cuda

bool cuda_compiled() { return cuda::cuda_compiled(); }
BackendResult cuda_device_count(int* count) { return cuda::cuda_device_count(count); }
std::unique_ptr<Backend> make_cuda_backend(int device, BackendResult* result) {
  return cuda::make_cuda_backend(device, result);
}

}  // namespace dirmn
