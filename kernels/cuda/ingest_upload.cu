// ingest_upload.cu: a device table from a validated host table, copied as
// the host stores it (compact dense rows, padded for vector reads, or CSR).
#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "device_table.cuh"
#include "ingest_common.cuh"

namespace dirmn {
namespace cuda {

using namespace ingest;

namespace {

// Column indices below 65536 as 16 bits, narrowed on the context's threads
// (a serial pass over 180 M indices took a third of a second).
constexpr int64_t kNarrowChunk = int64_t{1} << 20;

std::unique_ptr<uint16_t[]> narrow_columns(const TableArray<uint32_t>& col, HostThreads& threads) {
  const int64_t n = static_cast<int64_t>(col.size());
  std::unique_ptr<uint16_t[]> out(new (std::nothrow) uint16_t[static_cast<size_t>(n)]);
  if (!out) return out;
  uint16_t* o = out.get();
  const uint32_t* in = col.data();
  try {
    threads.parallel_for(ceil_div<int64_t>(n, kNarrowChunk), [&](int64_t c) {
      const int64_t i1 = std::min(n, (c + 1) * kNarrowChunk);
      for (int64_t i = c * kNarrowChunk; i < i1; ++i) o[i] = static_cast<uint16_t>(in[i]);
    });
  } catch (const std::bad_alloc&) {  // the loop's std::function
    out.reset();
  }
  return out;
}

}  // namespace

BackendResult upload_host_table(const HostTable& h, DeviceTable* t, HostThreads& threads,
                                const LaunchEnv& env) {
  t->rows = h.rows;
  t->cols = h.cols;
  t->nnz = h.nnz;
  t->max_count = h.max_count;
  t->total = h.total;
  t->real_valued = h.real_valued;
  t->vtype = h.vtype;
  t->cell = cell_of(h.vtype);
  t->sparse = h.sparse;
  t->integral = h.vtype != ValueType::F64 || h.max_count == 0.0;
  double max_rt = 0.0;
  for (double n : h.row_total) max_rt = std::max(max_rt, n);
  t->max_row_total = max_rt;
  const int vb = static_cast<int>(value_bytes(h.vtype));
  if (h.vtype == ValueType::F64) {
    // Doubles may hold integers too (counts >= 2^32); tables care whether
    // every count is one.
    const double* x = reinterpret_cast<const double*>(h.values.data());
    const size_t n = h.values.size() / sizeof(double);
    bool integral = true;
    for (size_t i = 0; i < n && integral; ++i) integral = x[i] == std::floor(x[i]);
    t->integral = integral;
  }
  const size_t rows = static_cast<size_t>(h.rows);
  DIRMN_TRY(t->row_total.reserve(rows * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(rows * sizeof(double), "cudaMalloc (row coefficients)"));
  DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_total.get(), h.row_total.data(), rows * sizeof(double),
                                 cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (row totals)");
  DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_lcoef.get(), h.row_lcoef.data(), rows * sizeof(double),
                                 cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (row coefficients)");
  if (h.sparse) {
    const size_t nnz = static_cast<size_t>(h.nnz);
    t->col16 = h.cols <= 65536;
    DIRMN_TRY(t->row_ptr.reserve((rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
    DIRMN_TRY(reserve_csr(t, h.nnz, vb, env));
    DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_ptr.get(), h.row_ptr.data(), (rows + 1) * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, env.stream),
                   "cudaMemcpyAsync (row pointers)");
    if (nnz > 0)
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->values_buf.get(), h.values.data(), nnz * vb,
                                     cudaMemcpyHostToDevice, env.stream),
                     "cudaMemcpyAsync (counts values)");
    if (nnz == 0) {
      // Nothing to copy (and the host vectors may hold no buffer at all).
    } else if (t->col16) {
      const std::unique_ptr<uint16_t[]> narrow = narrow_columns(h.col_idx, threads);
      if (!narrow) return {DIRMN_ERROR_OUT_OF_MEMORY, "host copy of column indices", 0};
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->col_idx.get(), narrow.get(), nnz * 2, cudaMemcpyHostToDevice,
                                     env.stream),
                     "cudaMemcpyAsync (column indices)");
      // `narrow` is pageable: the copy has read it once this returns, but
      // the wait below also keeps the order obvious.
      DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
    } else {
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->col_idx.get(), h.col_idx.data(), nnz * 4,
                                     cudaMemcpyHostToDevice, env.stream),
                     "cudaMemcpyAsync (column indices)");
    }
  } else {
    t->vec = kVectorBytes / vb;
    t->pitch = compact_pitch(h.cols, vb);
    const size_t row_bytes = static_cast<size_t>(h.cols) * vb;
    const size_t pitch_bytes = static_cast<size_t>(t->pitch) * vb;
    DIRMN_TRY(t->values_buf.reserve(rows * pitch_bytes, "cudaMalloc (counts values)"));
    if (pitch_bytes != row_bytes)
      DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get(), 0, rows * pitch_bytes, env.stream),
                     "cudaMemsetAsync (counts values)");
    DIRMN_CUDA_TRY(cudaMemcpy2DAsync(t->values_buf.get(), pitch_bytes, h.values.data(), row_bytes,
                                     row_bytes, rows, cudaMemcpyHostToDevice, env.stream),
                   "cudaMemcpy2DAsync (counts values)");
  }
  t->values = t->values_buf.get();
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return build_panels(t, env);
}

}  // namespace cuda
}  // namespace dirmn
