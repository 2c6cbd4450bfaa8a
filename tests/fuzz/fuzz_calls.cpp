// fuzz_calls.cpp: a libFuzzer harness for the arguments around a table --
// strides and extents (up to 2^63 and through the end of the address
// space), options and result structs of any size, row weights, starts and
// the interrupt callback -- of every function that takes them:
// dirmn_loglik_sum, dirmn_loglik_rowwise_derivatives, dirmn_fit,
// dirmn_mixture_fit, dirmn_mixture_get_params, _get_responsibilities,
// _get_info, dirmn_mixture_assign, dirmn_reg_fit, _get_coef,
// _get_std_errors, dirmn_counts_create_dense's strides,
// dirmn_last_error_location; and the sampling section's and the copies'
// extents, parameters (alpha and log alpha at and past every boundary),
// sizes, strides and options: dirmn_sample, dirmn_sample_rowwise,
// dirmn_moments, dirmn_counts_copy_dense, dirmn_counts_copy_sparse,
// dirmn_test_groups and the two options' init_sized functions. (fuzz_counts.cpp
// fuzzes table contents and the likelihoods.)
//
// The table is small and valid; the arguments around it are not. As in
// fuzz_counts.cpp, nothing the harness passes lets a correct library read
// or write outside the caller's buffers: strides either fit the buffer, or
// reach past what a pointer holds (which the header says is OVERFLOW), or
// are below 1. Every call is held to the contract: a failure has a
// message and leaves every output byte unchanged; invalid arguments always
// fail; a success writes finite values where the header promises them, and
// a fit that says converged has a finite log-likelihood. The newer
// functions' failures also carry a status their header entry lists; a
// sampled table's rows total their sizes (row totals and a dense copy), the
// same for another thread count; copies put every cell where the strides
// say and nothing elsewhere; moments have no NaN and a symmetric
// covariance; a group test's result is within its ranges.
#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <tuple>
#include <vector>

namespace {

constexpr int64_t kRows = 24, kCols = 6;
constexpr size_t kCap = kBufferBytes / sizeof(double);

__int128 last_offset(int64_t n1, int64_t s1, int64_t n2, int64_t s2) {
  return static_cast<__int128>(n1 > 1 ? n1 - 1 : 0) * (n1 > 1 ? s1 : 0) +
         static_cast<__int128>(n2 > 1 ? n2 - 1 : 0) * (n2 > 1 ? s2 : 0);
}

// Strides for an n1 x n2 array of `bytes`-byte elements (doubles unless
// said): ones that fit the buffer, huge ones whose byte extent passes
// PTRDIFF_MAX (must fail), or ones below 1 (must fail). Returns the
// elements to allocate.
size_t fuzz_strides(FuzzedDataProvider& p, int64_t n1, int64_t n2, int64_t* s1, int64_t* s2,
                    bool output, Expect* e, size_t bytes = sizeof(double)) {
  static const int64_t kHuge[] = {int64_t{1} << 60, int64_t{1} << 61, int64_t{1} << 62,
                                  (int64_t{1} << 62) + 3, INT64_MAX, INT64_MAX / 2 + 1};
  const bool row_major = p.ConsumeBool();
  *s1 = row_major ? n2 : 1;
  *s2 = row_major ? 1 : n1;
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: *s1 = kHuge[p.ConsumeIntegralInRange<size_t>(0, std::size(kHuge) - 1)]; break;
    case 1: *s2 = kHuge[p.ConsumeIntegralInRange<size_t>(0, std::size(kHuge) - 1)]; break;
    case 2: (p.ConsumeBool() ? *s1 : *s2) = p.ConsumeIntegralInRange<int64_t>(-3, 0); break;
    case 3: {  // n2 may be any extent, INT64_MAX included
      int64_t padded;
      if (!__builtin_add_overflow(*s1, p.ConsumeIntegralInRange<int64_t>(0, 4), &padded)) *s1 = padded;
      break;
    }
    case 4: *s1 = p.ConsumeIntegralInRange<int64_t>(1, 3); *s2 = p.ConsumeIntegralInRange<int64_t>(1, 3); break;
    default: break;
  }
  if ((n1 > 1 && *s1 < 1) || (n2 > 1 && *s2 < 1)) {
    e->fail("stride below 1");
    return 1;
  }
  const __int128 last = last_offset(n1, *s1, n2, *s2);
  if (last + 1 > static_cast<__int128>(PTRDIFF_MAX / bytes)) {  // (no __int128 overflow)
    e->fail("extent beyond a pointer");
    return 1;
  }
  if (last + 1 > static_cast<__int128>(kCap)) {  // valid, but not for this buffer
    *s1 = row_major ? n2 : 1;
    *s2 = row_major ? 1 : n1;
  }
  if (output && n1 > 1 && n2 > 1) {
    const bool plain = (*s2 == 1 && *s1 >= n2) || (*s1 == 1 && *s2 >= n1) ||
                       (*s1 >= *s2 && *s1 >= n2 * *s2) || (*s2 > *s1 && *s2 >= n1 * *s1);
    if (!plain) e->fail("overlapping output");
  }
  return static_cast<size_t>(last_offset(n1, *s1, n2, *s2) + 1);
}

// An array of n doubles the harness owns, filled with sentinel bytes.
struct Out {
  std::vector<double> v;
  std::vector<double> before;
  explicit Out(size_t n) : v(std::max<size_t>(n, 1)) {
    std::memset(v.data(), 0xa7, v.size() * sizeof(double));
    before = v;
  }
  bool unchanged() const { return std::memcmp(v.data(), before.data(), v.size() * sizeof(double)) == 0; }
};

// Row weights: ordinary, spanning the double range, with a bad one, or NULL.
std::vector<double> fuzz_weights(FuzzedDataProvider& p, Expect* e, bool* null) {
  *null = p.ConsumeIntegralInRange<int>(0, 3) == 0;
  std::vector<double> w(kRows, 1.0);
  if (*null) return w;
  const int mode = p.ConsumeIntegralInRange<int>(0, 5);
  for (double& x : w) {
    x = mode == 0 ? p.ConsumeIntegralInRange<int>(0, 3)
                  : mode <= 2 ? std::pow(10.0, p.ConsumeFloatingPointInRange<double>(-300.0, 300.0))
                              : p.ConsumeFloatingPointInRange<double>(0.0, 5.0);
  }
  if (mode == 5) {
    static const double kBad[] = {-1.0, NAN, INFINITY, -0.5};
    w[p.ConsumeIntegralInRange<size_t>(0, kRows - 1)] =
        kBad[p.ConsumeIntegralInRange<size_t>(0, std::size(kBad) - 1)];
    e->fail("a weight is negative or not finite");
  }
  // Zero weights may leave no row with weight (refused); weights near 1e300
  // may take the weighted sums past a double (OVERFLOW).
  if (mode <= 2) e->either("weights may leave no row, or overflow the weighted sums");
  return w;
}

// A size-prefixed struct of type T at any declared size, in a buffer that
// holds at least sizeof(T) + 16 bytes: its tail must stay untouched.
template <class T>
struct Sized {
  std::vector<unsigned char> buf;
  size_t size = sizeof(T);
  void make(FuzzedDataProvider& p, const T& value) {
    switch (p.ConsumeIntegralInRange<int>(0, 5)) {  // (sizeof(T) once the input runs out)
      case 5: size = p.ConsumeIntegralInRange<size_t>(0, sizeof(T) + 32); break;
      case 4: size = sizeof(size_t) + p.ConsumeIntegralInRange<size_t>(0, sizeof(T)); break;
      default: size = sizeof(T); break;
    }
    buf.assign(std::max(size, sizeof(T)) + 16, 0xc5);
    std::memcpy(buf.data(), &value, sizeof(T));
    std::memcpy(buf.data(), &size, sizeof(size_t));
  }
  T* get() { return reinterpret_cast<T*>(buf.data()); }
  // Whether the declared size covers `field` (at offset, of bytes).
  bool covers(size_t offset, size_t bytes) const { return size >= offset + bytes; }
};

struct Countdown {
  int left = 0;
  static int poll(void* self) { return static_cast<Countdown*>(self)->left-- <= 0 ? 1 : 0; }
};

void arm_interrupt(FuzzedDataProvider& p, dirmn_context* ctx, Countdown* cd, Expect* e) {
  if (p.ConsumeIntegralInRange<int>(0, 7) != 0) return;
  cd->left = p.ConsumeIntegralInRange<int>(0, 3);
  dirmn_context_set_interrupt(ctx, &Countdown::poll, cd);
  e->either("interrupt armed");
}

void run_loglik_sum(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts* c) {
  Expect e;
  int64_t s1 = 0, stride = 0;
  const size_t n = fuzz_strides(p, 1, kCols, &s1, &stride, false, &e);
  std::vector<double> alpha(n, 0.75);
  bool null_w = false;
  const std::vector<double> w = fuzz_weights(p, &e, &null_w);
  Out value(1), gradient(kCols), hd(kCols), hs(1);
  static const uint32_t forms[] = {0u, DIRMN_FULL, DIRMN_KERNEL};
  const uint32_t flags = forms[p.ConsumeIntegralInRange<int>(0, 2)];
  Countdown cd;
  arm_interrupt(p, ctx, &cd, &e);
  const dirmn_status st = dirmn_loglik_sum(ctx, c, alpha.data(), stride, DIRMN_PARAM_ALPHA,
                                           null_w ? nullptr : w.data(), flags, value.v.data(),
                                           gradient.v.data(), hd.v.data(), hs.v.data());
  check_status(st, e, ctx, "dirmn_loglik_sum");
  dirmn_context_set_interrupt(ctx, nullptr, nullptr);
  if (st != DIRMN_SUCCESS) {
    if (!value.unchanged() || !gradient.unchanged() || !hd.unchanged() || !hs.unchanged())
      violated("dirmn_loglik_sum", "failed but wrote its outputs");
    return;
  }
  if (!std::isfinite(value.v[0]) || !std::isfinite(hs.v[0])) violated("dirmn_loglik_sum", "non-finite sum");
  for (int64_t v = 0; v < kCols; ++v)
    if (!std::isfinite(gradient.v[static_cast<size_t>(v)]) || !std::isfinite(hd.v[static_cast<size_t>(v)]))
      violated("dirmn_loglik_sum", "non-finite derivative");
}

