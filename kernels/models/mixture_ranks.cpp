// mixture_ranks.cpp: a mixture's sums over the rows of a table split over
// ranks.
#include "mixture_ranks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <new>
#include <vector>

#include "ranks.hpp"

namespace dirmn {
namespace {

constexpr BackendResult kNoMemory{DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the sums over ranks", 0};

}  // namespace

BackendResult em_totals(const StoredTable& table, BackendResult r, const double* weights,
                        EmTotals* out) {
  const int64_t rows = table.info->rows;
  double w = 0.0;
  for (int64_t b = 0; b < rows; ++b) w += weights ? weights[b] : 1.0;
  *out = EmTotals{rows, w, 0};
  if (table.collective == nullptr) return r;
  Collective& c = *table.collective;
  const size_t R = static_cast<size_t>(c.comm().ranks());
  // Each rank's weight and rows (exact in a double below 2^53).
  const double mine[2] = {w, static_cast<double>(rows)};
  std::vector<double> slots;
  if (!(r = gather_over_ranks(c, r, mine, 2, &slots)).ok()) return r;
  out->rows = 0;
  out->weight = 0.0;
  out->first_rank_with_rows = -1;
  for (size_t q = 0; q < R; ++q) {
    out->weight += slots[2 * q];  // rank order
    out->rows += static_cast<int64_t>(slots[2 * q + 1]);
    if (out->first_rank_with_rows < 0 && slots[2 * q + 1] > 0.0) out->first_rank_with_rows = static_cast<int>(q);
  }
  if (out->first_rank_with_rows < 0) out->first_rank_with_rows = 0;
  return {};
}

BackendResult reduce_e_step(Collective& c, BackendResult r, EmStep* st) {
  const size_t k = st->z_sum.size(), n = 2 * k + 2;
  const size_t R = static_cast<size_t>(c.comm().ranks());
  std::vector<double> mine, slots;
  try {
    if (r.ok()) {
      mine.reserve(n);
      mine.push_back(st->loglik);
      mine.insert(mine.end(), st->z_sum.begin(), st->z_sum.end());
      mine.insert(mine.end(), st->w_sum.begin(), st->w_sum.end());
      mine.push_back(st->max_change);
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = gather_over_ranks(c, r, mine.data(), n, &slots)).ok()) return r;
  std::vector<double> sum(n - 1, 0.0);  // every rank's length n: its k is the call's
  double change = 0.0;
  for (size_t q = 0; q < R; ++q) {
    const double* x = slots.data() + q * n;
    for (size_t i = 0; i + 1 < n; ++i) sum[i] += x[i];
    change = std::fmax(change, x[n - 1]);
  }
  st->loglik = sum[0];
  std::copy(sum.begin() + 1, sum.begin() + 1 + static_cast<std::ptrdiff_t>(k), st->z_sum.begin());
  std::copy(sum.begin() + 1 + static_cast<std::ptrdiff_t>(k), sum.end(), st->w_sum.begin());
  st->max_change = change;
  return {};
}

BackendResult share_component_fits(Collective& c, BackendResult r, int k, int64_t cols, double* alpha,
                                   EmFitOutcome* out) {
  Communicator& comm = c.comm();
  const int R = comm.ranks();
  // Per component: status, converged, log prior, log det, then its alpha.
  const size_t each = 4 + static_cast<size_t>(cols);
  std::vector<double> buf;
  try {
    if (r.ok()) buf.resize(each * static_cast<size_t>((k + R - 1) / R));
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok() || R == 1) return r;
  for (int q = 0; q < R; ++q) {
    size_t at = 0;
    if (q == comm.rank())
      for (int j = q; j < k; j += R, at += each) {
        const size_t jj = static_cast<size_t>(j);
        buf[at] = out->status[jj];
        buf[at + 1] = out->converged[jj];
        buf[at + 2] = out->log_prior[jj];
        buf[at + 3] = out->log_det[jj];
        std::copy(alpha + j * cols, alpha + (j + 1) * cols, buf.begin() + static_cast<std::ptrdiff_t>(at + 4));
      }
    const size_t bytes = each * static_cast<size_t>((k - q + R - 1) / R) * sizeof(double);
    if (bytes > 0 && !(r = comm.broadcast(buf.data(), bytes, q)).ok()) return r;
    if (q == comm.rank()) continue;
    at = 0;
    for (int j = q; j < k; j += R, at += each) {
      const size_t jj = static_cast<size_t>(j);
      out->status[jj] = static_cast<int>(buf[at]);
      out->converged[jj] = static_cast<char>(buf[at + 1]);
      out->log_prior[jj] = buf[at + 2];
      out->log_det[jj] = buf[at + 3];
      std::copy(buf.begin() + static_cast<std::ptrdiff_t>(at + 4), buf.begin() + static_cast<std::ptrdiff_t>(at + each),
                alpha + j * cols);
    }
  }
  return {};
}

BackendResult worst_row(const StoredTable& table, BackendResult r, const EmTotals& totals,
                        const double* lse, int64_t* row) {
  const HostTable& host = *table.host_rows();
  const int64_t rows = table.info->rows;
  const bool first = table.collective == nullptr || table.collective->comm().rank() == totals.first_rank_with_rows;
  // The search of one process over this rank's rows.
  int64_t worst = first && rows > 0 ? 0 : -1;
  double worst_lse = worst == 0 ? lse[0] : std::numeric_limits<double>::infinity();
  if (r.ok())
    for (int64_t b = first ? 1 : 0; b < rows; ++b)
      if (host.row_total[static_cast<size_t>(b)] > 0 && (worst < 0 || lse[b] < worst_lse)) {
        worst = b;
        worst_lse = lse[b];
      }
  *row = worst;
  if (table.collective == nullptr) return r;
  Collective& c = *table.collective;
  std::vector<double> slots;
  if (!(r = gather_over_ranks(c, r, &worst_lse, 1, &slots)).ok()) return r;
  // The same search over the ranks in turn.
  const size_t R = slots.size();
  size_t at = static_cast<size_t>(totals.first_rank_with_rows);
  for (size_t q = at + 1; q < R; ++q)
    if (slots[q] < slots[at]) at = q;
  if (at != static_cast<size_t>(c.comm().rank())) *row = -1;
  return {};
}

}  // namespace dirmn
