// test_accuracy.cpp: dirmn's numerics against 50-digit mpmath references
// (tests/data/reference_loglik.txt, written by scripts/gen_reference.py).
//
// Two layers are checked separately so a failure says where precision is
// lost: the special-function differences of kernels/math/special.hpp on their
// own, then whole per-row log-likelihoods through the public C API, over
// every storage form and input dtype that reaches a different code path.
//
// Set DIRMN_ACCURACY_REPORT=1 to print the largest errors observed, and
// DIRMN_ACCURACY_STRICT=1 to drop the kernel's allowance for cancellation
// (kCancelEps; the full form never has one).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../kernels/math/special.hpp"
#include "support.hpp"

namespace {

struct Point {
  std::string fn;
  double a = 0, n = 0, value = 0;
};

struct Row {
  std::vector<double> counts;
  double loglik = 0, full = 0;
  double scale_loglik = 0, scale_full = 0;  // size of the terms that cancel
};

struct Case {
  int id = 0;
  int64_t v = 0;
  bool real_valued = false;
  std::string label;
  std::vector<double> alpha;
  std::vector<Row> rows;
};

struct Reference {
  std::vector<Point> points;
  std::vector<Case> cases;
};

double parse_double(const std::string& s) {
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') throw std::runtime_error("bad number '" + s + "'");
  return d;
}

// Loaded once: the file is ~0.5 MB and every test case reads it.
const Reference& reference() {
  static const Reference ref = [] {
    Reference r;
    const std::string path = dirmn_test::test_data_path("reference_loglik.txt");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::string line;
    Case* cur = nullptr;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ss(line);
      std::string tag;
      ss >> tag;
      if (tag == "lpoch" || tag == "dpoch" || tag == "tpoch" || tag == "lpoch_lfact") {
        std::string a, n, v;
        ss >> a >> n >> v;
        r.points.push_back({tag, parse_double(a), parse_double(n), parse_double(v)});
      } else if (tag == "case") {
        std::string kind;
        r.cases.emplace_back();
        cur = &r.cases.back();
        ss >> cur->id >> cur->v >> kind >> cur->label;
        cur->real_valued = kind == "real";
      } else if (cur == nullptr && (tag == "alpha" || tag == "row" || tag == "end")) {
        throw std::runtime_error("'" + tag + "' line outside a case");
      } else if (tag == "alpha") {
        std::string tok;
        while (ss >> tok) cur->alpha.push_back(parse_double(tok));
      } else if (tag == "row") {
        Row row;
        std::string tok;
        while (ss >> tok && tok != "|") row.counts.push_back(parse_double(tok));
        std::string ll, full, bar, sll, sfull;
        ss >> ll >> full >> bar >> sll >> sfull;
        row.loglik = parse_double(ll);
        row.full = parse_double(full);
        row.scale_loglik = parse_double(sll);
        row.scale_full = parse_double(sfull);
        if (static_cast<int64_t>(row.counts.size()) != cur->v)
          throw std::runtime_error("row length mismatch: " + line.substr(0, 60));
        cur->rows.push_back(std::move(row));
      } else if (tag == "end") {
        if (static_cast<int64_t>(cur->alpha.size()) != cur->v)
          throw std::runtime_error("alpha length mismatch in case " + std::to_string(cur->id));
        cur = nullptr;
      } else {
        throw std::runtime_error("unknown line: " + line.substr(0, 60));
      }
    }
    return r;
  }();
  return ref;
}

bool report_wanted() {
  const char* e = std::getenv("DIRMN_ACCURACY_REPORT");
  return e != nullptr && e[0] != '\0' && e[0] != '0';
}

// Largest error seen, remembered with where it occurred.
struct Worst {
  double err = 0;
  std::string where;
  void see(double e, const std::string& w) {
    if (e > err) {
      err = e;
      where = w;
    }
  }
};

std::string fmt17(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The acceptance rule shared by every comparison: relative error within
// `rel`, or, for a reference below `abs_below` in magnitude, absolute error
// within `abs_tol`. A zero reference (n = 0) therefore needs |got| <= abs_tol.
bool accept(double got, double want, double rel, double abs_tol, double abs_below) {
  if (!std::isfinite(got)) return false;
  const double d = std::fabs(got - want);
  if (d <= rel * std::fabs(want)) return true;
  return std::fabs(want) < abs_below && d <= abs_tol;
}

}  // namespace

