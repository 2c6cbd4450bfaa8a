// sample_kernels.cuh: dirmn_sample's rows on the device (dispatch:
// sample.cu). One thread draws one row by math/dm_draw.hpp's steps, so the
// table is the host's bit for bit; rows go to threads by a grid-stride loop
// over a fixed number of slots, each slot's scratch interleaved with the
// others' (entry v of slot s at v * slots + s), so that a warp's threads,
// at the same step of their rows, read and write one contiguous run.
//
// Where the rows' entries, at most min(size, cols) each, fit a staging
// buffer, each row is drawn once into it (with its nonzeros, largest count
// and log multinomial coefficient, from which the table's form is chosen as
// the host chooses it), then moved into that form. Where they do not, a row
// is drawn twice: once to count, once to write into the form; redrawing
// costs time but no memory beyond the table.
//
// Where every row has a slot of its own (tables of few rows, which leave
// most of the device idle at a thread per row), the gamma rows' counts are
// drawn ahead in three steps each as parallel as its work -- every
// (row, category)'s variate, every row's split among its blocks of
// categories, every (row, block)'s split among its categories -- and the
// row kernels only list them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../math/dm_draw.hpp"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace sample {

// What every pass over the rows reads.
struct RowsArgs {
  int64_t cols = 0;
  int64_t row_begin = 0, row_end = 0;  // this launch's rows
  const double* alpha = nullptr;       // rows x cols (rowwise), else k x cols
  bool rowwise = false;
  const math::GammaShape* shape = nullptr;  // k x cols: the shared vectors' (gamma rows)
  const double* cum = nullptr;              // k x cols: their cumulative sums (urn rows)
  const int64_t* sizes = nullptr;
  int64_t sizes_stride = 0;
  const int64_t* component = nullptr;  // rows, or null (one vector)
  uint64_t seed = 0;
  uint64_t first_row = 0;  // row b draws as the seed's row first_row + b
  int64_t slots = 0;
  double* w = nullptr;        // cols x slots: gamma weights, or the urn's balls (BallPairs)
  double* suffix = nullptr;   // cols x slots: suffix sums, or a rowwise urn row's cumulative alpha
  uint32_t* tally = nullptr;  // cols x slots: the urn's balls per category, zero between rows
  // Per vector (k, or rows where rowwise): 1 where every alpha is
  // gamma_by_value's (vector_by_value).
  const uint8_t* by_value = nullptr;
  double* t = nullptr;        // chain_blocks(cols) x slots: the blocks' sums, then counts
  // The gamma rows' counts are in w already (draw_gammas, split_rows and
  // draw_blocks: each row's slot is its index, every row of the table in
  // one launch).
  bool counts_drawn = false;
};

// The urn's balls (fewer than 2 cols) in a slot's cols doubles of w, two to
// a double: ball i in the low or high half of the slot's double i / 2, so
// that a slot drawing an urn row and its neighbour drawing gamma variates
// never share a byte (balls interleaved as 4-byte entries would).
struct BallPairs {
  uint32_t* p = nullptr;  // reinterpret_cast<uint32_t*>(w) + 2 * slot
  int64_t stride = 0;     // 2 * slots
  __device__ uint32_t& operator[](int64_t i) const { return p[(i >> 1) * stride + (i & 1)]; }
};

// Categories are sorted rather than scanned where a row's distinct
// categories are below 1 / kUrnSortFraction of all of them.
constexpr int64_t kUrnSortFraction = 16;

