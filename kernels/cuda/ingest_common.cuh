// ingest_common.cuh: what the ways of making a device table share -- from a
// validated host table (ingest_upload.cu), from a caller's dense device
// array (ingest_dense.cu) or from a caller's device CSR arrays
// (ingest_csr.cu): the validation of counts (the storage policy is the
// host's, table/storage.hpp), and the host steps that store and finish a table (ingest_common.cu).
//
// Validation finds the first bad cell in the order the host path would
// report it (the caller's memory order for dense arrays, entry order for
// CSR) by an atomicMin over a key that encodes that order; the host then
// reads the one offending value back to word the message.
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "../table/storage.hpp"
#include "device_table.cuh"

namespace dirmn {
namespace cuda {
namespace ingest {

// ---------------------------------------------------------------------------
// Validation

constexpr unsigned long long kNoProblem = ~0ull;

__host__ __device__ inline int count_issue(double x, bool real_valued) {
  if (x != x) return kCountNaN;
  if (x > DBL_MAX || x < -DBL_MAX) return kCountInf;
  if (x < 0.0) return kCountNegative;
  if (x > kMaxCount) return kCountTooLarge;
  if (!real_valued && x != floor(x)) return kCountNotInteger;
  return kCountOk;
}

// What a validation or statistics pass leaves for the host.
struct ScanSummary {
  unsigned long long problem;  // smallest problem key, kNoProblem if none
  unsigned long long nnz;
  unsigned long long max_bits;  // non-negative doubles order like their bit patterns
  unsigned int non_integral;
  unsigned int unsorted;
};

// ---------------------------------------------------------------------------
// Steps every path shares (ingest_common.cu)

// Copies `bytes` from the device to the host and waits for them.
BackendResult to_host(void* dst, const void* src, size_t bytes, const LaunchEnv& env);
// A validation summary in `buf`, set to no problem (synchronous).
BackendResult reset_summary(DeviceBuffer& buf, const LaunchEnv& env);
// What a passed validation says about the table: nnz, largest count,
// integrality.
void take_summary(const ScanSummary& s, bool real_valued, DeviceTable* t);
CellType cell_of(ValueType vt);
// Elements between compact dense rows of `cols` cells of `bytes` each.
int64_t compact_pitch(int64_t cols, int bytes);
// The compact CSR arrays of nnz entries plus zeroed slack (see
// kCsrSlackEntries).
BackendResult reserve_csr(DeviceTable* t, int64_t nnz, int vb, const LaunchEnv& env);
// Row pointers from the rows' nonzeros: rp[0] = 0 and rp[b + 1] the
// inclusive sum up to row b (CUB; `temp` is its workspace).
BackendResult scan_row_ptr(int64_t* row_nnz, int64_t rows, int64_t* rp, DeviceBuffer& temp,
                           const LaunchEnv& env);
// Device-wide sum and maximum of the row totals (CUB; deterministic).
BackendResult total_and_max(DeviceTable* t, const LaunchEnv& env);
// The table's plan and, for CSR tables of several panels, the panel
// offsets (synchronous).
BackendResult build_panels(DeviceTable* t, const LaunchEnv& env);

}  // namespace ingest
}  // namespace cuda
}  // namespace dirmn