TEST_CASE("lpoch, dpoch and tpoch match 50-digit references", "[accuracy][math]") {
  const Reference& ref = reference();
  REQUIRE(ref.points.size() > 5000);

  // The issue asked for 1e-13 (lpoch) and 1e-12 (dpoch, tpoch) relative;
  // special.hpp achieves ~2e-15 for a in [1e-8, 1e12], so there these are
  // tightened to that with 5x headroom for other compilers' and libms'
  // rounding (the report mode prints the actual figures). lpoch crosses zero
  // (at a = 1, n = 1; near lgamma's minimum), so small values get an absolute
  // bound. Outside the grid (a down to 5e-324, up to 1e300) lpoch keeps the
  // issue's 1e-13: at a = 1e-200, n = 123.456 the value 9.09 is the
  // difference of lgamma terms near 470, and an ulp of those is 1e-14 of it.
  struct Tol {
    double rel, abs_tol, abs_below;
  };
  auto tol_of = [](const Point& p) {
    if (p.fn != "lpoch") return Tol{1e-14, 0.0, 0.0};
    const bool in_grid = p.a >= 1e-8 && p.a <= 1e12;
    return Tol{in_grid ? 1e-14 : 1e-13, 1e-14, 1.0};
  };

  Worst rel_w[3], abs_w[3];
  const char* names[3] = {"lpoch", "dpoch", "tpoch"};
  int failures = 0;
  for (const Point& p : ref.points) {
    if (p.fn == "lpoch_lfact") continue;  // the next case's
    const int f = p.fn == "lpoch" ? 0 : p.fn == "dpoch" ? 1 : 2;
    const double got = f == 0   ? dirmn::math::lpoch(p.a, p.n)
                       : f == 1 ? dirmn::math::dpoch(p.a, p.n)
                                : dirmn::math::tpoch(p.a, p.n);
    const double d = std::fabs(got - p.value);
    const std::string where = p.fn + "(" + fmt17(p.a) + ", " + fmt17(p.n) + ")";
    // The two figures the tolerance rule uses: relative error, and, for
    // lpoch values below 1 in magnitude, absolute error.
    if (f != 0 || std::fabs(p.value) >= 1.0) {
      if (p.value != 0) rel_w[f].see(d / std::fabs(p.value), where);
    } else {
      abs_w[f].see(d, where);
    }
    const Tol t = tol_of(p);
    if (!accept(got, p.value, t.rel, t.abs_tol, t.abs_below)) {
      ++failures;
      if (failures <= 40) {
        INFO(where << " = " << fmt17(got) << ", reference " << fmt17(p.value) << ", rel error "
                   << (p.value != 0 ? d / std::fabs(p.value) : d));
        CHECK(false);
      }
    }
  }
  CHECK(failures == 0);
  if (report_wanted())
    for (int f = 0; f < 3; ++f)
      std::printf("%s: max rel error %.3g at %s; max abs error where |value| < 1: %.3g at %s\n",
                  names[f], rel_w[f].err, rel_w[f].where.c_str(), abs_w[f].err,
                  f == 0 ? abs_w[f].where.c_str() : "(not used)");
}

