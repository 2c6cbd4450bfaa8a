// table.hpp: a counts table as the library stores it -- its one description
// (TableInfo), which every backend's copy, and the C handle, carry -- and the
// host form (HostTable) that table building makes and the CPU backend keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace dirmn {

// How a stored count is encoded. Integer counts use the narrowest unsigned
// type holding the table's largest count; real-valued or very large counts
// use double.
enum class ValueType : uint8_t { U8 = 0, U16 = 1, U32 = 2, F64 = 3 };

inline int value_bits(ValueType t) {
  switch (t) {
    case ValueType::U8: return 8;
    case ValueType::U16: return 16;
    case ValueType::U32: return 32;
    case ValueType::F64: return 64;
  }
  return 64;
}

inline size_t value_bytes(ValueType t) { return static_cast<size_t>(value_bits(t) / 8); }

// Calls f(T{}), T the C++ type a table of value type vt stores its counts
// in: the one place a pass over stored counts picks its instantiation.
template <class F>
decltype(auto) with_value_type(ValueType vt, F&& f) {
  switch (vt) {
    case ValueType::U8: return f(uint8_t{});
    case ValueType::U16: return f(uint16_t{});
    case ValueType::U32: return f(uint32_t{});
    case ValueType::F64: break;
  }
  return f(double{});
}

// An allocator whose value-initialisation writes nothing, for the arrays
// every entry of which the builders write: resize() then leaves the pages
// untouched, and the threads that fill them touch them first, in parallel,
// instead of a serial memset that costs as much as the whole build.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
};
template <class T>
using TableArray = std::vector<T, UninitAllocator<T>>;

// What a stored table is: shape, statistics and form. The same fields
// describe the host form, a device copy and the C handle's view of either.
struct TableInfo {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;           // nonzero cells
  double max_count = 0.0;    // largest count
  double total = 0.0;        // sum of all counts
  bool sparse = false;       // nonzero cells by row (CSR), else every cell
  bool real_valued = false;  // counts need not be integers
  bool wrapped = false;      // the values are the caller's device array, not a copy
  ValueType vtype = ValueType::U8;
  // Bits per stored count (8, 16, 32 or 64), 0 for a wrapped array.
  int stored_bits() const { return wrapped ? 0 : value_bits(vtype); }
};

// Counts from this size on may make a row's likelihood regroup around its
// largest count (kRegroupMinCount in backend.hpp is this): only tables whose
// value type can hold such counts keep where each row's largest count is.
constexpr double kRowPeakMinCount = 65536.0;

// A validated counts table in compact form, in host memory. Dense tables are
// row-major (rows x cols); sparse tables are CSR with sorted column indices
// and no stored zeros. The row and column statistics are what the
// likelihoods, histograms and initialisations read per row or column, and
// no more: per row, 16 bytes (total and coefficient), 8 more for the row
// offsets of a sparse table, and 8 more where counts reach 2^16 (U32, F64).
struct HostTable : TableInfo {
  TableArray<unsigned char> values;   // rows*cols (dense) or nnz (sparse) encoded counts
  std::vector<int64_t> row_ptr;       // sparse: rows + 1 offsets
  TableArray<uint32_t> col_idx;       // sparse: nnz column indices
  std::vector<double> row_total;      // N_b
  std::vector<double> row_lcoef;      // lgamma(N_b + 1) - sum_v lgamma(n_bv + 1)
  // Where row b's largest count is among its stored cells (dense: its
  // column; sparse: its entry less row_ptr[b]), the first on ties; kept
  // only when the value type holds counts of kRowPeakMinCount (U32, F64).
  std::vector<int64_t> row_peak_at;
  std::vector<double> col_max;        // largest count in each column
  std::vector<int64_t> col_nnz;       // nonzeros in each column
};

// Whether a table of value type vt keeps row_peak_at.
inline bool keeps_row_peaks(ValueType vt) { return vt == ValueType::U32 || vt == ValueType::F64; }

// The largest count of a row and its column.
struct RowPeak {
  double count = 0.0;
  int64_t column = 0;
};

// Row b's largest count and its column where it can reach kRowPeakMinCount;
// {0, 0} for a table whose counts cannot (nothing to regroup).
inline RowPeak row_peak(const HostTable& t, int64_t b) {
  if (t.row_peak_at.empty()) return {};
  if (t.sparse && t.row_ptr[static_cast<size_t>(b)] == t.row_ptr[static_cast<size_t>(b) + 1]) return {};
  const int64_t at = t.row_peak_at[static_cast<size_t>(b)];
  const int64_t cell = t.sparse ? t.row_ptr[static_cast<size_t>(b)] + at : b * t.cols + at;
  RowPeak p;
  p.count = t.vtype == ValueType::F64
                ? reinterpret_cast<const double*>(t.values.data())[cell]
                : static_cast<double>(reinterpret_cast<const uint32_t*>(t.values.data())[cell]);
  p.column = t.sparse ? static_cast<int64_t>(t.col_idx[static_cast<size_t>(cell)]) : at;
  if (p.count == 0.0) p.column = 0;
  return p;
}

}  // namespace dirmn
