// tensor_histogram_wg.cuh: the sm_90a form of the tensor-core histogram
// kernels (tensor_histogram_kernels.cuh has the method), through warpgroup
// MMAs (wgmma.cuh). Device code only, for tensor_histogram.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensor_histogram_kernels.cuh"
#include "tensor_mma.cuh"
#include "../tuning.cuh"
#include "wgmma.cuh"

namespace dirmn {
namespace cuda {
namespace {

// sm_90a: warpgroup MMAs. The block's pairs are those of tensor_cumulative;
// warpgroup wg takes kWgMBlocks M blocks of 64, warp w of it pairs
// 16 w + g and 16 w + g + 8 of each.

constexpr int kWgMBlocks = kTilesPerWarp;
constexpr int kWgN = kGroupWeightings * kDigits;  // B's columns: 8 d + j
static_assert(kWgN * wgmma::kK == kDigitBytes, "a chunk's digits are one B tile");
static_assert(kTensorWarps / wgmma::kGroupWarps * kWgMBlocks * wgmma::kM == kBlockPairs,
              "the warpgroups' M blocks cover the block's pairs");
constexpr int kStaticSharedLimit = 48 * 1024;
static_assert(kWgStages * kStageBytes <= kStaticSharedLimit, "the stages are static shared memory");
static_assert(kWgStages >= 2 * kWgChunksPerSync, "stages for the chunks in use and those in flight");
// Sets of A registers taken in turn: one is written while the MMAs of the
// others (at most kWgASets - 1 groups in flight) may still read theirs.
constexpr int kWgASets = 3;
static_assert(kWgASets == 3, "the step names a0, a1, a2");

// As quantize_weights, in the layout of B: digit d of weighting j at row
// r of the chunk is B(k = r, n = 8 d + j).
__global__ void quantize_weights_wg(const double* __restrict__ w, const double* __restrict__ w_max,
                                    int64_t rows, int64_t k, int64_t chunks, int64_t groups,
                                    uint8_t* __restrict__ out) {
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= groups * chunks * kGroupWeightings * kQuarters) return;
  const QuarterWeights qw = quarter_weights(w, w_max, rows, k, chunks, id, out);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int d = 0; d < kDigits; ++d)
      *reinterpret_cast<uint32_t*>(qw.base + wgmma::core_offset(h * (kChunkRows / 2) + kQuarters * qw.t,
                                                                d * kGroupWeightings + qw.j, kWgN)) =
          digit_word(qw.q[h], d);
  }
}

// As tensor_cumulative (same grid, pairs and output), through wgmma.
__global__ void __launch_bounds__(kTensorThreads, kTensorBlocksPerSm)
    tensor_cumulative_wg(const uint8_t* __restrict__ chunked, const uint8_t* __restrict__ digits,
                         int64_t chunks, int64_t cols, int thresholds, int64_t chunks_per_split,
                         long long* __restrict__ partial) {
  constexpr int MB = kWgMBlocks;
  __shared__ __align__(16) uint8_t stage_buf[kWgStages][kStageBytes];
  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / wgmma::kGroupThreads;
  const int lane = tid % kWarpLanes, w = (tid / kWarpLanes) % wgmma::kGroupWarps;
  const int g = lane / kQuarters, t = lane % kQuarters;
  const BlockChunks bc = block_chunks(chunked, digits, chunks, cols, thresholds, chunks_per_split, tid);
  const int n = bc.n;
  // Pair of M block b, half h: p = ((wg MB + b) 4 + w) 16 + g + 8 h.
  const auto pair_of = [&](int b, int h) {
    return ((wg * MB + b) * wgmma::kGroupWarps + w) * wgmma::kWarpRows + g + h * (wgmma::kWarpRows / 2);
  };
  const auto issue = [&](int stage, int i) {
    if (bc.src_bytes > 0) copy16_async(&stage_buf[stage][tid * kCopyBytes], bc.src + i * bc.src_step, bc.src_bytes);
  };
  int acc[MB][kWgN / 2];
#pragma unroll
  for (int b = 0; b < MB; ++b) {
#pragma unroll
    for (int e = 0; e < kWgN / 2; ++e) acc[b][e] = 0;
    wgmma::fence_operands(acc[b]);
  }
  uint32_t code[MB];
#pragma unroll
  for (int b = 0; b < MB; ++b) code[b] = pair_codes(pair_of(b, 0), pair_of(b, 1), bc.pairs, thresholds, t);

#pragma unroll
  for (int s = 0; s < kWgStages - kWgChunksPerSync; ++s) {
    if (s < n) issue(s, s);
    copy_commit();
  }
  uint32_t a0[MB][4], a1[MB][4], a2[MB][4];
  const auto chunk = [&](uint32_t (&a)[MB][4], int s) {
#pragma unroll
    for (int b = 0; b < MB; ++b) pair_indicators(stage_buf[s], code[b], a[b]);
    wgmma::wgmma_fence();
    const uint64_t desc =
        wgmma::smem_desc(&stage_buf[s][kTileBytes], wgmma::leading_offset(kWgN), wgmma::kStrideOffset);
#pragma unroll
    for (int b = 0; b < MB; ++b) wgmma::wgmma_u8(acc[b], a[b], desc);
    wgmma::wgmma_commit();
  };
  for (int i = 0; i < n; i += kWgChunksPerSync) {
    copy_wait<kWgStages - 2 * kWgChunksPerSync>();
    wgmma::fence_async_smem();
    __syncthreads();
    // These stages held the previous step's chunks, whose MMAs are complete.
#pragma unroll
    for (int u = 0; u < kWgChunksPerSync; ++u) {
      const int next = i + kWgStages - kWgChunksPerSync + u;
      if (next < n) issue(next % kWgStages, next);
      copy_commit();
    }
#pragma unroll
    for (int u = 0; u < kWgChunksPerSync; ++u) {
      if (i + u < n) {
        wgmma::wgmma_wait<kWgASets - 1>();
        if (u % kWgASets == 0)
          chunk(a0, (i + u) % kWgStages);
        else if (u % kWgASets == 1)
          chunk(a1, (i + u) % kWgStages);
        else
          chunk(a2, (i + u) % kWgStages);
      }
    }
    wgmma::wgmma_wait<0>();
  }
#pragma unroll
  for (int b = 0; b < MB; ++b) wgmma::fence_operands(acc[b]);
  // acc[b][4 d + 2 h + e]: digit d of weighting 2t + e, pair pair_of(b, h).
#pragma unroll
  for (int b = 0; b < MB; ++b)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int pr = pair_of(b, h);
      if (pr >= bc.pairs) continue;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
#pragma unroll
        for (int half = 0; half < kHalves; ++half) {
          long long v = 0;
#pragma unroll
          for (int d = kHalfDigits - 1; d >= 0; --d) v = v * 256 + acc[b][4 * (half * kHalfDigits + d) + 2 * h + e];
          partial[partial_index(bc, cols, thresholds, pr, half, 2 * t + e)] = v;
        }
      }
    }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
