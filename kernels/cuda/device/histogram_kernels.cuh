// histogram_kernels.cuh: the kernels of the weighted count histograms
// (histogram.cu, which launches them): per-column histograms of 8-bit
// tables -- private counters per thread, a shared tile with atomics, CSR
// rows with atomics -- the fixed-order sums of the private counters'
// partials, and the row-total sums. Device code only, for that one
// translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace hist_tuning;

constexpr int kWarp = 32;

template <int C>
struct CellLoad;
template <>
struct CellLoad<4> {
  static __device__ __forceinline__ uint32_t get(const uint8_t* p) {
    return __ldg(reinterpret_cast<const unsigned int*>(p));
  }
};

// Lane groups of G threads cover a column tile of C * G columns
// (blockIdx.y picks the tile); the block's groups take interleaved rows.
// Each block writes its tile's counts, summed over its groups, to
// partial[(tile, block)]; fixed-order passes then add the blocks.
// Unweighted tables whose counts are below kNibbleBins count in registers
// instead (kNibbles): per column a 64-bit word of sixteen 4-bit counters,
// one per value, bumped by a shift and an add over kNibbleRows rows (before
// a field can pass 15); then its even and odd fields are added, as bytes,
// to two words of eight 8-bit counters (two masks, a shift and two adds per
// column), which go to the shared-memory counters every kByteBatches
// batches (before a byte can pass 255). Memory sees one update per column
// and value every 255 rows.
constexpr int kNibbleBins = 16;
constexpr int kNibbleRows = 15;
constexpr int kByteBatches = 17;  // 17 x 15 = 255
constexpr uint64_t kLowNibbles = 0x0F0F0F0F0F0F0F0Full;

