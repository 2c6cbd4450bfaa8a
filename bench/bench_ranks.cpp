// bench_ranks.cpp: issue #31's benchmark -- the shared-alpha fit, the
// summed likelihood and a mixture's EM iterations on a table split by rows
// over ranks, against one process holding the whole table, with the bytes
// the communicator moved.
// The ranks are threads of this process over an in-memory communicator
// (tests/thread_world.hpp), each with its own context, its own rows and an
// equal share of the host threads: what the ranks cost beyond the fit (the
// votes, the histogram lists, their merge) and what an MPI job would send,
// without a network. Prints one table per count table.
//
// Usage:
//   dirmn_bench_ranks [--threads N] [--ranks R[,R]] [--only NAME[,NAME]] [--quick]
//                     [--k K] [--em N]
//
//   --threads N   host threads in all (default: every hardware thread); with
//                 R ranks each context gets max(1, N / R)
//   --ranks       rank counts to run (default 1,2,4)
//   --only        microbiome, single-cell, text (shapes_tables.hpp; default all)
//   --quick       the shapes at a quarter of the rows and half the columns
//   --k K         the mixture's components (default 8; 0 skips the mixture)
//   --em N        the mixture's EM iterations (default 6)
//
// Rows: "whole" is one context over the whole table (its second run: the
// first warms the process's memory up); "R ranks" the same
// table split into R blocks of rows. fit: dirmn_fit from new counts objects
// (the histogram pass, the merge, the Newton fit); again: a second fit (the
// histograms cached: only the votes cross); loglik_sum: value and gradient
// at the fitted alpha. bytes: per rank, what it handed to allreduce and
// what was broadcast, over the fit from new counts. "same" says whether
// every rank's alpha is the whole table's bit for bit.
//
// The mixture table: dirmn_mixture_fit with k components, one start, N EM
// iterations; its progress callback times each iteration and reads the
// bytes moved so far, and a row gives one iteration's time and bytes (the
// k weighted histograms merged, the E step's sums, the votes) between the
// first callback and the last -- the start's sampling and the criteria
// left out. "loglik" is the fit's relative difference from the whole
// table's.
#include <dirmn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../tests/thread_world.hpp"
#include "shapes_tables.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Args {
  int threads = 0;
  std::vector<int> ranks{1, 2, 4};
  std::vector<std::string> only;
  bool quick = false;
  int k = 8;
  int em = 6;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const bool more = i + 1 < argc;
    if (s == "--threads" && more) {
      a.threads = std::atoi(argv[++i]);
    } else if (s == "--ranks" && more) {
      a.ranks.clear();
      for (const std::string& r : split(argv[++i])) a.ranks.push_back(std::max(1, std::atoi(r.c_str())));
    } else if (s == "--only" && more) {
      a.only = split(argv[++i]);
    } else if (s == "--quick") {
      a.quick = true;
    } else if (s == "--k" && more) {
      a.k = std::max(0, std::atoi(argv[++i]));
    } else if (s == "--em" && more) {
      a.em = std::max(2, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "unknown argument %s (see the usage at the top of bench/bench_ranks.cpp)\n", s.c_str());
      std::exit(2);
    }
  }
  if (a.threads <= 0) a.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return a;
}

// Rows [b0, b1) of c as a counts object on ctx.
dirmn_counts* block_of(dirmn_context* ctx, const shapes::Csr& c, int64_t b0, int64_t b1) {
  std::vector<int32_t> ptr(static_cast<size_t>(b1 - b0 + 1));
  for (int64_t b = b0; b <= b1; ++b) ptr[static_cast<size_t>(b - b0)] = c.ptr[static_cast<size_t>(b)] - c.ptr[static_cast<size_t>(b0)];
  const int32_t* idx = c.idx.data() + c.ptr[static_cast<size_t>(b0)];
  const int32_t* val = c.val.data() + c.ptr[static_cast<size_t>(b0)];
  dirmn_counts* out = nullptr;
  const dirmn_status s = dirmn_counts_create_sparse(ctx, &out, DIRMN_CSR, b1 - b0, c.cols, ptr.back(),
                                                    DIRMN_INDEX_INT32, ptr.data(), idx, DIRMN_INT32, val, nullptr);
  if (s != DIRMN_SUCCESS) {
    std::fprintf(stderr, "dirmn_counts_create_sparse: %s\n", dirmn_last_error(ctx));
    std::exit(1);
  }
  return out;
}

