// storage.hpp: the one storage policy -- which value type and which form
// (dense or sparse) a validated table is kept in. Host building and device
// ingestion both choose by it, so a table gets the same form wherever it was
// loaded from.
#pragma once

#include <cstdint>

#include "dirmn.h"
#include "table.hpp"

namespace dirmn {

// Counts above 2^53 are not all representable as doubles; the library's
// arithmetic is double, so larger counts are rejected rather than rounded.
constexpr double kMaxCount = 9007199254740992.0;

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