void run_rowwise_derivatives(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts* c) {
  Expect e, eo;
  int64_t ps1 = 0, ps2 = 0, os1 = 0, os2 = 0;
  const size_t np = fuzz_strides(p, kRows, kCols, &ps1, &ps2, false, &e);
  const size_t no = fuzz_strides(p, kRows, kCols, &os1, &os2, true, &eo);
  std::vector<double> params(np, 1.25);
  Out ll(kRows), g(no), hd(no), hs(kRows);
  const bool use_g = p.ConsumeBool(), use_hd = p.ConsumeBool();
  // The output strides are read only where a matrix output is asked for.
  if (use_g || use_hd) merge(&e, eo);
  Countdown cd;
  arm_interrupt(p, ctx, &cd, &e);
  const dirmn_status st = dirmn_loglik_rowwise_derivatives(
      ctx, c, params.data(), ps1, ps2, DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL, ll.v.data(),
      use_g ? g.v.data() : nullptr, use_hd ? hd.v.data() : nullptr, hs.v.data(), os1, os2);
  check_status(st, e, ctx, "dirmn_loglik_rowwise_derivatives");
  dirmn_context_set_interrupt(ctx, nullptr, nullptr);
  if (st != DIRMN_SUCCESS &&
      (!ll.unchanged() || !g.unchanged() || !hd.unchanged() || !hs.unchanged()))
    violated("dirmn_loglik_rowwise_derivatives", "failed but wrote its outputs");
}

void run_fit(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts* c) {
  Expect e;
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  if (p.ConsumeBool()) {
    static const double kTol[] = {1e-10, 1e-3, 0.0, -1.0, NAN, INFINITY, 1e-300};
    o.tolerance = kTol[p.ConsumeIntegralInRange<size_t>(0, std::size(kTol) - 1)];
  }
  o.max_iterations = p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(-2, 200) : 1000;
  o.flags = p.ConsumeIntegralInRange<int>(0, 7) == 0 ? p.ConsumeIntegral<uint32_t>() : 0u;
  bool null_w = false;
  Expect ew;  // the weights' verdict, where the options' size reaches them
  std::vector<double> w = fuzz_weights(p, &ew, &null_w);
  std::vector<double> start(kCols);
  for (double& s : start) s = std::pow(10.0, p.ConsumeFloatingPointInRange<double>(-320.0, 308.0));
  if (p.ConsumeIntegralInRange<int>(0, 7) == 0) {
    start[p.ConsumeIntegralInRange<size_t>(0, kCols - 1)] = p.ConsumeBool() ? 0.0 : NAN;
  }
  const bool use_start = p.ConsumeBool();
  Out hess(kCols);
  o.weights = null_w ? nullptr : w.data();
  o.start = use_start ? start.data() : nullptr;
  o.hessian_diag = p.ConsumeBool() ? hess.v.data() : nullptr;
  Sized<dirmn_fit_options> so;
  so.make(p, o);
  const bool null_o = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  // What the library reads of it: the fields its declared size covers.
  const auto has = [&](size_t off, size_t bytes) { return !null_o && so.covers(off, bytes); };
  if (!null_o && so.size < sizeof(size_t)) e.fail("options->size too small");
  if (has(offsetof(dirmn_fit_options, tolerance), sizeof(double)) &&
      (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance)))
    e.fail("tolerance not positive and finite");
  if (has(offsetof(dirmn_fit_options, max_iterations), sizeof(int)) && o.max_iterations < 0)
    e.fail("max_iterations negative");
  if (has(offsetof(dirmn_fit_options, flags), sizeof(uint32_t)) &&
      ((o.flags & ~(DIRMN_FULL | DIRMN_KERNEL)) || ((o.flags & DIRMN_FULL) && (o.flags & DIRMN_KERNEL))))
    e.fail("unknown flags, or both forms");
  if (has(offsetof(dirmn_fit_options, start), sizeof(void*)) && use_start)
    for (double s : start)
      if (!(s > 0.0) || !std::isfinite(s)) e.fail("a start is not positive and finite");
  if (has(offsetof(dirmn_fit_options, weights), sizeof(void*)) && !null_w) merge(&e, ew);
  Out alpha(kCols), se(kCols);
  Sized<dirmn_fit_result> sr;
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = alpha.v.data();
  r.std_error_alpha = p.ConsumeBool() ? se.v.data() : nullptr;
  sr.make(p, r);
  if (sr.size < offsetof(dirmn_fit_result, zero_columns) + sizeof(int64_t)) e.fail("result->size too small");
  const std::vector<unsigned char> result_before = sr.buf;
  Countdown cd;
  arm_interrupt(p, ctx, &cd, &e);
  const dirmn_status st = dirmn_fit(ctx, c, null_o ? nullptr : so.get(), sr.get());
  check_status(st, e, ctx, "dirmn_fit");
  dirmn_context_set_interrupt(ctx, nullptr, nullptr);
  if (st != DIRMN_SUCCESS) {
    if (sr.buf != result_before || !alpha.unchanged() || !se.unchanged() || !hess.unchanged())
      violated("dirmn_fit", "failed but wrote its outputs");
    return;
  }
  if (std::memcmp(sr.buf.data() + sr.size, result_before.data() + sr.size, sr.buf.size() - sr.size) != 0)
    violated("dirmn_fit", "wrote beyond result->size");
  std::memcpy(&r, sr.buf.data(), sizeof r);
  for (int64_t v = 0; v < kCols; ++v)
    if (!std::isfinite(alpha.v[static_cast<size_t>(v)])) violated("dirmn_fit", "non-finite alpha");
  if (!std::isfinite(r.loglik) || !std::isfinite(r.loglik_kernel)) violated("dirmn_fit", "non-finite loglik");
  if (r.converged && !r.multinomial_limit && !std::isfinite(r.gradient_norm))
    violated("dirmn_fit", "converged with a non-finite gradient");
}

void run_mixture(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_context* other, dirmn_counts* c) {
  Expect e;
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.objective = static_cast<dirmn_mixture_objective>(fuzz_enum(p, 2));
  o.init = static_cast<dirmn_mixture_init>(fuzz_enum(p, 4));
  o.starts = p.ConsumeIntegralInRange<int>(-1, 2);
  o.max_iterations = p.ConsumeIntegralInRange<int>(-1, 30);
  o.tolerance = p.ConsumeBool() ? 1e-9 : p.ConsumeBool() ? -1.0 : 1e-4;
  o.seed = p.ConsumeIntegral<uint64_t>();
  bool null_w = false;
  Expect ew;
  std::vector<double> w = fuzz_weights(p, &ew, &null_w);
  o.weights = null_w ? nullptr : w.data();
  Sized<dirmn_mixture_options> so;
  so.make(p, o);
  const auto has = [&](size_t off, size_t bytes) { return so.covers(off, bytes); };
  if (so.size < sizeof(size_t)) e.fail("options->size too small");
  if (has(offsetof(dirmn_mixture_options, objective), sizeof(int)) && (o.objective < 0 || o.objective > 1))
    e.fail("unknown objective");
  if (has(offsetof(dirmn_mixture_options, init), sizeof(int)) && (o.init < 0 || o.init > 3))
    e.fail("unknown init");
  if (has(offsetof(dirmn_mixture_options, starts), sizeof(int)) && o.starts < 1) e.fail("starts < 1");
  if (has(offsetof(dirmn_mixture_options, max_iterations), sizeof(int)) && o.max_iterations < 1)
    e.fail("max_iterations < 1");
  if (has(offsetof(dirmn_mixture_options, tolerance), sizeof(double)) && !(o.tolerance > 0.0))
    e.fail("tolerance not positive");
  if (has(offsetof(dirmn_mixture_options, weights), sizeof(void*)) && !null_w) merge(&e, ew);
  const int k = p.ConsumeIntegralInRange<int>(-1, 4);
  if (k < 1) e.fail("k < 1");
  else e.either("k may exceed the rows with counts");
  if (std::getenv("DIRMN_FUZZ_TRACE"))
    std::fprintf(stderr, "mixture k %d objective %d init %d starts %d maxit %d tol %g size %zu w %s [%g %g]\n",
                 k, o.objective, o.init, o.starts, o.max_iterations, o.tolerance, so.size,
                 null_w ? "null" : "set", w[0], w[1]);
  dirmn_mixture* const kSentinel = reinterpret_cast<dirmn_mixture*>(uintptr_t{0x6b6b});
  dirmn_mixture* m = kSentinel;
  const dirmn_status st = dirmn_mixture_fit(ctx, c, k, so.get(), &m);
  check_status(st, e, ctx, "dirmn_mixture_fit");
  if (st != DIRMN_SUCCESS) {
    if (m != kSentinel) violated("dirmn_mixture_fit", "failed but wrote *mixture");
    return;
  }
  // Its parameters, responsibilities and info through fuzzed strides and sizes.
  dirmn_mixture_info info;
  info.size = sizeof info;
  if (dirmn_mixture_get_info(m, &info) != DIRMN_SUCCESS) violated("dirmn_mixture_get_info", "failed");
  if (!std::isfinite(info.loglik) || !std::isfinite(info.bic) || !std::isfinite(info.laplace))
    violated("dirmn_mixture_get_info", "non-finite criteria");
  {
    Expect ep;
    int64_t s1 = 0, s2 = 0;
    const size_t n = fuzz_strides(p, k, kCols, &s1, &s2, true, &ep);
    Out a(n), pi(static_cast<size_t>(k));
    const dirmn_status sp = dirmn_mixture_get_params(m, a.v.data(), s1, s2, pi.v.data());
    check_status(sp, ep, nullptr, "dirmn_mixture_get_params");
    if (sp != DIRMN_SUCCESS && (!a.unchanged() || !pi.unchanged()))
      violated("dirmn_mixture_get_params", "failed but wrote its outputs");
  }
  {
    Expect ep;
    int64_t s1 = 0, s2 = 0;
    const size_t n = fuzz_strides(p, kRows, k, &s1, &s2, true, &ep);
    Out z(n);
    const bool assign = p.ConsumeBool();
    dirmn_context* use = assign && p.ConsumeIntegralInRange<int>(0, 7) == 0 ? other : ctx;
    if (use != ctx) ep.fail("counts from another context");
    const dirmn_status sp = assign ? dirmn_mixture_assign(use, m, c, z.v.data(), s1, s2)
                                   : dirmn_mixture_get_responsibilities(m, z.v.data(), s1, s2);
    check_status(sp, ep, assign ? use : nullptr, assign ? "dirmn_mixture_assign" : "dirmn_mixture_get_responsibilities");
    if (sp != DIRMN_SUCCESS && !z.unchanged()) violated("mixture outputs", "failed but wrote them");
  }
  dirmn_mixture_destroy(m);
}

