// regression_grouped.hpp: many small regressions in one call -- the table's
// columns partitioned into groups (genes -> their transcripts), each group
// an independent DM regression of its columns on a full design and on a
// null design (the full one's first p_null covariates), a likelihood-ratio
// test per group and Benjamini-Hochberg adjusted p-values over the groups
// tested: DRIMSeq's differential-usage workflow.
//
// Each group's table holds its columns with counts (under the rows' weights);
// rows without counts in the group take no part. Groups are fitted on the
// context's threads, each on one thread (a group's fit is small), with a
// CPU backend over its own table, so the results do not depend on the
// thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../stored_table.hpp"
#include "regression.hpp"

namespace dirmn {

struct GroupedSettings {
  const int64_t* group = nullptr;  // per column: its group, or -1 (left out); validated
  int64_t groups = 0;
  int64_t p_null = 1;              // the null design: the first p_null covariates
  bool hold_precision = false;     // mean/precision: the null fit at the full fit's precision
  RegressionSettings fit;          // x, p, weights, model, contrast, tolerance, ...
};

struct GroupOutcome {
  dirmn_status status = DIRMN_SUCCESS;  // SUCCESS where tested; else why not
  double loglik_full = 0.0, loglik_null = 0.0;
  double statistic = 0.0, df = 0.0, p_value = 0.0, p_adjusted = 0.0;
  int64_t categories = 0;   // the group's columns with counts
  bool converged = false;   // both fits
};

// The per-group tests of the table (its host form). NOT_SUPPORTED for
// counts wrapped from device memory; CANCELLED. A group that cannot be
// fitted (fewer than two columns with counts, fewer rows with counts than
// covariates, a design not of full rank on its rows, an alpha beyond the
// double range) gets that status and NaN results and is left out of the
// adjustment. Throws std::bad_alloc.
BackendResult test_groups(const StoredTable& table, const GroupedSettings& s, std::vector<GroupOutcome>* out);

// Benjamini-Hochberg adjusted p-values of p (n entries; NaN ones are left
// NaN and not counted), as R's p.adjust(method = "BH").
void benjamini_hochberg(const double* p, int64_t n, double* adjusted);

}  // namespace dirmn
