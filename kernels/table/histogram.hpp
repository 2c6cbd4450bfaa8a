// histogram.hpp: count-histogram sufficient statistics of a weighted table.
//
// With one alpha shared by all rows (row weights w_b), the log-likelihood and
// all its derivatives depend on the data only through, per column v, the
// weighted counts of each value n_bv, and the weighted counts of each row
// total N_b (Minka 2000; Sklar 2014). Two forms are kept:
//   * dense cumulative: C[k] = sum_b w_b [n_b > k] for k < max n, so that
//     sum_b w_b lpoch(a, n_b) = sum_k C[k] log(a + k): one log per k;
//   * (value, weight) pairs, sorted by value, for columns whose counts are
//     large or real-valued: one lpoch per distinct value.
// Either way, an evaluation costs O(distinct counts), independent of rows.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>


namespace dirmn {

// Columns (and row totals) whose largest count is at most this use the
// dense cumulative form; beyond it, (value, weight) pairs.
constexpr double kHistDenseMax = 256.0;

// Integer values spanning at most this many times their number of
// distinct values (plus kHistBandSlack) keep the dense cumulative form above
// kHistDenseMax, offset by their smallest value: a log per integer of the
// span costs less than lgamma, digamma and trigamma per distinct value.
// Row totals are the usual case (thousands of totals in a narrow band).
constexpr double kHistBandFactor = 8.0;
constexpr double kHistBandSlack = 256.0;

// The dense form's cumulative weights. Counts below 16 (the usual case:
// most columns of most tables) fit inline, so the histograms of a wide
// table are one allocation, not one per column: building and freeing them
// costs a pass over memory instead of a malloc and a free per column.
class CumArray {
 public:
  static constexpr size_t kInline = 15;
  CumArray() = default;
  CumArray(const CumArray&) = default;
  CumArray& operator=(const CumArray&) = default;
  // A moved-from array is empty (its heap entries went with the move).
  CumArray(CumArray&& o) noexcept : n_(o.n_), heap_(std::move(o.heap_)) {
    for (size_t k = 0; k < kInline; ++k) inline_[k] = o.inline_[k];
    o.n_ = 0;
  }
  CumArray& operator=(CumArray&& o) noexcept {
    n_ = o.n_;
    heap_ = std::move(o.heap_);
    for (size_t k = 0; k < kInline; ++k) inline_[k] = o.inline_[k];
    o.n_ = 0;
    return *this;
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const double* data() const { return n_ <= kInline ? inline_ : heap_.data(); }
  double* data() { return n_ <= kInline ? inline_ : heap_.data(); }
  double operator[](size_t k) const { return data()[k]; }
  double& operator[](size_t k) { return data()[k]; }
  // n entries of x (the previous contents are lost).
  void assign(size_t n, double x) {
    if (n > kInline) {
      heap_.assign(n, x);
    } else {
      std::vector<double>().swap(heap_);
      for (size_t k = 0; k < n; ++k) inline_[k] = x;
    }
    n_ = n;
  }

 private:
  size_t n_ = 0;
  double inline_[kInline] = {};
  std::vector<double> heap_;
};

// One weighted histogram: either dense cumulative or pairs.
struct Histogram {
  bool dense = true;
  // Dense: every value is >= base (an integer; 0 unless the values are
  // large), base_weight is the total weight, and cum[k] = weight of values
  // > base + k, so sum_b w_b lpoch(a, n_b) =
  //   base_weight lpoch(a, base) + sum_k cum[k] log(a + base + k).
  double base = 0.0;
  double base_weight = 0.0;
  CumArray cum;
  std::vector<double> value;   // pairs: distinct nonzero values, ascending
  std::vector<double> weight;  // pairs: their summed weights
  double first_moment = 0.0;   // sum of w * n
  double second_factorial = 0.0;  // sum of w * n (n - 1)
  bool empty() const { return dense ? cum.empty() && base_weight == 0.0 : value.empty(); }
};

// The histograms of one weighting's columns, in one of two forms:
//   * every column stored (the passes over dense tables and the device's
//     downloads, which write each one);
//   * only the columns a pass wrote, listed in ascending order; every other
//     column reads as an empty histogram.
// A mixture component of a wide sparse table has weight in a few hundred
// of its 27000 columns: a Histogram (some 240 bytes) for every column of
// every component was most of an EM pass's memory -- 128 MB allocated,
// zeroed and page-faulted per EM start at k = 20 for a table of 21000
// nonzeros -- and the listed form stores what the pass wrote.
class ColumnHistograms {
 public:
  // cols columns, every one stored and empty (throws std::bad_alloc).
  void assign_all(int64_t cols);
  // cols columns, none stored, all reading as empty; keeps its memory for
  // the next pass (throws std::bad_alloc).
  void clear(int64_t cols);
  // Stores h as column v's in the listed form: after clear(), v above every
  // column appended since (throws std::bad_alloc).
  void append(int64_t v, Histogram&& h);

