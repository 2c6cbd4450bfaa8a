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

// Rows sampled for the k-means initialisation.
constexpr int64_t kInitSample = 4096;
constexpr int kKmeansIterations = 50;
// dmn's soft k-means (DirichletMultinomial, src/dirichlet_fit_main.c):
// responsibilities exp(-stiffness x distance), until no centre moves more
// than the threshold or the iteration limit.
constexpr double kSoftStiffness = 50.0;
constexpr double kSoftCentreMove = 1e-6;
constexpr int kSoftIterations = 1000;
// Rows per block of the k-means assignment on the host threads.
constexpr int64_t kAssignBlockRows = 256;

struct SparseRow {
  std::vector<uint32_t> idx;
  std::vector<double> p;
  double norm2 = 0.0;
};

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

// Squared distance between a sparse row and a dense centre (with its norm).
double dist2(const SparseRow& r, const double* c, double c_norm2) {
  double dot = 0.0;
  for (size_t i = 0; i < r.idx.size(); ++i) dot += r.p[i] * c[r.idx[i]];
  return std::max(0.0, r.norm2 + c_norm2 - 2.0 * dot);
}

// The proportions of a uniform sample, without replacement (partial
// Fisher-Yates), of at most kInitSample rows with counts: what both k-means
// initialisations iterate on.
std::vector<SparseRow> sample_rows(const HostTable& t, math::RandomStream& rng) {
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

// Rows [0, n) in fixed blocks of kAssignBlockRows on the host threads; each
// row's result depends on nothing else, so results do not depend on them.
void for_each_block(HostThreads& threads, int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t blocks = (n + kAssignBlockRows - 1) / kAssignBlockRows;
  threads.parallel_for(blocks, [&](int64_t q) {
    body(q * kAssignBlockRows, std::min(n, (q + 1) * kAssignBlockRows));
  });
}

}  // namespace

