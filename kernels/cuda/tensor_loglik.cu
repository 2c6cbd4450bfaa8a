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
// q's rounding, at most u_k / 2 per count: with D = 6 digits (double mode)
// u_k is 2^-48 of L_k's range, about 1e-13 for ranges up to 32 nats, so
// a row of total N is within N 1e-13 of the exact sum and typically far
// closer (the roundings are independent); D = 4 (fast mode) keeps it within
// N 4e-9. The lookup-table kernels are bound by shared-memory bandwidth
// for several vectors (8 bytes per vector and nonzero cell); here a cell
// costs its share of MMA work, which grows with the digits, not the bytes.
//
// The MMA computes C (16 x 8) += A (16 x 32) B (32 x 8) with
//   A = q's digits: 16 rows (digit d of vector c: row 8 (d % 2) + c, in
//       M-tile d / 2) by 32 pairs,
//   B = the indicators: 32 pairs by 8 table rows,
// so a warp keeps its rows' sums in its accumulators while it walks the
// pairs. Pairs are packed T to a column, as in tensor_histogram.cu: column
// v's thresholds are pairs T v .. T v + T - 1, so the 32 columns of a slab
// are T tiles of 32 pairs. A lane's B register holds 4 consecutive pairs
// of one row, which span at most two 4-column words of the row: it is made
// from the row's counts by one byte permute (which counts go where), an add
// of 16 - m per byte and a mask (the threshold test of tensor_mma.cuh).
// Where the bytes come from and the thresholds repeat from slab to slab,
// so they are tabulated per tile of a slab (TileCode) at the block's start.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>

#include "device_table.cuh"
#include "loglik_device.cuh"
#include "tensor_mma.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace tensor;

constexpr int kVectors = 8;          // the MMA's rows per digit: vectors per group
constexpr int kTilePairs = 32;       // the MMA's k: pairs per tile
constexpr int kSlabCols = 32;        // columns of a slab: kTilePairs x T pairs, T tiles
constexpr int kMaxThresholds = 15;   // counts below kIndicatorValue
static_assert(kMaxThresholds < static_cast<int>(kIndicatorValue), "the threshold test needs counts below 16");
constexpr int kLikWarps = 8;
constexpr int kLikThreads = kLikWarps * kWarpLanes;
constexpr int kGroupRows = 8;        // the MMA's n: table rows per step
constexpr int kGroupsPerWarp = 4;    // row groups a warp carries (its accumulators)
constexpr int kWarpRows = kGroupRows * kGroupsPerWarp;
constexpr int kBlockRows = kLikWarps * kWarpRows;
constexpr int kLikBlocksPerSm = 2;
// A row's slab in shared memory: 32 counts, padded to 48 bytes so that the
// 8 rows a warp reads at once fall in distinct banks (48 = 12 banks).
constexpr int kRowStride = 48;
constexpr int kCountBytes = kBlockRows * kRowStride;
constexpr int kSlabCopies = kSlabCols / kCopyBytes;  // 16-byte copies per row and slab
constexpr int kFragBytes = kWarpLanes * 4 * static_cast<int>(sizeof(uint32_t));  // one A fragment of a warp
constexpr int kLikStages = 2;
// Digits per vector: 6 in double mode, 4 in fast mode (two per M-tile).
constexpr int kDoubleTiles = 3;
constexpr int kFastTiles = 2;
constexpr int kDigitBits = 8;
// int32 accumulators: a row adds at most 16 x 255 per pair and digit.
constexpr int64_t kMaxPairs = (int64_t{1} << 31) / (static_cast<int64_t>(kIndicatorValue) * 255);
// Fewer vectors than this are cheaper through the lookup tables: the MMA
// works on groups of eight.
constexpr int64_t kTensorLoglikMinK = 4;
constexpr int kScaleThreads = 1024;

// Where lane quarter t's two B registers of tile r of a slab come from: for
// half h, the byte offset of a 4-column word of the row (low 16 bits) and
// the byte-permute selector over that word and the next (high 16 bits),
// then 16 - m for each of the 4 pairs.
struct TileCode {
  uint32_t src[2];
  uint32_t bias[2];
};

__host__ __device__ inline int tiles_per_slab(int thresholds) { return thresholds; }

// ---------------------------------------------------------------------------
// Device functions

// The B register of 4 pairs of one row: the row's counts permuted into
// place, then the threshold test.
__device__ __forceinline__ uint32_t indicators(const uint8_t* row, uint32_t src, uint32_t bias) {
  const uint32_t at = src & 0xffffu;
  const uint32_t lo = *reinterpret_cast<const uint32_t*>(row + at);
  const uint32_t hi = *reinterpret_cast<const uint32_t*>(row + at + 4);
  return at_least(__byte_perm(lo, hi, src >> 16), bias);
}

