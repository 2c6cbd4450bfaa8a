// fuzz_support.hpp: what the libFuzzer harness (fuzz_counts.cpp) draws its
// arguments with, and the contract it holds every call to: fuzzed sizes,
// strides, enums and counts, the verdict the header gives each, and the
// check of a call's status and message against it. Included by the
// harness alone.
#pragma once

#include <dirmn.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace {

// Caller arrays the harness allocates stay below this many bytes.
constexpr size_t kBufferBytes = size_t{1} << 20;
// Bounds on tables the library may accept, so one input stays fast and the
// library's own O(rows + cols) and O(rows x cols) allocations stay small.
constexpr int64_t kMaxDim = 4096;
constexpr int64_t kMaxCells = int64_t{1} << 16;
constexpr int64_t kMaxK = 6;
// Counts at or below this are certainly accepted; above 2^53 the library may
// refuse them (not exactly representable), in between is left open.
constexpr double kSafeCount = 16777216.0;
constexpr double kTwo53 = 9007199254740992.0;

// Outcome tallies, printed at exit when DIRMN_FUZZ_STATS is set: a check
// that the corpus reaches the success paths, not only the rejections.
struct Tally {
  long dense_ok = 0, dense_fail = 0, sparse_ok = 0, sparse_fail = 0;
  long loglik_ok = 0, loglik_fail = 0, rowwise_ok = 0, rowwise_fail = 0;
  ~Tally() {
    if (std::getenv("DIRMN_FUZZ_STATS") == nullptr) return;
    std::fprintf(stderr,
                 "dense %ld ok / %ld rejected; sparse %ld / %ld; dirmn_loglik %ld / %ld; "
                 "dirmn_loglik_rowwise %ld / %ld\n",
                 dense_ok, dense_fail, sparse_ok, sparse_fail, loglik_ok, loglik_fail,
                 rowwise_ok, rowwise_fail);
  }
};
Tally g_tally;

[[noreturn]] void violated(const char* what, const char* detail = "", const char* more = "") {
  std::fprintf(stderr, "dirmn contract violated: %s %s %s\n", what, detail, more);
  std::abort();
}

// A CPU context on `threads` host threads, for the life of the process:
// the harnesses keep their contexts across inputs (threads are costly to
// start), a serial one and one with a pool, so both paths run.
inline dirmn_context* lasting_context(int threads) {
  dirmn_context* c = nullptr;
  if (dirmn_context_create(&c, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) std::abort();
  dirmn_context_set_threads(c, threads);
  return c;
}

enum class Verdict { kMustFail, kMustSucceed, kEither };

// The expected outcome of one call, with the first reason it must fail or
// may fail (printed when the library disagrees).
struct Expect {
  Verdict v = Verdict::kMustSucceed;
  const char* why = "";
  void fail(const char* reason) {
    if (v != Verdict::kMustFail) why = reason;
    v = Verdict::kMustFail;
  }
  void either(const char* reason) {
    if (v == Verdict::kMustSucceed) {
      v = Verdict::kEither;
      why = reason;
    }
  }
};

// Checks a call's outcome against the expectation and the error-reporting
// contract.
void check_status(dirmn_status st, const Expect& e, const dirmn_context* ctx, const char* call) {
  if (st != DIRMN_SUCCESS) {
    const char* msg = dirmn_last_error(ctx);
    if (msg == nullptr || msg[0] == '\0') violated(call, "failed without a message");
    if (e.v == Verdict::kMustSucceed) {
      std::fprintf(stderr, "%s failed with status %d: %s\n", call, static_cast<int>(st), msg);
      violated(call, "rejected valid arguments");
    }
  } else if (e.v == Verdict::kMustFail) {
    violated(call, "accepted invalid arguments:", e.why);
  }
}

bool mul_overflows(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r);
}

// Sizes: mostly small, sometimes boundary values and raw 64-bit garbage.
int64_t fuzz_size(FuzzedDataProvider& p) {
  static const int64_t kSpecial[] = {0,
                                     -1,
                                     1,
                                     2,
                                     std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int32_t>::max(),
                                     int64_t{1} << 31,
                                     int64_t{4294967295},
                                     int64_t{4294967296},
                                     int64_t{1} << 40,
                                     int64_t{1} << 60,
                                     (int64_t{1} << 61) + 1,
                                     -(int64_t{1} << 62)};
  switch (p.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
      return kSpecial[p.ConsumeIntegralInRange<size_t>(0, std::size(kSpecial) - 1)];
    case 1:
      return p.ConsumeIntegral<int64_t>();
    case 2:
      return p.ConsumeIntegralInRange<int64_t>(-3, 600);
    default:
      return p.ConsumeIntegralInRange<int64_t>(1, 24);
  }
}

