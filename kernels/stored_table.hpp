// stored_table.hpp: a stored counts table and the backends that can work on
// it -- the one place that decides where each step runs.
//
// A table lives on its context's backend. Where that backend is a device
// and the table came from host memory, a CPU backend keeps a copy beside
// it; a step the device lacks for the table's form runs there. Nothing else
// in the library falls back: every other layer asks this one, and
// dirmn_counts_get_info reports its answers (host_steps).
#pragma once

#include <atomic>

#include <cstdint>
#include <memory>
#include <utility>

#include "backend.hpp"

namespace dirmn {

class Collective;  // comm.hpp

struct StoredTable {
  Backend* backend = nullptr;  // the context's backend and its copy
  const BackendCounts* data = nullptr;
  Backend* host = nullptr;     // a CPU backend's copy, or null
  const BackendCounts* host_data = nullptr;
  // A table its device drew has no host copy until a call that needs one
  // makes it (capi's ensure_host_copy, before the call's steps): the CPU
  // backend's steps count as the host's.
  bool host_on_demand = false;
  HostThreads* threads = nullptr;  // the context's host threads
  const TableInfo* info = nullptr;
  // Steps a call handed to the host at run time, after the backend that
  // should have run them refused (for this size, k or memory): kept with
  // the counts object, reported with host_steps. May be null.
  std::atomic<uint32_t>* fell_back = nullptr;
  // This rank's part of a table split by rows over a communicator's ranks:
  // the call's votes (comm.hpp); null for a table of one process. The
  // shared-alpha estimators sum their histograms over the ranks
  // (models/ranks.hpp); every per-row step stays on this rank's rows.
  Collective* collective = nullptr;

  enum class Where { kBackend, kHost, kNowhere };

  // Where `step` runs for this table. The mixture steps "run on the host"
  // when the EM keeps the responsibilities in host memory (host_em.cpp),
  // which needs the rows on the host for its initialisation.
  Where where(Step step) const;

  // Runs op(backend, data) on the backend `step` runs on; NOT_SUPPORTED
  // where none does. A backend that refuses after all (NOT_SUPPORTED) hands
  // the step to the host copy, when there is one.
  template <class Op>
  BackendResult run(Step step, Op&& op) const {
    const Where w = where(step);
    if (w == Where::kNowhere)
      return {DIRMN_ERROR_NOT_SUPPORTED, "this step for counts wrapped from device memory", 0};
    if (w == Where::kBackend) {
      BackendResult r = op(*backend, *data);
      if (r.status != DIRMN_ERROR_NOT_SUPPORTED || host == nullptr) return r;
      note_fallback(step);
    }
    if (host == nullptr)
      return {DIRMN_ERROR_INTERNAL, "a host step of a drawn table before its host copy", 0};
    return op(*host, *host_data);
  }

  // Records that `step` ran on the host after its backend refused.
  void note_fallback(Step step) const {
    if (fell_back != nullptr) fell_back->fetch_or(static_cast<uint32_t>(step));
  }

  // The validated table in host memory (the backend's own or the copy's);
  // null for counts wrapped from device memory.
  const HostTable* host_rows() const;

  // DIRMN_STEP_* bits: the steps that run on the host CPU (by where(), and
  // those a call has handed to the host after all), and those that run
  // nowhere.
  uint32_t host_steps() const;
  uint32_t unavailable_steps() const;

  // The rows x k full log-likelihoods (log pmf) under alpha (k x cols,
  // host), row-major into host memory L: a mixture's E step.
  BackendResult full_loglik(const double* alpha, int64_t k, double* L,
                            const Interrupt& interrupt) const;

  // A mixture's EM state for k components (row weights: rows, or null):
  // the backend's where it keeps the responsibilities beside the table,
  // else one in host memory over this table's steps.
  BackendResult make_em_state(int64_t k, const double* row_weights,
                              std::unique_ptr<EmState>* out) const;
};

// The EM state in host memory: responsibilities, weights and log-sum-exp
// on host arrays, the likelihoods and histograms from `table`'s steps.
// `table` must outlive the state.
BackendResult make_host_em_state(const StoredTable& table, int64_t k, const double* row_weights,
                                 std::unique_ptr<EmState>* out);

}  // namespace dirmn
