// gpu_bench.cu: dirmn's CUDA backend against the kernels it grew from and a
// plain read of the table, on one GPU, in one run, on the same data.
//
// Every timed region is bracketed by CUDA events on the stream that runs it,
// with the L2 cache flushed (a 256 MB memset) before each repetition; the
// median of the repetitions is reported. A kernel that holds the GPU for a
// millisecond runs before each start event, so the host has queued the
// timed work before the GPU reaches it: the events time the GPU's work, not
// how long the host took to submit it (that is reported apart, as "host
// time per call"). The PyTorch reference is timed by
// bench/torch_ref.py on identical data (the same counter-based hash) and
// merged into one table there.
//
// Output: CSV lines "shape,variant,microseconds,note" on stdout (and a
// readable summary on stderr).
//
//   gpu_bench [--quick] [--reps N] [--shape NAME]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dirmn.h"

namespace {

#define CUDA_OK(call)                                                                      \
  do {                                                                                     \
    const cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

#define DIRMN_OK(ctx, call)                                                               \
  do {                                                                                    \
    const dirmn_status s_ = (call);                                                       \
    if (s_ != DIRMN_SUCCESS) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, dirmn_last_error(ctx)); \
      std::exit(3);                                                                       \
    }                                                                                     \
  } while (0)

// ---------------------------------------------------------------------------
// Data: a counter-based hash that bench/torch_ref.py reproduces exactly. Two
// rounds of the Park-Miller generator keep every product below 2^63, so
// int64 tensor arithmetic gives the same numbers.

constexpr uint64_t kMinstdMul = 48271;
constexpr uint64_t kMinstdMod = 2147483647;  // 2^31 - 1
constexpr uint64_t kSeedCounts = 12345;
constexpr uint64_t kSeedZeros = 67890;
constexpr int kCountLevels = 10;    // counts 0..9
constexpr int kPermille = 1000;

__host__ __device__ inline uint64_t hash31(uint64_t i, uint64_t seed) {
  uint64_t x = (i + seed) % kMinstdMod;
  x = (x * kMinstdMul) % kMinstdMod;
  x = (x * kMinstdMul) % kMinstdMod;
  return x ^ (x >> 13);
}

// zero_permille == 0: counts uniform on 0..9. Otherwise a cell is 0 with
// probability zero_permille / 1000 and uniform on 1..9 else.
__global__ void gen_counts(float* out, uint64_t n, int zero_permille) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t h = hash31(i, kSeedCounts);
    float v;
    if (zero_permille == 0) {
      v = static_cast<float>(h % kCountLevels);
    } else {
      const bool zero = hash31(i, kSeedZeros) % kPermille < static_cast<uint64_t>(zero_permille);
      v = zero ? 0.0f : static_cast<float>(1 + h % (kCountLevels - 1));
    }
    out[i] = v;
  }
}

// log alpha_v = -0.5 + (v mod 97) / 97: alpha in [0.61, 1.63].
double log_alpha_of(int64_t v) { return -0.5 + static_cast<double>(v % 97) / 97.0; }

// ---------------------------------------------------------------------------
// Anchors: the hand-written kernels this project grew from (float32,
// lgammaf throughout), re-implemented.

constexpr int kAnchorThreads = 256;

// Tree reduction of one float per thread in shared memory; thread 0 gets it.
__device__ float block_tree_sum(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const float r = scratch[0];
  __syncthreads();
  return r;
}

// (1) One block per row; each block recomputes exp(log alpha) and its sum.
__global__ void anchor_naive(const float* counts, const float* log_alpha, int64_t cols, float* out) {
  extern __shared__ float sh[];
  float* alpha = sh;                 // cols
  float* scratch = sh + cols;        // kAnchorThreads
  const int64_t row = blockIdx.x;
  float a_part = 0.0f;
  for (int64_t v = threadIdx.x; v < cols; v += blockDim.x) {
    alpha[v] = expf(log_alpha[v]);
    a_part += alpha[v];
  }
  const float a_sum = block_tree_sum(a_part, scratch);
  float n_part = 0.0f, t_part = 0.0f;
  for (int64_t v = threadIdx.x; v < cols; v += blockDim.x) {
    const float n = counts[row * cols + v];
    n_part += n;
    t_part += lgammaf(n + alpha[v]) - lgammaf(alpha[v]);
  }
  const float n_sum = block_tree_sum(n_part, scratch);
  const float t_sum = block_tree_sum(t_part, scratch);
  if (threadIdx.x == 0) out[row] = lgammaf(a_sum) - lgammaf(n_sum + a_sum) + t_sum;
}

