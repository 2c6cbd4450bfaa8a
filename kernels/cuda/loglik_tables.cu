// loglik_tables.cu: the table plan, the launches of the per-call table
// kernels and the panel combiner (loglik_table_kernels.cuh), and the
// occupancy cache the launchers share.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <new>
#include <tuple>

#include "device_table.cuh"
#include "device/loglik_table_kernels.cuh"

namespace dirmn {
namespace cuda {

TablePlan make_plan(const DeviceTable& t) {
  TablePlan p;
  p.cell = t.cell;
  p.sparse = t.sparse;
  p.col16 = t.col16;
  p.integral = t.integral;
  if (t.sparse) {
    p.vec = 1;
    p.lanes_per_row = 32;
  } else {
    p.vec = t.vec;
    // Rows of at most 16 vectors are shared by half-warps, so short rows do
    // not leave half of every warp idle.
    p.lanes_per_row = ceil_div<int64_t>(t.cols, p.vec) <= 16 ? 16 : 32;
  }
  const int64_t group = static_cast<int64_t>(p.vec) * p.lanes_per_row;

  // Tabulate counts 0 .. max, but only as far as a table entry is used about
  // once per column on average: a table costs one logarithm per entry.
  const double top = std::min(std::floor(t.max_count), static_cast<double>(kMaxCut - 1));
  const int64_t cut_data = static_cast<int64_t>(top) + 1;
  const int64_t cut_worth = std::max<int64_t>(2, t.nnz / std::max<int64_t>(t.cols, 1));
  int64_t cut = std::max<int64_t>(1, std::min(cut_data, cut_worth));

  const int64_t budget = static_cast<int64_t>(kTableBudgetBytes / sizeof(double));
  const int64_t full_width = round_up<int64_t>(t.cols, group);
  int64_t panel_cols = full_width;
  if (cut * full_width > budget) {
    panel_cols = std::max<int64_t>(group, (budget / cut) / group * group);
    if (cut * panel_cols > budget) cut = std::max<int64_t>(1, budget / panel_cols);
    panel_cols = balanced_panel_width(t.cols, panel_cols, group);
  }
  // Through L2 where its table holds at least count 1 (past ~10^6 columns
  // it would not: the panels do), which also keeps every byte offset of a
  // slice's tables (kMaxKGroup x kL2TableBytes) within 32 bits.
  const int64_t l2_cut =
      static_cast<int64_t>(kL2TableBytes / sizeof(double)) / std::max<int64_t>(full_width, 1);
  if (t.sparse && ceil_div<int64_t>(t.cols, panel_cols) > kCsrMaxSharedPanels && l2_cut >= 2) {
    cut = std::max<int64_t>(1, std::min(std::min(cut_data, cut_worth), l2_cut));
    panel_cols = full_width;
    p.l2_tables = true;
  }
  p.cut = static_cast<int>(cut);
  p.panel_cols = panel_cols;
  p.panels = static_cast<int>(ceil_div<int64_t>(t.cols, panel_cols));
  p.row_term_len =
      t.integral ? std::min<int64_t>(static_cast<int64_t>(t.max_row_total) + 1, kRowTermMax) : 0;
  return p;
}

int64_t balanced_panel_width(int64_t cols, int64_t max_width, int64_t group) {
  const int64_t fewest = ceil_div<int64_t>(cols, max_width);
  int64_t best = max_width, best_total = fewest * max_width;
  for (int64_t p = fewest; p < fewest + kPanelCountsTried; ++p) {
    const int64_t w = round_up<int64_t>(ceil_div<int64_t>(cols, p), group);
    if (w > max_width) continue;
    const int64_t panels = ceil_div<int64_t>(cols, w);
    if (panels * w < best_total) {
      best = w;
      best_total = panels * w;
    }
  }
  return best;
}

namespace {

std::mutex g_occupancy_mu;
// Never freed: kernels may launch during static destruction of a caller's
// objects.
using OccupancyKey = std::tuple<const void*, size_t, int>;
using KernelKey = std::pair<const void*, int>;
std::map<OccupancyKey, int>* const g_occupancy = new (std::nothrow) std::map<OccupancyKey, int>();
// The shared-memory limit each kernel has been raised to, per device. It
// is one value per kernel, so it is only ever raised: lowering it for a
// smaller launch would break a later, larger one whose occupancy is cached.
std::map<KernelKey, size_t>* const g_raised = new (std::nothrow) std::map<KernelKey, size_t>();

// raise_shared_limit with g_occupancy_mu held; *raised says whether the
// limit was raised now.
BackendResult raise_locked(const void* kernel, size_t smem, int device, bool* raised) {
  *raised = false;
  if (smem <= kDefaultSharedLimit) return {};
  const KernelKey kkey{kernel, device};
  if (g_raised != nullptr) {
    const auto r = g_raised->find(kkey);
    if (r != g_raised->end() && r->second >= smem) return {};
  }
  DIRMN_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem)),
                 "cudaFuncSetAttribute (kernel shared memory)");
  *raised = true;
  if (g_raised != nullptr) {
    try {
      (*g_raised)[kkey] = smem;
    } catch (...) {
      // Without the record the next large launch raises the limit again.
    }
  }
  return {};
}

}  // namespace

