// loglik_types.cuh: what the host side of the CUDA backend hands to its
// kernels. Plain structs, passed by value as kernel parameters.
//
// The table a kernel reads is one of
//   * dense, row-major: cell (b, v) at values[b * pitch + v], pitch >= cols,
//     cells of one type (CellType); compact tables pad each row with zeros to
//     a 16-byte multiple so rows can be read as 16-byte vectors;
//   * CSR: row b's nonzeros at [row_ptr[b], row_ptr[b + 1]), columns sorted.
//
// Shared-alpha likelihoods use per-parameter tables in shared memory:
//   T_v[n] = lpoch(alpha_v, n) - n log A        for n < cut,
// where A = sum_v alpha_v. Shifting every cell by n log A and every row by
// N log A (the two shifts cancel, as sum_v n_v = N) keeps the summed terms
// the size of the result: for large alpha both lpoch(alpha_v, n) and
// lpoch(A, N) are ~n log alpha while the likelihood is ~n log(alpha_v / A),
// so unshifted terms would be summed far above the result's scale. It is
// what lets the fast mode keep float tables within 1e-6 at alpha = 1e8.
//
// Wide tables are split into column panels so each panel's table fits the
// shared-memory budget; panels then leave partial row sums that a second
// kernel combines.
//
// Tables of one parameter vector (and of every vector on CSR tables) are
// [k][panel][n][position]. Dense calls with several vectors bundle them: a
// group of G vectors (bundle_vectors) keeps, for each count and position,
// its G entries side by side in one or two 16-byte halves,
//   [group][panel][n][half][position][G / halves],
// so a cell's lookups for the whole group are one or two 16-byte reads
// instead of G narrow ones: with several vectors a kernel is bound by the
// instructions it issues per cell, not by memory.
#pragma once

#include <cstdint>

#include "tuning.cuh"

namespace dirmn {
namespace cuda {

enum class CellType : uint8_t {
  U8,   // compact
  U16,  // compact
  U32,  // compact
  F64,  // compact: real-valued counts or counts >= 2^32
  F32,  // a caller's float32 device array, referenced in place
  I32   // a caller's int32 device array, referenced in place
};

inline int cell_bytes(CellType c) {
  switch (c) {
    case CellType::U8: return 1;
    case CellType::U16: return 2;
    case CellType::U32: return 4;
    case CellType::F64: return 8;
    case CellType::F32: return 4;
    case CellType::I32: return 4;
  }
  return 8;
}

// Warps of a loglik block (kBlockThreads: tuning.cuh).
constexpr int kWarpsPerBlock = kBlockThreads / 32;
// Bytes of a vectorised dense read per lane; also one half of a bundle.
constexpr int kVectorBytes = 16;
// Bytes of a full bundle: two halves.
constexpr int kMaxBundleBytes = 2 * kVectorBytes;

// Parameter vectors of one dense bundle for K > 1 vectors and table entries
// of `entry` bytes: one half (4 float or 2 double entries) when K fits it,
// else two.
__host__ __device__ constexpr int bundle_vectors(int64_t k, int entry) {
  return k <= kVectorBytes / entry ? kVectorBytes / entry : kMaxBundleBytes / entry;
}

// Table geometry, fixed when a counts object is made (it depends on the
// data only, not on alpha).
struct TablePlan {
  CellType cell = CellType::U8;
  bool sparse = false;
  bool col16 = false;        // CSR column indices are uint16 (cols <= 65536)
  bool integral = true;      // every stored count is an integer
  int vec = 1;               // dense: cells per vector read (W)
  int lanes_per_row = 32;    // dense: lanes sharing one row (16 or 32)
  int cut = 1;               // tabulated counts are n < cut
  int64_t panel_cols = 0;    // columns per panel, a multiple of vec * lanes_per_row
  int panels = 1;
  int64_t row_term_len = 0;  // entries of lpoch(A, N) - N log A tabulated by N
  // CSR: the tables stay in global memory (read through L2) as one panel
  // of every column, instead of panels copied to shared memory.
  bool l2_tables = false;
};

struct DenseView {
  const void* values = nullptr;
  int64_t pitch = 0;  // elements between consecutive rows
  int64_t rows = 0;
  int64_t cols = 0;
  const double* row_total = nullptr;
  const double* row_lcoef = nullptr;
};

struct CsrView {
  const int64_t* row_ptr = nullptr;
  const void* col = nullptr;           // uint16_t or uint32_t
  const void* values = nullptr;        // compact cells
  const uint32_t* panel_ptr = nullptr; // rows x (panels + 1) offsets from row_ptr[b]; panels > 1
  int64_t rows = 0;
  int64_t cols = 0;
  const double* row_total = nullptr;
  const double* row_lcoef = nullptr;
};

// Per parameter vector k: A_k and log A_k.
struct KSums {
  double a;
  double log_a;
};

struct SharedAlphaArgs {
  const void* tables = nullptr;  // [k][panel][n < cut][panel_cols], float or double
  int cut = 1;
  int64_t panel_cols = 0;
  int panels = 1;
  int vec = 1;
  int lanes_per_row = 32;
  int rows_per_group = kRowsPerGroup;  // rows a lane group carries
  int k_total = 1;
  int k_group = 1;    // parameter vectors per block (dense, > 1: per bundle)
  int slice_base = 0; // first slice of this launch (grids are split at 65535)
  bool l2_tables = false;  // CSR: tables read from global memory (TablePlan)
  int64_t cols = 0;
  bool integral = true;           // every stored count is an integer
  bool all_fit = false;           // every stored count is an integer below cut
  const double* alpha = nullptr;  // k_total x cols
  const KSums* ksums = nullptr;
  const double* row_term = nullptr;  // k_total x row_term_len
  int64_t row_term_len = 0;
  const double* row_adjust = nullptr;  // k_total x rows: -row term of each row (panels == 1)
  double* out = nullptr;
  int64_t out_sr = 1;
  int64_t out_sk = 1;
  double* partial = nullptr;  // panels > 1: [panel][row][k]
  bool full = false;
};

struct TableBuildArgs {
  const double* alpha = nullptr;  // k_total x cols
  const KSums* ksums = nullptr;
  int k_total = 1;
  int64_t cols = 0;
  int cut = 1;
  int64_t panel_cols = 0;
  int panels = 1;
  int vec = 1;
  int lanes = 32;
  void* tables = nullptr;       // float or double
  int bundle = 0;               // 0: a table per vector; else vectors per bundle
  double* row_term = nullptr;
  int64_t row_term_len = 0;
};

struct RowwiseArgs {
  const double* alpha = nullptr;  // rows x cols
  double* out = nullptr;
  int64_t out_sr = 1;
  bool full = false;
};

}  // namespace cuda
}  // namespace dirmn
