// Table building on several threads gives what one thread gives. The
// parallel sparse builder (build_sparse_fast.cpp) is compared, field by
// field, with the serial builder that every input can take and whose order
// of checks defines the messages; the dense builder's first bad cell is
// checked against a row-major walk written here. Both run at 1, 2 and 7
// threads, on tables large enough to be split into several blocks and, for
// CSC, several row tiles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../kernels/cpu/cpu_rows.hpp"
#include "../kernels/math/special.hpp"
#include "../kernels/table/build.hpp"
#include "../kernels/table/histogram.hpp"
#include "../kernels/table/histogram_sums.hpp"
#include "support.hpp"

namespace {

using dirmn::CountsProblem;
using dirmn::HostTable;
using dirmn::HostThreads;
using dirmn::Interrupt;
using dirmn::SparseInput;
using dirmn_test::Context;
using dirmn_test::make_context;

constexpr int kThreadCounts[] = {1, 2, 7};

// A compressed table in the caller's types, built from (row, col, value)
// cells; the outer slices' indices ascend unless shuffled afterwards.
struct Compressed {
  std::vector<int64_t> ptr, idx;
  std::vector<double> val;
  int64_t rows = 0, cols = 0;
  bool csr = true;
};

struct Cell {
  int64_t r, c;
  double v;
};

Compressed compress(const std::vector<Cell>& cells, int64_t rows, int64_t cols, bool csr) {
  Compressed t;
  t.rows = rows;
  t.cols = cols;
  t.csr = csr;
  const int64_t outer = csr ? rows : cols;
  t.ptr.assign(static_cast<size_t>(outer) + 1, 0);
  for (const Cell& c : cells) ++t.ptr[static_cast<size_t>(csr ? c.r : c.c) + 1];
  for (int64_t o = 0; o < outer; ++o) t.ptr[static_cast<size_t>(o) + 1] += t.ptr[static_cast<size_t>(o)];
  t.idx.resize(cells.size());
  t.val.resize(cells.size());
  std::vector<int64_t> at(t.ptr.begin(), t.ptr.end() - 1);
  // Cells arrive in row-major order: CSC slices come out ascending too.
  for (const Cell& c : cells) {
    const int64_t p = at[static_cast<size_t>(csr ? c.r : c.c)]++;
    t.idx[static_cast<size_t>(p)] = csr ? c.c : c.r;
    t.val[static_cast<size_t>(p)] = c.v;
  }
  return t;
}

// The caller's arrays in the types under test, kept alive with the input.
struct Arrays {
  std::vector<int32_t> p32, i32, v32;
  std::vector<int64_t> p64, i64, v64;
  std::vector<float> vf;
  std::vector<double> vd;
  SparseInput in;
};

// base 1: ptr and indices count from 1 (DIRMN_COUNTS_ONE_BASED).
void make_input(const Compressed& t, dirmn_index_type it, dirmn_dtype dt, bool real,
                dirmn_storage storage, Arrays* a, int64_t base = 0) {
  SparseInput& in = a->in;
  in.index_base = base;
  in.format = t.csr ? DIRMN_CSR : DIRMN_CSC;
  in.rows = t.rows;
  in.cols = t.cols;
  in.nnz = static_cast<int64_t>(t.idx.size());
  in.index_type = it;
  in.value_dtype = dt;
  in.real_valued = real;
  in.storage = storage;
  if (it == DIRMN_INDEX_INT32) {
    for (int64_t p : t.ptr) a->p32.push_back(static_cast<int32_t>(p + base));
    for (int64_t i : t.idx) a->i32.push_back(static_cast<int32_t>(i + base));
    in.ptr = a->p32.data();
    in.indices = a->i32.data();
  } else {
    for (int64_t p : t.ptr) a->p64.push_back(p + base);
    for (int64_t i : t.idx) a->i64.push_back(i + base);
    in.ptr = a->p64.data();
    in.indices = a->i64.data();
  }
  switch (dt) {
    case DIRMN_INT32:
      for (double v : t.val) a->v32.push_back(static_cast<int32_t>(v));
      in.values = a->v32.data();
      break;
    case DIRMN_INT64:
      for (double v : t.val) a->v64.push_back(static_cast<int64_t>(v));
      in.values = a->v64.data();
      break;
    case DIRMN_FLOAT32:
      for (double v : t.val) a->vf.push_back(static_cast<float>(v));
      in.values = a->vf.data();
      break;
    case DIRMN_FLOAT64:
      a->vd = t.val;
      in.values = a->vd.data();
      break;
  }
}

void require_same_table(const HostTable& a, const HostTable& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.cols == b.cols);
  CHECK(a.nnz == b.nnz);
  CHECK(a.max_count == b.max_count);
  CHECK(a.total == b.total);
  CHECK(a.sparse == b.sparse);
  CHECK(a.real_valued == b.real_valued);
  CHECK(a.vtype == b.vtype);
  CHECK(a.values == b.values);
  CHECK(a.row_ptr == b.row_ptr);
  CHECK(a.col_idx == b.col_idx);
  CHECK(a.row_total == b.row_total);
  CHECK(a.row_lcoef == b.row_lcoef);
  CHECK(a.row_peak_at == b.row_peak_at);
  CHECK(a.col_max == b.col_max);
  CHECK(a.col_nnz == b.col_nnz);
}

