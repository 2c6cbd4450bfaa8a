// cache.hpp: the per-table caches kept beside a stored table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "histogram.hpp"

namespace dirmn {

// A table's count histograms, kept while the row weights they were built
// with are unchanged: repeated shared-alpha sums (a fit's iterations, a
// caller's optimiser) cost O(distinct counts) instead of a pass over the
// table.
class HistogramCache {
 public:
  // The histograms built with these weights (as many as the table has
  // rows, or null for 1), or null.
  const Histograms* find(const double* weights) const {
    if (!hist_ || weighted_ != (weights != nullptr)) return nullptr;
    if (weights != nullptr && !std::equal(weights_.begin(), weights_.end(), weights)) return nullptr;
    return hist_.get();
  }

  // Keeps h as the histograms of these weights and returns them. Throws
  // std::bad_alloc (the cache is then as it was).
  // serial: what the merge over ranks that built h was numbered
  // (Communicator::next_serial), 0 for a table of one process.
  const Histograms* store(Histograms&& h, const double* weights, int64_t rows, int64_t serial = 0) {
    auto kept = std::make_unique<Histograms>(std::move(h));
    std::vector<double> w;
    if (weights != nullptr) w.assign(weights, weights + rows);
    hist_ = std::move(kept);
    weighted_ = weights != nullptr;
    weights_.swap(w);
    serial_ = serial;
    return hist_.get();
  }
  // The kept histograms' serial (see store).
  int64_t serial() const { return serial_; }

 private:
  std::unique_ptr<Histograms> hist_;
  bool weighted_ = false;
  std::vector<double> weights_;
  int64_t serial_ = 0;
};

}  // namespace dirmn
