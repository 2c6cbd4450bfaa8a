// input.hpp: a caller's table as it arrives -- dense and strided, or
// compressed sparse -- in host or device memory. The C ABI layer has checked
// the sizes, strides, types and options; table building (host) and
// ingestion (device) check the values and report what they find wrong as a
// CountsProblem.
#pragma once

#include <cstdint>

#include "dirmn.h"

namespace dirmn {

struct DenseInput {
  int64_t rows = 0;
  int64_t cols = 0;
  dirmn_dtype dtype = DIRMN_FLOAT64;
  const void* data = nullptr;
  int64_t row_stride = 0;  // elements; 0 where rows == 1
  int64_t col_stride = 0;  // elements; 0 where cols == 1
  bool real_valued = false;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
};

struct SparseInput {
  dirmn_sparse_format format = DIRMN_CSR;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  dirmn_index_type index_type = DIRMN_INDEX_INT32;
  const void* ptr = nullptr;      // (rows or cols) + 1 entries
  const void* indices = nullptr;  // nnz entries (null when nnz == 0)
  dirmn_dtype value_dtype = DIRMN_FLOAT64;
  const void* values = nullptr;   // nnz entries (null when nnz == 0)
  bool real_valued = false;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
  int64_t index_base = 0;  // ptr and indices count from 0, or from 1 (DIRMN_COUNTS_ONE_BASED)
};

// Why a count is refused (host building and device ingestion alike).
enum CountIssue : int {
  kCountOk = 0,
  kCountNaN,
  kCountInf,
  kCountNegative,
  kCountTooLarge,   // 2^53 or more
  kCountNotInteger, // fractional, without DIRMN_COUNTS_REAL_VALUED
  kRowTotalTooLarge   // the count takes its row's total to 2^53 or more
};

// What is wrong with a compressed pointer array.
enum PointerIssue : int {
  kPointerStart = 0,  // ptr[0] is not 0
  kPointerEnd,        // ptr[outer] is not nnz
  kPointerOrder       // an entry below the one before it, or above nnz
};

// What was found wrong with a caller's table, for the C ABI layer to word.
// Which fields mean something depends on `kind`; positions are 0-based.
struct CountsProblem {
  enum Kind : uint8_t {
    kNone = 0,
    kBadCount,       // row, col, value, issue
    kBadPointer,     // entry (index into ptr), index_value, index_prev (ptr[entry - 1]),
                     // pointer
    kBadIndex,       // entry (index into indices), outer (its row, or column for CSC),
                     // index_value
    kRepeatedIndex   // row, col
  };
  Kind kind = kNone;
  bool csc = false;        // the input was CSC: outer positions are columns
  int64_t row = -1;
  int64_t col = -1;
  int64_t entry = -1;
  int64_t outer = -1;
  double value = 0.0;       // the bad count
  bool integer = false;     // it was an integer count, exactly integer_value
  int64_t integer_value = 0;
  int64_t index_value = 0;  // the bad ptr or indices entry
  int64_t index_prev = 0;   // kBadPointer: the ptr entry before it
  int64_t nnz = 0;          // kBadPointer: the input's nnz
  int64_t index_base = 0;   // kBadPointer, kBadIndex: what ptr and indices count from
  CountIssue issue = kCountOk;          // kBadCount
  PointerIssue pointer = kPointerStart;  // kBadPointer
};

}  // namespace dirmn