void require_same_problem(const CountsProblem& a, const CountsProblem& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.csc == b.csc);
  CHECK(a.row == b.row);
  CHECK(a.col == b.col);
  CHECK(a.entry == b.entry);
  CHECK(a.outer == b.outer);
  CHECK((a.value == b.value || (std::isnan(a.value) && std::isnan(b.value))));
  CHECK(a.integer == b.integer);
  CHECK(a.integer_value == b.integer_value);
  CHECK(a.index_value == b.index_value);
  CHECK(a.index_prev == b.index_prev);
  CHECK(a.nnz == b.nnz);
  CHECK(a.issue == b.issue);
  CHECK(a.pointer == b.pointer);
}

// Builds `in` at every thread count and with the serial builder; all must
// agree on the status, and on the table or the problem. Returns the status.
dirmn_status check_against_serial(const SparseInput& in) {
  const Interrupt none;
  HostThreads one(1);
  HostTable ref;
  CountsProblem ref_problem;
  const dirmn_status ref_status = dirmn::build_sparse_table_serial(in, one, none, &ref, &ref_problem);
  for (int t : kThreadCounts) {
    INFO("threads " << t);
    HostThreads threads(t);
    HostTable got;
    CountsProblem problem;
    const dirmn_status s = dirmn::build_sparse_table(in, threads, none, &got, &problem);
    REQUIRE(s == ref_status);
    if (s == DIRMN_SUCCESS) require_same_table(got, ref);
    else require_same_problem(problem, ref_problem);
  }
  return ref_status;
}

// A table of `rows` x `cols` at about `density`, counts from `draw`, with
// some explicit zeros among the stored entries.
template <class Draw>
std::vector<Cell> random_cells(int64_t rows, int64_t cols, double density, uint64_t seed, Draw draw) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Cell> cells;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (u(rng) < density) cells.push_back({r, c, u(rng) < 0.05 ? 0.0 : draw(rng)});
  return cells;
}

const dirmn_dtype kDtypes[] = {DIRMN_INT32, DIRMN_INT64, DIRMN_FLOAT32, DIRMN_FLOAT64};
const dirmn_index_type kIndexTypes[] = {DIRMN_INDEX_INT32, DIRMN_INDEX_INT64};

}  // namespace

TEST_CASE("sparse tables build the same at 1, 2 and 7 threads as on one thread serially",
          "[counts][build]") {
  // 5000 rows: CSC goes through three row tiles of the transpose; 15
  // entries per row on average: several column blocks.
  struct Shape {
    const char* what;
    int64_t rows, cols;
    double density;
    double max_count;
    bool real;
  } shapes[] = {{"8-bit counts", 5000, 300, 0.05, 200, false},
                {"16-bit counts", 3000, 400, 0.04, 60000, false},
                {"32-bit counts", 800, 500, 0.05, 3.0e9, false},
                {"real-valued", 1500, 200, 0.08, 40, true},
                {"dense enough to store dense", 300, 40, 0.6, 9, false}};
  for (const Shape& sh : shapes) {
    const auto cells = random_cells(sh.rows, sh.cols, sh.density, 11, [&](std::mt19937_64& g) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      const double x = 1.0 + std::pow(u(g), 6.0) * (sh.max_count - 1.0);
      return sh.real ? x : std::floor(x);
    });
    for (bool csr : {true, false}) {
      const Compressed t = compress(cells, sh.rows, sh.cols, csr);
      for (dirmn_index_type it : kIndexTypes)
        for (dirmn_dtype dt : kDtypes) {
          if (sh.real && (dt == DIRMN_INT32 || dt == DIRMN_INT64)) continue;
          if (sh.max_count > 2.0e9 && (dt == DIRMN_INT32 || dt == DIRMN_FLOAT32)) continue;
          for (dirmn_storage st : {DIRMN_STORAGE_AUTO, DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
            INFO(sh.what << (csr ? " CSR" : " CSC") << " index " << it << " dtype " << dt
                         << " storage " << st);
            Arrays a;
            make_input(t, it, dt, sh.real, st, &a);
            REQUIRE(check_against_serial(a.in) == DIRMN_SUCCESS);
            if (st != DIRMN_STORAGE_AUTO) continue;
            // Counting from 1, the same table.
            Arrays one_based;
            make_input(t, it, dt, sh.real, st, &one_based, 1);
            REQUIRE(check_against_serial(one_based.in) == DIRMN_SUCCESS);
            HostThreads two(2);
            HostTable t0, t1;
            CountsProblem p0, p1;
            REQUIRE(dirmn::build_sparse_table(a.in, two, Interrupt{}, &t0, &p0) == DIRMN_SUCCESS);
            REQUIRE(dirmn::build_sparse_table(one_based.in, two, Interrupt{}, &t1, &p1) == DIRMN_SUCCESS);
            require_same_table(t1, t0);
          }
        }
    }
  }
}