// Row b drawn into emit(v, x) (v ascending), on scratch slot `slot`.
template <class Emit>
__device__ void draw_row(const RowsArgs& a, int64_t b, int64_t slot, Emit& emit) {
  const int64_t n = a.sizes[b * a.sizes_stride];
  if (n <= 0) return;
  const uint64_t key = math::derived_key(a.seed, math::kFamilySampleRows, a.first_row + static_cast<uint64_t>(b));
  const int64_t cols = a.cols, S = a.slots;
  const int64_t j = a.component != nullptr ? a.component[b] : 0;
  if (!math::sample_by_urn(n, cols)) {
    const math::Strided<double> w{a.w + slot, S}, suffix{a.suffix + slot, S}, t{a.t + slot, S};
    const double* alpha = a.alpha + (a.rowwise ? b : j) * cols;
    const bool by_value = a.by_value[a.rowwise ? b : j] != 0;
    if (a.counts_drawn) {
      for (int64_t v = 0; v < cols; ++v) {
        const double x = w[v];
        if (x > 0.0) emit(v, static_cast<int64_t>(x));
      }
    } else if (a.rowwise) {
      math::draw_row_gamma(cols, [alpha](int64_t v) { return math::gamma_shape(alpha[v]); }, by_value, key,
                           n, w, suffix, t, emit);
    } else {
      const math::GammaShape* shape = a.shape + j * cols;
      math::draw_row_gamma(cols, [shape](int64_t v) { return shape[v]; }, by_value, key, n, w, suffix, t, emit);
    }
    return;
  }
  const BallPairs balls{reinterpret_cast<uint32_t*>(a.w) + 2 * slot, 2 * S};
  const math::Strided<uint32_t> tally{a.tally + slot, S};
  const auto none = [](int64_t) {};
  if (a.rowwise) {
    const double* alpha = a.alpha + b * cols;
    const math::Strided<double> cum{a.suffix + slot, S};
    double s = 0.0;
    for (int64_t v = 0; v < cols; ++v) cum[v] = s = math::add(s, alpha[v]);
    math::draw_row_urn(cols, cum, key, n, balls, tally, none);
  } else {
    math::draw_row_urn(cols, a.cum + j * cols, key, n, balls, tally, none);
  }
  // The distinct categories, in the order of their first balls, packed
  // into the front of balls (d <= i: nothing unread is overwritten); each
  // is marked by setting its tally's top bit.
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = balls[i];
    if ((tally[v] & 0x80000000u) == 0) {
      tally[v] |= 0x80000000u;
      balls[d++] = v;
    }
  }
  if (d * kUrnSortFraction < cols) {
    // Shell sort (Ciura's gaps) of the few distinct categories, in place.
    constexpr int64_t kGaps[8] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (int gi = 0; gi < 8; ++gi) {
      const int64_t gap = kGaps[gi];
      for (int64_t i = gap; i < d; ++i) {
        const uint32_t x = balls[i];
        int64_t k = i;
        for (; k >= gap && balls[k - gap] > x; k -= gap) balls[k] = balls[k - gap];
        balls[k] = x;
      }
    }
    for (int64_t i = 0; i < d; ++i) {
      const uint32_t v = balls[i];
      emit(static_cast<int64_t>(v), static_cast<int64_t>(tally[v] & 0x7fffffffu));
      tally[v] = 0;
    }
  } else {
    for (int64_t v = 0; v < cols; ++v) {
      const uint32_t x = tally[v];
      if (x != 0) {
        emit(v, static_cast<int64_t>(x & 0x7fffffffu));
        tally[v] = 0;
      }
    }
  }
}

// What pass 1 keeps of a row: its nonzeros, the sum of its log x! and (over
// the thread's rows) the largest count.
struct RowStats {
  int64_t nnz = 0;
  double lfact = 0.0;
  __device__ void add(int64_t x, unsigned long long& top) {
    ++nnz;
    if (x > 1) lfact += lgamma(static_cast<double>(x) + 1.0);
    top = static_cast<unsigned long long>(x) > top ? static_cast<unsigned long long>(x) : top;
  }
  __device__ void store(const RowsArgs& a, int64_t b, int64_t* row_nnz, double* row_total,
                        double* row_lcoef) const {
    const double n = static_cast<double>(a.sizes[b * a.sizes_stride]);
    row_nnz[b] = nnz;
    row_total[b] = n;
    row_lcoef[b] = lgamma(n + 1.0) - lfact;
  }
};

// Pass 1 of two: each row's nonzeros, total, log multinomial coefficient,
// and the table's largest count (max_count, by atomicMax: the same
// whatever the order).
__global__ void __launch_bounds__(kSampleBlock, kSampleMinBlocks)
    count_rows(RowsArgs a, int64_t* row_nnz, double* row_total, double* row_lcoef,
               unsigned long long* max_count) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (slot >= a.slots) return;
  unsigned long long top = 0;
  for (int64_t b = a.row_begin + slot; b < a.row_end; b += a.slots) {
    RowStats st;
    const auto emit = [&](int64_t, int64_t x) { st.add(x, top); };
    draw_row(a, b, slot, emit);
    st.store(a, b, row_nnz, row_total, row_lcoef);
  }
  if (top != 0) atomicMax(max_count, top);
}