// The codes of tile r (of a slab), quarter t: pairs k0 + i, i < 4, with
// k0 = 32 r + 16 h + 4 t, are column (k0 + i) / T, threshold (k0 + i) % T + 1.
__device__ TileCode tile_code(int r, int t, int thresholds) {
  TileCode c;
  for (int h = 0; h < 2; ++h) {
    const int k0 = kTilePairs * r + (kTilePairs / 2) * h + kQuarters * t;
    const int at = (k0 / thresholds) / 4 * 4;
    uint32_t sel = 0, bias = 0;
    for (int i = 0; i < 4; ++i) {
      const int v = (k0 + i) / thresholds, m = (k0 + i) % thresholds + 1;
      sel |= static_cast<uint32_t>(v - at) << (4 * i);
      bias |= (kIndicatorValue - static_cast<uint32_t>(m)) << (8 * i);
    }
    c.src[h] = static_cast<uint32_t>(at) | (sel << 16);
    c.bias[h] = bias;
  }
  return c;
}

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
  uint8_t* q = nullptr;       // [group][tile][m-tile][lane][16 bytes], zeroed
  double* scale = nullptr;    // [k][2]: lo_k, u_k
};

struct MinMax {
  double lo, hi;
};
struct MinMaxOp {
  __device__ MinMax operator()(const MinMax& x, const MinMax& y) const { return {fmin(x.lo, y.lo), fmax(x.hi, y.hi)}; }
};