TEST_CASE("sparse tables: every problem is the serial builder's, whichever thread meets it first",
          "[counts][build]") {
  const int64_t rows = 4000, cols = 120;
  const auto cells = random_cells(rows, cols, 0.1, 5, [](std::mt19937_64& g) {
    return static_cast<double>(1 + g() % 50);
  });
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // A bad count early and one late: with several blocks the late one's
  // block may well finish first.
  struct Bad {
    const char* what;
    double early, late;
    bool integer_types;  // representable in an integer dtype
  } bads[] = {{"negative counts", -3, -7, true},
              {"too large", 9007199254740992.0, 1.0e300, false},
              {"not a number", nan, nan, false},
              {"fractional", 2.5, 0.25, false}};
  for (bool csr : {true, false}) {
    for (const Bad& bad : bads)
      for (dirmn_dtype dt : kDtypes) {
        if (!bad.integer_types && (dt == DIRMN_INT32 || dt == DIRMN_INT64)) continue;
        if (bad.early > 1e15 && dt == DIRMN_FLOAT32) continue;
        INFO((csr ? "CSR " : "CSC ") << bad.what << " dtype " << dt);
        Compressed t = compress(cells, rows, cols, csr);
        t.val[t.val.size() - 5] = bad.late;
        t.val[t.val.size() / 7] = bad.early;
        Arrays a;
        make_input(t, DIRMN_INDEX_INT32, dt, false, DIRMN_STORAGE_AUTO, &a);
        REQUIRE(check_against_serial(a.in) == DIRMN_ERROR_INVALID_COUNTS);
      }
    SECTION(csr ? "CSR structure" : "CSC structure") {
      for (int what = 0; what < 6; ++what) {
        INFO("structural problem " << what);
        Compressed t = compress(cells, rows, cols, csr);
        const size_t mid = t.idx.size() / 2, late = t.idx.size() - 3;
        const int64_t inner = csr ? cols : rows;
        dirmn_status want = DIRMN_ERROR_INVALID_ARGUMENT;
        switch (what) {
          case 0: t.idx[late] = inner; t.idx[mid] = -1; break;          // out of range
          case 1: std::swap(t.idx[mid], t.idx[mid + 1]);                // unsorted: valid
                  want = DIRMN_SUCCESS; break;
          case 2: t.idx[mid + 1] = t.idx[mid]; t.val[late] = -1;        // repeat after a bad count
                  want = DIRMN_ERROR_INVALID_COUNTS; break;
          case 3: t.idx[mid + 1] = t.idx[mid]; break;                   // a repeat
          case 4: t.ptr[t.ptr.size() / 2] = t.ptr[t.ptr.size() / 2 + 1] + 1; break;  // ptr falls
          case 5: t.ptr.back() -= 1; break;                              // ptr ends short
        }
        Arrays a;
        make_input(t, DIRMN_INDEX_INT64, DIRMN_FLOAT64, false, DIRMN_STORAGE_AUTO, &a);
        if (what == 5) a.in.nnz = t.ptr.back() + 1;
        REQUIRE(check_against_serial(a.in) == want);
        // Counting from 1: the same problem at the same place, its values
        // the caller's (one more).
        Arrays b;
        make_input(t, DIRMN_INDEX_INT32, DIRMN_INT32, false, DIRMN_STORAGE_AUTO, &b, 1);
        b.in.nnz = a.in.nnz;
        REQUIRE(check_against_serial(b.in) == want);
        if (want == DIRMN_SUCCESS) continue;
        HostThreads one(1);
        HostTable ta, tb;
        CountsProblem pa, pb;
        dirmn::build_sparse_table(a.in, one, Interrupt{}, &ta, &pa);
        dirmn::build_sparse_table(b.in, one, Interrupt{}, &tb, &pb);
        CHECK(pb.kind == pa.kind);
        CHECK(pb.entry == pa.entry);
        CHECK(pb.outer == pa.outer);
        CHECK(pb.row == pa.row);
        CHECK(pb.col == pa.col);
        CHECK(pb.pointer == pa.pointer);
        CHECK(pb.index_base == 1);
        if (pa.kind == CountsProblem::kBadIndex || pa.kind == CountsProblem::kBadPointer)
          CHECK(pb.index_value == pa.index_value + 1);
      }
    }
  }
  SECTION("a row total of 2^53, crossed in CSC by a column after others") {
    std::vector<Cell> big;
    for (int64_t r = 0; r < rows; ++r) big.push_back({r, r % cols, 1.0});
    for (int64_t c = 0; c < 4; ++c) big.push_back({rows - 2, cols - 4 + c, 3.0e15});
    std::sort(big.begin(), big.end(), [](const Cell& x, const Cell& y) {
      return x.r != y.r ? x.r < y.r : x.c < y.c;
    });
    for (bool csr : {true, false}) {
      Arrays a;
      make_input(compress(big, rows, cols, csr), DIRMN_INDEX_INT32, DIRMN_INT64, false,
                 DIRMN_STORAGE_AUTO, &a);
      REQUIRE(check_against_serial(a.in) == DIRMN_ERROR_INVALID_COUNTS);
    }
  }
}

