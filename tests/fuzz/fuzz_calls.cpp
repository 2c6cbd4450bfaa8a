// fuzz_calls.cpp: a libFuzzer harness for the arguments around a table --
// strides and extents (up to 2^63 and through the end of the address
// space), options and result structs of any size, row weights, starts and
// the interrupt callback -- of every function that takes them:
// dirmn_loglik_sum, dirmn_loglik_rowwise_derivatives, dirmn_fit,
// dirmn_mixture_fit, dirmn_mixture_get_params, _get_responsibilities,
// _get_info, dirmn_mixture_assign, dirmn_reg_fit, _get_coef,
// _get_std_errors, dirmn_counts_create_dense's strides and
// dirmn_last_error_location. (fuzz_counts.cpp fuzzes table contents and the
// likelihoods.)
//
// The table is small and valid; the arguments around it are not. As in
// fuzz_counts.cpp, nothing the harness passes lets a correct library read
// or write outside the caller's buffers: strides either fit the buffer, or
// reach past what a pointer holds (which the header says is OVERFLOW), or
// are below 1. Every call is held to the contract: a failure has a
// message and leaves every output byte unchanged; invalid arguments always
// fail; a success writes finite values where the header promises them, and
// a fit that says converged has a finite log-likelihood.
#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t kRows = 24, kCols = 6;
constexpr size_t kCap = kBufferBytes / sizeof(double);

__int128 last_offset(int64_t n1, int64_t s1, int64_t n2, int64_t s2) {
  return static_cast<__int128>(n1 > 1 ? n1 - 1 : 0) * (n1 > 1 ? s1 : 0) +
         static_cast<__int128>(n2 > 1 ? n2 - 1 : 0) * (n2 > 1 ? s2 : 0);
}

// Strides for an n1 x n2 array of doubles: ones that fit the buffer, huge
// ones whose byte extent passes PTRDIFF_MAX (must fail), or ones below 1
// (must fail). Returns the elements to allocate.
size_t fuzz_strides(FuzzedDataProvider& p, int64_t n1, int64_t n2, int64_t* s1, int64_t* s2,
                    bool output, Expect* e) {
  static const int64_t kHuge[] = {int64_t{1} << 60, int64_t{1} << 61, int64_t{1} << 62,
                                  (int64_t{1} << 62) + 3, INT64_MAX, INT64_MAX / 2 + 1};
  const bool row_major = p.ConsumeBool();
  *s1 = row_major ? n2 : 1;
  *s2 = row_major ? 1 : n1;
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: *s1 = kHuge[p.ConsumeIntegralInRange<size_t>(0, std::size(kHuge) - 1)]; break;
    case 1: *s2 = kHuge[p.ConsumeIntegralInRange<size_t>(0, std::size(kHuge) - 1)]; break;
    case 2: (p.ConsumeBool() ? *s1 : *s2) = p.ConsumeIntegralInRange<int64_t>(-3, 0); break;
    case 3: *s1 += p.ConsumeIntegralInRange<int64_t>(0, 4); break;
    case 4: *s1 = p.ConsumeIntegralInRange<int64_t>(1, 3); *s2 = p.ConsumeIntegralInRange<int64_t>(1, 3); break;
    default: break;
  }
  if ((n1 > 1 && *s1 < 1) || (n2 > 1 && *s2 < 1)) {
    e->fail("stride below 1");
    return 1;
  }
  const __int128 last = last_offset(n1, *s1, n2, *s2);
  if ((last + 1) * 8 > static_cast<__int128>(PTRDIFF_MAX)) {
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
    switch (p.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: size = p.ConsumeIntegralInRange<size_t>(0, sizeof(T) + 32); break;
      case 1: size = sizeof(size_t) + p.ConsumeIntegralInRange<size_t>(0, sizeof(T)); break;
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
  Sized<dirmn_reg_options> so;
  so.make(p, o);
  const auto has = [&](size_t off, size_t bytes) { return so.covers(off, bytes); };
  if (so.size < sizeof(size_t)) e.fail("options->size too small");
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
    switch (p.ConsumeIntegralInRange<int>(0, 6)) {
      case 5: run_regression(p, ctx, c); break;
      case 0: run_loglik_sum(p, ctx, c); break;
      case 1: run_rowwise_derivatives(p, ctx, c); break;
      case 2: run_fit(p, ctx, c); break;
      case 3: run_mixture(p, ctx, other, c); break;
      case 4: run_dense_strides(p, ctx); break;
      default: run_location(p, ctx); break;
    }
  }
  dirmn_counts_destroy(c);
  return 0;
}
