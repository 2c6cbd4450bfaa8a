// handles.hpp: what the C handles hold.
#pragma once

#include <atomic>

#include <cstdint>
#include <memory>
#include <vector>

#include "../../kernels/backend.hpp"
#include "../../kernels/comm.hpp"
#include "../../kernels/stored_table.hpp"
#include "../../kernels/table/cache.hpp"
#include "../../kernels/thread_pool.hpp"
#include "args.hpp"
#include "dirmn.h"
#include "errors.hpp"
#include "use.hpp"

namespace dirmn {
class RegressionCovariance;  // kernels/models/regression_system.hpp
namespace capi {

// A context's scratch above this many bytes is given back when the call
// that needed it returns: R and Julia keep one context per session, and one
// call over 2e7 rows must not pin its 160 MB for good. Below it, keeping
// the buffer saves an allocation per call.
constexpr size_t kKeptScratchBytes = size_t{16} << 20;  // 16 MiB

inline void trim_scratch(std::vector<double>& v) {
  if (v.capacity() * sizeof(double) > kKeptScratchBytes) std::vector<double>().swap(v);
}

}  // namespace capi
}  // namespace dirmn

struct dirmn_context {
  uint64_t id = 0;
  std::shared_ptr<dirmn::capi::UseFlag> use;
  // The host threads every layer below uses, shared by the backends.
  std::shared_ptr<dirmn::HostThreads> threads;
  // Shared with every counts object made here, so counts stay destroyable
  // (and their device memory freeable) after the context handle is gone.
  std::shared_ptr<dirmn::Backend> backend;
  // A CUDA context's CPU backend: it keeps a host copy of each table it
  // makes, for the steps the device lacks (see kernels/stored_table.hpp).
  std::shared_ptr<dirmn::Backend> host_backend;
  dirmn_precision precision = DIRMN_PRECISION_DOUBLE;
  dirmn::Interrupt interrupt;
  // Scratch of the likelihood calls, kept between calls up to
  // kKeptScratchBytes each (trim_scratch).
  std::vector<double> rowwise_alpha;     // validated per-row alpha, contiguous
  dirmn::capi::ParamMemo shared_params;  // dirmn_loglik's last shared alphas
  std::vector<double> out_scratch;       // results before they are copied out
  // Gives back the scratch above kKeptScratchBytes (forgetting a memo that
  // large).
  void trim() {
    dirmn::capi::trim_scratch(rowwise_alpha);
    dirmn::capi::trim_scratch(out_scratch);
    if (shared_params.alpha.capacity() * sizeof(double) > dirmn::capi::kKeptScratchBytes) {
      shared_params.valid = false;
      dirmn::capi::trim_scratch(shared_params.alpha);
      std::vector<double>().swap(shared_params.input);
    }
  }
  dirmn::capi::ErrorSlot error;
};

// Counts and mixtures are Deferrable: destroyed from a callback of a call on
// their context, they are freed when that call returns (use.hpp).
struct dirmn_counts : dirmn::capi::Deferrable {
  uint64_t context_id = 0;
  std::shared_ptr<dirmn::capi::UseFlag> use;  // the context's
  std::shared_ptr<dirmn::Backend> backend;  // declared before data: outlives it
  std::unique_ptr<dirmn::BackendCounts> data;
  // The host copy. A table drawn on a device (host_on_demand) gets one from
  // the first call that needs it (ensure_host_copy, under the context's use
  // flag), which is why these two may change on a const handle.
  mutable std::shared_ptr<dirmn::Backend> host_backend;  // declared before host_data
  mutable std::unique_ptr<dirmn::BackendCounts> host_data;
  bool host_on_demand = false;
  dirmn::TableInfo info;
  uint32_t flags = 0;
  dirmn::HistogramCache histograms;
  mutable std::atomic<uint32_t> fell_back{0};  // StoredTable::fell_back
  // A communicator's, where the counts are one rank's rows of a split
  // table, and the collective call in flight on them (collective.hpp).
  std::shared_ptr<dirmn::Communicator> comm;
  mutable dirmn::Collective* call = nullptr;

  // The table and the backends that work on it, for a call on `ctx` (null
  // for a description of it: then no host threads).
  dirmn::StoredTable stored(const dirmn_context* ctx) const {
    dirmn::StoredTable t;
    t.backend = backend.get();
    t.data = data.get();
    t.host = host_backend.get();
    t.host_data = host_data.get();
    t.host_on_demand = host_on_demand;
    t.threads = ctx != nullptr ? ctx->threads.get() : nullptr;
    t.info = &info;
    t.fell_back = &fell_back;
    t.collective = call;
    return t;
  }
};

struct dirmn_reg : dirmn::capi::Deferrable {
  std::shared_ptr<dirmn::capi::UseFlag> use;  // the fitting context's
  int64_t p = 0, cols = 0;
  std::vector<double> beta;  // p x cols, row-major
  // The covariance, whole or as factors (regression_system.hpp); null
  // without one.
  std::shared_ptr<const dirmn::RegressionCovariance> covariance;
  std::vector<double> gamma, std_errors, gamma_std_errors;  // see RegressionOutcome
  std::vector<double> wald_beta;
  int64_t wald_df = 0;
  bool precision_design = false;  // fitted with one: new rows need their z
  dirmn_reg_info info{};
};

struct dirmn_mixture : dirmn::capi::Deferrable {
  std::shared_ptr<dirmn::capi::UseFlag> use;  // the fitting context's
  int k = 0;
  int64_t rows = 0, cols = 0;
  dirmn_mixture_objective objective = DIRMN_MIXTURE_ML;
  std::vector<double> alpha;    // k x cols, row-major
  std::vector<double> weights;  // k
  std::vector<double> resp;     // rows x k, row-major
  dirmn_mixture_info info{};
};
