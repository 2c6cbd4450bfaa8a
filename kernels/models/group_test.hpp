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

// The statistics the groups can be compared by (dirmn_group_statistic).
constexpr int kStatisticLrt = 0;
constexpr int kStatisticXmcupo = 1;
constexpr int kStatisticXoc = 2;

struct GroupTestSettings {
  int statistic = kStatisticLrt;
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

// HMP's Xsc (La Rosa et al. 2012; HMP's Xsc.onesample): do the rows share
// the composition pi0? The rows' pooled proportions pi against pi0 in
// their method-of-moments covariance c (diag(pi0) - pi0 pi0^T) (c as
// group_parts::GroupMoments'), through its Moore-Penrose inverse -- which
// for pi0 summing to 1 is Q diag(1 / pi0) Q, Q the projection orthogonal to
// the ones, so that the Wald form is sum over pi0_v > 0 of (pi_v -
// pi0_v)^2 / pi0_v / c -- chi-square on (categories with pi0_v > 0) - 1
// df. A category with counts where pi0_v = 0 makes the statistic +Inf
// (HMP's numerical inverse ignores it). Rows without counts are left out.
struct ProportionTestOutcome {
  double statistic = 0.0, df = 0.0, p_value = 1.0, theta = 0.0;
  int64_t rows = 0, categories = 0;
};

// pi0: t.cols proportions, validated (finite, >= 0, at least two positive)
// and summing to 1. INVALID_ARGUMENT when no row has counts. Throws
// std::bad_alloc.
BackendResult proportion_test(const HostTable& t, const double* pi0, ProportionTestOutcome* out);

}  // namespace dirmn

namespace dirmn {

// The power of group_test's chi-square test at `level`, by simulation:
// `tables` tables drawn from one DM per group (alpha: groups x cols,
// validated; rows_of[g] rows of group g, their sizes in group order in
// sizes), each tested; on the threads, each table on one, table t from the
// seed's stream t (math::kFamilyPower). A table in which fewer than two
// groups have counts counts as not rejected. OUT_OF_MEMORY; CANCELLED.
struct PowerSettings {
  int statistic = kStatisticLrt;
  int64_t tables = 1000;
  double level = 0.05;
  uint64_t seed = 0;
  double tolerance = 1e-10;
  int max_iterations = 1000;
  Interrupt interrupt;
};

struct PowerOutcome {
  int64_t tables = 0, rejected = 0;
  double power = 0.0, std_error = 0.0;
  double mean_statistic = 0.0;
};

BackendResult group_power(const double* alpha, int64_t groups, int64_t cols, const int64_t* rows_of,
                          const int64_t* sizes, const PowerSettings& s, HostThreads& threads,
                          PowerOutcome* out);

// The power of proportion_test's chi-square test at s.level, by
// simulation (HMP's MC.Xsc.statistics): s.tables tables of `rows` rows
// (sizes: validated, one per row) drawn from DM(alpha) (cols entries,
// validated), each tested against pi0 (as proportion_test takes it); on
// the threads, table t from the seed's stream t, as group_power draws. A
// table without counts counts as not rejected. s.statistic, tolerance and
// max_iterations do not apply. OUT_OF_MEMORY; CANCELLED.
BackendResult proportion_power(const double* alpha, int64_t cols, int64_t rows, const int64_t* sizes,
                               const double* pi0, const PowerSettings& s, HostThreads& threads,
                               PowerOutcome* out);

}  // namespace dirmn