// The full log pmf's cell term, and the deep-count forms the host's
// likelihood pass takes for counts above kDirectMax against alpha below
// kAsymptoticMin (lpoch_deep, lpoch_lfact_deep, from lgamma(a) and a
// DeepCount), against the same 50-digit references. lpoch_lfact is 0 at
// a = 1 and small near it: values below 1 are judged by absolute error
// on the scale of the terms that cancel, log n (the general form
// differences -log n and log B(a, n)).
TEST_CASE("lpoch_lfact and the deep-count forms match 50-digit references", "[accuracy][math]") {
  const Reference& ref = reference();
  int lfact_points = 0, deep_points = 0, failures = 0;
  Worst lfact_w, deep_w, lpoch_deep_w;
  const auto check = [&](const char* fn, double got, const Point& p, Worst* w) {
    const double d = std::fabs(got - p.value);
    const double scale = std::max(1.0, std::fabs(std::log(p.n)));
    const bool ok = accept(got, p.value, 1e-14, 1e-15 * scale, 1.0);
    w->see(std::fabs(p.value) >= 1.0 ? d / std::fabs(p.value) : d / scale,
           std::string(fn) + "(" + fmt17(p.a) + ", " + fmt17(p.n) + ")");
    if (!ok && ++failures <= 40) {
      INFO(fn << "(" << fmt17(p.a) << ", " << fmt17(p.n) << ") = " << fmt17(got) << ", reference "
              << fmt17(p.value) << ", error " << d);
      CHECK(false);
    }
  };
  for (const Point& p : ref.points) {
    if (p.fn != "lpoch_lfact" && p.fn != "lpoch") continue;
    const bool deep = dirmn::math::deep_count_applies(p.n) && dirmn::math::deep_alpha_applies(p.a);
    int sign = 0;
    const double lga = deep ? ::lgamma_r(p.a, &sign) : 0.0;
    const dirmn::math::DeepCount c = dirmn::math::deep_count(deep ? p.n : 1.0);
    if (p.fn == "lpoch") {
      if (!deep) continue;
      ++deep_points;
      check("lpoch_deep", dirmn::math::lpoch_deep(p.a, lga, c), p, &lpoch_deep_w);
      continue;
    }
    // Outside alpha's grid the general form keeps lpoch's wider bound
    // (the first case's), which this rule does not express.
    if (p.a >= 1e-8 && p.a <= 1e12) {
      ++lfact_points;
      check("lpoch_lfact", dirmn::math::lpoch_lfact(p.a, p.n), p, &lfact_w);
    }
    if (deep) {
      ++deep_points;
      check("lpoch_lfact_deep", dirmn::math::lpoch_lfact_deep(p.a, lga, c), p, &deep_w);
    }
  }
  CHECK(lfact_points > 1500);
  CHECK(deep_points > 600);
  CHECK(failures == 0);
  if (report_wanted())
    std::printf("lpoch_lfact: worst %.3g at %s\nlpoch_lfact_deep: worst %.3g at %s\n"
                "lpoch_deep: worst %.3g at %s\n",
                lfact_w.err, lfact_w.where.c_str(), deep_w.err, deep_w.where.c_str(),
                lpoch_deep_w.err, lpoch_deep_w.where.c_str());
}

namespace {

using dirmn_test::Context;
using dirmn_test::Counts;

// One way of handing a case's table to the library.
struct Layout {
  const char* name;
  bool sparse_input;       // dirmn_counts_create_sparse (CSR) instead of dense
  bool col_major;          // dense input in column-major order
  dirmn_dtype dtype;
  dirmn_storage storage;   // the stored form asked for
};

template <class T>
std::vector<T> convert(const std::vector<double>& x) {
  std::vector<T> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<T>(x[i]);
  return out;
}

// Typed copy of a double buffer in the layout's dtype, as raw bytes.
std::vector<unsigned char> as_dtype(const std::vector<double>& x, dirmn_dtype dt) {
  std::vector<unsigned char> bytes;
  auto put = [&](const auto& v) {
    bytes.resize(v.size() * sizeof(v[0]));
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  };
  switch (dt) {
    case DIRMN_INT32: put(convert<int32_t>(x)); break;
    case DIRMN_INT64: put(convert<int64_t>(x)); break;
    case DIRMN_FLOAT32: put(convert<float>(x)); break;
    case DIRMN_FLOAT64: put(x); break;
  }
  return bytes;
}

Counts make_counts(dirmn_context* ctx, const Case& c, const Layout& L) {
  const int64_t rows = static_cast<int64_t>(c.rows.size()), v = c.v;
  dirmn_counts_options opt;
  dirmn_counts_options_init(&opt);
  opt.storage = L.storage;
  if (c.real_valued) opt.flags |= DIRMN_COUNTS_REAL_VALUED;
  dirmn_counts* out = nullptr;
  dirmn_status st;
  if (L.sparse_input) {
    std::vector<int64_t> ptr{0}, idx;
    std::vector<double> val;
    for (const Row& r : c.rows) {
      // Columns in descending order: the library must not rely on sorted input.
      for (int64_t j = v - 1; j >= 0; --j)
        if (r.counts[static_cast<size_t>(j)] != 0) {
          idx.push_back(j);
          val.push_back(r.counts[static_cast<size_t>(j)]);
        }
      ptr.push_back(static_cast<int64_t>(idx.size()));
    }
    const auto vb = as_dtype(val, L.dtype);
    st = dirmn_counts_create_sparse(ctx, &out, DIRMN_CSR, rows, v,
                                    static_cast<int64_t>(idx.size()), DIRMN_INDEX_INT64,
                                    ptr.data(), idx.empty() ? nullptr : idx.data(), L.dtype,
                                    vb.empty() ? nullptr : vb.data(), &opt);
  } else {
    std::vector<double> cells(static_cast<size_t>(rows * v));
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t j = 0; j < v; ++j)
        cells[static_cast<size_t>(L.col_major ? j * rows + b : b * v + j)] =
            c.rows[static_cast<size_t>(b)].counts[static_cast<size_t>(j)];
    const auto bytes = as_dtype(cells, L.dtype);
    st = dirmn_counts_create_dense(ctx, &out, rows, v, L.dtype, bytes.data(),
                                   L.col_major ? 1 : v, L.col_major ? rows : 1, &opt);
  }
  INFO("case " << c.id << " (" << c.label << "), layout " << L.name << ": "
               << dirmn_last_error(ctx));
  REQUIRE(st == DIRMN_SUCCESS);
  return Counts(out);
}

