// loglik_dense_fast.cu: dense shared-alpha kernels with float tables (the
// fast precision mode).
#include "loglik_dense_launch.cuh"

namespace dirmn {
namespace cuda {
namespace detail {

BackendResult launch_dense_float_tables(const TablePlan& plan, const DenseView& view,
                                        const SharedAlphaArgs& args, const LaunchEnv& env) {
  return launch_dense_tab<float>(plan, view, args, env);
}

}  // namespace detail
}  // namespace cuda
}  // namespace dirmn
