// fuzz_counts.cpp: a libFuzzer harness for dirmn's argument validation.
//
// Each input decodes into one counts constructor call (dense with any dtype
// and strides, or CSR/CSC with any ptr/indices/values), a few info queries,
// and likelihood calls (shared and per-row alpha) with fuzzed k, strides,
// parameters, flags and an interrupt callback. The harness never hands the
// library an argument that would make a correct implementation read or write
// outside the caller's buffers: where the arguments are ones the library
// could accept, sizes are clamped to the buffers; arguments the library must
// reject (negative sizes, strides below 1, overflowing sizes, unknown enums)
// pass through untouched, with buffers sized only for what a correct library
// reads. So any sanitizer report is a library bug, not a harness artefact.
//
// Beyond "no crash", every call is checked against the C ABI contract:
//   - a failure returns a non-zero status, leaves a non-empty message, and
//     leaves every output (handles, result arrays) byte-for-byte unchanged;
//   - arguments the header says are invalid (bad enums, sizes, strides,
//     counts, alpha) always fail, and fully valid ones always succeed;
//   - a success writes exactly the documented output elements, all finite,
//     and a row of zeros has log-likelihood exactly 0.
// A violated invariant calls abort(), which libFuzzer reports as a crash.
#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

namespace {

// What the harness knows about a table the library accepted.
struct Table {
  int64_t rows = 0, cols = 0;
  std::vector<double> row_total;
  bool exact_totals = true;  // every count an integer, totals below 2^53
};

// Halves the larger dimension until the table fits the limits.
void clamp_dims(int64_t* rows, int64_t* cols, int64_t max_cells) {
  *rows = std::min(*rows, kMaxDim);
  *cols = std::min(*cols, kMaxDim);
  while (*rows * *cols > max_cells) {
    if (*rows >= *cols) *rows = (*rows + 1) / 2;
    else *cols = (*cols + 1) / 2;
  }
}

__int128 extent(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  return static_cast<__int128>(rows - 1) * (rows > 1 ? rs : 0) +
         static_cast<__int128>(cols - 1) * (cols > 1 ? cs : 0) + 1;
}

dirmn_status create_dense(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts** out,
                          Table* tab, Expect* e) {
  int64_t rows = fuzz_size(p), cols = fuzz_size(p);
  const int dtype = fuzz_enum(p, 4);
  const bool col_major = p.ConsumeBool();
  int64_t rs = fuzz_stride(p, col_major ? 1 : cols), cs = fuzz_stride(p, col_major ? rows : 1);
  Options opt;
  opt.make(p, e);
  if (!valid_dtype(dtype)) e->fail("unknown dtype");
  const size_t esz = dtype_bytes(dtype);
  const int64_t cap = static_cast<int64_t>(kBufferBytes / esz);
  size_t n_elems = 1;
  bool readable = false;  // the library may read the strided elements
  if (rows <= 0 || cols <= 0 || mul_overflows(rows, cols)) {
    e->fail("rows or cols not positive, or rows x cols overflows");
  } else {
    clamp_dims(&rows, &cols, kMaxCells);
    if ((rows > 1 && rs < 1) || (cols > 1 && cs < 1)) {
      e->fail("stride below 1");
    } else {
      // Shrink until the strided extent fits the buffer (dimension 1 makes
      // its stride irrelevant, so this always terminates).
      while (extent(rows, cols, rs, cs) > cap) {
        const __int128 er = static_cast<__int128>(rows - 1) * (rows > 1 ? rs : 0);
        const __int128 ec = static_cast<__int128>(cols - 1) * (cols > 1 ? cs : 0);
        if (er >= ec) rows = (rows + 1) / 2;
        else cols = (cols + 1) / 2;
      }
      n_elems = static_cast<size_t>(extent(rows, cols, rs, cs));
      readable = true;
    }
  }
  CountArray data;
  data.make(p, dtype, n_elems);
  const bool null_data = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  if (null_data) e->fail("data is NULL");
  if (readable && valid_dtype(dtype)) {
    tab->rows = rows;
    tab->cols = cols;
    tab->row_total.assign(static_cast<size_t>(rows), 0.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const size_t k = static_cast<size_t>((rows > 1 ? i * rs : 0) + (cols > 1 ? j * cs : 0));
        merge(e, data.verdict(k, opt.real), "a count is invalid (or above 2^24)");
        const double x = data.at(k);
        if (x != std::floor(x)) tab->exact_totals = false;
        tab->row_total[static_cast<size_t>(i)] += x;
      }
  }
  return dirmn_counts_create_dense(ctx, out, rows, cols, static_cast<dirmn_dtype>(dtype),
                                   null_data ? nullptr : data.bytes.data(), rs, cs, opt.get());
}

// An index array of the given type (4 or 8 bytes per entry).
struct IndexArray {
  bool i32 = false;
  std::vector<unsigned char> bytes;
  void resize(bool is32, size_t n) {
    i32 = is32;
    bytes.assign(std::max<size_t>(n, 1) * (i32 ? 4 : 8), 0);
  }
  size_t size() const { return bytes.size() / (i32 ? 4 : 8); }
  void set(size_t k, int64_t v) {
    if (i32) {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(&bytes[k * 4], &x, 4);
    } else {
      std::memcpy(&bytes[k * 8], &v, 8);
    }
  }
  int64_t get(size_t k) const {
    if (i32) {
      int32_t x;
      std::memcpy(&x, &bytes[k * 4], 4);
      return x;
    }
    int64_t x;
    std::memcpy(&x, &bytes[k * 8], 8);
    return x;
  }
};

dirmn_status create_sparse(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_counts** out,
                           Table* tab, Expect* e) {
  int64_t rows = fuzz_size(p), cols = fuzz_size(p);
  int64_t nnz = p.ConsumeBool() ? p.ConsumeIntegralInRange<int64_t>(0, 64) : fuzz_size(p);
  const int format = fuzz_enum(p, 2), index_type = fuzz_enum(p, 2), dtype = fuzz_enum(p, 4);
  Options opt;
  opt.make(p, e);
  if (format != DIRMN_CSR && format != DIRMN_CSC) e->fail("unknown format");
  if (index_type != DIRMN_INDEX_INT32 && index_type != DIRMN_INDEX_INT64)
    e->fail("unknown index type");
  if (!valid_dtype(dtype)) e->fail("unknown dtype");
  // Unknown index types get 8-byte entries: at least what any read needs.
  const bool i32 = index_type == DIRMN_INDEX_INT32;
  const size_t isz = i32 ? 4 : 8;
  const size_t vsz = dtype_bytes(dtype);
  bool dims_ok = false;
  if (rows <= 0 || cols <= 0 || mul_overflows(rows, cols)) {
    e->fail("rows or cols not positive, or rows x cols overflows");
  } else {
    clamp_dims(&rows, &cols, kMaxCells);
    dims_ok = true;
  }
  if (nnz < 0 || (dims_ok && nnz > rows * cols)) e->fail("nnz negative or above rows x cols");
  // nnz the library could accept is clamped to what the arrays can hold.
  const int64_t nnz_cap = static_cast<int64_t>(kBufferBytes / std::max(isz, vsz));
  if (dims_ok && nnz >= 0 && nnz <= rows * cols) nnz = std::min(nnz, nnz_cap);
  const size_t n_entries = nnz >= 0 && nnz <= nnz_cap ? static_cast<size_t>(nnz) : 0;
  const bool csr = format != DIRMN_CSC;  // unknown formats: sized as CSR, must be rejected
  const int64_t outer = dims_ok ? (csr ? rows : cols) : 0;
  const int64_t inner = dims_ok ? (csr ? cols : rows) : 0;

  // ptr: valid (random split points), valid with one entry corrupted, or garbage.
  // With DIRMN_COUNTS_ONE_BASED the same table is written counting from 1.
  const int64_t base = opt.one_based ? 1 : 0;
  IndexArray ptr, idx;
  ptr.resize(i32, static_cast<size_t>(outer) + 1);
  const int ptr_mode = p.ConsumeIntegralInRange<int>(0, 5);
  {
    std::vector<int64_t> cuts(static_cast<size_t>(outer) + 1, 0);
    for (int64_t o = 1; o < outer; ++o)
      cuts[static_cast<size_t>(o)] =
          n_entries ? p.ConsumeIntegralInRange<int64_t>(0, static_cast<int64_t>(n_entries)) : 0;
    cuts[static_cast<size_t>(outer)] = static_cast<int64_t>(n_entries);
    std::sort(cuts.begin(), cuts.end());
    if (nnz > nnz_cap || nnz < 0) cuts[static_cast<size_t>(outer)] = nnz;  // must-fail nnz
    for (size_t o = 0; o < cuts.size(); ++o)  // a must-fail nnz may be INT64_MAX
      ptr.set(o, cuts[o] < std::numeric_limits<int64_t>::max() ? cuts[o] + base : cuts[o]);
    if (ptr_mode == 4) ptr.set(p.ConsumeIntegralInRange<size_t>(0, ptr.size() - 1), fuzz_size(p));
    if (ptr_mode == 5)
      for (size_t o = 0; o < ptr.size(); ++o) ptr.set(o, p.ConsumeIntegralInRange<int64_t>(-2, 70));
  }
  // indices: valid (perhaps repeating within a row), one corrupted, or garbage.
  idx.resize(i32, n_entries);
  const int idx_mode = p.ConsumeIntegralInRange<int>(0, 5);
  for (size_t k = 0; k < n_entries; ++k)
    idx.set(k, (inner > 0 ? p.ConsumeIntegralInRange<int64_t>(0, inner - 1) : 0) + base);
  if (n_entries && idx_mode == 4)
    idx.set(p.ConsumeIntegralInRange<size_t>(0, n_entries - 1), fuzz_size(p));
  if (idx_mode == 5)
    for (size_t k = 0; k < n_entries; ++k) idx.set(k, p.ConsumeIntegralInRange<int64_t>(-2, 40));
  CountArray vals;
  vals.make(p, dtype, std::max<size_t>(n_entries, 1));
  const int nulls = p.ConsumeIntegralInRange<int>(0, 15);
  const bool null_ptr = nulls == 0, null_idx = nulls == 1, null_val = nulls == 2;
  if (null_ptr) e->fail("ptr is NULL");
  if (nnz > 0 && (null_idx || null_val)) e->fail("indices or values NULL with nnz > 0");

  // The contract on ptr and indices, and the table they describe.
  if (dims_ok && !null_ptr && e->v != Verdict::kMustFail) {
    // at(o): where outer line o starts, counting from 0 (wrap-free: any
    // stored value, shifted by at most 1, fits in int64 unless it is the
    // minimum, which fails the checks either way).
    const auto at = [&](size_t o) {
      const int64_t v = ptr.get(o);
      return v == std::numeric_limits<int64_t>::min() ? v : v - base;
    };
    bool ok = at(0) == 0 && at(static_cast<size_t>(outer)) == nnz;
    for (int64_t o = 0; ok && o < outer; ++o) {
      const int64_t a = at(static_cast<size_t>(o)), b = at(static_cast<size_t>(o) + 1);
      ok = a <= b && b <= nnz;
    }
    if (!ok) {
      e->fail("ptr malformed");
    } else {
      tab->rows = rows;
      tab->cols = cols;
      tab->row_total.assign(static_cast<size_t>(rows), 0.0);
      std::vector<int64_t> seen(static_cast<size_t>(inner), -1);
      for (int64_t o = 0; o < outer && e->v != Verdict::kMustFail; ++o)
        for (int64_t k = at(static_cast<size_t>(o)); k < at(static_cast<size_t>(o) + 1); ++k) {
          const int64_t stored = idx.get(static_cast<size_t>(k));
          const int64_t in =
              stored == std::numeric_limits<int64_t>::min() ? stored : stored - base;
          if (in < 0 || in >= inner || seen[static_cast<size_t>(in)] == o) {
            e->fail("index out of range or repeated");
            break;
          }
          seen[static_cast<size_t>(in)] = o;
          merge(e, vals.verdict(static_cast<size_t>(k), opt.real),
                "a count is invalid (or above 2^24)");
          const double x = vals.at(static_cast<size_t>(k));
          if (x != std::floor(x)) tab->exact_totals = false;
          tab->row_total[static_cast<size_t>(csr ? o : in)] += x;
        }
    }
  }
  return dirmn_counts_create_sparse(
      ctx, out, static_cast<dirmn_sparse_format>(format), rows, cols, nnz,
      static_cast<dirmn_index_type>(index_type), null_ptr ? nullptr : ptr.bytes.data(),
      null_idx ? nullptr : idx.bytes.data(), static_cast<dirmn_dtype>(dtype),
      null_val ? nullptr : vals.bytes.data(), opt.get());
}

// Interrupt callback that cancels on its n-th poll.
struct Countdown {
  int left = 0;
  static int poll(void* self) {
    auto* c = static_cast<Countdown*>(self);
    return c->left-- <= 0 ? 1 : 0;
  }
};

double fuzz_param(FuzzedDataProvider& p, bool log_param) {
  static const double kBad[] = {0.0, -0.0, -1.0, std::nan(""), INFINITY, -INFINITY};
  const int kind = p.ConsumeIntegralInRange<int>(0, 15);
  if (kind == 0) return kBad[p.ConsumeIntegralInRange<size_t>(0, std::size(kBad) - 1)];
  if (log_param) {
    // Around the limits of exp: 709.78 overflows, -745.13 underflows to 0.
    static const double kEdge[] = {709.0, 709.7, 709.79, 710.0, -744.0, -745.1, -745.2, -800.0};
    if (kind == 1) return kEdge[p.ConsumeIntegralInRange<size_t>(0, std::size(kEdge) - 1)];
    return p.ConsumeFloatingPointInRange<double>(-40.0, 30.0);
  }
  static const double kEdge[] = {5e-324, 1e-300, 1e300, 1.7976931348623157e308};
  if (kind == 1) return kEdge[p.ConsumeIntegralInRange<size_t>(0, std::size(kEdge) - 1)];
  return std::pow(10.0, p.ConsumeFloatingPointInRange<double>(-8.0, 10.0));
}

// The contract on one parameter value. Extreme but valid values are left
// open: their sum over a vector may overflow, and exp's exact limits are the
// library's business.
void param_verdict(double x, bool log_param, Expect* e) {
  if (log_param) {
    if (!std::isfinite(x)) e->fail("log alpha not finite");
    else if (x > 709.79 || x < -745.2) e->fail("exp(log alpha) overflows or underflows");
    else if (std::fabs(x) > 700.0) e->either("log alpha near exp's limits");
  } else {
    if (!(x > 0.0) || !std::isfinite(x)) e->fail("alpha not positive and finite");
    else if (x < 1e-300 || x > 1e300) e->either("extreme alpha: the sum may overflow");
  }
}

// Fills params for n_vec vectors of v entries at the given strides; the
// buffer holds exactly the strided extent. Strides may overlap (parameters
// are only read), so the verdict comes from the values as finally stored.
std::vector<double> make_params(FuzzedDataProvider& p, int64_t n_vec, int64_t v, int64_t sj,
                                int64_t si, bool log_param, Expect* e) {
  const size_t n = static_cast<size_t>(extent(n_vec, v, sj, si));
  std::vector<double> params(n, std::nan("0x5a5a"));  // unread slots: NaN a bad read would hit
  double palette[8];
  const size_t np = p.ConsumeIntegralInRange<size_t>(1, 8);
  for (size_t i = 0; i < np; ++i) palette[i] = fuzz_param(p, log_param);
  const uint32_t seed = p.ConsumeIntegral<uint32_t>();
  auto at = [&](int64_t j, int64_t i) {
    return static_cast<size_t>((n_vec > 1 ? j * sj : 0) + (v > 1 ? i * si : 0));
  };
  for (int64_t j = 0; j < n_vec; ++j)
    for (int64_t i = 0; i < v; ++i) {
      const uint32_t h = (static_cast<uint32_t>(j * v + i) * 2654435761u) ^ seed;
      params[at(j, i)] = palette[(h >> 7) % np];
    }
  for (int64_t j = 0; j < n_vec; ++j)
    for (int64_t i = 0; i < v; ++i) param_verdict(params[at(j, i)], log_param, e);
  return params;
}

// Makes strides valid and the extent small when the fuzzed ones are valid but
// too spread out for a buffer; invalid ones are kept for the library to reject.
void fit_strides(int64_t n1, int64_t* s1, int64_t n2, int64_t* s2, Expect* e) {
  if ((n1 > 1 && *s1 < 1) || (n2 > 1 && *s2 < 1)) {
    e->fail("stride below 1");
    return;
  }
  const int64_t cap = static_cast<int64_t>(kBufferBytes / sizeof(double));
  if (extent(n1, n2, *s1, *s2) > cap) {
    // Fall back to a contiguous layout, whichever order the strides had.
    if (*s1 >= *s2) {
      *s1 = n2;
      *s2 = 1;
    } else {
      *s1 = 1;
      *s2 = n1;
    }
  }
}

// Output layouts that certainly write no element twice (the header asks for
// non-overlapping outputs; the precise rule for others is the library's).
bool plain_layout(int64_t rows, int64_t k, int64_t sr, int64_t sk) {
  if (k == 1) return rows == 1 || sr >= 1;
  if (rows == 1) return sk >= 1;
  return (sk == 1 && sr >= k) || (sr == 1 && sk >= rows);
}

void run_loglik(FuzzedDataProvider& p, dirmn_context* ctx, dirmn_context* other,
                const dirmn_counts* counts, const Table& tab, bool rowwise) {
  Expect e;
  const bool have = counts != nullptr;
  if (!have) e.fail("counts is NULL");
  const int64_t rows = have ? tab.rows : 1, v = have ? tab.cols : 1;
  dirmn_context* use = ctx;
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0) {
    use = other;
    e.fail("counts from another context");
  }
  int64_t k = 1;
  if (!rowwise) {
    k = p.ConsumeIntegralInRange<int>(0, 3) ? p.ConsumeIntegralInRange<int64_t>(1, 3) : fuzz_size(p);
    if (k <= 0) e.fail("k not positive");
    k = std::min(k, kMaxK);
  }
  // A rejected k still gets buffers shaped for one vector.
  const int64_t n_vec = rowwise ? rows : std::max<int64_t>(k, 1);
  const int param = fuzz_enum(p, 2);
  if (param != DIRMN_PARAM_ALPHA && param != DIRMN_PARAM_LOG_ALPHA) e.fail("unknown param");
  const bool log_param = param == DIRMN_PARAM_LOG_ALPHA;
  static const uint32_t forms[] = {0u, DIRMN_FULL, DIRMN_KERNEL};
  uint32_t flags = forms[p.ConsumeIntegralInRange<int>(0, 2)];
  if (p.ConsumeIntegralInRange<int>(0, 7) == 0) {
    flags = p.ConsumeIntegral<uint32_t>();
    if ((flags & ~(DIRMN_FULL | DIRMN_KERNEL)) || (flags & DIRMN_FULL && flags & DIRMN_KERNEL))
      e.fail("unknown flags, both forms, or device output on a CPU context");
  }
  int64_t sj = fuzz_stride(p, v), si = fuzz_stride(p, 1);
  Expect pstride;
  fit_strides(n_vec, &sj, v, &si, &pstride);
  merge(&e, pstride);
  std::vector<double> params;
  if (pstride.v != Verdict::kMustFail)
    params = make_params(p, n_vec, v, sj, si, log_param, &e);
  else
    params.assign(1, 1.0);  // rejected strides: nothing may be read past this
  const bool null_params = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  if (null_params) e.fail("params is NULL");