  int64_t size() const { return cols_; }
  bool all_stored() const { return all_; }
  // The listed form's columns, ascending (a listed column may be empty);
  // empty where all_stored().
  const std::vector<int64_t>& listed() const { return listed_; }
  // Column v's histogram (v < size()).
  const Histogram& operator[](size_t v) const {
    if (all_) return store_[v];
    const uint32_t i = slot_[v];
    return i == kNone ? empty() : store_[i];
  }
  // A column to write: every column where all_stored(), else a listed one.
  Histogram& stored(size_t v) {
    assert(all_ || slot_[v] != kNone);
    return all_ ? store_[v] : store_[slot_[v]];
  }
  // Room for n listed columns (throws std::bad_alloc).
  void reserve(size_t n) {
    store_.reserve(n);
    listed_.reserve(n);
  }
  // The stored histograms: every column's in column order where
  // all_stored(), else the listed columns' in the order of listed().
  const std::vector<Histogram>& stored_histograms() const { return store_; }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;  // cols < 2^32 (capi's limit)
  static const Histogram& empty();
  int64_t cols_ = 0;
  bool all_ = true;
  std::vector<Histogram> store_;
  std::vector<int64_t> listed_;  // listed form: the stored columns
  std::vector<uint32_t> slot_;   // listed form: store_ index of each column, or kNone
};

struct Histograms {
  int64_t cols = 0;
  ColumnHistograms column;        // one per column
  Histogram total;                // of the row totals N_b
  double lcoef_sum = 0.0;         // sum_b w_b (lgamma(N_b + 1) - sum_v lgamma(n_bv + 1))
};

// Integer values up to this index an array while a histogram is built (no
// sorting); larger or fractional values go to (value, weight) pairs.
constexpr double kHistIndexMax = 4096.0;
// Row totals are larger and fewer histograms: they may index further.
constexpr double kHistTotalIndexMax = 4194304.0;

// Builds a histogram from (value, weight) observations; values are > 0.
// Chooses the form from the largest value and integrality.
class HistogramBuilder {
 public:
  explicit HistogramBuilder(double index_max = kHistIndexMax) : index_max_(index_max) {}
  // Adds weight w to value n. Inline for the case of almost every call, a
  // whole n already in the indexed range (compared as an int64 round trip:
  // floor is a libm call on baseline x86-64); the rest, zeros included, go
  // to add_slow.
  void add(double n, double w) {
    if (!use_pairs_ && n >= 1.0 && n < static_cast<double>(indexed_.size()) &&
        n == static_cast<double>(static_cast<int64_t>(n))) {
      indexed_[static_cast<size_t>(n)] += w;
      return;
    }
    add_slow(n, w);
  }
  Histogram finish();

 private:
  void add_slow(double n, double w);

  double index_max_;
  std::vector<double> indexed_;  // indexed_[n] = weight of value n, while values are small ints
  std::vector<std::pair<double, double>> pairs_;
  bool use_pairs_ = false;
};

// The histogram of whole values 1..top, by_value[n] the weight of value n
// (by_value[0] ignored; top 0: empty), in the form HistogramBuilder::finish
// chooses for them, written over *h (whose storage it may reuse): the
// builder's own last step, and that of passes that sum the weights by value
// themselves.
void histogram_from_indexed(const double* by_value, size_t top, Histogram* h);

// The histogram of whole values listed ascending (n of them, each > 0)
// with their weights (0: none), as a HistogramBuilder(index_max) given those
// weights by value would make it; scratch holds the dense and band forms'
// weights by value while they are formed. Its cost follows the list (and a
// dense or band form's span), not the largest value (a deep column's few
// counts near kHistIndexMax were a scan of 4096 entries per weighting and
// pass).
void histogram_from_sorted(const uint32_t* values, const double* weights, size_t n,
                           double index_max, std::vector<double>* scratch, Histogram* h);

// The dense-form histogram of weights by value, written over *h (whose
// storage it reuses): by_value[n] is the weight of count n, for n < bins
// (by_value[0] is ignored).
void histogram_from_value_weights(const double* by_value, int bins, Histogram* h);

// The dense-form histogram of weights of the integers base, base + 1, ...:
// by_value[i] is the weight of value base + i (i < len), base >= 1. Its
// base is the smallest value with weight.
Histogram histogram_from_band(const double* by_value, int64_t base, int64_t len);

}  // namespace dirmn