TEST_CASE("dense tables name the first bad cell in row-major order at 1, 2 and 7 threads",
          "[counts][build]") {
  // Column-major, so the scan's walk is not row-major, and large enough
  // (2^21 cells) to be scanned in blocks.
  const int64_t rows = 8192, cols = 256;
  std::vector<double> x(static_cast<size_t>(rows * cols), 1.0);
  auto at = [&](int64_t r, int64_t c) -> double& { return x[static_cast<size_t>(c * rows + r)]; };
  at(4100, 3) = -1.0;   // met first by a column-major walk of its tile
  at(4097, 200) = 0.5;  // first in row-major order
  at(7000, 0) = -2.0;   // another block's
  for (int t : kThreadCounts) {
    INFO("threads " << t);
    const Context ctx = make_context(DIRMN_BACKEND_CPU);
    REQUIRE(dirmn_context_set_threads(ctx.get(), t) == DIRMN_SUCCESS);
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, rows, cols, DIRMN_FLOAT64, x.data(), 1, rows,
                                      nullptr) == DIRMN_ERROR_INVALID_COUNTS);
    const std::string msg = dirmn_last_error(ctx.get());
    INFO(msg);
    CHECK(msg.find("row 4097") != std::string::npos);
    CHECK(msg.find("column 200") != std::string::npos);
    CHECK(c == nullptr);
  }
}

// The two histograms are one, field by field, bit for bit.
static void check_same_histogram(const dirmn::Histogram& g, const dirmn::Histogram& r) {
  CHECK(g.dense == r.dense);
  CHECK(g.base == r.base);
  CHECK(g.base_weight == r.base_weight);
  CHECK(std::vector<double>(g.cum.data(), g.cum.data() + g.cum.size()) ==
        std::vector<double>(r.cum.data(), r.cum.data() + r.cum.size()));
  CHECK(g.value == r.value);
  CHECK(g.weight == r.weight);
  CHECK(g.first_moment == r.first_moment);
  CHECK(g.second_factorial == r.second_factorial);
}

// The two sets of histograms are one: every column's and the totals'.
static void check_same_histograms(const std::vector<dirmn::Histograms>& got,
                           const std::vector<dirmn::Histograms>& ref) {
  REQUIRE(got.size() == ref.size());
  for (size_t j = 0; j < got.size(); ++j) {
    CHECK(got[j].lcoef_sum == ref[j].lcoef_sum);
    check_same_histogram(got[j].total, ref[j].total);
    REQUIRE(got[j].column.size() == ref[j].column.size());
    for (size_t v = 0; v < static_cast<size_t>(got[j].column.size()); ++v)
      check_same_histogram(got[j].column[v], ref[j].column[v]);
  }
}