// dirmn_reg_fit through fuzzed design strides, options sizes and weights,
// then its coefficients and standard errors through fuzzed output strides.
void run_regression(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts* c) {
  Expect e;
  const int64_t pcov = p.ConsumeIntegralInRange<int64_t>(-1, 3);
  if (pcov < 1) e.fail("p < 1");
  const int64_t pd = std::max<int64_t>(pcov, 1);
  int64_t s1 = 0, s2 = 0;
  const size_t n = fuzz_strides(p, kRows, pd, &s1, &s2, false, &e);
  std::vector<double> x(n);
  for (double& v : x) v = p.ConsumeFloatingPointInRange<double>(-3.0, 3.0);
  for (int64_t b = 0; b < kRows && s1 >= 1 && static_cast<size_t>(b * s1) < n; ++b) x[static_cast<size_t>(b * s1)] = 1.0;
  if (p.ConsumeIntegralInRange<int>(0, 7) == 0) {
    x[p.ConsumeIntegralInRange<size_t>(0, n - 1)] = p.ConsumeBool() ? NAN : -INFINITY;
    e.either("a covariate may be non-finite");
  }
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  if (p.ConsumeBool()) {
    static const double kTol[] = {1e-10, 1e-3, 0.0, -1.0, NAN, INFINITY, 1e-300};
    o.tolerance = kTol[p.ConsumeIntegralInRange<size_t>(0, std::size(kTol) - 1)];
  }
  o.max_iterations = p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(-2, 50) : 200;
  bool null_w = false;
  Expect ew;
  std::vector<double> w = fuzz_weights(p, &ew, &null_w);
  o.weights = null_w ? nullptr : w.data();
  if (p.ConsumeBool()) {  // the model and its identification, in and out of range
    o.model = static_cast<dirmn_reg_model>(p.ConsumeIntegralInRange<int>(-1, 2));
    o.contrast = static_cast<dirmn_reg_contrast>(p.ConsumeIntegralInRange<int>(-1, 2));
    o.reference = p.ConsumeIntegralInRange<int64_t>(-1, kCols);
    static const double kLogPhi[] = {NAN, 2.0, -30.0, INFINITY, 700.0};
    o.log_precision = kLogPhi[p.ConsumeIntegralInRange<size_t>(0, std::size(kLogPhi) - 1)];
    o.hold_precision = p.ConsumeIntegralInRange<int>(-1, 2);
  }
  // A design for the log precision (mean/precision only), in and out of
  // range, with its own strides and now and then a non-finite entry.
  std::vector<double> z;
  Expect ez;
  const bool with_z = p.ConsumeIntegralInRange<int>(0, 3) == 0;
  if (with_z) {
    const int64_t q = p.ConsumeIntegralInRange<int64_t>(-1, 3);
    int64_t z1 = 0, z2 = 0;
    z.resize(fuzz_strides(p, kRows, std::max<int64_t>(q, 1), &z1, &z2, false, &ez));
    for (double& v : z) v = p.ConsumeFloatingPointInRange<double>(-2.0, 2.0);
    if (p.ConsumeIntegralInRange<int>(0, 7) == 0) {
      z[p.ConsumeIntegralInRange<size_t>(0, z.size() - 1)] = NAN;
      ez.either("a precision covariate may be non-finite");
    }
    if (p.ConsumeIntegralInRange<int>(0, 3) != 0) {
      o.model = DIRMN_REG_MEAN_PRECISION;
      o.log_precision = NAN;
    }
    o.precision_design = z.data();
    o.precision_covariates = q;
    o.precision_stride_row = z1;
    o.precision_stride_col = z2;
  }
  Sized<dirmn_reg_options> so;
  so.make(p, o);
  const auto has = [&](size_t off, size_t bytes) { return so.covers(off, bytes); };
  if (so.size < sizeof(size_t)) e.fail("options->size too small");
  if (with_z && has(offsetof(dirmn_reg_options, precision_design), sizeof(void*))) {
    const bool mp = has(offsetof(dirmn_reg_options, model), sizeof(o.model)) && o.model == DIRMN_REG_MEAN_PRECISION;
    const bool fitted = !has(offsetof(dirmn_reg_options, log_precision), sizeof(double)) || std::isnan(o.log_precision);
    const int64_t q = has(offsetof(dirmn_reg_options, precision_covariates), sizeof(int64_t)) ? o.precision_covariates : 0;
    if (!mp) e.fail("a precision design without the mean/precision model");
    if (!fitted) e.fail("a precision design beside a held log_precision");
    if (q < 1) e.fail("precision_covariates < 1");
    if (has(offsetof(dirmn_reg_options, precision_stride_col), sizeof(int64_t)))
      merge(&e, ez);
    else
      e.either("a precision design's strides cut off by the options' size");
  }
  if (has(offsetof(dirmn_reg_options, tolerance), sizeof(double)) &&
      (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance)))
    e.fail("tolerance not positive");
  if (has(offsetof(dirmn_reg_options, max_iterations), sizeof(int)) && o.max_iterations < 0)
    e.fail("max_iterations < 0");
  if (has(offsetof(dirmn_reg_options, weights), sizeof(void*)) && !null_w) merge(&e, ew);
  if (has(offsetof(dirmn_reg_options, model), sizeof(o.model)) && o.model != DIRMN_REG_LOGLINEAR &&
      o.model != DIRMN_REG_MEAN_PRECISION)
    e.fail("model out of range");
  if (has(offsetof(dirmn_reg_options, contrast), sizeof(o.contrast)) && o.contrast != DIRMN_REG_REFERENCE &&
      o.contrast != DIRMN_REG_SUM_TO_ZERO)
    e.fail("contrast out of range");
  if (has(offsetof(dirmn_reg_options, reference), sizeof(int64_t)) && (o.reference < 0 || o.reference >= kCols))
    e.fail("reference out of range");
  if (has(offsetof(dirmn_reg_options, log_precision), sizeof(double)) && std::isinf(o.log_precision))
    e.fail("log_precision infinite");
  if (has(offsetof(dirmn_reg_options, hold_precision), sizeof(int)) && o.hold_precision != 0 &&
      o.hold_precision != 1)
    e.fail("hold_precision not 0 or 1");
  // A fuzzed table may have categories without counts, a design may be
  // rank deficient over the rows with counts, and a fit may overflow.
  e.either("categories without counts, a rank-deficient design, or alpha beyond a double");
  dirmn_reg* const kSentinel = reinterpret_cast<dirmn_reg*>(uintptr_t{0x7c7c});
  dirmn_reg* r = kSentinel;
  const dirmn_status st = dirmn_reg_fit(ctx, c, x.data(), kRows, pcov, s1, s2, so.get(), &r);
  check_status(st, e, ctx, "dirmn_reg_fit");
  if (st != DIRMN_SUCCESS) {
    if (r != kSentinel) violated("dirmn_reg_fit", "failed but wrote *reg");
    return;
  }
  dirmn_reg_info info;
  info.size = sizeof info;
  if (dirmn_reg_get_info(r, &info) != DIRMN_SUCCESS) violated("dirmn_reg_get_info", "failed");
  if (!std::isfinite(info.loglik) || !std::isfinite(info.gradient_norm))
    violated("dirmn_reg_get_info", "non-finite loglik or gradient");
  for (int which = 0; which < 2; ++which) {
    Expect eo;
    int64_t t1 = 0, t2 = 0;
    const size_t m = fuzz_strides(p, pcov, kCols, &t1, &t2, true, &eo);
    if (which == 1 && !info.hessian_definite) eo.fail("no covariance");
    Out a(m);
    const dirmn_status so2 = which == 0 ? dirmn_reg_get_coef(r, a.v.data(), t1, t2)
                                        : dirmn_reg_get_std_errors(r, a.v.data(), t1, t2);
    check_status(so2, eo, nullptr, which == 0 ? "dirmn_reg_get_coef" : "dirmn_reg_get_std_errors");
    if (so2 != DIRMN_SUCCESS && !a.unchanged()) violated("dirmn_reg_get_*", "failed but wrote its output");
  }
  dirmn_reg_destroy(r);
}

void run_dense_strides(FuzzedDataProvider& p, dirmn_context* ctx) {
  Expect e;
  int64_t s1 = 0, s2 = 0;
  const size_t n = fuzz_strides(p, kRows, kCols, &s1, &s2, false, &e);
  std::vector<double> x(n, 2.0);
  dirmn_counts* const kSentinel = reinterpret_cast<dirmn_counts*>(uintptr_t{0x5a5a});
  dirmn_counts* c = kSentinel;
  const dirmn_status st = dirmn_counts_create_dense(ctx, &c, kRows, kCols, DIRMN_FLOAT64, x.data(), s1, s2, nullptr);
  check_status(st, e, ctx, "dirmn_counts_create_dense");
  if (st != DIRMN_SUCCESS && c != kSentinel) violated("dirmn_counts_create_dense", "failed but wrote *counts");
  if (st == DIRMN_SUCCESS) dirmn_counts_destroy(c);
}

