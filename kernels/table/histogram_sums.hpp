// histogram_sums.hpp: the shared-alpha log-likelihood and its derivatives
// summed over count histograms (histogram.hpp): a dense entry costs a log
// and a division, a (value, weight) pair a few special functions, and
// nothing depends on the number of rows.
#pragma once

#include <cstdint>
#include <vector>

#include "../thread_pool.hpp"
#include "histogram.hpp"

namespace dirmn {

// Columns are summed in fixed blocks of this many, so the result does not
// depend on whether (or on how many threads) the blocks run in parallel.
constexpr int64_t kSumBlockCols = 128;
// Evaluations of at least this many histogram entries (a dense entry costs
// a log and a division; a (value, weight) pair, counted as
// kPairEntryCost, several special functions) sum their column blocks on the
// given threads. Below it, waking the threads costs more than it saves.
constexpr int64_t kParallelSumEntries = 32768;
constexpr int64_t kPairEntryCost = 8;

// A fit's evaluations take a histogram whose few values lie far apart (a
// component's share of a sparse table's column: one or two values, up to
// 256 in the dense form, or scattered deep ones as pairs) split: a dense
// head of its first kSplitHead entries, where every value's first factors
// fall (sum_k<kSplitHead C[k] log(a + k), as the dense form), and each value
// n past it as lpoch(a + kSplitHead, n - kSplitHead), at an argument of at
// least kAsymptoticMin: a log and a series from the same vectorised calls
// as the head's, where the dense form paid a log per integer below n and
// the pairs lgamma, digamma and trigamma of a small alpha per column.
constexpr size_t kSplitHead = 10;
// A tail value costs about this many dense entries (its log, reciprocal
// and three series); a dense histogram is split where that is cheaper.
constexpr int64_t kSplitValueCost = 4;

// sum_b w_b f(a, n_b) over one histogram, for f = lpoch (l), dpoch (d) and
// tpoch (t); the parts not wanted are 0.
struct HistogramTerms {
  double l = 0.0, d = 0.0, t = 0.0;
};
HistogramTerms histogram_terms(const Histogram& h, double a, bool want_l, bool want_d,
                               bool want_t);

// The histograms as the evaluations of a fit read them: the dense entries
// of every column in one array, in column order, with a byte per column for
// its form. A Histogram object is some 240 bytes for the one to three
// entries of a column of a sparse table; a wide table's set (6.5 MB at
// 27000 columns, 65 MB for ten components) is read from memory at every
// evaluation, where the gathered entries (16 bytes a column) stay in cache.
// Built over every column, or over a list of them (a fit's active columns:
// a mixture component of a wide sparse table has counts in a few hundred
// of its 27000), when an evaluation costs what those columns cost.
// Built once per fit; refers to `h`, which must outlive it.
struct FlatHistograms {
  // Plain: dense, base 0, at most a batch of entries, all in `cum`. Based:
  // the same with base > 0 (base and base_weight read from the column).
  // Split: kSplitHead entries in `cum`, and the values past them (with
  // their weights) in `tail_value` and `tail_weight`. Long (dense, more
  // entries than a batch) and pairs are read from the column.
  enum Form : unsigned char { kPlain = 0, kBased = 1, kSplit = 2, kLong = 3, kPairs = 4 };
  const Histograms* source = nullptr;
  std::vector<int64_t> column;      // m: the columns, ascending
  std::vector<int64_t> block;       // blocks + 1: where each block of kSumBlockCols columns starts in `column`
  std::vector<unsigned char> form;  // m
  std::vector<int64_t> offset;      // m + 1: a plain, based or split column's entries in cum
  std::vector<double> cum;
  std::vector<int64_t> tail_offset; // m + 1: a split column's values in tail_value, tail_weight
  std::vector<double> tail_value, tail_weight;
  int64_t entries = 0;              // the cost measure of kParallelSumEntries
  // Every column of h; or the columns listed (ascending, each < h.cols).
  explicit FlatHistograms(const Histograms& h);  // throws std::bad_alloc
  FlatHistograms(const Histograms& h, const std::vector<int64_t>& columns);
  int64_t size() const { return static_cast<int64_t>(column.size()); }

 private:
  void build();
};

// Weighted sums for shared alpha (derivatives with respect to alpha): value,
// gradient (cols), Hessian diagonal (cols) and the rank-one scalar of the
// Hessian diag(d) + c 11^T. Outputs may be null. `threads` (may be null)
// runs column blocks at once; it must not be the pool the caller runs on.
// Both forms give the same sums, bit for bit. Throws std::bad_alloc (the
// first, which gathers the histograms for its one evaluation).
void histogram_sums(const Histograms& h, const double* alpha, double* value, double* gradient,
                    double* hessian_diag, double* hessian_scalar, HostThreads* threads = nullptr);
// The same over the flat set's columns: alpha, gradient and hessian_diag
// have one entry per listed column (h.size()), in its order, and every
// column not listed has alpha 0 and no counts. Over a list, the sums are
// those over every column with the others' alpha 0, bit for bit (their
// terms are exact zeros, in the same fixed blocks).
void histogram_sums(const FlatHistograms& h, const double* alpha, double* value,
                    double* gradient, double* hessian_diag, double* hessian_scalar,
                    HostThreads* threads = nullptr);

// The full log pmf summed over the histograms, sum_b w_b [sum_v
// lpoch_lfact(alpha_v, n_bv) - lpoch_lfact(A, N_b)], in the log-beta form of
// special.hpp: not the kernel plus lcoef_sum, which are both ~N log N at
// counts ~1e6-1e7 and kept ~5e-10 relative of their sum. A dense entry costs
// a log1p and a division, a pair one lpoch_lfact; empty columns contribute
// nothing (their alpha may be 0). Used once per fit or dirmn_loglik_sum
// (DIRMN_FULL), never per Newton step. `threads` as histogram_sums.
double histogram_full_value(const Histograms& h, const double* alpha,
                            HostThreads* threads = nullptr);

}  // namespace dirmn