// A stride: the natural one for some layout, or anything fuzz_size gives.
int64_t fuzz_stride(FuzzedDataProvider& p, int64_t natural) {
  switch (p.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
    case 1:
      return natural;
    case 2: {
      int64_t padded;  // natural may be any fuzzed size, INT64_MAX included
      if (__builtin_add_overflow(natural, p.ConsumeIntegralInRange<int64_t>(0, 5), &padded))
        return natural;
      return padded;
    }
    case 3:
      return p.ConsumeIntegralInRange<int64_t>(1, 4);
    default:
      return fuzz_size(p);
  }
}

// Raw enum values: usually valid, sometimes anything an int can hold.
int fuzz_enum(FuzzedDataProvider& p, int n_valid) {
  if (p.ConsumeIntegralInRange<int>(0, 7) != 0) return p.ConsumeIntegralInRange<int>(0, n_valid - 1);
  return p.ConsumeBool() ? p.ConsumeIntegral<int>() : p.ConsumeIntegralInRange<int>(-1, n_valid + 1);
}

size_t dtype_bytes(int dtype) {
  switch (dtype) {
    case DIRMN_INT32:
    case DIRMN_FLOAT32: return 4;
    default: return 8;  // also for unknown dtypes: never smaller than a real read
  }
}

bool valid_dtype(int d) { return d >= DIRMN_INT32 && d <= DIRMN_FLOAT64; }

// A few distinct count values; cells draw from them so tables are mostly
// small counts and zeros, like real data, with the odd hostile value.
template <class T>
T fuzz_count(FuzzedDataProvider& p) {
  const int kind = p.ConsumeIntegralInRange<int>(0, 11);
  if (kind <= 4) return static_cast<T>(p.ConsumeIntegralInRange<int>(0, 9));
  if (kind <= 6) return static_cast<T>(0);
  if (kind == 7) return static_cast<T>(p.ConsumeIntegralInRange<int32_t>(0, 1 << 24));
  if constexpr (std::is_integral<T>::value) {
    if (kind == 8) return static_cast<T>(-p.ConsumeIntegralInRange<int>(1, 3));
    if (kind == 9)
      return p.ConsumeBool() ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
    if (kind == 10 && sizeof(T) == 8)
      return static_cast<T>((int64_t{1} << 53) + p.ConsumeIntegralInRange<int64_t>(-1, 2));
    return p.ConsumeIntegral<T>();
  } else {
    // Each value representable in T: converting an out-of-range double to
    // float would itself be undefined behaviour.
    static const T kSpecial[] = {std::numeric_limits<T>::quiet_NaN(),
                                 std::numeric_limits<T>::infinity(),
                                 -std::numeric_limits<T>::infinity(),
                                 T(-0.0),
                                 T(0.5),
                                 T(2.75),
                                 std::numeric_limits<T>::denorm_min(),
                                 T(1e-3),
                                 T(kTwo53),
                                 T(sizeof(T) == 8 ? kTwo53 + 2 : 1e30),
                                 std::numeric_limits<T>::max(),
                                 T(-1.0)};
    if (kind <= 10) return kSpecial[p.ConsumeIntegralInRange<size_t>(0, std::size(kSpecial) - 1)];
    using Bits = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    const Bits b = p.ConsumeIntegral<Bits>();
    T x;
    std::memcpy(&x, &b, sizeof x);
    return x;
  }
}

// What the contract says about one count: must be rejected, certainly
// accepted, or either (above 2^24; beyond 2^53 is out of double's exact range).
template <class T>
Verdict count_verdict(T x, bool real_valued) {
  const double d = static_cast<double>(x);
  if (std::isnan(d) || std::isinf(d) || d < 0) return Verdict::kMustFail;
  if (!real_valued && d != std::floor(d)) return Verdict::kMustFail;
  if (d > kSafeCount) return Verdict::kEither;
  return Verdict::kMustSucceed;
}

void merge(Expect* e, Verdict v, const char* why) {
  if (v == Verdict::kMustFail) e->fail(why);
  else if (v == Verdict::kEither) e->either(why);
}
void merge(Expect* e, const Expect& sub) { merge(e, sub.v, sub.why); }

// Typed storage for a caller array of counts, filled from a small palette.
struct CountArray {
  int dtype = DIRMN_FLOAT64;
  std::vector<unsigned char> bytes;

