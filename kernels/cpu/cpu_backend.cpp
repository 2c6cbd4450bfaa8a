// cpu_backend.cpp: the multi-threaded host backend. It keeps the validated
// HostTable as its copy and runs every step itself, on the context's host
// threads (the passes are in cpu_loglik.cpp, cpu_histograms.cpp and
// cpu_derivatives.cpp).
#include <algorithm>
#include <memory>
#include <new>
#include <system_error>

#include "../backend.hpp"
#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

const HostTable& table_of(const BackendCounts& counts) {
  return static_cast<const CpuCounts&>(counts).table;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::shared_ptr<HostThreads> threads) : threads_(std::move(threads)) {}

  dirmn_backend kind() const override { return DIRMN_BACKEND_CPU; }
  int device() const override { return 0; }

  bool supports(Step step, const BackendCounts&) const override {
    switch (step) {
      case Step::kLoglik:
      case Step::kLoglikRowwise:
      case Step::kDerivativesRowwise:
      case Step::kHistograms: return true;
      // The host EM state (host_em.cpp) keeps the responsibilities.
      case Step::kMixtureEm:
      case Step::kMixtureFits: return false;
    }
    return false;
  }

  BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out,
                      TableInfo* info) override {
    try {
      auto c = std::make_unique<CpuCounts>(std::move(table));
      *info = c->table;
      *out = std::move(c);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host counts table", 0};
    }
    return {};
  }

  const HostTable* host_table(const BackendCounts& counts) const override {
    return &table_of(counts);
  }

  BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                       const Interrupt& interrupt) override {
    if (req.out_on_device) return {DIRMN_ERROR_NOT_SUPPORTED, "device output on the CPU", 0};
    const CpuCounts& c = static_cast<const CpuCounts&>(counts);
    try {
      if (!req.rowwise && !c.loglik_layout) c.loglik_layout = cpu::plan_tables(c.table);
      return cpu::loglik(c.table, c.loglik_layout.get(), req, *threads_, interrupt);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "likelihood workspace", 0};
    }
  }

  BackendResult row_totals(const BackendCounts& counts, double* host_out) override {
    const HostTable& t = table_of(counts);
    std::copy(t.row_total.begin(), t.row_total.end(), host_out);
    return {};
  }

  BackendResult histograms(const BackendCounts& counts, const double* weights, int64_t k,
                           std::vector<Histograms>* out, const Interrupt& interrupt) override {
    const CpuCounts& c = static_cast<const CpuCounts&>(counts);
    // Several weightings (an EM's M step, every iteration) are summed by
    // column once the table has its slots; a table that cannot have them
    // (or had no room) keeps the row-ordered pass. Only where that pass
    // takes the builders, whose histograms the slots give bit for bit: a
    // small 8-bit table's accumulators sum in another order, and a call's
    // result must not depend on what ran on the counts before.
    const bool builders = cpu::histograms_use_builders(c.table, k);
    if (k > 1 && builders && !c.slots && !c.slots_tried) {
      try {
        const BackendResult r = cpu::build_column_slots(c.table, *threads_, interrupt, &c.slots);
        if (!r.ok()) return r;
      } catch (const std::bad_alloc&) {
        c.slots.reset();
      }
      c.slots_tried = true;
    }
    try {
      if (c.slots && builders)
        return cpu::histograms_by_column(c.table, *c.slots, weights, k, out, *threads_, interrupt);
      return cpu::histograms(c.table, weights, k, out, *threads_, interrupt);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "count histograms", 0};
    }
  }

  BackendResult rowwise_derivatives(const BackendCounts& counts, const RowwiseDerivRequest& req,
                                    const Interrupt& interrupt) override {
    try {
      return cpu::rowwise_derivatives(table_of(counts), req, *threads_, interrupt);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "per-row derivatives", 0};
    }
  }

  BackendResult set_stream(void*) override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult get_stream(void**) const override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult synchronize() override { return {}; }

 private:
  std::shared_ptr<HostThreads> threads_;
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<HostThreads> threads,
                                          BackendResult* result) {
  try {
    *result = {};
    return std::make_unique<cpu::CpuBackend>(std::move(threads));
  } catch (const std::bad_alloc&) {
    *result = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a CPU backend", 0};
    return nullptr;
  }
}

}  // namespace dirmn
