// fault_driver.cpp: runs a representative C workload -- contexts, dense
// and sparse counts (one of 2^20+ cells, whose validation starts threads),
// likelihoods, row-wise derivatives, sums, fits, mixtures and their
// assignment, regressions, sampled tables (k = 1, a k = 2 mixture, one
// alpha per row) and their copies out, moments, the group test with a
// bootstrap, the failure queries -- once to learn how many allocations and
// thread creations it makes, then again for n = 1, 2, 3, ... with the n-th
// allocation (then the n-th thread creation) failing. Every call an
// injected failure reaches must answer DIRMN_ERROR_OUT_OF_MEMORY with a
// message that says what could not be had, leave its outputs as they were,
// and succeed when called again with the same handles, with the results of
// an undisturbed run; nothing may abort, and under AddressSanitizer nothing
// may leak. Exit status 0 when all of that held, 1 otherwise.
//
// Usage: dirmn_fault [max_runs]   (see kDefaultRuns; when the workload
// makes more events, every s-th one is failed, s chosen to fit).
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "dirmn.h"
#include "fault_hooks.hpp"

namespace {

int g_errors = 0;
std::map<std::string, int> g_messages;  // failure messages seen, with their counts

void violation(const char* what, const char* call, const std::string& detail) {
  if (++g_errors <= 30) std::fprintf(stderr, "VIOLATION (%s) in %s: %s\n", what, call, detail.c_str());
}

// The results of one run, compared with the undisturbed run's.
struct Results {
  std::vector<double> values;
  void add(const double* p, size_t n) { values.insert(values.end(), p, p + n); }
};

// A sentinel-filled output: a failed call must leave it as it was.
constexpr double kUntouched = -1234.5;

class Run {
 public:
  explicit Run(Results* r) : results_(r) {}

  // Calls f() (a dirmn call returning a status) inside a counting scope.
  // An injected failure must give OUT_OF_MEMORY and leave `outs` alone; the
  // call is then made again (nothing is armed for it any more) and must
  // succeed. Returns false when it cannot go on.
  template <class F>
  bool call(const char* name, const dirmn_context* ctx, F&& f,
            std::vector<std::vector<double>*> outs = {}) {
    for (auto* o : outs) o->assign(o->size(), kUntouched);
    const int64_t before = fault::injected();
    dirmn_status s;
    {
      fault::Counting counting;
      s = f();
    }
    const bool hit = fault::injected() != before;
    if (s == DIRMN_SUCCESS) return true;
    const std::string msg = dirmn_last_error(ctx);
    if (!hit) {
      violation("failed without an injected failure", name, std::string(dirmn_status_name(s)) + ": " + msg);
      return false;
    }
    if (s != DIRMN_ERROR_OUT_OF_MEMORY)
      violation("not OUT_OF_MEMORY", name, std::string(dirmn_status_name(s)) + ": " + msg);
    if (msg.find("out of") == std::string::npos && msg.find("threads could not be started") == std::string::npos)
      violation("message does not say what ran out", name, msg);
    // The entry guard's last resort names nothing: every allocation a call
    // makes is to be named where it is made.
    const std::string bare = ": out of host memory";
    if (msg.size() >= bare.size() && msg.compare(msg.size() - bare.size(), bare.size(), bare) == 0)
      violation("the failed allocation is not named", name, msg);
    ++g_messages[msg];
    for (auto* o : outs)
      for (double v : *o)
        if (v != kUntouched) {
          violation("output written by a failed call", name, msg);
          break;
        }
    for (auto* o : outs) o->assign(o->size(), kUntouched);
    fault::Counting counting;
    s = f();
    if (s != DIRMN_SUCCESS) {
      violation("the call again, after a failure, failed", name,
                std::string(dirmn_status_name(s)) + ": " + dirmn_last_error(ctx));
      return false;
    }
    return true;
  }

  void keep(const std::vector<double>& v) { results_->add(v.data(), v.size()); }
  void keep(const double* p, size_t n) { results_->add(p, n); }