template <class Acc, int C, bool kNibbles>
__global__ void __launch_bounds__(kHistThreads, kPrivBlocksPerSm<kNibbles>)
    column_histogram_private_u8(const uint8_t* __restrict__ values, int64_t pitch, int64_t rows,
                                int64_t cols, const double* __restrict__ weights,
                                int64_t weight_stride, int bins, int group_threads,
                                double* __restrict__ partial) {
  constexpr int R = kNibbles ? kNibbleRows : kPrivRowsInFlight;
  extern __shared__ __align__(8) unsigned char counter_bytes[];
  Acc* acc = reinterpret_cast<Acc*>(counter_bytes);
  const int tid = static_cast<int>(threadIdx.x);
  const int nthreads = static_cast<int>(blockDim.x);
  const int groups = nthreads / group_threads;
  const int group = tid / group_threads, lane = tid % group_threads;
  const int64_t tile_cols = static_cast<int64_t>(C) * group_threads;
  const int64_t col = static_cast<int64_t>(blockIdx.y) * tile_cols + static_cast<int64_t>(lane) * C;
  for (int i = tid; i < C * bins * nthreads; i += nthreads) acc[i] = Acc(0);
  __syncthreads();

  const bool active = group < groups && col < cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groups;
  uint64_t even[kNibbles ? C : 1] = {}, odd[kNibbles ? C : 1] = {};
  int batches = 0;
  // The byte counters into the shared-memory ones (value f: byte f / 2 of
  // the even or odd word).
  const auto empty_bytes = [&]() {
#pragma unroll
    for (int j = 0; j < C; ++j) {
#pragma unroll
      for (int f = 0; f < kNibbleBins; ++f) {
        const uint64_t word = (f % 2 == 0) ? even[j] : odd[j];
        if (f < bins) acc[(j * bins + f) * nthreads + tid] += static_cast<Acc>((word >> (8 * (f / 2))) & 0xffu);
      }
      even[j] = 0;
      odd[j] = 0;
    }
  };
  for (int64_t r0 = static_cast<int64_t>(blockIdx.x) * groups + group; active && r0 < rows;
       r0 += stride * R) {
    uint32_t x[R];
    Acc w[R];
    if (r0 + (R - 1) * stride < rows) {
      // Every row of the batch exists: addresses by a pointer step.
      const uint8_t* p = values + r0 * pitch + col;
      const double* pw = weights != nullptr ? weights + r0 * weight_stride : nullptr;
      const int64_t step = stride * pitch, wstep = stride * weight_stride;
#pragma unroll
      for (int u = 0; u < R; ++u) {
        if (u > 0) p += step;
        x[u] = CellLoad<C>::get(p);
        if constexpr (!kNibbles) {
          if (u > 0 && pw != nullptr) pw += wstep;
          w[u] = pw != nullptr ? static_cast<Acc>(__ldg(pw)) : Acc(1);
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < R; ++u) {
        const int64_t r = r0 + u * stride;
        const bool in = r < rows;
        // Rows are padded with zeros to 16 bytes, so C cells from a column
        // below cols are always inside the row; rows past the end read as
        // zeros, which land in the unread bin 0.
        x[u] = in ? CellLoad<C>::get(values + r * pitch + col) : 0u;
        if constexpr (!kNibbles) {
          if (weights != nullptr)
            w[u] = in ? static_cast<Acc>(__ldg(weights + r * weight_stride)) : Acc(0);
          else
            w[u] = in ? Acc(1) : Acc(0);
        }
      }
    }
    if constexpr (kNibbles) {
      uint64_t nib[C] = {};
#pragma unroll
      for (int u = 0; u < R; ++u)
#pragma unroll
        for (int j = 0; j < C; ++j) nib[j] += uint64_t{1} << (4 * ((x[u] >> (8 * j)) & 0xfu));
#pragma unroll
      for (int j = 0; j < C; ++j) {
        even[j] += nib[j] & kLowNibbles;
        odd[j] += (nib[j] >> 4) & kLowNibbles;
      }
      if (++batches == kByteBatches) {
        empty_bytes();
        batches = 0;
      }
    } else {
#pragma unroll
      for (int u = 0; u < R; ++u)
#pragma unroll
        for (int j = 0; j < C; ++j) {
          const int n = static_cast<int>((x[u] >> (8 * j)) & 0xffu);
          acc[(j * bins + n) * nthreads + tid] += w[u];  // n = 0 lands in an unread bin
        }
    }
  }
  if constexpr (kNibbles) empty_bytes();
  __syncthreads();
  const int entries = static_cast<int>(tile_cols) * bins;
  double* out = partial + (static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x) * entries;
  for (int e = tid; e < entries; e += nthreads) {
    const int c = e / bins, n = e % bins;
    const int owner = c / C, j = c % C;
    double s = 0.0;
    for (int gi = 0; gi < groups; ++gi)
      s += static_cast<double>(acc[(j * bins + n) * nthreads + gi * group_threads + owner]);
    out[e] = s;
  }
}

// First summing pass: thread (slice, i) adds blocks slice * kPartialsPerThread
// ... of entry i of its tile, in block order, into mid[slice][i].
__global__ void sum_partials(const double* __restrict__ partial, int64_t tiles, int64_t blocks,
                             int64_t entries, int64_t slices, double* __restrict__ mid) {
  const int64_t total = tiles * entries * slices;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t % (tiles * entries), slice = t / (tiles * entries);
    const int64_t tile = i / entries, e = i % entries;
    const int64_t b0 = slice * kPartialsPerThread, b1 = min(blocks, b0 + kPartialsPerThread);
    const double* p = partial + tile * blocks * entries + e;
    double s = 0.0;
    for (int64_t b = b0; b < b1; ++b) s += p[b * entries];
    mid[slice * tiles * entries + i] = s;
  }
}

// Second pass: hist[i] = sum over slices of mid, in slice order (entries
// past the last column are left alone).
__global__ void sum_slices(const double* __restrict__ mid, int64_t n, int64_t slices,
                           int64_t limit, double* __restrict__ hist) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < min(n, limit);
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0.0;
    for (int64_t q = 0; q < slices; ++q) s += mid[q * n + i];
    hist[i] = s;
  }
}

// Dense rows with many bins: a block accumulates a column tile of the
// histogram in shared memory over a strided subset of rows, then adds it to
// the global one. Unweighted tables count in 32-bit integers; weighted ones
// add doubles (atomics: the order of additions, so the last bits, may vary
// between runs).
template <class Acc>
__global__ void column_histogram_tile_u8(const uint8_t* __restrict__ values, int64_t pitch,
                                         int64_t rows, int64_t cols,
                                         const double* __restrict__ weights, int64_t weight_stride,
                                         int bins, int64_t tile_cols, double* __restrict__ hist) {
  extern __shared__ __align__(8) unsigned char tile_bytes[];
  Acc* tile = reinterpret_cast<Acc*>(tile_bytes);
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * tile_cols;
  const int64_t width = min(tile_cols, cols - c0);
  for (int64_t i = threadIdx.x; i < width * bins; i += blockDim.x) tile[i] = Acc(0);
  __syncthreads();
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Acc w = weights != nullptr ? static_cast<Acc>(weights[r * weight_stride]) : Acc(1);
    if (w == Acc(0)) continue;
    const uint8_t* row = values + r * pitch + c0;
    for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
      const int n = row[c];
      if (n != 0) atomicAdd(&tile[c * bins + n], w);
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < width * bins; i += blockDim.x)
    if (tile[i] != Acc(0)) atomicAdd(&hist[c0 * bins + i], static_cast<double>(tile[i]));
}

