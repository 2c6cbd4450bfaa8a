// ingest_csr.cu: a device table from a caller's device CSR arrays: the
// pointers, indices and counts validated on the device (the first problem
// in the order the host path reports it), rows sorted where their columns
// are not, then stored compact, CSR or dense.
#include <cub/device/device_segmented_sort.cuh>

#include <cstring>
#include <limits>

#include "device_table.cuh"
#include "ingest_common.cuh"
#include "device/ingest_csr_kernels.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace ingest;

// Reads ptr[i] of a caller's pointer array (error reporting only).
BackendResult read_index(dirmn_index_type type, const void* p, int64_t i, int64_t* out,
                         const LaunchEnv& env) {
  if (type == DIRMN_INDEX_INT32) {
    int32_t v = 0;
    DIRMN_TRY(to_host(&v, static_cast<const int32_t*>(p) + i, sizeof v, env));
    *out = v;
  } else {
    DIRMN_TRY(to_host(out, static_cast<const int64_t*>(p) + i, sizeof *out, env));
  }
  return {};
}

BackendResult read_value(dirmn_dtype type, const void* p, int64_t i, double* out, const LaunchEnv& env) {
  switch (type) {
    case DIRMN_INT32: { int32_t v = 0; DIRMN_TRY(to_host(&v, static_cast<const int32_t*>(p) + i, sizeof v, env)); *out = v; break; }
    case DIRMN_FLOAT32: { float v = 0; DIRMN_TRY(to_host(&v, static_cast<const float*>(p) + i, sizeof v, env)); *out = v; break; }
    default: DIRMN_TRY(to_host(out, static_cast<const double*>(p) + i, sizeof *out, env)); break;
  }
  return {};
}

// The row holding entry e: the last row whose ptr is <= e (ptr validated).
BackendResult row_of_entry(const SparseInput& in, int64_t e, int64_t* row, const LaunchEnv& env) {
  int64_t lo = 0, hi = in.rows;  // ptr[lo] <= e < ptr[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    int64_t p = 0;
    DIRMN_TRY(read_index(in.index_type, in.ptr, mid, &p, env));
    if (p <= e) lo = mid; else hi = mid;
  }
  *row = lo;
  return {};
}

