// init_ranks.cpp: the rows a mixture's initialisation fits its centres to,
// agreed over a communicator's ranks and sent to each of them.
#include "init_ranks.hpp"

#include <algorithm>
#include <cstddef>
#include <new>
#include <numeric>
#include <unordered_map>

namespace dirmn {
namespace {

constexpr BackendResult kNoMemory{DIRMN_ERROR_OUT_OF_MEMORY,
                                  "host memory for the rows the initialisation starts from", 0};

// Rows as doubles, the form in which ranks send them: per row its key,
// its number of cells, its squared norm, then the cells' columns (exact in
// a double) and their proportions.
void pack(const std::vector<double>& keys, const std::vector<SparseRow>& rows, std::vector<double>* out) {
  size_t n = 0;
  for (const SparseRow& r : rows) n += 3 + 2 * r.idx.size();
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < rows.size(); ++i) {
    const SparseRow& r = rows[i];
    out->push_back(keys[i]);
    out->push_back(static_cast<double>(r.idx.size()));
    out->push_back(r.norm2);
    for (uint32_t v : r.idx) out->push_back(static_cast<double>(v));
    out->insert(out->end(), r.p.begin(), r.p.end());
  }
}

void unpack(const std::vector<double>& in, std::vector<double>* keys, std::vector<SparseRow>* rows) {
  for (size_t at = 0; at < in.size();) {
    keys->push_back(in[at]);
    const size_t n = static_cast<size_t>(in[at + 1]);
    SparseRow r;
    r.norm2 = in[at + 2];
    r.idx.resize(n);
    for (size_t q = 0; q < n; ++q) r.idx[q] = static_cast<uint32_t>(in[at + 3 + q]);
    r.p.assign(in.begin() + static_cast<std::ptrdiff_t>(at + 3 + n),
               in.begin() + static_cast<std::ptrdiff_t>(at + 3 + 2 * n));
    rows->push_back(std::move(r));
    at += 3 + 2 * n;
  }
}

// Every rank's (key, row) pairs on every rank, in rank order and each
// rank's in its own order. `local` is voted first.
BackendResult exchange(Collective& c, BackendResult r, const std::vector<double>& keys,
                       const std::vector<SparseRow>& rows, std::vector<double>* all_keys,
                       std::vector<SparseRow>* all_rows) {
  Communicator& comm = c.comm();
  const size_t R = static_cast<size_t>(comm.ranks()), me = static_cast<size_t>(comm.rank());
  std::vector<std::vector<double>> buf;
  std::vector<int64_t> sizes;
  try {
    if (r.ok()) {
      buf.resize(R);
      pack(keys, rows, &buf[me]);
      sizes.assign(R, 0);
      sizes[me] = static_cast<int64_t>(buf[me].size());
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  if (!(r = comm.allreduce(sizes.data(), R)).ok()) return r;
  try {
    for (size_t q = 0; q < R; ++q)
      if (q != me) buf[q].resize(static_cast<size_t>(sizes[q]));
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  for (size_t q = 0; q < R && R > 1; ++q)
    if (!buf[q].empty() &&
        !(r = comm.broadcast(buf[q].data(), buf[q].size() * sizeof(double), static_cast<int>(q))).ok())
      return r;
  try {
    all_keys->clear();
    all_rows->clear();
    for (size_t q = 0; q < R; ++q) unpack(buf[q], all_keys, all_rows);
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  return c.agree(r);
}

}  // namespace

BackendResult init_sample_over_ranks(Collective& c, BackendResult r, const HostTable& t,
                                     math::RandomStream& rng, std::vector<SparseRow>* out) {
  Communicator& comm = c.comm();
  const size_t R = static_cast<size_t>(comm.ranks()), me = static_cast<size_t>(comm.rank());
  // This rank's rows with counts, and how many every rank has.
  std::vector<int64_t> with_counts, counts;
  try {
    if (r.ok()) {
      for (int64_t b = 0; b < t.rows; ++b)
        if (t.row_total[static_cast<size_t>(b)] > 0.0) with_counts.push_back(b);
      counts.assign(R, 0);
      counts[me] = static_cast<int64_t>(with_counts.size());
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  if (!(r = comm.allreduce(counts.data(), R)).ok()) return r;
  std::vector<double> keys, all_keys;
  std::vector<SparseRow> rows, all_rows;
  try {
    int64_t first = 0, n_all = 0;
    for (size_t q = 0; q < R; ++q) {
      if (q == me) first = n_all;
      n_all += counts[q];
    }
    // init_sample's partial Fisher-Yates over the whole table's rows with
    // counts, its array held only where it was swapped.
    const int64_t S = std::min(n_all, kInitSample);
    std::unordered_map<int64_t, int64_t> moved;
    const auto at = [&](int64_t i) {
      const auto it = moved.find(i);
      return it == moved.end() ? i : it->second;
    };
    for (int64_t i = 0; i < S; ++i) {
      const int64_t j = i + static_cast<int64_t>(rng.below(n_all - i));
      const int64_t pick = at(j);
      moved[j] = at(i);
      if (pick >= first && pick < first + counts[me]) {
        keys.push_back(static_cast<double>(i));
        rows.push_back(proportions(t, with_counts[static_cast<size_t>(pick - first)]));
      }
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = exchange(c, r, keys, rows, &all_keys, &all_rows)).ok()) return r;
  try {
    out->assign(all_rows.size(), SparseRow());
    for (size_t i = 0; i < all_rows.size(); ++i)
      (*out)[static_cast<size_t>(all_keys[i])] = std::move(all_rows[i]);
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  return c.agree(r);
}

BackendResult split_members_over_ranks(Collective& c, BackendResult r, const HostTable& t,
                                       int k_prev, const double* z_prev, int j,
                                       const double* row_weights, SplitMembers* out) {
  // Each rank's own members hold every member of the whole table's: a row
  // among the largest shares of all is among the largest of its rank's.
  SplitMembers mine, all;
  try {
    if (r.ok()) mine = split_members(t, k_prev, z_prev, j, row_weights);
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = exchange(c, r, mine.share, mine.rows, &all.share, &all.rows)).ok()) return r;
  try {
    if (static_cast<int64_t>(all.rows.size()) > kInitSample) {
      // In rank order, each rank's in row order or by share (ties in row
      // order): stable by share, ties stay in row order.
      std::vector<size_t> order(all.rows.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return all.share[a] > all.share[b]; });
      order.resize(static_cast<size_t>(kInitSample));
      out->rows.clear();
      out->share.clear();
      for (size_t i : order) {
        out->rows.push_back(std::move(all.rows[i]));
        out->share.push_back(all.share[i]);
      }
    } else {
      *out = std::move(all);
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  return c.agree(r);
}

}  // namespace dirmn
