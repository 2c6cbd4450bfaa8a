// tensor_histogram.cu: the launches of the M step's weighted count
// histograms on the int8 tensor cores (tensor_histogram_kernels.cuh has the
// method, tensor_histogram_wg.cuh the sm_90a form): which tables they
// serve, the chunk-major copy of a table, and how a launch splits its rows.
#include <cuda_runtime.h>

#include <algorithm>

#include "device_table.cuh"
#include "device/tensor_histogram_kernels.cuh"
#include "device/tensor_histogram_wg.cuh"

namespace dirmn {
namespace cuda {
namespace {

// Chunks per split for `chunks` chunks and `per_split_blocks` blocks per
// split. Every block costs the same, so a launch takes as long as its waves
// (kTensorBlocksPerSm blocks per SM) times a block's chunks: the split that
// minimises that, counting a block's fixed work (its pipeline's fill and
// its writes) as kBlockOverheadChunks; a fixed split count can leave much
// of the only wave idle. Never more chunks per split than the int32
// accumulators hold exactly, and more splits only while their partial sums
// (split_bytes each) stay within kMaxPartialBytes.
int64_t tensor_chunks_per_split(int64_t chunks, int64_t per_split_blocks, int64_t split_bytes, int sm_count) {
  const int64_t wave = std::max<int64_t>(1, static_cast<int64_t>(sm_count) * kTensorBlocksPerSm);
  const int64_t lo = std::max<int64_t>(1, ceil_div<int64_t>(chunks, kMaxChunksPerSplit));
  const int64_t room = std::max<int64_t>(1, kMaxPartialBytes / std::max<int64_t>(split_bytes, 1));
  const int64_t hi = std::max(
      lo, std::min({chunks, room, kMaxWavesTried * ceil_div<int64_t>(wave, per_split_blocks)}));
  int64_t best = ceil_div<int64_t>(chunks, lo);
  double best_cost = -1.0;
  for (int64_t s = lo; s <= hi; ++s) {
    const int64_t per = ceil_div<int64_t>(chunks, s);
    const int64_t blocks = ceil_div<int64_t>(chunks, per) * per_split_blocks;
    const double cost = static_cast<double>(ceil_div<int64_t>(blocks, wave)) *
                        static_cast<double>(per + kBlockOverheadChunks);
    if (best_cost < 0.0 || cost < best_cost) {
      best_cost = cost;
      best = per;
    }
  }
  return best;
}

}  // namespace

bool tensor_histograms_supported(const DeviceTable& t, int64_t k, const LaunchEnv& env) {
  // The code the device runs must have the MMA: on a device without sm_90
  // code the driver compiles the portable PTX target, in which the kernel
  // is empty (env.tensor_mma is false).
  return env.tensor_mma && !t.sparse && !t.wrapped && t.cell == CellType::U8 &&
         t.integral && !t.real_valued && t.max_count < kTensorBins && t.rows > 0 &&
         t.rows <= kMaxTensorRows && t.cols > 0 &&
         ceil_div<int64_t>(t.cols, tensor_block_cols(tensor_thresholds(t))) <= kMaxGridY &&
         ceil_div<int64_t>(k, kGroupWeightings) <= kMaxGridY;
}

BackendResult build_chunk_table(const DeviceTable& t, const LaunchEnv& env) {
  const int64_t chunks = ceil_div<int64_t>(t.rows, kChunkRows);
  DIRMN_TRY(t.chunked.reserve(static_cast<size_t>(chunks * t.cols) * kChunkBytes,
                              "cudaMalloc (chunk-major table)"));
  const int64_t items = chunks * t.cols;
  build_chunks<<<static_cast<unsigned>(ceil_div<int64_t>(items, kBlockThreads)), kBlockThreads, 0,
                 env.stream>>>(static_cast<const uint8_t*>(t.values), t.pitch, t.rows, t.cols, chunks,
                               t.chunked.get<uint8_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (chunk-major table)");
  return {};
}

BackendResult launch_tensor_histograms(const DeviceTable& t, const double* weights, const double* w_max,
                                       int64_t k, int bins, double* hist, DeviceBuffer& scratch,
                                       const LaunchEnv& env) {
  // finish_histograms reads T = bins - 1 cumulative entries per column.
  if (bins > kTensorBins || t.chunked.get() == nullptr || (bins > 1 && bins != tensor_thresholds(t) + 1))
    return {DIRMN_ERROR_INTERNAL, "tensor-core histograms of a table they do not serve", 0};
  if (k <= 0 || bins <= 0) return {};
  const int64_t chunks = ceil_div<int64_t>(t.rows, kChunkRows);
  const int64_t groups = ceil_div<int64_t>(k, kGroupWeightings);
  const int thresholds = tensor_thresholds(t);
  const int64_t col_groups = ceil_div<int64_t>(t.cols, tensor_block_cols(thresholds));
  if (groups > kMaxGridY)
    return {DIRMN_ERROR_NOT_SUPPORTED, "tensor-core histograms of so many weightings", 0};
  const int64_t split_bytes =
      groups * kHalves * t.cols * thresholds * kGroupWeightings * static_cast<int64_t>(sizeof(long long));
  const int64_t per_split = tensor_chunks_per_split(chunks, col_groups * groups, split_bytes, env.sm_count);
  const int64_t splits = ceil_div<int64_t>(chunks, per_split);
  const size_t digit_bytes = static_cast<size_t>(groups * chunks) * kDigitBytes;
  const size_t partial_bytes = static_cast<size_t>(splits * groups * kHalves * t.cols) * thresholds *
                               kGroupWeightings * sizeof(long long);
  DIRMN_TRY(scratch.reserve(digit_bytes + partial_bytes, "cudaMalloc (tensor histogram workspace)"));
  uint8_t* digits = scratch.get<uint8_t>();
  auto* partial = reinterpret_cast<long long*>(digits + digit_bytes);
  const int64_t quarters = groups * chunks * kGroupWeightings * kQuarters;
  const unsigned quarter_grid = static_cast<unsigned>(ceil_div<int64_t>(quarters, kBlockThreads));
  if (env.wgmma)
    quantize_weights_wg<<<quarter_grid, kBlockThreads, 0, env.stream>>>(weights, w_max, t.rows, k, chunks, groups,
                                                                          digits);
  else
    quantize_weights<<<quarter_grid, kBlockThreads, 0, env.stream>>>(weights, w_max, t.rows, k, chunks, groups,
                                                                       digits);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (weight digits)");
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(col_groups), static_cast<unsigned>(groups));
  if (env.wgmma)
    tensor_cumulative_wg<<<grid, kTensorThreads, 0, env.stream>>>(t.chunked.get<uint8_t>(), digits, chunks, t.cols,
                                                                  thresholds, per_split, partial);
  else
    tensor_cumulative<<<grid, kTensorThreads, 0, env.stream>>>(t.chunked.get<uint8_t>(), digits, chunks, t.cols,
                                                               thresholds, per_split, partial);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (tensor-core histograms)");
  const int64_t entries = k * t.cols * bins;
  finish_histograms<<<static_cast<unsigned>(ceil_div<int64_t>(entries, kBlockThreads)), kBlockThreads, 0,
                      env.stream>>>(partial, w_max, splits, groups, k, t.cols, bins, thresholds, hist);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (histogram sums)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