// (2a) One block: alpha, lgamma(alpha), A and lgamma(A), once.
__global__ void anchor_prepare(const float* log_alpha, int64_t cols, float* alpha, float* lg_alpha,
                               float* a_stats) {
  __shared__ float scratch[kAnchorThreads];
  float part = 0.0f;
  for (int64_t v = threadIdx.x; v < cols; v += blockDim.x) {
    const float a = expf(log_alpha[v]);
    alpha[v] = a;
    lg_alpha[v] = lgammaf(a);
    part += a;
  }
  const float a_sum = block_tree_sum(part, scratch);
  if (threadIdx.x == 0) {
    a_stats[0] = a_sum;
    a_stats[1] = lgammaf(a_sum);
  }
}

// (2b) One block per row, reading the prepared values.
__global__ void anchor_prepared(const float* counts, const float* alpha, const float* lg_alpha,
                                const float* a_stats, int64_t cols, float* out) {
  __shared__ float scratch[kAnchorThreads];
  const int64_t row = blockIdx.x;
  float n_part = 0.0f, t_part = 0.0f;
  for (int64_t v = threadIdx.x; v < cols; v += blockDim.x) {
    const float n = counts[row * cols + v];
    n_part += n;
    t_part += lgammaf(n + alpha[v]) - lg_alpha[v];
  }
  const float n_sum = block_tree_sum(n_part, scratch);
  const float t_sum = block_tree_sum(t_part, scratch);
  if (threadIdx.x == 0) out[row] = a_stats[1] - lgammaf(n_sum + a_stats[0]) + t_sum;
}

// The floor: read every float of the table once (16-byte loads) and sum.
__global__ void read_floor(const float4* x, uint64_t n4, float* sink) {
  float s = 0.0f;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float4 v = __ldg(x + i);
    s += (v.x + v.y) + (v.z + v.w);
  }
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0 && s == -1.0f) *sink = s;  // never true: keeps the loads
}

// ---------------------------------------------------------------------------
// Timing