// Integer counts reach 2^24 at most, so every dtype holds them exactly.
const Layout kIntLayouts[] = {
    {"dense int32", false, false, DIRMN_INT32, DIRMN_STORAGE_DENSE},
    {"dense int64 col-major", false, true, DIRMN_INT64, DIRMN_STORAGE_DENSE},
    {"dense float32", false, false, DIRMN_FLOAT32, DIRMN_STORAGE_DENSE},
    {"dense float64", false, false, DIRMN_FLOAT64, DIRMN_STORAGE_DENSE},
    {"dense int32 -> sparse", false, false, DIRMN_INT32, DIRMN_STORAGE_SPARSE},
    {"dense float64 col-major -> sparse", false, true, DIRMN_FLOAT64, DIRMN_STORAGE_SPARSE},
    {"csr int64 -> sparse", true, false, DIRMN_INT64, DIRMN_STORAGE_SPARSE},
    {"csr float64 -> dense", true, false, DIRMN_FLOAT64, DIRMN_STORAGE_DENSE},
};
// Real-valued counts are only exact in float64.
const Layout kRealLayouts[] = {
    {"dense float64", false, false, DIRMN_FLOAT64, DIRMN_STORAGE_DENSE},
    {"dense float64 col-major -> sparse", false, true, DIRMN_FLOAT64, DIRMN_STORAGE_SPARSE},
    {"csr float64 -> sparse", true, false, DIRMN_FLOAT64, DIRMN_STORAGE_SPARSE},
};

// The target for a whole row: 1e-12 relative, or, for the kernel
// only, 1e-9 absolute where the value is below 1000 in magnitude (the full
// form has no absolute fallback: check_rows).
constexpr double kRowRel = 1e-12;
constexpr double kRowAbs = 1e-9;
constexpr double kRowAbsBelow = 1000.0;
// Where a kernel value is a small remainder of much larger lgamma differences
// (counts near 2^24, a value of -4 left from terms of 5e8), the target is out
// of reach of double arithmetic: rounding each term correctly to double and
// summing exactly still misses it by up to 3e-8 (checked with mpmath for the
// rows of this file). There the bound is this many units of 2^-52 of the sum
// of the absolute values of those terms; dirmn stays below 3.
constexpr double kCancelEps = 8.0;

struct RowStats {
  bool strict = false;     // the target on every row, no cancellation bound
  Worst rel, abs, scaled;  // scaled: absolute error / size of the cancelling terms
  Worst rel_large, abs_small;  // the two measures: |value| >= 1000, < 1000
  Worst rel_full;              // relative error of the full form (the log pmf), every row
  int failures = 0;
  int cancellation_bound_used = 0;
};

