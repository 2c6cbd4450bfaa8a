// cpu_loglik_plan.cpp: what the CPU likelihood of shared alpha plans
// (cpu_rows.hpp): the per-column table layout the counts keep, and the
// rows' distinct totals of a call.
#include <algorithm>
#include <cmath>

#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {

std::unique_ptr<TableLayout> plan_tables(const HostTable& t) {
  auto layout = std::make_unique<TableLayout>();
  TableLayout& L = *layout;
  L.packed.resize(static_cast<size_t>(t.cols));
  for (int64_t v = 0; v < t.cols; ++v) {
    const double cmax = t.col_max[static_cast<size_t>(v)];
    const int64_t want = static_cast<int64_t>(std::min<double>(cmax, kTableMaxCount)) + 1;
    const bool worth = static_cast<double>(t.col_nnz[static_cast<size_t>(v)]) >=
                       kTableMinNnzPerEntry * static_cast<double>(want);
    // Real-valued counts are tabulated only at their integer values, so they
    // always keep the direct path available (covers_all = false).
    const int64_t cut = worth ? want : 1;
    const int64_t offset = cut > 1 ? L.size : 0;
    L.packed[static_cast<size_t>(v)] = static_cast<uint64_t>(offset) << kCutBits | static_cast<uint64_t>(cut);
    if (cut > 1) L.size += cut;
    L.max_cut = std::max(L.max_cut, cut);
    if (static_cast<double>(cut) <= cmax || t.real_valued) L.covers_all = false;
    if ((static_cast<double>(cut) <= cmax || t.real_valued) && math::deep_count_applies(cmax))
      L.deep.push_back(v);
  }
  if (!L.deep.empty()) {
    L.deep_slot.assign(static_cast<size_t>(t.cols), 0);
    for (size_t i = 0; i < L.deep.size(); ++i)
      L.deep_slot[static_cast<size_t>(L.deep[i])] = static_cast<uint32_t>(i);
  }
  return layout;
}

DistinctTotals distinct_totals(const HostTable& t) {
  DistinctTotals d;
  if (t.real_valued || t.rows < 2 * kRowsPerDistinctTotal) return d;
  double max_total = 0.0;
  for (double n : t.row_total) max_total = std::max(max_total, n);
  if (max_total > static_cast<double>(kTotalSlotsPerRow * t.rows) || max_total >= 4294967295.0) return d;
  // Marks first: the totals then come out ascending.
  d.slot.assign(static_cast<size_t>(max_total) + 1, 0);
  for (double n : t.row_total) d.slot[static_cast<size_t>(n)] = 1;
  size_t distinct = 0;
  for (uint32_t s : d.slot) distinct += s;
  if (distinct > static_cast<size_t>(t.rows / kRowsPerDistinctTotal)) return DistinctTotals{};
  d.value.reserve(distinct);
  for (size_t n = 0; n < d.slot.size(); ++n) {
    if (d.slot[n] == 0) continue;
    d.slot[n] = static_cast<uint32_t>(d.value.size());
    d.value.push_back(static_cast<double>(n));
  }
  return d;
}

}  // namespace cpu
}  // namespace dirmn
