// cuda_em.cu: a mixture's state beside the table on the device. The
// responsibilities, the M step's weights and the E step's per-row values
// stay in the backend's mixture workspace; the E step (estep.cu) and the
// M step's histograms and fits (histogram.cu, tensor_histogram.cu,
// mstep.cu) read them there, and only alpha and per-component sums cross to
// the host per iteration. One state per context at a time (the EM loop
// holds one).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "../host_fit.hpp"
#include "cuda_backend.cuh"

namespace dirmn {
namespace cuda {
namespace {

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

EmLayout em_layout(double* base, int64_t rows, int64_t k) {
  EmLayout l{};
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

}  // namespace

// The EmState steps, each the backend's own.
class CudaEmState final : public EmState {
 public:
  CudaEmState(CudaBackend& backend, const DeviceTable& table, int64_t k_)
      : b(backend), t(&table), k(k_) {
    b.em_live_ = true;
  }
  ~CudaEmState() override { b.em_live_ = false; }
  BackendResult begin(const double* z, const double* w) override { return b.em_begin(*this, z, w); }
  BackendResult histograms(const Interrupt&) override { return b.em_histograms(*this); }
  BackendResult fit_components(const EmFitSettings& settings, const char* fit, const char* warm,
                               HostThreads& threads, double* alpha, EmFitOutcome* out) override;
  BackendResult e_step(const double* alpha, const double* log_pi, EmStep* out,
                       const Interrupt& interrupt) override {
    return b.em_estep(*this, alpha, log_pi, out, interrupt);
  }
  BackendResult download(double* z, double* z_prev, double* lse) override {
    return b.em_download(*this, z, z_prev, lse);
  }

