// loglik_dense_launch.cuh: instantiation and launch of the dense shared-alpha
// kernels for one table entry type; included once per entry type so the two
// sets compile in parallel (loglik_dense.cu, loglik_dense_fast.cu).
#pragma once

#include "launch_sliced.cuh"
#include "device/loglik_dense_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace detail {

constexpr const char* kDenseWhat = "kernel launch (shared_alpha_dense)";

// One vector, one panel, and too few rows for shared_alpha_dense to give
// every multiprocessor a row chunk: shared_alpha_dense_small.
inline bool use_small(const DenseView& v, const SharedAlphaArgs& a, int lanes, const LaunchEnv& env) {
  const int64_t chunk_rows = static_cast<int64_t>(kBlockThreads / lanes) * kRowsPerGroup;
  return a.k_total == 1 && a.panels == 1 && a.row_adjust != nullptr &&
         v.rows < chunk_rows * env.sm_count;
}

template <CellType C, int W, int LANES, class TabT>
BackendResult dense_small(const DenseView& v, const SharedAlphaArgs& a, const LaunchEnv& env) {
  const auto kernel = a.all_fit ? dev::shared_alpha_dense_small<C, W, LANES, TabT, true>
                                : dev::shared_alpha_dense_small<C, W, LANES, TabT, false>;
  const size_t smem = static_cast<size_t>(a.cut) * static_cast<size_t>(a.panel_cols) * sizeof(TabT);
  int per_sm = 0;
  DIRMN_TRY(kernel_occupancy(reinterpret_cast<const void*>(kernel), smem, env.device, &per_sm));
  const int64_t grid = ceil_div<int64_t>(v.rows, kBlockThreads / LANES);
  kernel<<<static_cast<unsigned>(std::max<int64_t>(grid, 1)), kBlockThreads, smem, env.stream>>>(v, a);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (shared_alpha_dense_small)");
  return {};
}

template <CellType C, int W, int LANES, class TabT>
BackendResult dense_lk(const DenseView& v, SharedAlphaArgs a, const LaunchEnv& env) {
  if (use_small(v, a, LANES, env)) return dense_small<C, W, LANES, TabT>(v, a, env);
  a.rows_per_group = a.k_group > 1 ? kMultiKRowsPerGroup : kRowsPerGroup;
  constexpr int kHalf = kVectorBytes / static_cast<int>(sizeof(TabT));
  constexpr int kFull = kMaxBundleBytes / static_cast<int>(sizeof(TabT));
  if (a.k_group == kFull)
    return launch_sliced(dev::shared_alpha_dense<C, W, LANES, TabT, kFull>, v, a, sizeof(TabT), env,
                         kDenseWhat);
  if (a.k_group == kHalf)
    return launch_sliced(dev::shared_alpha_dense<C, W, LANES, TabT, kHalf>, v, a, sizeof(TabT), env,
                         kDenseWhat);
  if (a.k_group != 1) return {DIRMN_ERROR_INTERNAL, "dense parameter-vector group is not a bundle", 0};
  return launch_sliced(dev::shared_alpha_dense<C, W, LANES, TabT, 1>, v, a, sizeof(TabT), env,
                       kDenseWhat);
}

template <CellType C, int W, class TabT>
BackendResult dense_w(const DenseView& v, const SharedAlphaArgs& a, const LaunchEnv& env) {
  return a.lanes_per_row == 16 ? dense_lk<C, W, 16, TabT>(v, a, env)
                               : dense_lk<C, W, 32, TabT>(v, a, env);
}

template <class TabT>
BackendResult launch_dense_tab(const TablePlan& plan, const DenseView& view,
                               const SharedAlphaArgs& args, const LaunchEnv& env) {
  switch (plan.cell) {
    case CellType::U8: return dense_w<CellType::U8, 16, TabT>(view, args, env);
    case CellType::U16: return dense_w<CellType::U16, 8, TabT>(view, args, env);
    case CellType::U32: return dense_w<CellType::U32, 4, TabT>(view, args, env);
    case CellType::F64: return dense_w<CellType::F64, 2, TabT>(view, args, env);
    case CellType::F32:
      return plan.vec == 4 ? dense_w<CellType::F32, 4, TabT>(view, args, env)
                           : dense_w<CellType::F32, 1, TabT>(view, args, env);
    case CellType::I32:
      return plan.vec == 4 ? dense_w<CellType::I32, 4, TabT>(view, args, env)
                           : dense_w<CellType::I32, 1, TabT>(view, args, env);
  }
  return {DIRMN_ERROR_INTERNAL, "unknown cell type", 0};
}

BackendResult launch_dense_float_tables(const TablePlan& plan, const DenseView& view,
                                        const SharedAlphaArgs& args, const LaunchEnv& env);

}  // namespace detail
}  // namespace cuda
}  // namespace dirmn