// Runs body(r, ctx, counts, attached) on n threads, rank r's context with
// its share of the threads and its block of c's rows attached to `world`.
void on_ranks(dirmn_world::World& world, const shapes::Csr& c, const Args& a,
              const std::function<void(int, dirmn_context*, dirmn_counts*, bool)>& body) {
  const int n = world.ranks();
  std::atomic<int> released{0};
  std::vector<dirmn_world::Rank> ranks(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    ranks[static_cast<size_t>(r)] = dirmn_world::Rank{&world, r, 0, &released};
    threads.emplace_back([&, r] {
      dirmn_context* rc = nullptr;
      dirmn_context_create(&rc, DIRMN_BACKEND_CPU, 0);
      dirmn_context_set_threads(rc, std::max(1, a.threads / n));
      dirmn_counts* mine = block_of(rc, c, c.rows * r / n, c.rows * (r + 1) / n);
      const dirmn_communicator_callbacks cb = dirmn_world::callbacks_of(&ranks[static_cast<size_t>(r)]);
      dirmn_communicator* comm = nullptr;
      dirmn_communicator_create(&comm, &cb);
      const bool attached = dirmn_counts_set_communicator(rc, mine, comm) == DIRMN_SUCCESS;
      dirmn_communicator_destroy(comm);
      body(r, rc, mine, attached);
      dirmn_counts_destroy(mine);
      dirmn_context_destroy(rc);
    });
  }
  for (std::thread& t : threads) t.join();
}

struct Timing {
  double fit = 0.0, again = 0.0, sum = 0.0;
  size_t fit_reduced = 0, fit_broadcast = 0;  // the world's counts after the first fit
  std::vector<double> alpha;
  bool ok = true;
};

// One rank's (or the whole table's) three calls, timed on this thread.
// The world's byte counts are rank 0's to read (`counter`).
Timing run_calls(dirmn_context* ctx, dirmn_counts* counts, int64_t cols, dirmn_world::World* world,
                 bool counter = false) {
  Timing t;
  t.alpha.assign(static_cast<size_t>(cols), 0.0);
  std::vector<double> gradient(static_cast<size_t>(cols));
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = t.alpha.data();
  if (world) world->wait();
  Clock::time_point t0 = Clock::now();
  t.ok = dirmn_fit(ctx, counts, nullptr, &r) == DIRMN_SUCCESS;
  t.fit = since(t0);
  if (counter) {
    // Every rank is past the fit's closing vote: the counts are the fit's.
    t.fit_reduced = world->reduced_bytes;
    t.fit_broadcast = world->broadcast_bytes;
  }
  if (world) world->wait();
  t0 = Clock::now();
  t.ok = t.ok && dirmn_fit(ctx, counts, nullptr, &r) == DIRMN_SUCCESS;
  t.again = since(t0);
  // The fit's zeros (columns without counts) are no valid alpha: a small
  // one stands in for them.
  std::vector<double> at = t.alpha;
  for (double& x : at) x = x > 0.0 ? x : 1e-3;
  double value = 0.0;
  if (world) world->wait();
  t0 = Clock::now();
  t.ok = t.ok && dirmn_loglik_sum(ctx, counts, at.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_FULL, &value,
                                  gradient.data(), nullptr, nullptr) == DIRMN_SUCCESS;
  t.sum = since(t0);
  if (!t.ok) std::fprintf(stderr, "a call failed: %s\n", dirmn_last_error(ctx));
  return t;
}