constexpr size_t kFlushBytes = size_t{256} << 20;  // > 4x the 60 MB L2
// How long the GPU is held before each timed region. The flush alone gave
// the host about 80 us; dirmn's host side takes about 0.2 ms to validate and
// exponentiate 16384 new log-alphas, which leaked into the events.
constexpr uint64_t kHeadStartNs = 1000000;

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread that spins for `ns` nanoseconds.
__global__ void hold_gpu(uint64_t ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

struct Timer {
  cudaStream_t stream;
  void* flush;
  int reps;
  cudaEvent_t start, stop;
  Timer(cudaStream_t s, void* f, int r) : stream(s), flush(f), reps(r) {
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  // Median GPU time of op() in microseconds; NaN if op reports failure.
  double median_us(const std::function<bool()>& op, int warmup = 2) {
    for (int i = 0; i < warmup; ++i)
      if (!op()) return std::nan("");
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      CUDA_OK(cudaMemsetAsync(flush, i & 0xff, kFlushBytes, stream));
      hold_gpu<<<1, 1, 0, stream>>>(kHeadStartNs);
      CUDA_OK(cudaEventRecord(start, stream));
      if (!op()) return std::nan("");
      CUDA_OK(cudaEventRecord(stop, stream));
      CUDA_OK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
      t.push_back(1000.0 * ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  // Median host wall time of op(), each call made while the GPU is held so
  // that the call never waits on it: what submitting the work costs.
  double host_median_us(const std::function<bool()>& op) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      hold_gpu<<<1, 1, 0, stream>>>(kHeadStartNs);
      const auto t0 = std::chrono::steady_clock::now();
      if (!op()) return std::nan("");
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      CUDA_OK(cudaStreamSynchronize(stream));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

struct Shape {
  const char* name;
  int64_t rows, cols;
  int zero_permille;
  bool sparse;  // prepare as CSR
};

void emit(const Shape& s, const std::string& variant, double us, const std::string& note = "") {
  std::printf("%s,%s,%.3f,%s\n", s.name, variant.c_str(), us, note.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "  %-22s %-40s %12.2f us  %s\n", s.name, variant.c_str(), us, note.c_str());
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  return m;
}

struct Bench {
  cudaStream_t stream = nullptr;
  dirmn_context* ctx = nullptr;
  Timer* timer = nullptr;
  bool quick = false;

  // dirmn_loglik into device memory on the context's stream, without
  // waiting: the events bracket exactly the GPU work of one call.
  bool call(dirmn_counts* c, int64_t k, const std::vector<double>& params, int64_t cols, double* d_out) {
    return dirmn_loglik(ctx, c, k, params.data(), cols, 1, DIRMN_PARAM_LOG_ALPHA,
                        DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, d_out, k, 1) == DIRMN_SUCCESS;
  }

  std::vector<double> result(dirmn_counts* c, int64_t rows, int64_t k, const std::vector<double>& params,
                             int64_t cols) {
    std::vector<double> out(static_cast<size_t>(rows * k));
    DIRMN_OK(ctx, dirmn_loglik(ctx, c, k, params.data(), cols, 1, DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL, out.data(), k, 1));
    return out;
  }

  void time_dirmn(const Shape& s, const char* label, dirmn_counts* c, int64_t k,
                  const std::vector<double>& la, double* d_out) {
    for (dirmn_precision p : {DIRMN_PRECISION_DOUBLE, DIRMN_PRECISION_FAST}) {
      DIRMN_OK(ctx, dirmn_context_set_precision(ctx, p));
      const std::string mode = p == DIRMN_PRECISION_DOUBLE ? "double" : "fast";
      const double same = timer->median_us([&] { return call(c, k, la, s.cols, d_out); });
      emit(s, std::string(label) + " " + mode, same, "same alpha each call (tables reused)");
      // Alternating alpha: every call uploads alpha and rebuilds its tables.
      std::vector<double> lb = la;
      for (double& x : lb) x += 0.01;
      int flip = 0;
      const double fresh = timer->median_us([&] { return call(c, k, (flip++ & 1) ? lb : la, s.cols, d_out); });
      emit(s, std::string(label) + " " + mode + " new-alpha", fresh, "alpha changes every call");
      if (p != DIRMN_PRECISION_DOUBLE) continue;
      const double host_same = timer->host_median_us([&] { return call(c, k, la, s.cols, d_out); });
      emit(s, std::string(label) + " host time per call", host_same, "wall, same alpha, GPU busy");
      const double host_new = timer->host_median_us([&] { return call(c, k, (flip++ & 1) ? lb : la, s.cols, d_out); });
      emit(s, std::string(label) + " host time per call new-alpha", host_new, "wall, alpha changes, GPU busy");
    }
    DIRMN_OK(ctx, dirmn_context_set_precision(ctx, DIRMN_PRECISION_DOUBLE));
  }

  void run_shape(const Shape& s) {
    std::fprintf(stderr, "%s: %lld x %lld, %s\n", s.name, static_cast<long long>(s.rows),
                 static_cast<long long>(s.cols), s.zero_permille ? "sparse" : "counts 0-9");
    const uint64_t n = static_cast<uint64_t>(s.rows * s.cols);
    float* d_counts = nullptr;
    CUDA_OK(cudaMalloc(&d_counts, n * sizeof(float)));
    gen_counts<<<1024, 256, 0, stream>>>(d_counts, n, s.zero_permille);
    CUDA_OK(cudaGetLastError());
    std::vector<float> h_la(static_cast<size_t>(s.cols));
    std::vector<double> la(static_cast<size_t>(s.cols));
    for (int64_t v = 0; v < s.cols; ++v) {
      la[static_cast<size_t>(v)] = log_alpha_of(v);
      h_la[static_cast<size_t>(v)] = static_cast<float>(la[static_cast<size_t>(v)]);
    }
    float *d_la = nullptr, *d_alpha = nullptr, *d_lga = nullptr, *d_astat = nullptr, *d_fout = nullptr,
          *d_sink = nullptr;
    CUDA_OK(cudaMalloc(&d_la, s.cols * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_alpha, s.cols * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_lga, s.cols * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_astat, 2 * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_fout, s.rows * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_sink, sizeof(float)));
    CUDA_OK(cudaMemcpy(d_la, h_la.data(), s.cols * sizeof(float), cudaMemcpyHostToDevice));
    double* d_out = nullptr;
    const int64_t kmax = 8;
    CUDA_OK(cudaMalloc(&d_out, s.rows * kmax * sizeof(double)));
    CUDA_OK(cudaStreamSynchronize(stream));

    // The floor.
    const double floor_us = timer->median_us([&] {
      read_floor<<<132 * 8, 256, 0, stream>>>(reinterpret_cast<const float4*>(d_counts), n / 4, d_sink);
      return cudaGetLastError() == cudaSuccess;
    });
    emit(s, "read floor (float32 table)", floor_us,
         std::to_string(static_cast<long long>(n * 4 / 1000000)) + " MB, " +
             std::to_string(static_cast<double>(n) * 4.0 / floor_us / 1e6).substr(0, 4) + " TB/s");

    // Anchors.
    const size_t naive_smem = (s.cols + kAnchorThreads) * sizeof(float);
    const double k1 = timer->median_us([&] {
      anchor_naive<<<static_cast<unsigned>(s.rows), kAnchorThreads, naive_smem, stream>>>(d_counts, d_la, s.cols, d_fout);
      const cudaError_t e = cudaGetLastError();
      return e == cudaSuccess;
    }, 1);
    emit(s, "kernel (1) per-block alpha", k1, std::isnan(k1) ? "launch fails: shared memory" : "");
    const double k2 = timer->median_us([&] {
      anchor_prepare<<<1, kAnchorThreads, 0, stream>>>(d_la, s.cols, d_alpha, d_lga, d_astat);
      anchor_prepared<<<static_cast<unsigned>(s.rows), kAnchorThreads, 0, stream>>>(d_counts, d_alpha, d_lga, d_astat,
                                                                                     s.cols, d_fout);
      return cudaGetLastError() == cudaSuccess;
    });
    emit(s, "kernel (2) prepared alpha", k2);

    // dirmn on the caller's float32 array, in place.
    dirmn_counts* wrapped = nullptr;
    DIRMN_OK(ctx, dirmn_counts_wrap_device(ctx, &wrapped, s.rows, s.cols, DIRMN_FLOAT32, d_counts, s.cols, 1, nullptr));
    time_dirmn(s, "dirmn wrapped-f32", wrapped, 1, la, d_out);
    const std::vector<double> ref = result(wrapped, s.rows, 1, la, s.cols);

    // The anchors compute the same function (in float).
    {
      std::vector<float> f(static_cast<size_t>(s.rows));
      CUDA_OK(cudaMemcpy(f.data(), d_fout, f.size() * sizeof(float), cudaMemcpyDeviceToHost));
      std::vector<double> fd(f.begin(), f.end());
      emit(s, "check: kernel (2) vs dirmn, max rel diff", max_rel_diff(fd, ref) * 1e6, "x 1e-6");
    }

    // dirmn prepared: from host memory (the end-to-end path), compact form.
    std::vector<float> host(n);
    CUDA_OK(cudaMemcpy(host.data(), d_counts, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
      if (storage == DIRMN_STORAGE_SPARSE && !s.sparse) continue;
      dirmn_counts_options o;
      dirmn_counts_options_init(&o);
      o.storage = storage;
      dirmn_counts* prepared = nullptr;
      std::vector<double> out(static_cast<size_t>(s.rows));
      const auto t0 = std::chrono::steady_clock::now();
      DIRMN_OK(ctx, dirmn_counts_create_dense(ctx, &prepared, s.rows, s.cols, DIRMN_FLOAT32, host.data(),
                                              s.cols, 1, &o));
      DIRMN_OK(ctx, dirmn_loglik(ctx, prepared, 1, la.data(), s.cols, 1, DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL,
                                 out.data(), 1, 1));
      const double e2e = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      const std::string st = storage == DIRMN_STORAGE_DENSE ? "dense-u8" : "csr-u8";
      emit(s, "dirmn end-to-end from host " + st, e2e, "wall: validate+compact+upload+loglik to host");
      emit(s, "check: prepared " + st + " vs wrapped, max rel diff", max_rel_diff(out, ref) * 1e12, "x 1e-12");
      time_dirmn(s, ("dirmn prepared " + st).c_str(), prepared, 1, la, d_out);
      if (s.rows == 262144 && s.cols == 1024 && s.zero_permille == 0) {
        std::vector<double> la8;
        for (int j = 0; j < 8; ++j)
          for (int64_t v = 0; v < s.cols; ++v) la8.push_back(la[static_cast<size_t>(v)] + 0.1 * j);
        time_dirmn(s, ("dirmn prepared " + st + " K=8").c_str(), prepared, 8, la8, d_out);
      }
      dirmn_counts_destroy(prepared);
    }
    // CSR made on the device from the caller's array.
    if (s.sparse) {
      dirmn_counts_options o;
      dirmn_counts_options_init(&o);
      o.storage = DIRMN_STORAGE_SPARSE;
      dirmn_counts* csr = nullptr;
      CUDA_OK(cudaStreamSynchronize(stream));
      const auto t0 = std::chrono::steady_clock::now();
      DIRMN_OK(ctx, dirmn_counts_wrap_device(ctx, &csr, s.rows, s.cols, DIRMN_FLOAT32, d_counts, s.cols, 1, &o));
      const double wrap_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      emit(s, "dirmn wrap f32 -> device CSR (once)", wrap_us, "wall: device validation + compaction");
      dirmn_counts_destroy(csr);
    }
    dirmn_counts_destroy(wrapped);
    CUDA_OK(cudaFree(d_counts));
    CUDA_OK(cudaFree(d_la));
    CUDA_OK(cudaFree(d_alpha));
    CUDA_OK(cudaFree(d_lga));
    CUDA_OK(cudaFree(d_astat));
    CUDA_OK(cudaFree(d_fout));
    CUDA_OK(cudaFree(d_sink));
    CUDA_OK(cudaFree(d_out));
  }

  // The launch-bound case as a C caller sees it: wall time per call.
  void launch_bound(const Shape& s) {
    std::vector<float> host(static_cast<size_t>(s.rows * s.cols));
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(hash31(i, kSeedCounts) % kCountLevels);
    std::vector<double> la(static_cast<size_t>(s.cols));
    for (int64_t v = 0; v < s.cols; ++v) la[static_cast<size_t>(v)] = log_alpha_of(v);
    dirmn_counts* c = nullptr;
    DIRMN_OK(ctx, dirmn_counts_create_dense(ctx, &c, s.rows, s.cols, DIRMN_FLOAT32, host.data(), s.cols, 1, nullptr));
    std::vector<double> out(static_cast<size_t>(s.rows));
    double* d_out = nullptr;
    CUDA_OK(cudaMalloc(&d_out, s.rows * sizeof(double)));
    const int calls = quick ? 200 : 2000;
    for (int pass = 0; pass < 2; ++pass) {
      const bool device = pass == 1;
      for (int i = 0; i < 10; ++i)
        DIRMN_OK(ctx, dirmn_loglik(ctx, c, 1, la.data(), s.cols, 1, DIRMN_PARAM_LOG_ALPHA,
                                   device ? DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC : 0u, device ? d_out : out.data(), 1, 1));
      DIRMN_OK(ctx, dirmn_context_synchronize(ctx));
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i)
        DIRMN_OK(ctx, dirmn_loglik(ctx, c, 1, la.data(), s.cols, 1, DIRMN_PARAM_LOG_ALPHA,
                                   device ? DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC : 0u, device ? d_out : out.data(), 1, 1));
      DIRMN_OK(ctx, dirmn_context_synchronize(ctx));
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
      emit(s, device ? "dirmn C loop, device output async (wall/call)" : "dirmn C loop, host output (wall/call)", us);
    }
    CUDA_OK(cudaFree(d_out));
    dirmn_counts_destroy(c);
  }
};

}  // namespace

int main(int argc, char** argv) {
  Bench b;
  int reps = 20;
  const char* only = nullptr;  // one shape, e.g. for a profiler run
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) b.quick = true;
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--shape") == 0 && i + 1 < argc) only = argv[++i];
  }
  if (b.quick) reps = std::min(reps, 7);
  reps = std::max(reps, 1);  // a median needs one repetition
  int devices = 0;
  if (dirmn_cuda_device_count(&devices) != DIRMN_SUCCESS || devices == 0) {
    std::fprintf(stderr, "gpu_bench: no CUDA device\n");
    return 77;
  }
  DIRMN_OK(nullptr, dirmn_context_create(&b.ctx, DIRMN_BACKEND_CUDA, 0));
  void* s = nullptr;
  DIRMN_OK(b.ctx, dirmn_context_get_stream(b.ctx, &s));
  b.stream = static_cast<cudaStream_t>(s);
  void* flush = nullptr;
  CUDA_OK(cudaMalloc(&flush, kFlushBytes));
  Timer timer(b.stream, flush, reps);
  b.timer = &timer;
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device: %s, %d SMs, L2 %d MB; %d repetitions, median\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20, reps);
  std::printf("shape,variant,us,note\n");

  const Shape shapes[] = {
      {"512x256", 512, 256, 0, false},
      {"262144x1024", 262144, 1024, 0, false},
      {"262144x1024_z77", 262144, 1024, 770, true},
      {"1048576x256", 1048576, 256, 0, false},
      {"16384x16384_z80", 16384, 16384, 800, true},
  };
  for (const Shape& sh : shapes) {
    if (b.quick && sh.rows * sh.cols > (int64_t{1} << 28)) continue;
    if (only != nullptr && std::strcmp(only, sh.name) != 0) continue;
    b.run_shape(sh);
  }
  if (only == nullptr) b.launch_bound(shapes[0]);
  CUDA_OK(cudaFree(flush));
  dirmn_context_destroy(b.ctx);
  return 0;
}
