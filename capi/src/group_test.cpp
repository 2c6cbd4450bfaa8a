// group_test.cpp: the header's Group tests section.
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "../../kernels/models/group_test.hpp"
#include "../../kernels/models/sample.hpp"
#include "args.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"
#include "sample_args.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace {

dirmn_group_test_options group_test_defaults() {
  dirmn_group_test_options o;
  std::memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.bootstrap = 0;
  o.seed = 0;
  o.tolerance = 1e-10;
  o.max_iterations = 1000;
  return o;
}

dirmn_power_options power_defaults() {
  dirmn_power_options o;
  std::memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.tables = 1000;
  o.level = 0.05;
  o.seed = 0;
  o.tolerance = 1e-10;
  o.max_iterations = 1000;
  return o;
}

// The options a test and its power simulation share: the statistic, and
// every fit's tolerance and iteration cap.
dirmn_status check_shared_options(dirmn_context* ctx, const char* fn, dirmn_group_statistic statistic,
                                  double tolerance, int max_iterations) {
  if (statistic != DIRMN_GROUP_LRT && statistic != DIRMN_GROUP_XMCUPO && statistic != DIRMN_GROUP_XOC)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->statistic %d is not a dirmn_group_statistic",
                static_cast<int>(statistic));
  if (!(tolerance > 0.0) || !std::isfinite(tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->tolerance must be positive and finite");
  if (max_iterations < 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->max_iterations (%d) must be at least 1",
                max_iterations);
  return DIRMN_SUCCESS;
}

int statistic_code(dirmn_group_statistic statistic) {
  if (statistic == DIRMN_GROUP_XOC) return dirmn::kStatisticXoc;
  return statistic == DIRMN_GROUP_XMCUPO ? dirmn::kStatisticXmcupo : dirmn::kStatisticLrt;
}

// A run that stopped: the interrupt, the memory it lacked, or the backend.
dirmn_status fail_run(dirmn_context* ctx, const char* fn, const BackendResult& r) {
  if (r.status == DIRMN_ERROR_CANCELLED)
    return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled by the interrupt callback");
  if (r.status == DIRMN_ERROR_OUT_OF_MEMORY) return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of %s", r.what);
  return fail_backend(ctx, fn, r);
}

// A power simulation's options, checked: tables >= 1, level in (0, 1),
// and the test's shared options.
dirmn_status read_power_options(dirmn_context* ctx, const char* fn, const dirmn_power_options* options,
                                dirmn_power_options* o) {
  if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_power_options_init", o)) return s;
  if (o->tables < 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->tables (%" PRId64 ") must be positive", o->tables);
  if (!(o->level > 0.0 && o->level < 1.0)) {
    char text[kValueChars];
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->level %s must be in (0, 1)",
                value_text(o->level, text));
  }
  return check_shared_options(ctx, fn, o->statistic, o->tolerance, o->max_iterations);
}

// A power result from the simulation's outcome (the caller's size kept).
void write_power_result(const dirmn::PowerOutcome& out, dirmn_power_result* result) {
  dirmn_power_result full;
  std::memset(&full, 0, sizeof full);
  full.size = result->size;
  full.power = out.power;
  full.std_error = out.std_error;
  full.tables = out.tables;
  full.rejected = out.rejected;
  full.mean_statistic = out.mean_statistic;
  std::memcpy(result, &full, std::min(result->size, sizeof full));
}

// pi0 for the proportions' test and its power: cols entries `stride`
// apart, each finite and >= 0, at least two positive, summing to 1 within
// 1e-6; divided by their sum into *out.
dirmn_status read_proportions(dirmn_context* ctx, const char* fn, const double* proportions, int64_t stride,
                              int64_t cols, std::vector<double>* out) {
  if (proportions == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "proportions is NULL");
  if (stride < 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "proportions_stride (%" PRId64 ") must be positive", stride);
  if (dirmn_status s = check_extent(ctx, fn, "proportions", Strided{proportions, 1, cols, 1, stride, sizeof(double)},
                                    false))
    return s;
  std::vector<double>& pi0 = *out;
  try {
    pi0.resize(static_cast<size_t>(cols));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " proportions", cols);
  }
  double sum = 0.0;
  int64_t positive = 0;
  for (int64_t v = 0; v < cols; ++v) {
    const double p = proportions[v * stride];
    if (!std::isfinite(p) || p < 0.0) {
      char text[kValueChars];
      return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, Where::named_index("proportions", v).with_value(p),
                     "proportion %s is %s", value_text(p, text), std::isfinite(p) ? "negative" : "not finite");
    }
    pi0[static_cast<size_t>(v)] = p;
    sum += p;
    positive += p > 0.0 ? 1 : 0;
  }
  if (positive < 2)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "%" PRId64 " of the proportions are positive; the test needs at least two", positive);
  if (!(std::fabs(sum - 1.0) <= 1e-6)) {
    char text[kValueChars];
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "the proportions sum to %s, not 1 (within 1e-6)",
                value_text(sum, text));
  }
  for (double& p : pi0) p /= sum;
  return DIRMN_SUCCESS;
}

}  // namespace

