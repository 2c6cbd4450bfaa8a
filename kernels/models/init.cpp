// init.cpp: the initialisations of a mixture's EM -- k-means and k-means++
// on row proportions, and DirichletMultinomial::dmn's soft k-means -- as
// starting responsibilities.
#include "init.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <new>

namespace dirmn {
namespace {

constexpr int kKmeansIterations = 50;
// dmn's soft k-means (DirichletMultinomial, src/dirichlet_fit_main.c):
// responsibilities exp(-stiffness x distance), until no centre moves more
// than the threshold or the iteration limit.
constexpr double kSoftStiffness = 50.0;
constexpr double kSoftCentreMove = 1e-6;
constexpr int kSoftIterations = 1000;
// Rows per block of the k-means assignment on the host threads.
constexpr int64_t kAssignBlockRows = 256;
// Column blocks per thread of the soft k-means centre update.
constexpr int64_t kBlocksPerThread = 8;

}  // namespace

SparseRow proportions(const HostTable& t, int64_t b) {
  SparseRow r;
  const double n = t.row_total[static_cast<size_t>(b)];
  auto put = [&](int64_t v, double x) {
    r.idx.push_back(static_cast<uint32_t>(v));
    r.p.push_back(x / n);
    r.norm2 += (x / n) * (x / n);
  };
  auto visit = [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(t.values.data());
    if (t.sparse) {
      for (int64_t i = t.row_ptr[static_cast<size_t>(b)]; i < t.row_ptr[static_cast<size_t>(b) + 1]; ++i)
        put(t.col_idx[static_cast<size_t>(i)], static_cast<double>(x[i]));
    } else {
      for (int64_t v = 0; v < t.cols; ++v)
        if (x[b * t.cols + v] != 0) put(v, static_cast<double>(x[b * t.cols + v]));
    }
  };
  with_value_type(t.vtype, visit);
  return r;
}

namespace {

// Squared distance between a sparse row and a dense centre (with its norm).
double dist2(const SparseRow& r, const double* c, double c_norm2) {
  double dot = 0.0;
  for (size_t i = 0; i < r.idx.size(); ++i) dot += r.p[i] * c[r.idx[i]];
  return std::max(0.0, r.norm2 + c_norm2 - 2.0 * dot);
}

// k centres interleaved, c[v k + j] the centre j's entry of column v, with
// their squared norms: a row's k distances are one pass over its cells,
// each reading k contiguous entries (k separate centres cost k passes, each
// a cache miss per cell).
struct Centres {
  int k = 0;
  int64_t V = 0;
  std::vector<double> c, norm2;
  Centres(int k_, int64_t V_)
      : k(k_), V(V_), c(static_cast<size_t>(k_) * static_cast<size_t>(V_), 0.0),
        norm2(static_cast<size_t>(k_), 0.0) {}
  double* at(int64_t v) { return c.data() + v * k; }
  const double* at(int64_t v) const { return c.data() + v * k; }
  // Centre j becomes row r.
  void set(int j, const SparseRow& r) {
    for (int64_t v = 0; v < V; ++v) c[static_cast<size_t>(v * k + j)] = 0.0;
    for (size_t i = 0; i < r.idx.size(); ++i) c[static_cast<size_t>(r.idx[i]) * k + j] = r.p[i];
    norm2[static_cast<size_t>(j)] = r.norm2;
  }
  // Squared distance from r to centre j (as dist2 for one centre).
  double dist2_one(const SparseRow& r, int j) const {
    double dot = 0.0;
    for (size_t i = 0; i < r.idx.size(); ++i) dot += r.p[i] * c[static_cast<size_t>(r.idx[i]) * k + j];
    return std::max(0.0, r.norm2 + norm2[static_cast<size_t>(j)] - 2.0 * dot);
  }
  // All k squared distances into d; each is dist2's, bit for bit (its dot
  // product summed over the row's cells in the same order).
  void dist2_all(const SparseRow& r, double* d) const {
    for (int j = 0; j < k; ++j) d[j] = 0.0;
    for (size_t i = 0; i < r.idx.size(); ++i) {
      const double p = r.p[i];
      const double* x = at(r.idx[i]);
      for (int j = 0; j < k; ++j) d[j] += p * x[j];
    }
    for (int j = 0; j < k; ++j) d[j] = std::max(0.0, r.norm2 + norm2[static_cast<size_t>(j)] - 2.0 * d[j]);
  }
  // The nearest centre (the first of equals) and its squared distance; d
  // is k doubles of workspace.
  int nearest(const SparseRow& r, double* d, double* best_d) const {
    dist2_all(r, d);
    int best = 0;
    double bd = std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j)
      if (d[j] < bd) {
        bd = d[j];
        best = j;
      }
    *best_d = bd;
    return best;
  }
};

// The sample's cells by column, rows ascending within each: a centre
// update sums every (centre, column) entry over rows in row order, as a
// pass over rows does, but a column's k entries are summed together and the
// columns split across the threads.
struct SampleColumns {
  std::vector<int64_t> ptr;  // V + 1
  std::vector<uint32_t> row;
  std::vector<double> p;
  std::vector<int64_t> blocks;  // column blocks of about equal cells
};

SampleColumns by_column(const std::vector<SparseRow>& sample, int64_t V, int64_t blocks) {
  SampleColumns sc;
  sc.ptr.assign(static_cast<size_t>(V + 1), 0);
  for (const SparseRow& r : sample)
    for (uint32_t v : r.idx) ++sc.ptr[static_cast<size_t>(v) + 1];
  for (int64_t v = 0; v < V; ++v) sc.ptr[static_cast<size_t>(v) + 1] += sc.ptr[static_cast<size_t>(v)];
  std::vector<int64_t> next(sc.ptr.begin(), sc.ptr.end() - 1);
  sc.row.resize(static_cast<size_t>(sc.ptr.back()));
  sc.p.resize(sc.row.size());
  for (size_t i = 0; i < sample.size(); ++i)
    for (size_t q = 0; q < sample[i].idx.size(); ++q) {
      const int64_t at = next[sample[i].idx[q]]++;
      sc.row[static_cast<size_t>(at)] = static_cast<uint32_t>(i);
      sc.p[static_cast<size_t>(at)] = sample[i].p[q];
    }
  sc.blocks.push_back(0);
  const int64_t total = sc.ptr.back();
  for (int64_t b = 1; b < blocks; ++b) {
    const int64_t target = total / blocks * b;
    const int64_t v = std::lower_bound(sc.ptr.begin(), sc.ptr.end(), target) - sc.ptr.begin();
    if (v > sc.blocks.back() && v < V) sc.blocks.push_back(v);
  }
  sc.blocks.push_back(V);
  return sc;
}

}  // namespace