 private:
  Results* results_;
};

// A small table with a zero row, a large one (2^20+ cells), and a sparse
// one with the small table's columns.
constexpr int64_t kRows = 40, kCols = 5, kBigRows = 270000, kBigCols = 4;

std::vector<int32_t> small_table() {
  std::vector<int32_t> x(static_cast<size_t>(kRows * kCols));
  uint32_t s = 12345;
  for (int64_t b = 0; b < kRows; ++b)
    for (int64_t v = 0; v < kCols; ++v) {
      s = s * 1664525u + 1013904223u;
      const int32_t n = static_cast<int32_t>((s >> 24) % (b < kRows / 2 ? 9 : 4)) * (v == b % kCols ? 5 : 1);
      x[static_cast<size_t>(b * kCols + v)] = b == 7 ? 0 : n;
    }
  return x;
}

// A fit's result into alpha and its standard errors.
dirmn_fit_result fit_result_into(std::vector<double>* alpha, std::vector<double>* se) {
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = alpha->data();
  r.std_error_alpha = se->data();
  return r;
}

// A communicator of one rank (its sums are its own values) and counts of
// the small table attached to it: the collective path's votes, histogram
// lists and merge, each allocation failed in turn, then the same fit; then
// a mixture range and a regression over it.
int sum_as_is_i64(void*, int64_t*, size_t, int) { return 0; }
int sum_as_is_f64(void*, double*, size_t, int) { return 0; }
int broadcast_as_is(void*, void*, size_t, int, int) { return 0; }

bool split_fit(Run& run, dirmn_context* ctx, const std::vector<int32_t>& x) {
  dirmn_communicator_callbacks cb;
  std::memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.ranks = 1;
  cb.allreduce_int64 = sum_as_is_i64;
  cb.allreduce_double = sum_as_is_f64;
  cb.broadcast = broadcast_as_is;
  dirmn_communicator* comm = nullptr;
  dirmn_counts* part = nullptr;
  bool ok = run.call("dirmn_communicator_create", nullptr, [&] { return dirmn_communicator_create(&comm, &cb); }) &&
            run.call("dirmn_counts_create_dense (a rank's rows)", ctx, [&] {
              return dirmn_counts_create_dense(ctx, &part, kRows, kCols, DIRMN_INT32, x.data(), kCols, 1, nullptr);
            }) &&
            run.call("dirmn_counts_set_communicator", ctx,
                     [&] { return dirmn_counts_set_communicator(ctx, part, comm); });
  std::vector<double> fitted(kCols), se(kCols), sum_out(1 + kCols);
  if (ok) {
    dirmn_fit_result r = fit_result_into(&fitted, &se);
    ok = run.call("dirmn_fit (over a communicator)", ctx, [&] { return dirmn_fit(ctx, part, nullptr, &r); },
                  {&fitted, &se});
    run.keep(fitted);
    run.keep(se);
    ok = ok && run.call("dirmn_loglik_sum (over a communicator)", ctx, [&] {
      return dirmn_loglik_sum(ctx, part, fitted.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_FULL, &sum_out[0],
                              &sum_out[1], nullptr, nullptr);
    }, {&sum_out});
    run.keep(sum_out);
  }
  // A mixture range over the communicator: the initialisation's sample and
  // the split's members exchanged, the histograms merged each iteration.
  dirmn_mixture* const sentinel_mixture = reinterpret_cast<dirmn_mixture*>(0x3);
  dirmn_mixture* range[2] = {sentinel_mixture, sentinel_mixture};
  if (ok) {
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.starts = 1;
    o.max_iterations = 3;
    ok = run.call("dirmn_mixture_fit_range (over a communicator)", ctx,
                  [&] { return dirmn_mixture_fit_range(ctx, part, 1, 2, &o, range); });
    if (range[0] == sentinel_mixture) range[0] = range[1] = nullptr;
    ok = ok && range[0] != nullptr;
  }
  // A regression over it: the Gram matrix, values, gradient and Newton
  // matrix summed, the last broadcast in turn.
  dirmn_reg* const sentinel_reg = reinterpret_cast<dirmn_reg*>(0x5);
  dirmn_reg* reg = sentinel_reg;
  if (ok) {
    std::vector<double> design(static_cast<size_t>(2 * kRows));
    for (int64_t b = 0; b < kRows; ++b) {
      design[static_cast<size_t>(2 * b)] = 1.0;
      design[static_cast<size_t>(2 * b + 1)] = 0.25 * static_cast<double>(b % 5) - 0.5;
    }
    ok = run.call("dirmn_reg_fit (over a communicator)", ctx,
                  [&] { return dirmn_reg_fit(ctx, part, design.data(), kRows, 2, 2, 1, nullptr, &reg); });
    if (reg == sentinel_reg) reg = nullptr;
    ok = ok && reg != nullptr;
  }
  fault::Counting counting;  // destroying must not need memory
  if (reg != sentinel_reg) dirmn_reg_destroy(reg);
  if (range[0] != sentinel_mixture) {
    dirmn_mixture_destroy(range[0]);
    dirmn_mixture_destroy(range[1]);
  }
  dirmn_counts_destroy(part);
  dirmn_communicator_destroy(comm);
  return ok;
}

// Integer outputs live in sentinel-filled double buffers (as many bytes or
// more), so that Run::call's check that a failed call left them alone
// covers them too; their values are kept as doubles.
template <class T>
T* as(std::vector<double>& v) {
  return reinterpret_cast<T*>(v.data());
}
template <class T>
void keep_as(Run& run, std::vector<double>& v, size_t n) {
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<double>(as<T>(v)[i]);
  run.keep(d);
}

// Sampling: a k = 1 table of 200 rows (its blocks on the pool; sizes
// 0 .. 22 over 5 categories, so both the urn and the gamma variates draw),
// a mixture of k = 2 with mixture_weights and component_out, one alpha per
// row; each table's row totals and both copies out (CSC with int64
// indices, CSR with int32 indices and float values); dirmn_moments with a
// covariance; dirmn_test_groups with a bootstrap of 3 tables on the pool.
bool sampling(Run& run, dirmn_context* ctx, dirmn_counts* c, const std::vector<double>& alpha,
              const std::vector<double>& arow) {
  constexpr int64_t kDrawRows = 200;
  std::vector<int64_t> sizes(static_cast<size_t>(kDrawRows));
  for (int64_t b = 0; b < kDrawRows; ++b) sizes[static_cast<size_t>(b)] = (b * 7) % 23;
  dirmn_counts* const sentinel = reinterpret_cast<dirmn_counts*>(0x6);
  dirmn_counts* drawn[3] = {nullptr, nullptr, nullptr};
  const int64_t drawn_rows[3] = {kDrawRows, kRows, kRows};
  std::vector<double> comp(static_cast<size_t>(kRows));
  const double mixture_weights[2] = {0.25, 0.75};
  // Draws table i with f(&made): a failed call must leave *counts alone.
  const auto draw = [&](const char* name, int i, auto&& f, std::vector<std::vector<double>*> outs) {
    dirmn_counts* made = sentinel;
    const bool r = run.call(name, ctx, [&] {
      dirmn_counts* const before = made;
      const dirmn_status s = f(&made);
      if (s != DIRMN_SUCCESS && made != before)
        violation("*counts written by a failed call", name, dirmn_last_error(ctx));
      return s;
    }, outs);
    drawn[i] = made == sentinel ? nullptr : made;
    return r && drawn[i] != nullptr;
  };
  bool ok = draw("dirmn_sample (k = 1)", 0, [&](dirmn_counts** out) {
    dirmn_sample_options o;
    dirmn_sample_options_init(&o);
    o.seed = 7;
    o.storage = DIRMN_STORAGE_DENSE;
    return dirmn_sample(ctx, out, kDrawRows, kCols, 1, alpha.data(), kCols, 1, DIRMN_PARAM_ALPHA,
                        sizes.data(), 1, &o);
  }, {});
  ok = ok && draw("dirmn_sample (k = 2, mixture_weights)", 1, [&](dirmn_counts** out) {
    dirmn_sample_options o;
    dirmn_sample_options_init(&o);
    o.seed = 8;
    o.mixture_weights = mixture_weights;
    o.component_out = as<int64_t>(comp);
    o.storage = DIRMN_STORAGE_SPARSE;
    // One size (12) for every row.
    return dirmn_sample(ctx, out, kRows, kCols, 2, alpha.data(), kCols, 1, DIRMN_PARAM_ALPHA,
                        sizes.data() + 5, 0, &o);
  }, {&comp});
  if (ok) {
    keep_as<int64_t>(run, comp, static_cast<size_t>(kRows));
    for (int64_t b = 0; b < kRows; ++b)
      if (as<int64_t>(comp)[b] != 0 && as<int64_t>(comp)[b] != 1)
        violation("a component outside 0 .. k - 1", "dirmn_sample", std::to_string(as<int64_t>(comp)[b]));
  }
  ok = ok && draw("dirmn_sample_rowwise", 2, [&](dirmn_counts** out) {
    return dirmn_sample_rowwise(ctx, out, kRows, kCols, arow.data(), kCols, 1, DIRMN_PARAM_ALPHA,
                                sizes.data(), 1, nullptr);
  }, {});
  for (int i = 0; i < 3 && ok; ++i) {
    const int64_t rows = drawn_rows[i];
    const auto size_of = [&](int64_t b) {
      return static_cast<double>(i == 1 ? sizes[5] : sizes[static_cast<size_t>(b)]);
    };
    double total = 0.0;
    for (int64_t b = 0; b < rows; ++b) total += size_of(b);
    std::vector<double> totals(static_cast<size_t>(rows)), dense(static_cast<size_t>(rows * kCols));
    ok = run.call("dirmn_counts_row_totals", ctx,
                  [&] { return dirmn_counts_row_totals(ctx, drawn[i], totals.data()); }, {&totals});
    for (int64_t b = 0; b < rows && ok; ++b)
      if (totals[static_cast<size_t>(b)] != size_of(b))
        violation("a sampled row's total is not its size", "dirmn_sample", std::to_string(b));
    run.keep(totals);
    // Column-major: cell (b, v) at b + v rows.
    ok = ok && run.call("dirmn_counts_copy_dense", ctx, [&] {
      return dirmn_counts_copy_dense(ctx, drawn[i], DIRMN_FLOAT64, dense.data(), 1, rows);
    }, {&dense});
    for (int64_t b = 0; b < rows && ok; ++b) {
      double s = 0.0;
      for (int64_t v = 0; v < kCols; ++v) s += dense[static_cast<size_t>(b + v * rows)];
      if (s != size_of(b)) violation("a copied row does not sum to its size", "dirmn_counts_copy_dense", std::to_string(b));
    }
    run.keep(dense);
    dirmn_counts_info info;
    info.size = sizeof info;
    ok = ok && run.call("dirmn_counts_get_info", nullptr, [&] { return dirmn_counts_get_info(drawn[i], &info); });
    if (!ok) break;
    const size_t nnz = static_cast<size_t>(info.nnz);
    std::vector<double> ptr(kCols + 1), idx(std::max<size_t>(nnz, 1)), val(std::max<size_t>(nnz, 1));
    ok = run.call("dirmn_counts_copy_sparse (CSC)", ctx, [&] {
      return dirmn_counts_copy_sparse(ctx, drawn[i], DIRMN_CSC, DIRMN_INDEX_INT64, ptr.data(), idx.data(),
                                      DIRMN_FLOAT64, val.data());
    }, {&ptr, &idx, &val});
    if (ok) {
      double s = 0.0;
      for (size_t e = 0; e < nnz; ++e) s += val[e];
      if (as<int64_t>(ptr)[kCols] != info.nnz || s != total)
        violation("a CSC copy does not hold the table", "dirmn_counts_copy_sparse", "");
      keep_as<int64_t>(run, ptr, kCols + 1);
      keep_as<int64_t>(run, idx, nnz);
      run.keep(val.data(), nnz);
    }
    std::vector<double> ptr32(static_cast<size_t>(rows) + 1), idx32(std::max<size_t>(nnz, 1)),
        val32(std::max<size_t>(nnz, 1));
    ok = ok && run.call("dirmn_counts_copy_sparse (CSR)", ctx, [&] {
      return dirmn_counts_copy_sparse(ctx, drawn[i], DIRMN_CSR, DIRMN_INDEX_INT32, ptr32.data(),
                                      idx32.data(), DIRMN_FLOAT32, val32.data());
    }, {&ptr32, &idx32, &val32});
    if (ok) {
      keep_as<int32_t>(run, ptr32, static_cast<size_t>(rows) + 1);
      keep_as<int32_t>(run, idx32, nnz);
      keep_as<float>(run, val32, nnz);
    }
  }
  if (ok) {
    std::vector<double> mean(kCols), variance(kCols), cov(kCols * kCols);
    ok = run.call("dirmn_moments", ctx, [&] {
      return dirmn_moments(ctx, kCols, alpha.data(), 1, DIRMN_PARAM_ALPHA, 17.5, mean.data(),
                           variance.data(), cov.data(), kCols);
    }, {&mean, &variance, &cov});
    run.keep(mean);
    run.keep(variance);
    run.keep(cov);
  }
  if (ok) {
    // Three groups of the small table's rows, one row left out; a bootstrap
    // of 3 tables (40 x 5 cells x 3: on the pool).
    std::vector<int64_t> group(static_cast<size_t>(kRows));
    for (int64_t b = 0; b < kRows; ++b) group[static_cast<size_t>(b)] = b == 3 ? -1 : b % 3;
    dirmn_group_test_options o;
    dirmn_group_test_options_init(&o);
    o.bootstrap = 3;
    o.seed = 9;
    dirmn_group_test_result r;
    ok = run.call("dirmn_test_groups", ctx, [&] {
      std::memset(&r, 0x5c, sizeof r);
      r.size = sizeof r;
      dirmn_group_test_result before;
      std::memcpy(&before, &r, sizeof r);
      const dirmn_status s = dirmn_test_groups(ctx, c, group.data(), 3, &o, &r);
      if (s != DIRMN_SUCCESS && std::memcmp(&before, &r, sizeof r) != 0)
        violation("output written by a failed call", "dirmn_test_groups", dirmn_last_error(ctx));
      return s;
    });
    if (ok) {
      const double kept[] = {r.statistic,  r.df, r.p_value, r.p_value_bootstrap, r.loglik_null,
                             r.loglik_groups, static_cast<double>(r.bootstrap), static_cast<double>(r.groups)};
      run.keep(kept, std::size(kept));
      if (r.bootstrap != 3 || !std::isfinite(r.statistic) || !std::isfinite(r.p_value_bootstrap))
        violation("an implausible group test", "dirmn_test_groups", "");
    }
  }
  {
    fault::Counting counting;  // destroying must not need memory
    for (dirmn_counts* d : drawn) dirmn_counts_destroy(d);
  }
  return ok;
}

// The workload; false when it could not go on (a violation was reported).
bool workload(Results* results) {
  Run run(results);
  static const std::vector<int32_t> x = small_table();
  static const std::vector<int32_t> big = [] {
    std::vector<int32_t> t(static_cast<size_t>(kBigRows * kBigCols));
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int32_t>((i * 7919) % 13);
    return t;
  }();
  // CSR of x.
  std::vector<int64_t> ptr(1, 0);
  std::vector<int64_t> idx;
  std::vector<double> val;
  for (int64_t b = 0; b < kRows; ++b) {
    for (int64_t v = 0; v < kCols; ++v)
      if (x[static_cast<size_t>(b * kCols + v)] != 0) {
        idx.push_back(v);
        val.push_back(x[static_cast<size_t>(b * kCols + v)]);
      }
    ptr.push_back(static_cast<int64_t>(idx.size()));
  }

  dirmn_context* sentinel_ctx = reinterpret_cast<dirmn_context*>(0x1);
  dirmn_context* ctx = sentinel_ctx;
  bool ok = run.call("dirmn_context_create", nullptr,
                     [&] { return dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0); });
  if (!ok || ctx == sentinel_ctx) return false;
  dirmn_counts *c = nullptr, *cb = nullptr, *cs = nullptr;
  dirmn_mixture* m = nullptr;
  dirmn_mixture* range[2] = {nullptr, nullptr};
  const std::vector<double> alpha = {0.5, 1.5, 2.0, 3.0, 0.7, 1.1, 0.9, 2.5, 1.0, 4.0,
                                     0.3, 0.3, 0.8, 1.2, 5.0};
  std::vector<double> arow(static_cast<size_t>(kRows * kCols));
  for (size_t i = 0; i < arow.size(); ++i) arow[i] = 0.5 + static_cast<double>(i % 7) * 0.25;
  std::vector<double> out3(static_cast<size_t>(kRows * 3)), out1(static_cast<size_t>(kRows)),
      outb(static_cast<size_t>(kBigRows)), grad(static_cast<size_t>(kRows * kCols)),
      hess(static_cast<size_t>(kRows * kCols)), hsc(static_cast<size_t>(kRows)), fitted(kCols),
      se(kCols), sum_out(1 + kCols), z(static_cast<size_t>(kRows * 2)), params(2 * kCols + 2);
  dirmn_counts* const sentinel_counts = reinterpret_cast<dirmn_counts*>(0x2);
  auto create_dense = [&](dirmn_counts** out, int64_t rows, int64_t cols, const int32_t* data) {
    *out = sentinel_counts;
    const bool r = run.call("dirmn_counts_create_dense", ctx, [&] {
      return dirmn_counts_create_dense(ctx, out, rows, cols, DIRMN_INT32, data, cols, 1, nullptr);
    });
    if (*out == sentinel_counts) *out = nullptr;
    return r && *out != nullptr;
  };

