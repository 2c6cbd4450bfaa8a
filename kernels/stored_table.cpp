// stored_table.cpp: where each step of a stored table runs.
#include "stored_table.hpp"

namespace dirmn {

StoredTable::Where StoredTable::where(Step step) const {
  switch (step) {
    case Step::kMixtureEm:
    case Step::kMixtureFits:
      // A mixture's initialisation needs the rows on the host, wherever its
      // EM then runs; the host EM state reads the likelihoods and
      // histograms from the steps above.
      if (host_rows() == nullptr && !host_on_demand) return Where::kNowhere;
      if (backend->supports(step, *data)) return Where::kBackend;
      return where(Step::kHistograms) != Where::kNowhere ? Where::kHost : Where::kNowhere;
    default:
      if (backend->supports(step, *data)) return Where::kBackend;
      if (host == nullptr) return host_on_demand ? Where::kHost : Where::kNowhere;
      return host->supports(step, *host_data) ? Where::kHost : Where::kNowhere;
  }
}

const HostTable* StoredTable::host_rows() const {
  const HostTable* h = backend->host_table(*data);
  if (h == nullptr && host != nullptr) h = host->host_table(*host_data);
  return h;
}

uint32_t StoredTable::host_steps() const {
  uint32_t bits = 0;
  for (Step s : kAllSteps) {
    const Where w = where(s);
    const bool on_host =
        w == Where::kHost || (w == Where::kBackend && backend->kind() == DIRMN_BACKEND_CPU);
    if (on_host) bits |= static_cast<uint32_t>(s);
  }
  if (fell_back != nullptr) bits |= fell_back->load();
  return bits;
}

uint32_t StoredTable::unavailable_steps() const {
  uint32_t bits = 0;
  for (Step s : kAllSteps)
    if (where(s) == Where::kNowhere) bits |= static_cast<uint32_t>(s);
  return bits;
}

BackendResult StoredTable::full_loglik(const double* alpha, int64_t k, double* L,
                                       const Interrupt& interrupt) const {
  LoglikRequest req;
  req.alpha = alpha;
  req.k = k;
  req.full = true;
  req.out = L;
  req.out_stride_row = k;
  req.out_stride_k = 1;
  return run(Step::kLoglik, [&](Backend& b, const BackendCounts& d) {
    return b.loglik(d, req, interrupt);
  });
}

BackendResult StoredTable::make_em_state(int64_t k, const double* row_weights,
                                         std::unique_ptr<EmState>* out) const {
  const Where w = where(Step::kMixtureEm);
  if (w == Where::kNowhere)
    return {DIRMN_ERROR_NOT_SUPPORTED, "mixtures of counts wrapped from device memory", 0};
  if (w == Where::kBackend) {
    const BackendResult r = backend->make_em_state(*data, k, row_weights, out);
    // The backend keeps no state for this k: the host keeps it.
    if (r.status != DIRMN_ERROR_NOT_SUPPORTED) return r;
    note_fallback(Step::kMixtureEm);
  }
  return make_host_em_state(*this, k, row_weights, out);
}

}  // namespace dirmn
