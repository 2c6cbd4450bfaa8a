// cuda_backend.cu: the CUDA backend's tables, streams and transfers, and
// its construction (see cuda_backend.cuh for the steps' files).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include "cuda_backend.cuh"

namespace dirmn {
namespace cuda {

CudaBackend::CudaBackend(int device, int sm_count, std::shared_ptr<HostThreads> threads)
    : device_(device), sm_count_(sm_count), threads_(std::move(threads)), params_(device),
      tables_(device), row_terms_(device), out_(device), partial_(device), rowwise_alpha_(device),
      hist_(device), hist_partial_(device), hist_scratch_(device), fit_(device), em_(device),
      tensor_tables_(device) {}

CudaBackend::~CudaBackend() {
  DeviceGuard guard(device_);
  if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
  params_.release();
  tables_.release();
  tensor_tables_.release();
  row_terms_.release();
  out_.release();
  partial_.release();
  rowwise_alpha_.release();
  hist_.release();
  hist_partial_.release();
  hist_scratch_.release();
  fit_.release();
  em_.release();
  stage_.release();
  host_out_.release();
  if (stage_done_ != nullptr) (void)cudaEventDestroy(stage_done_);
  if (switch_event_ != nullptr) (void)cudaEventDestroy(switch_event_);
  if (own_stream_ != nullptr) (void)cudaStreamDestroy(own_stream_);
  (void)cudaGetLastError();
}

BackendResult CudaBackend::init() {
  DIRMN_CUDA_TRY(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags");
  DIRMN_CUDA_TRY(cudaEventCreateWithFlags(&stage_done_, cudaEventDisableTiming),
                 "cudaEventCreateWithFlags");
  DIRMN_CUDA_TRY(cudaEventCreateWithFlags(&switch_event_, cudaEventDisableTiming),
                 "cudaEventCreateWithFlags");
  stream_ = own_stream_;
  wgmma_ = wgmma_available(device_, stream_);
  tensor_mma_ = tensor_mma_available(device_);
  return {};
}

bool CudaBackend::supports(Step step, const BackendCounts& counts) const {
  const DeviceTable& t = table_of(counts);
  switch (step) {
    case Step::kLoglik:
    case Step::kLoglikRowwise: return true;
    case Step::kDerivativesRowwise: return false;
    case Step::kHistograms:
    case Step::kMixtureEm:
    case Step::kMixtureFits:
      return column_histogram_supported(t) && totals_index_supported(t) &&
             column_histograms_fit_grid(t, false, histogram_bins(t)) &&
             column_histograms_fit_grid(t, true, histogram_bins(t));
  }
  return false;
}

BackendResult CudaBackend::prepare_totals(const DeviceTable& t) {
  if (!column_histogram_supported(t) || !totals_index_supported(t)) return {};
  if (!build_totals_index(t, &t.totals, env()).ok()) {
    t.totals.built = false;
    (void)cudaGetLastError();
  }
  return {};
}

BackendResult CudaBackend::finish_table(std::unique_ptr<CudaCounts> c,
                                        std::unique_ptr<BackendCounts>* out, TableInfo* info) {
  DIRMN_TRY(prepare_totals(c->table));
  *info = c->table;
  *out = std::move(c);
  return {};
}

// The device keeps its own copy: the host table is only read.
BackendResult CudaBackend::adopt_copy(const HostTable& table, std::unique_ptr<BackendCounts>* out,
                                      TableInfo* info) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
  if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
  DIRMN_TRY(upload_host_table(table, &c->table, *threads_, env()));
  return finish_table(std::move(c), out, info);
}

BackendResult CudaBackend::adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out,
                                 TableInfo* info) {
  return adopt_copy(table, out, info);
}

BackendResult CudaBackend::wrap_device_dense(const DenseInput& in, std::unique_ptr<BackendCounts>* out,
                                             TableInfo* info, CountsProblem* problem) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  DIRMN_TRY(check_device_pointer(in.data, device_,
                                 "device_data is not device memory of this context's device"));
  std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
  if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
  DIRMN_TRY(ingest_device_dense(in, &c->table, problem, env()));
  return finish_table(std::move(c), out, info);
}

BackendResult CudaBackend::wrap_device_sparse(const SparseInput& in,
                                              std::unique_ptr<BackendCounts>* out, TableInfo* info,
                                              CountsProblem* problem) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  DIRMN_TRY(check_device_pointer(in.ptr, device_,
                                 "device_ptr is not device memory of this context's device"));
  if (in.nnz > 0) {
    DIRMN_TRY(check_device_pointer(in.indices, device_,
                                   "device_indices is not device memory of this context's device"));
    DIRMN_TRY(check_device_pointer(in.values, device_,
                                   "device_values is not device memory of this context's device"));
  }
  std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
  if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
  DIRMN_TRY(ingest_device_csr(in, &c->table, problem, env()));
  return finish_table(std::move(c), out, info);
}

BackendResult CudaBackend::row_totals(const BackendCounts& counts, double* host_out) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const DeviceTable& t = static_cast<const CudaCounts&>(counts).table;
  DIRMN_CUDA_TRY(cudaMemcpyAsync(host_out, t.row_total.get(),
                                 static_cast<size_t>(t.rows) * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync (row totals)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return {};
}

BackendResult CudaBackend::set_stream(void* stream) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  cudaStream_t next = stream != nullptr ? static_cast<cudaStream_t>(stream) : own_stream_;
  if (next == stream_) return {};
  // Work already queued on the old stream still reads the workspace: the
  // new stream starts after it.
  DIRMN_CUDA_TRY(cudaEventRecord(switch_event_, stream_), "cudaEventRecord (stream switch)");
  DIRMN_CUDA_TRY(cudaStreamWaitEvent(next, switch_event_, 0), "cudaStreamWaitEvent (stream switch)");
  stream_ = next;
  return {};
}

