// histogram.cu: weighted count histograms of a device table -- per column
// and value, hist[v * bins + n] = sum_b w_b [n_bv == n], and of the row
// totals -- the sufficient statistics of every shared-alpha sum and fit
// (kernels/table/histogram.hpp), so one pass over the table is all a fit reads.
// Column histograms cover 8-bit tables: their values index the bins
// directly. The unweighted passes and the private-counter path repeat bit
// for bit (no floating-point atomics, fixed-order reductions); the weighted
// passes over CSR rows and over shared tiles add with double atomics in the
// order the rows arrive, so two of them agree to rounding.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <new>

#include "device_table.cuh"
#include "device/histogram_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace {

int bits_for(double max_value) {
  int bits = 1;
  while (bits < 32 && static_cast<double>(uint64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

// Threads of one private-counter lane group for a table `cols` wide, each
// counting c columns: as many whole warps as the columns need, at most a
// block. A tile spans c times as many columns.
int private_group_threads(int64_t cols, int c) {
  const int64_t vecs = ceil_div<int64_t>(cols, c);
  return static_cast<int>(std::min<int64_t>(kHistThreads, round_up<int64_t>(vecs, kWarp)));
}

// Columns of one shared-histogram tile of the atomic path: integer counters
// take half the bytes of weighted ones, so a tile spans twice the columns.
int64_t atomic_tile_cols(bool weighted, int bins) {
  const int64_t entries = weighted ? kTileEntries : 2 * kTileEntries;
  return std::max<int64_t>(1, entries / bins);
}

template <class Acc, int C, bool kNibbles>
BackendResult private_histograms_c(const DeviceTable& t, const double* weights, int64_t k, int bins,
                                   double* hist, DeviceBuffer& partial, const LaunchEnv& env) {
  const int group = private_group_threads(t.cols, C);
  const int64_t tile_cols = static_cast<int64_t>(C) * group;
  const int64_t tiles = ceil_div<int64_t>(t.cols, tile_cols);
  if (tiles > kMaxGridY) return {DIRMN_ERROR_NOT_SUPPORTED, "histogram of so wide a table", 0};
  const int groups = kHistThreads / group;
  const size_t smem = static_cast<size_t>(C) * bins * kHistThreads * sizeof(Acc);
  const auto kernel = column_histogram_private_u8<Acc, C, kNibbles>;
  int per_sm = 0;
  DIRMN_TRY(kernel_occupancy(reinterpret_cast<const void*>(kernel), smem, env.device, &per_sm));
  // One wave of blocks over all tiles.
  const int64_t gx = std::max<int64_t>(
      1, std::min<int64_t>(ceil_div<int64_t>(t.rows, groups),
                           ceil_div<int64_t>(static_cast<int64_t>(env.sm_count) * per_sm, tiles)));
  const int64_t entries = tile_cols * bins;
  const int64_t slices = ceil_div<int64_t>(gx, kPartialsPerThread);
  const size_t part_n = static_cast<size_t>(tiles * gx * entries);
  const size_t mid_n = static_cast<size_t>(slices * tiles * entries);
  DIRMN_TRY(partial.reserve((part_n + mid_n) * sizeof(double), "cudaMalloc (histogram partial sums)"));
  double* part = partial.get<double>();
  double* mid = part + part_n;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(tiles));
  const auto* vals = static_cast<const uint8_t*>(t.values);
  const int64_t limit = t.cols * bins;
  const int grid1 = stride_grid(slices * tiles * entries, env.sm_count);
  const int grid2 = stride_grid(tiles * entries, env.sm_count);
  for (int64_t j = 0; j < k; ++j) {
    kernel<<<grid, kHistThreads, smem, env.stream>>>(vals, t.pitch, t.rows, t.cols,
                                                     weights != nullptr ? weights + j : nullptr, k,
                                                     bins, group, part);
    DIRMN_CUDA_TRY(cudaGetLastError(), "column histogram kernel launch");
    sum_partials<<<grid1, kHistThreads, 0, env.stream>>>(part, tiles, gx, entries, slices, mid);
    sum_slices<<<grid2, kHistThreads, 0, env.stream>>>(mid, tiles * entries, slices, limit,
                                                      hist + j * t.cols * bins);
    DIRMN_CUDA_TRY(cudaGetLastError(), "histogram reduction kernel launch");
  }
  return {};
}

bool private_fits(bool weighted, int bins) {
  return weighted
             ? static_cast<size_t>(kPrivColsWeights) * bins * kHistThreads * sizeof(double) <= kPrivSharedBytes
             : static_cast<size_t>(kPrivColsCounts) * bins * kHistThreads * sizeof(unsigned int) <= kPrivSharedBytes;
}

BackendResult private_histograms(const DeviceTable& t, const double* weights, int64_t k, int bins,
                                 double* hist, DeviceBuffer& partial, const LaunchEnv& env) {
  if (weights != nullptr)
    return private_histograms_c<double, kPrivColsWeights, false>(t, weights, k, bins, hist, partial, env);
  if (bins <= kNibbleBins)
    return private_histograms_c<unsigned int, kPrivColsCounts, true>(t, nullptr, k, bins, hist, partial, env);
  return private_histograms_c<unsigned int, kPrivColsCounts, false>(t, nullptr, k, bins, hist, partial, env);
}

}  // namespace

bool column_histogram_supported(const DeviceTable& t) {
  return t.cell == CellType::U8 && !t.real_valued && t.max_count < 256.0;
}

bool column_histograms_fit_grid(const DeviceTable& t, bool weighted, int bins) {
  if (t.sparse) return true;  // CSR grids cover rows, not columns
  const int c = weighted ? kPrivColsWeights : kPrivColsCounts;
  const int64_t tile_cols = private_fits(weighted, bins)
                                ? static_cast<int64_t>(c) * private_group_threads(t.cols, c)
                                : atomic_tile_cols(weighted, bins);
  return ceil_div<int64_t>(t.cols, tile_cols) <= kMaxGridY;
}

BackendResult launch_column_histograms(const DeviceTable& t, const double* weights, int64_t k,
                                       int bins, double* hist, DeviceBuffer& partial,
                                       const LaunchEnv& env) {
  // The private-counter path writes every entry; the others add to zeros.
  if (!t.sparse && t.rows > 0 && t.nnz > 0 && private_fits(weights != nullptr, bins))
    return private_histograms(t, weights, k, bins, hist, partial, env);
  DIRMN_CUDA_TRY(cudaMemsetAsync(hist, 0, static_cast<size_t>(k * t.cols * bins) * sizeof(double),
                                 env.stream),
                 "cudaMemsetAsync (histogram)");
  if (t.rows == 0 || t.nnz == 0) return {};
  const int64_t blocks = static_cast<int64_t>(env.sm_count) * kTileBlocksPerSm;
  const auto* vals = static_cast<const uint8_t*>(t.values);
  for (int64_t j = 0; j < k; ++j) {
    double* h = hist + j * t.cols * bins;
    const double* w = weights != nullptr ? weights + j : nullptr;
    if (t.sparse) {
      const int64_t per_block = kHistThreads / kWarp;
      const unsigned grid =
          static_cast<unsigned>(std::min<int64_t>(blocks, ceil_div<int64_t>(t.rows, per_block)));
      if (t.col16)
        column_histogram_csr_u8<uint16_t><<<grid, kHistThreads, 0, env.stream>>>(
            t.row_ptr.get<int64_t>(), t.col_idx.get<uint16_t>(), vals, t.rows, w, k, bins, h);
      else
        column_histogram_csr_u8<uint32_t><<<grid, kHistThreads, 0, env.stream>>>(
            t.row_ptr.get<int64_t>(), t.col_idx.get<uint32_t>(), vals, t.rows, w, k, bins, h);
    } else {
      const int64_t tile_cols = atomic_tile_cols(w != nullptr, bins);
      const int64_t tiles = ceil_div<int64_t>(t.cols, tile_cols);
      if (tiles > kMaxGridY) return {DIRMN_ERROR_NOT_SUPPORTED, "histogram of so wide a table", 0};
      const int64_t gx = std::max<int64_t>(1, std::min<int64_t>(t.rows, blocks / tiles + 1));
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(tiles));
      const int64_t tile_entries = std::min(tile_cols, t.cols) * bins;
      if (w != nullptr)
        column_histogram_tile_u8<double>
            <<<grid, kHistThreads, static_cast<size_t>(tile_entries) * sizeof(double), env.stream>>>(
                vals, t.pitch, t.rows, t.cols, w, k, bins, tile_cols, h);
      else
        column_histogram_tile_u8<unsigned int>
            <<<grid, kHistThreads, static_cast<size_t>(tile_entries) * sizeof(unsigned int),
               env.stream>>>(vals, t.pitch, t.rows, t.cols, nullptr, 1, bins, tile_cols, h);
    }
    DIRMN_CUDA_TRY(cudaGetLastError(), "column histogram kernel launch");
  }
  return {};
}

