// histogram.cu: responsibility- or row-weighted count histograms of a device
// table, per column and value: hist[v * bins + n] = sum_b w_b [n_bv == n].
// They are the sufficient statistics of every shared-alpha sum and fit
// (kernels/histogram.hpp), so this is the only pass over the table a fit
// makes. 8-bit tables only: their values index the bins directly.
#include "device_table.cuh"

namespace dirmn {
namespace cuda {
namespace {

constexpr int kHistThreads = 256;
// Doubles of one block's shared histogram: 48 KB, the default limit.
constexpr int64_t kHistSharedEntries = 6144;
constexpr int kHistBlocksPerSm = 4;
constexpr int kWarp = 32;

// Dense rows: each block accumulates a column tile of the histogram in
// shared memory over a strided subset of rows, then adds it to the global
// one once, so global atomics scale with blocks, not cells. Unweighted
// tables count in 32-bit integers (native shared-memory atomics); weighted
// ones add doubles.
template <class Acc>
__global__ void column_histogram_dense_u8(const uint8_t* __restrict__ values, int64_t pitch,
                                          int64_t rows, int64_t cols,
                                          const double* __restrict__ weights, int bins,
                                          int64_t tile_cols, double* __restrict__ hist) {
  extern __shared__ __align__(8) unsigned char tile_bytes[];
  Acc* tile = reinterpret_cast<Acc*>(tile_bytes);
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * tile_cols;
  const int64_t width = min(tile_cols, cols - c0);
  for (int64_t i = threadIdx.x; i < width * bins; i += blockDim.x) tile[i] = Acc(0);
  __syncthreads();
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Acc w = weights != nullptr ? static_cast<Acc>(weights[r]) : Acc(1);
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
// to the global histogram.
template <class Col>
__global__ void column_histogram_csr_u8(const int64_t* __restrict__ row_ptr,
                                        const Col* __restrict__ col,
                                        const uint8_t* __restrict__ values, int64_t rows,
                                        const double* __restrict__ weights, int bins,
                                        double* __restrict__ hist) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
       r < rows; r += warps) {
    const double w = weights != nullptr ? weights[r] : 1.0;
    if (w == 0.0) continue;
    for (int64_t i = row_ptr[r] + lane; i < row_ptr[r + 1]; i += kWarp)
      atomicAdd(&hist[static_cast<int64_t>(col[i]) * bins + values[i]], w);
  }
}

}  // namespace

bool column_histogram_supported(const DeviceTable& t) {
  return t.cell == CellType::U8 && !t.real_valued && t.max_count < 256.0;
}

BackendResult launch_column_histogram(const DeviceTable& t, const double* weights, int bins,
                                      double* hist, const LaunchEnv& env) {
  DIRMN_CUDA_TRY(cudaMemsetAsync(hist, 0, static_cast<size_t>(t.cols * bins) * sizeof(double),
                                 env.stream),
                 "cudaMemsetAsync (histogram)");
  if (t.rows == 0 || t.nnz == 0) return {};
  const int64_t blocks = static_cast<int64_t>(env.sm_count) * kHistBlocksPerSm;
  if (t.sparse) {
    const int64_t per_block = kHistThreads / kWarp;
    const unsigned grid =
        static_cast<unsigned>(std::min<int64_t>(blocks, (t.rows + per_block - 1) / per_block));
    const auto* vals = static_cast<const uint8_t*>(t.values);
    if (t.col16)
      column_histogram_csr_u8<uint16_t><<<grid, kHistThreads, 0, env.stream>>>(
          t.row_ptr.get<int64_t>(), t.col_idx.get<uint16_t>(), vals, t.rows, weights, bins, hist);
    else
      column_histogram_csr_u8<uint32_t><<<grid, kHistThreads, 0, env.stream>>>(
          t.row_ptr.get<int64_t>(), t.col_idx.get<uint32_t>(), vals, t.rows, weights, bins, hist);
  } else {
    // Integer counters take half the bytes, so a tile spans twice the columns.
    const int64_t entries = weights != nullptr ? kHistSharedEntries : 2 * kHistSharedEntries;
    const int64_t tile_cols = std::max<int64_t>(1, entries / bins);
    const int64_t tiles = (t.cols + tile_cols - 1) / tile_cols;
    if (tiles > kMaxGridY) return {DIRMN_ERROR_NOT_SUPPORTED, "histogram of so wide a table", 0};
    const int64_t gx = std::max<int64_t>(1, std::min<int64_t>(t.rows, blocks / tiles + 1));
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(tiles));
    const int64_t tile_entries = std::min(tile_cols, t.cols) * bins;
    const auto* vals = static_cast<const uint8_t*>(t.values);
    if (weights != nullptr)
      column_histogram_dense_u8<double>
          <<<grid, kHistThreads, static_cast<size_t>(tile_entries) * sizeof(double), env.stream>>>(
              vals, t.pitch, t.rows, t.cols, weights, bins, tile_cols, hist);
    else
      column_histogram_dense_u8<unsigned int>
          <<<grid, kHistThreads, static_cast<size_t>(tile_entries) * sizeof(unsigned int),
             env.stream>>>(vals, t.pitch, t.rows, t.cols, weights, bins, tile_cols, hist);
  }
  DIRMN_CUDA_TRY(cudaGetLastError(), "column histogram kernel launch");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
