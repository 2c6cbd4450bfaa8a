// tensor_loglik.cu: the log-likelihoods of a dense 8-bit table (counts
// below 16) under several parameter vectors, on the int8 tensor cores.
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
// (wgmma.cuh), transposed: A = the indicators, 64 table rows by 32 pairs,
// from registers; B = q's digits, 32 pairs by 8 D columns (column
// 8 d + c: digit d of vector c), from shared memory. A lane then loads its
// 8 counts of each of its rows with one 8-byte read per slab, and the MMA
// runs at a higher rate than mma.sync (wgmma.cuh says why).
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>

#include "device_table.cuh"
#include "loglik_rows.cuh"
#include "tensor_mma.cuh"
#include "wgmma.cuh"

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

template <int MT>
size_t loglik_smem(int thresholds) {
  return static_cast<size_t>(kLikStages) * (kCountBytes + static_cast<size_t>(thresholds) * MT * kFragBytes);
}

// ---------------------------------------------------------------------------
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

template <int D>
size_t loglik_wg_smem(int thresholds) {
  return static_cast<size_t>(kWgStages) * static_cast<size_t>(thresholds) * kVectors * D * wgmma::kK;
}

// 1 in the code loaded for this device where it has wgmma (sm_90a): the
// driver picks one of the binary's images per device, and only the host
// can ask which. Every translation unit is built for the same targets, so
// the answer holds for tensor_histogram.cu's kernels too.
__device__ int loaded_has_wgmma = DIRMN_HAS_WGMMA;

}  // namespace

bool wgmma_available(int device, cudaStream_t stream) {
  int has = 0;
  DeviceGuard guard(device);
  // On the context's stream: the legacy default stream would wait for every
  // other blocking stream on the device.
  if (!guard.result().ok() ||
      cudaMemcpyFromSymbolAsync(&has, loaded_has_wgmma, sizeof(int), 0, cudaMemcpyDeviceToHost, stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return has == 1;
}

bool tensor_mma_available(int device) {
  // Every translation unit is built for the same targets, so one kernel's
  // image answers for tensor_histogram.cu's too.
  cudaFuncAttributes attr;
  DeviceGuard guard(device);
  if (!guard.result().ok() || cudaFuncGetAttributes(&attr, tensor_loglik<kDoubleTiles>) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.ptxVersion >= kTensorMinArch;
}

bool tensor_loglik_supported(const DeviceTable& t, int64_t k, const LaunchEnv& env) {
  const int T = tensor_thresholds(t);
  return env.tensor_mma && k >= kTensorLoglikMinK && !t.sparse && !t.wrapped &&
         t.cell == CellType::U8 && t.integral && !t.real_valued && t.max_count <= kMaxThresholds &&
         t.rows > 0 && t.cols > 0 && t.pitch % kCopyBytes == 0 &&
         ceil_div<int64_t>(t.cols, kSlabCols) * kSlabCols * T <= kMaxPairs &&
         ceil_div<int64_t>(k, kVectors) <= kMaxGridY && ceil_div<int64_t>(t.rows, kBlockRows) < (int64_t{1} << 31);
}

BackendResult build_tensor_loglik_tables(const DeviceTable& t, const double* alpha, const KSums* ksums,
                                         int64_t k, bool fast, DeviceBuffer& tables, const LaunchEnv& env) {
  const int T = tensor_thresholds(t);
  const int m_tiles = fast ? kFastTiles : kDoubleTiles;
  const int64_t slabs = ceil_div<int64_t>(t.cols, kSlabCols);
  const int64_t tiles = slabs * tiles_per_slab(T);
  const int64_t groups = ceil_div<int64_t>(k, kVectors);
  // Both layouts hold the same bytes: 2 MT digits of 8 vectors per pair.
  const size_t q_bytes = static_cast<size_t>(groups * tiles * m_tiles) * kFragBytes;
  static_assert(kFragBytes == 2 * kVectors * wgmma::kK, "an M-tile's fragment is two digits' B columns");
  const size_t scale_bytes = static_cast<size_t>(2 * k) * sizeof(double);
  DIRMN_TRY(tables.reserve(scale_bytes + q_bytes, "cudaMalloc (tensor-core likelihood tables)"));
  QuantizeArgs p;
  p.alpha = alpha;
  p.ksums = ksums;
  p.k = k;
  p.cols = t.cols;
  p.thresholds = T;
  p.m_tiles = m_tiles;
  p.tiles = tiles;
  p.scale = tables.get<double>();
  p.q = reinterpret_cast<uint32_t*>(tables.get<uint8_t>() + scale_bytes);
  quantize_range<<<static_cast<unsigned>(k), kScaleThreads, 0, env.stream>>>(p);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core likelihood ranges)");
  // Both forms take a thread per (group, vector, slab, threshold, 4-column word).
  const int64_t items = groups * kVectors * slabs * T * (kSlabCols / kWordCols);
  const unsigned grid = static_cast<unsigned>(ceil_div<int64_t>(items, kBlockThreads));
  if (!env.wgmma)
    quantize_tables<<<grid, kBlockThreads, 0, env.stream>>>(p);
  else if (fast)
    quantize_tables_wg<2 * kFastTiles><<<grid, kBlockThreads, 0, env.stream>>>(p);
  else
    quantize_tables_wg<2 * kDoubleTiles><<<grid, kBlockThreads, 0, env.stream>>>(p);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core likelihood tables)");
  return {};
}

BackendResult launch_tensor_loglik(const DeviceTable& t, const SharedAlphaArgs& a, bool fast,
                                   const DeviceBuffer& tables, const LaunchEnv& env) {
  const int T = tensor_thresholds(t);
  TensorLoglikArgs p;
  p.values = static_cast<const uint8_t*>(t.values);
  p.pitch = t.pitch;
  p.rows = t.rows;
  p.cols = t.cols;
  p.thresholds = T;
  p.tiles = ceil_div<int64_t>(t.cols, kSlabCols) * tiles_per_slab(T);
  p.scale = tables.get<double>();
  p.q = tables.get<uint8_t>() + static_cast<size_t>(2 * a.k_total) * sizeof(double);
  p.row_total = t.row_total.get<double>();
  p.row_lcoef = t.row_lcoef.get<double>();
  p.a = a;
  const unsigned groups = static_cast<unsigned>(ceil_div<int64_t>(a.k_total, kVectors));
  const auto run = [&](auto kernel, int threads, int block_rows, size_t smem) -> BackendResult {
    DIRMN_TRY(raise_shared_limit(reinterpret_cast<const void*>(kernel), smem, env.device));
    const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(t.rows, block_rows)), groups);
    kernel<<<grid, threads, smem, env.stream>>>(p);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core likelihood)");
    return {};
  };
  if (env.wgmma)
    return fast ? run(tensor_loglik_wg<2 * kFastTiles>, kWgThreads, kWgBlockRows, loglik_wg_smem<2 * kFastTiles>(T))
                : run(tensor_loglik_wg<2 * kDoubleTiles>, kWgThreads, kWgBlockRows,
                      loglik_wg_smem<2 * kDoubleTiles>(T));
  return fast ? run(tensor_loglik<kFastTiles>, kLikThreads, kBlockRows, loglik_smem<kFastTiles>(T))
              : run(tensor_loglik<kDoubleTiles>, kLikThreads, kBlockRows, loglik_smem<kDoubleTiles>(T));
}

}  // namespace cuda
}  // namespace dirmn