std::vector<SparseRow> init_sample(const HostTable& t, math::RandomStream& rng) {
  std::vector<int64_t> with_counts;
  for (int64_t b = 0; b < t.rows; ++b)
    if (t.row_total[static_cast<size_t>(b)] > 0.0) with_counts.push_back(b);
  const int64_t n_all = static_cast<int64_t>(with_counts.size());
  const int64_t S = std::min(n_all, kInitSample);
  for (int64_t i = 0; i < S; ++i)
    std::swap(with_counts[static_cast<size_t>(i)], with_counts[static_cast<size_t>(i + rng.below(n_all - i))]);
  std::vector<SparseRow> sample;
  sample.reserve(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) sample.push_back(proportions(t, with_counts[static_cast<size_t>(i)]));
  return sample;
}

namespace {

// Rows [0, n) in fixed blocks of kAssignBlockRows on the host threads; each
// row's result depends on nothing else, so results do not depend on them.
// work: the loop's cost (HostThreads::kInlineWork), where known.
void for_each_block(HostThreads& threads, int64_t n, const std::function<void(int64_t, int64_t)>& body,
                    double work = HUGE_VAL) {
  const int64_t blocks = (n + kAssignBlockRows - 1) / kAssignBlockRows;
  threads.parallel_for(blocks, [&](int64_t q) {
    body(q * kAssignBlockRows, std::min(n, (q + 1) * kAssignBlockRows));
  }, work);
}

}  // namespace

