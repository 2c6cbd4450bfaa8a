// loglik_dense.cu: instantiations and launches of the dense-table kernels.
#include <algorithm>

#include "launch_sliced.cuh"
#include "loglik_device.cuh"

namespace dirmn {
namespace cuda {
namespace {

constexpr const char* kDenseWhat = "kernel launch (shared_alpha_dense)";

template <CellType C, int W, class TabT>
BackendResult dense_k(const DenseView& v, const SharedAlphaArgs& a, const LaunchEnv& env) {
  if (a.k_group > 1)
    return launch_sliced(dev::shared_alpha_dense<C, W, TabT, kMaxKGroup>, v, a, sizeof(TabT), env,
                         kDenseWhat);
  return launch_sliced(dev::shared_alpha_dense<C, W, TabT, 1>, v, a, sizeof(TabT), env,
                       kDenseWhat);
}

template <CellType C, int W>
BackendResult dense_cw(bool fast, const DenseView& v, const SharedAlphaArgs& a,
                       const LaunchEnv& env) {
  return fast ? dense_k<C, W, float>(v, a, env) : dense_k<C, W, double>(v, a, env);
}

// Warps of the row-wise kernels: a few waves of one row per warp.
constexpr int kRowwiseBlocksPerSm = 16;

template <CellType C>
BackendResult rowwise_c(const DenseView& v, const RowwiseArgs& a, const LaunchEnv& env) {
  const int64_t want = ceil_div<int64_t>(v.rows, kWarpsPerBlock);
  const int grid =
      static_cast<int>(std::min<int64_t>(want, int64_t{env.sm_count} * kRowwiseBlocksPerSm));
  dev::rowwise_dense<C><<<grid, kBlockThreads, 0, env.stream>>>(v, a);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (rowwise_dense)");
  return {};
}

}  // namespace

BackendResult launch_shared_dense(const TablePlan& plan, bool fast, const DenseView& view,
                                  const SharedAlphaArgs& args, const LaunchEnv& env) {
  switch (plan.cell) {
    case CellType::U8: return dense_cw<CellType::U8, 16>(fast, view, args, env);
    case CellType::U16: return dense_cw<CellType::U16, 8>(fast, view, args, env);
    case CellType::U32: return dense_cw<CellType::U32, 4>(fast, view, args, env);
    case CellType::F64: return dense_cw<CellType::F64, 2>(fast, view, args, env);
    case CellType::F32:
      return plan.vec == 4 ? dense_cw<CellType::F32, 4>(fast, view, args, env)
                           : dense_cw<CellType::F32, 1>(fast, view, args, env);
    case CellType::I32:
      return plan.vec == 4 ? dense_cw<CellType::I32, 4>(fast, view, args, env)
                           : dense_cw<CellType::I32, 1>(fast, view, args, env);
  }
  return {DIRMN_ERROR_INTERNAL, "unknown cell type", 0};
}

BackendResult launch_rowwise_dense(const TablePlan& plan, const DenseView& view,
                                   const RowwiseArgs& args, const LaunchEnv& env) {
  switch (plan.cell) {
    case CellType::U8: return rowwise_c<CellType::U8>(view, args, env);
    case CellType::U16: return rowwise_c<CellType::U16>(view, args, env);
    case CellType::U32: return rowwise_c<CellType::U32>(view, args, env);
    case CellType::F64: return rowwise_c<CellType::F64>(view, args, env);
    case CellType::F32: return rowwise_c<CellType::F32>(view, args, env);
    case CellType::I32: return rowwise_c<CellType::I32>(view, args, env);
  }
  return {DIRMN_ERROR_INTERNAL, "unknown cell type", 0};
}

}  // namespace cuda
}  // namespace dirmn