  ok = run.call("dirmn_context_set_threads", ctx, [&] { return dirmn_context_set_threads(ctx, 3); }) &&
       create_dense(&c, kRows, kCols, x.data()) &&
       create_dense(&cb, kBigRows, kBigCols, big.data());
  if (ok) {
    cs = sentinel_counts;
    ok = run.call("dirmn_counts_create_sparse", ctx, [&] {
      return dirmn_counts_create_sparse(ctx, &cs, DIRMN_CSR, kRows, kCols,
                                        static_cast<int64_t>(idx.size()), DIRMN_INDEX_INT64,
                                        ptr.data(), idx.data(), DIRMN_FLOAT64, val.data(), nullptr);
    });
    if (cs == sentinel_counts) cs = nullptr;
    ok = ok && cs != nullptr;
  }
  if (ok) {
    // Shared alpha, 3 vectors, into a strided (scratch) and a contiguous
    // (direct) output; row-wise alpha; the large table.
    ok = run.call("dirmn_loglik (contiguous)", ctx, [&] {
      return dirmn_loglik(ctx, c, 3, alpha.data(), kCols, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                          out3.data(), 3, 1);
    }, {&out3});
    run.keep(out3);
    ok = ok && run.call("dirmn_loglik (strided)", ctx, [&] {
      return dirmn_loglik(ctx, cs, 3, alpha.data(), kCols, 1, DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL,
                          out3.data(), 1, kRows);
    }, {&out3});
    run.keep(out3);
    ok = ok && run.call("dirmn_loglik_rowwise", ctx, [&] {
      return dirmn_loglik_rowwise(ctx, c, arow.data(), kCols, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                                  out1.data(), 1);
    }, {&out1});
    run.keep(out1);
    ok = ok && run.call("dirmn_loglik (2^20+ cells)", ctx, [&] {
      return dirmn_loglik(ctx, cb, 1, alpha.data(), kBigCols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                          outb.data(), 1, 1);
    }, {&outb});
    run.keep(outb.data(), 16);
  }
  if (ok) {
    ok = run.call("dirmn_loglik_rowwise_derivatives", ctx, [&] {
      return dirmn_loglik_rowwise_derivatives(ctx, cs, arow.data(), kCols, 1, DIRMN_PARAM_LOG_ALPHA,
                                              DIRMN_FULL, out1.data(), grad.data(), hess.data(),
                                              hsc.data(), kCols, 1);
    }, {&out1, &grad, &hess, &hsc});
    run.keep(grad);
    run.keep(hess);
    ok = ok && run.call("dirmn_loglik_sum", ctx, [&] {
      return dirmn_loglik_sum(ctx, c, alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_FULL,
                              &sum_out[0], &sum_out[1], nullptr, nullptr);
    }, {&sum_out});
    run.keep(sum_out);
  }
  if (ok) {
    dirmn_fit_result r = fit_result_into(&fitted, &se);
    ok = run.call("dirmn_fit", ctx, [&] { return dirmn_fit(ctx, c, nullptr, &r); }, {&fitted, &se});
    run.keep(fitted);
    run.keep(se);
  }
  if (ok) ok = split_fit(run, ctx, x);
  if (ok) {
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.starts = 1;
    o.max_iterations = 3;
    dirmn_mixture* const sentinel_mixture = reinterpret_cast<dirmn_mixture*>(0x3);
    m = sentinel_mixture;
    ok = run.call("dirmn_mixture_fit", ctx, [&] { return dirmn_mixture_fit(ctx, c, 2, &o, &m); });
    if (m == sentinel_mixture) m = nullptr;
    ok = ok && m != nullptr;
    range[0] = range[1] = sentinel_mixture;
    ok = ok && run.call("dirmn_mixture_fit_range", ctx,
                        [&] { return dirmn_mixture_fit_range(ctx, cs, 1, 2, &o, range); });
    if (range[0] == sentinel_mixture) range[0] = range[1] = nullptr;
    ok = ok && range[0] != nullptr;
  }
  if (ok) {
    ok = run.call("dirmn_mixture_assign", ctx,
                  [&] { return dirmn_mixture_assign(ctx, m, cs, z.data(), 2, 1); }, {&z});
    run.keep(z);
    ok = ok && run.call("dirmn_mixture_get_params", nullptr, [&] {
      return dirmn_mixture_get_params(range[1], params.data(), kCols, 1, params.data() + 2 * kCols);
    }, {&params});
    run.keep(params);
    dirmn_counts_info info;
    info.size = sizeof info;
    ok = ok && run.call("dirmn_counts_get_info", nullptr, [&] { return dirmn_counts_get_info(cb, &info); });
    ok = ok && run.call("dirmn_counts_row_totals", ctx,
                        [&] { return dirmn_counts_row_totals(ctx, c, out1.data()); }, {&out1});
    run.keep(out1);
  }
  dirmn_reg* reg = nullptr;
  if (ok) {
    // A regression of the small table on an intercept and one covariate,
    // and its standard errors.
    std::vector<double> design(static_cast<size_t>(kRows * 2)), reg_se(static_cast<size_t>(2 * kCols));
    for (int64_t b = 0; b < kRows; ++b) {
      design[static_cast<size_t>(2 * b)] = 1.0;
      design[static_cast<size_t>(2 * b + 1)] = 0.25 * static_cast<double>(b % 5) - 0.5;
    }
    dirmn_reg* const sentinel_reg = reinterpret_cast<dirmn_reg*>(0x5);
    reg = sentinel_reg;
    ok = run.call("dirmn_reg_fit", ctx,
                  [&] { return dirmn_reg_fit(ctx, c, design.data(), kRows, 2, 2, 1, nullptr, &reg); });
    if (reg == sentinel_reg) reg = nullptr;
    ok = ok && reg != nullptr;
    ok = ok && run.call("dirmn_reg_get_std_errors", nullptr, [&] {
      return dirmn_reg_get_std_errors(reg, reg_se.data(), kCols, 1);
    }, {&reg_se});
    run.keep(reg_se);
    // The same rows on nine covariates (45 coefficients: solved in the
    // rows' dimension), its covariance and Wald test (formed from the
    // factors when asked for), and the mean/precision model.
    constexpr int64_t kWideP = 9;
    std::vector<double> wide(static_cast<size_t>(kRows * kWideP));
    for (int64_t b = 0; b < kRows; ++b)
      for (int64_t i = 0; i < kWideP; ++i)
        wide[static_cast<size_t>(b * kWideP + i)] =
            i == 0 ? 1.0 : 0.3 * std::sin(static_cast<double>((i + 1) * (b + 1)) * 0.7);
    for (int model = 0; model < 2 && ok; ++model) {
      dirmn_reg_options ro;
      dirmn_reg_options_init(&ro);
      ro.model = model == 0 ? DIRMN_REG_LOGLINEAR : DIRMN_REG_MEAN_PRECISION;
      ro.contrast = model == 0 ? DIRMN_REG_REFERENCE : DIRMN_REG_SUM_TO_ZERO;
      const int64_t p = model == 0 ? kWideP : 2;
      const double* xr = model == 0 ? wide.data() : design.data();
      // The mean/precision fit with covariates on its precision too.
      std::vector<double> zr(static_cast<size_t>(2 * kRows));
      for (int64_t b = 0; b < kRows; ++b) {
        zr[static_cast<size_t>(2 * b)] = 1.0;
        zr[static_cast<size_t>(2 * b + 1)] = 0.5 * std::cos(static_cast<double>(b) * 1.3);
      }
      if (model == 1) {
        ro.precision_design = zr.data();
        ro.precision_covariates = 2;
        ro.precision_stride_row = 2;
        ro.precision_stride_col = 1;
      }
      dirmn_reg* r2 = sentinel_reg;
      ok = run.call("dirmn_reg_fit", ctx, [&] { return dirmn_reg_fit(ctx, c, xr, kRows, p, p, 1, &ro, &r2); });
      if (r2 == sentinel_reg) r2 = nullptr;
      ok = ok && r2 != nullptr;
      dirmn_reg_info ri;
      ri.size = sizeof ri;
      ok = ok && dirmn_reg_get_info(r2, &ri) == DIRMN_SUCCESS;
      if (ok && ri.hessian_definite) {
        const int64_t P = ri.parameters;
        std::vector<double> cov(static_cast<size_t>(P * P)), wald(3);
        ok = run.call("dirmn_reg_get_vcov", nullptr, [&] { return dirmn_reg_get_vcov(r2, cov.data(), P); }, {&cov});
        run.keep(cov);
        ok = ok && run.call("dirmn_reg_wald_test", nullptr, [&] {
          return dirmn_reg_wald_test(r2, 1, &wald[0], &wald[1], &wald[2]);
        }, {&wald});
        run.keep(wald);
      }
      {
        fault::Counting counting;
        dirmn_reg_destroy(r2);
      }
    }
  }
  if (ok) ok = sampling(run, ctx, c, alpha, arow);
  // The failure queries work after whatever happened, and report a
  // failure of their own without allocating.
  if (ok) {
    dirmn_status s;
    {
      fault::Counting counting;
      s = dirmn_loglik(ctx, c, 0, alpha.data(), kCols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out3.data(), 3, 1);
    }
    dirmn_error_location loc;
    std::memset(&loc, 0, sizeof loc);
    loc.size = sizeof loc;
    if (s != DIRMN_ERROR_INVALID_ARGUMENT || dirmn_last_error_location(ctx, &loc) != DIRMN_SUCCESS ||
        std::strstr(dirmn_last_error(ctx), "k (0) must be positive") == nullptr)
      violation("a bad argument's answer", "dirmn_loglik", dirmn_last_error(ctx));
  }
  {
    fault::Counting counting;  // destroying must not need memory
    dirmn_mixture_destroy(range[0]);
    dirmn_mixture_destroy(range[1]);
    dirmn_mixture_destroy(m);
    dirmn_reg_destroy(reg);
    dirmn_counts_destroy(cs);
    dirmn_counts_destroy(cb);
    dirmn_context_destroy(ctx);
    dirmn_counts_destroy(c);  // after its context: counts may outlive it
  }
  return ok;
}