// k-means on row proportions: seeds from `init`, Lloyd iterations on a
// sample of rows, then every row with counts is assigned to its nearest
// centre. Returns hard responsibilities (rows x k); rows without counts get
// 1/k each.
std::vector<double> kmeans_responsibilities(const HostTable& t, const std::vector<SparseRow>& sample,
                                            int k, dirmn_mixture_init init,
                                            math::RandomStream& rng, HostThreads& threads) {
  const int64_t V = t.cols;
  const auto for_rows = [&](int64_t n, const std::function<void(int64_t, int64_t)>& body) {
    for_each_block(threads, n, body);
  };
  const int64_t S = static_cast<int64_t>(sample.size());

  Centres C(k, V);
  // Seeding.
  std::vector<double> d2(static_cast<size_t>(S), std::numeric_limits<double>::infinity());
  C.set(0, sample[static_cast<size_t>(rng.below(S))]);
  for (int j = 1; j < k; ++j) {
    double total = 0.0;
    for (int64_t i = 0; i < S; ++i) {
      d2[static_cast<size_t>(i)] =
          std::min(d2[static_cast<size_t>(i)], C.dist2_one(sample[static_cast<size_t>(i)], j - 1));
      total += d2[static_cast<size_t>(i)];
    }
    int64_t pick = rng.below(S);
    if (init == DIRMN_INIT_KMEANSPP && total > 0.0) {
      // k-means++: a row with probability proportional to its squared
      // distance from the nearest chosen centre.
      double u = rng.uniform() * total;
      for (int64_t i = 0; i < S; ++i) {
        u -= d2[static_cast<size_t>(i)];
        if (u <= 0.0) {
          pick = i;
          break;
        }
      }
    }
    C.set(j, sample[static_cast<size_t>(pick)]);
  }
  // The columns the sample has counts in, ascending: every other column's
  // centres stay 0, and a wide sparse table's columns are mostly those (the
  // iterations' K x cols passes were much of a start's seeding).
  std::vector<int64_t> used;
  for (const SparseRow& r : sample) used.insert(used.end(), r.idx.begin(), r.idx.end());
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  // Lloyd iterations on the sample.
  std::vector<int> label(static_cast<size_t>(S), -1);
  std::vector<char> moved(static_cast<size_t>(S), 0);
  std::atomic<bool> no_memory{false};
  for (int it = 0; it < kKmeansIterations; ++it) {
    for_rows(S, [&](int64_t i0, int64_t i1) {
      try {
        std::vector<double> d(static_cast<size_t>(k));
        for (int64_t i = i0; i < i1; ++i) {
          double bd = 0.0;
          const int best = C.nearest(sample[static_cast<size_t>(i)], d.data(), &bd);
          moved[static_cast<size_t>(i)] = label[static_cast<size_t>(i)] != best;
          label[static_cast<size_t>(i)] = best;
          d2[static_cast<size_t>(i)] = bd;
        }
      } catch (const std::bad_alloc&) {
        no_memory = true;
      }
    });
    if (no_memory) throw std::bad_alloc();
    const bool changed = std::find(moved.begin(), moved.end(), 1) != moved.end();
    if (!changed && it > 0) break;
    for (int64_t v : used) std::fill(C.at(v), C.at(v) + k, 0.0);
    std::vector<int64_t> size(static_cast<size_t>(k), 0);
    for (int64_t i = 0; i < S; ++i) {
      const SparseRow& r = sample[static_cast<size_t>(i)];
      const int j = label[static_cast<size_t>(i)];
      for (size_t q = 0; q < r.idx.size(); ++q) C.at(r.idx[q])[j] += r.p[q];
      ++size[static_cast<size_t>(j)];
    }
    std::vector<double> n2(static_cast<size_t>(k), 0.0);
    for (int64_t v : used) {
      double* c = C.at(v);
      for (int j = 0; j < k; ++j) {
        if (size[static_cast<size_t>(j)] == 0) continue;
        c[j] /= static_cast<double>(size[static_cast<size_t>(j)]);
        n2[static_cast<size_t>(j)] += c[j] * c[j];
      }
    }
    for (int j = 0; j < k; ++j) {
      if (size[static_cast<size_t>(j)] == 0) {
        // An empty cluster restarts at the sample row farthest from its centre.
        const int64_t far = std::max_element(d2.begin(), d2.end()) - d2.begin();
        C.set(j, sample[static_cast<size_t>(far)]);
        d2[static_cast<size_t>(far)] = 0.0;
        continue;
      }
      C.norm2[static_cast<size_t>(j)] = n2[static_cast<size_t>(j)];
    }
  }
  // Hard assignment of every row.
  std::vector<double> z(static_cast<size_t>(t.rows * k), 1.0 / k);
  for_rows(t.rows, [&](int64_t b0, int64_t b1) {
    try {
      std::vector<double> d(static_cast<size_t>(k));
      for (int64_t b = b0; b < b1; ++b) {
        if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
        double bd = 0.0;
        const int best = C.nearest(proportions(t, b), d.data(), &bd);
        for (int j = 0; j < k; ++j) z[static_cast<size_t>(b * k + j)] = j == best ? 1.0 : 0.0;
      }
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
  });
  if (no_memory) throw std::bad_alloc();
  return z;
}

// Soft k-means on row proportions, as DirichletMultinomial::dmn initialises
// its EM: every row (of a sample of at most kInitSample rows with counts)
// starts with a random hard label; then, in turn, centres become the
// responsibility-weighted means of the proportions, and responsibilities
// exp(-kSoftStiffness d_j) / sum_i exp(-kSoftStiffness d_i), d_j the
// Euclidean distance to centre j. Every row gets the responsibilities of
// the final centres; rows without counts get 1/k each.
std::vector<double> soft_kmeans_responsibilities(const HostTable& t,
                                                 const std::vector<SparseRow>& sample, int k,
                                                 math::RandomStream& rng, HostThreads& threads) {
  const int64_t V = t.cols;
  const int64_t S = static_cast<int64_t>(sample.size());
  std::vector<double> zs(static_cast<size_t>(S * k), 0.0);
  for (int64_t i = 0; i < S; ++i) zs[static_cast<size_t>(i * k + static_cast<int64_t>(rng.below(k)))] = 1.0;
  Centres C(k, V), next(k, V);
  const SampleColumns cols = by_column(sample, V, threads.size() * kBlocksPerThread);
  std::vector<double> weight(static_cast<size_t>(k)), n2(static_cast<size_t>(k)),
      d2(static_cast<size_t>(k));
  // Responsibilities of one row for the current centres (d: k doubles of
  // workspace).
  const auto soft = [&](const SparseRow& r, double* z) {
    C.dist2_all(r, z);
    double dmin = std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) {
      z[j] = std::sqrt(z[j]);
      dmin = std::min(dmin, z[j]);
    }
    double sum = 0.0;
    for (int j = 0; j < k; ++j) {
      // Shifted by the nearest distance (the ratio is unchanged) so that
      // exp does not underflow for every centre at once.
      z[j] = std::exp(-kSoftStiffness * (z[j] - dmin));
      sum += z[j];
    }
    for (int j = 0; j < k; ++j) z[j] /= sum;
  };
  const int64_t col_blocks = static_cast<int64_t>(cols.blocks.size()) - 1;
  for (int it = 0; it < kSoftIterations; ++it) {
    // The centres: responsibility-weighted sums by column, over the rows in
    // order, the columns on the threads.
    threads.parallel_for(col_blocks, [&](int64_t q) {
      for (int64_t v = cols.blocks[static_cast<size_t>(q)]; v < cols.blocks[static_cast<size_t>(q) + 1]; ++v) {
        // A column without sampled counts keeps centres of 0 from the start.
        if (cols.ptr[static_cast<size_t>(v)] == cols.ptr[static_cast<size_t>(v) + 1]) continue;
        double* c = next.at(v);
        for (int j = 0; j < k; ++j) c[j] = 0.0;
        for (int64_t e = cols.ptr[static_cast<size_t>(v)]; e < cols.ptr[static_cast<size_t>(v) + 1]; ++e) {
          const double p = cols.p[static_cast<size_t>(e)];
          const double* zi = zs.data() + static_cast<int64_t>(cols.row[static_cast<size_t>(e)]) * k;
          for (int j = 0; j < k; ++j) c[j] += zi[j] * p;
        }
      }
    }, static_cast<double>(cols.ptr.back()) * k);
    std::fill(weight.begin(), weight.end(), 0.0);
    for (int64_t i = 0; i < S; ++i)
      for (int j = 0; j < k; ++j) weight[static_cast<size_t>(j)] += zs[static_cast<size_t>(i * k + j)];
    std::fill(n2.begin(), n2.end(), 0.0);
    std::fill(d2.begin(), d2.end(), 0.0);
    for (int64_t v = 0; v < V; ++v) {
      // A column no sampled row has counts in keeps centres of 0 (its
      // terms are exact zeros): most of a wide sparse table's.
      if (cols.ptr[static_cast<size_t>(v)] == cols.ptr[static_cast<size_t>(v) + 1]) continue;
      double* c = next.at(v);
      const double* old = C.at(v);
      for (int j = 0; j < k; ++j) {
        const double wj = weight[static_cast<size_t>(j)];
        if (wj > 0.0) c[j] /= wj;
        n2[static_cast<size_t>(j)] += c[j] * c[j];
        d2[static_cast<size_t>(j)] += (c[j] - old[j]) * (c[j] - old[j]);
      }
    }
    double moved = 0.0;
    for (int j = 0; j < k; ++j) {
      next.norm2[static_cast<size_t>(j)] = n2[static_cast<size_t>(j)];
      moved = std::max(moved, std::sqrt(d2[static_cast<size_t>(j)]));
    }
    std::swap(C, next);
    for_each_block(threads, S, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) soft(sample[static_cast<size_t>(i)], zs.data() + i * k);
    }, static_cast<double>(cols.ptr.back()) * k);
    if (moved <= kSoftCentreMove) break;
  }
  std::vector<double> z(static_cast<size_t>(t.rows * k), 1.0 / k);
  std::atomic<bool> no_memory{false};
  for_each_block(threads, t.rows, [&](int64_t b0, int64_t b1) {
    try {
      for (int64_t b = b0; b < b1; ++b)
        if (t.row_total[static_cast<size_t>(b)] > 0.0) soft(proportions(t, b), z.data() + b * k);
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
  });
  if (no_memory) throw std::bad_alloc();
  return z;
}

