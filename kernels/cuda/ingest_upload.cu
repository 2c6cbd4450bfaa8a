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

// A table's large arrays go to the device through two page-locked chunks
// in turn: the context's threads fill one (a copy of the values, or the
// column indices narrowed to 16 bits) while the device copies the other.
// From pageable memory the runtime stages every byte itself, one chunk at
// a time and at about half the bus's rate, and the narrowing was a pass of
// its own before the copy. Arrays below kStagedUploadMin go as before:
// pinning the chunks costs more than it saves there.
constexpr size_t kUploadChunkBytes = size_t{16} << 20;
constexpr size_t kStagedUploadMin = size_t{64} << 20;
// The threads take a chunk in pieces of this many bytes.
constexpr size_t kFillPieceBytes = size_t{1} << 20;

class StagedUpload {
 public:
  StagedUpload(HostThreads& threads, cudaStream_t stream) : threads_(threads), stream_(stream) {}
  ~StagedUpload() {
    // The chunks are freed only once the copies from them have run.
    if (pending_[0] || pending_[1]) (void)cudaStreamSynchronize(stream_);
    for (cudaEvent_t& e : done_)
      if (e != nullptr) (void)cudaEventDestroy(e);
    (void)cudaGetLastError();
  }
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;

  // False where the chunks cannot be had (page-locked memory is scarce):
  // the caller copies from pageable memory instead.
  bool ready() {
    if (!buf_.reserve(2 * kUploadChunkBytes, "cudaHostAlloc (upload chunks)").ok()) {
      (void)cudaGetLastError();
      return false;
    }
    for (cudaEvent_t& e : done_)
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        e = nullptr;
        return false;
      }
    return true;
  }

  // Copies n elements of Out to dst, element i being convert(src[i]).
  template <class Out, class In, class Convert>
  BackendResult copy(Out* dst, const In* src, size_t n, const Convert& convert, const char* what) {
    const size_t per_chunk = kUploadChunkBytes / sizeof(Out);
    const size_t per_piece = kFillPieceBytes / sizeof(Out);
    for (size_t at = 0; at < n; at += per_chunk) {
      const size_t m = std::min(per_chunk, n - at);
      const int slot = next_;
      next_ ^= 1;
      if (pending_[slot]) {
        DIRMN_CUDA_TRY(cudaEventSynchronize(done_[slot]), "cudaEventSynchronize (upload chunk)");
        pending_[slot] = false;
      }
      Out* chunk = buf_.get<Out>() + static_cast<size_t>(slot) * per_chunk;
      const In* from = src + at;
      try {
        threads_.parallel_for(static_cast<int64_t>(ceil_div(m, per_piece)), [&](int64_t p) {
          const size_t i0 = static_cast<size_t>(p) * per_piece, i1 = std::min(m, i0 + per_piece);
          for (size_t i = i0; i < i1; ++i) chunk[i] = convert(from[i]);
        });
      } catch (const std::bad_alloc&) {  // the loop's std::function
        return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for an upload", 0};
      }
      DIRMN_CUDA_TRY(cudaMemcpyAsync(dst + at, chunk, m * sizeof(Out), cudaMemcpyHostToDevice,
                                     stream_),
                     what);
      DIRMN_CUDA_TRY(cudaEventRecord(done_[slot], stream_), "cudaEventRecord (upload chunk)");
      pending_[slot] = true;
    }
    return {};
  }

 private:
  HostThreads& threads_;
  cudaStream_t stream_;
  PinnedBuffer buf_;
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool pending_[2] = {false, false};
  int next_ = 0;
};

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
    // A large table's values and 16-bit columns through page-locked chunks.
    StagedUpload staged(threads, env.stream);
    const bool chunked = t->col16 && nnz * (vb + 2) >= kStagedUploadMin && staged.ready();
    if (chunked) {
      const auto same = [](uint8_t b) { return b; };
      DIRMN_TRY(staged.copy(static_cast<uint8_t*>(t->values_buf.get()), h.values.data(), nnz * vb,
                            same, "cudaMemcpyAsync (counts values)"));
      const auto narrow = [](uint32_t c) { return static_cast<uint16_t>(c); };
      DIRMN_TRY(staged.copy(static_cast<uint16_t*>(t->col_idx.get()), h.col_idx.data(), nnz, narrow,
                            "cudaMemcpyAsync (column indices)"));
    } else if (nnz > 0) {
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->values_buf.get(), h.values.data(), nnz * vb,
                                     cudaMemcpyHostToDevice, env.stream),
                     "cudaMemcpyAsync (counts values)");
    }
    if (nnz == 0 || chunked) {
      // Nothing (more) to copy (and the host vectors may hold no buffer at all).
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