void check_rows(const Case& c, const Layout& L, const char* path, bool full,
                const std::vector<double>& got, RowStats* stats) {
  for (size_t b = 0; b < c.rows.size(); ++b) {
    const Row& r = c.rows[b];
    const double want = full ? r.full : r.loglik;
    const double scale = full ? r.scale_full : r.scale_loglik;
    const double d = std::fabs(got[b] - want);
    std::ostringstream where;
    where << "case " << c.id << " (" << c.label << ") row " << b << " " << L.name << " " << path
          << (full ? " full" : " loglik");
    if (want != 0) stats->rel.see(d / std::fabs(want), where.str());
    if (full && want != 0) stats->rel_full.see(d / std::fabs(want), where.str());
    stats->abs.see(d, where.str());
    if (scale != 0) stats->scaled.see(d / scale, where.str());
    if (std::fabs(want) >= kRowAbsBelow) stats->rel_large.see(d / std::fabs(want), where.str());
    else stats->abs_small.see(d, where.str());
    // The full log pmf is held to kRowRel relative on every row, with no
    // absolute or cancellation fallback (a zero row must give exactly 0):
    // its log-beta form (and the one-cell form of rows with a single
    // nonzero cell) leaves no cancellation of the kind the kernel's large
    // counts have. The kernel keeps the rule and the bound below.
    bool ok = full ? std::isfinite(got[b]) && d <= kRowRel * std::fabs(want)
                   : accept(got[b], want, kRowRel, kRowAbs, kRowAbsBelow);
    if (!ok && !full && !stats->strict && std::isfinite(got[b]) &&
        d <= kCancelEps * std::numeric_limits<double>::epsilon() * scale) {
      ok = true;
      ++stats->cancellation_bound_used;
    }
    if (!ok) {
      ++stats->failures;
      if (stats->failures <= 40) {
        INFO(where.str() << ": got " << fmt17(got[b]) << ", reference " << fmt17(want)
                         << ", abs error " << d << ", rel error "
                         << (want != 0 ? d / std::fabs(want) : d)
                         << ", size of cancelling terms " << scale);
        CHECK(false);
      }
    }
  }
}

void run_case(const Case& c, const Layout& L, RowStats* stats) {
  Context ctx = dirmn_test::make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts counts = make_counts(ctx.get(), c, L);
  const int64_t rows = static_cast<int64_t>(c.rows.size()), v = c.v;
  std::vector<double> got(static_cast<size_t>(rows));
  for (bool full : {false, true}) {
    const uint32_t flags = full ? DIRMN_FULL : DIRMN_KERNEL;
    // Shared alpha: tabulated lookups plus the series path for large counts.
    std::fill(got.begin(), got.end(), std::nan(""));
    REQUIRE(dirmn_loglik(ctx.get(), counts.get(), 1, c.alpha.data(), v, 1, DIRMN_PARAM_ALPHA,
                         flags, got.data(), 1, 1) == DIRMN_SUCCESS);
    check_rows(c, L, "shared", full, got, stats);
    // k = 2 (the vector twice, column-major output): per-vector tables and
    // output strides; both columns must carry the same reference values.
    std::vector<double> two(c.alpha);
    two.insert(two.end(), c.alpha.begin(), c.alpha.end());
    std::vector<double> got2(static_cast<size_t>(2 * rows), std::nan(""));
    REQUIRE(dirmn_loglik(ctx.get(), counts.get(), 2, two.data(), v, 1, DIRMN_PARAM_ALPHA, flags,
                         got2.data(), 1, rows) == DIRMN_SUCCESS);
    for (int j = 0; j < 2; ++j)
      check_rows(c, L, j == 0 ? "k=2 first" : "k=2 second", full,
                 std::vector<double>(got2.begin() + j * rows, got2.begin() + (j + 1) * rows),
                 stats);
    // Per-row alpha (the same vector on every row): no tables, lpoch per cell.
    std::vector<double> per_row(static_cast<size_t>(rows * v));
    for (int64_t b = 0; b < rows; ++b)
      std::copy(c.alpha.begin(), c.alpha.end(), per_row.begin() + b * v);
    std::fill(got.begin(), got.end(), std::nan(""));
    REQUIRE(dirmn_loglik_rowwise(ctx.get(), counts.get(), per_row.data(), v, 1,
                                 DIRMN_PARAM_ALPHA, flags, got.data(), 1) == DIRMN_SUCCESS);
    check_rows(c, L, "rowwise", full, got, stats);
  }
}