TEST_CASE("count histograms of k weightings are the same at 1, 2 and 7 threads", "[counts][build]") {
  // 16-bit and real-valued tables take the builders' path (8-bit ones have
  // their own); the weights of a component are a row's responsibilities.
  // Whole counts also go by column (cpu_column_slots.cpp), which must give
  // the row-ordered pass's histograms bit for bit: scattered counts to 9001
  // (dense, pairs, and past the indexed range), scattered counts to 4000
  // (pairs within the indexed range, built from the column's list of
  // values), a band of 120 values above 1000 (the offset dense form), and
  // about one count past the indexed range per column, which a weighting
  // that does not weigh its row leaves out (its histogram is then the
  // indexed range's, dense).
  const int64_t rows = 700, cols = 90, k = 3;
  enum class Kind { kScattered, kReal, kBand, kIndexedPairs, kDeepRare };
  for (Kind kind : {Kind::kScattered, Kind::kReal, Kind::kBand, Kind::kIndexedPairs, Kind::kDeepRare}) {
    const bool real = kind == Kind::kReal;
    const auto cells = random_cells(rows, cols, 0.3, 9, [&](std::mt19937_64& g) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      if (kind == Kind::kBand) return 1000.0 + std::floor(u(g) * 120.0);
      if (kind == Kind::kIndexedPairs) return 1.0 + std::floor(std::pow(u(g), 5.0) * 3999.0);
      if (kind == Kind::kDeepRare) return u(g) < 0.006 ? 5000.0 + std::floor(u(g) * 3.0) : 1.0 + std::floor(u(g) * 300.0);
      const double x = 1.0 + std::pow(u(g), 5.0) * 9000.0;
      return real ? x : std::floor(x);
    });
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> w(static_cast<size_t>(rows * k));
    for (double& x : w) x = u(rng) < 0.1 ? 0.0 : u(rng);
    for (dirmn_storage st : {DIRMN_STORAGE_SPARSE, DIRMN_STORAGE_DENSE}) {
      INFO("kind " << static_cast<int>(kind) << " storage " << st);
      Arrays a;
      make_input(compress(cells, rows, cols, true), DIRMN_INDEX_INT32, DIRMN_FLOAT64, real, st, &a);
      HostThreads one(1);
      HostTable t;
      CountsProblem problem;
      REQUIRE(dirmn::build_sparse_table(a.in, one, Interrupt{}, &t, &problem) == DIRMN_SUCCESS);
      std::vector<dirmn::Histograms> ref, ref1;
      REQUIRE(dirmn::cpu::histograms(t, w.data(), k, &ref, one, Interrupt{}).ok());
      REQUIRE(dirmn::cpu::histograms(t, nullptr, 1, &ref1, one, Interrupt{}).ok());
      // The moments against sums written here, over the cells.
      for (int64_t j = 0; j < k; ++j)
        for (int64_t v = 0; v < cols; v += 7) {
          double first = 0.0;
          for (const Cell& c : cells)
            if (c.c == v) first += w[static_cast<size_t>(c.r * k + j)] * c.v;
          CHECK(std::fabs(ref[static_cast<size_t>(j)].column[static_cast<size_t>(v)].first_moment - first) <=
                1e-12 * first);
        }
      if (kind == Kind::kBand) {
        int offset = 0;
        for (int64_t v = 0; v < cols; ++v) {
          const dirmn::Histogram& h = ref[0].column[static_cast<size_t>(v)];
          offset += h.dense && h.base > 0.0;
        }
        CHECK(offset > 0);
      }
      if (kind == Kind::kIndexedPairs) {
        int pairs = 0;
        for (int64_t v = 0; v < cols; ++v) pairs += !ref[0].column[static_cast<size_t>(v)].dense;
        CHECK(pairs > 0);
      }
      for (int threads : kThreadCounts) {
        INFO("threads " << threads);
        HostThreads pool(threads);
        std::vector<dirmn::Histograms> got;
        REQUIRE(dirmn::cpu::histograms(t, w.data(), k, &got, pool, Interrupt{}).ok());
        check_same_histograms(got, ref);
        std::unique_ptr<dirmn::cpu::ColumnSlots> slots;
        REQUIRE(dirmn::cpu::build_column_slots(t, pool, Interrupt{}, &slots).ok());
        CHECK((slots == nullptr) == real);
        if (!slots) continue;
        std::vector<dirmn::Histograms> by_col, by_col1;
        REQUIRE(dirmn::cpu::histograms_by_column(t, *slots, w.data(), k, &by_col, pool, Interrupt{}).ok());
        check_same_histograms(by_col, ref);
        // The listed form's full log pmf: the same sum as over every column.
        std::vector<double> alpha(static_cast<size_t>(cols));
        for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(v)] = 0.3 + 0.01 * static_cast<double>(v);
        for (int64_t j = 0; j < k; ++j)
          CHECK(dirmn::histogram_full_value(by_col[static_cast<size_t>(j)], alpha.data(), &pool) ==
                dirmn::histogram_full_value(ref[static_cast<size_t>(j)], alpha.data(), &pool));
        if (kind == Kind::kDeepRare) {
          // Deep columns that a weighting leaves within the indexed range
          // (their histogram dense), and deep ones it weighs (pairs).
          int within = 0, past = 0;
          for (int64_t j = 0; j < k; ++j)
            for (int64_t v = 0; v < cols; ++v) {
              if (t.col_max[static_cast<size_t>(v)] <= dirmn::kHistIndexMax) continue;
              const dirmn::Histogram& h = ref[static_cast<size_t>(j)].column[static_cast<size_t>(v)];
              (h.dense ? within : past) += 1;
            }
          CHECK(within > 0);
          CHECK(past > 0);
        }
        REQUIRE(dirmn::cpu::histograms_by_column(t, *slots, nullptr, 1, &by_col1, pool, Interrupt{}).ok());
        check_same_histograms(by_col1, ref1);
        // Histograms reused for another table of the same shape, with
        // every tenth column empty: what the last pass left there goes.
        std::vector<Cell> fewer;
        for (const Cell& c : cells)
          if (c.c % 10 != 0) fewer.push_back(c);
        Arrays a2;
        make_input(compress(fewer, rows, cols, true), DIRMN_INDEX_INT32, DIRMN_FLOAT64, real, st, &a2);
        HostTable t2;
        REQUIRE(dirmn::build_sparse_table(a2.in, one, Interrupt{}, &t2, &problem) == DIRMN_SUCCESS);
        std::vector<dirmn::Histograms> ref2;
        REQUIRE(dirmn::cpu::histograms(t2, w.data(), k, &ref2, one, Interrupt{}).ok());
        std::unique_ptr<dirmn::cpu::ColumnSlots> slots2;
        REQUIRE(dirmn::cpu::build_column_slots(t2, pool, Interrupt{}, &slots2).ok());
        REQUIRE(slots2);
        REQUIRE(dirmn::cpu::histograms_by_column(t2, *slots2, w.data(), k, &by_col, pool, Interrupt{}).ok());
        check_same_histograms(by_col, ref2);
        // The pass by column stores only the columns it wrote, ascending:
        // none of the emptied ones.
        for (const dirmn::Histograms& h : by_col) {
          REQUIRE_FALSE(h.column.all_stored());
          const std::vector<int64_t>& listed = h.column.listed();
          CHECK(std::is_sorted(listed.begin(), listed.end()));
          CHECK(h.column.stored_histograms().size() == listed.size());
          for (int64_t v : listed) CHECK(v % 10 != 0);
        }
        // A listed form rewritten by the row-ordered pass (every column
        // stored), then by column again.
        REQUIRE(dirmn::cpu::histograms(t2, w.data(), k, &by_col, pool, Interrupt{}).ok());
        CHECK(by_col[0].column.all_stored());
        check_same_histograms(by_col, ref2);
        REQUIRE(dirmn::cpu::histograms_by_column(t, *slots, w.data(), k, &by_col, pool, Interrupt{}).ok());
        check_same_histograms(by_col, ref);
      }
    }
  }
}

