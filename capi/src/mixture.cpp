// mixture.cpp: Dirichlet-multinomial mixtures by EM (Holmes, Harris & Quince
// 2012), with DirichletMultinomial::dmn's MAP objective available.
//
// One EM iteration is two passes over the table: the E step is one
// likelihood call for all k components (rows x k), the M step builds the k
// responsibility-weighted count histograms in one pass and refits each
// component by Newton's method on them (kernels/histogram.cpp), so every
// Hessian is diagonal plus rank one and nothing is O(V^2).
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <new>

#include "../../kernels/dirmn_math.hpp"
#include "internal.hpp"

struct dirmn_mixture {
  int k = 0;
  int64_t rows = 0, cols = 0;
  dirmn_mixture_objective objective = DIRMN_MIXTURE_ML;
  std::vector<double> alpha;    // k x cols, row-major
  std::vector<double> weights;  // k
  std::vector<double> resp;     // rows x k, row-major
  dirmn_mixture_info info{};
};

namespace dirmn {
namespace capi {
namespace {

// Gamma(0.1, 0.1) on every alpha: DirichletMultinomial::dmn's prior.
constexpr double kDmnShape = 0.1;
constexpr double kDmnRate = 0.1;
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
// A component whose responsibilities sum below this is empty.
constexpr double kEmptyComponent = 1e-8;
// Newton tolerance of the M-step fits (relative, as dirmn_fit's).
constexpr double kMStepTolerance = 1e-12;
constexpr int kMStepIterations = 200;
// Every alpha of a component stays at least this (see the M step).
constexpr double kAlphaFloor = 1e-10;
// Under ML, a component in the multinomial limit takes its proportions at
// this precision.
constexpr double kLimitPrecision = 1e8;
constexpr double kLog2Pi = 1.8378770664093454836;

// splitmix64: a small, fully specified generator, so a seed gives the same
// initialisation on every platform and backend.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  int64_t below(int64_t n) { return static_cast<int64_t>(uniform() * static_cast<double>(n)) % n; }
};

// A row's proportions, sparse.
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
  switch (t.vtype) {
    case ValueType::U8: visit(uint8_t{}); break;
    case ValueType::U16: visit(uint16_t{}); break;
    case ValueType::U32: visit(uint32_t{}); break;
    case ValueType::F64: visit(double{}); break;
  }
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
std::vector<SparseRow> sample_rows(const HostTable& t, Rng& rng) {
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
void for_each_block(Backend& threads, int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t blocks = (n + kAssignBlockRows - 1) / kAssignBlockRows;
  threads.parallel_for(blocks, [&](int64_t q) {
    body(q * kAssignBlockRows, std::min(n, (q + 1) * kAssignBlockRows));
  });
}

// k-means on row proportions: seeds from `init`, Lloyd iterations on a
// sample of rows, then every row with counts is assigned to its nearest
// centre. Returns hard responsibilities (rows x k); rows without counts get
// 1/k each.
std::vector<double> kmeans_responsibilities(const HostTable& t, int k, dirmn_mixture_init init,
                                            Rng& rng, Backend& threads) {
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
std::vector<double> soft_kmeans_responsibilities(const HostTable& t, int k, Rng& rng,
                                                 Backend& threads) {
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

struct EmResult {
  std::vector<double> alpha, weights, resp;
  // The responsibilities the last M step fitted alpha and the weights to
  // (resp is one E step later): dmn's Hessian is evaluated with these.
  std::vector<double> fitted_resp;
  double loglik = 0.0, objective = 0.0, log_det = 0.0;
  int iterations = 0;
  bool converged = false;
};

// Log-sum-exp E step from the rows x k log-likelihood matrix L (full log
// pmf): responsibilities into z, returns the weighted mixture log-likelihood
// and the per-row mixture log-likelihood in lse.
double e_step(const std::vector<double>& L, const std::vector<double>& log_pi, int k,
              const double* row_w, std::vector<double>* z, std::vector<double>* lse) {
  const size_t rows = L.size() / static_cast<size_t>(k);
  double total = 0.0;
  z->resize(L.size());
  lse->resize(rows);
  for (size_t b = 0; b < rows; ++b) {
    double m = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) m = std::max(m, L[b * k + j] + log_pi[static_cast<size_t>(j)]);
    double s = 0.0;
    for (int j = 0; j < k; ++j) {
      const double e = std::exp(L[b * k + j] + log_pi[static_cast<size_t>(j)] - m);
      (*z)[b * k + j] = e;
      s += e;
    }
    for (int j = 0; j < k; ++j) (*z)[b * k + j] /= s;
    (*lse)[b] = m + std::log(s);
    total += (row_w ? row_w[b] : 1.0) * (*lse)[b];
  }
  return total;
}

}  // namespace

// The table in host memory: the backend's, or the copy kept beside it.
const HostTable* host_view(const dirmn_counts* counts) {
  const HostTable* h = counts->backend->host_table(*counts->data);
  if (h == nullptr && counts->host_data) h = counts->host_backend->host_table(*counts->host_data);
  return h;
}

namespace {

dirmn_status run_em(dirmn_context* ctx, const char* fn, dirmn_counts* counts, int k,
                    const dirmn_mixture_options& o, Rng rng, const HostTable& host,
                    EmResult* out) {
  const int64_t rows = counts->rows, V = counts->cols;
  const bool dmn = o.objective == DIRMN_MIXTURE_DMN;
  // Host threads for the M step's fits: a CUDA context's CPU backend.
  Backend& host_threads = ctx->host_threads();
  // One component: every responsibility is 1, and EM is a single fit (its
  // M step, then one likelihood pass for the criteria); no initialisation.
  std::vector<double> z = k == 1 ? std::vector<double>(static_cast<size_t>(rows), 1.0)
                                 : o.init == DIRMN_INIT_SOFT_KMEANS
                                     ? soft_kmeans_responsibilities(host, k, rng, host_threads)
                                     : kmeans_responsibilities(host, k, o.init, rng, host_threads);
  std::vector<double> alpha(static_cast<size_t>(k * V), 1.0), log_pi(static_cast<size_t>(k));
  std::vector<double> w(static_cast<size_t>(rows * k)), L(static_cast<size_t>(rows * k)), lse;
  std::vector<bool> have_alpha(static_cast<size_t>(k), false);
  std::vector<Histograms> hist;
  std::vector<double> comp_log_det(static_cast<size_t>(k), 0.0);
  double w_total = 0.0;
  for (int64_t b = 0; b < rows; ++b) w_total += o.weights ? o.weights[b] : 1.0;
  double prev = std::numeric_limits<double>::infinity();
  double loglik = 0.0, objective = 0.0;
  std::vector<double> z_before;
  // On a backend that keeps the responsibilities beside the table (CUDA,
  // 8-bit tables), the E step and the M step's histograms run there and only
  // sums cross to the host per iteration; elsewhere everything below runs
  // on the host arrays.
  const auto fill_w = [&] {
    for (int64_t b = 0; b < rows; ++b)
      for (int j = 0; j < k; ++j)
        w[static_cast<size_t>(b * k + j)] = z[static_cast<size_t>(b * k + j)] * (o.weights ? o.weights[b] : 1.0);
  };
  const auto host_comp_weight = [&] {
    std::vector<double> cw(static_cast<size_t>(k), 0.0);
    for (int64_t b = 0; b < rows; ++b)
      for (int j = 0; j < k; ++j) cw[static_cast<size_t>(j)] += w[static_cast<size_t>(b * k + j)];
    return cw;
  };
  fill_w();
  std::vector<double> comp_weight = host_comp_weight(), comp_z;
  bool on_device = false;
  bool device_prev = false;  // the device holds the responsibilities before the last E step
  {
    const BackendResult rb = counts->backend->em_begin(*counts->data, k, z.data(), w.data(), o.weights);
    if (rb.ok()) {
      on_device = true;
    } else if (rb.status != DIRMN_ERROR_NOT_SUPPORTED) {
      return fail_backend(ctx, fn, rb);
    }
  }
  // The device fits the components it has histograms and warm starts for,
  // until it says it cannot (a backend without em_fit, or no room for its
  // workspace).
  bool device_fits = on_device;
  Backend::EmFitSettings dev_fit;
  dev_fit.tolerance = kMStepTolerance;
  dev_fit.max_iterations = kMStepIterations;
  if (dmn) {
    dev_fit.prior_shape = kDmnShape;
    dev_fit.prior_rate = kDmnRate;
  }
  dev_fit.alpha_floor = kAlphaFloor;
  Backend::EmFitOutcome dev_out;
  std::vector<char> want(static_cast<size_t>(k));
  int it = 0;
  for (;; ++it) {
    // M step: weighted histograms for every component in one pass, then a
    // Newton fit of each alpha_k, warm-started from the last one. With the
    // responsibilities on the device, the fits run there too, where the
    // histograms are, when every component has a warm start; the host fits
    // the rest (the first iteration, re-seeded components, and what the
    // device hands back) from the downloaded histograms.
    BackendResult r;
    bool warm = device_fits;
    for (int j = 0; j < k; ++j) {
      want[static_cast<size_t>(j)] = comp_weight[static_cast<size_t>(j)] > kEmptyComponent;
      if (want[static_cast<size_t>(j)] && !have_alpha[static_cast<size_t>(j)]) warm = false;
    }
    dev_out.status.assign(static_cast<size_t>(k), Backend::EmFitOutcome::kHost);
    bool have_hist = !warm;
    if (on_device) {
      r = counts->backend->em_histograms(*counts->data, k, warm ? nullptr : &hist);
      if (r.ok() && warm) {
        r = counts->backend->em_fit(*counts->data, k, dev_fit, want.data(), alpha.data(), &dev_out);
        // Without the backend's fits, or room for their workspace, the host
        // fits (the histograms wait on the device to be fetched).
        if (r.status == DIRMN_ERROR_NOT_SUPPORTED || r.status == DIRMN_ERROR_OUT_OF_MEMORY) {
          device_fits = false;
          dev_out.status.assign(static_cast<size_t>(k), Backend::EmFitOutcome::kHost);
          r = {};
        }
      }
    } else {
      r = with_fallback(counts, [&](Backend& b, const BackendCounts& d) {
        return b.histograms_multi(d, w.data(), k, &hist, ctx->interrupt);
      });
    }
    if (!r.ok()) return fail_backend(ctx, fn, r);
    const auto on_host = [&](size_t j) {
      return want[j] && dev_out.status[j] == Backend::EmFitOutcome::kHost;
    };
    bool any_on_host = false;
    for (size_t j = 0; j < static_cast<size_t>(k); ++j) any_on_host = any_on_host || on_host(j);
    if (any_on_host && !have_hist) {
      r = counts->backend->em_fetch_histograms(*counts->data, k, &hist);
      if (!r.ok()) return fail_backend(ctx, fn, r);
    }
    double log_prior = 0.0;
    // The k fits are independent: they run on the host threads at once.
    std::vector<FitOutcome> fo(static_cast<size_t>(k));
    std::vector<char> fitted(static_cast<size_t>(k), 0);
    const auto fit_one = [&](int64_t jj) {
      const size_t j = static_cast<size_t>(jj);
      if (!on_host(j)) return;
      FitSettings fs;
      fs.tolerance = kMStepTolerance;
      fs.max_iterations = kMStepIterations;
      if (have_alpha[j]) fs.start = alpha.data() + jj * V;
      if (dmn) {
        fs.prior_shape = kDmnShape;
        fs.prior_rate = kDmnRate;
      }
      const char* why = "";
      try {
        fitted[j] = fit_from_histograms(hist[j], fs, &fo[j], &why) ? 1 : 0;
      } catch (const std::bad_alloc&) {
        fitted[j] = 2;
      }
    };
    if (any_on_host) host_threads.parallel_for(k, fit_one);
    for (int j = 0; j < k; ++j) {
      const size_t jj = static_cast<size_t>(j);
      if (fitted[jj] == 2) throw std::bad_alloc();
      log_pi[jj] = std::log(std::max(comp_weight[jj] / w_total, std::numeric_limits<double>::min()));
      if (dev_out.status[jj] == Backend::EmFitOutcome::kFitted) {
        // em_fit replaced alpha_j (floored as below).
        log_prior += dev_out.log_prior[jj];
        comp_log_det[jj] = dev_out.log_det[jj];
      } else if (fitted[jj] == 1) {
        const FitOutcome& f = fo[jj];
        double* a = alpha.data() + j * V;
        // Under ML a column this component never sees has its MLE at 0, and
        // the multinomial limit has no finite alpha: keep every alpha
        // positive and finite (tiny, or the proportions at a large precision)
        // so the E step stays defined.
        const double scale = f.multinomial_limit ? kLimitPrecision : 1.0;
        for (int64_t v = 0; v < V; ++v)
          a[v] = std::max(f.alpha[static_cast<size_t>(v)] * scale, kAlphaFloor);
        have_alpha[jj] = true;
        log_prior += f.log_prior;
        comp_log_det[jj] = f.log_det;
      }
    }
    // E step: all k log-likelihoods in one call.
    LoglikRequest req;
    req.alpha = alpha.data();
    req.k = k;
    req.full = true;
    req.out = L.data();
    req.out_stride_row = k;
    req.out_stride_k = 1;
    double max_change = 0.0;
    if (on_device) {
      Backend::EmStep st;
      r = counts->backend->em_estep(*counts->data, k, alpha.data(), log_pi.data(), &st, ctx->interrupt);
      if (!r.ok()) return fail_backend(ctx, fn, r);
      device_prev = true;
      loglik = st.loglik;
      max_change = st.max_change;
      comp_weight = std::move(st.w_sum);
      comp_z = std::move(st.z_sum);
    } else {
      r = counts->backend->loglik(*counts->data, req, ctx->interrupt);
      if (!r.ok()) return fail_backend(ctx, fn, r);
      z_before = z;
      loglik = e_step(L, log_pi, k, o.weights, &z, &lse);
      for (size_t i = 0; i < z.size(); ++i) max_change = std::max(max_change, std::fabs(z[i] - z_before[i]));
      fill_w();
      comp_weight = host_comp_weight();
      comp_z.assign(static_cast<size_t>(k), 0.0);
      for (int64_t b = 0; b < rows; ++b)
        for (int j = 0; j < k; ++j) comp_z[static_cast<size_t>(j)] += z[static_cast<size_t>(b * k + j)];
    }
    objective = -loglik - log_prior;
    if (o.progress && o.progress(it, loglik, max_change, o.progress_data) != 0)
      return fail(ctx, DIRMN_ERROR_CANCELLED, "%s: cancelled at EM iteration %d", fn, it);
    if (ctx->interrupt.poll())
      return fail(ctx, DIRMN_ERROR_CANCELLED, "%s: cancelled at EM iteration %d", fn, it);
    // Empty components restart at the worst-explained row.
    bool reseeded = false;
    for (int j = 0; j < k; ++j) {
      if (comp_z[static_cast<size_t>(j)] > kEmptyComponent || rows < 2) continue;
      if (on_device && !reseeded) {
        try {
          z_before.resize(z.size());
          lse.resize(static_cast<size_t>(rows));
        } catch (const std::bad_alloc&) {
          return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        }
        r = counts->backend->em_download(*counts->data, k, z.data(), z_before.data(), lse.data());
        if (!r.ok()) return fail_backend(ctx, fn, r);
      }
      reseeded = true;
      int64_t worst = 0;
      for (int64_t b = 1; b < rows; ++b)
        if (lse[static_cast<size_t>(b)] < lse[static_cast<size_t>(worst)] && host.row_total[static_cast<size_t>(b)] > 0)
          worst = b;
      for (int i = 0; i < k; ++i) z[static_cast<size_t>(worst * k + i)] = i == j ? 1.0 : 0.0;
      have_alpha[static_cast<size_t>(j)] = false;
      prev = std::numeric_limits<double>::infinity();
    }
    if (reseeded) {
      fill_w();
      comp_weight = host_comp_weight();
      if (on_device) {
        r = counts->backend->em_begin(*counts->data, k, z.data(), w.data(), o.weights);
        if (!r.ok()) return fail_backend(ctx, fn, r);
        device_prev = false;  // z_before (downloaded above) is the one to keep
      }
    }
    if (k == 1 || std::fabs(prev - objective) <= o.tolerance * std::fabs(objective)) {
      out->converged = true;
      break;
    }
    if (it + 1 >= o.max_iterations) break;
    prev = objective;
  }
  if (on_device) {
    try {
      z.resize(static_cast<size_t>(rows * k));
      z_before.resize(z.size());
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    const BackendResult r = counts->backend->em_download(*counts->data, k, z.data(),
                                                         device_prev ? z_before.data() : nullptr, nullptr);
    if (!r.ok()) return fail_backend(ctx, fn, r);
  }
  out->alpha = std::move(alpha);
  out->weights.resize(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) out->weights[static_cast<size_t>(j)] = std::exp(log_pi[static_cast<size_t>(j)]);
  out->resp = std::move(z);
  out->fitted_resp = std::move(z_before);
  out->loglik = loglik;
  out->objective = objective;
  out->log_det = 0.0;
  for (double d : comp_log_det) out->log_det += d;
  out->iterations = it + 1;
  return DIRMN_SUCCESS;
}

// digamma and trigamma of x > 0: the recurrence up to x >= 10, then the
// asymptotic series of dirmn_math.hpp.
double digamma(double x) {
  double s = 0.0;
  while (x < 10.0) {
    s -= 1.0 / x;
    x += 1.0;
  }
  return s + std::log(x) - 0.5 / x - math::digamma_tail(x);
}

double trigamma(double x) {
  double s = 0.0;
  while (x < 10.0) {
    s += 1.0 / (x * x);
    x += 1.0;
  }
  return s + 1.0 / x + 0.5 / (x * x) + math::trigamma_tail(x);
}

// The log-determinant term of DirichletMultinomial::dmn's Laplace value
// (its goodnessOfFit "LogDet"), re-derived for O(V) per component.
//
// Source of the formula: DirichletMultinomial's src/dirichlet_fit_main.c,
// functions hessian() and dirichlet_fit_main() (read in
// gokceneraslan/DirichletMultinomial and mtmorgan/DirichletMultinomial on
// GitHub), checked against the Bioconductor 1.40.0 binary on Debian 12:
// recomputing LogDet from dmn's own fitted alpha and responsibilities with
// the formula below reproduces it to 1e-14 relative on the mite and bci
// tables for k = 1..4. For component j, in dmn's order j = 0..k-1,
//
//   LogDet = sum_j log|det H_j| + sum_{j >= 1} (2 log N - log W_j),
//
// N the number of rows, W_j = sum_b z_bj, and H_j the V x V Hessian of the
// component's negative log posterior in lambda = log alpha, except that the
// per-category sums over rows of digamma(alpha_v + n_bv) and
// trigamma(alpha_v + n_bv) are NOT weighted by the responsibilities (dmn
// writes `adPi[i] * n ? psi(alpha + n) : psi(alpha)`, which C parses as
// `(adPi[i] * n) ? ... : ...`): every row contributes digamma(alpha_v +
// n_bv) when z_bj n_bv != 0 and digamma(alpha_v) otherwise. The row-total
// sums and the alpha sums keep their weights. With
//   T1 = sum_b z_b [psi(A + N_b) - psi(A)],   T2 = sum_b z_b [psi1(A + N_b) - psi1(A)],
//   S1_v = sum_b u_b [psi(a_v + n_bv) - psi(a_v)], S2_v = sum_b u_b [psi1(a_v + n_bv) - psi1(a_v)],
//   u_b = [z_b > 0] (the row weight times that, with row weights),
// dmn's H_j is diag(d) + T2 a a^T with
//   d_v = a_v (T1 - (N - W) psi(a_v) - S1_v + rate) - a_v^2 ((N - W) psi1(a_v) + S2_v),
// so log|det H_j| = sum_v log|d_v| + log|1 + T2 sum_v a_v^2 / d_v| (the
// matrix determinant lemma): O(V), no V x V matrix. With k = 1 (z = 1, W =
// N) this is the exact Hessian. Which component dmn leaves out of the
// 2 log N - log W_j sum is the first of its random k-means labelling, so
// its value is not a function of the fit alone; here every component's
// term is weighted (k - 1) / k, the mean of dmn's value over its k possible
// first components (label-free). The Laplace value then differs from the
// one dmn would report for the same fit by
//   (log W_first - mean_j log W_j) / 2,
// about 0.04 to 0.2 on the mite table (1e-5 to 1e-4 relative).
dirmn_status dmn_log_det(dirmn_context* ctx, const char* fn, dirmn_counts* counts, int k,
                         const dirmn_mixture_options& o, const std::vector<double>& alpha,
                         const std::vector<double>& z, double* log_det) {
  const int64_t rows = counts->rows, V = counts->cols;
  // Weights for 2k histograms in one pass: w_b z_bj, then w_b [z_bj > 0].
  std::vector<double> w(static_cast<size_t>(rows * 2 * k));
  double n_total = 0.0;
  std::vector<double> W(static_cast<size_t>(k), 0.0);
  for (int64_t b = 0; b < rows; ++b) {
    const double wb = o.weights ? o.weights[b] : 1.0;
    n_total += wb;
    for (int j = 0; j < k; ++j) {
      const double zj = z[static_cast<size_t>(b * k + j)];
      w[static_cast<size_t>(b * 2 * k + j)] = wb * zj;
      w[static_cast<size_t>(b * 2 * k + k + j)] = zj > 0.0 ? wb : 0.0;
      W[static_cast<size_t>(j)] += wb * zj;
    }
  }
  std::vector<Histograms> hist;
  const BackendResult r = with_fallback(counts, [&](Backend& b, const BackendCounts& d) {
    return b.histograms_multi(d, w.data(), 2 * k, &hist, ctx->interrupt);
  });
  if (!r.ok()) return fail_backend(ctx, fn, r);
  std::vector<double> s1(static_cast<size_t>(V)), s2(static_cast<size_t>(V));
  double total = 0.0;
  for (int j = 0; j < k; ++j) {
    const double* a = alpha.data() + static_cast<int64_t>(j) * V;
    double A = 0.0;
    for (int64_t v = 0; v < V; ++v) A += a[v];
    // T1 and T2 from the weighted row totals: a one-column view whose only
    // category is empty, so that its "gradient" is -T1 and its rank-one
    // scalar -T2.
    Histograms totals;
    totals.cols = 1;
    totals.column.resize(1);
    totals.total = std::move(hist[static_cast<size_t>(j)].total);
    double g_t = 0.0, d_t = 0.0, c_t = 0.0;
    histogram_sums(totals, &A, nullptr, &g_t, &d_t, &c_t);
    const double T1 = -g_t, T2 = -c_t;
    // S1, S2 from the indicator-weighted categories, their totals dropped.
    Histograms& u = hist[static_cast<size_t>(k + j)];
    u.total = Histogram{};
    double c_u = 0.0;
    histogram_sums(u, a, nullptr, s1.data(), s2.data(), &c_u);
    const double nw = n_total - W[static_cast<size_t>(j)];
    double ld = 0.0, quad = 0.0;
    for (int64_t v = 0; v < V; ++v) {
      const double av = a[v];
      const double pg = nw != 0.0 ? nw * digamma(av) : 0.0;
      const double pt = nw != 0.0 ? nw * trigamma(av) : 0.0;
      const double d = av * (T1 - pg - s1[static_cast<size_t>(v)] + kDmnRate) -
                       av * av * (pt + s2[static_cast<size_t>(v)]);
      ld += std::log(std::fabs(d));
      quad += av * av / d;
    }
    ld += std::log(std::fabs(1.0 + T2 * quad));
    total += ld;
    total += (k - 1.0) / k *
             (2.0 * std::log(n_total) - std::log(std::max(W[static_cast<size_t>(j)], std::numeric_limits<double>::min())));
  }
  *log_det = total;
  return DIRMN_SUCCESS;
}

bool strides_ok(int64_t n1, int64_t n2, int64_t s1, int64_t s2) {
  if (n2 == 1) return n1 == 1 || s1 >= 1;
  if (n1 == 1) return s2 >= 1;
  if (s1 < 1 || s2 < 1) return false;
  return s1 >= s2 ? s1 >= n2 * s2 : s2 >= n1 * s1;
}

}  // namespace
}  // namespace capi
}  // namespace dirmn

using dirmn::capi::fail;

extern "C" {

void dirmn_mixture_options_init(dirmn_mixture_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->size = sizeof *options;
  options->objective = DIRMN_MIXTURE_ML;
  options->init = DIRMN_INIT_KMEANSPP;
  options->starts = 3;
  options->seed = 1;
  options->max_iterations = 1000;
  options->tolerance = 1e-9;
}

dirmn_status dirmn_mixture_fit(dirmn_context* ctx, dirmn_counts* counts, int k,
                               const dirmn_mixture_options* options, dirmn_mixture** mixture) {
  static const char* fn = "dirmn_mixture_fit";
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: context is NULL", fn);
  ctx->last_error.clear();
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (mixture == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: mixture is NULL", fn);
  if (counts->context_id != ctx->id)
    return fail(ctx, DIRMN_ERROR_WRONG_CONTEXT, "%s: the counts object was created by another context", fn);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  if (options) {
    if (options->size < sizeof(size_t))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: options->size (%zu) is invalid; call dirmn_mixture_options_init", fn, options->size);
    std::memcpy(&o, options, std::min(options->size, sizeof o));
    o.size = sizeof o;
  }
  if (o.objective != DIRMN_MIXTURE_ML && o.objective != DIRMN_MIXTURE_DMN)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown objective %d", fn, static_cast<int>(o.objective));
  if (o.init != DIRMN_INIT_KMEANS && o.init != DIRMN_INIT_KMEANSPP && o.init != DIRMN_INIT_SOFT_KMEANS)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown init %d", fn, static_cast<int>(o.init));
  if (o.starts < 1 || o.max_iterations < 1 || !(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: starts (%d) and max_iterations (%d) must be >= 1 and tolerance (%.17g) positive",
                fn, o.starts, o.max_iterations, o.tolerance);
  if (dirmn_status s = dirmn::capi::check_weights(ctx, fn, o.weights, counts->rows)) return s;
  const dirmn::HostTable* host = dirmn::capi::host_view(counts);
  if (host == nullptr)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: mixtures need the table in host memory for their initialisation; create the "
                "counts from host arrays rather than wrapping device memory", fn);
  int64_t with_counts = 0;
  for (double n : host->row_total) with_counts += n > 0.0;
  if (k < 1 || k > with_counts)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: k (%d) must be between 1 and the number of rows with counts (%" PRId64 ")",
                fn, k, with_counts);
  auto m = std::unique_ptr<dirmn_mixture>(new (std::nothrow) dirmn_mixture);
  if (!m) return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  dirmn::capi::EmResult best;
  int best_start = -1;
  try {
    // With one component every start is the same fit: run it once.
    const int starts = k == 1 ? 1 : o.starts;
    for (int s = 0; s < starts; ++s) {
      dirmn::capi::Rng rng{o.seed * 0x2545F4914F6CDD1DULL + static_cast<uint64_t>(s)};
      dirmn::capi::EmResult r;
      if (dirmn_status st = dirmn::capi::run_em(ctx, fn, counts, k, o, rng, *host, &r)) return st;
      if (best_start < 0 || r.objective < best.objective) {
        best = std::move(r);
        best_start = s;
      }
    }
    // dmn's Laplace value (k = 1: the exact Hessian, which the M step's fit
    // already gave).
    if (o.objective == DIRMN_MIXTURE_DMN && k > 1)
      if (dirmn_status st = dirmn::capi::dmn_log_det(ctx, fn, counts, k, o, best.alpha,
                                                     best.fitted_resp, &best.log_det))
        return st;
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  const int64_t V = counts->cols;
  double n_rows = 0.0;
  for (int64_t b = 0; b < counts->rows; ++b) n_rows += o.weights ? o.weights[b] : 1.0;
  const double P = static_cast<double>(k) * static_cast<double>(V) + k - 1;
  m->k = k;
  m->rows = counts->rows;
  m->cols = V;
  m->objective = o.objective;
  m->alpha = std::move(best.alpha);
  m->weights = std::move(best.weights);
  m->resp = std::move(best.resp);
  dirmn_mixture_info& in = m->info;
  in.size = sizeof in;
  in.k = k;
  in.rows = counts->rows;
  in.cols = V;
  in.parameters = static_cast<int64_t>(P);
  in.loglik = best.loglik;
  in.objective = best.objective;
  if (o.objective == DIRMN_MIXTURE_DMN) {
    in.aic = best.objective + P;
    in.bic = best.objective + 0.5 * P * std::log(n_rows);
    in.laplace = best.objective + 0.5 * best.log_det - 0.5 * P * dirmn::capi::kLog2Pi;
  } else {
    in.aic = -2.0 * best.loglik + 2.0 * P;
    in.bic = -2.0 * best.loglik + P * std::log(n_rows);
    in.laplace = 2.0 * best.objective + best.log_det - P * dirmn::capi::kLog2Pi;
  }
  in.iterations = best.iterations;
  in.converged = best.converged ? 1 : 0;
  in.start = best_start;
  *mixture = m.release();
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_mixture_fit_range(dirmn_context* ctx, dirmn_counts* counts, int k_min,
                                     int k_max, const dirmn_mixture_options* options,
                                     dirmn_mixture** mixtures) {
  static const char* fn = "dirmn_mixture_fit_range";
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: context is NULL", fn);
  ctx->last_error.clear();
  if (mixtures == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: mixtures is NULL", fn);
  if (k_min < 1 || k_max < k_min)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: the range k_min (%d) .. k_max (%d) must have 1 <= k_min <= k_max", fn, k_min,
                k_max);
  std::vector<std::unique_ptr<dirmn_mixture, void (*)(dirmn_mixture*)>> fitted;
  try {
    fitted.reserve(static_cast<size_t>(k_max - k_min) + 1);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  for (int k = k_min; k <= k_max; ++k) {
    dirmn_mixture* m = nullptr;
    if (dirmn_status st = dirmn_mixture_fit(ctx, counts, k, options, &m)) {
      // Name the k in the message dirmn_mixture_fit left.
      const std::string why = ctx->last_error;
      return fail(ctx, st, "%s: k = %d: %s", fn, k, why.c_str());
    }
    fitted.emplace_back(m, dirmn_mixture_destroy);
  }
  for (size_t i = 0; i < fitted.size(); ++i) mixtures[i] = fitted[i].release();
  return DIRMN_SUCCESS;
}

void dirmn_mixture_destroy(dirmn_mixture* mixture) { delete mixture; }

dirmn_status dirmn_mixture_get_info(const dirmn_mixture* mixture, dirmn_mixture_info* info) {
  static const char* fn = "dirmn_mixture_get_info";
  if (mixture == nullptr || info == nullptr)
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: mixture or info is NULL", fn);
  if (info->size < offsetof(dirmn_mixture_info, k) + sizeof(int))
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: info->size (%zu) is too small; set it to sizeof(dirmn_mixture_info)", fn, info->size);
  const size_t n = std::min(info->size, sizeof(dirmn_mixture_info));
  dirmn_mixture_info full = mixture->info;
  full.size = info->size;
  std::memcpy(info, &full, n);
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_mixture_get_params(const dirmn_mixture* mixture, double* alpha, int64_t stride_k,
                                      int64_t stride_v, double* weights) {
  static const char* fn = "dirmn_mixture_get_params";
  if (mixture == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: mixture is NULL", fn);
  if (alpha && !dirmn::capi::strides_ok(mixture->k, mixture->cols, stride_k, stride_v))
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: strides (%" PRId64 ", %" PRId64 ") overlap or are not positive", fn, stride_k, stride_v);
  for (int j = 0; j < mixture->k; ++j) {
    if (weights) weights[j] = mixture->weights[static_cast<size_t>(j)];
    if (alpha)
      for (int64_t v = 0; v < mixture->cols; ++v)
        alpha[j * stride_k + v * stride_v] = mixture->alpha[static_cast<size_t>(j * mixture->cols + v)];
  }
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_mixture_get_responsibilities(const dirmn_mixture* mixture, double* out,
                                                int64_t stride_row, int64_t stride_k) {
  static const char* fn = "dirmn_mixture_get_responsibilities";
  if (mixture == nullptr || out == nullptr)
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: mixture or out is NULL", fn);
  if (!dirmn::capi::strides_ok(mixture->rows, mixture->k, stride_row, stride_k))
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: strides (%" PRId64 ", %" PRId64 ") overlap or are not positive", fn, stride_row, stride_k);
  for (int64_t b = 0; b < mixture->rows; ++b)
    for (int j = 0; j < mixture->k; ++j)
      out[b * stride_row + j * stride_k] = mixture->resp[static_cast<size_t>(b * mixture->k + j)];
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_mixture_assign(dirmn_context* ctx, const dirmn_mixture* mixture,
                                  const dirmn_counts* counts, double* out, int64_t stride_row,
                                  int64_t stride_k) {
  static const char* fn = "dirmn_mixture_assign";
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: context is NULL", fn);
  ctx->last_error.clear();
  if (mixture == nullptr || counts == nullptr || out == nullptr)
    return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: mixture, counts or out is NULL", fn);
  if (counts->context_id != ctx->id)
    return fail(ctx, DIRMN_ERROR_WRONG_CONTEXT, "%s: the counts object was created by another context", fn);
  if (counts->cols != mixture->cols)
    return fail(ctx, DIRMN_ERROR_DIMENSION_MISMATCH,
                "%s: the table has %" PRId64 " columns, the mixture was fitted to %" PRId64, fn,
                counts->cols, mixture->cols);
  const int k = mixture->k;
  if (!dirmn::capi::strides_ok(counts->rows, k, stride_row, stride_k))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: strides (%" PRId64 ", %" PRId64 ") overlap or are not positive", fn, stride_row, stride_k);
  std::vector<double> L, z, lse, log_pi(static_cast<size_t>(k));
  try {
    L.resize(static_cast<size_t>(counts->rows * k));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  dirmn::LoglikRequest req;
  req.alpha = mixture->alpha.data();
  req.k = k;
  req.full = true;
  req.out = L.data();
  req.out_stride_row = k;
  req.out_stride_k = 1;
  const dirmn::BackendResult r = counts->backend->loglik(*counts->data, req, ctx->interrupt);
  if (!r.ok()) return dirmn::capi::fail_backend(ctx, fn, r);
  for (int j = 0; j < k; ++j)
    log_pi[static_cast<size_t>(j)] = std::log(std::max(mixture->weights[static_cast<size_t>(j)], std::numeric_limits<double>::min()));
  dirmn::capi::e_step(L, log_pi, k, nullptr, &z, &lse);
  for (int64_t b = 0; b < counts->rows; ++b)
    for (int j = 0; j < k; ++j) out[b * stride_row + j * stride_k] = z[static_cast<size_t>(b * k + j)];
  return DIRMN_SUCCESS;
}

}  // extern "C"