void print_row_stats(const char* what, const RowStats& s) {
  std::printf("%s: max rel error %.3g at %s\n  max abs error %.3g at %s\n"
              "  max rel error where |value| >= 1000: %.3g at %s\n"
              "  max abs error where |value| < 1000: %.3g at %s\n"
              "  max abs error / size of cancelling terms %.3g at %s\n"
              "  max rel error of the full form (log pmf) %.3g at %s\n"
              "  %d results met only the cancellation bound, %d failed\n",
              what, s.rel.err, s.rel.where.c_str(), s.abs.err, s.abs.where.c_str(),
              s.rel_large.err, s.rel_large.where.c_str(), s.abs_small.err,
              s.abs_small.where.c_str(), s.scaled.err, s.scaled.where.c_str(), s.rel_full.err,
              s.rel_full.where.c_str(),
              s.cancellation_bound_used, s.failures);
}

void run_integer_cases(RowStats* stats) {
  const Reference& ref = reference();
  REQUIRE(ref.cases.size() > 30);
  for (const Case& c : ref.cases) {
    if (c.real_valued) continue;
    for (const Layout& L : kIntLayouts) run_case(c, L, stats);
  }
}

}  // namespace

TEST_CASE("per-row log-likelihoods match 50-digit references", "[accuracy][cpu]") {
  RowStats stats;
  // DIRMN_ACCURACY_STRICT=1 holds every row to the target with no
  // cancellation bound: today that fails on the rows with counts near 2^24
  // whose value is a small remainder (see kCancelEps). An environment switch
  // rather than a hidden test case, because Catch2 v2 runs hidden cases under
  // exclusion-only filters such as ctest's "~[cuda]".
  const char* strict = std::getenv("DIRMN_ACCURACY_STRICT");
  stats.strict = strict != nullptr && strict[0] != '\0' && strict[0] != '0';
  run_integer_cases(&stats);
  CHECK(stats.failures == 0);
  if (report_wanted()) print_row_stats(stats.strict ? "integer counts, strict" : "integer counts", stats);
}

TEST_CASE("real-valued counts match 50-digit references", "[accuracy][cpu]") {
  const Reference& ref = reference();
  RowStats stats;
  int n = 0;
  for (const Case& c : ref.cases) {
    if (!c.real_valued) continue;
    ++n;
    for (const Layout& L : kRealLayouts) run_case(c, L, &stats);
  }
  REQUIRE(n > 0);
  CHECK(stats.failures == 0);
  if (report_wanted()) print_row_stats("real-valued counts", stats);
}

// --- The full log pmf summed over count histograms (dirmn_loglik_sum with
// DIRMN_FULL, dirmn_fit's loglik), where the kernel plus the stored
// multinomial coefficients cancelled to ~5e-10 relative at deep counts.

namespace {

// Deep counts (1e6 .. 1e7), overdispersed: the rows' proportions differ.
const double kDeepRows[5][4] = {{3141592, 2718281, 1414213, 1732050},
                                {9876543, 1234567, 5555555, 2222222},
                                {1000003, 7000001, 3000017, 4999999},
                                {6543210, 6000000, 1100000, 8123456},
                                {2500000, 3999999, 9000000, 1000001}};
const double kDeepWeights[5] = {1.0, 0.5, 2.0, 1.25, 0.75};

// 300 rows whose histograms take every form: columns 0 and 1 (pairs:
// values above the index range), 2 (dense, banded at base ~3000), 3 (dense
// from 0, with zero cells), and row totals banded at base ~3e6.
std::vector<double> band_table() {
  std::vector<double> x;
  for (int b = 0; b < 300; ++b) {
    x.push_back(1000000 + (b * 37) % 401);
    x.push_back(2000000 - (b * 37) % 401);
    x.push_back(3000 + (b * 11) % 101);
    x.push_back(b % 7);
  }
  return x;
}
std::vector<double> band_weights() {
  std::vector<double> w;
  for (int b = 0; b < 300; ++b) w.push_back(1 + (b % 4) * 0.25);
  return w;
}

// sum_b [w_b] log pmf(x_b | alpha), unweighted and weighted, printed by
// `/usr/bin/python3 scripts/gen_reference.py --full-sums` (mpmath, each row's
// value as the reference file's, two working precisions agreeing to 55
// digits), the tables and weights exactly as above.
struct FullSumRef {
  const std::vector<double>* x;
  const std::vector<double>* w;
  int64_t rows;
  std::vector<double> alpha;
  double plain, weighted;
};

const std::vector<double>& deep_table() {
  static const std::vector<double> x(&kDeepRows[0][0], &kDeepRows[0][0] + 20);
  return x;
}
const std::vector<double>& deep_weights() {
  static const std::vector<double> w(kDeepWeights, kDeepWeights + 5);
  return w;
}

std::vector<FullSumRef> full_sum_refs() {
  static const std::vector<double> bx = band_table(), bw = band_weights();
  return {{&deep_table(), &deep_weights(), 5, {0.7, 1.3, 2.5, 0.9},
           -243.7461328706259354895043, -268.6075138617446567190016},
          {&deep_table(), &deep_weights(), 5, {1e-3, 0.05, 0.3, 8.0},
           -340.5990426608741410058039, -365.1452255861883789833663},
          {&bx, &bw, 300, {2.5, 0.8, 0.05, 1.7},
           -14834.55338793346812872668, -20397.51778008804062834542}};
}

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

}  // namespace

