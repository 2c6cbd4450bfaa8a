// mixture.cu: the E step of a DM mixture on the device. From the rows x k
// full log-likelihoods L and the log mixing weights, per row b:
//   x_j = L_bj + log pi_j,  m = max_j x_j,  e_j = exp(x_j - m),  s = sum_j e_j,
//   z_bj = e_j / s,  lse_b = m + log s,  w_bj = r_b z_bj,
// exactly as the host E step forms them, so both backends give the same
// responsibilities. Sums over rows are made in a fixed order (one block per
// column, a fixed thread-to-row map and a fixed tree), so they repeat
// bit for bit from run to run.
#include <algorithm>
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

// The E step's column reductions, deterministic. Column c of the 3k + 2 is
//   c < k: z_bc;  k <= c < 2k: w_b(c-k);  2k: r_b lse_b;  2k + 1: the
//   largest change;  c >= 2k + 2: w_b(c-2k-2), a maximum (the largest
//   weights the tensor-core M step scales by).
// Block (q, c) reduces column c over the q-th run of kReduceRows rows in a
// fixed order into part[c * runs + q]; finish_columns then adds the runs in
// order.
constexpr int64_t kReduceRows = kEmReduceRows;

struct EmColumn {
  const double* a;
  int64_t stride;
  bool take_max;
};

__device__ __forceinline__ EmColumn em_column(int64_t c, int64_t k, const double* z, const double* w,
                                              const double* aux) {
  if (c < k) return {z + c, k, false};
  if (c < 2 * k) return {w + (c - k), k, false};
  if (c < 2 * k + 2) return {aux + (c - 2 * k), kEmAux, c == 2 * k + 1};
  return {w + (c - 2 * k - 2), k, true};
}

__global__ void reduce_columns(const double* __restrict__ z, const double* __restrict__ w,
                               const double* __restrict__ aux, int64_t rows, int64_t k,
                               double* __restrict__ part) {
  __shared__ double buf[kReduceThreads];
  const EmColumn col = em_column(blockIdx.y, k, z, w, aux);
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kReduceRows;
  const int64_t r1 = min(rows, r0 + kReduceRows);
  double v = 0.0;
  for (int64_t b = r0 + threadIdx.x; b < r1; b += blockDim.x) {
    const double x = col.a[b * col.stride];
    v = col.take_max ? fmax(v, x) : v + x;
  }
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const double o = buf[threadIdx.x + half];
      buf[threadIdx.x] = col.take_max ? fmax(buf[threadIdx.x], o) : buf[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) part[static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x] = buf[0];
}

__global__ void finish_columns(const double* __restrict__ part, int64_t k, int64_t runs,
                               double* __restrict__ out) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= em_reduced_columns(k)) return;
  const bool take_max = c == 2 * k + 1 || c >= 2 * k + 2;
  double v = 0.0;
  for (int64_t q = 0; q < runs; ++q) {
    const double x = part[c * runs + q];
    v = take_max ? fmax(v, x) : v + x;
  }
  out[c] = v;
}

}  // namespace

BackendResult launch_estep(const EmDevice& em, const double* L, const double* log_pi,
                           double* reduced, const LaunchEnv& env) {
  const int grid = stride_grid(em.rows, env.sm_count);
  estep_rows<<<grid, kBlockThreads, 0, env.stream>>>(L, em.rows, static_cast<int>(em.k), log_pi,
                                                      em.row_w, em.z_old, em.z, em.w, em.aux);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step)");
  // Partials: em_reduced_columns(k) columns, each in runs of kReduceRows rows.
  const int64_t runs = std::max<int64_t>(1, ceil_div<int64_t>(em.rows, kReduceRows));
  const int64_t columns = em_reduced_columns(em.k);
  reduce_columns<<<dim3(static_cast<unsigned>(runs), static_cast<unsigned>(columns)), kReduceThreads, 0,
                   env.stream>>>(em.z, em.w, em.aux, em.rows, em.k, em.part);
  finish_columns<<<static_cast<unsigned>(ceil_div<int64_t>(columns, kReduceThreads)), kReduceThreads, 0,
                   env.stream>>>(em.part, em.k, runs, reduced);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (E step sums)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
