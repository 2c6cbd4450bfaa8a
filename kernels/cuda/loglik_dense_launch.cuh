// loglik_dense_launch.cuh: instantiation and launch of the dense shared-alpha
// kernels for one table entry type; included once per entry type so the two
// sets compile in parallel (loglik_dense.cu, loglik_dense_fast.cu).
#pragma once

#include "launch_sliced.cuh"
#include "loglik_device.cuh"

namespace dirmn {
namespace cuda {
namespace detail {

constexpr const char* kDenseWhat = "kernel launch (shared_alpha_dense)";

template <CellType C, int W, int LANES, class TabT>
BackendResult dense_lk(const DenseView& v, SharedAlphaArgs a, const LaunchEnv& env) {
  a.rows_per_group = a.k_group > 1 ? kMultiKRowsPerGroup : kRowsPerGroup;
  if (a.k_group > 1)
    return launch_sliced(dev::shared_alpha_dense<C, W, LANES, TabT, kMaxKGroup>, v, a, sizeof(TabT),
                         env, kDenseWhat);
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
