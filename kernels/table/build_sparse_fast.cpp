// build_sparse_fast.cpp: the compressed sparse builder for the input almost
// every caller passes -- each row's (CSR) or column's (CSC) indices strictly
// increasing, every entry a valid count -- on all the context's threads, in
// two passes over the caller's arrays and no temporary copy of them.
//
// Anything else (a malformed pointer array, an index out of range or out of
// order, a repeat, a bad count, a row total of 2^53) makes this path give up
// and the serial builder (build_sparse.cpp) run from the start: it sorts
// what is unsorted and finds the first problem in its own fixed order, so a
// message never depends on the thread count or on which thread met the
// problem first. Bad input pays for a second pass; good input pays nothing
// for the exactness.
//
// Pass 1 checks every entry and counts each output row's nonzeros (per block
// of input columns for CSC); the value type and storage follow from what it
// saw. Pass 2 writes each entry straight into its place: a CSR row's entries
// are consecutive already; a CSC column block owns, within every row, the
// slots after the blocks to its left, so rows come out sorted by column.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "build.hpp"
#include "storage.hpp"
#include "validate.hpp"

namespace dirmn {
namespace {

// Entries per block: the interrupt callback is polled between blocks, and
// more blocks than threads even out rows of unequal length.
constexpr int64_t kEntriesPerBlock = int64_t{1} << 20;
// CSC keeps a row-count array per column block: at most about as many
// counters as entries (4 bytes each, against the 8-12 of an entry).
constexpr int kMaxCscBlocksPerThread = 4;
// Rows per tile of the CSC transpose: two open cache lines per row (index
// and value) for 2048 rows is 256 KB, within any core's L2.
constexpr int64_t kTransposeRows = 2048;

// The outer positions where blocks start (first 0, last outer), each block
// about the same number of entries (ptr counting from base).
template <class I>
std::vector<int64_t> split_by_entries(const I* ptr, int64_t base, int64_t outer, int64_t nnz,
                                      int64_t blocks) {
  blocks = std::max<int64_t>(1, std::min(blocks, std::max<int64_t>(outer, 1)));
  std::vector<int64_t> at(static_cast<size_t>(blocks) + 1, outer);
  at[0] = 0;
  for (int64_t b = 1; b < blocks; ++b) {
    const int64_t target = nnz / blocks * b + nnz % blocks * b / blocks;
    // The first outer position whose entries start at or after target.
    const I* p = std::lower_bound(ptr, ptr + outer, static_cast<I>(target + base));
    at[static_cast<size_t>(b)] = std::max(at[static_cast<size_t>(b) - 1],
                                          static_cast<int64_t>(p - ptr));
  }
  return at;
}

// Runs body(b) for every block on the host threads, polling the interrupt
// between them; rethrows a block's bad_alloc once all have finished.
template <class F>
bool for_blocks(HostThreads& threads, int64_t blocks, const Interrupt& interrupt, F&& body) {
  std::atomic<bool> no_memory{false};
  const bool finished = threads.run(
      blocks,
      [&](int64_t b) {
        try {
          body(b);
        } catch (...) {
          no_memory = true;
        }
      },
      [&] { return interrupt.poll(); });
  if (no_memory) throw std::bad_alloc();
  return finished;
}

// Whether x is a count the serial builder accepts (check_count without the
// bookkeeping: NaN fails the first comparison).
template <class S>
inline bool acceptable(S x, bool real_valued) {
  if (std::is_integral<S>::value)
    return x >= 0 && static_cast<int64_t>(x) <= kMaxCountInt;
  const double d = static_cast<double>(x);
  return d >= 0.0 && d <= kMaxCount && (real_valued || build::whole(d));
}

// What pass 1 found in one block.
struct BlockScan {
  build::ScanStats stats;
  bool clean = true;  // false: leave it to the serial builder
};

enum class Outcome { kDone, kCancelled, kGiveUp };

template <class I, class S>
class FastSparseBuild {
 public:
  FastSparseBuild(const SparseInput& in, HostThreads& threads, const Interrupt& interrupt)
      : in_(in),
        threads_(threads),
        interrupt_(interrupt),
        csr_(in.format == DIRMN_CSR),
        outer_(csr_ ? in.rows : in.cols),
        inner_(csr_ ? in.cols : in.rows),
        base_(in.index_base),
        ptr_(static_cast<const I*>(in.ptr)),
        idx_(static_cast<const I*>(in.indices)),
        val_(static_cast<const S*>(in.values)) {}