bool totals_index_supported(const DeviceTable& t) {
  return t.integral && !t.real_valued && t.max_row_total < 4294967296.0 && t.rows < (int64_t{1} << 32);
}

// Sorts the rows by total once (radix sort on 32-bit keys), run-length
// encodes the sorted totals into distinct values and their row counts, and
// keeps the unweighted statistics on the host.
BackendResult build_totals_index(const DeviceTable& t, TotalsIndex* ix, const LaunchEnv& env) {
  const int64_t rows = t.rows;
  const size_t n = static_cast<size_t>(std::max<int64_t>(rows, 1));
  DeviceBuffer keys(t.device), keys_sorted(t.device), index(t.device), unique(t.device),
      counts(t.device), runs(t.device), temp(t.device);
  DIRMN_TRY(keys.reserve(n * 4, "cudaMalloc (row-total keys)"));
  DIRMN_TRY(keys_sorted.reserve(n * 4, "cudaMalloc (row-total keys)"));
  DIRMN_TRY(index.reserve(n * 4, "cudaMalloc (row order)"));
  DIRMN_TRY(ix->order.reserve(n * 4, "cudaMalloc (row order)"));
  DIRMN_TRY(unique.reserve(n * 4, "cudaMalloc (distinct row totals)"));
  DIRMN_TRY(counts.reserve((n + 1) * 4, "cudaMalloc (row-total counts)"));
  // Zeroed: the scan below reads one count past the last run.
  DIRMN_CUDA_TRY(cudaMemsetAsync(counts.get(), 0, (n + 1) * 4, env.stream),
                 "cudaMemsetAsync (row-total counts)");
  DIRMN_TRY(runs.reserve(sizeof(int64_t), "cudaMalloc (row-total runs)"));
  DIRMN_TRY(ix->offsets.reserve((n + 1) * sizeof(int64_t), "cudaMalloc (row-total offsets)"));
  const int grid = stride_grid(rows, env.sm_count);
  totals_keys<<<grid, kHistThreads, 0, env.stream>>>(t.row_total.get<double>(), rows,
                                                     keys.get<uint32_t>(), index.get<uint32_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (row-total keys)");
  const int bits = bits_for(t.max_row_total);
  size_t sort_bytes = 0, rle_bytes = 0, scan_bytes = 0, sum_bytes = 0;
  DIRMN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.get<uint32_t>(),
                                                 keys_sorted.get<uint32_t>(), index.get<uint32_t>(),
                                                 ix->order.get<uint32_t>(), rows, 0, bits, env.stream),
                 "cub::DeviceRadixSort::SortPairs");
  DIRMN_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.get<uint32_t>(),
                                                    unique.get<uint32_t>(), counts.get<uint32_t>(),
                                                    runs.get<int64_t>(), rows, env.stream),
                 "cub::DeviceRunLengthEncode::Encode");
  DIRMN_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts.get<uint32_t>(),
                                               ix->offsets.get<int64_t>(), rows + 1, env.stream),
                 "cub::DeviceScan::ExclusiveSum");
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, t.row_lcoef.get<double>(),
                                        runs.get<int64_t>(), rows, env.stream),
                 "cub::DeviceReduce::Sum");
  DIRMN_TRY(temp.reserve(std::max({sort_bytes, rle_bytes, scan_bytes, sum_bytes}),
                         "cudaMalloc (row-total workspace)"));
  DIRMN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.get(), sort_bytes, keys.get<uint32_t>(),
                                                 keys_sorted.get<uint32_t>(), index.get<uint32_t>(),
                                                 ix->order.get<uint32_t>(), rows, 0, bits, env.stream),
                 "cub::DeviceRadixSort::SortPairs");
  DIRMN_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.get(), rle_bytes, keys_sorted.get<uint32_t>(),
                                                    unique.get<uint32_t>(), counts.get<uint32_t>(),
                                                    runs.get<int64_t>(), rows, env.stream),
                 "cub::DeviceRunLengthEncode::Encode");
  int64_t n_runs = 0;
  DIRMN_CUDA_TRY(cudaMemcpyAsync(&n_runs, runs.get(), sizeof n_runs, cudaMemcpyDeviceToHost, env.stream),
                 "cudaMemcpyAsync (row-total runs)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  DIRMN_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.get(), scan_bytes, counts.get<uint32_t>(),
                                               ix->offsets.get<int64_t>(), n_runs + 1, env.stream),
                 "cub::DeviceScan::ExclusiveSum");
  DeviceBuffer lsum(t.device);
  DIRMN_TRY(lsum.reserve(sizeof(double), "cudaMalloc (coefficient sum)"));
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(temp.get(), sum_bytes, t.row_lcoef.get<double>(),
                                        lsum.get<double>(), rows, env.stream),
                 "cub::DeviceReduce::Sum");
  std::vector<uint32_t> u, c;
  try {
    u.resize(static_cast<size_t>(n_runs));
    c.resize(static_cast<size_t>(n_runs));
    ix->value.resize(static_cast<size_t>(n_runs));
    ix->count.resize(static_cast<size_t>(n_runs));
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for row-total statistics", 0};
  }
  double lcoef_sum = 0.0;
  if (n_runs > 0) {
    DIRMN_CUDA_TRY(cudaMemcpyAsync(u.data(), unique.get(), u.size() * 4, cudaMemcpyDeviceToHost, env.stream),
                   "cudaMemcpyAsync (distinct row totals)");
    DIRMN_CUDA_TRY(cudaMemcpyAsync(c.data(), counts.get(), c.size() * 4, cudaMemcpyDeviceToHost, env.stream),
                   "cudaMemcpyAsync (row-total counts)");
  }
  DIRMN_CUDA_TRY(cudaMemcpyAsync(&lcoef_sum, lsum.get(), sizeof lcoef_sum, cudaMemcpyDeviceToHost, env.stream),
                 "cudaMemcpyAsync (coefficient sum)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  for (size_t i = 0; i < u.size(); ++i) {
    ix->value[i] = static_cast<double>(u[i]);
    ix->count[i] = static_cast<double>(c[i]);
  }
  ix->lcoef_sum = lcoef_sum;
  // The distinct totals stay on the device, in a buffer of their own size.
  DIRMN_TRY(ix->distinct.reserve(static_cast<size_t>(std::max<int64_t>(n_runs, 1)) * 4,
                                 "cudaMalloc (distinct row totals)"));
  if (n_runs > 0)
    DIRMN_CUDA_TRY(cudaMemcpyAsync(ix->distinct.get(), unique.get(), static_cast<size_t>(n_runs) * 4,
                                   cudaMemcpyDeviceToDevice, env.stream),
                   "cudaMemcpyAsync (distinct row totals)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  ix->runs = n_runs;
  ix->built = true;
  return {};
}

BackendResult launch_total_sums(const DeviceTable& t, const TotalsIndex& ix, const double* weights,
                                int64_t k, double* seg_out, double* lcoef_out, DeviceBuffer& scratch,
                                const LaunchEnv& env) {
  if (k <= 0) return {};
  DIRMN_TRY(scratch.reserve(static_cast<size_t>(std::max<int64_t>(1, k * ix.runs)) * sizeof(double),
                            "cudaMalloc (row-total workspace)"));
  double* lpart = scratch.get<double>();
  if (ix.runs > 0) {
    const int64_t blocks = ceil_div<int64_t>(ix.runs, kRunWarps);
    total_run_sums<<<static_cast<unsigned>(blocks), kHistThreads, 0, env.stream>>>(
        ix.order.get<uint32_t>(), ix.offsets.get<int64_t>(), ix.runs, weights, k,
        t.row_lcoef.get<double>(), seg_out, lpart);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (row-total sums)");
  }
  sum_runs<<<static_cast<unsigned>(k), kHistThreads, 0, env.stream>>>(lpart, ix.runs, lcoef_out);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (row-total sums)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