// A mixture's EM iterations as its progress callback sees them: the time
// and (rank 0) the bytes moved so far at each.
struct EmTiming {
  std::vector<double> at;
  std::vector<size_t> reduced, broadcast;
  double loglik = 0.0;
  bool ok = true;
  // Per iteration between the first callback and the last.
  double per_iteration() const {
    return at.size() > 1 ? (at.back() - at.front()) / static_cast<double>(at.size() - 1) : 0.0;
  }
  double bytes_per_iteration(const std::vector<size_t>& b) const {
    return b.size() > 1 ? static_cast<double>(b.back() - b.front()) / static_cast<double>(b.size() - 1) : 0.0;
  }
};

struct EmProbe {
  EmTiming* t;
  dirmn_world::World* world;  // counted where set (rank 0)
  Clock::time_point t0;
};

int em_progress(int, double, double, void* data) {
  auto* p = static_cast<EmProbe*>(data);
  p->t->at.push_back(since(p->t0));
  if (p->world) {
    p->t->reduced.push_back(p->world->reduced_bytes);
    p->t->broadcast.push_back(p->world->broadcast_bytes);
  }
  return 0;
}

// A k-component mixture, one start, `iterations` EM iterations (at most),
// each iteration's time and bytes (rank 0's callbacks' where counter).
EmTiming run_mixture(dirmn_context* ctx, dirmn_counts* counts, int k, int iterations,
                     dirmn_world::World* world, bool counter) {
  EmTiming t;
  EmProbe probe{&t, counter ? world : nullptr, Clock::now()};
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 1;
  o.max_iterations = iterations;
  o.progress = em_progress;
  o.progress_data = &probe;
  dirmn_mixture* m = nullptr;
  if (world) world->wait();
  t.ok = dirmn_mixture_fit(ctx, counts, k, &o, &m) == DIRMN_SUCCESS;
  if (!t.ok) {
    std::fprintf(stderr, "dirmn_mixture_fit: %s\n", dirmn_last_error(ctx));
    return t;
  }
  dirmn_mixture_info info;
  info.size = sizeof info;
  dirmn_mixture_get_info(m, &info);
  t.loglik = info.loglik;
  dirmn_mixture_destroy(m);
  return t;
}

