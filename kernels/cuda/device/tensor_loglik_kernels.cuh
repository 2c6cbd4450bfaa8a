// tensor_loglik_kernels.cuh: the kernels of the log-likelihoods of a dense
// 8-bit table (counts below 16) under several parameter vectors, on the
// int8 tensor cores. Device code only, for tensor_loglik.cu, which launches
// them.
//
// With T the largest count and lpoch(a, n) = sum_{m=1..n} log(a + m - 1),
// a row's sum over columns is a sum over (column, threshold) pairs:
//   S_k(b) = sum_v [lpoch(alpha_kv, n_bv) - n_bv log A_k]
//          = sum_{(v, m), m <= T} [n_bv >= m] L_k(v, m),
//   L_k(v, m) = log(alpha_kv + m - 1) - log A_k,
// a product of the rows x pairs 0/1 matrix with the pairs x k matrix L: an
// MMA, once L is in integers. Each vector's L is put in fixed point,
//   L = lo_k + u_k q,  q < 2^(8 D) an integer, u_k a power of two,
// so that the product is exact in integers and S_k(b) = lo_k N_b + u_k sum q
// (the indicators of a row add up to its total N_b). The only error is
// q's rounding, at most u_k / 2 per count: u_k is the power of two at or
// above L_k's range over 2^(8 D) - 1, so for ranges below 64 nats (which
// the backend checks: kTensorLoglikMaxRange) D = 6 digits (double mode)
// give u_k <= 2^-42 and a count's rounding at most 2^-43 = 1.1e-13; a row
// of total N is within N 1.1e-13 of the exact sum, and typically far closer
// (the roundings are independent). D = 4 (fast mode): 2^-27 = 7.5e-9 per
// count. The lookup-table kernels are bound by shared-memory bandwidth
// for several vectors (8 bytes per vector and nonzero cell); here a cell
// costs its share of MMA work, which grows with the digits, not the bytes.
//
// The MMA computes C (16 x 8) += A (16 x 32) B (32 x 8) with
//   A = q's digits: 16 rows (digit d of vector c: row 8 (d % 2) + c, in
//       M-tile d / 2) by 32 pairs,
//   B = the indicators: 32 pairs by 8 table rows,
// so a warp keeps its rows' sums in its accumulators while it walks the
// pairs. The pairs of a slab of 32 columns are T tiles: tile r holds
// threshold m = r + 1 of all 32 columns, in the order that gives lane
// quarter t columns 8t .. 8t + 7 (4 per B register). A lane then loads its
// 8 counts of a row once per slab, and each tile's B registers are the
// threshold test of tensor_mma.cuh on them: an add and a mask per register,
// the same for every lane.
//
// On sm_90a code (H100, H200) the same products run as warpgroup MMAs
// (wgmma.cuh, tensor_loglik_wg.cuh), transposed: A = the indicators, 64
// table rows by 32 pairs, from registers; B = q's digits, 32 pairs by 8 D
// columns (column 8 d + c: digit d of vector c), from shared memory. A lane
// then loads its 8 counts of each of its rows with one 8-byte read per
// slab, and the MMA runs at a higher rate than mma.sync (wgmma.cuh says
// why).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <cmath>
#include <cstdint>

#include "../cuda_util.cuh"
#include "loglik_rows.cuh"
#include "../loglik_types.cuh"
#include "tensor_mma.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace tensor;
using namespace tensor_lik_tuning;