// The single pass, where the rows' bounded entries fit the device: each
// row's entries (column and count packed in one E: 16 + 16 bits in a
// uint32 where both fit, else 32 + 32 in a uint64) written from
// stage_off[b] (the sum of the rows' bounds, min(size, cols), before b),
// with what count_rows counts.
template <class E>
__device__ E pack_entry(int64_t v, int64_t x) {
  constexpr int kHalf = sizeof(E) * 4;
  return (static_cast<E>(v) << kHalf) | static_cast<E>(x);
}
template <class E>
__global__ void __launch_bounds__(kSampleBlock, kSampleMinBlocks)
    stage_rows(RowsArgs a, const int64_t* stage_off, E* stage, int64_t* row_nnz, double* row_total,
               double* row_lcoef, unsigned long long* max_count) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (slot >= a.slots) return;
  unsigned long long top = 0;
  for (int64_t b = a.row_begin + slot; b < a.row_end; b += a.slots) {
    E* out = stage + stage_off[b];
    RowStats st;
    const auto emit = [&](int64_t v, int64_t x) {
      out[st.nnz] = pack_entry<E>(v, x);
      st.add(x, top);
    };
    draw_row(a, b, slot, emit);
    st.store(a, b, row_nnz, row_total, row_lcoef);
  }
  if (top != 0) atomicMax(max_count, top);
}

// The staged entries into the table's form, one warp per row: compressed
// rows from row_ptr[b] (columns I, counts D), or dense rows `pitch` cells
// apart (zeroed before; col and row_ptr unused).
template <class E, class D, class I, bool kDense>
__global__ void unstage_rows(int64_t rows, const int64_t* stage_off, const E* stage, const int64_t* row_nnz,
                             const int64_t* row_ptr, I* col, D* value, int64_t pitch) {
  constexpr int kHalf = sizeof(E) * 4;
  constexpr E kLow = (E{1} << kHalf) - 1;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t b = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; b < rows; b += warps) {
    const E* in = stage + stage_off[b];
    const int64_t n = row_nnz[b];
    for (int64_t i = lane; i < n; i += 32) {
      const E e = in[i];
      const int64_t v = static_cast<int64_t>(e >> kHalf);
      const D x = static_cast<D>(e & kLow);
      if (kDense) {
        value[b * pitch + v] = x;
      } else {
        col[row_ptr[b] + i] = static_cast<I>(v);
        value[row_ptr[b] + i] = x;
      }
    }
  }
}

// Pass 2, compressed rows: row b's entries from row_ptr[b], columns of type
// I and counts of type D.
template <class D, class I>
__global__ void __launch_bounds__(kSampleBlock, kSampleMinBlocks)
    write_csr(RowsArgs a, const int64_t* row_ptr, I* col, D* value) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (slot >= a.slots) return;
  for (int64_t b = a.row_begin + slot; b < a.row_end; b += a.slots) {
    int64_t at = row_ptr[b];
    const auto emit = [&](int64_t v, int64_t x) {
      col[at] = static_cast<I>(v);
      value[at] = static_cast<D>(x);
      ++at;
    };
    draw_row(a, b, slot, emit);
  }
}

// Pass 2, dense rows `pitch` cells apart (zeroed before).
template <class D>
__global__ void __launch_bounds__(kSampleBlock, kSampleMinBlocks) write_dense(RowsArgs a, D* out, int64_t pitch) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (slot >= a.slots) return;
  for (int64_t b = a.row_begin + slot; b < a.row_end; b += a.slots) {
    D* row = out + b * pitch;
    const auto emit = [&](int64_t v, int64_t x) { row[v] = static_cast<D>(x); };
    draw_row(a, b, slot, emit);
  }
}

// Each vector's by-value choice (math::gamma_row_by_value), one vector per
// thread: once per vector instead of once per row drawn from it.
__global__ void vector_by_value(const double* alpha, int64_t n_vec, int64_t cols, uint8_t* flag) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n_vec;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double* a = alpha + j * cols;
    flag[j] = math::gamma_row_by_value(cols, [a](int64_t v) { return a[v]; }) ? 1 : 0;
  }
}

