// mstep.cu: the launch of a DM mixture's M-step fits on the device (the
// kernel is in device/mstep_kernels.cuh).
#include "device/mstep_kernels.cuh"
#include "device_table.cuh"

namespace dirmn {
namespace cuda {

BackendResult launch_em_fit(const EmFitArgs& args, const LaunchEnv& env) {
  if (args.k <= 0) return {};
  em_fit_kernel<<<static_cast<unsigned>(args.k), kFitThreads, 0, env.stream>>>(args);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (M-step fits)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