  const int64_t kk = rowwise ? 1 : std::max<int64_t>(k, 1);
  int64_t sr = fuzz_stride(p, kk), sk = rowwise ? 1 : fuzz_stride(p, 1);
  Expect ostride;
  fit_strides(rows, &sr, kk, &sk, &ostride);
  merge(&e, ostride);
  if (ostride.v != Verdict::kMustFail && !plain_layout(rows, kk, sr, sk))
    e.either("output layout that may overlap");
  const size_t n_out =
      ostride.v != Verdict::kMustFail ? static_cast<size_t>(extent(rows, kk, sr, sk)) : 1;
  std::vector<double> out(n_out);
  std::memset(out.data(), 0xa7, n_out * sizeof(double));  // sentinel bytes
  const std::vector<double> before = out;
  const bool null_out = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  if (null_out) e.fail("out is NULL");

  Countdown cd;
  const bool interrupt = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  if (interrupt) {
    cd.left = p.ConsumeIntegralInRange<int>(0, 2);
    dirmn_context_set_interrupt(use, &Countdown::poll, &cd);
    e.either("interrupt armed");
  }
  const dirmn_status st =
      rowwise ? dirmn_loglik_rowwise(use, counts, null_params ? nullptr : params.data(), sj, si,
                                     static_cast<dirmn_param>(param), flags,
                                     null_out ? nullptr : out.data(), sr)
              : dirmn_loglik(use, counts, k, null_params ? nullptr : params.data(), sj, si,
                             static_cast<dirmn_param>(param), flags,
                             null_out ? nullptr : out.data(), sr, sk);
  const char* call = rowwise ? "dirmn_loglik_rowwise" : "dirmn_loglik";
  check_status(st, e, use, call);
  ++(rowwise ? (st ? g_tally.rowwise_fail : g_tally.rowwise_ok)
             : (st ? g_tally.loglik_fail : g_tally.loglik_ok));
  // Only now: any call on the context clears its message.
  if (interrupt) dirmn_context_set_interrupt(use, nullptr, nullptr);
  if (st != DIRMN_SUCCESS) {
    if (std::memcmp(out.data(), before.data(), n_out * sizeof(double)) != 0)
      violated(call, "failed but wrote its output");
    return;
  }
  // Success: exactly the documented elements written, all finite; zero rows 0.
  std::vector<char> target(n_out, 0);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < kk; ++j) {
      const size_t at = static_cast<size_t>((rows > 1 ? b * sr : 0) + (kk > 1 ? j * sk : 0));
      target[at] = 1;
      if (!std::isfinite(out[at])) {
        std::fprintf(stderr, "row %lld of %lld x %lld (total %.17g), vector %lld: %.17g; %s:",
                     static_cast<long long>(b), static_cast<long long>(rows),
                     static_cast<long long>(v), tab.row_total[static_cast<size_t>(b)],
                     static_cast<long long>(j), out[at], log_param ? "log alpha" : "alpha");
        for (int64_t i = 0; i < std::min<int64_t>(v, 8); ++i)
          std::fprintf(stderr, " %.17g",
                       params[static_cast<size_t>((n_vec > 1 ? (rowwise ? b : j) * sj : 0) +
                                                  (v > 1 ? i * si : 0))]);
        std::fprintf(stderr, "%s\n", v > 8 ? " ..." : "");
        violated(call, "non-finite log-likelihood");
      }
      if (tab.row_total[static_cast<size_t>(b)] == 0.0 && out[at] != 0.0)
        violated(call, "a row of zeros has a non-zero log-likelihood");
    }
  for (size_t i = 0; i < n_out; ++i)
    if (!target[i] && std::memcmp(&out[i], &before[i], sizeof(double)) != 0)
      violated(call, "wrote outside the documented output elements");
}

