// sample.cpp: dirmn_sample's rows on the host threads (math/dm_draw.hpp
// draws each row, as a device does).
#include "sample.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>

#include "../math/dm_draw.hpp"

namespace dirmn {
namespace {

// Rows per block of work (each block's rows are drawn in order by one
// thread into the block's own arrays).
constexpr int64_t kRowsPerBlock = 64;

// What a vector of alpha costs to set up once, for every row that takes it.
struct Vector {
  std::vector<math::GammaShape> shape;  // the gamma method's
  bool by_value = false;                // its draws as values (math::gamma_by_value)
  std::vector<double> cum;              // the urn's: cum[v] = alpha_0 + ... + alpha_v
};

void prepare(const double* alpha, int64_t cols, bool gamma, bool urn, Vector* out) {
  if (gamma) {
    out->shape.resize(static_cast<size_t>(cols));
    for (int64_t v = 0; v < cols; ++v) out->shape[static_cast<size_t>(v)] = math::gamma_shape(alpha[v]);
    out->by_value = math::gamma_row_by_value(cols, [alpha](int64_t v) { return alpha[v]; });
  }
  if (urn) {
    out->cum.resize(static_cast<size_t>(cols));
    double s = 0.0;
    for (int64_t v = 0; v < cols; ++v) out->cum[static_cast<size_t>(v)] = s = math::add(s, alpha[v]);
  }
}

// A block's scratch and output.
struct Work {
  std::vector<double> w, suffix;         // the gamma method's, cols each
  std::vector<double> t;                 // the gamma method's, a block of categories each
  std::vector<int64_t> balls;            // the urn's: each ball's category
  std::vector<uint32_t> tally;           // the urn's: balls per category (cols)
  std::vector<int64_t> touched;          // the urn's: the categories with balls
  std::vector<double> cum;               // the urn's per-row cumulative alpha
  std::vector<math::GammaShape> shape;   // per-row shapes (rowwise)
  LargeVector<int64_t> col;
  LargeVector<int32_t> count;
};

void row_by_gamma(int64_t cols, const math::GammaShape* shape, bool by_value, uint64_t row_key,
                  int64_t n, Work& wk) {
  math::draw_row_gamma(
      cols, [shape](int64_t v) { return shape[v]; }, by_value, row_key, n, math::Strided<double>{wk.w.data(), 1},
      math::Strided<double>{wk.suffix.data(), 1}, math::Strided<double>{wk.t.data(), 1}, [&wk](int64_t v, int64_t x) {
        wk.col.push_back(v);
        wk.count.push_back(static_cast<int32_t>(x));
      });
}

// The urn's tally is listed by the categories it touched (sorted), which
// costs the balls, not the categories.
void row_by_urn(int64_t cols, const double* cum, uint64_t row_key, int64_t n, Work& wk) {
  wk.balls.resize(static_cast<size_t>(n));
  wk.touched.clear();
  math::draw_row_urn(cols, cum, row_key, n, wk.balls.data(), math::Strided<uint32_t>{wk.tally.data(), 1},
                     [&wk](int64_t v) { wk.touched.push_back(v); });
  std::sort(wk.touched.begin(), wk.touched.end());
  for (int64_t v : wk.touched) {
    wk.col.push_back(v);
    wk.count.push_back(static_cast<int32_t>(wk.tally[static_cast<size_t>(v)]));
    wk.tally[static_cast<size_t>(v)] = 0;
  }
}

}  // namespace

std::vector<int64_t> resolve_components(int64_t rows, int64_t k, const double* cum_weights,
                                        uint64_t seed, int64_t first_row) {
  std::vector<int64_t> out(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b)
    out[static_cast<size_t>(b)] = math::draw_component(
        math::derived_key(seed, math::kFamilySampleRows, static_cast<uint64_t>(first_row + b)), k,
        cum_weights);
  return out;
}

BackendResult sample_rows(const SampleRequest& req, HostThreads* threads,
                          const Interrupt& interrupt, CsrRows* out) {
  const int64_t rows = req.rows, cols = req.cols;
  const bool mixture = !req.rowwise && req.k > 1;
  bool any_gamma = false, any_urn = false;
  for (int64_t b = 0; b < rows; ++b) {
    (math::sample_by_urn(req.sizes[b * req.sizes_stride], cols) ? any_urn : any_gamma) = true;
    if (any_urn && any_gamma) break;
  }
  // The shared vectors' set-up, once.
  std::vector<Vector> vec;
  if (!req.rowwise) {
    vec.resize(static_cast<size_t>(req.k));
    for (int64_t j = 0; j < req.k; ++j)
      prepare(req.alpha + j * cols, cols, any_gamma, any_urn, &vec[static_cast<size_t>(j)]);
  }
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<Work> work(static_cast<size_t>(blocks));
  std::vector<int64_t> row_nnz(static_cast<size_t>(rows));
  std::atomic<bool> no_memory{false};
  const auto body = [&](int64_t blk) {
    Work& wk = work[static_cast<size_t>(blk)];
    try {
      if (any_gamma) {
        wk.w.resize(static_cast<size_t>(cols));
        wk.suffix.resize(static_cast<size_t>(cols));
        wk.t.resize(static_cast<size_t>(math::chain_blocks(cols)));
        if (req.rowwise) wk.shape.resize(static_cast<size_t>(cols));
      }
      if (any_urn) wk.tally.assign(static_cast<size_t>(cols), 0);
      if (any_urn && req.rowwise) wk.cum.resize(static_cast<size_t>(cols));
      const int64_t end = std::min(rows, (blk + 1) * kRowsPerBlock);
      // At most min(size, cols) entries a row: reserved up front, so that
      // the arrays never move as they grow (pages never written cost no
      // memory).
      int64_t bound = 0;
      for (int64_t b = blk * kRowsPerBlock; b < end; ++b)
        bound += std::min(std::max<int64_t>(req.sizes[b * req.sizes_stride], 0), cols);
      wk.col.reserve(static_cast<size_t>(bound));
      wk.count.reserve(static_cast<size_t>(bound));
      for (int64_t b = blk * kRowsPerBlock; b < end; ++b) {
        const uint64_t key =
            math::derived_key(req.seed, math::kFamilySampleRows, req.first_row + static_cast<uint64_t>(b));
        const int64_t n = req.sizes[b * req.sizes_stride];
        const size_t before = wk.col.size();
        if (n > 0) {
          const bool urn = math::sample_by_urn(n, cols);
          if (req.rowwise) {
            const double* a = req.alpha + b * cols;
            if (urn) {
              double s = 0.0;
              for (int64_t v = 0; v < cols; ++v) wk.cum[static_cast<size_t>(v)] = s = math::add(s, a[v]);
              row_by_urn(cols, wk.cum.data(), key, n, wk);
            } else {
              for (int64_t v = 0; v < cols; ++v) wk.shape[static_cast<size_t>(v)] = math::gamma_shape(a[v]);
              const bool by_value = math::gamma_row_by_value(cols, [a](int64_t v) { return a[v]; });
              row_by_gamma(cols, wk.shape.data(), by_value, key, n, wk);
            }
          } else {
            const Vector& vj = vec[static_cast<size_t>(mixture ? req.component[b] : 0)];
            if (urn) row_by_urn(cols, vj.cum.data(), key, n, wk);
            else row_by_gamma(cols, vj.shape.data(), vj.by_value, key, n, wk);
          }
        }
        row_nnz[static_cast<size_t>(b)] = static_cast<int64_t>(wk.col.size() - before);
      }
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
    // The scratch goes; the block's output stays until it is gathered.
    std::vector<double>().swap(wk.w);
    std::vector<double>().swap(wk.suffix);
    std::vector<double>().swap(wk.t);
    std::vector<int64_t>().swap(wk.balls);
    std::vector<uint32_t>().swap(wk.tally);
    std::vector<int64_t>().swap(wk.touched);
    std::vector<double>().swap(wk.cum);
    std::vector<math::GammaShape>().swap(wk.shape);
  };
  const double cost = static_cast<double>(rows) * static_cast<double>(std::min<int64_t>(cols, 1 << 20)) * 40.0;
  if (threads != nullptr) {
    if (!threads->run(blocks, body, [&] { return interrupt.poll(); }, cost))
      return {DIRMN_ERROR_CANCELLED, "", 0};
  } else {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
      body(blk);
    }
  }
  if (no_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the sampled rows", 0};
  out->ptr.assign(static_cast<size_t>(rows) + 1, 0);
  out->col.clear();  // a reused table keeps its arrays' memory
  out->count.clear();
  for (int64_t b = 0; b < rows; ++b)
    out->ptr[static_cast<size_t>(b) + 1] = out->ptr[static_cast<size_t>(b)] + row_nnz[static_cast<size_t>(b)];
  const size_t nnz = static_cast<size_t>(out->ptr.back());
  out->col.reserve(nnz);  // appended without zeroing first
  out->count.reserve(nnz);
  for (Work& wk : work) {
    out->col.insert(out->col.end(), wk.col.begin(), wk.col.end());
    out->count.insert(out->count.end(), wk.count.begin(), wk.count.end());
    LargeVector<int64_t>().swap(wk.col);
    LargeVector<int32_t>().swap(wk.count);
  }
  return {};
}

void dm_moments(const double* alpha, int64_t cols, double size, double* mean, double* variance,
                double* covariance, int64_t ld) {
  // 1 - p_v as the other categories' share, summed without them (before
  // and after v), so that it stays exact where p_v is near 1.
  std::vector<double> others(static_cast<size_t>(cols));
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) {
    others[static_cast<size_t>(v)] = s;
    s += alpha[v];
  }
  const double a_sum = s;
  s = 0.0;
  for (int64_t v = cols - 1; v >= 0; --v) {
    others[static_cast<size_t>(v)] += s;
    s += alpha[v];
  }
  double inflate = (size + a_sum) / (1.0 + a_sum);
  // size + A beyond the largest double (a size near it): the same ratio as
  // two finite terms, so that no moment below is Inf times 0 (NaN).
  if (!std::isfinite(inflate)) inflate = size / (1.0 + a_sum) + a_sum / (1.0 + a_sum);
  for (int64_t v = 0; v < cols; ++v) {
    const double p = alpha[v] / a_sum, q = others[static_cast<size_t>(v)] / a_sum;
    if (mean != nullptr) mean[v] = size * p;
    if (variance != nullptr) variance[v] = size * p * q * inflate;
  }
  if (covariance == nullptr) return;
  // -(size inflate) (p_u p_v): the same rounding for (u, v) and (v, u), so
  // that the matrix is exactly symmetric. Where size inflate is beyond the
  // largest double, -size (inflate (p_u p_v)), as symmetric: Inf only where
  // the covariance itself is, never Inf times a p_u p_v that underflowed.
  const double scale = size * inflate;
  const bool scale_finite = std::isfinite(scale);
  for (int64_t u = 0; u < cols; ++u) {
    const double pu = alpha[u] / a_sum;
    double* row = covariance + u * ld;
    for (int64_t v = 0; v < cols; ++v)
      row[v] = u == v ? size * pu * (others[static_cast<size_t>(u)] / a_sum) * inflate
                      : scale_finite ? -(scale * (pu * (alpha[v] / a_sum)))
                                     : -(size * (inflate * (pu * (alpha[v] / a_sum))));
  }
}

}  // namespace dirmn