// ---- Sampling, moments, copies out and the group test ---------------------

// Outcome tallies of the functions below (DIRMN_FUZZ_STATS), as fuzz_support's.
struct NewTally {
  long sample_ok = 0, sample_fail = 0, moments_ok = 0, moments_fail = 0, copy_ok = 0, copy_fail = 0;
  long groups_ok = 0, groups_fail = 0;
  ~NewTally() {
    if (std::getenv("DIRMN_FUZZ_STATS") == nullptr) return;
    std::fprintf(stderr,
                 "dirmn_sample(_rowwise) %ld ok / %ld rejected; dirmn_moments %ld / %ld; "
                 "dirmn_counts_copy_* %ld / %ld; dirmn_test_groups %ld / %ld\n",
                 sample_ok, sample_fail, moments_ok, moments_fail, copy_ok, copy_fail, groups_ok,
                 groups_fail);
  }
};
NewTally g_new;

// A failure's status is a named one, among those the function's header
// entry lists (never INTERNAL).
void check_listed(dirmn_status st, const dirmn_context* ctx, const char* call,
                  std::initializer_list<dirmn_status> listed) {
  if (st == DIRMN_SUCCESS) return;
  if (std::strcmp(dirmn_status_name(st), "DIRMN_STATUS_UNKNOWN") == 0) violated(call, "returned an unnamed status");
  for (dirmn_status s : listed)
    if (st == s) return;
  std::fprintf(stderr, "%s: %s: %s\n", call, dirmn_status_name(st), dirmn_last_error(ctx));
  violated(call, "returned a status its header entry does not list");
}

// The functions below draw their hostile values with rare() and
// fuzz_kind(), which give the ordinary value once the input's bytes run
// out (libFuzzer's provider then answers each range's minimum), so that
// short inputs reach the success paths.
bool rare(FuzzedDataProvider& p, int n) { return p.ConsumeIntegralInRange<int>(0, n - 1) == n - 1; }
int fuzz_kind(FuzzedDataProvider& p, int n_valid) {
  if (!rare(p, 8)) return p.ConsumeIntegralInRange<int>(0, n_valid - 1);
  return p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(-1, n_valid + 1) : p.ConsumeIntegral<int>();
}
void maybe_interrupt(FuzzedDataProvider& p, dirmn_context* ctx, Countdown* cd, Expect* e) {
  if (!rare(p, 8)) return;
  cd->left = p.ConsumeIntegralInRange<int>(0, 3);
  dirmn_context_set_interrupt(ctx, &Countdown::poll, cd);
  e->either("interrupt armed");
}

// Extents: mostly 1 .. max; sometimes 0 or negative, or at least 2^60, so
// large that every array they size reaches past what a pointer holds (the
// library must refuse them before it reads or allocates anything).
constexpr int64_t kHugeExtents[] = {int64_t{1} << 60, (int64_t{1} << 61) + 1, int64_t{1} << 62, INT64_MAX};
int64_t fuzz_extent(FuzzedDataProvider& p, int64_t max) {
  switch (p.ConsumeIntegralInRange<int>(0, 31)) {
    case 30: return p.ConsumeBool() ? p.ConsumeIntegralInRange<int64_t>(-2, 0) : INT64_MIN;
    case 31: return kHugeExtents[p.ConsumeIntegralInRange<size_t>(0, std::size(kHugeExtents) - 1)];
    default: return p.ConsumeIntegralInRange<int64_t>(1, max);
  }
}
bool huge(int64_t n) { return n >= (int64_t{1} << 60); }

// A parameter as a caller passes it, alpha or log alpha, from values that
// straddle each boundary the library draws.
double fuzz_param(FuzzedDataProvider& p, bool log_kind) {
  static const double kAlpha[] = {0.0,  -0.0,  -1.0,  NAN,        INFINITY, -INFINITY, 1e-310,
                                  1e-300, 1e300, 1e301, 4.9e-324, 1.7e308,  0.5,       3.0};
  static const double kLog[] = {NAN,   INFINITY, -INFINITY, -690.7755278982137, 690.7755278982137,
                                -690.776, 690.776, 700.0, -740.0, -746.0, 709.79, 0.0};
  if (rare(p, 6))
    return log_kind ? kLog[p.ConsumeIntegralInRange<size_t>(0, std::size(kLog) - 1)]
                    : kAlpha[p.ConsumeIntegralInRange<size_t>(0, std::size(kAlpha) - 1)];
  const double e = p.ConsumeFloatingPointInRange<double>(-2.0, 2.0);
  return log_kind ? e * 2.302585092994046 : std::pow(10.0, e);
}

// The contract on one vector of parameters (x[i * stride], i < n): each
// converts to a positive, finite alpha (log alpha within exp's range,
// args.cpp's bounds), their sum is finite, and the sampler takes alpha in
// [1e-306, 1e306] only.
void params_verdict(const double* x, int64_t n, int64_t stride, bool log_kind, bool sampler, Expect* e) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i * stride];
    double a = v;
    if (log_kind) {
      if (!std::isfinite(v) || v > 709.782712893384 || v < -745.1332191019411) {
        e->fail("log alpha beyond exp's range");
        return;
      }
      a = std::exp(v);
    } else if (!(v > 0.0) || !std::isfinite(v)) {
      e->fail("alpha not positive and finite");
      return;
    }
    if (sampler && !(a >= 1e-306 && a <= 1e306)) e->fail("alpha outside the sampler's range");
    sum += a;
  }
  if (!std::isfinite(sum)) e->fail("the sum of alpha overflows");
}

// Fills the parameters an n_vec x cols layout reads (vector j, entry v at
// x[j sj + v si]) from a small palette of fuzz_param values.
void fill_params(FuzzedDataProvider& p, std::vector<double>* x, int64_t n_vec, int64_t cols, int64_t sj,
                 int64_t si, bool log_kind) {
  double palette[4];
  const size_t np = p.ConsumeIntegralInRange<size_t>(1, 4);
  for (size_t i = 0; i < np; ++i) palette[i] = fuzz_param(p, log_kind);
  // Mostly palette[0] everywhere but a few cells.
  const bool sparse_bad = p.ConsumeBool();
  const uint32_t seed = p.ConsumeIntegral<uint32_t>();
  for (int64_t j = 0; j < n_vec; ++j)
    for (int64_t v = 0; v < cols; ++v) {
      const uint32_t h = (static_cast<uint32_t>(j * cols + v) * 2654435761u) ^ seed;
      const size_t pick = sparse_bad && (h >> 11) % 7 != 0 ? 0 : (h >> 7) % np;
      (*x)[static_cast<size_t>(j * sj + v * si)] = palette[pick];
    }
}

int64_t fuzz_sample_size(FuzzedDataProvider& p) {
  static const int64_t kSpecial[] = {-1, INT64_MIN, int64_t{1} << 31, (int64_t{1} << 31) - 1,
                                     INT64_MAX, 0, int64_t{1} << 40, -(int64_t{1} << 31)};
  switch (p.ConsumeIntegralInRange<int>(0, 19)) {
    case 19: return kSpecial[p.ConsumeIntegralInRange<size_t>(0, std::size(kSpecial) - 1)];
    case 16:
    case 17:
    case 18: return p.ConsumeIntegralInRange<int64_t>(0, 3000);
    default: return p.ConsumeIntegralInRange<int64_t>(0, 60);
  }
}

// The table of `counts` as doubles, row-major, through dirmn_counts_copy_dense.
std::vector<double> dense_of(dirmn_context* ctx, const dirmn_counts* c, int64_t rows, int64_t cols) {
  std::vector<double> d(static_cast<size_t>(rows * cols));
  if (dirmn_counts_copy_dense(ctx, c, DIRMN_FLOAT64, d.data(), cols, 1) != DIRMN_SUCCESS)
    violated("dirmn_counts_copy_dense", "refused a valid FLOAT64 copy:", dirmn_last_error(ctx));
  return d;
}