// One block per vector: L's range, its unit, and every q's digits in the
// A fragments' order. log is increasing, so the range is that of
// log(alpha) and log(alpha + T - 1).
__global__ void __launch_bounds__(kScaleThreads) quantize_tables(QuantizeArgs p) {
  using Reduce = cub::BlockReduce<MinMax, kScaleThreads>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ MinMax range;
  const int64_t k = blockIdx.x;
  const double* alpha = p.alpha + k * p.cols;
  const double log_a = p.ksums[k].log_a;
  const double top = static_cast<double>(p.thresholds - 1);
  MinMax mm{INFINITY, -INFINITY};
  for (int64_t v = threadIdx.x; v < p.cols; v += blockDim.x) {
    mm.lo = fmin(mm.lo, log(alpha[v]) - log_a);
    mm.hi = fmax(mm.hi, log(alpha[v] + top) - log_a);
  }
  const MinMax r = Reduce(temp).Reduce(mm, MinMaxOp());
  if (threadIdx.x == 0) range = r;
  __syncthreads();
  const int digits = 2 * p.m_tiles;
  const double levels = ldexp(1.0, kDigitBits * digits) - 1.0;
  // The least power of two with (hi - lo) / u <= levels (1 for one value).
  double unit = 1.0;
  if (range.hi > range.lo) {
    int e = 0;
    frexp((range.hi - range.lo) / levels, &e);
    unit = ldexp(1.0, e);
  }
  if (threadIdx.x == 0) {
    p.scale[2 * k] = range.lo;
    p.scale[2 * k + 1] = unit;
  }
  const int64_t grp = k / kVectors;
  const int c = static_cast<int>(k % kVectors);
  const int64_t pairs = p.cols * p.thresholds;
  for (int64_t pr = threadIdx.x; pr < pairs; pr += blockDim.x) {
    const int64_t v = pr / p.thresholds;
    const int m = static_cast<int>(pr % p.thresholds) + 1;
    const double l = log(alpha[v] + static_cast<double>(m - 1)) - log_a;
    const double x = fmin(fmax(rint((l - range.lo) / unit), 0.0), levels);
    const unsigned long long q = static_cast<unsigned long long>(x);
    const int64_t tile = pr / kTilePairs;
    const int kk = static_cast<int>(pr % kTilePairs);
    const int half = kk / (kTilePairs / 2), t = (kk % (kTilePairs / 2)) / kQuarters, i = kk % kQuarters;
    const int lane = c * kQuarters + t;
    for (int d = 0; d < digits; ++d) {
      const int mt = d / 2, reg = half * 2 + d % 2;
      const int64_t frag = (grp * p.tiles + tile) * p.m_tiles + mt;
      p.q[frag * kFragBytes + lane * 16 + reg * 4 + i] = static_cast<uint8_t>((q >> (kDigitBits * d)) & 0xffu);
    }
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
  auto* codes = reinterpret_cast<TileCode*>(smem);
  uint8_t* stages = smem + kMaxThresholds * kQuarters * sizeof(TileCode);
  const int stage_bytes = kCountBytes + tiles * MT * kFragBytes;

  for (int i = tid; i < tiles * kQuarters; i += kLikThreads) codes[i] = tile_code(i / kQuarters, i % kQuarters, T);
  // The rows' padding is read (as the word after a row's last) but never
  // selected; zero it so nothing reads uninitialised memory.
  for (int i = tid; i < kLikStages * kBlockRows; i += kLikThreads) {
    uint8_t* pad = stages + (i / kBlockRows) * stage_bytes + (i % kBlockRows) * kRowStride + kSlabCols;
    for (int b = 0; b < kRowStride - kSlabCols; b += 4) *reinterpret_cast<uint32_t*>(pad + b) = 0u;
  }

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
    const uint8_t* rows = st + (wp * kWarpRows + g) * kRowStride;
    for (int r = 0; r < tiles; ++r) {
      const TileCode code = codes[r * kQuarters + t];
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
        const uint8_t* row = rows + i * kGroupRows * kRowStride;
        const uint32_t b0 = indicators(row, code.src[0], code.bias[0]);
        const uint32_t b1 = indicators(row, code.src[1], code.bias[1]);
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

// The thresholds of a table whose largest count is max_count: 1..T.
int loglik_thresholds(const DeviceTable& t) { return std::max(1, static_cast<int>(t.max_count)); }

template <int MT>
size_t loglik_smem(int thresholds) {
  return kMaxThresholds * kQuarters * sizeof(TileCode) +
         static_cast<size_t>(kLikStages) * (kCountBytes + static_cast<size_t>(thresholds) * MT * kFragBytes);
}

}  // namespace

bool tensor_loglik_supported(const DeviceTable& t, int64_t k) {
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, tensor_loglik<kDoubleTiles>) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  const int T = loglik_thresholds(t);
  return attr.ptxVersion >= kTensorMinArch && k >= kTensorLoglikMinK && !t.sparse && !t.wrapped &&
         t.cell == CellType::U8 && t.integral && !t.real_valued && t.max_count <= kMaxThresholds &&
         t.rows > 0 && t.cols > 0 && t.pitch % kCopyBytes == 0 &&
         ceil_div<int64_t>(t.cols, kSlabCols) * kSlabCols * T <= kMaxPairs &&
         ceil_div<int64_t>(k, kVectors) <= kMaxGridY && ceil_div<int64_t>(t.rows, kBlockRows) < (int64_t{1} << 31);
}

BackendResult build_tensor_loglik_tables(const DeviceTable& t, const double* alpha, const KSums* ksums,
                                         int64_t k, bool fast, DeviceBuffer& tables, const LaunchEnv& env) {
  const int T = loglik_thresholds(t);
  const int m_tiles = fast ? kFastTiles : kDoubleTiles;
  const int64_t tiles = ceil_div<int64_t>(t.cols, kSlabCols) * tiles_per_slab(T);
  const int64_t groups = ceil_div<int64_t>(k, kVectors);
  const size_t q_bytes = static_cast<size_t>(groups * tiles * m_tiles) * kFragBytes;
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
  p.q = tables.get<uint8_t>() + scale_bytes;
  // Pairs past the last column, and vectors past k in the last group, stay 0.
  DIRMN_CUDA_TRY(cudaMemsetAsync(p.q, 0, q_bytes, env.stream), "cudaMemsetAsync (tensor-core likelihood tables)");
  quantize_tables<<<static_cast<unsigned>(k), kScaleThreads, 0, env.stream>>>(p);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core likelihood tables)");
  return {};
}

BackendResult launch_tensor_loglik(const DeviceTable& t, const SharedAlphaArgs& a, bool fast,
                                   const DeviceBuffer& tables, const LaunchEnv& env) {
  const int T = loglik_thresholds(t);
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
  const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(t.rows, kBlockRows)),
                  static_cast<unsigned>(ceil_div<int64_t>(a.k_total, kVectors)));
  const auto run = [&](auto kernel, size_t smem) -> BackendResult {
    DIRMN_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                   "cudaFuncSetAttribute (tensor-core likelihood)");
    kernel<<<grid, kLikThreads, smem, env.stream>>>(p);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core likelihood)");
    return {};
  };
  return fast ? run(tensor_loglik<kFastTiles>, loglik_smem<kFastTiles>(T))
              : run(tensor_loglik<kDoubleTiles>, loglik_smem<kDoubleTiles>(T));
}

}  // namespace cuda
}  // namespace dirmn
