// mixture.cu: the E step of a DM mixture on the device. From the rows x k
// full log-likelihoods L and the log mixing weights, per row b:
//   x_j = L_bj + log pi_j,  m = max_j x_j,  e_j = exp(x_j - m),  s = sum_j e_j,
//   z_bj = e_j / s,  lse_b = m + log s,  w_bj = r_b z_bj,
// exactly as the host E step forms them, so both backends give the same
// responsibilities. Sums over rows are made in a fixed order (one block per
// column, a fixed thread-to-row map and a fixed tree), so they repeat
// bit for bit from run to run.
#include <cmath>

#include "device_table.cuh"

namespace dirmn {
namespace cuda {
namespace {

constexpr int kReduceThreads = kBlockThreads;

__global__ void estep_rows(const double* __restrict__ L, int64_t rows, int k,
                           const double* __restrict__ log_pi, const double* __restrict__ row_w,
                           const double* __restrict__ z_old, double* __restrict__ z,
                           double* __restrict__ w, double* __restrict__ aux) {
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < rows;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double* l = L + b * k;
    double m = -INFINITY;
    for (int j = 0; j < k; ++j) m = fmax(m, l[j] + log_pi[j]);
    double s = 0.0;
    for (int j = 0; j < k; ++j) s += exp(l[j] + log_pi[j] - m);
    const double r = row_w != nullptr ? row_w[b] : 1.0;
    double change = 0.0;
    for (int j = 0; j < k; ++j) {
      const double zj = exp(l[j] + log_pi[j] - m) / s;
      change = fmax(change, fabs(zj - z_old[b * k + j]));
      z[b * k + j] = zj;
      w[b * k + j] = r * zj;
    }
    const double lse = m + log(s);
    aux[b * kEmAux + 0] = r * lse;
    aux[b * kEmAux + 1] = change;
    aux[b * kEmAux + 2] = lse;
  }
}

// out[c] = sum (or max) over rows of a[b * stride + col0 + c], one block per c.
__global__ void reduce_columns(const double* __restrict__ a, int64_t rows, int64_t stride,
                               int64_t col0, bool take_max, double* __restrict__ out) {
  __shared__ double part[kReduceThreads];
  const int64_t c = col0 + blockIdx.x;
  double v = 0.0;
  for (int64_t b = threadIdx.x; b < rows; b += blockDim.x) {
    const double x = a[b * stride + c];
    v = take_max ? fmax(v, x) : v + x;
  }
  part[threadIdx.x] = v;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const double o = part[threadIdx.x + half];
      part[threadIdx.x] = take_max ? fmax(part[threadIdx.x], o) : part[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

}  // namespace

BackendResult launch_estep(const EmDevice& em, const double* L, const double* log_pi,
                           double* reduced, const LaunchEnv& env) {
  const int grid = stride_grid(em.rows, env.sm_count);
  estep_rows<<<grid, kBlockThreads, 0, env.stream>>>(L, em.rows, static_cast<int>(em.k), log_pi,
                                                      em.row_w, em.z_old, em.z, em.w, em.aux);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step)");
  const unsigned k = static_cast<unsigned>(em.k);
  reduce_columns<<<k, kReduceThreads, 0, env.stream>>>(em.z, em.rows, em.k, 0, false, reduced);
  reduce_columns<<<k, kReduceThreads, 0, env.stream>>>(em.w, em.rows, em.k, 0, false, reduced + k);
  reduce_columns<<<1, kReduceThreads, 0, env.stream>>>(em.aux, em.rows, kEmAux, 0, false, reduced + 2 * k);
  reduce_columns<<<1, kReduceThreads, 0, env.stream>>>(em.aux, em.rows, kEmAux, 1, true, reduced + 2 * k + 1);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step sums)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