TEST_CASE("dirmn_loglik_sum's full log pmf at deep counts matches 50-digit references",
          "[accuracy][derivatives]") {
  for (dirmn_backend be : dirmn_test::backends_under_test()) {
    Context ctx = dirmn_test::make_context(be);
    REQUIRE(ctx);
    for (const FullSumRef& r : full_sum_refs()) {
      Counts c = dirmn_test::counts_of(ctx.get(), *r.x, r.rows, 4);
      for (bool weighted : {false, true}) {
        double got = std::nan("");
        REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), r.alpha.data(), 1, DIRMN_PARAM_ALPHA,
                                 weighted ? r.w->data() : nullptr, DIRMN_FULL, &got, nullptr,
                                 nullptr, nullptr) == DIRMN_SUCCESS);
        const double want = weighted ? r.weighted : r.plain;
        INFO(dirmn_test::backend_name(be) << ", rows " << r.rows << ", alpha[0] " << r.alpha[0]
                                          << (weighted ? ", weighted" : "") << ": got "
                                          << fmt17(got) << ", reference " << fmt17(want));
        CHECK(rel_err(got, want) <= kRowRel);
      }
    }
  }
}

TEST_CASE("dirmn_fit's loglik at deep counts is the log pmf at the fitted alpha",
          "[accuracy][fit]") {
  const std::vector<double>& x = deep_table();
  for (dirmn_backend be : dirmn_test::backends_under_test()) {
    Context ctx = dirmn_test::make_context(be);
    REQUIRE(ctx);
    Counts c = dirmn_test::counts_of(ctx.get(), x, 5, 4);
    for (bool weighted : {false, true}) {
      INFO(dirmn_test::backend_name(be) << (weighted ? ", weighted" : ""));
      const double* w = weighted ? deep_weights().data() : nullptr;
      dirmn_fit_options o;
      dirmn_fit_options_init(&o);
      o.weights = w;
      std::vector<double> a(4);
      dirmn_fit_result r;
      std::memset(&r, 0, sizeof r);
      r.size = sizeof r;
      r.alpha = a.data();
      REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
      REQUIRE(r.converged == 1);
      REQUIRE(r.multinomial_limit == 0);
      // The full value dirmn_loglik_sum gives at the returned alpha (held to
      // 50-digit references above).
      double sum_full = 0.0;
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), a.data(), 1, DIRMN_PARAM_ALPHA, w, DIRMN_FULL,
                               &sum_full, nullptr, nullptr, nullptr) == DIRMN_SUCCESS);
      INFO("fit loglik " << fmt17(r.loglik) << ", dirmn_loglik_sum " << fmt17(sum_full));
      CHECK(rel_err(r.loglik, sum_full) <= 1e-13);
      // And the CPU's per-row log pmf (its own code path, held to the
      // reference table above), summed with the weights in long double. The
      // device's per-row full form is the kernel plus a stored per-row
      // coefficient, so only the CPU's is held to this.
      if (be != DIRMN_BACKEND_CPU) continue;
      std::vector<double> rows(5);
      REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, a.data(), 4, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                           rows.data(), 1, 1) == DIRMN_SUCCESS);
      long double s = 0;
      for (int b = 0; b < 5; ++b) s += static_cast<long double>(w ? w[b] : 1.0) * rows[static_cast<size_t>(b)];
      INFO("sum of per-row log pmfs " << fmt17(static_cast<double>(s)));
      CHECK(rel_err(r.loglik, static_cast<double>(s)) <= kRowRel);
    }
  }
}
