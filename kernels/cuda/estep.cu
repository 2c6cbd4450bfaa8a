// estep.cu: the launches of a DM mixture's E step on the device (the
// kernels are in device/estep_kernels.cuh).
#include <algorithm>

#include "device/estep_kernels.cuh"
#include "device_table.cuh"

namespace dirmn {
namespace cuda {
namespace {

// The smallest power of two >= k: lanes per row of estep_groups.
inline int lanes_per_row(int64_t k) {
  int p = 1;
  while (p < k) p *= 2;
  return p;
}

}  // namespace

BackendResult launch_estep(const EmDevice& em, const double* log_pi, double* reduced,
                           const LaunchEnv& env) {
  // Partials: em_reduced_columns(k) columns, each in runs of kReduceRows rows.
  const int64_t runs = em_reduce_runs(em.rows);
  const int64_t columns = em_reduced_columns(em.k);
  if (em.k <= kEmGroupMaxK) {
    const unsigned grid = static_cast<unsigned>(runs);
    switch (lanes_per_row(em.k)) {
      case 1: estep_groups<1><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
      case 2: estep_groups<2><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
      case 4: estep_groups<4><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
      case 8: estep_groups<8><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
      case 16: estep_groups<16><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
      default: estep_groups<32><<<grid, kReduceThreads, 0, env.stream>>>(em, log_pi); break;
    }
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step)");
  } else {
    if (em.L == nullptr) return {DIRMN_ERROR_INTERNAL, "E step of unfinished panels for this k", 0};
    const int grid = stride_grid(em.rows, env.sm_count);
    estep_rows<<<grid, kBlockThreads, 0, env.stream>>>(em.L, em.rows, static_cast<int>(em.k), log_pi,
                                                        em.row_w, em.z_old, em.z, em.w, em.aux);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step)");
    reduce_columns<<<dim3(static_cast<unsigned>(runs), static_cast<unsigned>(columns)), kReduceThreads, 0,
                     env.stream>>>(em.z, em.w, em.aux, em.rows, em.k, em.part);
  }
  finish_columns<<<static_cast<unsigned>(columns), kReduceThreads, 0, env.stream>>>(em.part, em.k, runs,
                                                                                  reduced);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step sums)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