void check_info(FuzzedDataProvider& p, const dirmn_counts* counts, const Table& tab) {
  // An info struct of any declared size; bytes beyond it must stay untouched.
  const size_t size = p.ConsumeBool() ? sizeof(dirmn_counts_info)
                                      : p.ConsumeIntegralInRange<size_t>(0, sizeof(dirmn_counts_info) + 32);
  std::vector<unsigned char> buf(std::max(size, sizeof(dirmn_counts_info)) + 32, 0xc3);
  dirmn_counts_info info;
  std::memcpy(&info, buf.data(), sizeof info);
  info.size = size;
  std::memcpy(buf.data(), &info, sizeof info);
  const std::vector<unsigned char> before = buf;
  const dirmn_status st =
      dirmn_counts_get_info(counts, reinterpret_cast<dirmn_counts_info*>(buf.data()));
  Expect e;
  if (size < offsetof(dirmn_counts_info, rows) + sizeof(int64_t)) e.fail("info->size too small");
  check_status(st, e, nullptr, "dirmn_counts_get_info");
  if (st != DIRMN_SUCCESS) {
    if (buf != before) violated("dirmn_counts_get_info", "failed but wrote its output");
    return;
  }
  if (std::memcmp(buf.data() + size, before.data() + size, buf.size() - size) != 0)
    violated("dirmn_counts_get_info", "wrote beyond info->size");
  std::memcpy(&info, buf.data(), sizeof info);
  if (info.rows != tab.rows) violated("dirmn_counts_get_info", "wrong rows");
  if (size >= offsetof(dirmn_counts_info, cols) + sizeof(int64_t) && info.cols != tab.cols)
    violated("dirmn_counts_get_info", "wrong cols");
}