template <class P, class I, class S>
BackendResult ingest_csr_typed(const SparseInput& in, DeviceTable* t, CountsProblem* problem,
                               const LaunchEnv& env) {
  const P* ptr = static_cast<const P*>(in.ptr);
  DeviceBuffer sum_buf(t->device);
  DIRMN_TRY(reset_summary(sum_buf, env));
  ScanSummary* d_sum = sum_buf.get<ScanSummary>();
  validate_ptr<P><<<stride_grid(in.rows + 1, env.sm_count), kBlockThreads, 0, env.stream>>>(ptr, in.rows, in.nnz, d_sum);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_ptr)");
  ScanSummary s{};
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t k = static_cast<int64_t>(s.problem);
    problem->kind = CountsProblem::kBadPointer;
    problem->entry = k == in.rows + 1 ? in.rows : k;
    int64_t v = 0, prev = 0;
    DIRMN_TRY(read_index(in.index_type, in.ptr, problem->entry, &v, env));
    if (k >= 1 && k <= in.rows) DIRMN_TRY(read_index(in.index_type, in.ptr, k - 1, &prev, env));
    problem->index_value = v;
    problem->index_prev = prev;
    problem->pointer = k == 0 ? kPointerStart : k == in.rows + 1 ? kPointerEnd : kPointerOrder;
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }

  const size_t nnz = static_cast<size_t>(in.nnz);
  DeviceBuffer keys(t->device), counts(t->device), keys2(t->device), counts2(t->device),
      begin(t->device), temp(t->device);
  DIRMN_TRY(keys.reserve(nnz * sizeof(uint32_t), "cudaMalloc (column indices)"));
  DIRMN_TRY(counts.reserve(nnz * sizeof(double), "cudaMalloc (counts)"));
  DIRMN_TRY(begin.reserve(static_cast<size_t>(in.rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
  int64_t* rp_in = begin.get<int64_t>();
  widen_ptr<P><<<stride_grid(in.rows + 1, env.sm_count), kBlockThreads, 0, env.stream>>>(ptr, in.rows + 1, rp_in);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (widen_ptr)");
  const int row_grid = stride_grid(in.rows * 32, env.sm_count);
  if (in.nnz > 0) {
    validate_entries<P, I, S><<<row_grid, kBlockThreads, 0, env.stream>>>(
        ptr, static_cast<const I*>(in.indices), static_cast<const S*>(in.values), in.rows, in.cols,
        in.real_valued, keys.get<uint32_t>(), counts.get<double>(), d_sum);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_entries)");
  }
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t e = static_cast<int64_t>(s.problem / 2);
    int64_t row = 0;
    DIRMN_TRY(row_of_entry(in, e, &row, env));
    if (s.problem % 2 == 0) {
      int64_t c = 0;
      DIRMN_TRY(read_index(in.index_type, in.indices, e, &c, env));
      problem->kind = CountsProblem::kBadIndex;
      problem->entry = e;
      problem->outer = row;
      problem->index_value = c;
    } else {
      int64_t c = 0;
      double x = 0.0;
      DIRMN_TRY(read_index(in.index_type, in.indices, e, &c, env));
      DIRMN_TRY(read_value(in.value_dtype, in.values, e, &x, env));
      problem->kind = CountsProblem::kBadCount;
      problem->row = row;
      problem->col = c;
      problem->value = x;
      problem->issue = static_cast<CountIssue>(count_issue(x, in.real_valued));
    }
    return {problem->kind == CountsProblem::kBadIndex ? DIRMN_ERROR_INVALID_ARGUMENT
                                                      : DIRMN_ERROR_INVALID_COUNTS,
            "", 0};
  }

  const uint32_t* sorted_keys = keys.get<uint32_t>();
  const double* sorted_counts = counts.get<double>();
  if (s.unsorted) {
    if (in.nnz > std::numeric_limits<int>::max() || in.rows > std::numeric_limits<int>::max())
      return {DIRMN_ERROR_NOT_SUPPORTED, "unsorted device CSR with more than 2^31 - 1 entries or rows", 0};
    DIRMN_TRY(keys2.reserve(nnz * sizeof(uint32_t), "cudaMalloc (sorted column indices)"));
    DIRMN_TRY(counts2.reserve(nnz * sizeof(double), "cudaMalloc (sorted counts)"));
    size_t bytes = 0;
    DIRMN_CUDA_TRY(cub::DeviceSegmentedSort::SortPairs(
                       nullptr, bytes, keys.get<uint32_t>(), keys2.get<uint32_t>(), counts.get<double>(),
                       counts2.get<double>(), static_cast<int>(in.nnz), static_cast<int>(in.rows), rp_in,
                       rp_in + 1, env.stream),
                   "cub::DeviceSegmentedSort::SortPairs");
    DIRMN_TRY(temp.reserve(bytes, "cudaMalloc (sort workspace)"));
    DIRMN_CUDA_TRY(cub::DeviceSegmentedSort::SortPairs(
                       temp.get(), bytes, keys.get<uint32_t>(), keys2.get<uint32_t>(), counts.get<double>(),
                       counts2.get<double>(), static_cast<int>(in.nnz), static_cast<int>(in.rows), rp_in,
                       rp_in + 1, env.stream),
                   "cub::DeviceSegmentedSort::SortPairs");
    sorted_keys = keys2.get<uint32_t>();
    sorted_counts = counts2.get<double>();
  }

  DeviceBuffer row_nnz(t->device);
  DIRMN_TRY(row_nnz.reserve(static_cast<size_t>(in.rows) * sizeof(int64_t), "cudaMalloc (row nonzeros)"));
  DIRMN_TRY(t->row_total.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row coefficients)"));
  DIRMN_TRY(reset_summary(sum_buf, env));
  csr_row_stats<<<row_grid, kBlockThreads, 0, env.stream>>>(
      rp_in, rp_in + 1, sorted_keys, sorted_counts, in.rows, in.cols, t->row_total.get<double>(),
      t->row_lcoef.get<double>(), row_nnz.get<int64_t>(), d_sum);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (csr_row_stats)");
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    problem->kind = CountsProblem::kRepeatedIndex;
    problem->row = static_cast<int64_t>(s.problem / static_cast<unsigned long long>(in.cols));
    problem->col = static_cast<int64_t>(s.problem % static_cast<unsigned long long>(in.cols));
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }
  take_summary(s, in.real_valued, t);

  const ValueType vt = choose_vtype(t->max_count, t->integral, in.real_valued);
  t->sparse = choose_sparse(in.storage, in.rows, in.cols, t->nnz, vt);
  t->vtype = vt;
  t->cell = cell_of(vt);
  const int vb = static_cast<int>(value_bytes(vt));
  if (t->sparse) {
    t->col16 = in.cols <= 65536;
    DIRMN_TRY(t->row_ptr.reserve(static_cast<size_t>(in.rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
    int64_t* rp = t->row_ptr.get<int64_t>();
    DIRMN_TRY(scan_row_ptr(row_nnz.get<int64_t>(), in.rows, rp, temp, env));
    DIRMN_TRY(reserve_csr(t, t->nnz, vb, env));
    void* co = t->col_idx.get();
    void* vo = t->values_buf.get();
#define DIRMN_CC(D, I)                                                                   \
  compact_csr<D, I><<<row_grid, kBlockThreads, 0, env.stream>>>(rp_in, rp_in + 1, sorted_keys, \
                                                                sorted_counts, in.rows, rp, co, vo)
    switch (vt) {
      case ValueType::U8: if (t->col16) DIRMN_CC(uint8_t, uint16_t); else DIRMN_CC(uint8_t, uint32_t); break;
      case ValueType::U16: if (t->col16) DIRMN_CC(uint16_t, uint16_t); else DIRMN_CC(uint16_t, uint32_t); break;
      case ValueType::U32: if (t->col16) DIRMN_CC(uint32_t, uint16_t); else DIRMN_CC(uint32_t, uint32_t); break;
      case ValueType::F64: if (t->col16) DIRMN_CC(double, uint16_t); else DIRMN_CC(double, uint32_t); break;
    }
#undef DIRMN_CC
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (compact_csr)");
  } else {
    const int64_t pitch = compact_pitch(in.cols, vb);
    const size_t bytes = static_cast<size_t>(in.rows) * static_cast<size_t>(pitch) * vb;
    DIRMN_TRY(t->values_buf.reserve(bytes, "cudaMalloc (counts values)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get(), 0, bytes, env.stream), "cudaMemsetAsync (counts values)");
    t->pitch = pitch;
    t->vec = kVectorBytes / vb;
#define DIRMN_SD(D) \
  scatter_dense<D><<<row_grid, kBlockThreads, 0, env.stream>>>(rp_in, rp_in + 1, sorted_keys, sorted_counts, in.rows, t->values_buf.get<D>(), pitch)
    switch (vt) {
      case ValueType::U8: DIRMN_SD(uint8_t); break;
      case ValueType::U16: DIRMN_SD(uint16_t); break;
      case ValueType::U32: DIRMN_SD(uint32_t); break;
      case ValueType::F64: DIRMN_SD(double); break;
    }
#undef DIRMN_SD
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (scatter_dense)");
  }
  t->values = t->values_buf.get();
  DIRMN_TRY(total_and_max(t, env));
  return build_panels(t, env);
}

template <class P, class I>
BackendResult ingest_csr_pi(const SparseInput& in, DeviceTable* t, CountsProblem* problem,
                            const LaunchEnv& env) {
  switch (in.value_dtype) {
    case DIRMN_INT32: return ingest_csr_typed<P, I, int32_t>(in, t, problem, env);
    case DIRMN_FLOAT32: return ingest_csr_typed<P, I, float>(in, t, problem, env);
    case DIRMN_FLOAT64: return ingest_csr_typed<P, I, double>(in, t, problem, env);
    default: break;
  }
  return {DIRMN_ERROR_NOT_SUPPORTED, "int64 device values", 0};
}

}  // namespace

BackendResult ingest_device_csr(const SparseInput& in, DeviceTable* t, CountsProblem* problem,
                                const LaunchEnv& env) {
  t->rows = in.rows;
  t->cols = in.cols;
  if (in.index_type == DIRMN_INDEX_INT32) return ingest_csr_pi<int32_t, int32_t>(in, t, problem, env);
  return ingest_csr_pi<int64_t, int64_t>(in, t, problem, env);
}

}  // namespace cuda
}  // namespace dirmn