SplitMembers split_members(const HostTable& t, int k_prev, const double* z_prev, int j,
                           const double* row_weights) {
  const auto share = [&](int64_t b) {
    return t.row_total[static_cast<size_t>(b)] > 0.0
               ? z_prev[b * k_prev + j] * (row_weights ? row_weights[b] : 1.0)
               : 0.0;
  };
  std::vector<int64_t> members;
  for (int64_t b = 0; b < t.rows; ++b)
    if (share(b) > 0.0) members.push_back(b);
  if (static_cast<int64_t>(members.size()) > kInitSample) {
    std::stable_sort(members.begin(), members.end(),
                     [&](int64_t a, int64_t b) { return share(a) > share(b); });
    members.resize(static_cast<size_t>(kInitSample));
  }
  SplitMembers m;
  m.rows.reserve(members.size());
  m.share.reserve(members.size());
  for (int64_t b : members) {
    m.rows.push_back(proportions(t, b));
    m.share.push_back(share(b));
  }
  return m;
}

std::vector<double> split_responsibilities(const HostTable& t, int k_prev, const double* z_prev,
                                           int j, const SplitMembers& members, HostThreads& threads) {
  const int64_t V = t.cols;
  const int k = k_prev + 1;
  const std::vector<SparseRow>& rows = members.rows;
  const int64_t S = static_cast<int64_t>(rows.size());
  std::vector<double> centre(static_cast<size_t>(2 * V), 0.0), c_norm(2, 0.0);
  const auto set_centre = [&](int c, const SparseRow& r) {
    double* x = centre.data() + c * V;
    std::fill(x, x + V, 0.0);
    for (size_t i = 0; i < r.idx.size(); ++i) x[r.idx[i]] = r.p[i];
    c_norm[static_cast<size_t>(c)] = r.norm2;
  };
  // The weighted mean of the rows labelled `side` (every row: side < 0)
  // into centre c; false when it has no weight.
  std::vector<int> label(static_cast<size_t>(S), 0);
  const auto mean_into = [&](int c, int side) {
    double* x = centre.data() + c * V;
    std::fill(x, x + V, 0.0);
    double wsum = 0.0;
    for (int64_t i = 0; i < S; ++i) {
      if (side >= 0 && label[static_cast<size_t>(i)] != side) continue;
      const double u = members.share[static_cast<size_t>(i)];
      const SparseRow& r = rows[static_cast<size_t>(i)];
      for (size_t q = 0; q < r.idx.size(); ++q) x[r.idx[q]] += u * r.p[q];
      wsum += u;
    }
    if (!(wsum > 0.0)) return false;
    double n2 = 0.0;
    for (int64_t v = 0; v < V; ++v) {
      x[v] /= wsum;
      n2 += x[v] * x[v];
    }
    c_norm[static_cast<size_t>(c)] = n2;
    return true;
  };
  const auto farthest = [&](int c) {
    int64_t far = 0;
    double fd = -1.0;
    for (int64_t i = 0; i < S; ++i) {
      const double d = dist2(rows[static_cast<size_t>(i)], centre.data() + c * V, c_norm[static_cast<size_t>(c)]);
      if (d > fd) {
        fd = d;
        far = i;
      }
    }
    return far;
  };
  if (S > 0) {
    mean_into(0, -1);
    const int64_t a = farthest(0);
    set_centre(0, rows[static_cast<size_t>(a)]);
    set_centre(1, rows[static_cast<size_t>(farthest(0))]);
    for (int it = 0; it < kKmeansIterations; ++it) {
      bool changed = false;
      for (int64_t i = 0; i < S; ++i) {
        const SparseRow& r = rows[static_cast<size_t>(i)];
        const int side = dist2(r, centre.data() + V, c_norm[1]) < dist2(r, centre.data(), c_norm[0]);
        changed = changed || side != label[static_cast<size_t>(i)];
        label[static_cast<size_t>(i)] = side;
      }
      if (!changed && it > 0) break;
      // A side left without rows keeps its centre.
      std::vector<double> keep(centre);
      const std::vector<double> keep_norm(c_norm);
      for (int c = 0; c < 2; ++c)
        if (!mean_into(c, c)) {
          std::copy(keep.begin() + c * V, keep.begin() + (c + 1) * V, centre.begin() + c * V);
          c_norm[static_cast<size_t>(c)] = keep_norm[static_cast<size_t>(c)];
        }
    }
  }
  std::vector<double> z(static_cast<size_t>(t.rows * k), 1.0 / k);
  std::atomic<bool> no_memory{false};
  for_each_block(threads, t.rows, [&](int64_t b0, int64_t b1) {
    try {
      for (int64_t b = b0; b < b1; ++b) {
        if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
        double* zb = z.data() + b * k;
        const double* zp = z_prev + b * k_prev;
        for (int i = 0; i < k_prev; ++i) zb[i] = zp[i];
        zb[k_prev] = 0.0;
        if (S == 0 || zp[j] == 0.0) continue;
        const SparseRow r = proportions(t, b);
        if (dist2(r, centre.data() + V, c_norm[1]) < dist2(r, centre.data(), c_norm[0])) {
          zb[k_prev] = zp[j];
          zb[j] = 0.0;
        }
      }
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
  });
  if (no_memory) throw std::bad_alloc();
  return z;
}

}  // namespace dirmn
