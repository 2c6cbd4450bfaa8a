// storage.hpp: the one storage policy -- which value type and which form
// (dense or sparse) a validated table is kept in. Host building and device
// ingestion both choose by it, so a table gets the same form wherever it was
// loaded from.
#pragma once

#include <cstdint>

#include "dirmn.h"
#include "table.hpp"

namespace dirmn {

// Counts and their row totals must stay below 2^53, integer and real-valued
// alike. The library's arithmetic is double, and every integer below 2^53 is
// one exactly, so integer counts and totals are never rounded; for
// real-valued counts the bound keeps every term of the log pmf (~N log N)
// and of its derivatives far from overflow (a row total near DBL_MAX made
// the log pmf -Inf). The bound is 2^53 - 1 rather than
// 2^53 so that a running double sum decides it exactly: while the true
// total is below 2^53 every partial sum is exact, and once it reaches 2^53
// rounding (monotone, 2^53 itself representable) cannot take it back below.
constexpr int64_t kMaxCountInt = (int64_t{1} << 53) - 1;
constexpr double kMaxCount = 9007199254740991.0;  // kMaxCountInt, exactly

// Sparse storage is chosen when it takes at most this fraction of the dense
// form's bytes: below it, skipping zeros outweighs the index reads.
constexpr double kSparseByteRatio = 0.75;

// The narrowest type that holds every count: fractional counts (allowed
// only for real-valued tables) and counts of 2^32 or more take double.
inline ValueType choose_vtype(double max_count, bool integral, bool real_valued) {
  if (real_valued && !integral) return ValueType::F64;
  if (max_count < 256.0) return ValueType::U8;
  if (max_count < 65536.0) return ValueType::U16;
  if (max_count < 4294967296.0) return ValueType::U32;
  return ValueType::F64;
}

// Whether a table of this shape and nnz is stored sparse: as asked, or under
// AUTO when its CSR form (values, 32-bit column indices, 64-bit row
// offsets) is at most kSparseByteRatio of the dense form.
inline bool choose_sparse(dirmn_storage storage, int64_t rows, int64_t cols, int64_t nnz,
                          ValueType vt) {
  if (storage == DIRMN_STORAGE_DENSE) return false;
  if (storage == DIRMN_STORAGE_SPARSE) return true;
  const double vb = static_cast<double>(value_bytes(vt));
  const double dense = static_cast<double>(rows) * static_cast<double>(cols) * vb;
  const double sparse = static_cast<double>(nnz) * (vb + sizeof(uint32_t)) +
                        static_cast<double>(rows + 1) * sizeof(int64_t);
  return sparse <= kSparseByteRatio * dense;
}

}  // namespace dirmn