extern "C" {

void dirmn_power_options_init_sized(dirmn_power_options* options, size_t size) {
  fill_defaults(options, size, power_defaults());
}

dirmn_status dirmn_power_groups(dirmn_context* ctx, int64_t groups, int64_t cols, const double* params,
                                int64_t params_stride_k, int64_t params_stride_v, dirmn_param param,
                                const int64_t* rows_per_group, const int64_t* sizes,
                                const dirmn_power_options* options, dirmn_power_result* result) {
  static const char* fn = "dirmn_power_groups";
  return with_context(ctx, fn, [&] {
    if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
    if (rows_per_group == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "rows_per_group is NULL");
    if (sizes == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "sizes is NULL");
    if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
    if (result->size < offsetof(dirmn_power_result, power) + sizeof(double))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "result->size (%zu) is too small; set it to sizeof(dirmn_power_result)", result->size);
    if (groups < 2)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "groups (%" PRId64 ") must be at least 2", groups);
    if (cols < 1)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "cols (%" PRId64 ") must be positive", cols);
    if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
    dirmn_power_options o = power_defaults();
    if (dirmn_status s = read_power_options(ctx, fn, options, &o)) return s;
    if (dirmn_status s = check_extent(ctx, fn, "params",
                                      Strided{params, groups, cols, params_stride_k, params_stride_v, sizeof(double)},
                                      false))
      return s;
    if (dirmn_status s = check_extent(ctx, fn, "rows_per_group", contiguous(rows_per_group, groups, sizeof(int64_t)), false))
      return s;
    int64_t rows = 0, with_rows = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t n = rows_per_group[g];
      if (n < 0 || n > (int64_t{1} << 40))
        return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                       Where::named_index("rows_per_group", g).with_integer(n),
                       "%" PRId64 " rows is outside 0 .. 2^40", n);
      rows += n;
      with_rows += n > 0 ? 1 : 0;
    }
    if (with_rows < 2)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "fewer than two groups have rows: nothing to compare");
    if (dirmn_status s = check_extent(ctx, fn, "sizes", contiguous(sizes, rows, sizeof(int64_t)), false)) return s;
    if (dirmn_status s = check_sample_sizes(ctx, fn, sizes, rows, 1)) return s;
    int64_t cells = 0;
    if (__builtin_mul_overflow(groups, cols, &cells) || cells > (int64_t{1} << 50))
      return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "%" PRId64 " x %" PRId64 " parameters overflow", groups, cols);
    std::vector<double> alpha;
    try {
      alpha.resize(static_cast<size_t>(cells));
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " alphas", cells);
    }
    if (dirmn_status s = convert_params(ctx, fn, false, params, groups, cols, params_stride_k,
                                        cols > 1 ? params_stride_v : 0, param, alpha.data()))
      return s;
    if (dirmn_status s = check_sample_range(ctx, fn, false, alpha, cols)) return s;
    dirmn::PowerSettings ps;
    ps.statistic = statistic_code(o.statistic);
    ps.tables = o.tables;
    ps.level = o.level;
    ps.seed = o.seed;
    ps.tolerance = o.tolerance;
    ps.max_iterations = o.max_iterations;
    ps.interrupt = ctx->interrupt;
    dirmn::PowerOutcome out;
    BackendResult r;
    try {
      r = dirmn::group_power(alpha.data(), groups, cols, rows_per_group, sizes, ps, *ctx->threads, &out);
    } catch (const std::bad_alloc&) {
      r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the simulation", 0};
    }
    if (!r.ok()) return fail_run(ctx, fn, r);
    write_power_result(out, result);
    return DIRMN_SUCCESS;
  });
}

