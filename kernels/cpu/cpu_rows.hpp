// cpu_rows.hpp: what the CPU backend's passes over rows share: the stored
// table, cell access, and the centred per-row arithmetic.
//
// Every cell term is centred: lpoch(alpha_v, n) - n log A instead of
// lpoch(alpha_v, n), and the row total's term likewise. The n log A parts
// cancel exactly (sum_v n_v = N), and what remains has the size of the
// result, so partial sums never grow to ~N log A (8e8 at alpha = 1e10) where
// each addition would round away more than the 1e-12 the results promise.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "../math/special.hpp"
#include "../math/sums.hpp"

namespace dirmn {
namespace cpu {

// Work per chunk handed to one thread, in cells (dense) or nonzeros (sparse):
// large enough to amortise scheduling, small enough to balance and to poll
// the interrupt callback often.
constexpr int64_t kCellsPerChunk = int64_t{1} << 16;

// The table's nonzeros by column, for the histograms of many weightings at
// once (an EM's M steps, cpu_column_slots.cpp): per column, its cells' rows
// in ascending order and each cell's rank among the column's distinct
// counts, which value lists in ascending order. "Indexed" columns have
// counts of at most kHistIndexMax, which index an array of weights by
// value; the others ("deep") are few, and their histograms are formed from
// the list. 8 bytes per nonzero, and 4 per distinct count of a column.
struct ColumnSlots {
  std::vector<int64_t> col_ptr;    // cols + 1
  TableArray<uint32_t> row;        // nonzeros
  TableArray<uint32_t> slot;       // nonzeros
  std::vector<int64_t> value_ptr;  // cols + 1: column v's distinct counts
  std::vector<uint32_t> value;
  // The rows' nonzero totals, distinct and ascending, and each row's rank
  // among them, where every total is at most kHistTotalIndexMax (else
  // empty, totals_ranked false): the totals' histograms are then summed by
  // rank, not in a builder's array as long as the largest total.
  bool totals_ranked = false;
  std::vector<uint32_t> total_value;
  std::vector<uint32_t> total_rank;  // rows
};

// Counts at or above this are never tabulated: a table entry per possible
// value would cost more to build than it saves.
constexpr int64_t kTableMaxCount = 255;
// Bits of a packed layout word that hold a column's cut (at most
// kTableMaxCount + 1).
constexpr int kCutBits = 9;
static_assert(kTableMaxCount + 1 < (int64_t{1} << kCutBits), "a cut fits its bits");
// A column gets a table when it has at least this many nonzeros per table
// entry; below that, evaluating its cells directly is cheaper.
constexpr double kTableMinNnzPerEntry = 0.5;

// Per-column table layout of the likelihood of shared alpha: its parameter
// vectors' tables T_v[n] (cpu_loglik.cpp) are filled per call at these
// places. It depends on the table alone, so the first such call plans it
// and the counts keep it (8 bytes per column; cpu_loglik_plan.cpp).
struct TableLayout {
  // Column v's entries n < cut(v) start at offset(v): one word per column,
  // offset << kCutBits | cut, as a cell reads them (one load from a
  // cols-long array per cell; a wide table's cells fall on columns at
  // random).
  std::vector<uint64_t> packed;
  int64_t cut(int64_t v) const {
    return static_cast<int64_t>(packed[static_cast<size_t>(v)] & ((uint64_t{1} << kCutBits) - 1));
  }
  int64_t offset(int64_t v) const { return static_cast<int64_t>(packed[static_cast<size_t>(v)] >> kCutBits); }
  // Entry 0 is every untabulated column's (cut 1: only n = 0, whose term
  // is 0): a wide sparse table's columns are mostly untabulated, and an
  // entry each was K x cols doubles to allocate and fill per call (4 MB
  // per E step at k = 20 on 27000 columns).
  int64_t size = 1;
  int64_t max_cut = 1;          // the largest cut
  bool covers_all = true;       // every stored count has an entry
  // Columns with a cell past the cut and past kDirectMax: their alphas'
  // lgamma is taken once per call (math::lpoch_deep), costing no more than
  // the one lgamma per deep cell and vector it replaces.
  std::vector<int64_t> deep;
  std::vector<uint32_t> deep_slot;  // cols (where deep is not empty): v's place in deep
};
// Throws std::bad_alloc.
std::unique_ptr<TableLayout> plan_tables(const HostTable& t);

// The rows' distinct totals, where they are integers of at most
// kTotalSlotsPerRow per row and take at most one value per
// kRowsPerDistinctTotal rows (else empty), found per call (a pass over the
// row totals): a row total's term (a log-beta, several logs) is then taken
// once per distinct total and component, not per row, which was a quarter
// of a K = 1 likelihood of short rows (text: 20000 documents, 516 distinct
// lengths).
constexpr int64_t kTotalSlotsPerRow = 8;
constexpr int64_t kRowsPerDistinctTotal = 2;
struct DistinctTotals {
  std::vector<double> value;   // ascending
  std::vector<uint32_t> slot;  // largest total + 1: total N is value[slot[N]]
};
// Throws std::bad_alloc.
DistinctTotals distinct_totals(const HostTable& t);

class CpuCounts final : public BackendCounts {
 public:
  explicit CpuCounts(HostTable&& t) : table(std::move(t)) {}
  HostTable table;
  // Built by the first histogram pass of several weightings and kept with
  // the table (one call at a time uses a context's counts); null until
  // then, and where the table has no such form or there was no room.
  mutable std::unique_ptr<ColumnSlots> slots;
  mutable bool slots_tried = false;
  // Planned by the first likelihood of shared alpha (the same rule: one
  // call at a time).
  mutable std::unique_ptr<TableLayout> loglik_layout;
};

template <class T>
const T* as(const TableArray<unsigned char>& bytes) {
  return reinterpret_cast<const T*>(bytes.data());
}

// Calls f(v, n) for each nonzero cell of row b.
template <class T, class F>
void for_each_nonzero(const HostTable& t, int64_t b, F&& f) {
  const T* x = as<T>(t.values);
  if (t.sparse) {
    for (int64_t i = t.row_ptr[b]; i < t.row_ptr[b + 1]; ++i)
      f(static_cast<int64_t>(t.col_idx[i]), static_cast<double>(x[i]));
  } else {
    const T* row = x + b * t.cols;
    for (int64_t v = 0; v < t.cols; ++v)
      if (row[v] != 0) f(v, static_cast<double>(row[v]));
  }
}

// lpoch(a, n) - n log A: the centred term of one cell.
inline double centred_lpoch(double a, double n, double log_a_sum) {
  return math::lpoch(a, n) - n * log_a_sum;
}

// The full log pmf (DIRMN_FULL) is not the kernel plus the row's stored
// multinomial coefficient: for counts ~1e6-1e7 both are ~N log N and their
// sum kept ~5e-10 relative. Each cell contributes lpoch_lfact(alpha_v, n_v)
// and the row total -lpoch_lfact(A, N) (the log-beta form, special.hpp),
// terms of the result's size; they are not centred (n log A would put back
// the ~N log A the form avoids) and need no regrouping (no term grows like
// N log N).
template <bool Full>
inline double cell_value(double a, double n, double log_a_sum) {
  return Full ? math::lpoch_lfact(a, n) : centred_lpoch(a, n, log_a_sum);
}

// cell_value for a deep count and a small alpha whose lgamma is known
// (math::lpoch_deep).
template <bool Full>
inline double deep_value(double a, double lgamma_a, const math::DeepCount& c, double log_a_sum) {
  return Full ? math::lpoch_lfact_deep(a, lgamma_a, c)
              : math::lpoch_deep(a, lgamma_a, c) - c.n * log_a_sum;
}

template <bool Full>
inline double full_row(double rest, double a_sum, double n_total) {
  return rest - math::lpoch_lfact(a_sum, n_total);
}

// A row whose counts are all in one cell: its full log pmf is its kernel
// (the multinomial coefficient is 1), and the general form's two terms
// lpoch_lfact(alpha*, N) - lpoch_lfact(A, N) agree in most digits where the
// rest of alpha is small (a value of -2.9e-4 from terms ~0.4 kept 1.3e-12
// relative); lpoch_shift_diff keeps them apart. Known from the row
// statistics: a sparse row with one stored cell, or a dense integer row whose
// stored coefficient log(N! / prod n!) is exactly 0 (row_stats forms it as
// lpoch(n* + 1, N - n*) minus the other cells' log n!, both exactly 0 for one
// cell, and at least log 2 for two or more). A dense real-valued row keeps
// the general form (a tiny cell can vanish in the sum N).
inline bool one_cell_row(const HostTable& t, int64_t b) {
  const size_t r = static_cast<size_t>(b);
  if (!(t.row_total[r] > 0.0)) return false;
  if (t.sparse) return t.row_ptr[r + 1] - t.row_ptr[r] == 1;
  return !t.real_valued && t.row_lcoef[r] == 0.0;
}

// The column of such a row's one cell (a scan of the dense row: one-cell
// rows are rare, and the stored table keeps no per-row position for narrow
// counts).
template <class T>
int64_t one_cell_column(const HostTable& t, int64_t b) {
  if (t.sparse) return static_cast<int64_t>(t.col_idx[static_cast<size_t>(t.row_ptr[b])]);
  const T* row = as<T>(t.values) + b * t.cols;
  for (int64_t v = 0; v < t.cols; ++v)
    if (row[v] != 0) return v;
  return 0;
}

// The full log pmf of such a row: a_star its cell's alpha, a_rest the sum
// of the others (formed without subtracting from A), a_sum A.
inline double one_cell_full(double a_star, double a_rest, double a_sum, double n) {
  return math::lpoch_shift_diff(a_star, a_rest, a_sum, n);
}

// Regrouping trades terms of size ~N log N for terms of size ~(A - alpha*)
// log(...): it helps only where the rest of alpha is small beside the
// dominant count.
inline bool regroup_helps(double a_rest, double n_star) { return a_rest < n_star; }

// The row's log-likelihood from its centred partial sum. `rest` excludes
// column `star` exactly when the row is regrouped (see kRegroupMinCount), and
// then a_rest is the sum of alpha without that column.
inline double finish_row(double rest, double a_sum, double log_a_sum, double n_total,
                         bool regroup, double a_star, double n_star, double a_rest) {
  if (!regroup) return rest - centred_lpoch(a_sum, n_total, log_a_sum);
  return rest + (n_total - n_star) * log_a_sum + math::lpoch(a_star, a_rest) -
         math::lpoch(a_star + n_star, a_rest + (n_total - n_star));
}


// The backend's passes (cpu_loglik.cpp, cpu_histograms.cpp,
// cpu_derivatives.cpp), on the host threads.
// `layout` is the table's (plan_tables); only a request of shared alpha
// reads it (it may be null for per-row alpha).
BackendResult loglik(const HostTable& t, const TableLayout* layout, const LoglikRequest& req,
                     HostThreads& threads, const Interrupt& interrupt);
BackendResult histograms(const HostTable& t, const double* weights, int64_t k,
                         std::vector<Histograms>* out, HostThreads& threads,
                         const Interrupt& interrupt);
// The table's ColumnSlots into *out (left null for a table of real values
// or of more than 2^32 rows); CANCELLED when interrupted. Throws
// std::bad_alloc.
BackendResult build_column_slots(const HostTable& t, HostThreads& threads,
                                 const Interrupt& interrupt, std::unique_ptr<ColumnSlots>* out);
// Whether histograms() sums these k weightings with the builders (else,
// for a small 8-bit table, per-thread accumulators merged at the end).
bool histograms_use_builders(const HostTable& t, int64_t k);
// The same histograms as histograms() where it takes the builders, bit
// for bit, from the slots.
BackendResult histograms_by_column(const HostTable& t, const ColumnSlots& s,
                                   const double* weights, int64_t k,
                                   std::vector<Histograms>* out, HostThreads& threads,
                                   const Interrupt& interrupt);
BackendResult rowwise_derivatives(const HostTable& t, const RowwiseDerivRequest& req,
                                  HostThreads& threads, const Interrupt& interrupt);

}  // namespace cpu
}  // namespace dirmn