std::string bytes_text(double b) {
  char s[32];
  if (b >= 1e6)
    std::snprintf(s, sizeof s, "%.2f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(s, sizeof s, "%.1f kB", b / 1e3);
  else
    std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

// The mixture's table for one count table: one EM iteration, whole and
// over each rank count.
void bench_mixture(const shapes::Csr& c, const Args& a) {
  std::printf("\nmixture, k = %d, one start, %d EM iterations: per iteration\n", a.k, a.em);
  std::printf("%-10s %12s %14s %14s %12s\n", "ranks", "iteration", "allreduced", "broadcast", "loglik");
  EmTiming w;
  std::thread([&] {
    dirmn_context* ctx = nullptr;
    dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0);
    dirmn_context_set_threads(ctx, a.threads);
    dirmn_counts* whole = block_of(ctx, c, 0, c.rows);
    w = run_mixture(ctx, whole, a.k, a.em, nullptr, false);
    dirmn_counts_destroy(whole);
    dirmn_context_destroy(ctx);
  }).join();
  std::printf("%-10s %9.1f ms %14s %14s %12s  %s\n", "whole", 1e3 * w.per_iteration(), "-", "-", "-",
              w.ok ? "" : "FAILED");
  for (int n : a.ranks) {
    dirmn_world::World world(n);
    std::vector<EmTiming> got(static_cast<size_t>(n));
    on_ranks(world, c, a, [&](int r, dirmn_context* rc, dirmn_counts* mine, bool attached) {
      if (r == 0) world.reduced_bytes = world.broadcast_bytes = 0;
      if (attached) got[static_cast<size_t>(r)] = run_mixture(rc, mine, a.k, a.em, &world, r == 0);
      else got[static_cast<size_t>(r)].ok = false;
    });
    bool ok = true;
    double per = 0.0;
    for (const EmTiming& t : got) {
      ok = ok && t.ok;
      per = std::max(per, t.per_iteration());
    }
    const EmTiming& g = got[0];
    char label[32], diff[32];
    std::snprintf(label, sizeof label, "%d rank%s", n, n == 1 ? "" : "s");
    std::snprintf(diff, sizeof diff, "%.1e", w.loglik != 0.0 ? std::fabs(g.loglik / w.loglik - 1.0) : 0.0);
    std::printf("%-10s %9.1f ms %14s %14s %12s  %s\n", label, 1e3 * per,
                bytes_text(g.bytes_per_iteration(g.reduced)).c_str(),
                bytes_text(g.bytes_per_iteration(g.broadcast)).c_str(), diff, ok ? "" : "FAILED");
  }
}

void bench_table(const shapes::Spec& spec, const Args& a) {
  const Clock::time_point g0 = Clock::now();
  const shapes::Csr c = shapes::generate(spec);
  std::printf("\n== %s: %lld x %lld, %lld nonzeros; generated (%.1f s)\n", spec.name,
              static_cast<long long>(c.rows), static_cast<long long>(c.cols), static_cast<long long>(c.nnz()),
              since(g0));
  std::printf("%-10s %10s %10s %12s %14s %14s  %s\n", "ranks", "fit", "again", "loglik_sum", "allreduced",
              "broadcast", "same");
  // On a thread of its own, as every rank is, and twice, the second
  // timed: a process's first pass faults in the pages its allocations
  // reuse later (here some 40 ms of the first fit), and every later row
  // would have them.
  Timing w;
  for (int pass = 0; pass < 2; ++pass)
    std::thread([&] {
      dirmn_context* ctx = nullptr;
      dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0);
      dirmn_context_set_threads(ctx, a.threads);
      dirmn_counts* whole = block_of(ctx, c, 0, c.rows);
      w = run_calls(ctx, whole, c.cols, nullptr);
      dirmn_counts_destroy(whole);
      dirmn_context_destroy(ctx);
    }).join();
  std::printf("%-10s %8.1f ms %8.1f ms %9.2f ms %14s %14s  %s\n", "whole", 1e3 * w.fit, 1e3 * w.again, 1e3 * w.sum,
              "-", "-", w.ok ? "" : "FAILED");
  for (int n : a.ranks) {
    dirmn_world::World world(n);
    std::vector<Timing> got(static_cast<size_t>(n));
    on_ranks(world, c, a, [&](int r, dirmn_context* rc, dirmn_counts* mine, bool attached) {
      if (r == 0) world.reduced_bytes = world.broadcast_bytes = 0;
      world.wait();
      got[static_cast<size_t>(r)] = attached ? run_calls(rc, mine, c.cols, &world, r == 0) : Timing{};
      got[static_cast<size_t>(r)].ok = got[static_cast<size_t>(r)].ok && attached;
    });
    bool same = true, ok = true;
    double fit = 0.0, again = 0.0, sum = 0.0;
    for (const Timing& t : got) {
      ok = ok && t.ok;
      same = same && t.alpha == w.alpha;
      fit = std::max(fit, t.fit);
      again = std::max(again, t.again);
      sum = std::max(sum, t.sum);
    }
    char label[32];
    std::snprintf(label, sizeof label, "%d rank%s", n, n == 1 ? "" : "s");
    std::printf("%-10s %8.1f ms %8.1f ms %9.2f ms %14s %14s  %s\n", label, 1e3 * fit, 1e3 * again, 1e3 * sum,
                bytes_text(static_cast<double>(got[0].fit_reduced)).c_str(),
                bytes_text(static_cast<double>(got[0].fit_broadcast)).c_str(),
                !ok ? "FAILED" : same ? "yes" : "NO");
  }
  if (a.k > 0) bench_mixture(c, a);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  std::printf("dirmn %s, cpu backend, %d host threads in all (a rank's context gets threads / ranks); "
              "ranks are threads over an in-memory communicator\n",
              dirmn_version_string(), a.threads);
  for (const shapes::Spec& spec : shapes::synthetic_specs(a.quick)) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), spec.name) == a.only.end()) continue;
    bench_table(spec, a);
  }
  return 0;
}
