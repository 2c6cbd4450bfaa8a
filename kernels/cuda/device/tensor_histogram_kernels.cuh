// tensor_histogram_kernels.cuh: the kernels of the M step's weighted count
// histograms on the int8 tensor cores, for dense 8-bit tables whose counts
// are below 16. Device code only, for tensor_histogram.cu, which launches
// them.
//
// For a column v and k weightings w_bj >= 0, the cumulative histogram
//   C_j[v][m] = sum_b w_bj [n_bv >= m],   1 <= m <= T (T the largest count),
// is a matrix product over rows: A[(v, m)][b] = [n_bv >= m] times W[b][j]
// (rows x 8 weightings), which mma.m16n8k32 computes 32 rows at a time for
// 16 (column, threshold) pairs. The pairs are packed T to a column, so a
// table of counts 0-9 takes 9 of the MMA's rows per column, not 16.
// Weights enter as 63-bit fixed point relative to a power of two p_j
// at least the weighting's largest weight, q_bj = round(w_bj / p_j 2^63),
// split into eight base-256 digits, one product per digit, all eight from
// one reading of the table; A's entries are 0 or 16 (bit 4 of a byte). Every sum is then an
// exact integer: the histograms are exact for the rounded weights, each
// within 2^-64 p_j of its weight. That is finer than a double sum resolves
// once the largest weight is in it, and it keeps a nearly empty component's
// relative precision, which 32-bit fixed point would lose. The sums repeat
// bit for bit from run to run. By-value histograms are differences of neighbouring
// cumulative entries, taken in integers (the weight of count 0, which no
// fit reads, is not formed: it is left 0).
//
// The table is read through a chunk-major copy (build_chunk_table): for each
// run of 32 rows and each column, the column's 32 counts in the order the
// MMA's A fragment takes them, so a lane's share is one 8-byte read.
//
// On sm_90a code (H100, H200) the products run as warpgroup MMAs
// (wgmma.cuh, tensor_histogram_wg.cuh): A the same indicators from
// registers, 64 pairs a time, B all eight digits of the eight weightings
// (N = 64, column 8 d + j) from shared memory, at a higher rate than
// mma.sync (wgmma.cuh says why).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensor_mma.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace tensor;
using namespace tensor_hist_tuning;

constexpr int kChunkRows = 32;           // rows of one m16n8k32 step (its k)
constexpr int kChunkBytes = kChunkRows;  // one column of a chunk, 8-bit counts
// The MMA's m: (column, threshold) pairs per tile; counts are below it.
constexpr int kTensorBins = 16;
static_assert(kTensorBins == static_cast<int>(kIndicatorValue), "counts below the indicator's bit");
constexpr int kGroupWeightings = 8;      // the MMA's n: weightings per group
constexpr int kDigits = 8;               // base-256 digits of a weight
// The digits' sums are combined in two halves of four (a half's sum stays
// below 2^63; see kMaxTensorRows): low and high.
constexpr int kHalves = 2;
constexpr int kHalfDigits = kDigits / kHalves;
constexpr double kWeightScale = 9223372036854775808.0;  // 2^63: a weight of p_j is exact
constexpr double kHalfScale = 4294967296.0;             // 2^32: the high half's weight in the sum
// A's entries are kIndicatorValue (16), so every product carries it.
// Lane (g, t): t = lane % 4 picks the row quarter a lane holds in the MMA's
// fragments, g = lane / 4 its pairs (A) and weighting (B).
constexpr int kTensorThreads = kTensorWarps * kWarpLanes;
// (column, threshold) pairs of a block: its columns are as many as fit,
// kBlockPairs / T, up to kMaxBlockCols (so that one 16-byte copy per thread
// stages a chunk of them with its weight digits).
constexpr int kBlockPairs = kTensorWarps * kTilesPerWarp * kTensorBins;
constexpr int kMaxBlockCols = 64;
static_assert(kStages >= 2 * kChunksPerSync, "stages for the chunks in use and those in flight");
// Bytes of one chunk's weight digits for one group: 32 rows x 8 weightings x 8 digits.
constexpr int kDigitBytes = kChunkRows * kGroupWeightings * kDigits;
constexpr int kTileBytes = kMaxBlockCols * kChunkBytes;
constexpr int kStageBytes = kTileBytes + kDigitBytes;
static_assert(kStageBytes / kCopyBytes == kTensorThreads, "one copy per thread and stage");
// A pair's 16-bit code for a lane: its column's byte offset in a stage
// (plus the lane's quarter), and 15 - (m - 1) = 16 - m above kPairShift (0
// for no pair: then every byte compares below and A's row is 0). A lane's
// two pairs of a tile share one register.
constexpr int kPairShift = 12;
constexpr int kPairBits = 16;
constexpr uint32_t kPairOffsetMask = (1u << kPairShift) - 1;
constexpr uint32_t kPairMask = (1u << kPairBits) - 1;
static_assert(kTileBytes <= static_cast<int>(kPairOffsetMask), "stage offsets fit below the shift");
constexpr int kMaxDigit = 255;
// The columns a block takes for counts up to `thresholds` (>= 1).
__host__ __device__ inline int tensor_block_cols(int thresholds) {
  return kBlockPairs / thresholds < kMaxBlockCols ? kBlockPairs / thresholds : kMaxBlockCols;
}