// CSR rows: one warp per row; columns are scattered, so entries go straight
// to the global histogram (atomics, as above).
template <class Col>
__global__ void column_histogram_csr_u8(const int64_t* __restrict__ row_ptr,
                                        const Col* __restrict__ col,
                                        const uint8_t* __restrict__ values, int64_t rows,
                                        const double* __restrict__ weights, int64_t weight_stride,
                                        int bins, double* __restrict__ hist) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
       r < rows; r += warps) {
    const double w = weights != nullptr ? weights[r * weight_stride] : 1.0;
    if (w == 0.0) continue;
    for (int64_t i = row_ptr[r] + lane; i < row_ptr[r + 1]; i += kWarp)
      atomicAdd(&hist[static_cast<int64_t>(col[i]) * bins + values[i]], w);
  }
}

// Row totals as 32-bit sort keys, and the identity permutation.
__global__ void totals_keys(const double* __restrict__ row_total, int64_t rows,
                            uint32_t* __restrict__ key, uint32_t* __restrict__ index) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    key[i] = static_cast<uint32_t>(row_total[i]);
    index[i] = static_cast<uint32_t>(i);
  }
}

constexpr int kRunWarps = kHistThreads / kWarp;

// One warp per row-total run i (the rows whose total is ix.value[i]): for
// each weighting j, seg_out[j * runs + i] = sum of the run's w_bj and
// lpart[j * runs + i] = sum of its w_bj lcoef_b, in a fixed order (lanes
// over rows, then a fixed shuffle tree), so they repeat bit for bit.
__global__ void total_run_sums(const uint32_t* __restrict__ order, const int64_t* __restrict__ off,
                               int64_t runs, const double* __restrict__ weights, int64_t k,
                               const double* __restrict__ lcoef, double* __restrict__ seg_out,
                               double* __restrict__ lpart) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kRunWarps + static_cast<int64_t>(threadIdx.x) / kWarp;
  if (i >= runs) return;  // the whole warp leaves together
  const int64_t r0 = off[i], r1 = off[i + 1];
  for (int64_t j0 = 0; j0 < k; j0 += kRunWeightings) {
    double s[kRunWeightings] = {}, sl[kRunWeightings] = {};
    for (int64_t r = r0 + lane; r < r1; r += kWarp) {
      const int64_t b = order[r];
      const double l = lcoef[b];
#pragma unroll
      for (int64_t jj = 0; jj < kRunWeightings; ++jj) {
        if (j0 + jj >= k) break;
        const double w = weights[b * k + j0 + jj];
        s[jj] += w;
        sl[jj] += w * l;
      }
    }
#pragma unroll
    for (int64_t jj = 0; jj < kRunWeightings; ++jj) {
      for (int o = kWarp / 2; o > 0; o /= 2) {
        s[jj] += __shfl_down_sync(0xffffffffu, s[jj], o);
        sl[jj] += __shfl_down_sync(0xffffffffu, sl[jj], o);
      }
      if (lane == 0 && j0 + jj < k) {
        seg_out[(j0 + jj) * runs + i] = s[jj];
        lpart[(j0 + jj) * runs + i] = sl[jj];
      }
    }
  }
}

// Block j: lcoef_out[j] = sum over runs of lpart[j * runs + i], in a fixed
// order (thread strides, then a fixed tree).
__global__ void sum_runs(const double* __restrict__ lpart, int64_t runs, double* __restrict__ lcoef_out) {
  __shared__ double buf[kHistThreads];
  const int64_t j = blockIdx.x;
  double v = 0.0;
  for (int64_t i = threadIdx.x; i < runs; i += kHistThreads) v += lpart[j * runs + i];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int half = kHistThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) buf[threadIdx.x] += buf[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) lcoef_out[j] = buf[0];
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