bool same(const Results& a, const Results& b) {
  if (a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const double x = a.values[i], y = b.values[i];
    if (!(std::fabs(x - y) <= 1e-12 * std::fmax(1.0, std::fabs(y))) && !(x == y)) return false;
  }
  return true;
}

// Sweeps one kind of failure over the workload; returns the injections made.
int64_t sweep(fault::Kind kind, int64_t events, int64_t max_runs, const Results& want) {
  const int64_t stride = events > max_runs ? (events + max_runs - 1) / max_runs : 1;
  int64_t injections = 0;
  for (int64_t n = 1; n <= events; n += stride) {
    fault::reset();
    fault::arm(kind, n);
    Results got;
    const bool ok = workload(&got);
    fault::disarm();
    injections += fault::injected();
    if (ok && !same(got, want))
      violation("results differ from the undisturbed run's", kind == fault::kAlloc ? "alloc" : "thread",
                "failing event " + std::to_string(n));
    if (g_errors > 30) break;
  }
  std::printf("%s: %" PRId64 " events per run, every %" PRId64 "-th failed: %" PRId64
              " runs with an injected failure\n",
              kind == fault::kAlloc ? "allocations" : "thread creations", events, stride, injections);
  return injections;
}

// dirmn_loglik's results scratch is the allocation that fails: the message
// names it and its size.
void check_scratch_message() {
  dirmn_context* ctx = nullptr;
  if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) {
    violation("setup", "dirmn_context_create", dirmn_last_error(nullptr));
    return;
  }
  const std::vector<int32_t> x = small_table();
  dirmn_counts* c = nullptr;
  dirmn_counts_create_dense(ctx, &c, kRows, kCols, DIRMN_INT32, x.data(), kCols, 1, nullptr);
  const int64_t k = 60;  // 300 parameters, 40 x 60 results: 19200 bytes of scratch
  std::vector<double> alpha(static_cast<size_t>(k * kCols), 1.0), out(static_cast<size_t>(kRows * k));
  fault::reset();
  fault::arm_above(19200);
  dirmn_status s;
  {
    fault::Counting counting;
    s = dirmn_loglik(ctx, c, k, alpha.data(), kCols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, kRows);
  }
  fault::disarm();
  const std::string msg = dirmn_last_error(ctx);
  if (s != DIRMN_ERROR_OUT_OF_MEMORY ||
      msg != "dirmn_loglik: out of host memory for the 40 x 60 results' scratch (19200 bytes)")
    violation("the failed allocation is not named", "dirmn_loglik", msg);
  dirmn_counts_destroy(c);
  dirmn_context_destroy(ctx);
}

}  // namespace