// int32 accumulators: a block adds at most 16 x 255 per row and digit, so
// 2^31 / (16 x 255) rows, rounded down to whole chunks, stay exact.
constexpr int64_t kMaxChunksPerSplit =
    (int64_t{1} << 31) / (static_cast<int64_t>(kIndicatorValue) * kMaxDigit) / kChunkRows;
// A half's 64-bit sums over all rows: below 16 x 2^32 = 2^36 per row, so
// at most 2^63 / 2^36 rows.
constexpr int64_t kMaxTensorRows = int64_t{1} << (63 - 36);
static_assert(static_cast<double>(kIndicatorValue) * kHalfScale == 68719476736.0, "16 x 2^32 = 2^36 per row and half");

// ---------------------------------------------------------------------------
// Layouts. Lane (g, t) of a warp (g = lane / 4, t = lane % 4) holds, for the
// m16n8k32 fragments, rows 4t..4t+3 and 16+4t..16+4t+3 of the chunk: in A
// for pairs g and g + 8 of a tile, in B for weighting g.

// Byte of row r (0..31) in a column's 32 chunk bytes: [t][half][i].
__host__ __device__ constexpr int chunk_byte(int r) {
  return ((r % 16) / 4) * 8 + (r / 16) * 4 + r % 4;
}

// Digit bytes of one chunk and group: [pair][weighting g][t][word], with
// word = (digit % 2) * 2 + (row / 16) and pair = digit / 2, so a lane's
// four 16-byte reads hold all eight digits of its rows and the warp's reads
// are contiguous.
__device__ __forceinline__ int digit_byte(int r, int j, int d) {
  return (((d / 2) * kGroupWeightings + j) * 4 + (r % 16) / 4) * 16 + ((d % 2) * 2 + r / 16) * 4 + r % 4;
}

// ---------------------------------------------------------------------------
// Device functions

// p_j: the least power of two at or above the largest weight (1 when every
// weight is 0), so scaling by it is exact.
__device__ __forceinline__ double weight_unit(double w_max) {
  if (!(w_max > 0.0)) return 1.0;
  int e = 0;
  const double f = frexp(w_max, &e);  // w_max = f 2^e, f in [0.5, 1)
  return ldexp(1.0, f == 0.5 ? e - 1 : e);
}

// ---------------------------------------------------------------------------
// Kernels

// One thread per (chunk, column): the column's 32 counts of the chunk.
__global__ void build_chunks(const uint8_t* __restrict__ values, int64_t pitch, int64_t rows,
                             int64_t cols, int64_t chunks, uint8_t* __restrict__ out) {
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= chunks * cols) return;
  const int64_t c = id / cols, v = id % cols;
  uint32_t word[kChunkBytes / 4] = {};
#pragma unroll
  for (int r = 0; r < kChunkRows; ++r) {
    const int64_t b = c * kChunkRows + r;
    const uint32_t x = b < rows ? values[b * pitch + v] : 0u;
    word[chunk_byte(r) / 4] |= x << (8 * (chunk_byte(r) % 4));
  }
  uint4* o = reinterpret_cast<uint4*>(out + id * kChunkBytes);
  o[0] = make_uint4(word[0], word[1], word[2], word[3]);
  o[1] = make_uint4(word[4], word[5], word[6], word[7]);
}

