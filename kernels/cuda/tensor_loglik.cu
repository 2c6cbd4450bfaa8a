// tensor_loglik.cu: the launches of the log-likelihoods of a dense 8-bit
// table under several parameter vectors on the int8 tensor cores
// (tensor_loglik_kernels.cuh has the method, tensor_loglik_wg.cuh the
// sm_90a form): which tables they serve, their fixed-point tables, and
// whether the code the driver loaded has the MMAs.
#include <cuda_runtime.h>

#include "device_table.cuh"
#include "device/tensor_loglik_kernels.cuh"
#include "device/tensor_loglik_wg.cuh"

namespace dirmn {
namespace cuda {
namespace {

template <int MT>
size_t loglik_smem(int thresholds) {
  return static_cast<size_t>(kLikStages) * (kCountBytes + static_cast<size_t>(thresholds) * MT * kFragBytes);
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