// dirmn_sample and dirmn_sample_rowwise through fuzzed extents, parameters,
// strides, sizes and options; a sampled table is held to its sizes.
void run_sample(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_context* other, bool rowwise) {
  const char* fn = rowwise ? "dirmn_sample_rowwise" : "dirmn_sample";
  Expect e;
  const int64_t rows = fuzz_extent(p, 64), cols = fuzz_extent(p, 64);
  int64_t k = rowwise ? rows : fuzz_extent(p, 6);
  if (!rowwise && rare(p, 16)) k = p.ConsumeIntegralInRange<int64_t>(7, 2000);
  if (rows <= 0 || cols <= 0) e.fail("rows or cols not positive");
  if (huge(cols)) e.fail("cols at least 2^32");
  if (!rowwise && k <= 0) e.fail("k not positive");
  const int pk = fuzz_kind(p, 2);
  if (pk != DIRMN_PARAM_ALPHA && pk != DIRMN_PARAM_LOG_ALPHA) e.fail("unknown param kind");
  const bool log_kind = pk == DIRMN_PARAM_LOG_ALPHA;
  // The parameters, n_vec x cols, through fuzzed strides.
  const int64_t n_vec = k;
  Expect ep;
  int64_t sj = cols, si = 1;
  size_t np = 1;
  if (p.ConsumeBool()) np = fuzz_strides(p, n_vec, cols, &sj, &si, false, &ep);
  else if (n_vec > 0 && cols > 0 && !huge(n_vec) && !huge(cols)) np = static_cast<size_t>(n_vec * cols);
  else if (n_vec > 1 || cols > 1) ep.fail("params reach past a pointer");
  merge(&e, ep);
  const bool small = rows > 0 && !huge(rows) && cols > 0 && !huge(cols) && n_vec > 0 && !huge(n_vec);
  std::vector<double> params(std::max<size_t>(np, 1), 1.0);
  if (small && ep.v != Verdict::kMustFail) {
    const int64_t sj1 = n_vec > 1 ? sj : 0, si1 = cols > 1 ? si : 0;
    fill_params(p, &params, n_vec, cols, sj1, si1, log_kind);
    if (pk == DIRMN_PARAM_ALPHA || log_kind)
      for (int64_t j = 0; j < n_vec && e.v != Verdict::kMustFail; ++j)
        params_verdict(params.data() + j * sj1, cols, si1, log_kind, true, &e);
  }
  // The sizes: one for every row (stride 0), or strided; huge strides
  // reach past a pointer (with two rows or more).
  int64_t ss = 1;
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 12:
    case 13: ss = 0; break;
    case 14: ss = p.ConsumeIntegralInRange<int64_t>(2, 3); break;
    case 15: ss = p.ConsumeBool() ? -1 : -(int64_t{1} << 62); break;
    case 11: ss = kHugeExtents[p.ConsumeIntegralInRange<size_t>(0, std::size(kHugeExtents) - 1)]; break;
    default: break;
  }
  if (huge(rows) && ss == 0) ss = 1;  // one size for 2^60 rows would be drawn
  size_t nsizes = 1;
  bool sizes_ok = small;  // whether the sizes the library reads are in the buffer
  if (ss < 0) {
    e.fail("sizes_stride negative");
    sizes_ok = false;
  } else if (ss > 0 && rows > 1) {
    if (static_cast<__int128>(rows - 1) * ss + 1 > PTRDIFF_MAX / 8) {
      e.fail("sizes reach past a pointer");
      sizes_ok = false;
    } else if (small) {
      nsizes = static_cast<size_t>((rows - 1) * ss + 1);
    }
  }
  std::vector<int64_t> sizes(nsizes);
  {
    int64_t palette[4];
    const size_t n = p.ConsumeIntegralInRange<size_t>(1, 4);
    for (size_t i = 0; i < n; ++i) palette[i] = fuzz_sample_size(p);
    for (size_t i = 0; i < nsizes; ++i) sizes[i] = palette[(i * 2654435761u >> 5) % n];
  }
  const int64_t nread = ss == 0 || rows == 1 ? 1 : rows;  // sizes read: nread at stride ss
  if (sizes_ok)
    for (int64_t b = 0; b < nread; ++b) {
      const int64_t n = sizes[static_cast<size_t>(b * ss)];
      if (n < 0 || n > INT32_MAX) e.fail("a size outside 0 .. 2^31 - 1");
    }
  const auto size_of = [&](int64_t b) { return sizes[static_cast<size_t>(ss == 0 || rows == 1 ? 0 : b * ss)]; };
  // The options.
  const int64_t nrows = small ? rows : 1;
  std::vector<int64_t> component(static_cast<size_t>(nrows));
  const int64_t kk = std::min<int64_t>(std::max<int64_t>(k, -2), 64);
  {
    const uint32_t seed = p.ConsumeIntegral<uint32_t>();
    for (size_t b = 0; b < component.size(); ++b)
      component[b] = static_cast<int64_t>(((static_cast<uint32_t>(b) * 2654435761u) ^ seed) >> 7) % std::max<int64_t>(kk, 1);
    if (rare(p, 8))  // one component out of range
      component[p.ConsumeIntegralInRange<size_t>(0, component.size() - 1)] =
          p.ConsumeBool() ? p.ConsumeIntegralInRange<int64_t>(-2, -1) : kk + p.ConsumeIntegralInRange<int64_t>(0, 1);
  }
  const int64_t nk = !rowwise && k > 0 && !huge(k) ? k : 1;
  std::vector<double> mixture_weights(static_cast<size_t>(nk));
  {
    static const double kW[] = {0.0, 1.0, 0.5, -1.0, NAN, INFINITY, 1e308, 1e-320, 2.0, 3.0};
    const bool all_good = !rare(p, 4);
    for (double& w : mixture_weights)
      w = all_good ? p.ConsumeFloatingPointInRange<double>(0.0, 4.0)
                   : kW[p.ConsumeIntegralInRange<size_t>(0, std::size(kW) - 1)];
  }
  std::vector<int64_t> component_out(static_cast<size_t>(nrows), int64_t{0x5a5a5a5a5a5a5a5a});
  const std::vector<int64_t> component_out_before = component_out;
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  o.seed = p.ConsumeIntegral<uint64_t>();
  // With one vector per row the arrays are refused: mostly none.
  const int arrays = rowwise && p.ConsumeIntegralInRange<int>(0, 7) != 0 ? 0 : p.ConsumeIntegralInRange<int>(0, 7);
  o.component = arrays & 1 ? component.data() : nullptr;
  o.mixture_weights = arrays & 2 ? mixture_weights.data() : nullptr;
  o.component_out = arrays & 4 ? component_out.data() : nullptr;
  o.storage = static_cast<dirmn_storage>(fuzz_kind(p, 3));
  // Mostly 0; now and then any row offset, the edges of its range included.
  static const int64_t kFirstRows[] = {-1, INT64_MIN, INT64_MAX, INT64_MAX - 64, 1, 1000003};
  if (rare(p, 4)) o.first_row = kFirstRows[p.ConsumeIntegralInRange<size_t>(0, std::size(kFirstRows) - 1)];
  Sized<dirmn_sample_options> so;
  so.make(p, o);
  const bool null_o = rare(p, 8);
  const auto has = [&](size_t off, size_t bytes) { return !null_o && so.covers(off, bytes); };
  if (!null_o && so.size < sizeof(size_t)) e.fail("options->size too small");
  const bool use_component = has(offsetof(dirmn_sample_options, component), sizeof(void*)) && o.component;
  const bool use_weights = has(offsetof(dirmn_sample_options, mixture_weights), sizeof(void*)) && o.mixture_weights;
  const bool use_out = has(offsetof(dirmn_sample_options, component_out), sizeof(void*)) && o.component_out;
  const dirmn_storage storage =
      has(offsetof(dirmn_sample_options, storage), sizeof(dirmn_storage)) ? o.storage : DIRMN_STORAGE_AUTO;
  if (storage < DIRMN_STORAGE_AUTO || storage > DIRMN_STORAGE_SPARSE) e.fail("unknown options->storage");
  const int64_t first_row = has(offsetof(dirmn_sample_options, first_row), sizeof(int64_t)) ? o.first_row : 0;
  if (rows > 0 && (first_row < 0 || first_row > INT64_MAX - rows)) e.fail("options->first_row out of range");
  if (rowwise && (use_component || use_weights || use_out)) e.fail("mixture options with one vector per row");
  if (!rowwise && k > 1 && small && use_component) {
    for (int64_t b = 0; b < rows; ++b)
      if (component[static_cast<size_t>(b)] < 0 || component[static_cast<size_t>(b)] >= k)
        e.fail("a component outside 0 .. k - 1");
  } else if (!rowwise && k > 1 && small && use_weights) {
    double total = 0.0;
    for (double w : mixture_weights) {
      if (!std::isfinite(w) || w < 0.0) e.fail("a bad mixture weight");
      total += w;
    }
    if (!(total > 0.0) || !std::isfinite(total)) e.fail("mixture weights without a positive finite sum");
  }
  const bool null_counts = rare(p, 32), null_params = rare(p, 32), null_sizes = rare(p, 32);
  if (null_counts || null_params || null_sizes) e.fail("a NULL array");
  Countdown cd;
  maybe_interrupt(p, ctx, &cd, &e);
  dirmn_counts* const kSentinel = reinterpret_cast<dirmn_counts*>(uintptr_t{0x3c3c});
  dirmn_counts* made = kSentinel;
  const dirmn_param param = static_cast<dirmn_param>(pk);
  const auto call = [&](dirmn_context* cx, dirmn_counts** out) {
    const double* pp = null_params ? nullptr : params.data();
    const int64_t* sz = null_sizes ? nullptr : sizes.data();
    const dirmn_sample_options* op = null_o ? nullptr : so.get();
    return rowwise ? dirmn_sample_rowwise(cx, out, rows, cols, pp, sj, si, param, sz, ss, op)
                   : dirmn_sample(cx, out, rows, cols, k, pp, sj, si, param, sz, ss, op);
  };
  const dirmn_status st = call(ctx, null_counts ? nullptr : &made);
  check_status(st, e, ctx, fn);
  check_listed(st, ctx, fn,
               {DIRMN_ERROR_NULL_POINTER, DIRMN_ERROR_INVALID_ARGUMENT, DIRMN_ERROR_INVALID_PARAMETER,
                DIRMN_ERROR_OVERFLOW, DIRMN_ERROR_OUT_OF_MEMORY, DIRMN_ERROR_CANCELLED});
  dirmn_context_set_interrupt(ctx, nullptr, nullptr);  // (clears the message)
  if (st != DIRMN_SUCCESS) {
    ++g_new.sample_fail;
    if (made != kSentinel) violated(fn, "failed but wrote *counts");
    if (component_out != component_out_before) violated(fn, "failed but wrote options->component_out");
    return;
  }
  ++g_new.sample_ok;
  // The table: its extents and storage, each row's total its size, and
  // (where asked for) the components.
  dirmn_counts_info info;
  info.size = sizeof info;
  if (dirmn_counts_get_info(made, &info) != DIRMN_SUCCESS) violated("dirmn_counts_get_info", "failed");
  if (info.rows != rows || info.cols != cols) violated(fn, "a table of other extents");
  if ((storage == DIRMN_STORAGE_DENSE && info.storage != DIRMN_STORAGE_DENSE) ||
      (storage == DIRMN_STORAGE_SPARSE && info.storage != DIRMN_STORAGE_SPARSE))
    violated(fn, "a table in other storage than options->storage asked for");
  std::vector<double> totals(static_cast<size_t>(rows));
  if (dirmn_counts_row_totals(ctx, made, totals.data()) != DIRMN_SUCCESS) violated("dirmn_counts_row_totals", "failed");
  const std::vector<double> d = dense_of(ctx, made, rows, cols);
  for (int64_t b = 0; b < rows; ++b) {
    double s = 0.0;
    for (int64_t v = 0; v < cols; ++v) {
      const double x = d[static_cast<size_t>(b * cols + v)];
      if (!(x >= 0.0) || x != std::floor(x)) violated(fn, "a count that is not a whole number >= 0");
      s += x;
    }
    if (totals[static_cast<size_t>(b)] != static_cast<double>(size_of(b)) || s != static_cast<double>(size_of(b)))
      violated(fn, "a row whose total is not its size");
  }
  if (use_out && !rowwise)
    for (int64_t b = 0; b < rows; ++b) {
      const int64_t j = component_out[static_cast<size_t>(b)];
      if (j < 0 || j >= k) violated(fn, "options->component_out outside 0 .. k - 1");
      if (k > 1 && use_component && j != component[static_cast<size_t>(b)])
        violated(fn, "options->component_out is not options->component");
    }
  if (!use_out && component_out != component_out_before) violated(fn, "wrote an array it was not given");
  // The same table on the other context's threads, when no interrupt was armed.
  if (cd.left == 0 && rare(p, 4)) {
    dirmn_counts* again = nullptr;
    if (call(other, &again) != DIRMN_SUCCESS) violated(fn, "refused on another context:", dirmn_last_error(other));
    if (dense_of(other, again, rows, cols) != d) violated(fn, "another table for another thread count");
    dirmn_counts_destroy(again);
  }
  dirmn_counts_destroy(made);
}

