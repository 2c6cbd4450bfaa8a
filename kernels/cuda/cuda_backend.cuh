// cuda_backend.cuh: the CUDA backend -- one device, one stream (its own or
// the caller's), and a grow-only workspace reused across calls. Its steps
// are defined by topic: cuda_backend.cu (tables, streams, transfers),
// cuda_loglik.cu (likelihoods), cuda_histograms.cu (count histograms) and
// cuda_em.cu (a mixture's state beside the table).
//
// A shared-alpha call is, on the context's stream:
//   1. upload alpha and (A_k, log A_k) through a page-locked staging buffer,
//   2. build the per-call tables (one small kernel),
//   3. one pass over the counts (one kernel; a second combines column
//      panels of very wide tables),
//   4. for host results, a copy back into page-locked memory and a wait.
// Steps 1-2 are skipped when the parameters are the ones the tables were
// built from (the C ABI layer's parameter version) for the same geometry.
//
// Asynchronous calls return after step 3. Everything they read stays valid
// until the stream passes it: the staging buffer is rewritten only after an
// event shows the previous upload has run, workspace buffers grow only after
// the stream has drained, and a stream switch makes the new stream wait for
// the old one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "../table/histogram.hpp"
#include "device_table.cuh"
#include "tuning.cuh"

namespace dirmn {
namespace cuda {

class CudaBackend;
class CudaEmState;

class CudaCounts final : public BackendCounts {
 public:
  CudaCounts(CudaBackend* owner, int device) : owner_(owner), table(device) {}
  ~CudaCounts() override;
  CudaBackend* owner_;
  DeviceTable table;
};

inline const DeviceTable& table_of(const BackendCounts& counts) {
  return static_cast<const CudaCounts&>(counts).table;
}

// Bins of a table's histograms by value: counts 0 .. max_count.
inline int histogram_bins(const DeviceTable& t) { return static_cast<int>(t.max_count) + 1; }

// What the likelihood tables in the workspace were built from, besides the
// parameters.
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

// Where make_histograms leaves its results in the histogram workspace
// (doubles): [hist k x cols x bins][total sums k x runs][lcoef sums k], the
// last two for weighted histograms only; row weights follow when uploaded.
struct HistLayout {
  size_t cells, runs, results;
  double* hist;
  double* seg;
  double* lcoef;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, int sm_count, std::shared_ptr<HostThreads> threads);
  ~CudaBackend() override;
  BackendResult init();

  dirmn_backend kind() const override { return DIRMN_BACKEND_CUDA; }
  int device() const override { return device_; }
  bool supports(Step step, const BackendCounts& counts) const override;

  BackendResult adopt_copy(const HostTable& table, std::unique_ptr<BackendCounts>* out,
                           TableInfo* info) override;
  BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out,
                      TableInfo* info) override;
  BackendResult wrap_device_dense(const DenseInput& in, std::unique_ptr<BackendCounts>* out,
                                  TableInfo* info, CountsProblem* problem) override;
  BackendResult wrap_device_sparse(const SparseInput& in, std::unique_ptr<BackendCounts>* out,
                                   TableInfo* info, CountsProblem* problem) override;

  // sample.cu: tables drawn on the device (math/dm_draw.hpp's rows, one
  // thread each), and their rows copied back for a host copy.
  BackendResult sample(const SampleRequest& req, std::unique_ptr<BackendCounts>* out,
                       TableInfo* info, const Interrupt& interrupt) override;
  BackendResult download_rows(const BackendCounts& counts, CsrRows* out) override;

  BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                       const Interrupt& interrupt) override;
  BackendResult row_totals(const BackendCounts& counts, double* host_out) override;
  // One pass over the device table gives the per-column histograms; the
  // row-total histograms are segmented sums over the rows ordered by total
  // (an order made once per table).
  BackendResult histograms(const BackendCounts& counts, const double* weights, int64_t k,
                           std::vector<Histograms>* out, const Interrupt& interrupt) override;
  BackendResult make_em_state(const BackendCounts& counts, int64_t k, const double* row_weights,
                              std::unique_ptr<EmState>* out) override;

  BackendResult set_stream(void* stream) override;
  BackendResult get_stream(void** stream) const override;
  BackendResult synchronize() override;
  BackendResult check_caller_device(const void* p, const char* what_not_device) const override;
  BackendResult read_caller_device(void* host_dst, const void* src, size_t bytes,
                                   const char* what_not_device) override;
  BackendResult write_caller_device(void* dst, const void* host_src, size_t bytes,
                                    const char* what_not_device) override;

  // Waits for the stream before a counts object's memory is freed; errors
  // have nowhere to go from a destructor and are cleared.
  void drain_quietly();

 private:
  friend class CudaEmState;

  LaunchEnv env() const;
  // Row statistics made once with the table: the rows' order by total,
  // which every device histogram of the table uses.
  BackendResult prepare_totals(const DeviceTable& t);
  BackendResult finish_table(std::unique_ptr<CudaCounts> c, std::unique_ptr<BackendCounts>* out,
                             TableInfo* info);

  // Transfers and workspace.
  BackendResult grow(DeviceBuffer& buf, size_t bytes, const char* what);
  BackendResult upload(void* dst, const void* src, size_t bytes, const char* what);
  BackendResult copy_caller_device(void* dst, const void* src, size_t bytes, const void* caller,
                                   cudaMemcpyKind kind, const char* what_not_device,
                                   const char* what);
  BackendResult stage_for(size_t bytes, void** stage);
  BackendResult upload_staged(void* dst, size_t bytes, const char* what);

  // Likelihoods (cuda_loglik.cu).
  BackendResult copy_results_out(int64_t rows, int64_t kk, const LoglikRequest& req);
  BackendResult run_rowwise(const DeviceTable& t, const LoglikRequest& req, double* out,
                            int64_t out_sr);
  static TablePlan call_plan(const DeviceTable& t, int64_t K, size_t entry, int* k_group);
  BackendResult run_shared(const DeviceTable& t, const LoglikRequest& req, double* out,
                           int64_t out_sr, int64_t out_sk, SharedAlphaArgs* unfinished = nullptr);
  BackendResult rebuild_tables(const DeviceTable& t, const TablePlan& plan, const LoglikRequest& req,
                               const TableKey& key, size_t alpha_bytes, size_t ksum_bytes);

  // Histograms (cuda_histograms.cu).
  HistLayout hist_layout(const DeviceTable& t, int64_t k, bool weighted) const;
  BackendResult make_histograms(const DeviceTable& t, const double* weights, int64_t k,
                                bool device_weights, const double* tensor_w_max);
  BackendResult fetch_histograms(const DeviceTable& t, int64_t k, bool weighted,
                                 std::vector<Histograms>* out);
  BackendResult column_forms(const double* by_value, int64_t k, int64_t cols, int bins,
                             std::vector<Histograms>* out);

  // A mixture's state (cuda_em.cu): CudaEmState's steps.
  BackendResult em_init(CudaEmState& s, const double* row_weights);
  BackendResult em_begin(CudaEmState& s, const double* z, const double* w);
  BackendResult em_histograms(CudaEmState& s);
  BackendResult em_fit(CudaEmState& s, const EmFitSettings& settings, const char* fit,
                       double* alpha, EmFitOutcome* out);
  BackendResult em_estep(CudaEmState& s, const double* alpha, const double* log_pi, EmStep* out,
                         const Interrupt& interrupt);
  BackendResult em_download(CudaEmState& s, double* z, double* z_prev, double* lse);

  int device_;
  int sm_count_;
  std::shared_ptr<HostThreads> threads_;  // the context's, for host-side work
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
  uint64_t hist_gen_ = 0;      // bumped whenever hist_ is rewritten
  DeviceBuffer fit_;           // the M step's fits on the device
  DeviceBuffer em_;            // a mixture's state (CudaEmState), one at a time
  bool em_live_ = false;
  PinnedBuffer stage_;
  PinnedBuffer host_out_;
  bool tables_valid_ = false;
  uint64_t tables_gen_ = 1;  // bumped whenever the tables change
  uint64_t tables_alpha_version_ = 0;  // the parameter version the tables were built from
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
  std::vector<KSums> ksums_host_;
};

}  // namespace cuda
}  // namespace dirmn
