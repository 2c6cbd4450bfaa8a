// group_test.hpp: does one Dirichlet-multinomial fit every group of rows?
// The likelihood-ratio test of one DM for all rows against one per group
// (dirmn_test_groups), with its parametric bootstrap: tables drawn from the
// fitted null DM (models/sample) and refitted under both hypotheses.
#pragma once

#include <cstdint>

#include "../backend.hpp"
#include "../table/table.hpp"
#include "../thread_pool.hpp"

namespace dirmn {

struct GroupTestSettings {
  int64_t bootstrap = 0;
  uint64_t seed = 0;
  double tolerance = 1e-10;
  int max_iterations = 1000;
  Interrupt interrupt;
};

struct GroupTestOutcome {
  double statistic = 0.0, df = 0.0, p_value = 1.0, p_value_bootstrap = 1.0;
  double loglik_null = 0.0, loglik_groups = 0.0;
  int64_t bootstrap = 0, groups = 0, categories = 0;
  bool converged = true;
};

// Tests the rows of t in `groups` groups (group[b] in -1 .. groups - 1,
// validated; -1 leaves the row out). INVALID_ARGUMENT when fewer than two
// groups have counts; CANCELLED; OUT_OF_MEMORY. The bootstrap's replicates
// run on the threads, each on one; the outcome does not depend on their
// number. Throws std::bad_alloc (the observed table's histograms).
BackendResult group_test(const HostTable& t, const int64_t* group, int64_t groups,
                         const GroupTestSettings& s, HostThreads& threads, GroupTestOutcome* out);

}  // namespace dirmn