// The weights of one thread of the quantize kernels, thread id of
// (group, chunk c, weighting j, row quarter t): rows 16 h + 4 t + i of chunk
// c as q[h][i] (63-bit fixed point), and where their chunk's digits go.
struct QuarterWeights {
  unsigned long long q[2][4];  // [half][i]
  int t = 0;
  int j = 0;
  uint8_t* base = nullptr;
};
__device__ __forceinline__ QuarterWeights quarter_weights(const double* w, const double* w_max, int64_t rows,
                                                          int64_t k, int64_t chunks, int64_t id, uint8_t* out) {
  QuarterWeights r;
  r.t = static_cast<int>(id % kQuarters);
  r.j = static_cast<int>((id / kQuarters) % kGroupWeightings);
  const int64_t c = (id / (kQuarters * kGroupWeightings)) % chunks;
  const int64_t grp = id / (kQuarters * kGroupWeightings * chunks);
  const int64_t col = grp * kGroupWeightings + r.j;
  const double unit = col < k ? weight_unit(w_max[col]) : 1.0;
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t b = c * kChunkRows + h * (kChunkRows / 2) + kQuarters * r.t + i;
      const double x = (b < rows && col < k) ? w[b * k + col] / unit : 0.0;
      r.q[h][i] = __double2ull_rn(fmin(fmax(x, 0.0), 1.0) * kWeightScale);
    }
  r.base = out + (grp * chunks + c) * kDigitBytes;
  return r;
}

// Digit d of four rows' weights, a byte each.
__device__ __forceinline__ uint32_t digit_word(const unsigned long long (&q)[4], int d) {
  uint32_t v = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>((q[i] >> (8 * d)) & static_cast<unsigned>(kMaxDigit)) << (8 * i);
  return v;
}

// One thread per (group, chunk, weighting, row quarter t): the eight digits
// of the 8 rows of quarter t, as the four words of each digit pair.
__global__ void quantize_weights(const double* __restrict__ w, const double* __restrict__ w_max,
                                 int64_t rows, int64_t k, int64_t chunks, int64_t groups,
                                 uint8_t* __restrict__ out) {
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= groups * chunks * kGroupWeightings * kQuarters) return;
  const QuarterWeights qw = quarter_weights(w, w_max, rows, k, chunks, id, out);
#pragma unroll
  for (int pair = 0; pair < kDigits / 2; ++pair) {
    uint32_t word[4];
#pragma unroll
    for (int dd = 0; dd < 2; ++dd)
#pragma unroll
      for (int h = 0; h < 2; ++h) word[dd * 2 + h] = digit_word(qw.q[h], 2 * pair + dd);
    *reinterpret_cast<uint4*>(qw.base + digit_byte(kQuarters * qw.t, qw.j, 2 * pair)) =
        make_uint4(word[0], word[1], word[2], word[3]);
  }
}

// What both forms of the histogram kernel take from their block (split,
// column group, weighting group): its columns from col0 (block_valid of
// them, `pairs` (column, threshold) pairs), its split's n chunks, and this
// thread's 16 bytes of every stage: for chunk c0 + i, src + i src_step
// (src_bytes 0: bytes past the table's or the block's last column, which
// no pair reads, are not copied).
struct BlockChunks {
  int64_t col0 = 0;
  int64_t grp = 0;
  int64_t sets = 0;  // partial sums' sets: two halves per weighting group
  int pairs = 0;
  int n = 0;         // at most kMaxChunksPerSplit
  const uint8_t* src = nullptr;
  int64_t src_step = 0;
  int src_bytes = 0;
};
__device__ __forceinline__ BlockChunks block_chunks(const uint8_t* chunked, const uint8_t* digits, int64_t chunks,
                                                    int64_t cols, int thresholds, int64_t chunks_per_split, int tid) {
  BlockChunks b;
  const int block_cols = tensor_block_cols(thresholds);
  b.col0 = static_cast<int64_t>(blockIdx.y) * block_cols;
  const int64_t block_valid = cols - b.col0 < block_cols ? cols - b.col0 : block_cols;
  b.pairs = static_cast<int>(block_valid) * thresholds;
  b.grp = blockIdx.z;
  b.sets = static_cast<int64_t>(gridDim.z) * kHalves;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * chunks_per_split;
  const int64_t c1 = chunks < c0 + chunks_per_split ? chunks : c0 + chunks_per_split;
  b.n = c1 > c0 ? static_cast<int>(c1 - c0) : 0;
  if (tid < kTileBytes / kCopyBytes) {
    const int64_t off = static_cast<int64_t>(tid) * kCopyBytes;
    b.src_bytes = off < block_valid * kChunkBytes ? kCopyBytes : 0;
    b.src = chunked + (c0 * cols + b.col0) * kChunkBytes + (b.src_bytes ? off : 0);
    b.src_step = cols * kChunkBytes;
  } else {
    b.src_bytes = kCopyBytes;
    b.src = digits + (b.grp * chunks + c0) * kDigitBytes + (tid * kCopyBytes - kTileBytes);
    b.src_step = kDigitBytes;
  }
  return b;
}