  Outcome run(HostTable* out) {
    if (!pointers_ok()) return Outcome::kGiveUp;
    const int64_t nnz = in_.nnz;
    const int64_t t = threads_.size();
    int64_t blocks = std::max<int64_t>(t, nnz / kEntriesPerBlock + 1);
    if (!csr_) {
      // Row counters per block: bounded by the entries and the threads.
      const int64_t by_memory = std::max<int64_t>(1, nnz / std::max<int64_t>(in_.rows, 1));
      blocks = std::min({blocks, by_memory, t * kMaxCscBlocksPerThread});
    }
    at_ = split_by_entries(ptr_, base_, outer_, nnz, blocks);
    blocks_ = static_cast<int64_t>(at_.size()) - 1;

    std::vector<BlockScan> scan(static_cast<size_t>(blocks_));
    std::vector<int64_t> row_nnz(static_cast<size_t>(in_.rows), 0);
    if (!csr_) counts_.assign(static_cast<size_t>(blocks_), std::vector<uint32_t>());
    if (!for_blocks(threads_, blocks_, interrupt_, [&](int64_t b) {
          scan[static_cast<size_t>(b)] = scan_block(b, row_nnz.data());
        }))
      return Outcome::kCancelled;
    build::ScanStats s;
    for (const BlockScan& b : scan) {
      if (!b.clean) return Outcome::kGiveUp;
      s.merge(b.stats);
    }
    if (!csr_) sum_block_counts(&row_nnz);

    const ValueType vt = choose_vtype(s.max_count, s.integral, in_.real_valued);
    const bool sparse = choose_sparse(in_.storage, in_.rows, in_.cols, s.nnz, vt);
    build::layout_table(s, row_nnz, in_.rows, in_.cols, in_.real_valued, sparse, vt, out);
    std::vector<int64_t>().swap(row_nnz);
    if (!csr_ && sparse) block_offsets(*out);
    bool finished = true;
    with_value_type(vt, [&](auto tag) { finished = encode<decltype(tag)>(out); });
    std::vector<std::vector<uint32_t>>().swap(counts_);
    if (!finished) return Outcome::kCancelled;

    const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, in_.rows)));
    if (!compute_row_stats(out, threads_, parts, interrupt_)) return Outcome::kCancelled;
    // A total of 2^53 is an error the serial builder locates (the cell that
    // crossed it); totals grow with every count, so checking the sums finds
    // the same rows.
    const double limit = build::row_total_limit(in_.real_valued);
    for (double n : out->row_total)
      if (!(n < limit)) return Outcome::kGiveUp;
    return Outcome::kDone;
  }

 private:
  bool pointers_ok() const {
    if (static_cast<int64_t>(ptr_[0]) != base_ || static_cast<int64_t>(ptr_[outer_]) != in_.nnz + base_)
      return false;
    for (int64_t o = 0; o < outer_; ++o)
      if (ptr_[o + 1] < ptr_[o]) return false;
    return true;
  }

  BlockScan scan_block(int64_t b, int64_t* row_nnz) {
    BlockScan r;
    const int64_t o0 = at_[static_cast<size_t>(b)], o1 = at_[static_cast<size_t>(b) + 1];
    uint32_t* per_row = nullptr;
    if (!csr_) {
      counts_[static_cast<size_t>(b)].assign(static_cast<size_t>(in_.rows), 0);
      per_row = counts_[static_cast<size_t>(b)].data();
    }
    const bool real = in_.real_valued;
    const int64_t inner = inner_;
    double max_count = 0.0;
    bool integral = true;
    int64_t nonzero = 0;
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t a = static_cast<int64_t>(ptr_[o]) - base_, e = static_cast<int64_t>(ptr_[o + 1]) - base_;
      int64_t prev = -1, here = 0;
      for (int64_t k = a; k < e; ++k) {
        const int64_t i = build::from_base(static_cast<int64_t>(idx_[k]), base_);
        const S x = val_[k];
        if (i <= prev || i >= inner || !acceptable(x, real)) {
          r.clean = false;
          return r;
        }
        prev = i;
        if (x == 0) continue;
        const double d = static_cast<double>(x);
        max_count = d > max_count ? d : max_count;
        if (!std::is_integral<S>::value && integral && !build::whole(d)) integral = false;
        ++here;
        if (!csr_) ++per_row[i];
      }
      nonzero += here;
      if (csr_) row_nnz[o] = here;
    }
    r.stats.nnz = nonzero;
    r.stats.max_count = max_count;
    r.stats.integral = integral;
    return r;
  }

  // CSC: a row's nonzeros are its counts over the column blocks.
  void sum_block_counts(std::vector<int64_t>* row_nnz) {
    const int64_t rows = in_.rows;
    threads_.parallel_for(threads_.size(), [&](int64_t part) {
      const int64_t per = (rows + threads_.size() - 1) / threads_.size();
      const int64_t r0 = std::min(rows, part * per), r1 = std::min(rows, r0 + per);
      for (const std::vector<uint32_t>& c : counts_)
        for (int64_t r = r0; r < r1; ++r) (*row_nnz)[static_cast<size_t>(r)] += c[static_cast<size_t>(r)];
    });
  }

  // CSC into CSR: each block's counts become its first slot in every row.
  void block_offsets(const HostTable& t) {
    const int64_t rows = in_.rows;
    threads_.parallel_for(threads_.size(), [&](int64_t part) {
      const int64_t per = (rows + threads_.size() - 1) / threads_.size();
      const int64_t r0 = std::min(rows, part * per), r1 = std::min(rows, r0 + per);
      for (int64_t r = r0; r < r1; ++r) {
        int64_t slot = t.row_ptr[static_cast<size_t>(r)];
        for (std::vector<uint32_t>& c : counts_) {
          const uint32_t n = c[static_cast<size_t>(r)];
          // Offsets within the row: a row holds fewer than 2^32 entries.
          c[static_cast<size_t>(r)] = static_cast<uint32_t>(slot - t.row_ptr[static_cast<size_t>(r)]);
          slot += n;
        }
      }
    });
  }

  template <class VT>
  bool encode(HostTable* t) {
    if (!csr_ && t->sparse) return transpose<VT>(t);
    VT* const dst = reinterpret_cast<VT*>(t->values.data());  // locals: see transpose()
    uint32_t* const col_idx = t->col_idx.data();
    const int64_t* const row_ptr = t->row_ptr.data();
    const bool sparse = t->sparse;
    const I* const ptr = ptr_;
    const I* const idx = idx_;
    const S* const val = val_;
    const int64_t cols = in_.cols, base = base_;
    return for_blocks(threads_, blocks_, interrupt_, [&](int64_t b) {
      const int64_t o0 = at_[static_cast<size_t>(b)], o1 = at_[static_cast<size_t>(b) + 1];
      for (int64_t o = o0; o < o1; ++o) {
        const int64_t a = static_cast<int64_t>(ptr[o]) - base, e = static_cast<int64_t>(ptr[o + 1]) - base;
        int64_t q = sparse ? row_ptr[o] : 0;
        for (int64_t k = a; k < e; ++k) {
          const S x = val[k];
          if (x == 0) continue;
          const int64_t i = static_cast<int64_t>(idx[k]) - base;
          const VT v = static_cast<VT>(x);
          if (!sparse) {
            dst[csr_ ? o * cols + i : i * cols + o] = v;
          } else {
            col_idx[q] = static_cast<uint32_t>(i);
            dst[q++] = v;
          }
        }
      }
    });
  }

  // CSC into CSR. Each column's entries go to as many rows, one slot each:
  // taken column by column the writes land on every row's open slot at
  // once, far more cache lines than a core keeps. Taken in tiles of
  // kTransposeRows rows, a column block's writes stay within the tile's
  // open slots.
  template <class VT>
  bool transpose(HostTable* t) {
    // Locals, not t's vectors: a store through an 8-bit VT may alias
    // anything, which would reload every vector's data pointer per entry.
    VT* const dst = reinterpret_cast<VT*>(t->values.data());
    const int64_t* const row_ptr = t->row_ptr.data();
    uint32_t* const col_idx = t->col_idx.data();
    const I* const ptr = ptr_;
    const I* const idx = idx_;
    const S* const val = val_;
    const int64_t rows = in_.rows, base = base_;
    return for_blocks(threads_, blocks_, interrupt_, [&](int64_t b) {
      const int64_t o0 = at_[static_cast<size_t>(b)], o1 = at_[static_cast<size_t>(b) + 1];
      uint32_t* next = counts_[static_cast<size_t>(b)].data();
      std::vector<int64_t> cursor(static_cast<size_t>(o1 - o0));
      for (int64_t o = o0; o < o1; ++o)
        cursor[static_cast<size_t>(o - o0)] = static_cast<int64_t>(ptr[o]) - base;
      for (int64_t r1 = std::min(rows, kTransposeRows);; r1 = std::min(rows, r1 + kTransposeRows)) {
        for (int64_t o = o0; o < o1; ++o) {
          int64_t k = cursor[static_cast<size_t>(o - o0)];
          const int64_t e = static_cast<int64_t>(ptr[o + 1]) - base;
          for (; k < e; ++k) {
            const int64_t i = static_cast<int64_t>(idx[k]) - base;
            if (i >= r1) break;
            const S x = val[k];
            if (x == 0) continue;
            const int64_t p = row_ptr[i] + next[i]++;
            col_idx[p] = static_cast<uint32_t>(o);
            dst[p] = static_cast<VT>(x);
          }
          cursor[static_cast<size_t>(o - o0)] = k;
        }
        if (r1 == rows) break;
      }
    });
  }

  const SparseInput& in_;
  HostThreads& threads_;
  const Interrupt& interrupt_;
  const bool csr_;
  const int64_t outer_, inner_;
  const int64_t base_;  // ptr and indices count from it (0, or 1: DIRMN_COUNTS_ONE_BASED)
  const I* ptr_;
  const I* idx_;
  const S* val_;
  std::vector<int64_t> at_;
  int64_t blocks_ = 0;
  std::vector<std::vector<uint32_t>> counts_;  // CSC: per block, per row
};