// Runs per kind unless the command line says: every event of the workload
// (about 5100 allocations) in a plain build; under AddressSanitizer, which
// is some ten times slower, every few, to keep CI's time in bounds.
#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kDefaultRuns = 900;
#else
constexpr int64_t kDefaultRuns = 6000;
#endif

int main(int argc, char** argv) {
  const int64_t max_runs = argc > 1 ? std::atoll(argv[1]) : kDefaultRuns;
  Results want;
  fault::reset();
  if (!workload(&want) || fault::injected() != 0) {
    std::fprintf(stderr, "the undisturbed workload failed\n");
    return 1;
  }
  const int64_t allocs = fault::counted(fault::kAlloc), threads = fault::counted(fault::kThread);
  if (allocs == 0) {
    // The sweep needs libdirmn's operator new to resolve to this binary's:
    // where the toolchain binds it inside the library, say so and skip
    // rather than report a failure of the library.
    std::printf("skipped: libdirmn's allocations do not reach this binary's operator new\n");
    return 77;
  }
  check_scratch_message();
  const int64_t a = sweep(fault::kAlloc, allocs, max_runs, want);
  const int64_t t = sweep(fault::kThread, threads, max_runs, want);
  std::printf("distinct out-of-memory messages: %zu\n", g_messages.size());
  for (const auto& e : g_messages) std::printf("  %5d  %s\n", e.second, e.first.c_str());
  if (a == 0 || t == 0) violation("nothing was injected", "sweep", "");
  if (g_errors > 0) {
    std::printf("FAILED: %d violations\n", g_errors);
    return 1;
  }
  std::printf("passed\n");
  return 0;
}
