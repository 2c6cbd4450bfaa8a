// validate.hpp: what every count must be, and the layout of the compact
// table once the counts are known -- shared by the dense and the sparse
// builders.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "../thread_pool.hpp"
#include "input.hpp"
#include "storage.hpp"
#include "table.hpp"

namespace dirmn {
namespace build {

// x is a whole number. Below 2^53 a round trip through int64 decides it
// without a libm call (floor is not inlined on baseline x86-64); every double
// of 2^53 or more is whole (and the cast would overflow there).
inline bool whole(double x) {
  return !(x < 9007199254740992.0) || x == static_cast<double>(static_cast<int64_t>(x));
}

// A stored ptr or index that counts from base (0, or 1 with
// DIRMN_COUNTS_ONE_BASED), counted from 0. The one value whose shift would
// overflow, INT64_MIN, is far below 0 either way and every check rejects it.
inline int64_t from_base(int64_t stored, int64_t base) {
  return stored == std::numeric_limits<int64_t>::min() ? stored : stored - base;
}

// Checks one count; on failure sets the problem's issue. Integer sources are
// compared in their own type: converting 2^53 + 1 to double first rounds it
// to 2^53. Real-valued counts need not be whole.
template <class S>
bool check_count(S x, bool real_valued, CountsProblem* p) {
  if (std::is_integral<S>::value) {
    if (x < 0) return p->issue = kCountNegative, false;
    if (static_cast<int64_t>(x) > kMaxCountInt) return p->issue = kCountTooLarge, false;
    return true;
  } else {
    const double d = static_cast<double>(x);
    if (std::isnan(d)) return p->issue = kCountNaN, false;
    if (std::isinf(d)) return p->issue = kCountInf, false;
    if (d < 0) return p->issue = kCountNegative, false;
    if (d > kMaxCount) return p->issue = kCountTooLarge, false;
    if (!real_valued && !whole(d)) return p->issue = kCountNotInteger, false;
    return true;
  }
}

// The bound a row's running total must stay below (see kMaxCount): 2^53.
inline double row_total_limit(bool) { return 9007199254740992.0; }

// Adds an accepted count to its row's running total; false (with the
// problem's issue set) once the total reaches the limit. One add and one
// compare: a double sum is exact here (kMaxCount says why).
inline bool add_to_row(double* total, double x, double limit, bool real_valued,
                       CountsProblem* p) {
  *total += x;
  if (*total < limit) return true;
  (void)real_valued;
  p->issue = kRowTotalTooLarge;
  return false;
}

// Records a bad count x at (row, col), an integer count exactly.
template <class S>
void bad_count(CountsProblem* p, int64_t row, int64_t col, S x) {
  p->kind = CountsProblem::kBadCount;
  p->row = row;
  p->col = col;
  p->value = static_cast<double>(x);
  p->integer = std::is_integral<S>::value;
  p->integer_value = std::is_integral<S>::value ? static_cast<int64_t>(x) : 0;
}

// What choosing the storage needs, gathered by the validation scan (per
// thread, then merged). Everything else about the rows and columns is
// computed afterwards from the compact table (row_stats), which is narrower
// and row-major whatever the caller's layout.
struct ScanStats {
  int64_t nnz = 0;
  double max_count = 0.0;
  bool integral = true;

  inline void add(double x) {
    ++nnz;
    if (x > max_count) max_count = x;
    if (!whole(x)) integral = false;
  }
  void merge(const ScanStats& o) {
    nnz += o.nnz;
    max_count = std::max(max_count, o.max_count);
    integral = integral && o.integral;
  }
};

// Sets the table's shape and allocates its storage (zeroed when dense).
inline void layout_table(const ScanStats& s, const std::vector<int64_t>& row_nnz, int64_t rows,
                         int64_t cols, bool real_valued, bool sparse, ValueType vt, HostTable* t) {
  t->rows = rows;
  t->cols = cols;
  t->nnz = s.nnz;
  t->sparse = sparse;
  t->real_valued = real_valued;
  t->vtype = vt;
  t->max_count = s.max_count;
  if (sparse) {
    t->row_ptr.resize(static_cast<size_t>(rows + 1));
    t->row_ptr[0] = 0;
    for (int64_t i = 0; i < rows; ++i)
      t->row_ptr[static_cast<size_t>(i + 1)] =
          t->row_ptr[static_cast<size_t>(i)] + row_nnz[static_cast<size_t>(i)];
    t->col_idx.resize(static_cast<size_t>(s.nnz));
    // A dense input's first try at 8-bit cells left rows x cols bytes here;
    // shrinking would keep them for the table's whole life.
    const size_t need = static_cast<size_t>(s.nnz) * value_bytes(vt);
    if (t->values.capacity() > 2 * need) TableArray<unsigned char>().swap(t->values);
    t->values.resize(need);
  } else {
    t->values.assign(static_cast<size_t>(rows * cols) * value_bytes(vt), 0);
  }
}

// Runs body(part, r0, r1) over `parts` contiguous row blocks on the host
// threads, polling `interrupt` before each block the calling thread takes
// (the first included): false when it asked to stop (blocks already started
// finish). A body that runs out of memory stops nothing else; the loop
// throws std::bad_alloc once every block has finished.
template <class F>
bool for_row_blocks(HostThreads& threads, int64_t rows, int parts, const Interrupt& interrupt,
                    F&& body) {
  const int64_t per = (rows + parts - 1) / parts;
  std::atomic<bool> no_memory{false};
  const bool finished = threads.run(
      parts,
      [&](int64_t p) {
        const int64_t r0 = std::min(rows, p * per), r1 = std::min(rows, r0 + per);
        try {
          body(static_cast<int>(p), r0, r1);
        } catch (...) {
          no_memory = true;
        }
      },
      [&] { return interrupt.poll(); });
  if (no_memory) throw std::bad_alloc();
  return finished;
}

// Polls `interrupt` once per kPollWork units of serial work (entries of a
// sparse table): often enough to stop a large load part-way, rarely enough
// to cost nothing.
class WorkPoller {
 public:
  static constexpr int64_t kPollWork = int64_t{1} << 20;
  explicit WorkPoller(const Interrupt& interrupt) : interrupt_(interrupt) {}
  // After `work` more units: true when the callback asked to stop.
  bool stop(int64_t work) {
    since_ += work;
    if (since_ < kPollWork) return false;
    since_ = 0;
    return interrupt_.poll();
  }

 private:
  const Interrupt& interrupt_;
  int64_t since_ = 0;
};

}  // namespace build
}  // namespace dirmn