void check_totals(dirmn_context* ctx, const dirmn_counts* counts, const Table& tab) {
  std::vector<double> totals(static_cast<size_t>(tab.rows) + 1, -7.0);
  if (dirmn_counts_row_totals(ctx, counts, totals.data()) != DIRMN_SUCCESS)
    violated("dirmn_counts_row_totals", dirmn_last_error(ctx));
  for (int64_t b = 0; b < tab.rows; ++b) {
    const double want = tab.row_total[static_cast<size_t>(b)], got = totals[static_cast<size_t>(b)];
    const bool ok = tab.exact_totals && want < kTwo53 ? got == want
                                                       : std::fabs(got - want) <= 1e-9 * std::fabs(want);
    if (!ok) violated("dirmn_counts_row_totals", "wrong total");
  }
  if (totals[static_cast<size_t>(tab.rows)] != -7.0)
    violated("dirmn_counts_row_totals", "wrote past rows");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Contexts live across inputs (threads are costly to start): one serial,
  // one with a pool, so both the single- and multi-threaded paths run.
  static dirmn_context* const contexts[2] = {lasting_context(1), lasting_context(3)};
  FuzzedDataProvider p(data, size);
  const int which = p.ConsumeBool() ? 1 : 0;
  dirmn_context* ctx = contexts[which];
  dirmn_context* other = contexts[1 - which];

  // The handle pointer starts at a sentinel a failed call must leave alone.
  dirmn_counts* const kSentinel = reinterpret_cast<dirmn_counts*>(uintptr_t{0x5a5a});
  dirmn_counts* counts = kSentinel;
  Table tab;
  Expect e;
  const bool sparse = p.ConsumeBool();
  const dirmn_status st = sparse ? create_sparse(p, ctx, &counts, &tab, &e)
                                 : create_dense(p, ctx, &counts, &tab, &e);
  const char* call = sparse ? "dirmn_counts_create_sparse" : "dirmn_counts_create_dense";
  check_status(st, e, ctx, call);
  ++(sparse ? (st ? g_tally.sparse_fail : g_tally.sparse_ok)
            : (st ? g_tally.dense_fail : g_tally.dense_ok));
  if (st != DIRMN_SUCCESS) {
    if (counts != kSentinel) violated(call, "failed but wrote *counts");
    counts = nullptr;
  } else if (counts == nullptr || counts == kSentinel) {
    violated(call, "succeeded without a handle");
  } else {
    check_info(p, counts, tab);
    check_totals(ctx, counts, tab);
  }
  const int calls = p.ConsumeIntegralInRange<int>(1, 3);
  for (int i = 0; i < calls && (counts != nullptr || i == 0); ++i)
    run_loglik(p, ctx, other, counts, tab, p.ConsumeBool());
  dirmn_counts_destroy(counts);
  return 0;
}
