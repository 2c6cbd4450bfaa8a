// ingest_common.cu: the host steps every way of making a device table
// shares (ingest_common.cuh declares them).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>

#include "device_table.cuh"
#include "ingest_common.cuh"
#include "device/ingest_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace ingest {

BackendResult to_host(void* dst, const void* src, size_t bytes, const LaunchEnv& env) {
  DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, env.stream),
                 "cudaMemcpyAsync (device to host)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

BackendResult reset_summary(DeviceBuffer& buf, const LaunchEnv& env) {
  DIRMN_TRY(buf.reserve(sizeof(ScanSummary), "cudaMalloc (validation summary)"));
  ScanSummary init{};
  init.problem = kNoProblem;
  DIRMN_CUDA_TRY(cudaMemcpyAsync(buf.get(), &init, sizeof init, cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (validation summary)");
  // The source is a stack variable: wait until the copy has read it.
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

void take_summary(const ScanSummary& s, bool real_valued, DeviceTable* t) {
  t->nnz = static_cast<int64_t>(s.nnz);
  double mx = 0.0;
  std::memcpy(&mx, &s.max_bits, sizeof mx);
  t->max_count = mx;
  t->integral = s.non_integral == 0;
  t->real_valued = real_valued;
}

CellType cell_of(ValueType vt) {
  switch (vt) {
    case ValueType::U8: return CellType::U8;
    case ValueType::U16: return CellType::U16;
    case ValueType::U32: return CellType::U32;
    case ValueType::F64: return CellType::F64;
  }
  return CellType::F64;
}

int64_t compact_pitch(int64_t cols, int bytes) {
  return round_up<int64_t>(cols * bytes, kRowAlignBytes) / bytes;
}

BackendResult reserve_csr(DeviceTable* t, int64_t nnz, int vb, const LaunchEnv& env) {
  const size_t cb = t->col16 ? 2 : 4;
  const size_t n = static_cast<size_t>(nnz);
  const size_t slack = static_cast<size_t>(kCsrSlackEntries);
  DIRMN_TRY(t->col_idx.reserve((n + slack) * cb, "cudaMalloc (column indices)"));
  DIRMN_TRY(t->values_buf.reserve((n + slack) * vb, "cudaMalloc (counts values)"));
  DIRMN_CUDA_TRY(cudaMemsetAsync(t->col_idx.get<char>() + n * cb, 0, slack * cb, env.stream),
                 "cudaMemsetAsync (column slack)");
  DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get<char>() + n * vb, 0, slack * vb, env.stream),
                 "cudaMemsetAsync (value slack)");
  return {};
}

BackendResult scan_row_ptr(int64_t* row_nnz, int64_t rows, int64_t* rp, DeviceBuffer& temp,
                           const LaunchEnv& env) {
  DIRMN_CUDA_TRY(cudaMemsetAsync(rp, 0, sizeof(int64_t), env.stream), "cudaMemsetAsync");
  size_t bytes = 0;
  DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, row_nnz, rp + 1, rows, env.stream),
                 "cub::DeviceScan::InclusiveSum");
  DIRMN_TRY(temp.reserve(bytes, "cudaMalloc (scan workspace)"));
  DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.get(), bytes, row_nnz, rp + 1, rows, env.stream),
                 "cub::DeviceScan::InclusiveSum");
  return {};
}

BackendResult total_and_max(DeviceTable* t, const LaunchEnv& env) {
  DeviceBuffer out(t->device), temp(t->device);
  DIRMN_TRY(out.reserve(2 * sizeof(double), "cudaMalloc (row total reduction)"));
  double* d_out = out.get<double>();
  const double* in = t->row_total.get<double>();
  size_t sum_bytes = 0, max_bytes = 0;
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, in, d_out, t->rows, env.stream),
                 "cub::DeviceReduce::Sum");
  DIRMN_CUDA_TRY(cub::DeviceReduce::Max(nullptr, max_bytes, in, d_out + 1, t->rows, env.stream),
                 "cub::DeviceReduce::Max");
  DIRMN_TRY(temp.reserve(std::max(sum_bytes, max_bytes), "cudaMalloc (reduction workspace)"));
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(temp.get(), sum_bytes, in, d_out, t->rows, env.stream),
                 "cub::DeviceReduce::Sum");
  DIRMN_CUDA_TRY(cub::DeviceReduce::Max(temp.get(), max_bytes, in, d_out + 1, t->rows, env.stream),
                 "cub::DeviceReduce::Max");
  double h[2] = {0.0, 0.0};
  DIRMN_TRY(to_host(h, d_out, sizeof h, env));
  t->total = h[0];
  t->max_row_total = h[1];
  return {};
}

BackendResult build_panels(DeviceTable* t, const LaunchEnv& env) {
  t->plan = make_plan(*t);
  if (!t->sparse || t->plan.panels <= 1) return {};
  const size_t n = static_cast<size_t>(t->rows) * static_cast<size_t>(t->plan.panels + 1);
  DIRMN_TRY(t->panel_ptr.reserve(n * sizeof(uint32_t), "cudaMalloc (panel offsets)"));
  const int grid = stride_grid(t->rows * 32, env.sm_count);
  if (t->col16)
    build_panel_ptr<true><<<grid, kBlockThreads, 0, env.stream>>>(
        t->row_ptr.get<int64_t>(), t->col_idx.get(), t->rows, t->plan.panel_cols,
        t->plan.panels, t->panel_ptr.get<uint32_t>());
  else
    build_panel_ptr<false><<<grid, kBlockThreads, 0, env.stream>>>(
        t->row_ptr.get<int64_t>(), t->col_idx.get(), t->rows, t->plan.panel_cols,
        t->plan.panels, t->panel_ptr.get<uint32_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (build_panel_ptr)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

}  // namespace ingest
}  // namespace cuda
}  // namespace dirmn
