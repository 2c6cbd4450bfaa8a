// cuda_histograms.cu: the CUDA backend's histogram step -- the launches of
// the column and row-total histogram kernels (histogram.cu,
// tensor_histogram.cu) and the forming of the host's histograms from what
// they leave.
#include <algorithm>
#include <atomic>
#include <new>

#include "cuda_backend.cuh"

namespace dirmn {
namespace cuda {
BackendResult CudaBackend::histograms(const BackendCounts& counts, const double* weights,
                                      int64_t k, std::vector<Histograms>* out, const Interrupt&) {
  const DeviceTable& t = table_of(counts);
  DIRMN_TRY(make_histograms(t, weights, k, false, nullptr));
  return fetch_histograms(t, k, weights != nullptr, out);
}

HistLayout CudaBackend::hist_layout(const DeviceTable& t, int64_t k, bool weighted) const {
  HistLayout l{};
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
BackendResult CudaBackend::make_histograms(const DeviceTable& t, const double* weights, int64_t k,
                                           bool device_weights, const double* tensor_w_max) {
  const bool tensor = tensor_w_max != nullptr;
  if (!column_histogram_supported(t) || !totals_index_supported(t))
    return {DIRMN_ERROR_NOT_SUPPORTED, "device histograms of a table wider than 8 bits", 0};
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  ++hist_gen_;
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
BackendResult CudaBackend::fetch_histograms(const DeviceTable& t, int64_t k, bool weighted,
                                            std::vector<Histograms>* out) {
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
    // Column histograms are rewritten in place (every field), so that an
    // EM, which calls this once per iteration with the same shapes,
    // allocates nothing per iteration.
    out->resize(kk);
    for (size_t j = 0; j < kk; ++j) {
      ColumnHistograms& c = (*out)[j].column;
      if (!c.all_stored() || c.size() != t.cols) c.assign_all(t.cols);
      (*out)[j].cols = t.cols;
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
    if (k > 1)
      threads_->parallel_for(k, total_of);
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
BackendResult CudaBackend::column_forms(const double* by_value, int64_t k, int64_t cols, int bins,
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
                                     &o.column.stored(static_cast<size_t>(v)));
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  };
  if (k * cols >= kParallelFormCols)
    threads_->parallel_for(k * per_k, block);
  else
    for (int64_t q = 0; q < k * per_k; ++q) block(q);
  if (out_of_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for histograms", 0};
  return {};
}

}  // namespace cuda
}  // namespace dirmn
