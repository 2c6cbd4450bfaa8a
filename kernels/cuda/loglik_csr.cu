// loglik_csr.cu: instantiations and launches of the CSR-table kernels.
#include <algorithm>

#include "launch_sliced.cuh"
#include "device/loglik_csr_kernels.cuh"
#include "device/loglik_rowwise_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace {

constexpr const char* kCsrWhat = "kernel launch (shared_alpha_csr)";

template <CellType C, bool kCol16, class TabT, bool kL2>
BackendResult csr_l(const CsrView& v, const SharedAlphaArgs& a, const LaunchEnv& env) {
  if (a.k_group > 1)
    return launch_sliced(dev::shared_alpha_csr<C, kCol16, TabT, kMaxKGroup, kL2>, v, a, sizeof(TabT),
                         env, kCsrWhat);
  return launch_sliced(dev::shared_alpha_csr<C, kCol16, TabT, 1, kL2>, v, a, sizeof(TabT), env,
                       kCsrWhat);
}

template <CellType C, bool kCol16, class TabT>
BackendResult csr_k(const CsrView& v, SharedAlphaArgs a, const LaunchEnv& env) {
  a.rows_per_group = kCsrRowsPerGroup;
  return a.l2_tables ? csr_l<C, kCol16, TabT, true>(v, a, env) : csr_l<C, kCol16, TabT, false>(v, a, env);
}

template <CellType C>
BackendResult csr_c(bool col16, bool fast, const CsrView& v, const SharedAlphaArgs& a,
                    const LaunchEnv& env) {
  if (col16) return fast ? csr_k<C, true, float>(v, a, env) : csr_k<C, true, double>(v, a, env);
  return fast ? csr_k<C, false, float>(v, a, env) : csr_k<C, false, double>(v, a, env);
}

template <CellType C>
BackendResult rowwise_c(bool col16, const CsrView& v, const RowwiseArgs& a, const LaunchEnv& env) {
  const int64_t want = ceil_div<int64_t>(v.rows, kWarpsPerBlock);
  const int grid =
      static_cast<int>(std::min<int64_t>(want, int64_t{env.sm_count} * kRowwiseBlocksPerSm));
  if (col16)
    dev::rowwise_csr<C, true><<<grid, kBlockThreads, 0, env.stream>>>(v, a);
  else
    dev::rowwise_csr<C, false><<<grid, kBlockThreads, 0, env.stream>>>(v, a);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (rowwise_csr)");
  return {};
}

}  // namespace

BackendResult launch_shared_csr(const TablePlan& plan, bool fast, const CsrView& view,
                                const SharedAlphaArgs& args, const LaunchEnv& env) {
  switch (plan.cell) {
    case CellType::U8: return csr_c<CellType::U8>(plan.col16, fast, view, args, env);
    case CellType::U16: return csr_c<CellType::U16>(plan.col16, fast, view, args, env);
    case CellType::U32: return csr_c<CellType::U32>(plan.col16, fast, view, args, env);
    case CellType::F64: return csr_c<CellType::F64>(plan.col16, fast, view, args, env);
    default: break;
  }
  return {DIRMN_ERROR_INTERNAL, "CSR tables hold compact cells only", 0};
}

BackendResult launch_rowwise_csr(const TablePlan& plan, const CsrView& view,
                                 const RowwiseArgs& args, const LaunchEnv& env) {
  switch (plan.cell) {
    case CellType::U8: return rowwise_c<CellType::U8>(plan.col16, view, args, env);
    case CellType::U16: return rowwise_c<CellType::U16>(plan.col16, view, args, env);
    case CellType::U32: return rowwise_c<CellType::U32>(plan.col16, view, args, env);
    case CellType::F64: return rowwise_c<CellType::F64>(plan.col16, view, args, env);
    default: break;
  }
  return {DIRMN_ERROR_INTERNAL, "CSR tables hold compact cells only", 0};
}

}  // namespace cuda
}  // namespace dirmn
