// ingest_dense.cu: a device table from a caller's dense device array,
// validated on the device, then referenced in place (float32 and int32
// arrays of integer counts whose rows are contiguous) or copied into the
// compact form, dense or CSR.
#include <algorithm>
#include <cstring>

#include "device_table.cuh"
#include "ingest_common.cuh"
#include "device/ingest_dense_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace ingest;

template <CellType C>
void launch_row_stats_c(const DeviceTable& t, const LaunchEnv& env, int grid) {
  dense_row_stats<C><<<grid, kBlockThreads, 0, env.stream>>>(
      t.values, t.pitch, t.rows, t.cols, t.row_total.get<double>(), t.row_lcoef.get<double>());
}

BackendResult launch_dense_row_stats(const DeviceTable& t, const LaunchEnv& env) {
  const int grid = stride_grid(t.rows * 32, env.sm_count);
  switch (t.cell) {
    case CellType::U8: launch_row_stats_c<CellType::U8>(t, env, grid); break;
    case CellType::U16: launch_row_stats_c<CellType::U16>(t, env, grid); break;
    case CellType::U32: launch_row_stats_c<CellType::U32>(t, env, grid); break;
    case CellType::F64: launch_row_stats_c<CellType::F64>(t, env, grid); break;
    case CellType::F32: launch_row_stats_c<CellType::F32>(t, env, grid); break;
    case CellType::I32: launch_row_stats_c<CellType::I32>(t, env, grid); break;
  }
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_row_stats)");
  return {};
}

