// host_em.cpp: a mixture's EM state in host memory. The likelihoods come
// from the table's likelihood step (on whichever backend runs it), the
// M step's histograms from its histogram step, its fits from the host's
// Newton engine (host_fit.hpp); the log-sum-exp and the sums over rows run
// here, in row order.
#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "host_fit.hpp"
#include "math/logsumexp.hpp"
#include "stored_table.hpp"

namespace dirmn {
namespace {

class HostEmState final : public EmState {
 public:
  HostEmState(const StoredTable& table, int64_t k, const double* row_weights)
      : table_(table), k_(k), row_w_(row_weights), rows_(table.info->rows) {}

  // Allocates the arrays (std::bad_alloc when there is no room).
  void allocate() {
    const size_t n = static_cast<size_t>(rows_ * k_);
    z_.resize(n);
    z_prev_.resize(n);
    w_.resize(n);
    L_.resize(n);
    lse_.resize(static_cast<size_t>(rows_));
  }

  BackendResult begin(const double* z, const double* w) override {
    std::copy(z, z + z_.size(), z_.begin());
    std::copy(w, w + w_.size(), w_.begin());
    return {};
  }

  BackendResult histograms(const Interrupt& interrupt) override {
    have_kept_ = false;
    const BackendResult r = table_.run(Step::kHistograms, [&](Backend& b, const BackendCounts& d) {
      return b.histograms(d, w_.data(), k_, &kept_, interrupt);
    });
    have_kept_ = r.ok();
    return r;
  }

  BackendResult fit_components(const EmFitSettings& settings, const char* fit, const char* warm,
                               HostThreads& threads, double* alpha, EmFitOutcome* out) override {
    if (!have_kept_) return {DIRMN_ERROR_INTERNAL, "no M-step histograms to fit", 0};
    out->reset(k_);
    return fit_components_on_host(kept_, settings, fit, warm, table_.info->cols, threads, alpha, out);
  }

  BackendResult e_step(const double* alpha, const double* log_pi, EmStep* out,
                       const Interrupt& interrupt) override {
    const BackendResult r = table_.full_loglik(alpha, k_, L_.data(), interrupt);
    if (!r.ok()) return r;
    z_prev_.swap(z_);
    const int k = static_cast<int>(k_);
    out->loglik = math::responsibilities(L_.data(), log_pi, rows_, k, row_w_, z_.data(), lse_.data());
    double change = 0.0;
    for (size_t i = 0; i < z_.size(); ++i) change = std::max(change, std::fabs(z_[i] - z_prev_[i]));
    out->max_change = change;
    out->z_sum.assign(static_cast<size_t>(k), 0.0);
    out->w_sum.assign(static_cast<size_t>(k), 0.0);
    for (int64_t b = 0; b < rows_; ++b) {
      const double r_b = row_w_ ? row_w_[b] : 1.0;
      for (int j = 0; j < k; ++j) {
        const size_t i = static_cast<size_t>(b * k + j);
        w_[i] = math::m_step_weight(r_b, z_[i]);
        out->w_sum[static_cast<size_t>(j)] += w_[i];
      }
    }
    for (int64_t b = 0; b < rows_; ++b)
      for (int j = 0; j < k; ++j) out->z_sum[static_cast<size_t>(j)] += z_[static_cast<size_t>(b * k + j)];
    return {};
  }

  std::vector<Histograms>* host_histograms() override { return have_kept_ ? &kept_ : nullptr; }

  BackendResult download(double* z, double* z_prev, double* lse) override {
    if (z) std::copy(z_.begin(), z_.end(), z);
    if (z_prev) std::copy(z_prev_.begin(), z_prev_.end(), z_prev);
    if (lse) std::copy(lse_.begin(), lse_.end(), lse);
    return {};
  }

 private:
  const StoredTable& table_;
  const int64_t k_;
  const double* row_w_;
  const int64_t rows_;
  std::vector<double> z_, z_prev_, w_, L_, lse_;
  std::vector<Histograms> kept_;
  bool have_kept_ = false;
};

}  // namespace

BackendResult make_host_em_state(const StoredTable& table, int64_t k, const double* row_weights,
                                 std::unique_ptr<EmState>* out) {
  try {
    auto s = std::make_unique<HostEmState>(table, k, row_weights);
    s->allocate();
    *out = std::move(s);
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the mixture state", 0};
  }
  return {};
}

}  // namespace dirmn