BackendResult raise_shared_limit(const void* kernel, size_t smem, int device) {
  std::lock_guard<std::mutex> lock(g_occupancy_mu);
  bool raised = false;
  return raise_locked(kernel, smem, device, &raised);
}

BackendResult kernel_occupancy(const void* kernel, size_t smem, int device, int* per_sm) {
  const OccupancyKey key{kernel, smem, device};
  {
    // One lock around the check and the raise, so two threads cannot leave
    // the limit below what the record says.
    std::lock_guard<std::mutex> lock(g_occupancy_mu);
    bool raised = false;
    DIRMN_TRY(raise_locked(kernel, smem, device, &raised));
    if (!raised && g_occupancy != nullptr) {
      const auto it = g_occupancy->find(key);
      if (it != g_occupancy->end()) {
        *per_sm = it->second;
        return {};
      }
    }
  }
  int n = 0;
  DIRMN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kBlockThreads, smem),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (n < 1) return {DIRMN_ERROR_INTERNAL, "a kernel's shared-memory tables do not fit the device", 0};
  *per_sm = n;
  std::lock_guard<std::mutex> lock(g_occupancy_mu);
  if (g_occupancy != nullptr) {
    try {
      (*g_occupancy)[key] = n;
    } catch (...) {
      // Without the cache the next call asks the runtime again.
    }
  }
  return {};
}

BackendResult launch_build_tables(bool fast, const TableBuildArgs& args, const LaunchEnv& env) {
  const int64_t k_items =
      args.bundle > 0 ? round_up<int64_t>(args.k_total, args.bundle) : args.k_total;
  const int64_t items = k_items * static_cast<int64_t>(args.panels) * args.panel_cols +
                        static_cast<int64_t>(args.k_total) * args.row_term_len;
  const int grid = stride_grid(items, env.sm_count);
  if (fast)
    dev::build_tables<float><<<grid, kBlockThreads, 0, env.stream>>>(args);
  else
    dev::build_tables<double><<<grid, kBlockThreads, 0, env.stream>>>(args);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (build_tables)");
  return {};
}

BackendResult launch_build_row_adjust(int64_t rows, const double* row_total,
                                      const SharedAlphaArgs& args, double* adjust,
                                      const LaunchEnv& env) {
  const int grid = stride_grid(rows * args.k_total, env.sm_count);
  dev::build_row_adjust<<<grid, kBlockThreads, 0, env.stream>>>(rows, row_total, args, adjust);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (build_row_adjust)");
  return {};
}

BackendResult launch_finish_panels(int64_t rows, const double* row_total, const double* row_lcoef,
                                   const SharedAlphaArgs& args, const LaunchEnv& env) {
  const int grid = stride_grid(rows * args.k_total, env.sm_count);
  dev::finish_panels<<<grid, kBlockThreads, 0, env.stream>>>(rows, row_total, row_lcoef, args);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (finish_panels)");
  return {};
}

}  // namespace cuda
}  // namespace dirmn