// dirmn_moments through fuzzed extents, parameters, sizes and outputs.
void run_moments(FuzzedDataProvider& p, dirmn_context* ctx) {
  static const char* fn = "dirmn_moments";
  Expect e;
  const int64_t cols = fuzz_extent(p, 64);
  if (cols <= 0) e.fail("cols not positive");
  const int pk = fuzz_kind(p, 2);
  if (pk != DIRMN_PARAM_ALPHA && pk != DIRMN_PARAM_LOG_ALPHA) e.fail("unknown param kind");
  static const double kSize[] = {0.0, -0.0, 1.0, 17.5, 1e6, 1e300, 1e308, 1.7976931348623157e308,
                                 -1.0, NAN, INFINITY, -INFINITY, 4.9e-324};
  const double size = rare(p, 4) ? kSize[p.ConsumeIntegralInRange<size_t>(0, std::size(kSize) - 1)]
                                      : p.ConsumeFloatingPointInRange<double>(0.0, 5000.0);
  if (!std::isfinite(size) || size < 0.0) e.fail("size not finite and >= 0");
  int64_t stride = 1;
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 15: stride = p.ConsumeIntegralInRange<int64_t>(-2, 0); break;
    case 14: stride = kHugeExtents[p.ConsumeIntegralInRange<size_t>(0, std::size(kHugeExtents) - 1)]; break;
    case 13: stride = p.ConsumeIntegralInRange<int64_t>(2, 3); break;
    default: break;
  }
  const bool small = cols > 0 && !huge(cols);
  size_t np = 1;
  if (cols > 1 && stride < 1) e.fail("params stride below 1");
  else if (cols > 1 && static_cast<__int128>(cols - 1) * stride + 1 > PTRDIFF_MAX / 8)
    e.fail("params reach past a pointer");
  else if (small) np = static_cast<size_t>(cols > 1 ? (cols - 1) * stride + 1 : 1);
  if (huge(cols)) e.fail("cols reach past a pointer");
  std::vector<double> params(np, 1.0);
  const bool log_kind = pk == DIRMN_PARAM_LOG_ALPHA;
  if (small && e.v != Verdict::kMustFail) {
    fill_params(p, &params, 1, cols, 0, cols > 1 ? stride : 0, log_kind);
    params_verdict(params.data(), cols, cols > 1 ? stride : 0, log_kind, false, &e);
  }
  // The outputs: any may be NULL; the covariance at a fuzzed leading dimension.
  const int64_t nc = small ? cols : 1;
  int64_t ld = nc;
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 15: ld = nc - 1; break;
    case 14: ld = p.ConsumeIntegralInRange<int64_t>(-1, 0); break;
    case 13: ld = kHugeExtents[p.ConsumeIntegralInRange<size_t>(0, std::size(kHugeExtents) - 1)]; break;
    case 12: ld = nc + p.ConsumeIntegralInRange<int64_t>(1, 3); break;
    default: break;
  }
  const bool want_mean = p.ConsumeBool(), want_var = p.ConsumeBool(), want_cov = p.ConsumeBool();
  size_t ncov = 1;
  if (want_cov) {
    if (ld < cols) e.fail("ld below cols");
    else if (cols > 1 && static_cast<__int128>(cols - 1) * ld + cols > PTRDIFF_MAX / 8)
      e.fail("covariance reaches past a pointer");
    else if (small) ncov = static_cast<size_t>((nc - 1) * ld + nc);
  }
  Out mean(static_cast<size_t>(nc)), var(static_cast<size_t>(nc)), cov(ncov);
  const bool null_params = rare(p, 32);
  if (null_params) e.fail("params NULL");
  const dirmn_status st = dirmn_moments(ctx, cols, null_params ? nullptr : params.data(), stride,
                                        static_cast<dirmn_param>(pk), size, want_mean ? mean.v.data() : nullptr,
                                        want_var ? var.v.data() : nullptr, want_cov ? cov.v.data() : nullptr, ld);
  check_status(st, e, ctx, fn);
  check_listed(st, ctx, fn,
               {DIRMN_ERROR_NULL_POINTER, DIRMN_ERROR_INVALID_ARGUMENT, DIRMN_ERROR_INVALID_PARAMETER,
                DIRMN_ERROR_OVERFLOW});
  if (st != DIRMN_SUCCESS) {
    ++g_new.moments_fail;
    if (!mean.unchanged() || !var.unchanged() || !cov.unchanged()) violated(fn, "failed but wrote its outputs");
    return;
  }
  ++g_new.moments_ok;
  // No NaN; means finite and within [0, size]; variances >= 0; the
  // covariance exactly symmetric with the variances on its diagonal, and
  // nothing written between its rows.
  for (int64_t v = 0; v < cols; ++v) {
    const double m = mean.v[static_cast<size_t>(v)], s2 = var.v[static_cast<size_t>(v)];
    if (want_mean && !(m >= 0.0 && m <= size)) violated(fn, "a mean outside [0, size]");
    if (want_var && !(s2 >= 0.0)) violated(fn, "a variance NaN or negative");
  }
  if (want_cov) {
    std::vector<double> before = cov.before;
    for (int64_t u = 0; u < cols; ++u)
      for (int64_t v = 0; v < cols; ++v) {
        const double c = cov.v[static_cast<size_t>(u * ld + v)];
        if (std::isnan(c)) violated(fn, "a NaN covariance");
        if (u == v ? !(c >= 0.0) : !(c <= 0.0)) violated(fn, "a covariance of the wrong sign");
        if (std::memcmp(&c, &cov.v[static_cast<size_t>(v * ld + u)], sizeof c) != 0)
          violated(fn, "a covariance that is not symmetric");
        if (want_var && std::memcmp(&cov.v[static_cast<size_t>(v * ld + v)], &var.v[static_cast<size_t>(v)], sizeof c) != 0)
          violated(fn, "a covariance whose diagonal is not the variances");
        before[static_cast<size_t>(u * ld + v)] = c;
      }
    if (std::memcmp(before.data(), cov.v.data(), before.size() * sizeof(double)) != 0)
      violated(fn, "wrote between the covariance's rows");
  }
}

// A table for the copies: a few distinct values (among them counts beyond
// INT32 and, for real-valued tables, fractions), any storage.
struct CopyTable {
  int64_t rows = 0, cols = 0;
  std::vector<double> x;
  bool real = false;
  double max = 0.0;
  dirmn_counts* c = nullptr;
  bool make(FuzzedDataProvider& p, dirmn_context* ctx) {
    rows = p.ConsumeIntegralInRange<int64_t>(1, 12);
    cols = p.ConsumeIntegralInRange<int64_t>(1, 12);
    static const double kV[] = {0.0, 0.0, 1.0, 3.0, 7.0, 2147483647.0, 2147483648.0, 5e9, 2.5, 0.25};
    double palette[4];
    const size_t np = p.ConsumeIntegralInRange<size_t>(1, 4);
    for (size_t i = 0; i < np; ++i) palette[i] = kV[p.ConsumeIntegralInRange<size_t>(0, std::size(kV) - 1)];
    const uint32_t seed = p.ConsumeIntegral<uint32_t>();
    x.resize(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < x.size(); ++i) x[i] = palette[(((static_cast<uint32_t>(i) * 2654435761u) ^ seed) >> 9) % np];
    real = rare(p, 4);
    for (double v : x) {
      if (v != std::floor(v)) real = true;
      max = std::max(max, v);
    }
    dirmn_counts_options o;
    dirmn_counts_options_init(&o);
    o.flags = real ? DIRMN_COUNTS_REAL_VALUED : 0u;
    o.storage = static_cast<dirmn_storage>(p.ConsumeIntegralInRange<int>(0, 2));
    if (dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1, &o) != DIRMN_SUCCESS)
      violated("dirmn_counts_create_dense", "refused a valid table", dirmn_last_error(ctx));
    return true;
  }
  ~CopyTable() { dirmn_counts_destroy(c); }
};

// What a cell becomes in a dtype (the header's conversions).
double as_dtype(double x, int dtype) {
  switch (dtype) {
    case DIRMN_INT32: return static_cast<double>(static_cast<int32_t>(x));
    case DIRMN_INT64: return static_cast<double>(static_cast<int64_t>(x));
    case DIRMN_FLOAT32: return static_cast<double>(static_cast<float>(x));
    default: return x;
  }
}
double read_dtype(const unsigned char* at, int dtype) {
  switch (dtype) {
    case DIRMN_INT32: { int32_t v; std::memcpy(&v, at, 4); return static_cast<double>(v); }
    case DIRMN_INT64: { int64_t v; std::memcpy(&v, at, 8); return static_cast<double>(v); }
    case DIRMN_FLOAT32: { float v; std::memcpy(&v, at, 4); return static_cast<double>(v); }
    default: { double v; std::memcpy(&v, at, 8); return v; }
  }
}
int64_t read_index(const unsigned char* at, int type) {
  if (type == DIRMN_INDEX_INT32) { int32_t v; std::memcpy(&v, at, 4); return v; }
  int64_t v;
  std::memcpy(&v, at, 8);
  return v;
}

