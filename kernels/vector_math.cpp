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

// Each does the leading whole vectors of x and returns how many elements
// that was; the scalar loop does the rest (fewer than a vector's width).
__attribute__((target("avx512f"))) int64_t log_avx512(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, _ZGVeN8v_log(_mm512_loadu_pd(x + i)));
  return i;
}
__attribute__((target("avx512f"))) int64_t exp_avx512(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, _ZGVeN8v_exp(_mm512_loadu_pd(x + i)));
  return i;
}
__attribute__((target("avx2"))) int64_t log_avx2(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _ZGVdN4v_log(_mm256_loadu_pd(x + i)));
  return i;
}
__attribute__((target("avx2"))) int64_t exp_avx2(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _ZGVdN4v_exp(_mm256_loadu_pd(x + i)));
  return i;
}
__attribute__((target("avx512f"))) int64_t reciprocal_avx512(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  const __m512d one = _mm512_set1_pd(1.0);
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, _mm512_div_pd(one, _mm512_loadu_pd(x + i)));
  return i;
}
__attribute__((target("avx2"))) int64_t reciprocal_avx2(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  const __m256d one = _mm256_set1_pd(1.0);
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_div_pd(one, _mm256_loadu_pd(x + i)));
  return i;
}
#endif

}  // namespace

void log_many(const double* x, double* y, int64_t n) {
  int64_t i = 0;
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512)
    i = log_avx512(x, y, n);
  else if (kIsa == Isa::kAvx2)
    i = log_avx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = std::log(x[i]);
}

void exp_many(const double* x, double* y, int64_t n) {
  int64_t i = 0;
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512)
    i = exp_avx512(x, y, n);
  else if (kIsa == Isa::kAvx2)
    i = exp_avx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = std::exp(x[i]);
}

void reciprocal_many(const double* x, double* y, int64_t n) {
  int64_t i = 0;
#ifdef DIRMN_VECTOR_X86
  if (kIsa == Isa::kAvx512)
    i = reciprocal_avx512(x, y, n);
  else if (kIsa == Isa::kAvx2)
    i = reciprocal_avx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = 1.0 / x[i];
}

}  // namespace dirmn