constexpr int kVectors = 8;          // the MMA's rows per digit: vectors per group
constexpr int kTilePairs = 32;       // the MMA's k: pairs per tile
constexpr int kSlabCols = kTilePairs;  // a slab's columns: one tile per threshold
constexpr int kQuarterCols = kSlabCols / kQuarters;  // a lane quarter's columns of a slab (two words)
constexpr int kWordCols = 4;         // columns in one B register
constexpr int kMaxThresholds = 15;   // counts below kIndicatorValue
static_assert(kMaxThresholds < static_cast<int>(kIndicatorValue), "the threshold test needs counts below 16");
constexpr int kLikThreads = kLikWarps * kWarpLanes;
constexpr int kGroupRows = 8;        // the MMA's n: table rows per step
constexpr int kWarpRows = kGroupRows * kGroupsPerWarp;
constexpr int kBlockRows = kLikWarps * kWarpRows;
// A row's slab in shared memory: its 32 counts in 48 bytes (a multiple of
// the copies' 16). The reads of a half-warp (4 rows x 32 bytes) then meet
// 2-way bank conflicts, which rows back to back (32 bytes) would avoid.
constexpr int kRowStride = 48;
constexpr int kCountBytes = kBlockRows * kRowStride;
constexpr int kSlabCopies = kSlabCols / kCopyBytes;  // 16-byte copies per row and slab
constexpr int kFragBytes = kWarpLanes * 4 * static_cast<int>(sizeof(uint32_t));  // one A fragment of a warp
// Digits per vector: 6 in double mode, 4 in fast mode (two per M-tile).
constexpr int kDoubleTiles = 3;
constexpr int kFastTiles = 2;
constexpr int kDigitBits = 8;
// int32 accumulators: a row adds at most 16 x 255 per pair and digit.
constexpr int64_t kMaxPairs = (int64_t{1} << 31) / (static_cast<int64_t>(kIndicatorValue) * 255);

// Tiles per slab (one per threshold) of a table whose largest count is T.
__host__ __device__ inline int tiles_per_slab(int thresholds) { return thresholds; }

// ---------------------------------------------------------------------------
// Kernels

struct QuantizeArgs {
  const double* alpha = nullptr;  // k x cols (device)
  const KSums* ksums = nullptr;
  int64_t k = 0;
  int64_t cols = 0;
  int thresholds = 1;
  int m_tiles = kDoubleTiles;
  int64_t tiles = 0;          // pair tiles per vector group (whole slabs)
  // [group][tile][m-tile][lane][4 words]; for the _wg kernels
  // [group][slab][threshold][B tile of 8 D x 32 bytes] (wgmma::core_offset).
  uint32_t* q = nullptr;
  double* scale = nullptr;    // [k][2]: lo_k, u_k
};

struct MinMax {
  double lo, hi;
};
struct MinMaxOp {
  __device__ MinMax operator()(const MinMax& x, const MinMax& y) const { return {fmin(x.lo, y.lo), fmax(x.hi, y.hi)}; }
};

// L_k(v, m), as both kernels below form it (bit for bit the same, so that
// every entry lies in the range the first one finds).
__device__ __forceinline__ double log_term(double alpha, int m, double log_a) {
  return log(alpha + static_cast<double>(m - 1)) - log_a;
}

// One block per vector: L's range and its unit. log is increasing, so the
// range is that of log(alpha) and log(alpha + T - 1).
__global__ void __launch_bounds__(kScaleThreads) quantize_range(QuantizeArgs p) {
  using Reduce = cub::BlockReduce<MinMax, kScaleThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const int64_t k = blockIdx.x;
  const double* alpha = p.alpha + k * p.cols;
  const double log_a = p.ksums[k].log_a;
  MinMax mm{INFINITY, -INFINITY};
  for (int64_t v = threadIdx.x; v < p.cols; v += blockDim.x) {
    mm.lo = fmin(mm.lo, log_term(alpha[v], 1, log_a));
    mm.hi = fmax(mm.hi, log_term(alpha[v], p.thresholds, log_a));
  }
  const MinMax r = Reduce(temp).Reduce(mm, MinMaxOp());
  if (threadIdx.x != 0) return;
  const double levels = ldexp(1.0, kDigitBits * 2 * p.m_tiles) - 1.0;
  // The least power of two with (hi - lo) / u <= levels (1 for one value).
  double unit = 1.0;
  if (r.hi > r.lo) {
    int e = 0;
    frexp((r.hi - r.lo) / levels, &e);
    unit = ldexp(1.0, e);
  }
  p.scale[2 * k] = r.lo;
  p.scale[2 * k + 1] = unit;
}