template <class I>
Outcome build_fast_indexed(const SparseInput& in, HostThreads& threads, const Interrupt& interrupt,
                           HostTable* out) {
  switch (in.value_dtype) {
    case DIRMN_INT32: return FastSparseBuild<I, int32_t>(in, threads, interrupt).run(out);
    case DIRMN_INT64: return FastSparseBuild<I, int64_t>(in, threads, interrupt).run(out);
    case DIRMN_FLOAT32: return FastSparseBuild<I, float>(in, threads, interrupt).run(out);
    case DIRMN_FLOAT64: break;
  }
  return FastSparseBuild<I, double>(in, threads, interrupt).run(out);
}

}  // namespace

dirmn_status build_sparse_table(const SparseInput& in, HostThreads& threads,
                                const Interrupt& interrupt, HostTable* out, CountsProblem* problem) {
  if (interrupt.poll()) return DIRMN_ERROR_CANCELLED;
  const Outcome o = in.index_type == DIRMN_INDEX_INT32
                        ? build_fast_indexed<int32_t>(in, threads, interrupt, out)
                        : build_fast_indexed<int64_t>(in, threads, interrupt, out);
  if (o == Outcome::kDone) return DIRMN_SUCCESS;
  if (o == Outcome::kCancelled) return DIRMN_ERROR_CANCELLED;
  *out = HostTable();
  return build_sparse_table_serial(in, threads, interrupt, out, problem);
}

}  // namespace dirmn