TEST_CASE("histogram sums over a fit's active columns are the sums over every column, bit for bit",
          "[counts][build]") {
  // A mixture component of a wide sparse table has counts in a few of its
  // columns; its fit evaluates only those (FlatHistograms over a list).
  // Every third column is empty; the others mix small counts (the dense
  // form), scattered deep ones (pairs) and, in column 1, a band of 1500
  // values (a dense histogram longer than a batch).
  const int64_t rows = 600, cols = 400, k = 2;
  auto cells = random_cells(rows, cols, 0.05, 17, [](std::mt19937_64& g) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    return u(g) < 0.8 ? 1.0 + std::floor(u(g) * 20.0) : 1.0 + std::floor(std::pow(u(g), 3.0) * 9000.0);
  });
  std::vector<Cell> kept;
  for (const Cell& c : cells)
    if (c.c % 3 != 0 && c.c != 1) kept.push_back(c);
  for (int64_t b = 0; b < rows; ++b) kept.push_back(Cell{b, 1, 2000.0 + static_cast<double>((b * 7) % 1500)});
  std::sort(kept.begin(), kept.end(), [](const Cell& x, const Cell& y) { return x.r != y.r ? x.r < y.r : x.c < y.c; });
  Arrays a;
  make_input(compress(kept, rows, cols, true), DIRMN_INDEX_INT32, DIRMN_FLOAT64, false,
             DIRMN_STORAGE_SPARSE, &a);
  HostThreads one(1);
  HostTable t;
  CountsProblem problem;
  REQUIRE(dirmn::build_sparse_table(a.in, one, Interrupt{}, &t, &problem) == DIRMN_SUCCESS);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> w(static_cast<size_t>(rows * k));
  for (double& x : w) x = u(rng) < 0.2 ? 0.0 : u(rng);
  std::vector<dirmn::Histograms> hist;
  REQUIRE(dirmn::cpu::histograms(t, w.data(), k, &hist, one, Interrupt{}).ok());
  for (int threads : kThreadCounts) {
    HostThreads pool(threads);
    for (int64_t j = 0; j < k; ++j) {
      INFO("threads " << threads << " component " << j);
      const dirmn::Histograms& h = hist[static_cast<size_t>(j)];
      std::vector<int64_t> active;
      std::vector<double> full(static_cast<size_t>(cols), 0.0), compact;
      for (int64_t v = 0; v < cols; ++v)
        if (!h.column[static_cast<size_t>(v)].empty()) {
          active.push_back(v);
          full[static_cast<size_t>(v)] = 0.05 + 3.0 * u(rng);
          compact.push_back(full[static_cast<size_t>(v)]);
        }
      REQUIRE(active.size() < static_cast<size_t>(cols * 2 / 3 + 1));
      REQUIRE(h.column[1].dense);
      REQUIRE(h.column[1].cum.size() > 1024);
      double f_full = 0.0, c_full = 0.0, f_sub = 0.0, c_sub = 0.0;
      std::vector<double> g_full(static_cast<size_t>(cols)), d_full(static_cast<size_t>(cols));
      std::vector<double> g_sub(active.size()), d_sub(active.size());
      dirmn::histogram_sums(h, full.data(), &f_full, g_full.data(), d_full.data(), &c_full, &pool);
      const dirmn::FlatHistograms flat(h, active);
      dirmn::histogram_sums(flat, compact.data(), &f_sub, g_sub.data(), d_sub.data(), &c_sub, &pool);
      CHECK(f_sub == f_full);
      CHECK(c_sub == c_full);
      for (size_t i = 0; i < active.size(); ++i) {
        CHECK(g_sub[i] == g_full[static_cast<size_t>(active[i])]);
        CHECK(d_sub[i] == d_full[static_cast<size_t>(active[i])]);
      }
      // The value against the cells' own log-gamma sums (the row terms
      // from the totals): sum_b w_b [sum_v lpoch(a_v, n_bv) - lpoch(A, N_b)].
      double A = 0.0;
      for (double x : full) A += x;
      std::vector<double> total(static_cast<size_t>(rows), 0.0);
      double direct = 0.0;
      for (const Cell& c : kept) {
        const double wb = w[static_cast<size_t>(c.r * k + j)];
        const double av = full[static_cast<size_t>(c.c)];
        direct += wb * (std::lgamma(av + c.v) - std::lgamma(av));
        total[static_cast<size_t>(c.r)] += c.v;
      }
      for (int64_t b = 0; b < rows; ++b) {
        const double wb = w[static_cast<size_t>(b * k + j)];
        if (wb > 0.0 && total[static_cast<size_t>(b)] > 0.0)
          direct -= wb * (std::lgamma(A + total[static_cast<size_t>(b)]) - std::lgamma(A));
      }
      CHECK(std::fabs(f_sub - direct) <= 1e-9 * std::fabs(direct));
    }
  }
}

// sum_i w_i f(a, n_i) for f = lpoch, dpoch, tpoch, in long double over each
// value's factors: sum_k<n log(a+k), 1/(a+k) and -1/(a+k)^2 (lgammal, and
// the library's dpoch and tpoch, where n is not whole): the references of
// the split histograms' sums.
namespace {
struct PerValueSums {
  long double l = 0.0L, d = 0.0L, t = 0.0L;
};
PerValueSums per_value_sums(double a, const std::vector<std::pair<double, double>>& values) {
  PerValueSums s;
  const long double al = a;
  for (const auto& [n, w] : values) {
    if (n != std::floor(n)) {
      s.l += w * (lgammal(al + n) - lgammal(al));
      s.d += w * dirmn::math::dpoch(a, n);
      s.t += w * dirmn::math::tpoch(a, n);
      continue;
    }
    for (int k = 0; k < static_cast<int>(n); ++k) {
      const long double r = 1.0L / (al + k);
      s.l += w * logl(al + k);
      s.d += w * r;
      s.t -= w * r * r;
    }
  }
  return s;
}
}  // namespace