// The value types' verdicts: known, integer types for integer counts only,
// INT32 for counts within its range.
void value_type_verdict(int dtype, const CopyTable& t, Expect* e) {
  if (!valid_dtype(dtype)) e->fail("unknown dtype");
  else if ((dtype == DIRMN_INT32 || dtype == DIRMN_INT64) && t.real) e->fail("integer dtype for real counts");
  else if (dtype == DIRMN_INT32 && t.max > 2147483647.0) e->fail("a count beyond INT32");
}

// dirmn_counts_copy_dense and _sparse through fuzzed dtypes, index types,
// formats, strides and NULLs, on a table the harness made.
void run_copy(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_context* other) {
  CopyTable t;
  t.make(p, ctx);
  const int calls = p.ConsumeIntegralInRange<int>(1, 3);
  for (int i = 0; i < calls; ++i) {
    Expect e;
    dirmn_context* use = rare(p, 16) ? other : ctx;
    if (use != ctx) e.fail("counts from another context");
    const dirmn_counts* counts = rare(p, 32) ? nullptr : t.c;
    if (counts == nullptr) e.fail("counts NULL");
    const int dtype = fuzz_kind(p, 4);
    value_type_verdict(dtype, t, &e);
    const size_t vb = valid_dtype(dtype) ? dtype_bytes(dtype) : 8;
    if (p.ConsumeBool()) {
      static const char* fn = "dirmn_counts_copy_dense";
      int64_t s1 = 0, s2 = 0;
      const size_t n = fuzz_strides(p, t.rows, t.cols, &s1, &s2, true, &e, vb);
      std::vector<unsigned char> out(n * vb, 0xa7);
      const std::vector<unsigned char> before = out;
      const bool null_out = rare(p, 32);
      if (null_out) e.fail("out NULL");
      const dirmn_status st = dirmn_counts_copy_dense(use, counts, static_cast<dirmn_dtype>(dtype),
                                                      null_out ? nullptr : out.data(), s1, s2);
      check_status(st, e, use, fn);
      check_listed(st, use, fn,
                   {DIRMN_ERROR_NULL_POINTER, DIRMN_ERROR_INVALID_ARGUMENT, DIRMN_ERROR_OVERFLOW,
                    DIRMN_ERROR_WRONG_CONTEXT, DIRMN_ERROR_NOT_SUPPORTED});
      if (st != DIRMN_SUCCESS) {
        ++g_new.copy_fail;
        if (out != before) violated(fn, "failed but wrote out");
        continue;
      }
      ++g_new.copy_ok;
      // Every cell where the strides put it, nothing elsewhere.
      std::vector<unsigned char> expect = before;
      for (int64_t b = 0; b < t.rows; ++b)
        for (int64_t v = 0; v < t.cols; ++v) {
          const size_t at = static_cast<size_t>((t.rows > 1 ? b * s1 : 0) + (t.cols > 1 ? v * s2 : 0)) * vb;
          const double want = as_dtype(t.x[static_cast<size_t>(b * t.cols + v)], dtype);
          if (read_dtype(out.data() + at, dtype) != want) violated(fn, "a cell copied wrong");
          std::memcpy(expect.data() + at, out.data() + at, vb);
        }
      if (out != expect) violated(fn, "wrote outside the cells");
    } else {
      static const char* fn = "dirmn_counts_copy_sparse";
      const int format = fuzz_kind(p, 2), itype = fuzz_kind(p, 2);
      if (format != DIRMN_CSR && format != DIRMN_CSC) e.fail("unknown format");
      if (itype != DIRMN_INDEX_INT32 && itype != DIRMN_INDEX_INT64) e.fail("unknown index type");
      const bool csr = format != DIRMN_CSC;
      const int64_t outer = format == DIRMN_CSR ? t.rows : format == DIRMN_CSC ? t.cols : std::max(t.rows, t.cols);
      const size_t ib = itype == DIRMN_INDEX_INT32 ? 4 : 8;
      size_t nnz = 0;
      for (double v : t.x) nnz += v != 0.0;
      const bool null_ptr = rare(p, 32), null_idx = rare(p, 16), null_val = rare(p, 16);
      if (null_ptr) e.fail("ptr NULL");
      if (nnz > 0 && (null_idx || null_val)) e.fail("indices or values NULL with nonzeros");
      std::vector<unsigned char> ptr(static_cast<size_t>(outer + 1) * ib, 0xa7), idx(std::max<size_t>(nnz, 1) * ib, 0xa7),
          val(std::max<size_t>(nnz, 1) * vb, 0xa7);
      const auto before = std::make_tuple(ptr, idx, val);
      const dirmn_status st = dirmn_counts_copy_sparse(
          use, counts, static_cast<dirmn_sparse_format>(format), static_cast<dirmn_index_type>(itype),
          null_ptr ? nullptr : ptr.data(), null_idx ? nullptr : idx.data(), static_cast<dirmn_dtype>(dtype),
          null_val ? nullptr : val.data());
      check_status(st, e, use, fn);
      check_listed(st, use, fn,
                   {DIRMN_ERROR_NULL_POINTER, DIRMN_ERROR_INVALID_ARGUMENT, DIRMN_ERROR_OVERFLOW,
                    DIRMN_ERROR_WRONG_CONTEXT, DIRMN_ERROR_NOT_SUPPORTED});
      if (st != DIRMN_SUCCESS) {
        ++g_new.copy_fail;
        if (std::make_tuple(ptr, idx, val) != before) violated(fn, "failed but wrote its outputs");
        continue;
      }
      ++g_new.copy_ok;
      // Offsets from 0 to nnz, indices ascending in each row (column), the
      // values the table's.
      if (read_index(ptr.data(), itype) != 0 || read_index(ptr.data() + outer * ib, itype) != static_cast<int64_t>(nnz))
        violated(fn, "ptr does not run from 0 to nnz");
      std::vector<double> back(t.x.size(), 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t lo = read_index(ptr.data() + o * ib, itype), hi = read_index(ptr.data() + (o + 1) * ib, itype);
        if (lo > hi || hi > static_cast<int64_t>(nnz)) violated(fn, "ptr decreases or passes nnz");
        int64_t last = -1;
        for (int64_t q = lo; q < hi; ++q) {
          const int64_t in = read_index(idx.data() + q * ib, itype);
          if (in <= last || in >= (csr ? t.cols : t.rows)) violated(fn, "indices not ascending within range");
          last = in;
          const double x = read_dtype(val.data() + q * vb, dtype);
          if (x == 0.0) violated(fn, "a zero stored");
          back[static_cast<size_t>(csr ? o * t.cols + in : in * t.cols + o)] = x;
        }
      }
      for (size_t q = 0; q < t.x.size(); ++q)
        if (back[q] != as_dtype(t.x[q], dtype)) violated(fn, "a cell copied wrong");
    }
  }
}