// One thread per (group, vector c of the group, 4-column word w, threshold
// m): the digits of q for columns 4w .. 4w + 3, one A-fragment word per
// digit. Columns past the table's and vectors past k get 0.
__global__ void quantize_tables(QuantizeArgs p) {
  const int64_t words = p.tiles / p.thresholds * (kSlabCols / kWordCols);
  const int64_t groups = ceil_div<int64_t>(p.k, kVectors);
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= groups * kVectors * words * p.thresholds) return;
  const int m = static_cast<int>(id % p.thresholds) + 1;
  const int64_t w = (id / p.thresholds) % words;
  const int c = static_cast<int>((id / (p.thresholds * words)) % kVectors);
  const int64_t grp = id / (p.thresholds * words * kVectors);
  const int64_t k = grp * kVectors + c;
  unsigned long long q[kWordCols] = {};
  if (k < p.k) {
    const double lo = p.scale[2 * k], unit = p.scale[2 * k + 1];
    const double levels = ldexp(1.0, kDigitBits * 2 * p.m_tiles) - 1.0;
    const double log_a = p.ksums[k].log_a;
    for (int i = 0; i < kWordCols; ++i) {
      const int64_t v = w * kWordCols + i;
      if (v >= p.cols) break;
      const double l = log_term(p.alpha[k * p.cols + v], m, log_a);
      q[i] = static_cast<unsigned long long>(fmin(fmax(rint((l - lo) / unit), 0.0), levels));
    }
  }
  // Tile (slab, m - 1); the word's columns 8 t + 4 half + i (of the slab)
  // are k slots 16 half + 4 t + i: register half * 2 (+ 1 for odd digits)
  // of lane 4 c + t.
  const int64_t tile = (w * kWordCols / kSlabCols) * p.thresholds + (m - 1);
  const int ws = static_cast<int>(w % (kSlabCols / kWordCols));
  const int t = ws / (kQuarterCols / kWordCols), half = ws % (kQuarterCols / kWordCols);
  const int lane = c * kQuarters + t;
  for (int d = 0; d < 2 * p.m_tiles; ++d) {
    uint32_t word = 0;
    for (int i = 0; i < kWordCols; ++i)
      word |= static_cast<uint32_t>((q[i] >> (kDigitBits * d)) & 0xffu) << (8 * i);
    const int64_t frag = (grp * p.tiles + tile) * p.m_tiles + d / 2;
    p.q[(frag * kWarpLanes + lane) * 4 + half * 2 + d % 2] = word;
  }
}

struct TensorLoglikArgs {
  const uint8_t* values = nullptr;
  int64_t pitch = 0;  // bytes between rows, a multiple of 16
  int64_t rows = 0;
  int64_t cols = 0;
  int thresholds = 1;
  int64_t tiles = 0;  // per vector group
  const uint8_t* q = nullptr;
  const double* scale = nullptr;
  const double* row_total = nullptr;
  const double* row_lcoef = nullptr;
  SharedAlphaArgs a;  // row terms, vector sums, output
};