// The codes of a lane's two A rows, pairs pr0 and pr1 (see kPairShift).
__device__ __forceinline__ uint32_t pair_codes(int pr0, int pr1, int pairs, int thresholds, int t) {
  const auto code = [&](int pr) {
    return pr < pairs ? static_cast<uint32_t>((pr / thresholds) * kChunkBytes + t * 8) |
                            (static_cast<uint32_t>(kTensorBins - 1 - pr % thresholds) << kPairShift)
                      : 0u;
  };
  return code(pr0) | (code(pr1) << kPairBits);
}

// A's fragment for those two rows over the chunk staged at `stage`.
__device__ __forceinline__ void pair_indicators(const uint8_t* stage, uint32_t codes, uint32_t (&a)[4]) {
  const uint32_t p0 = codes & kPairMask, p1 = codes >> kPairBits;
  const uint2 x0 = *reinterpret_cast<const uint2*>(stage + (p0 & kPairOffsetMask));
  const uint2 x1 = *reinterpret_cast<const uint2*>(stage + (p1 & kPairOffsetMask));
  const uint32_t b0 = (p0 >> kPairShift) * kEveryByte, b1 = (p1 >> kPairShift) * kEveryByte;
  a[0] = at_least(x0.x, b0);
  a[1] = at_least(x1.x, b1);
  a[2] = at_least(x0.y, b0);
  a[3] = at_least(x1.y, b1);
}

// Where a block writes pair pr's half of weighting j:
// partial[split][set][col][m - 1][j].
__device__ __forceinline__ int64_t partial_index(const BlockChunks& b, int64_t cols, int thresholds, int pr, int half,
                                                 int j) {
  const int64_t set = b.grp * kHalves + half;
  const int64_t col = b.col0 + pr / thresholds;
  return (((static_cast<int64_t>(blockIdx.x) * b.sets + set) * cols + col) * thresholds + pr % thresholds) *
             kGroupWeightings +
         j;
}

