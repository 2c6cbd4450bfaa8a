// launch_sliced.cuh: the host-side launch of a shared-alpha kernel over its
// slices (parameter-vector groups x column panels) and row chunks.
#pragma once

#include <algorithm>

#include "device_table.cuh"

namespace dirmn {
namespace cuda {

// Launches `kernel` with one grid row (y) per slice and enough blocks per
// slice (x) to fill the device once; each block loops over row chunks, so
// its tables are copied to shared memory once per block, not per chunk
// (none for tables read through L2: args.l2_tables).
template <class View>
BackendResult launch_sliced(void (*kernel)(View, SharedAlphaArgs), const View& view,
                            SharedAlphaArgs args, size_t table_entry_bytes, const LaunchEnv& env,
                            const char* what) {
  const size_t smem = args.l2_tables ? 0
                                      : static_cast<size_t>(args.k_group) * static_cast<size_t>(args.cut) *
                                            static_cast<size_t>(args.panel_cols) * table_entry_bytes;
  int per_sm = 0;
  DIRMN_TRY(kernel_occupancy(reinterpret_cast<const void*>(kernel), smem, env.device, &per_sm));
  const int64_t slices_total =
      ceil_div<int64_t>(args.k_total, args.k_group) * static_cast<int64_t>(args.panels);
  const int64_t rows_per_block =
      static_cast<int64_t>(kBlockThreads / args.lanes_per_row) * args.rows_per_group;
  const int64_t chunks = ceil_div<int64_t>(view.rows, rows_per_block);
  const int64_t resident = static_cast<int64_t>(env.sm_count) * per_sm;
  for (int64_t base = 0; base < slices_total; base += kMaxGridY) {
    const int64_t slices = std::min(kMaxGridY, slices_total - base);
    // Every block walks its share of the rows to the end, so a block that
    // does not fit the first wave starts when others finish and doubles the
    // time of its share: the grid stays within one wave where it can.
    const int64_t per_slice = slices <= resident ? resident / slices : 1;
    const int64_t gx = std::max<int64_t>(1, std::min(chunks, per_slice));
    args.slice_base = static_cast<int>(base);
    kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(slices)), kBlockThreads, smem,
             env.stream>>>(view, args);
    DIRMN_CUDA_TRY(cudaGetLastError(), what);
  }
  return {};
}

}  // namespace cuda
}  // namespace dirmn