// dirmn_test_groups through fuzzed groups, options and result sizes on the
// harness's table.
void run_test_groups(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_context* other, dirmn_counts* c) {
  static const char* fn = "dirmn_test_groups";
  Expect e;
  std::vector<double> totals(kRows);
  if (dirmn_counts_row_totals(ctx, c, totals.data()) != DIRMN_SUCCESS) violated("dirmn_counts_row_totals", "failed");
  int64_t groups = p.ConsumeIntegralInRange<int64_t>(2, 5);
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 7: groups = p.ConsumeIntegralInRange<int64_t>(-2, 1); break;
    case 6: {
      static const int64_t kBig[] = {int64_t{1} << 40, int64_t{1} << 62, INT64_MAX, 1000000};
      groups = kBig[p.ConsumeIntegralInRange<size_t>(0, std::size(kBig) - 1)];
      break;
    }
    default: break;
  }
  if (groups < 2) e.fail("groups < 2");
  // Each row in a group of 0 .. min(groups, 6) - 1 or left out (-1); at
  // times one row in the last group (groups - 1) or outside the range.
  std::vector<int64_t> group(kRows);
  const int64_t top = std::min<int64_t>(groups, 6);
  {
    const uint32_t seed = p.ConsumeIntegral<uint32_t>();
    const bool leave_out = p.ConsumeBool();
    for (size_t b = 0; b < group.size(); ++b) {
      const uint32_t h = ((static_cast<uint32_t>(b) * 2654435761u) ^ seed) >> 7;
      group[b] = leave_out && h % 5 == 0 ? -1 : static_cast<int64_t>(h % static_cast<uint32_t>(std::max<int64_t>(top, 1)));
    }
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
      case 7: group[p.ConsumeIntegralInRange<size_t>(0, kRows - 1)] = p.ConsumeBool() ? groups : -2; break;
      case 6: group[p.ConsumeIntegralInRange<size_t>(0, kRows - 1)] = groups - 1; break;
      default: break;
    }
  }
  std::vector<int64_t> seen;
  bool bad_entry = false;
  for (int64_t b = 0; b < kRows; ++b) {
    const int64_t g = group[static_cast<size_t>(b)];
    if (g < -1 || g >= groups) bad_entry = true;
    else if (g >= 0 && totals[static_cast<size_t>(b)] > 0.0 && std::find(seen.begin(), seen.end(), g) == seen.end())
      seen.push_back(g);
  }
  if (bad_entry) e.fail("a group entry outside -1 .. groups - 1");
  else if (seen.size() < 2) e.fail("fewer than two groups with counts");
  dirmn_group_test_options o;
  dirmn_group_test_options_init(&o);
  o.bootstrap = rare(p, 10) ? p.ConsumeIntegralInRange<int64_t>(-3, -1)
                                                         : p.ConsumeIntegralInRange<int64_t>(0, 5);
  o.seed = p.ConsumeIntegral<uint64_t>();
  if (rare(p, 4)) {
    static const double kTol[] = {1e-10, 1e-3, 0.0, -1.0, NAN, INFINITY, 1e-300};
    o.tolerance = kTol[p.ConsumeIntegralInRange<size_t>(0, std::size(kTol) - 1)];
  }
  if (p.ConsumeBool()) o.max_iterations = p.ConsumeIntegralInRange<int>(-1, 50);
  Sized<dirmn_group_test_options> so;
  so.make(p, o);
  const bool null_o = rare(p, 8);
  const auto has = [&](size_t off, size_t bytes) { return !null_o && so.covers(off, bytes); };
  if (!null_o && so.size < sizeof(size_t)) e.fail("options->size too small");
  const int64_t boot = has(offsetof(dirmn_group_test_options, bootstrap), sizeof(int64_t)) ? o.bootstrap : 0;
  if (boot < 0) e.fail("bootstrap negative");
  if (has(offsetof(dirmn_group_test_options, tolerance), sizeof(double)) &&
      (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance)))
    e.fail("tolerance not positive and finite");
  if (has(offsetof(dirmn_group_test_options, max_iterations), sizeof(int)) && o.max_iterations < 1)
    e.fail("max_iterations < 1");
  Sized<dirmn_group_test_result> sr;
  dirmn_group_test_result r;
  std::memset(&r, 0x3e, sizeof r);
  r.size = sizeof r;
  sr.make(p, r);
  if (sr.size < offsetof(dirmn_group_test_result, statistic) + sizeof(double)) e.fail("result->size too small");
  const bool null_r = rare(p, 32), null_g = rare(p, 32);
  if (null_r || null_g) e.fail("result or group NULL");
  dirmn_context* use = rare(p, 16) ? other : ctx;
  if (use != ctx) e.fail("counts from another context");
  Countdown cd;
  maybe_interrupt(p, use, &cd, &e);
  const std::vector<unsigned char> before = sr.buf;
  const dirmn_status st = dirmn_test_groups(use, c, null_g ? nullptr : group.data(), groups,
                                            null_o ? nullptr : so.get(), null_r ? nullptr : sr.get());
  check_status(st, e, use, fn);
  check_listed(st, use, fn,
               {DIRMN_ERROR_NULL_POINTER, DIRMN_ERROR_INVALID_ARGUMENT, DIRMN_ERROR_INVALID_PARAMETER,
                DIRMN_ERROR_WRONG_CONTEXT, DIRMN_ERROR_OUT_OF_MEMORY, DIRMN_ERROR_CANCELLED,
                DIRMN_ERROR_NOT_SUPPORTED});
  dirmn_context_set_interrupt(use, nullptr, nullptr);  // (clears the message)
  if (st != DIRMN_SUCCESS) {
    ++g_new.groups_fail;
    if (sr.buf != before) violated(fn, "failed but wrote *result");
    return;
  }
  ++g_new.groups_ok;
  if (std::memcmp(sr.buf.data() + sr.size, before.data() + sr.size, sr.buf.size() - sr.size) != 0)
    violated(fn, "wrote beyond result->size");
  dirmn_group_test_result got;
  std::memset(&got, 0, sizeof got);
  std::memcpy(&got, sr.buf.data(), std::min(sr.size, sizeof got));
  const auto covers = [&](size_t off, size_t bytes) { return sr.covers(off, bytes); };
#define DIRMN_FUZZ_HAS(f) covers(offsetof(dirmn_group_test_result, f), sizeof got.f)
  if (!(got.statistic >= 0.0) || !std::isfinite(got.statistic)) violated(fn, "a statistic NaN, negative or infinite");
  if (DIRMN_FUZZ_HAS(df) && !(got.df >= 1.0 && std::isfinite(got.df))) violated(fn, "df below 1 or not finite");
  if (DIRMN_FUZZ_HAS(p_value) && !(got.p_value >= 0.0 && got.p_value <= 1.0)) violated(fn, "a p-value outside [0, 1]");
  if (DIRMN_FUZZ_HAS(p_value_bootstrap) && !(got.p_value_bootstrap > 0.0 && got.p_value_bootstrap <= 1.0))
    violated(fn, "a bootstrap p-value outside (0, 1]");
  if (DIRMN_FUZZ_HAS(bootstrap) && got.bootstrap != boot) violated(fn, "bootstrap is not B");
  if (DIRMN_FUZZ_HAS(loglik_null) && !std::isfinite(got.loglik_null)) violated(fn, "a non-finite loglik_null");
  if (DIRMN_FUZZ_HAS(loglik_groups) && !std::isfinite(got.loglik_groups)) violated(fn, "a non-finite loglik_groups");
  if (DIRMN_FUZZ_HAS(groups) && got.groups != static_cast<int64_t>(seen.size())) violated(fn, "groups is not G");
  if (DIRMN_FUZZ_HAS(categories) && !(got.categories >= 1 && got.categories <= kCols)) violated(fn, "categories out of range");
  if (DIRMN_FUZZ_HAS(converged) && got.converged != 0 && got.converged != 1) violated(fn, "converged not 0 or 1");
#undef DIRMN_FUZZ_HAS
}

// The options' init functions at any size: they write the first
// min(size, sizeof) bytes (size set to that), nothing beyond; NULL and
// sizes below a size_t are no-ops.
template <class T, class Init>
void check_init_sized(FuzzedDataProvider& p, Init init, size_t fields_end, const char* fn) {
  std::vector<unsigned char> buf(sizeof(T) + 32, 0xc5);
  const size_t size = p.ConsumeBool() ? sizeof(T) : p.ConsumeIntegralInRange<size_t>(0, sizeof(T) + 32);
  std::memcpy(buf.data(), &size, sizeof size);
  const std::vector<unsigned char> before = buf;
  init(reinterpret_cast<T*>(buf.data()), size);
  init(nullptr, size);
  if (size < sizeof(size_t)) {
    if (buf != before) violated(fn, "wrote with a size below a size_t");
    return;
  }
  const size_t n = std::min(size, sizeof(T));
  size_t got = 0;
  std::memcpy(&got, buf.data(), sizeof got);
  if (got != n) violated(fn, "options->size is not the bytes filled");
  if (std::memcmp(buf.data() + n, before.data() + n, buf.size() - n) != 0) violated(fn, "wrote beyond size");
  T full;
  init(&full, sizeof full);
  const size_t cmp = std::min(n, fields_end);
  if (cmp > sizeof(size_t) &&
      std::memcmp(buf.data() + sizeof(size_t), reinterpret_cast<unsigned char*>(&full) + sizeof(size_t),
                  cmp - sizeof(size_t)) != 0)
    violated(fn, "filled other values than the defaults");
}

void run_init_sized(FuzzedDataProvider& p) {
  if (p.ConsumeBool())
    check_init_sized<dirmn_sample_options>(p, dirmn_sample_options_init_sized,
                                           offsetof(dirmn_sample_options, storage) + sizeof(dirmn_storage),
                                           "dirmn_sample_options_init_sized");
  else
    check_init_sized<dirmn_group_test_options>(
        p, dirmn_group_test_options_init_sized,
        offsetof(dirmn_group_test_options, max_iterations) + sizeof(int), "dirmn_group_test_options_init_sized");
}

void run_location(FuzzedDataProvider& p, dirmn_context* ctx) {
  Sized<dirmn_error_location> s;
  dirmn_error_location loc;
  std::memset(&loc, 0, sizeof loc);
  loc.size = sizeof loc;
  s.make(p, loc);
  const std::vector<unsigned char> before = s.buf;
  const dirmn_status st = dirmn_last_error_location(ctx, s.get());
  const bool too_small = s.size < offsetof(dirmn_error_location, argument) + sizeof(const char*);
  if ((st == DIRMN_SUCCESS) == too_small) violated("dirmn_last_error_location", "status disagrees with size");
  const size_t keep = st == DIRMN_SUCCESS ? s.size : 0;
  if (std::memcmp(s.buf.data() + keep, before.data() + keep, s.buf.size() - keep) != 0)
    violated("dirmn_last_error_location", "wrote beyond location->size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static dirmn_context* const contexts[2] = {lasting_context(1), lasting_context(2)};
  FuzzedDataProvider p(data, size);
  dirmn_context* ctx = contexts[p.ConsumeBool() ? 1 : 0];
  dirmn_context* other = contexts[ctx == contexts[0] ? 1 : 0];
  // A small valid table: a few distinct counts, some rows of zeros.
  std::vector<double> x(static_cast<size_t>(kRows * kCols));
  const uint32_t seed = p.ConsumeIntegral<uint32_t>();
  const int top = p.ConsumeIntegralInRange<int>(1, 400);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) * 2654435761u) ^ seed;
    x[i] = (h >> 5) % 3 == 0 ? 0.0 : static_cast<double>((h >> 9) % static_cast<uint32_t>(top));
  }
  x[1] = std::max(x[1], 1.0);  // never a table without counts
  dirmn_counts* c = nullptr;
  if (dirmn_counts_create_dense(ctx, &c, kRows, kCols, DIRMN_FLOAT64, x.data(), kCols, 1, nullptr) != DIRMN_SUCCESS)
    violated("dirmn_counts_create_dense", "refused a valid table", dirmn_last_error(ctx));
  const int calls = p.ConsumeIntegralInRange<int>(1, 4);
  for (int i = 0; i < calls; ++i) {
    switch (p.ConsumeIntegralInRange<int>(0, 13)) {
      case 5: run_regression(p, ctx, c); break;
      case 0: run_loglik_sum(p, ctx, c); break;
      case 1: run_rowwise_derivatives(p, ctx, c); break;
      case 2: run_fit(p, ctx, c); break;
      case 3: run_mixture(p, ctx, other, c); break;
      case 4: run_dense_strides(p, ctx); break;
      case 7:
      case 8: run_sample(p, ctx, other, false); break;
      case 9: run_sample(p, ctx, other, true); break;
      case 10: run_moments(p, ctx); break;
      case 11: run_copy(p, ctx, other); break;
      case 12: run_test_groups(p, ctx, other, c); break;
      case 13: run_init_sized(p); break;
      default: run_location(p, ctx); break;
    }
  }
  dirmn_counts_destroy(c);
  return 0;
}