// Block (split, column group, weighting group grp): tensor_block_cols(T)
// columns from col0 over its split's chunks, as pairs
// p = T (v - col0) + m - 1; warp wp takes the tiles of pairs
// 16 (2 wp + q) .. + 15, q < 2, with all eight digits of the group's
// weightings (ceil(k / 8) reads of the table for 8 k digit products per
// cell).
// Writes partial[split][2 grp + half][col][m - 1][j] = the half's share of
// 16 2^63 C_j[col][m] / p_j, divided by 2^(32 half), as an integer.
__global__ void __launch_bounds__(kTensorThreads, kTensorBlocksPerSm)
    tensor_cumulative(const uint8_t* __restrict__ chunked, const uint8_t* __restrict__ digits,
                      int64_t chunks, int64_t cols, int thresholds, int64_t chunks_per_split,
                      long long* __restrict__ partial) {
  // Stage s holds the column tile (kTileBytes) and then the digits.
  __shared__ __align__(16) uint8_t stage_buf[kStages][kStageBytes];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpLanes, wp = tid / kWarpLanes;
  const int g = lane / kQuarters, t = lane % kQuarters;
  const BlockChunks bc = block_chunks(chunked, digits, chunks, cols, thresholds, chunks_per_split, tid);
  const int n = bc.n;
  const auto issue = [&](int stage, int i) {
    if (bc.src_bytes > 0) copy16_async(&stage_buf[stage][tid * kCopyBytes], bc.src + i * bc.src_step, bc.src_bytes);
  };
  // Tile q's pair of row h of a lane's A fragment.
  const auto pair_of = [&](int q, int h) {
    return (wp * kTilesPerWarp + q) * kTensorBins + g + h * (kTensorBins / 2);
  };
  int acc[kTilesPerWarp][kDigits][4];
#pragma unroll
  for (int q = 0; q < kTilesPerWarp; ++q)
#pragma unroll
    for (int d = 0; d < kDigits; ++d)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[q][d][e] = 0;
  // The lane's A rows: pairs g and g + 8 of each tile.
  uint32_t code[kTilesPerWarp];
#pragma unroll
  for (int q = 0; q < kTilesPerWarp; ++q) code[q] = pair_codes(pair_of(q, 0), pair_of(q, 1), bc.pairs, thresholds, t);

  // One copy group per chunk; kChunksPerSync chunks between barriers, the
  // stages of the last ones refilled after each barrier.
#pragma unroll
  for (int s = 0; s < kStages - kChunksPerSync; ++s) {
    if (s < n) issue(s, s);
    copy_commit();
  }
  const auto chunk = [&](int s) {
    const uint8_t* dig = &stage_buf[s][kTileBytes];
    uint32_t b[kDigits][2];
#pragma unroll
    for (int pair = 0; pair < kDigits / 2; ++pair) {
      const uint4 w = *reinterpret_cast<const uint4*>(dig + digit_byte(kQuarters * t, g, 2 * pair));
      b[2 * pair][0] = w.x;
      b[2 * pair][1] = w.y;
      b[2 * pair + 1][0] = w.z;
      b[2 * pair + 1][1] = w.w;
    }
#pragma unroll
    for (int q = 0; q < kTilesPerWarp; ++q) {
      uint32_t a[4];
      pair_indicators(stage_buf[s], code[q], a);
#pragma unroll
      for (int d = 0; d < kDigits; ++d) mma_u8(acc[q][d], a, b[d][0], b[d][1]);
    }
  };
  for (int i = 0; i < n; i += kChunksPerSync) {
    copy_wait<kStages - 2 * kChunksPerSync>();
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kChunksPerSync; ++u) {
      const int next = i + kStages - kChunksPerSync + u;
      if (next < n) issue(next % kStages, next);
      copy_commit();
    }
#pragma unroll
    for (int u = 0; u < kChunksPerSync; ++u)
      if (i + u < n) chunk((i + u) % kStages);
  }
  // Lane (g, t) holds pairs g (e = 0, 1) and g + 8 (e = 2, 3) of each
  // tile, for weightings 2t and 2t + 1.
#pragma unroll
  for (int q = 0; q < kTilesPerWarp; ++q) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int pr = pair_of(q, e / 2);
      if (pr >= bc.pairs) continue;
#pragma unroll
      for (int half = 0; half < kHalves; ++half) {
        long long v = 0;
#pragma unroll
        for (int d = kHalfDigits - 1; d >= 0; --d) v = v * 256 + acc[q][half * kHalfDigits + d][e];
        partial[partial_index(bc, cols, thresholds, pr, half, 2 * t + e % 2)] = v;
      }
    }
  }
}

// One thread per (weighting, column, value < bins): the by-value weight
// C[v] - C[v + 1] (C[T + 1] = 0), each half's sums over the splits exact in
// 64 bits; value 0's is left 0.
__global__ void finish_histograms(const long long* __restrict__ partial, const double* __restrict__ w_max,
                                  int64_t splits, int64_t groups, int64_t k, int64_t cols, int bins,
                                  int thresholds, double* __restrict__ hist) {
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= k * cols * bins) return;
  const int v = static_cast<int>(id % bins);
  const int64_t col = (id / bins) % cols, j = id / (bins * cols);
  if (v == 0) {
    hist[id] = 0.0;
    return;
  }
  const int64_t grp = j / kGroupWeightings, jj = j % kGroupWeightings;
  const int64_t sets = groups * kHalves;
  double sum = 0.0;
  for (int half = kHalves - 1; half >= 0; --half) {
    long long at = 0, above = 0;
    for (int64_t s = 0; s < splits; ++s) {
      const long long* p =
          partial + ((s * sets + grp * kHalves + half) * cols + col) * thresholds * kGroupWeightings + jj;
      at += p[(v - 1) * kGroupWeightings];
      if (v < thresholds) above += p[v * kGroupWeightings];
    }
    sum = sum * kHalfScale + static_cast<double>(at - above);
  }
  hist[id] = sum / (static_cast<double>(kIndicatorValue) * kWeightScale) * weight_unit(w_max[j]);
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