TEST_CASE("split histograms (a dense head, the values past it) sum as the per-value special functions",
          "[counts][build]") {
  // A component's share of a sparse column: one or two values far apart
  // (dense up to 256, pairs past it) is evaluated split (histogram_sums.hpp).
  // Each column alone, against per-value sums in long double: sum_k<n
  // log(a+k), 1/(a+k) and -1/(a+k)^2 (lgammal where n is not whole).
  struct Case {
    std::vector<std::pair<double, double>> values;  // (value, weight)
    unsigned char form;
  };
  using F = dirmn::FlatHistograms;
  const std::vector<Case> cases = {
      {{{42.0, 2.5}}, F::kSplit},                                          // one far value
      {{{3.0, 1.0}, {200.0, 0.25}}, F::kSplit},                            // one in the head, one far
      {{{11.0, 1.5}, {40.0, 3.0}}, F::kSplit},                             // just past the head
      {{{1.0, 4.0}, {7.0, 2.0}, {10.0, 0.5}, {5000.0, 1.0}, {70000.0, 0.5}}, F::kSplit},  // pairs
      {{{2.5, 1.0}, {300.0, 1.0}}, F::kPairs},                             // a fraction in the head
  };
  std::vector<std::pair<double, double>> many;
  for (int n = 1; n <= 30; ++n) many.push_back({static_cast<double>(n), 1.0});
  std::vector<Case> all = cases;
  all.push_back({many, F::kPlain});  // dense enough to stay dense
  for (const double a : {1e-12, 1e-3, 0.7, 9.5, 250.0, 1e6}) {
    for (size_t ci = 0; ci < all.size(); ++ci) {
      INFO("alpha " << a << " case " << ci);
      dirmn::HistogramBuilder builder;
      for (const auto& [n, w] : all[ci].values) builder.add(n, w);
      dirmn::Histograms h;
      h.cols = 1;
      h.column.assign_all(1);
      h.column.stored(0) = builder.finish();
      const dirmn::FlatHistograms flat(h);
      REQUIRE(flat.form[0] == all[ci].form);
      double f = 0.0, g = 0.0, d = 0.0, c = 0.0;
      dirmn::histogram_sums(flat, &a, &f, &g, &d, &c);
      const PerValueSums ref = per_value_sums(a, all[ci].values);
      const long double f_ref = ref.l, g_ref = ref.d, d_ref = ref.t;
      CHECK(std::fabs(f - static_cast<double>(f_ref)) <= 1e-13 * std::fabs(static_cast<double>(f_ref)));
      CHECK(std::fabs(g - static_cast<double>(g_ref)) <= 1e-13 * std::fabs(static_cast<double>(g_ref)));
      CHECK(std::fabs(d - static_cast<double>(d_ref)) <= 1e-13 * std::fabs(static_cast<double>(d_ref)));
    }
  }
}

