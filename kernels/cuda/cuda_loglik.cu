// cuda_loglik.cu: the CUDA backend's likelihood step -- the per-call plan
// and tables, and the launches of the likelihood kernels (the kernels are in
// the loglik_*.cu units and their device headers).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "../math/sums.hpp"
#include "cuda_backend.cuh"

namespace dirmn {
namespace cuda {

BackendResult CudaBackend::loglik(const BackendCounts& counts, const LoglikRequest& req,
                                  const Interrupt& interrupt) {
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

BackendResult CudaBackend::copy_results_out(int64_t rows, int64_t kk, const LoglikRequest& req) {
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

BackendResult CudaBackend::run_rowwise(const DeviceTable& t, const LoglikRequest& req, double* out,
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
TablePlan CudaBackend::call_plan(const DeviceTable& t, int64_t K, size_t entry, int* k_group) {
  TablePlan p = t.plan;
  const int64_t budget = static_cast<int64_t>(kTableBudgetBytes / entry);
  const int64_t per_col = static_cast<int64_t>(p.cut);
  if (p.l2_tables) {
    *k_group = static_cast<int>(std::min<int64_t>(K, kMaxKGroup));
    return p;
  }
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
BackendResult CudaBackend::run_shared(const DeviceTable& t, const LoglikRequest& req, double* out,
                                     int64_t out_sr, int64_t out_sk, SharedAlphaArgs* unfinished) {
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
  const bool reuse = tables_valid_ && key == table_key_ && req.alpha_version != 0 &&
                     req.alpha_version == tables_alpha_version_;
  if (!reuse) DIRMN_TRY(rebuild_tables(t, plan, req, key, alpha_bytes, ksum_bytes));

  SharedAlphaArgs a;
  a.tables = tables_.get();
  a.cut = plan.cut;
  a.panel_cols = plan.panel_cols;
  a.panels = plan.panels;
  a.l2_tables = plan.l2_tables;
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

BackendResult CudaBackend::rebuild_tables(const DeviceTable& t, const TablePlan& plan,
                                         const LoglikRequest& req, const TableKey& key,
                                         size_t alpha_bytes, size_t ksum_bytes) {
  tables_valid_ = false;
  const int64_t K = req.k;
  try {
    ksums_host_.resize(static_cast<size_t>(K));
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host sums of alpha", 0};
  }
  alpha_log_range_ = 0.0;
  for (int64_t j = 0; j < K; ++j) {
    const double* aj = req.alpha + j * t.cols;
    const double a = math::compensated_sum(aj, t.cols);
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
  tables_alpha_version_ = req.alpha_version;
  table_key_ = key;
  tables_valid_ = true;
  ++tables_gen_;  // every table's row normalisers are now stale
  return {};
}

}  // namespace cuda
}  // namespace dirmn