void dirmn_group_test_options_init_sized(dirmn_group_test_options* options, size_t size) {
  fill_defaults(options, size, group_test_defaults());
}

dirmn_status dirmn_test_groups(dirmn_context* ctx, dirmn_counts* counts, const int64_t* group,
                               int64_t groups, const dirmn_group_test_options* options,
                               dirmn_group_test_result* result) {
  static const char* fn = "dirmn_test_groups";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
    if (dirmn_status s = refuse_split(ctx, fn, counts)) return s;
    if (group == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "group is NULL");
    if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
    if (result->size < offsetof(dirmn_group_test_result, statistic) + sizeof(double))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "result->size (%zu) is too small; set it to sizeof(dirmn_group_test_result)",
                  result->size);
    if (groups < 2)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "groups (%" PRId64 ") must be at least 2", groups);
    dirmn_group_test_options o = group_test_defaults();
    if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_group_test_options_init", &o)) return s;
    if (o.bootstrap < 0)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "options->bootstrap (%" PRId64 ") must be >= 0", o.bootstrap);
    if (dirmn_status s = check_shared_options(ctx, fn, o.statistic, o.tolerance, o.max_iterations)) return s;
    const int64_t rows = counts->info.rows;
    if (dirmn_status s = check_extent(ctx, fn, "group", contiguous(group, rows, sizeof(int64_t)), false))
      return s;
    for (int64_t b = 0; b < rows; ++b)
      if (group[b] < -1 || group[b] >= groups)
        return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, Where::row_of("group", b).with_integer(group[b]),
                       "group %" PRId64 " is outside -1 .. %" PRId64, group[b], groups - 1);
    if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
    const dirmn::HostTable* t = counts->stored(ctx).host_rows();
    if (t == nullptr)
      return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "counts wrapped from device memory keep no host copy for the test's fits");
    dirmn::GroupTestSettings s;
    s.statistic = statistic_code(o.statistic);
    s.bootstrap = o.bootstrap;
    s.seed = o.seed;
    s.tolerance = o.tolerance;
    s.max_iterations = o.max_iterations;
    s.interrupt = ctx->interrupt;
    dirmn::GroupTestOutcome g;
    BackendResult r;
    try {
      r = dirmn::group_test(*t, group, groups, s, *ctx->threads, &g);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the groups' histograms (%" PRId64 " columns)", t->cols);
    }
    if (r.status == DIRMN_ERROR_INVALID_ARGUMENT)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "fewer than two groups have rows with counts: nothing to compare");
    if (!r.ok()) return fail_run(ctx, fn, r);
    dirmn_group_test_result full;
    std::memset(&full, 0, sizeof full);
    full.size = result->size;
    full.statistic = g.statistic;
    full.df = g.df;
    full.p_value = g.p_value;
    full.p_value_bootstrap = g.p_value_bootstrap;
    full.bootstrap = g.bootstrap;
    full.loglik_null = g.loglik_null;
    full.loglik_groups = g.loglik_groups;
    full.groups = g.groups;
    full.categories = g.categories;
    full.converged = g.converged ? 1 : 0;
    std::memcpy(result, &full, std::min(result->size, sizeof full));
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_test_proportions(dirmn_context* ctx, dirmn_counts* counts, const double* proportions,
                                    int64_t proportions_stride, dirmn_proportion_test_result* result) {
  static const char* fn = "dirmn_test_proportions";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
    if (dirmn_status s = refuse_split(ctx, fn, counts)) return s;
    if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
    if (result->size < offsetof(dirmn_proportion_test_result, statistic) + sizeof(double))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "result->size (%zu) is too small; set it to sizeof(dirmn_proportion_test_result)",
                  result->size);
    const int64_t cols = counts->info.cols;
    std::vector<double> pi0;
    if (dirmn_status s = read_proportions(ctx, fn, proportions, proportions_stride, cols, &pi0)) return s;
    if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
    const dirmn::HostTable* t = counts->stored(ctx).host_rows();
    if (t == nullptr)
      return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "counts wrapped from device memory keep no host copy for the test");
    dirmn::ProportionTestOutcome o;
    BackendResult r;
    try {
      r = dirmn::proportion_test(*t, pi0.data(), &o);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the proportions (%" PRId64 " columns)",
                  cols);
    }
    if (r.status == DIRMN_ERROR_INVALID_ARGUMENT)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "no row has counts: nothing to test");
    if (!r.ok()) return fail_run(ctx, fn, r);
    dirmn_proportion_test_result full;
    std::memset(&full, 0, sizeof full);
    full.size = result->size;
    full.statistic = o.statistic;
    full.df = o.df;
    full.p_value = o.p_value;
    full.theta = o.theta;
    full.rows = o.rows;
    full.categories = o.categories;
    std::memcpy(result, &full, std::min(result->size, sizeof full));
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_power_proportions(dirmn_context* ctx, int64_t cols, const double* params,
                                     int64_t params_stride, dirmn_param param, int64_t rows,
                                     const int64_t* sizes, const double* proportions,
                                     int64_t proportions_stride, const dirmn_power_options* options,
                                     dirmn_power_result* result) {
  static const char* fn = "dirmn_power_proportions";
  return with_context(ctx, fn, [&] {
    if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
    if (sizes == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "sizes is NULL");
    if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
    if (result->size < offsetof(dirmn_power_result, power) + sizeof(double))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "result->size (%zu) is too small; set it to sizeof(dirmn_power_result)", result->size);
    if (cols < 2)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "cols (%" PRId64 ") must be at least 2", cols);
    if (rows < 1 || rows > (int64_t{1} << 40))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "rows (%" PRId64 ") must be in 1 .. 2^40", rows);
    if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
    dirmn_power_options o = power_defaults();
    if (dirmn_status s = read_power_options(ctx, fn, options, &o)) return s;
    if (dirmn_status s = check_extent(ctx, fn, "params", Strided{params, 1, cols, 1, params_stride, sizeof(double)},
                                      false))
      return s;
    if (dirmn_status s = check_extent(ctx, fn, "sizes", contiguous(sizes, rows, sizeof(int64_t)), false)) return s;
    if (dirmn_status s = check_sample_sizes(ctx, fn, sizes, rows, 1)) return s;
    std::vector<double> pi0, alpha;
    if (dirmn_status s = read_proportions(ctx, fn, proportions, proportions_stride, cols, &pi0)) return s;
    try {
      alpha.resize(static_cast<size_t>(cols));
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " alphas", cols);
    }
    if (dirmn_status s = convert_params(ctx, fn, false, params, 1, cols, 0, params_stride, param, alpha.data()))
      return s;
    if (dirmn_status s = check_sample_range(ctx, fn, false, alpha, cols)) return s;
    dirmn::PowerSettings ps;
    ps.tables = o.tables;
    ps.level = o.level;
    ps.seed = o.seed;
    ps.interrupt = ctx->interrupt;
    dirmn::PowerOutcome out;
    BackendResult r;
    try {
      r = dirmn::proportion_power(alpha.data(), cols, rows, sizes, pi0.data(), ps, *ctx->threads, &out);
    } catch (const std::bad_alloc&) {
      r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the simulation", 0};
    }
    if (!r.ok()) return fail_run(ctx, fn, r);
    write_power_result(out, result);
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