  template <class T>
  void fill(FuzzedDataProvider& p, size_t n) {
    T palette[8];
    const size_t np = p.ConsumeIntegralInRange<size_t>(1, 8);
    for (size_t i = 0; i < np; ++i) palette[i] = fuzz_count<T>(p);
    const uint32_t seed = p.ConsumeIntegral<uint32_t>();
    bytes.assign(n * sizeof(T), 0);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) * 2654435761u) ^ seed;
      const T x = palette[(h >> 7) % np];
      std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
  }
  void make(FuzzedDataProvider& p, int dt, size_t n) {
    dtype = dt;
    switch (dt) {
      case DIRMN_INT32: fill<int32_t>(p, n); break;
      case DIRMN_INT64: fill<int64_t>(p, n); break;
      case DIRMN_FLOAT32: fill<float>(p, n); break;
      case DIRMN_FLOAT64: fill<double>(p, n); break;
      default: bytes.assign(n * 8, 0x5a); break;  // unknown dtype: must not be read
    }
  }
  double at(size_t i) const {
    switch (dtype) {
      case DIRMN_INT32: { int32_t x; std::memcpy(&x, &bytes[i * 4], 4); return static_cast<double>(x); }
      case DIRMN_INT64: { int64_t x; std::memcpy(&x, &bytes[i * 8], 8); return static_cast<double>(x); }
      case DIRMN_FLOAT32: { float x; std::memcpy(&x, &bytes[i * 4], 4); return static_cast<double>(x); }
      default: { double x; std::memcpy(&x, &bytes[i * 8], 8); return x; }
    }
  }
  Verdict verdict(size_t i, bool real) const {
    switch (dtype) {
      case DIRMN_INT32: { int32_t x; std::memcpy(&x, &bytes[i * 4], 4); return count_verdict(x, real); }
      case DIRMN_INT64: { int64_t x; std::memcpy(&x, &bytes[i * 8], 8); return count_verdict(x, real); }
      case DIRMN_FLOAT32: { float x; std::memcpy(&x, &bytes[i * 4], 4); return count_verdict(x, real); }
      default: { double x; std::memcpy(&x, &bytes[i * 8], 8); return count_verdict(x, real); }
    }
  }
};

// The options struct as a caller of another library version might pass it:
// any size (the buffer always holds `size` bytes), any flags and storage.
struct Options {
  std::vector<unsigned char> buf;
  bool null = false;
  bool real = false;
  bool one_based = false;  // sparse ptr and indices count from 1
  void make(FuzzedDataProvider& p, Expect* e) {
    null = p.ConsumeIntegralInRange<int>(0, 5) == 0;
    if (null) return;
    dirmn_counts_options o;
    dirmn_counts_options_init(&o);
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: o.size = p.ConsumeIntegralInRange<size_t>(0, sizeof o + 64); break;
      case 1: o.size = offsetof(dirmn_counts_options, flags) + sizeof(uint32_t); break;
      default: break;
    }
    const int fl = p.ConsumeIntegralInRange<int>(0, 9);
    o.flags = fl < 4   ? 0u
              : fl < 6 ? DIRMN_COUNTS_REAL_VALUED
              : fl < 8 ? DIRMN_COUNTS_ONE_BASED | (fl == 7 ? DIRMN_COUNTS_REAL_VALUED : 0u)
                       : p.ConsumeIntegral<uint32_t>();
    o.storage = static_cast<dirmn_storage>(fuzz_enum(p, 3));
    buf.assign(std::max(o.size, sizeof o) + 8, 0xa5);
    std::memcpy(buf.data(), &o, sizeof o);
    // The contract, by how much of the struct the size covers.
    if (o.size < offsetof(dirmn_counts_options, flags) + sizeof(uint32_t)) {
      e->fail("options->size too small");
      return;
    }
    if (o.flags & ~(DIRMN_COUNTS_REAL_VALUED | DIRMN_COUNTS_ONE_BASED))
      e->fail("unknown options->flags");
    real = (o.flags & DIRMN_COUNTS_REAL_VALUED) != 0;
    one_based = (o.flags & DIRMN_COUNTS_ONE_BASED) != 0;
    if (o.size >= offsetof(dirmn_counts_options, storage) + sizeof(dirmn_storage) &&
        (o.storage < DIRMN_STORAGE_AUTO || o.storage > DIRMN_STORAGE_SPARSE))
      e->fail("unknown options->storage");
  }
  const dirmn_counts_options* get() const {
    return null ? nullptr : reinterpret_cast<const dirmn_counts_options*>(buf.data());
  }
};

}  // namespace