TEST_CASE("8-bit tables take the accumulators' histogram pass only where they are small beside the cells",
          "[counts][build]") {
  // The 8-bit pass zeroes, merges and reads cols x (largest count + 1)
  // accumulators per weighting and thread on every pass: a tall table of
  // small counts keeps it; a wide sparse one (soilrep's shape: 56 x 16825,
  // counts to 96, 7 % nonzero) takes the builders (or the column slots),
  // whose cost follows its nonzeros. Both give the same sums (checked on
  // their values here, the moments against the cells).
  struct Shape { int64_t rows, cols; double density; double top; bool builders; };
  for (const Shape sh : {Shape{3000, 40, 0.5, 12.0, false}, Shape{56, 16825, 0.07, 96.0, true}}) {
    INFO("rows " << sh.rows << " cols " << sh.cols);
    const auto cells = random_cells(sh.rows, sh.cols, sh.density, 23, [&](std::mt19937_64& g) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      return 1.0 + std::floor(std::pow(u(g), 3.0) * sh.top);
    });
    Arrays a;
    make_input(compress(cells, sh.rows, sh.cols, true), DIRMN_INDEX_INT32, DIRMN_FLOAT64, false,
               DIRMN_STORAGE_AUTO, &a);
    HostThreads one(1);
    HostTable t;
    CountsProblem problem;
    REQUIRE(dirmn::build_sparse_table(a.in, one, Interrupt{}, &t, &problem) == DIRMN_SUCCESS);
    REQUIRE(t.vtype == dirmn::ValueType::U8);
    const int64_t k = 5;
    // Within the accumulators' memory limit, so that the cells decide.
    REQUIRE(k * t.cols * (static_cast<int64_t>(t.max_count) + 1) <= (int64_t{1} << 23));
    CHECK(dirmn::cpu::histograms_use_builders(t, k) == sh.builders);
    std::vector<double> w(static_cast<size_t>(sh.rows * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25 + static_cast<double>(i % 7);
    std::vector<dirmn::Histograms> h;
    REQUIRE(dirmn::cpu::histograms(t, w.data(), k, &h, one, Interrupt{}).ok());
    for (int64_t j = 0; j < k; ++j) {
      std::vector<double> first(static_cast<size_t>(sh.cols), 0.0);
      for (const Cell& c : cells) first[static_cast<size_t>(c.c)] += w[static_cast<size_t>(c.r * k + j)] * c.v;
      for (int64_t v = 0; v < sh.cols; ++v)
        CHECK(std::fabs(h[static_cast<size_t>(j)].column[static_cast<size_t>(v)].first_moment -
                        first[static_cast<size_t>(v)]) <= 1e-12 * first[static_cast<size_t>(v)]);
    }
  }
}

TEST_CASE("split columns summed in runs: every column's terms where the batches fill and mix forms",
          "[counts][build]") {
  // 120 columns in one block of kSumBlockCols: pairs columns with a head
  // value and 70 values past the head each (their tails fill a batch's
  // tail part twice), dense columns that split, dense ones that stay,
  // and pairs that cannot split (a fraction in the head), interleaved; every
  // column's gradient and Hessian diagonal and the total against long
  // double sums of each value's terms.
  const int64_t cols = 120;
  std::mt19937_64 g(41);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<std::pair<double, double>>> values(static_cast<size_t>(cols));
  for (int64_t v = 0; v < cols; ++v) {
    auto& col = values[static_cast<size_t>(v)];
    switch (v % 4) {
      case 0:  // pairs: a head value and 70 deep ones
        col.push_back({1.0 + std::floor(u(g) * 5.0), 0.5 + u(g)});
        for (int i = 0; i < 70; ++i) col.push_back({300.0 + 97.0 * i + std::floor(u(g) * 90.0), 0.1 + u(g)});
        break;
      case 1:  // dense, split: two values far apart
        col.push_back({2.0, u(g)});
        col.push_back({60.0 + std::floor(u(g) * 190.0), 0.25 + u(g)});
        break;
      case 2:  // dense, kept: many values
        for (int n = 1; n <= 20; ++n) col.push_back({static_cast<double>(n), 0.1 + u(g)});
        break;
      default:  // pairs that cannot split
        col.push_back({1.5, 1.0});
        col.push_back({5000.0 + std::floor(u(g) * 100.0), 2.0});
    }
  }
  dirmn::Histograms h;
  h.cols = cols;
  h.column.assign_all(cols);
  for (int64_t v = 0; v < cols; ++v) {
    dirmn::HistogramBuilder builder;
    for (const auto& [n, w] : values[static_cast<size_t>(v)]) builder.add(n, w);
    h.column.stored(static_cast<size_t>(v)) = builder.finish();
  }
  const dirmn::FlatHistograms flat(h);
  using F = dirmn::FlatHistograms;
  int64_t tail = 0;
  for (int64_t v = 0; v < cols; ++v) {
    const unsigned char want[] = {F::kSplit, F::kSplit, F::kPlain, F::kPairs};
    REQUIRE(flat.form[static_cast<size_t>(v)] == want[v % 4]);
    if (flat.form[static_cast<size_t>(v)] == F::kSplit)
      tail += flat.tail_offset[static_cast<size_t>(v) + 1] - flat.tail_offset[static_cast<size_t>(v)] + 1;
  }
  REQUIRE(tail > 2 * 1024);  // the tail part fills at least twice
  for (const double scale : {1e-3, 0.8, 40.0}) {
    INFO("alpha scale " << scale);
    std::vector<double> alpha(static_cast<size_t>(cols));
    for (double& a : alpha) a = scale * (0.5 + u(g));
    double f = 0.0, c = 0.0;
    std::vector<double> grad(static_cast<size_t>(cols)), hess(static_cast<size_t>(cols));
    for (int threads : kThreadCounts) {
      HostThreads pool(threads);
      double f_t = 0.0;
      std::vector<double> g_t(static_cast<size_t>(cols)), d_t(static_cast<size_t>(cols));
      dirmn::histogram_sums(flat, alpha.data(), &f_t, g_t.data(), d_t.data(), &c, &pool);
      if (threads == kThreadCounts[0]) {
        f = f_t;
        grad = g_t;
        hess = d_t;
      }
      CHECK(f_t == f);
      CHECK(g_t == grad);
      CHECK(d_t == hess);
    }
    long double f_ref = 0.0L;
    for (int64_t v = 0; v < cols; ++v) {
      const PerValueSums ref = per_value_sums(alpha[static_cast<size_t>(v)], values[static_cast<size_t>(v)]);
      const long double g_ref = ref.d, d_ref = ref.t;
      f_ref += ref.l;
      INFO("column " << v);
      CHECK(std::fabs(grad[static_cast<size_t>(v)] - static_cast<double>(g_ref)) <=
            1e-13 * std::fabs(static_cast<double>(g_ref)));
      CHECK(std::fabs(hess[static_cast<size_t>(v)] - static_cast<double>(d_ref)) <=
            1e-13 * std::fabs(static_cast<double>(d_ref)));
    }
    CHECK(std::fabs(f - static_cast<double>(f_ref)) <= 1e-13 * std::fabs(static_cast<double>(f_ref)));
  }
}