// A compact CSR table of value type `vt` from a compact row-major dense
// table of cell type C (row nonzeros, a scan for the row pointers, then an
// ordered fill).
template <CellType C>
BackendResult dense_to_csr_c(DeviceTable* t, const void* dense, int64_t pitch, ValueType vt,
                             const LaunchEnv& env) {
  const int grid = stride_grid(t->rows * 32, env.sm_count);
  DeviceBuffer row_nnz(t->device), temp(t->device);
  DIRMN_TRY(row_nnz.reserve(static_cast<size_t>(t->rows) * sizeof(int64_t), "cudaMalloc (row nonzeros)"));
  DIRMN_TRY(t->row_ptr.reserve(static_cast<size_t>(t->rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
  dense_row_nnz<C><<<grid, kBlockThreads, 0, env.stream>>>(dense, pitch, t->rows, t->cols,
                                                            row_nnz.get<int64_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_row_nnz)");
  int64_t* rp = t->row_ptr.get<int64_t>();
  DIRMN_TRY(scan_row_ptr(row_nnz.get<int64_t>(), t->rows, rp, temp, env));
  DIRMN_TRY(reserve_csr(t, t->nnz, static_cast<int>(value_bytes(vt)), env));
  void* co = t->col_idx.get();
  void* vo = t->values_buf.get();
#define DIRMN_D2C(D, I) \
  dense_to_csr<C, D, I><<<grid, kBlockThreads, 0, env.stream>>>(dense, pitch, t->rows, t->cols, rp, co, vo)
  switch (vt) {
    case ValueType::U8: if (t->col16) DIRMN_D2C(uint8_t, uint16_t); else DIRMN_D2C(uint8_t, uint32_t); break;
    case ValueType::U16: if (t->col16) DIRMN_D2C(uint16_t, uint16_t); else DIRMN_D2C(uint16_t, uint32_t); break;
    case ValueType::U32: if (t->col16) DIRMN_D2C(uint32_t, uint16_t); else DIRMN_D2C(uint32_t, uint32_t); break;
    case ValueType::F64: if (t->col16) DIRMN_D2C(double, uint16_t); else DIRMN_D2C(double, uint32_t); break;
  }
#undef DIRMN_D2C
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_to_csr)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  t->values = t->values_buf.get();
  return {};
}

BackendResult dense_to_csr_any(DeviceTable* t, const void* dense, int64_t pitch, CellType c,
                               ValueType vt, const LaunchEnv& env) {
  switch (c) {
    case CellType::U8: return dense_to_csr_c<CellType::U8>(t, dense, pitch, vt, env);
    case CellType::U16: return dense_to_csr_c<CellType::U16>(t, dense, pitch, vt, env);
    case CellType::U32: return dense_to_csr_c<CellType::U32>(t, dense, pitch, vt, env);
    case CellType::F64: return dense_to_csr_c<CellType::F64>(t, dense, pitch, vt, env);
    default: break;
  }
  return {DIRMN_ERROR_INTERNAL, "dense_to_csr: not a compact cell type", 0};
}

template <class S>
BackendResult ingest_strided(const DenseInput& in, DeviceTable* t, CountsProblem* problem,
                             const LaunchEnv& env) {
  StridedSource<S> src;
  src.data = static_cast<const S*>(in.data);
  src.rows = in.rows;
  src.cols = in.cols;
  src.rs = in.row_stride;
  src.cs = in.col_stride;
  // The walk the host path would take: rows innermost when rows are the
  // contiguous dimension.
  src.col_major = (in.rows > 1 && in.cols > 1) ? in.row_stride < in.col_stride : in.cols == 1;
  const int64_t tiles = ceil_div<int64_t>(src.col_major ? in.rows : in.cols, kTileMinor) *
                        ceil_div<int64_t>(src.col_major ? in.cols : in.rows, kTileMajor);
  const int grid = static_cast<int>(std::min<int64_t>(tiles, int64_t{env.sm_count} * kStrideBlocksPerSm));

  DeviceBuffer sum_buf(t->device);
  DIRMN_TRY(reset_summary(sum_buf, env));
  validate_strided<S><<<grid, kBlockThreads, 0, env.stream>>>(src, in.real_valued, sum_buf.get<ScanSummary>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_strided)");
  ScanSummary s{};
  DIRMN_TRY(to_host(&s, sum_buf.get(), sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t key = static_cast<int64_t>(s.problem);
    const int64_t i = src.col_major ? key % in.rows : key / in.cols;
    const int64_t j = src.col_major ? key / in.rows : key % in.cols;
    S x{};
    DIRMN_TRY(to_host(&x, src.data + i * src.rs + j * src.cs, sizeof x, env));
    problem->kind = CountsProblem::kBadCount;
    problem->row = i;
    problem->col = j;
    problem->value = static_cast<double>(x);
    problem->issue = static_cast<CountIssue>(count_issue(static_cast<double>(x), in.real_valued));
    return {DIRMN_ERROR_INVALID_COUNTS, "", 0};
  }
  take_summary(s, in.real_valued, t);

  DIRMN_TRY(t->row_total.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row coefficients)"));

  // The header promises an in-place reference only for integer counts;
  // real-valued fractions are copied (as doubles).
  const bool in_place = (in.dtype == DIRMN_FLOAT32 || in.dtype == DIRMN_INT32) &&
                        (in.cols == 1 || in.col_stride == 1) &&
                        in.storage != DIRMN_STORAGE_SPARSE && t->integral;
  if (in_place) {
    t->wrapped = true;
    t->sparse = false;
    t->cell = in.dtype == DIRMN_FLOAT32 ? CellType::F32 : CellType::I32;
    t->values = in.data;
    t->pitch = in.rows == 1 ? in.cols : in.row_stride;
    // 16-byte reads need aligned rows that end on a vector boundary (the
    // last vector of the last row must not run past the caller's array).
    const bool aligned = reinterpret_cast<uintptr_t>(in.data) % kVectorBytes == 0 &&
                         (t->pitch * 4) % kVectorBytes == 0 && (in.cols * 4) % kVectorBytes == 0;
    t->vec = aligned ? kVectorBytes / 4 : 1;
    DIRMN_TRY(launch_dense_row_stats(*t, env));
  } else {
    const ValueType vt = choose_vtype(t->max_count, t->integral, in.real_valued);
    const bool sparse = choose_sparse(in.storage, in.rows, in.cols, t->nnz, vt);
    const int vb = static_cast<int>(value_bytes(vt));
    const int64_t pitch = compact_pitch(in.cols, vb);
    DeviceBuffer dense(t->device);
    DIRMN_TRY(dense.reserve(static_cast<size_t>(in.rows) * static_cast<size_t>(pitch) * vb,
                            "cudaMalloc (counts values)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(dense.get(), 0, static_cast<size_t>(in.rows) * pitch * vb, env.stream),
                   "cudaMemsetAsync (counts values)");
    switch (vt) {
      case ValueType::U8: encode_strided<S, uint8_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint8_t>(), pitch); break;
      case ValueType::U16: encode_strided<S, uint16_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint16_t>(), pitch); break;
      case ValueType::U32: encode_strided<S, uint32_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint32_t>(), pitch); break;
      case ValueType::F64: encode_strided<S, double><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<double>(), pitch); break;
    }
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (encode_strided)");
    t->vtype = vt;
    t->cell = cell_of(vt);
    t->values = dense.get();
    t->pitch = pitch;
    t->vec = kVectorBytes / vb;
    DIRMN_TRY(launch_dense_row_stats(*t, env));
    if (sparse) {
      t->sparse = true;
      t->col16 = in.cols <= 65536;
      DIRMN_TRY(dense_to_csr_any(t, dense.get(), pitch, t->cell, vt, env));
    } else {
      t->sparse = false;
      t->values_buf = std::move(dense);
      t->values = t->values_buf.get();
    }
  }
  DIRMN_TRY(total_and_max(t, env));
  return build_panels(t, env);
}

}  // namespace

BackendResult ingest_device_dense(const DenseInput& in, DeviceTable* t,
                                  CountsProblem* problem, const LaunchEnv& env) {
  t->rows = in.rows;
  t->cols = in.cols;
  const bool copies = !((in.dtype == DIRMN_FLOAT32 || in.dtype == DIRMN_INT32) &&
                        (in.cols == 1 || in.col_stride == 1) && in.storage != DIRMN_STORAGE_SPARSE);
  if (copies && in.storage == DIRMN_STORAGE_DENSE) {
    // A dense copy takes at least a byte per cell: where that exceeds the
    // device, say so before spending a pass over the caller's array.
    size_t free_b = 0, total_b = 0;
    DIRMN_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (static_cast<double>(in.rows) * static_cast<double>(in.cols) > static_cast<double>(total_b))
      return {DIRMN_ERROR_OUT_OF_MEMORY, "a dense compact copy of the table exceeds the device memory", 0};
  }
  switch (in.dtype) {
    case DIRMN_INT32: return ingest_strided<int32_t>(in, t, problem, env);
    case DIRMN_FLOAT32: return ingest_strided<float>(in, t, problem, env);
    case DIRMN_FLOAT64: return ingest_strided<double>(in, t, problem, env);
    default: break;
  }
  return {DIRMN_ERROR_NOT_SUPPORTED, "int64 device arrays", 0};
}

}  // namespace cuda
}  // namespace dirmn
