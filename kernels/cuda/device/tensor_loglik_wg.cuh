// tensor_loglik_wg.cuh: the sm_90a form of the tensor-core likelihood
// kernels (tensor_loglik_kernels.cuh has the method), through warpgroup
// MMAs (wgmma.cuh). Device code only, for tensor_loglik.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../cuda_util.cuh"
#include "loglik_rows.cuh"
#include "tensor_loglik_kernels.cuh"
#include "tensor_mma.cuh"
#include "../tuning.cuh"
#include "wgmma.cuh"

namespace dirmn {
namespace cuda {
namespace {

// sm_90a: warpgroup MMAs. Block (row block, vector group): kWgGroups
// warpgroups of kWgMBlocks 64-row M blocks each; warp w of a warpgroup holds
// rows 16 w + g and 16 w + g + 8 of each of its M blocks.

constexpr int kWgThreads = kWgGroups * wgmma::kGroupThreads;
constexpr int kWgBlockRows = kWgGroups * kWgMBlocks * wgmma::kM;
static_assert(kWgBlockRows == kBlockRows, "tensor_loglik_supported bounds both forms' grids");
constexpr int kASets = 3;  // sets of A registers in turn (see tensor_loglik_wg)
static_assert(kASets == 3, "tensor_loglik_wg's loop and tail take a0, a1, a2 by name");
// A lane's counts of a row per slab: columns 8t .. 8t + 7, one 8-byte read;
// its A registers take columns 8t .. 8t + 3 as k = 4t .. 4t + 3 and
// 8t + 4 .. 8t + 7 as k = 16 + 4t .. 16 + 4t + 3.
constexpr int kLaneCols = 8;
static_assert(kLaneCols * kQuarters == kSlabCols, "a slab is the quarters' columns");

// The MMA's k for column c (0..31) of a slab.
__host__ __device__ constexpr int wg_pair_k(int c) {
  return (c % kLaneCols) / kWordCols * (wgmma::kK / 2) + (c / kLaneCols) * kWordCols + c % kWordCols;
}

// One thread per (group, vector c, slab, threshold m, 4-column word w):
// the digits of q for columns 4w .. 4w + 3 of the slab, one 4-byte word of
// the tile (slab, m - 1) per digit.
template <int D>
__global__ void quantize_tables_wg(QuantizeArgs p) {
  constexpr int kN = kVectors * D;
  constexpr int kTileBytes = kN * wgmma::kK;
  const int64_t slabs = p.tiles / p.thresholds;
  const int64_t groups = ceil_div<int64_t>(p.k, kVectors);
  constexpr int kWords = kSlabCols / kWordCols;
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= groups * kVectors * slabs * p.thresholds * kWords) return;
  const int w = static_cast<int>(id % kWords);
  const int m = static_cast<int>((id / kWords) % p.thresholds) + 1;
  const int64_t slab = (id / (kWords * p.thresholds)) % slabs;
  const int c = static_cast<int>((id / (kWords * p.thresholds * slabs)) % kVectors);
  const int64_t grp = id / (kWords * p.thresholds * slabs * kVectors);
  const int64_t k = grp * kVectors + c;
  unsigned long long q[kWordCols] = {};
  if (k < p.k) {
    const double lo = p.scale[2 * k], unit = p.scale[2 * k + 1];
    const double levels = ldexp(1.0, kDigitBits * D) - 1.0;
    const double log_a = p.ksums[k].log_a;
    for (int i = 0; i < kWordCols; ++i) {
      const int64_t v = slab * kSlabCols + w * kWordCols + i;
      if (v >= p.cols) break;
      const double l = log_term(p.alpha[k * p.cols + v], m, log_a);
      q[i] = static_cast<unsigned long long>(fmin(fmax(rint((l - lo) / unit), 0.0), levels));
    }
  }
  uint8_t* tile = reinterpret_cast<uint8_t*>(p.q) + ((grp * slabs + slab) * p.thresholds + (m - 1)) * kTileBytes;
  const int k0 = wg_pair_k(w * kWordCols);  // the word's columns are k0 .. k0 + 3
#pragma unroll
  for (int d = 0; d < D; ++d) {
    uint32_t word = 0;
#pragma unroll
    for (int i = 0; i < kWordCols; ++i)
      word |= static_cast<uint32_t>((q[i] >> (kDigitBits * d)) & 0xffu) << (8 * i);
    *reinterpret_cast<uint32_t*>(tile + wgmma::core_offset(k0, d * kVectors + c, kN)) = word;
  }
}

// The lane's 8 counts of `row` in slab `slab` (0 past the table).
__device__ __forceinline__ uint2 lane_counts(const TensorLoglikArgs& p, int64_t row, int64_t slab, int t) {
  const int64_t col = slab * kSlabCols + t * kLaneCols;
  if (row >= p.rows || col >= p.cols) return make_uint2(0u, 0u);
  // col is a multiple of 8 below cols <= pitch, and pitch is a multiple of
  // 16 (tensor_loglik_supported), so col + 8 <= pitch: the read stays in
  // the row, inside the rows x pitch allocation. Bytes past cols are masked.
  unsigned long long v = *reinterpret_cast<const unsigned long long*>(p.values + row * p.pitch + col);
  const int64_t left = p.cols - col;
  if (left < kLaneCols) v &= (1ull << (8 * left)) - 1ull;
  return make_uint2(static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32));
}

template <int D>
__global__ void __launch_bounds__(kWgThreads, kWgBlocksPerSm) tensor_loglik_wg(TensorLoglikArgs p) {
  constexpr int kN = kVectors * D;
  constexpr int kTileBytes = kN * wgmma::kK;
  constexpr int MB = kWgMBlocks;
  extern __shared__ __align__(16) uint8_t smem[];  // 16: what a descriptor without swizzle needs
  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / wgmma::kGroupThreads;
  const int lane = tid % kWarpLanes, w = (tid / kWarpLanes) % wgmma::kGroupWarps;
  const int g = lane / kQuarters, t = lane % kQuarters;
  const int T = p.thresholds;
  const int64_t grp = blockIdx.y;
  const int64_t slabs = ceil_div<int64_t>(p.cols, kSlabCols);
  const int stage_bytes = T * kTileBytes;
  const uint8_t* tables = p.q + grp * slabs * stage_bytes;
  // Row of M block b, half h (g or g + 8).
  const int64_t row_base =
      static_cast<int64_t>(blockIdx.x) * kWgBlockRows + wg * MB * wgmma::kM + wgmma::kWarpRows * w + g;
  const auto row_of = [&](int b, int h) { return row_base + b * wgmma::kM + (wgmma::kWarpRows / 2) * h; };

  const auto issue = [&](int64_t slab) {
    if (slab >= slabs) return;
    uint8_t* st = smem + (slab % kWgStages) * stage_bytes;
    const uint8_t* src = tables + slab * stage_bytes;
    for (int i = tid; i < stage_bytes / kCopyBytes; i += kWgThreads)
      copy16_async(st + i * kCopyBytes, src + i * kCopyBytes, kCopyBytes);
  };
  uint2 x[MB][2], xn[MB][2];
  const auto load = [&](uint2 (&dst)[MB][2], int64_t slab) {
#pragma unroll
    for (int b = 0; b < MB; ++b)
#pragma unroll
      for (int h = 0; h < 2; ++h) dst[b][h] = lane_counts(p, row_of(b, h), slab, t);
  };

  int acc[MB][kN / 2];
#pragma unroll
  for (int b = 0; b < MB; ++b) {
#pragma unroll
    for (int e = 0; e < kN / 2; ++e) acc[b][e] = 0;
    wgmma::fence_operands(acc[b]);
  }
  uint32_t a0[MB][4], a1[MB][4], a2[MB][4];
  // Threshold r + 1 of the staged slab st: A from the counts, then the MMAs.
  const auto step = [&](uint32_t (&a)[MB][4], const uint8_t* st, int r) {
    const uint32_t bias = (kIndicatorValue - static_cast<uint32_t>(r + 1)) * kEveryByte;
#pragma unroll
    for (int b = 0; b < MB; ++b) {
      a[b][0] = at_least(x[b][0].x, bias);
      a[b][1] = at_least(x[b][1].x, bias);
      a[b][2] = at_least(x[b][0].y, bias);
      a[b][3] = at_least(x[b][1].y, bias);
    }
    wgmma::wgmma_fence();
    const uint64_t desc = wgmma::smem_desc(st + r * kTileBytes, wgmma::leading_offset(kN), wgmma::kStrideOffset);
#pragma unroll
    for (int b = 0; b < MB; ++b) wgmma::wgmma_u8(acc[b], a[b], desc);
    wgmma::wgmma_commit();
  };

#pragma unroll
  for (int s = 0; s < kWgStages - 1; ++s) {
    issue(s);
    copy_commit();
  }
  load(x, 0);
  for (int64_t s = 0; s < slabs; ++s) {
    // The stage refilled here was last read in slab s - 1, whose MMAs every
    // thread waited for before the barrier that ended it.
    issue(s + kWgStages - 1);
    copy_commit();
    if (s + 1 < slabs) load(xn, s + 1);
    copy_wait<kWgStages - 1>();
    wgmma::fence_async_smem();
    __syncthreads();
    const uint8_t* st = smem + (s % kWgStages) * stage_bytes;
    // Three sets of A registers, taken in turn: one is written while the
    // MMAs of the other two may still read theirs (at most two groups in
    // flight). A group's MMAs take longer than a step's other work, so with
    // one group in flight the tensor pipe would idle.
    int r = 0;
    for (; r + kASets - 1 < T; r += kASets) {
      wgmma::wgmma_wait<kASets - 1>();
      step(a0, st, r);
      wgmma::wgmma_wait<kASets - 1>();
      step(a1, st, r + 1);
      wgmma::wgmma_wait<kASets - 1>();
      step(a2, st, r + 2);
    }
    if (r < T) {
      wgmma::wgmma_wait<kASets - 1>();
      step(a0, st, r);
    }
    if (r + 1 < T) {
      wgmma::wgmma_wait<kASets - 1>();
      step(a1, st, r + 1);
    }
    wgmma::wgmma_wait<0>();
    __syncthreads();
#pragma unroll
    for (int b = 0; b < MB; ++b) {
      x[b][0] = xn[b][0];
      x[b][1] = xn[b][1];
    }
  }
#pragma unroll
  for (int b = 0; b < MB; ++b) wgmma::fence_operands(acc[b]);

  // acc[b][4 d + 2 h + e]: digit d of vector 2t + e, row row_of(b, h).
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const int64_t k = grp * kVectors + 2 * t + e;
    if (k >= p.a.k_total) continue;
    const double lo = p.scale[2 * k], unit = p.scale[2 * k + 1];
#pragma unroll
    for (int b = 0; b < MB; ++b)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = row_of(b, h);
        if (row >= p.rows) continue;
        double q = 0.0;
#pragma unroll
        for (int d = D - 1; d >= 0; --d) q = q * 256.0 + static_cast<double>(acc[b][4 * d + 2 * h + e]);
        const double n = p.row_total[row];
        double v = lo * n + unit * (q / static_cast<double>(kIndicatorValue)) -
                   dev::row_term(p.a, static_cast<int>(k), n);
        if (p.a.full) v += p.row_lcoef[row];
        p.a.out[row * p.a.out_sr + k * p.a.out_sk] = v;
      }
  }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