// Block (row block, vector group): kBlockRows rows; warp w takes rows
// 32 w .. 32 w + 31 as 4 groups of 8. Each slab (32 columns) is staged with
// its T tiles of A fragments; every warp then runs, per tile, 4 row groups
// x MT MMAs from one set of A registers.
template <int MT>
__global__ void __launch_bounds__(kLikThreads, kLikBlocksPerSm) tensor_loglik(TensorLoglikArgs p) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpLanes, wp = tid / kWarpLanes;
  const int g = lane / kQuarters, t = lane % kQuarters;
  const int T = p.thresholds;
  const int tiles = tiles_per_slab(T);
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kBlockRows;
  const int64_t grp = blockIdx.y;
  const int64_t slabs = ceil_div<int64_t>(p.cols, kSlabCols);
  uint8_t* stages = smem;
  const int stage_bytes = kCountBytes + tiles * MT * kFragBytes;

  const auto issue = [&](int stage, int64_t slab) {
    uint8_t* st = stages + stage * stage_bytes;
    for (int i = tid; i < kBlockRows * kSlabCopies; i += kLikThreads) {
      const int r = i / kSlabCopies, part = i % kSlabCopies;
      const int64_t row = row0 + r, col = slab * kSlabCols + part * kCopyBytes;
      const int64_t left = row < p.rows ? p.cols - col : 0;
      const int bytes = left <= 0 ? 0 : static_cast<int>(left < kCopyBytes ? left : kCopyBytes);
      const uint8_t* src = bytes > 0 ? p.values + row * p.pitch + col : p.values;
      copy16_async(st + r * kRowStride + part * kCopyBytes, src, bytes);
    }
    const int frag_copies = tiles * MT * kFragBytes / kCopyBytes;
    const uint8_t* q = p.q + (grp * p.tiles + slab * tiles) * MT * kFragBytes;
    for (int i = tid; i < frag_copies; i += kLikThreads)
      copy16_async(st + kCountBytes + i * kCopyBytes, q + i * kCopyBytes, kCopyBytes);
  };

  int acc[kGroupsPerWarp][MT][4];
#pragma unroll
  for (int i = 0; i < kGroupsPerWarp; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][mt][e] = 0;

  issue(0, 0);
  copy_commit();
  for (int64_t s = 0; s < slabs; ++s) {
    if (s + 1 < slabs) issue(static_cast<int>((s + 1) % kLikStages), s + 1);
    copy_commit();
    copy_wait<1>();
    __syncthreads();
    const uint8_t* st = stages + (s % kLikStages) * stage_bytes;
    // The lane's 8 counts of each of its rows (row 8 i + g of the warp's).
    uint2 x[kGroupsPerWarp];
#pragma unroll
    for (int i = 0; i < kGroupsPerWarp; ++i)
      x[i] = *reinterpret_cast<const uint2*>(st + (wp * kWarpRows + i * kGroupRows + g) * kRowStride +
                                             t * kQuarterCols);
    for (int r = 0; r < tiles; ++r) {
      const uint32_t bias = (kIndicatorValue - static_cast<uint32_t>(r + 1)) * kEveryByte;
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const uint4 f = *reinterpret_cast<const uint4*>(st + kCountBytes + (r * MT + mt) * kFragBytes + lane * 16);
        a[mt][0] = f.x;
        a[mt][1] = f.y;
        a[mt][2] = f.z;
        a[mt][3] = f.w;
      }
#pragma unroll
      for (int i = 0; i < kGroupsPerWarp; ++i) {
        const uint32_t b0 = at_least(x[i].x, bias), b1 = at_least(x[i].y, bias);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) mma_u8(acc[i][mt], a[mt], b0, b1);
      }
    }
    __syncthreads();  // the stage is refilled next
  }

  // Lane (g, t) holds vector g of its group, rows 2t and 2t + 1 of each row
  // group: digit 2 mt in acc[.][mt][0..1], digit 2 mt + 1 in [2..3].
  const int64_t k = grp * kVectors + g;
  if (k >= p.a.k_total) return;
  const double lo = p.scale[2 * k], unit = p.scale[2 * k + 1];
#pragma unroll
  for (int i = 0; i < kGroupsPerWarp; ++i)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t row = row0 + wp * kWarpRows + i * kGroupRows + 2 * t + e;
      if (row >= p.rows) continue;
      double q = 0.0;
#pragma unroll
      for (int d = 2 * MT - 1; d >= 0; --d) q = q * 256.0 + static_cast<double>(acc[i][d / 2][(d % 2) * 2 + e]);
      const double n = p.row_total[row];
      double v = lo * n + unit * (q / static_cast<double>(kIndicatorValue)) - dev::row_term(p.a, static_cast<int>(k), n);
      if (p.a.full) v += p.row_lcoef[row];
      p.a.out[row * p.a.out_sr + k * p.a.out_sk] = v;
    }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
