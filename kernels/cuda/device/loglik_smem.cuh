// loglik_smem.cuh: the shifted tables of the shared-alpha kernels (see
// loglik_types.cuh) as the kernels hold them: where a column's entry sits,
// the copy of a block's slice into shared memory, and the reads of its
// entries. Device code only.
//
// Dense rows are read as vectors of `W` cells. For vector i of a row, lane
// t = i mod LANES holds cells i*W .. i*W+W-1, and the table entry of cell j
// of that vector sits at column position
//     pos = (i / LANES) * LANES * W + j * LANES + t
// so that, for each j, the lanes of a group read consecutive positions: the
// lookups of a warp are free of bank conflicts whatever counts they hold.
// CSR tables use W = 1 (pos = column) and read entries in aligned blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// Starts copying `entries` table entries (a multiple of 16 bytes) from
// global to shared memory. On sm_80 and later the copy is asynchronous
// (cp.async), so the block's first loads of counts overlap it;
// wait_tables() completes it.
template <class TabT>
__device__ __forceinline__ void start_copy(TabT* dst, const TabT* from, int64_t entries) {
  constexpr int kPerVec = kVectorBytes / static_cast<int>(sizeof(TabT));
  const int vecs = static_cast<int>(entries / kPerVec);
  const uint4* src = reinterpret_cast<const uint4*>(from);
  uint4* d = reinterpret_cast<uint4*>(dst);
  for (int i = static_cast<int>(threadIdx.x); i < vecs; i += static_cast<int>(blockDim.x)) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned saddr = static_cast<unsigned>(__cvta_generic_to_shared(d + i));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(saddr), "l"(src + i) : "memory");
#else
    d[i] = __ldg(src + i);
#endif
  }
}

// Per-vector tables: the kc tables of vectors k0.. on one panel (each
// `entries` long, a multiple of 32).
template <class TabT>
__device__ __forceinline__ void start_tables(TabT* dst, const SharedAlphaArgs& a, int k0, int kc,
                                             int panel, int entries) {
  const TabT* tables = static_cast<const TabT*>(a.tables);
  for (int kk = 0; kk < kc; ++kk)
    start_copy(dst + kk * entries,
               tables + ((static_cast<int64_t>(k0 + kk) * a.panels + panel) * a.cut) * a.panel_cols,
               entries);
}

// Bundled tables: the slice's block, KG x `entries` long.
template <class TabT, int KG>
__device__ __forceinline__ void start_bundle(TabT* dst, const SharedAlphaArgs& a, int slice,
                                             int entries) {
  const int64_t n = static_cast<int64_t>(KG) * entries;
  start_copy(dst, static_cast<const TabT*>(a.tables) + slice * n, n);
}

__device__ __forceinline__ void wait_tables() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  __syncthreads();
}

// Reads a table entry at a byte offset from a shared-memory base.
template <class TabT>
__device__ __forceinline__ TabT tab_load(const char* base, uint32_t byte_off) {
  return *reinterpret_cast<const TabT*>(base + byte_off);
}

// Reads a table entry at a byte offset from a base in shared memory, or in
// global memory for tables read through L2 (TablePlan::l2_tables).
template <class TabT, bool kGlobal>
__device__ __forceinline__ TabT tab_read(const char* base, uint32_t byte_off) {
  if constexpr (kGlobal)
    return __ldg(reinterpret_cast<const TabT*>(base + byte_off));
  else
    return tab_load<TabT>(base, byte_off);
}

// Entries of one bundle half, and the bytes between table positions: a
// bundle half for KG > 1, one entry otherwise.
template <class TabT>
constexpr int kHalfEntries = kVectorBytes / static_cast<int>(sizeof(TabT));
template <class TabT, int KG>
constexpr uint32_t kPosBytes = KG > 1 ? kVectorBytes : sizeof(TabT);

// One bundle half (16 bytes of shared memory) as its entries.
template <class TabT>
__device__ __forceinline__ void load_half(const char* p, TabT* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  if constexpr (sizeof(TabT) == sizeof(float)) {
    v[0] = __uint_as_float(u.x);
    v[1] = __uint_as_float(u.y);
    v[2] = __uint_as_float(u.z);
    v[3] = __uint_as_float(u.w);
  } else {
    v[0] = __hiloint2double(static_cast<int>(u.y), static_cast<int>(u.x));
    v[1] = __hiloint2double(static_cast<int>(u.w), static_cast<int>(u.z));
  }
}

// Position of local column u in a panel's table row (see the file comment).
__device__ __forceinline__ int64_t table_pos(int64_t u, int vec, int lanes) {
  const int64_t vi = u / vec;
  const int64_t j = u % vec;
  return (vi / lanes) * lanes * vec + j * lanes + vi % lanes;
}

// The entry of count 0 for vector k at table position `pos` of a panel, and
// the entries from one count to the next (see loglik_types.cuh).
template <class TabT>
__device__ __forceinline__ TabT* table_entry(const TableBuildArgs& b, int k, int panel, int64_t pos,
                                             int64_t* n_stride) {
  TabT* tables = static_cast<TabT*>(b.tables);
  if (b.bundle == 0) {
    *n_stride = b.panel_cols;
    return tables + (static_cast<int64_t>(k) * b.panels + panel) * b.cut * b.panel_cols + pos;
  }
  constexpr int kE = kHalfEntries<TabT>;
  const int halves = b.bundle / kE;
  const int group = k / b.bundle, kk = k % b.bundle;
  *n_stride = static_cast<int64_t>(b.bundle) * b.panel_cols;
  const int64_t slice = static_cast<int64_t>(group) * b.panels + panel;
  return tables + ((slice * b.cut * halves + kk / kE) * b.panel_cols + pos) * kE + kk % kE;
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