// k-means on row proportions: seeds from `init`, Lloyd iterations on a
// sample of rows, then every row with counts is assigned to its nearest
// centre. Returns hard responsibilities (rows x k); rows without counts get
// 1/k each.
std::vector<double> kmeans_responsibilities(const HostTable& t, int k, dirmn_mixture_init init,
                                            math::RandomStream& rng, HostThreads& threads) {
  const int64_t V = t.cols;
  const auto for_rows = [&](int64_t n, const std::function<void(int64_t, int64_t)>& body) {
    for_each_block(threads, n, body);
  };
  const std::vector<SparseRow> sample = sample_rows(t, rng);
  const int64_t S = static_cast<int64_t>(sample.size());

  std::vector<double> centre(static_cast<size_t>(k * V), 0.0), c_norm(static_cast<size_t>(k), 0.0);
  auto set_centre = [&](int j, const SparseRow& r) {
    double* c = centre.data() + static_cast<int64_t>(j) * V;
    std::fill(c, c + V, 0.0);
    for (size_t i = 0; i < r.idx.size(); ++i) c[r.idx[i]] = r.p[i];
    c_norm[static_cast<size_t>(j)] = r.norm2;
  };
  // Seeding.
  std::vector<double> d2(static_cast<size_t>(S), std::numeric_limits<double>::infinity());
  set_centre(0, sample[static_cast<size_t>(rng.below(S))]);
  for (int j = 1; j < k; ++j) {
    double total = 0.0;
    for (int64_t i = 0; i < S; ++i) {
      d2[static_cast<size_t>(i)] = std::min(d2[static_cast<size_t>(i)],
                                            dist2(sample[static_cast<size_t>(i)], centre.data() + (j - 1) * V, c_norm[static_cast<size_t>(j - 1)]));
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
    set_centre(j, sample[static_cast<size_t>(pick)]);
  }
  // Lloyd iterations on the sample.
  std::vector<int> label(static_cast<size_t>(S), -1);
  std::vector<char> moved(static_cast<size_t>(S), 0);
  for (int it = 0; it < kKmeansIterations; ++it) {
    for_rows(S, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        int best = 0;
        double bd = std::numeric_limits<double>::infinity();
        for (int j = 0; j < k; ++j) {
          const double d = dist2(sample[static_cast<size_t>(i)], centre.data() + j * V, c_norm[static_cast<size_t>(j)]);
          if (d < bd) {
            bd = d;
            best = j;
          }
        }
        moved[static_cast<size_t>(i)] = label[static_cast<size_t>(i)] != best;
        label[static_cast<size_t>(i)] = best;
        d2[static_cast<size_t>(i)] = bd;
      }
    });
    const bool changed = std::find(moved.begin(), moved.end(), 1) != moved.end();
    if (!changed && it > 0) break;
    std::fill(centre.begin(), centre.end(), 0.0);
    std::vector<int64_t> size(static_cast<size_t>(k), 0);
    for (int64_t i = 0; i < S; ++i) {
      const SparseRow& r = sample[static_cast<size_t>(i)];
      double* c = centre.data() + label[static_cast<size_t>(i)] * V;
      for (size_t q = 0; q < r.idx.size(); ++q) c[r.idx[q]] += r.p[q];
      ++size[static_cast<size_t>(label[static_cast<size_t>(i)])];
    }
    for (int j = 0; j < k; ++j) {
      double* c = centre.data() + j * V;
      if (size[static_cast<size_t>(j)] == 0) {
        // An empty cluster restarts at the sample row farthest from its centre.
        const int64_t far = std::max_element(d2.begin(), d2.end()) - d2.begin();
        set_centre(j, sample[static_cast<size_t>(far)]);
        d2[static_cast<size_t>(far)] = 0.0;
        continue;
      }
      double n2 = 0.0;
      for (int64_t v = 0; v < V; ++v) {
        c[v] /= static_cast<double>(size[static_cast<size_t>(j)]);
        n2 += c[v] * c[v];
      }
      c_norm[static_cast<size_t>(j)] = n2;
    }
  }
  // Hard assignment of every row.
  std::vector<double> z(static_cast<size_t>(t.rows * k), 1.0 / k);
  std::atomic<bool> no_memory{false};
  for_rows(t.rows, [&](int64_t b0, int64_t b1) {
    try {
      for (int64_t b = b0; b < b1; ++b) {
        if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
        const SparseRow r = proportions(t, b);
        int best = 0;
        double bd = std::numeric_limits<double>::infinity();
        for (int j = 0; j < k; ++j) {
          const double d = dist2(r, centre.data() + j * V, c_norm[static_cast<size_t>(j)]);
          if (d < bd) {
            bd = d;
            best = j;
          }
        }
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
std::vector<double> soft_kmeans_responsibilities(const HostTable& t, int k, math::RandomStream& rng,
                                                 HostThreads& threads) {
  const int64_t V = t.cols;
  const std::vector<SparseRow> sample = sample_rows(t, rng);
  const int64_t S = static_cast<int64_t>(sample.size());
  std::vector<double> zs(static_cast<size_t>(S * k), 0.0);
  for (int64_t i = 0; i < S; ++i) zs[static_cast<size_t>(i * k + static_cast<int64_t>(rng.below(k)))] = 1.0;
  std::vector<double> centre(static_cast<size_t>(k * V), 0.0), next(centre.size()),
      c_norm(static_cast<size_t>(k), 0.0), weight(static_cast<size_t>(k));
  // Responsibilities of one row for the current centres.
  const auto soft = [&](const SparseRow& r, double* z) {
    double dmin = std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) {
      z[j] = std::sqrt(dist2(r, centre.data() + j * V, c_norm[static_cast<size_t>(j)]));
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
  for (int it = 0; it < kSoftIterations; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    std::fill(weight.begin(), weight.end(), 0.0);
    for (int64_t i = 0; i < S; ++i) {
      const SparseRow& r = sample[static_cast<size_t>(i)];
      for (int j = 0; j < k; ++j) {
        const double zij = zs[static_cast<size_t>(i * k + j)];
        if (zij == 0.0) continue;
        weight[static_cast<size_t>(j)] += zij;
        double* c = next.data() + j * V;
        for (size_t q = 0; q < r.idx.size(); ++q) c[r.idx[q]] += zij * r.p[q];
      }
    }
    double moved = 0.0;
    for (int j = 0; j < k; ++j) {
      double* c = next.data() + j * V;
      const double* old = centre.data() + j * V;
      const double wj = weight[static_cast<size_t>(j)];
      double n2 = 0.0, d2 = 0.0;
      for (int64_t v = 0; v < V; ++v) {
        if (wj > 0.0) c[v] /= wj;
        n2 += c[v] * c[v];
        d2 += (c[v] - old[v]) * (c[v] - old[v]);
      }
      c_norm[static_cast<size_t>(j)] = n2;
      moved = std::max(moved, std::sqrt(d2));
    }
    centre.swap(next);
    for_each_block(threads, S, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) soft(sample[static_cast<size_t>(i)], zs.data() + i * k);
    });
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

std::vector<double> split_responsibilities(const HostTable& t, int k_prev, const double* z_prev,
                                           int j, const double* row_weights, HostThreads& threads) {
  const int64_t V = t.cols;
  const int k = k_prev + 1;
  const auto share = [&](int64_t b) {
    return t.row_total[static_cast<size_t>(b)] > 0.0
               ? z_prev[b * k_prev + j] * (row_weights ? row_weights[b] : 1.0)
               : 0.0;
  };
  // The component's rows of the largest shares (at most kInitSample; ties
  // by row) are what the two centres are fitted to.
  std::vector<int64_t> members;
  for (int64_t b = 0; b < t.rows; ++b)
    if (share(b) > 0.0) members.push_back(b);
  if (static_cast<int64_t>(members.size()) > kInitSample) {
    std::stable_sort(members.begin(), members.end(),
                     [&](int64_t a, int64_t b) { return share(a) > share(b); });
    members.resize(static_cast<size_t>(kInitSample));
  }
  const int64_t S = static_cast<int64_t>(members.size());
  std::vector<SparseRow> rows;
  rows.reserve(static_cast<size_t>(S));
  for (int64_t b : members) rows.push_back(proportions(t, b));
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
      const double u = share(members[static_cast<size_t>(i)]);
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
