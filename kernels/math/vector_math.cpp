// vector_math.cpp: array log and exp through libmvec where it is available.
#include "vector_math.hpp"

#include <cmath>

#if defined(DIRMN_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#define DIRMN_VECTOR_X86 1
#include <immintrin.h>

// glibc's libmvec entry points, named by the x86-64 vector function ABI
// (_ZGV<isa>N<lanes>v_<name>: isa d = AVX2, e = AVX-512). The compiler
// calls the same symbols when it vectorizes loops of log and exp itself.
extern "C" {
__attribute__((target("avx2"))) __m256d _ZGVdN4v_log(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_log(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
}
#endif

namespace dirmn {
namespace {

#ifdef DIRMN_VECTOR_X86
enum class Isa { kScalar, kAvx2, kAvx512 };

Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
  return Isa::kScalar;
}

const Isa kIsa = detect_isa();

// Each does all of x: whole vectors in place, then the tail (fewer than a
// vector's width) padded with ones in a vector of its own, so that every
// element goes through the same vector code.
constexpr int kMaxLanes = 8;

// The tail x[0..m) into t, padded with ones to `lanes` entries.
void pad_tail(const double* x, int64_t m, int lanes, double* t) {
  for (int k = 0; k < lanes; ++k) t[k] = k < m ? x[k] : 1.0;
}
void unpad_tail(const double* t, int64_t m, double* y) {
  for (int64_t k = 0; k < m; ++k) y[k] = t[k];
}

// name(x, y, n) for one instruction set: Vec holds `lanes` doubles, load and
// store move them, expr maps v to the result.
#define DIRMN_LANES(name, isa, Vec, lanes, load, store, expr)                                  \
  __attribute__((target(isa))) void name(const double* x, double* y, int64_t n) {              \
    int64_t i = 0;                                                                             \
    for (; i + (lanes) <= n; i += (lanes)) {                                                   \
      const Vec v = load(x + i);                                                               \
      store(y + i, expr);                                                                      \
    }                                                                                          \
    if (i < n) {                                                                               \
      double t[kMaxLanes];                                                                     \
      pad_tail(x + i, n - i, (lanes), t);                                                      \
      const Vec v = load(t);                                                                   \
      store(t, expr);                                                                          \
      unpad_tail(t, n - i, y + i);                                                             \
    }                                                                                          \
  }

DIRMN_LANES(log_avx512, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_log(v))
DIRMN_LANES(exp_avx512, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_exp(v))
DIRMN_LANES(reciprocal_avx512, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd,
            _mm512_div_pd(_mm512_set1_pd(1.0), v))
DIRMN_LANES(log_avx2, "avx2", __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_log(v))
DIRMN_LANES(exp_avx2, "avx2", __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_exp(v))
DIRMN_LANES(reciprocal_avx2, "avx2", __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd,
            _mm256_div_pd(_mm256_set1_pd(1.0), v))
#undef DIRMN_LANES
#endif

}  // namespace

void log_many(const double* x, double* y, int64_t n) {
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512) return log_avx512(x, y, n);
  if (kIsa == Isa::kAvx2) return log_avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
}

void exp_many(const double* x, double* y, int64_t n) {
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512) return exp_avx512(x, y, n);
  if (kIsa == Isa::kAvx2) return exp_avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void reciprocal_many(const double* x, double* y, int64_t n) {
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512) return reciprocal_avx512(x, y, n);
  if (kIsa == Isa::kAvx2) return reciprocal_avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0 / x[i];
}

}  // namespace dirmn