// Where every row has a slot of its own (rows <= slots, slot b for row b):
// the gamma rows' draws, every (row, category) cell at once, into the
// rows' scratch, so that the row kernels only sum and split them (a row's
// categories have streams of their own; the draws are the row kernel's
// bit for bit). Consecutive threads take consecutive rows of a category:
// their writes to w[v * slots + b] coalesce.
__global__ void draw_gammas(RowsArgs a) {
  const int64_t rows = a.row_end - a.row_begin, cells = rows * a.cols;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = a.row_begin + i % rows, v = i / rows;
    const int64_t n = a.sizes[b * a.sizes_stride];
    if (n <= 0 || math::sample_by_urn(n, a.cols)) continue;
    const uint64_t key = math::derived_key(a.seed, math::kFamilySampleRows, a.first_row + static_cast<uint64_t>(b));
    const int64_t j = a.component != nullptr ? a.component[b] : 0;
    const bool by_value = a.by_value[a.rowwise ? b : j] != 0;
    double g;
    if (a.rowwise) {
      const double* alpha = a.alpha + b * a.cols;
      g = math::draw_gamma_cell([alpha](int64_t u) { return math::gamma_shape(alpha[u]); }, by_value, key, v);
    } else {
      const math::GammaShape* shape = a.shape + j * a.cols;
      g = math::draw_gamma_cell([shape](int64_t u) { return shape[u]; }, by_value, key, v);
    }
    a.w[v * a.slots + (b - a.row_begin)] = g;
  }
}

// After draw_gammas, each gamma row's proportions, block sums and split
// among its blocks (math::prepare_blocks, split_blocks), one row per
// thread.
__global__ void split_rows(RowsArgs a) {
  for (int64_t b = a.row_begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < a.row_end;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = a.sizes[b * a.sizes_stride];
    if (n <= 0 || math::sample_by_urn(n, a.cols)) continue;
    const uint64_t key = math::derived_key(a.seed, math::kFamilySampleRows, a.first_row + static_cast<uint64_t>(b));
    const int64_t j = a.component != nullptr ? a.component[b] : 0;
    const int64_t slot = b - a.row_begin;
    const math::Strided<double> w{a.w + slot, a.slots}, suffix{a.suffix + slot, a.slots}, t{a.t + slot, a.slots};
    math::prepare_blocks(a.cols, a.by_value[a.rowwise ? b : j] != 0, w, suffix, t);
    math::split_blocks(a.cols, key, n, suffix, t);
  }
}

// Then every (row, block) at once: the block's count among its categories
// (math::draw_block), each category's count replacing its weight in w (0
// where it has none), which the row kernels list (counts_drawn).
// Consecutive threads take consecutive rows of a block.
__global__ void draw_blocks(RowsArgs a) {
  const int64_t rows = a.row_end - a.row_begin, cells = rows * math::chain_blocks(a.cols);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t slot = i % rows, b = a.row_begin + slot, k = i / rows;
    const int64_t n = a.sizes[b * a.sizes_stride];
    if (n <= 0 || math::sample_by_urn(n, a.cols)) continue;
    const uint64_t key = math::derived_key(a.seed, math::kFamilySampleRows, a.first_row + static_cast<uint64_t>(b));
    const math::Strided<double> w{a.w + slot, a.slots}, suffix{a.suffix + slot, a.slots};
    const int64_t v0 = k * math::kChainBlock;
    const int64_t v1 = v0 + math::kChainBlock < a.cols ? v0 + math::kChainBlock : a.cols;
    uint32_t hit = 0;
    math::draw_block(a.cols, k, key, static_cast<int64_t>(a.t[k * a.slots + slot]), w, suffix,
                     [&](int64_t v, int64_t x) {
                       w[v] = static_cast<double>(x);
                       hit |= 1u << (v - v0);
                     });
    for (int64_t v = v0; v < v1; ++v)
      if (((hit >> (v - v0)) & 1u) == 0) w[v] = 0.0;
  }
}

// The shared vectors' gamma shapes (k x cols), one cell per thread.
__global__ void make_shapes(const double* alpha, int64_t cells, math::GammaShape* shape) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    shape[i] = math::gamma_shape(alpha[i]);
}

// The shared vectors' cumulative sums, in order (one thread per vector:
// the host's sums, rounding for rounding).
__global__ void make_cum(const double* alpha, int64_t k, int64_t cols, double* cum) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= k) return;
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) cum[j * cols + v] = s = math::add(s, alpha[j * cols + v]);
}

}  // namespace sample
}  // namespace cuda
}  // namespace dirmn
