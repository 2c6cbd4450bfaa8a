// loglik_dense.cu: dense-table kernels: double tables and row-wise alpha
// (float tables are in loglik_dense_fast.cu).
#include <algorithm>

#include "loglik_dense_launch.cuh"
#include "device/loglik_rowwise_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace {

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
  return fast ? detail::launch_dense_float_tables(plan, view, args, env)
              : detail::launch_dense_tab<double>(plan, view, args, env);
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