BackendResult CudaBackend::get_stream(void** stream) const {
  *stream = static_cast<void*>(stream_);
  return {};
}

BackendResult CudaBackend::synchronize() {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return {};
}

BackendResult CudaBackend::check_caller_device(const void* p, const char* what_not_device) const {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  return check_device_pointer(p, device_, what_not_device);
}

// Small arrays (parameter vectors, row weights, a gradient): a plain copy
// on the stream and a wait, so that the caller's later work on the same
// stream sees it and host memory may be reused at once. `caller` is the
// side that must be the caller's device memory.
BackendResult CudaBackend::copy_caller_device(void* dst, const void* src, size_t bytes,
                                              const void* caller, cudaMemcpyKind kind,
                                              const char* what_not_device, const char* what) {
  if (bytes == 0) return {};
  DIRMN_TRY(check_caller_device(caller, what_not_device));
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, stream_), what);
  DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return {};
}

BackendResult CudaBackend::read_caller_device(void* host_dst, const void* src, size_t bytes,
                                              const char* what_not_device) {
  return copy_caller_device(host_dst, src, bytes, src, cudaMemcpyDeviceToHost, what_not_device,
                            "cudaMemcpyAsync (the caller's device array to the host)");
}

BackendResult CudaBackend::write_caller_device(void* dst, const void* host_src, size_t bytes,
                                               const char* what_not_device) {
  return copy_caller_device(dst, host_src, bytes, dst, cudaMemcpyHostToDevice, what_not_device,
                            "cudaMemcpyAsync (a result to the caller's device array)");
}

void CudaBackend::drain_quietly() {
  DeviceGuard guard(device_);
  if (cudaStreamSynchronize(stream_) != cudaSuccess) (void)cudaGetLastError();
}

LaunchEnv CudaBackend::env() const {
  LaunchEnv e;
  e.stream = stream_;
  e.device = device_;
  e.sm_count = sm_count_;
  e.wgmma = wgmma_;
  e.tensor_mma = tensor_mma_;
  return e;
}

// Grows a workspace buffer. Queued work may still read the old allocation,
// so the stream drains first (growth is rare: buffers never shrink).
BackendResult CudaBackend::grow(DeviceBuffer& buf, size_t bytes, const char* what) {
  if (bytes <= buf.bytes() && buf.get() != nullptr) return {};
  DIRMN_CUDA_TRY(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return buf.reserve(bytes, what);
}

// Copies `bytes` of host memory to `dst` in stream order; the host memory
// may be reused as soon as this returns.
BackendResult CudaBackend::upload(void* dst, const void* src, size_t bytes, const char* what) {
  if (bytes > kStagingMax) {
    DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), what);
    return {};
  }
  void* stage = nullptr;
  DIRMN_TRY(stage_for(bytes, &stage));
  std::memcpy(stage, src, bytes);
  return upload_staged(dst, bytes, what);
}

// The staging buffer, once the last upload from it has run.
BackendResult CudaBackend::stage_for(size_t bytes, void** stage) {
  if (stage_pending_) {
    DIRMN_CUDA_TRY(cudaEventSynchronize(stage_done_), "cudaEventSynchronize (staging buffer)");
    stage_pending_ = false;
  }
  DIRMN_TRY(stage_.reserve(bytes, "cudaHostAlloc (parameter staging)"));
  *stage = stage_.get();
  return {};
}

BackendResult CudaBackend::upload_staged(void* dst, size_t bytes, const char* what) {
  DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, stage_.get(), bytes, cudaMemcpyHostToDevice, stream_), what);
  DIRMN_CUDA_TRY(cudaEventRecord(stage_done_, stream_), "cudaEventRecord (staging buffer)");
  stage_pending_ = true;
  return {};
}

CudaCounts::~CudaCounts() { owner_->drain_quietly(); }

namespace {

bool absent_device(cudaError_t e) {
  return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver;
}

}  // namespace

bool cuda_compiled() { return true; }

BackendResult cuda_device_count(int* count) {
  *count = 0;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (absent_device(e)) return {};
    return from_cuda(e, "cudaGetDeviceCount");
  }
  *count = n;
  return {};
}

std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<HostThreads> threads,
                                           BackendResult* result) {
  int n = 0;
  *result = cuda_device_count(&n);
  if (!result->ok()) return nullptr;
  if (device < 0 || device >= n) {
    *result = {DIRMN_ERROR_BACKEND_UNAVAILABLE, "no such CUDA device", 0};
    return nullptr;
  }
  DeviceGuard guard(device);
  if (!(*result = guard.result()).ok()) return nullptr;
  // Creates the device's primary context now, so a device that is busy
  // (exclusive mode) or broken fails here rather than in a later call.
  const cudaError_t e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    *result = from_cuda(e, "cudaFree (creating the device context)");
    return nullptr;
  }
  int sm_count = 0;
  const cudaError_t ea = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (ea != cudaSuccess) {
    *result = from_cuda(ea, "cudaDeviceGetAttribute");
    return nullptr;
  }
  std::unique_ptr<CudaBackend> b(
      new (std::nothrow) CudaBackend(device, std::max(sm_count, 1), std::move(threads)));
  if (!b) {
    *result = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a CUDA context", 0};
    return nullptr;
  }
  *result = b->init();
  if (!result->ok()) return nullptr;
  return b;
}

}  // namespace cuda

bool cuda_compiled() { return cuda::cuda_compiled(); }
BackendResult cuda_device_count(int* count) { return cuda::cuda_device_count(count); }
std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<HostThreads> threads,
                                           BackendResult* result) {
  return cuda::make_cuda_backend(device, std::move(threads), result);
}

}  // namespace dirmn
