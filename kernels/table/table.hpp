// table.hpp: a counts table as the library stores it -- its one description
// (TableInfo), which every backend's copy, and the C handle, carry -- and the
// host form (HostTable) that table building makes and the CPU backend keeps.
#pragma once

#include <cstddef>
#include <cstdint>
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

// A validated counts table in compact form, in host memory. Dense tables are
// row-major (rows x cols); sparse tables are CSR with sorted column indices
// and no stored zeros. The row and column statistics are what the
// likelihoods, histograms and initialisations read per row or column.
struct HostTable : TableInfo {
  std::vector<unsigned char> values;  // rows*cols (dense) or nnz (sparse) encoded counts
  std::vector<int64_t> row_ptr;       // sparse: rows + 1 offsets
  std::vector<uint32_t> col_idx;      // sparse: nnz column indices
  std::vector<double> row_total;      // N_b
  std::vector<double> row_lcoef;      // lgamma(N_b + 1) - sum_v lgamma(n_bv + 1)
  std::vector<double> row_max;        // largest count in each row
  std::vector<int64_t> row_argmax;    // its column (the first, on ties)
  std::vector<double> col_max;        // largest count in each column
  std::vector<int64_t> col_nnz;       // nonzeros in each column
};

}  // namespace dirmn
