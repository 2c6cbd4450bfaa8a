// vector_math.cpp: array log and exp through libmvec where it is available.
#include "vector_math.hpp"

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

// ---- Gram and product blocks ---------------------------------------------------

namespace {

// One kGramRows x kGramCols block of sum_k s_k a_k b_k' (a_k: kGramRows
// entries of A's k-th "row" at strides a_sk, a_sr; b_k: kGramCols
// contiguous entries), summed over k in order; the fixed-size inner loops
// become whole-vector multiply-adds where the instruction set has them
// (each entry its own lane: the sum over k is never reordered, and the
// weighted and unweighted forms round alike where s_k = 1).
template <bool kWeighted>
void product_block_plain(const double* a, int64_t a_sk, int64_t a_sr, const double* b, int64_t ldb,
                         const double* s, int64_t k0, int64_t k1, int64_t r0, int64_t c0,
                         double* block) {
  double acc[kGramRows][kGramCols] = {};
  for (int64_t k = k0; k < k1; ++k) {
    const double* ak = a + k * a_sk + r0 * a_sr;
    const double* bk = b + k * ldb + c0;
    for (int r = 0; r < kGramRows; ++r) {
      const double f = kWeighted ? s[k] * ak[r * a_sr] : ak[r * a_sr];
      for (int c = 0; c < kGramCols; ++c) acc[r][c] += f * bk[c];
    }
  }
  for (int r = 0; r < kGramRows; ++r)
    for (int c = 0; c < kGramCols; ++c) block[r * kGramCols + c] = acc[r][c];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with the accumulators in registers: kGramRows x kGramCols
// doubles are 8 AVX-512 or 16 AVX2 registers.
static_assert(kGramRows == 4 && kGramCols == 16, "the vector forms below are written for 4 x 16");
template <bool kWeighted>
__attribute__((target("avx512f"))) void product_block_avx512(const double* a, int64_t a_sk, int64_t a_sr,
                                                             const double* b, int64_t ldb, const double* s,
                                                             int64_t k0, int64_t k1, int64_t r0,
                                                             int64_t c0, double* block) {
  __m512d a00 = _mm512_setzero_pd(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
          a30 = a00, a31 = a00;
  for (int64_t k = k0; k < k1; ++k) {
    const double* ak = a + k * a_sk + r0 * a_sr;
    const double* bk = b + k * ldb + c0;
    const __m512d x0 = _mm512_loadu_pd(bk), x1 = _mm512_loadu_pd(bk + 8);
    double g0 = ak[0], g1 = ak[a_sr], g2 = ak[2 * a_sr], g3 = ak[3 * a_sr];
    if (kWeighted) {
      const double sk = s[k];
      g0 *= sk;
      g1 *= sk;
      g2 *= sk;
      g3 *= sk;
    }
    const __m512d f0 = _mm512_set1_pd(g0), f1 = _mm512_set1_pd(g1);
    const __m512d f2 = _mm512_set1_pd(g2), f3 = _mm512_set1_pd(g3);
    a00 = _mm512_fmadd_pd(f0, x0, a00);
    a01 = _mm512_fmadd_pd(f0, x1, a01);
    a10 = _mm512_fmadd_pd(f1, x0, a10);
    a11 = _mm512_fmadd_pd(f1, x1, a11);
    a20 = _mm512_fmadd_pd(f2, x0, a20);
    a21 = _mm512_fmadd_pd(f2, x1, a21);
    a30 = _mm512_fmadd_pd(f3, x0, a30);
    a31 = _mm512_fmadd_pd(f3, x1, a31);
  }
  _mm512_storeu_pd(block, a00);
  _mm512_storeu_pd(block + 8, a01);
  _mm512_storeu_pd(block + 16, a10);
  _mm512_storeu_pd(block + 24, a11);
  _mm512_storeu_pd(block + 32, a20);
  _mm512_storeu_pd(block + 40, a21);
  _mm512_storeu_pd(block + 48, a30);
  _mm512_storeu_pd(block + 56, a31);
}

template <bool kWeighted>
__attribute__((target("avx2,fma"))) void product_block_avx2(const double* a, int64_t a_sk, int64_t a_sr,
                                                            const double* b, int64_t ldb, const double* s,
                                                            int64_t k0, int64_t k1, int64_t r0, int64_t c0,
                                                            double* block) {
  __m256d acc[4][4];
  for (auto& row : acc)
    for (auto& v : row) v = _mm256_setzero_pd();
  for (int64_t k = k0; k < k1; ++k) {
    const double* ak = a + k * a_sk + r0 * a_sr;
    const double* bk = b + k * ldb + c0;
    const __m256d x0 = _mm256_loadu_pd(bk), x1 = _mm256_loadu_pd(bk + 4);
    const __m256d x2 = _mm256_loadu_pd(bk + 8), x3 = _mm256_loadu_pd(bk + 12);
    for (int r = 0; r < 4; ++r) {
      const __m256d f = _mm256_set1_pd(kWeighted ? s[k] * ak[r * a_sr] : ak[r * a_sr]);
      acc[r][0] = _mm256_fmadd_pd(f, x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_pd(f, x1, acc[r][1]);
      acc[r][2] = _mm256_fmadd_pd(f, x2, acc[r][2]);
      acc[r][3] = _mm256_fmadd_pd(f, x3, acc[r][3]);
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) _mm256_storeu_pd(block + r * 16 + 4 * c, acc[r][c]);
}
#endif

using ProductFn = void (*)(const double*, int64_t, int64_t, const double*, int64_t, const double*,
                           int64_t, int64_t, int64_t, int64_t, double*);
struct ProductFns {
  ProductFn weighted, plain;
};
ProductFns pick_product() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {product_block_avx512<true>, product_block_avx512<false>};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {product_block_avx2<true>, product_block_avx2<false>};
#endif
  return {product_block_plain<true>, product_block_plain<false>};
}
const ProductFns kProduct = pick_product();

}  // namespace

void gram_block(const double* u, int64_t ldu, const double* s, int64_t b0, int64_t b1, int64_t r0,
                int64_t c0, double* block) {
  kProduct.weighted(u, ldu, 1, u, ldu, s, b0, b1, r0, c0, block);
}

void product_block(const double* a, int64_t a_sk, int64_t a_sr, const double* b, int64_t ldb,
                   int64_t k0, int64_t k1, int64_t r0, int64_t c0, double* block) {
  kProduct.plain(a, a_sk, a_sr, b, ldb, nullptr, k0, k1, r0, c0, block);
}

}  // namespace dirmn