  CudaBackend& b;
  const DeviceTable* t;
  const int64_t k;
  int cur = 0;               // which z buffer is current
  bool row_weights = false;  // the row weights are in the workspace
  bool tensor = false;       // the M step's histograms run on the tensor cores
  bool kept = false;         // the histogram workspace holds the current weights' histograms
  uint64_t kept_gen = 0;     // ... as of this histogram generation
  bool device_fits = true;   // false once the device had no room for the fits' workspace
  std::vector<Histograms> host_hist;  // the kept histograms, fetched for the host's fits
};

// The device fits the warm components of unscaled weights; the host's
// engine fits the rest (cold starts, what the device hands back: the
// multinomial limit, Minka's step), and everything once the device has no
// room for the fits' workspace.
BackendResult CudaEmState::fit_components(const EmFitSettings& settings, const char* fit,
                                          const char* warm, HostThreads& threads, double* alpha,
                                          EmFitOutcome* out) {
  if (!kept || kept_gen != b.hist_gen_)
    return {DIRMN_ERROR_INTERNAL, "no device M-step histograms to fit", 0};
  out->reset(k);
  const size_t kk = static_cast<size_t>(k);
  std::vector<char> on_device, on_host;
  try {
    on_device.assign(kk, 0);
    on_host.assign(kk, 0);
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the M-step fits", 0};
  }
  const bool device = device_fits && settings.weight_exponent == 0;
  bool any = false;
  for (size_t j = 0; j < kk; ++j) {
    on_device[j] = fit[j] && warm[j] && device;
    any = any || on_device[j];
  }
  if (!device) out->host_fallback = true;
  if (any) {
    const BackendResult r = b.em_fit(*this, settings, on_device.data(), alpha, out);
    if (r.status == DIRMN_ERROR_NOT_SUPPORTED || r.status == DIRMN_ERROR_OUT_OF_MEMORY) {
      device_fits = false;
      out->reset(k);
      out->host_fallback = true;
    } else if (!r.ok()) {
      return r;
    }
  }
  any = false;
  for (size_t j = 0; j < kk; ++j) {
    on_host[j] = fit[j] && out->status[j] == EmFitOutcome::kNotFitted;
    any = any || on_host[j];
  }
  if (!any) return {};
  DIRMN_TRY(b.fetch_histograms(*t, k, true, &host_hist));
  const bool fallback = out->host_fallback;
  DIRMN_TRY(fit_components_on_host(host_hist, settings, on_host.data(), warm, t->cols, threads,
                                   alpha, out));
  out->host_fallback = fallback;
  return {};
}

BackendResult CudaBackend::make_em_state(const BackendCounts& counts, int64_t k,
                                         const double* row_weights, std::unique_ptr<EmState>* out) {
  const DeviceTable& t = table_of(counts);
  if (!supports(Step::kMixtureEm, counts) || em_reduced_columns(k) > kMaxGridY)
    return {DIRMN_ERROR_NOT_SUPPORTED, "device EM for this table or k", 0};
  // The workspace holds one state; a second (a mixture fitted from inside
  // another's progress callback) is kept by the host.
  if (em_live_) return {DIRMN_ERROR_NOT_SUPPORTED, "a second mixture state on the device", 0};
  std::unique_ptr<CudaEmState> s(new (std::nothrow) CudaEmState(*this, t, k));
  if (!s) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the mixture state", 0};
  DIRMN_TRY(em_init(*s, row_weights));
  *out = std::move(s);
  return {};
}

BackendResult CudaBackend::em_init(CudaEmState& s, const double* row_weights) {
  const DeviceTable& t = *s.t;
  const int64_t k = s.k;
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const EmLayout probe = em_layout(nullptr, t.rows, k);
  DIRMN_TRY(grow(em_, probe.doubles * sizeof(double), "cudaMalloc (mixture state)"));
  const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
  if (row_weights)
    DIRMN_TRY(upload(l.row_w, row_weights, static_cast<size_t>(t.rows) * sizeof(double),
                     "cudaMemcpyAsync (row weights)"));
  s.row_weights = row_weights != nullptr;
  // The chunk-major copy is made once per table. If there is no room for
  // it, the M step keeps the general kernels.
  s.tensor = false;
  if (tensor_histograms_supported(t, k, env())) {
    if (t.chunked.get() == nullptr) {
      const BackendResult rc = build_chunk_table(t, env());
      if (!rc.ok()) {
        t.chunked.release();
        if (rc.status != DIRMN_ERROR_OUT_OF_MEMORY) return rc;
      }
    }
    s.tensor = t.chunked.get() != nullptr;
  }
  return {};
}

BackendResult CudaBackend::em_begin(CudaEmState& s, const double* z, const double* w) {
  const DeviceTable& t = *s.t;
  const int64_t k = s.k;
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  s.kept = false;
  const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
  const size_t n = static_cast<size_t>(t.rows * k) * sizeof(double);
  // Into the current buffer: the one before it keeps the responsibilities
  // before the last E step.
  DIRMN_TRY(upload(l.z[s.cur], z, n, "cudaMemcpyAsync (responsibilities)"));
  DIRMN_TRY(upload(l.w, w, n, "cudaMemcpyAsync (M-step weights)"));
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
  return {};
}

BackendResult CudaBackend::em_histograms(CudaEmState& s) {
  const DeviceTable& t = *s.t;
  const EmLayout l = em_layout(em_.get<double>(), t.rows, s.k);
  s.kept = false;
  DIRMN_TRY(make_histograms(t, l.w, s.k, true, s.tensor ? l.w_max : nullptr));
  s.kept = true;
  s.kept_gen = hist_gen_;
  return {};
}

BackendResult CudaBackend::em_fit(CudaEmState& state, const EmFitSettings& s, const char* fit,
                                  double* alpha, EmFitOutcome* out) {
  if (!state.kept || state.kept_gen != hist_gen_)
    return {DIRMN_ERROR_INTERNAL, "no device M-step histograms to fit", 0};
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const DeviceTable& t = *state.t;
  const int64_t k = state.k;
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
  a.max_iterations = s.warm_iterations;
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
  // The device does not say whether a fit converged: one with the full
  // budget counts as converged, a bounded one as not.
  const char converged = s.warm_iterations >= s.full_iterations ? 1 : 0;
  for (size_t j = 0; j < kk; ++j) {
    if (!fit[j]) continue;
    if (res[j].status == EmFitOutcome::kFitted) {
      out->status[j] = EmFitOutcome::kFitted;
      out->converged[j] = converged;
      out->log_prior[j] = res[j].log_prior;
      out->log_det[j] = res[j].log_det;
      std::memcpy(alpha + j * static_cast<size_t>(t.cols), h_alpha + j * static_cast<size_t>(t.cols),
                  static_cast<size_t>(t.cols) * sizeof(double));
    } else if (res[j].status == EmFitOutcome::kNoCounts) {
      out->status[j] = EmFitOutcome::kNoCounts;
    }
  }
  return {};
}

BackendResult CudaBackend::em_estep(CudaEmState& s, const double* alpha, const double* log_pi,
                                    EmStep* out, const Interrupt& interrupt) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
  const DeviceTable& t = *s.t;
  const int64_t k = s.k;
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
  em.row_w = s.row_weights ? l.row_w : nullptr;
  em.z_old = l.z[s.cur];
  em.z = l.z[1 - s.cur];
  em.w = l.w;
  em.aux = l.aux;
  em.part = l.part;
  DIRMN_TRY(launch_estep(em, l.log_pi, l.reduced, env()));
  s.cur = 1 - s.cur;
  s.kept = false;  // they were of the weights just replaced
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

BackendResult CudaBackend::em_download(CudaEmState& s, double* z, double* z_prev, double* lse) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const DeviceTable& t = *s.t;
  const int64_t k = s.k;
  const EmLayout l = em_layout(em_.get<double>(), t.rows, k);
  const size_t n = static_cast<size_t>(t.rows * k) * sizeof(double);
  if (z)
    DIRMN_CUDA_TRY(cudaMemcpyAsync(z, l.z[s.cur], n, cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync (responsibilities)");
  if (z_prev)
    DIRMN_CUDA_TRY(cudaMemcpyAsync(z_prev, l.z[1 - s.cur], n, cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync (responsibilities)");
  if (lse && t.rows > 0)
    DIRMN_CUDA_TRY(cudaMemcpy2DAsync(lse, sizeof(double), l.aux + 2, kEmAux * sizeof(double),
                                     sizeof(double), static_cast<size_t>(t.rows),
                                     cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpy2DAsync (row log-likelihoods)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
