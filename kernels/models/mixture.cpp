// mixture.cpp: the EM loop of a Dirichlet-multinomial mixture, one for every
// backend.
//
// One EM iteration is two passes over the table: the M step builds the k
// responsibility-weighted count histograms in one pass and refits each
// component by Newton's method on them (EmState::fit_components: the
// state's device, or the host's engine in host_fit.cpp), so every Hessian
// is diagonal plus rank one and nothing is O(V^2); the E step is one
// likelihood pass for all k components, turned into responsibilities by
// log-sum-exp. Where the responsibilities live -- host arrays or beside the
// table on a device -- is the EmState's business (stored_table.hpp); this
// loop only decides.
#include "mixture.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "../math/logsumexp.hpp"
#include "../math/random.hpp"
#include "criteria.hpp"
#include "fit.hpp"
#include "init.hpp"
#include "init_ranks.hpp"
#include "mixture_ranks.hpp"
#include "ranks.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

// A component whose weighted responsibilities sum below this times the
// mean row weight is empty.
constexpr double kEmptyComponent = 1e-8;
// The DMN objective weighs its prior by 2^-exponent of the weights' scale
// (weights.hpp): kept a normal double.
constexpr int kPriorExponentMax = 1000;
// Newton tolerance of the M-step fits (relative, as dirmn_fit's).
constexpr double kMStepTolerance = 1e-12;
constexpr int kMStepIterations = kFullMStepIterations;
// A generalized EM: a component with a warm start takes at most
// m_step_iterations safeguarded Newton steps per M step (each never lowers
// its objective, so neither does the iteration). Early iterations, whose
// targets move, stop paying for fits to 1e-12. The loop stops on its
// objective only after an M step in which every fit converged, or after one
// with the full budget (taken once the objective stops moving: a fit that
// crawls, as Minka's step can, does not keep the EM going).
// Every alpha of a component stays at least this (see the M step).
constexpr double kAlphaFloor = 1e-10;
// Under ML, a component in the multinomial limit takes its proportions at
// this precision.
constexpr double kLimitPrecision = 1e8;
// Starts grown from a k - 1 fit: its components of the largest weights
// split, this many of them.
constexpr int kGrownStarts = 3;

struct EmResult {
  std::vector<double> alpha, weights, resp;
  // The responsibilities the last M step fitted alpha and the weights to
  // (resp is one E step later): dmn's Hessian is evaluated with these.
  std::vector<double> fitted_resp;
  double loglik = 0.0, objective = 0.0, log_det = 0.0;
  int iterations = 0;
  bool converged = false;
};

MixtureResult failed(const BackendResult& r) { return {r, -1}; }

// w_bj = r_b z_bj (rows x k), and per component sum_b w_bj (over every
// rank's rows, voted).
BackendResult m_step_weights(const StoredTable& table, const std::vector<double>& z, const double* row_w,
                             int64_t rows, int k, std::vector<double>* w,
                             std::vector<double>* comp_weight) {
  w->resize(z.size());
  for (int64_t b = 0; b < rows; ++b)
    for (int j = 0; j < k; ++j)
      (*w)[static_cast<size_t>(b * k + j)] =
          math::m_step_weight(row_w ? row_w[b] : 1.0, z[static_cast<size_t>(b * k + j)]);
  comp_weight->assign(static_cast<size_t>(k), 0.0);
  for (int64_t b = 0; b < rows; ++b)
    for (int j = 0; j < k; ++j) (*comp_weight)[static_cast<size_t>(j)] += (*w)[static_cast<size_t>(b * k + j)];
  return table.collective != nullptr
             ? sum_over_ranks(*table.collective, {}, comp_weight->data(), comp_weight->size())
             : BackendResult{};
}

// Start s of a seed: its random stream, and under DIRMN_INIT_MIXED the
// initialisation whose turn it is.
math::RandomStream start_stream(uint64_t seed, int s) {
  return math::RandomStream{math::start_key(seed, static_cast<uint64_t>(s)), 0};
}

dirmn_mixture_init start_init(dirmn_mixture_init init, int s) {
  if (init != DIRMN_INIT_MIXED) return init;
  static const dirmn_mixture_init turns[] = {DIRMN_INIT_SOFT_KMEANS, DIRMN_INIT_KMEANSPP,
                                             DIRMN_INIT_KMEANS};
  return turns[s % 3];
}

// The starting responsibilities of random start s (rows x k) into *z.
BackendResult start_responsibilities(const StoredTable& table, const MixtureSettings& o, int s,
                                     std::vector<double>* z) {
  const HostTable& host = *table.host_rows();
  // One component: every responsibility is 1, and EM is a single fit (its
  // M step, then one likelihood pass for the criteria); no initialisation.
  if (o.k == 1) {
    z->assign(static_cast<size_t>(table.info->rows), 1.0);
    return {};
  }
  math::RandomStream rng = start_stream(o.seed, s);
  const dirmn_mixture_init init = start_init(o.init, s);
  std::vector<SparseRow> sample;
  if (table.collective == nullptr) {
    sample = init_sample(host, rng);
  } else {
    const BackendResult r = init_sample_over_ranks(*table.collective, {}, host, rng, &sample);
    if (!r.ok()) return r;
  }
  *z = init == DIRMN_INIT_SOFT_KMEANS
           ? soft_kmeans_responsibilities(host, sample, o.k, rng, *table.threads)
           : kmeans_responsibilities(host, sample, o.k, init, rng, *table.threads);
  return {};
}

// o.weights are the caller's times 2^-weight_exponent (weights.hpp); what
// run_em leaves in *out is on their scale. EM starts from z (rows x k), in
// *state, made here when it is null: the starts of one fit share a state,
// so a wide table's k x cols histograms are allocated once, not per start.
MixtureResult run_em(const StoredTable& table, const MixtureSettings& o, int weight_exponent,
                     const EmTotals& totals, std::vector<double> z,
                     std::unique_ptr<EmState>* state_io, EmResult* out) {
  const int k = o.k;
  const int64_t rows = table.info->rows, V = table.info->cols;
  const bool dmn = o.objective == DIRMN_MIXTURE_DMN;
  HostThreads& host_threads = *table.threads;
  std::vector<double> alpha(static_cast<size_t>(k * V), 1.0), log_pi(static_cast<size_t>(k));
  std::vector<double> w, lse, comp_weight, comp_z;
  std::vector<bool> have_alpha(static_cast<size_t>(k), false);
  std::vector<double> comp_log_det(static_cast<size_t>(k), 0.0);
  const double w_total = totals.weight;
  const double empty = kEmptyComponent * w_total / static_cast<double>(totals.rows);
  double prev = std::numeric_limits<double>::infinity();
  double loglik = 0.0, objective = 0.0;

  // Over ranks the state is in host memory, where its histograms are
  // summed.
  BackendResult r;
  if (!*state_io)
    r = table.collective != nullptr ? make_host_em_state(table, k, o.weights, state_io)
                                    : table.make_em_state(k, o.weights, state_io);
  if (!(r = ranks_agree(table, r)).ok()) return failed(r);
  EmState* const state = state_io->get();
  if (!(r = m_step_weights(table, z, o.weights, rows, k, &w, &comp_weight)).ok()) return failed(r);
  if (!(r = ranks_agree(table, state->begin(z.data(), w.data()))).ok()) return failed(r);
  // The state holds them now; the loop needs them again only to re-seed.
  std::vector<double>().swap(z);
  std::vector<double>().swap(w);

  // The M step's fits: where the state's histograms are, or on the host.
  EmFitSettings fit;
  fit.tolerance = kMStepTolerance;
  fit.full_iterations = kMStepIterations;
  if (dmn) {
    fit.prior_shape = kDmnShape;
    fit.prior_rate = kDmnRate;
  }
  fit.alpha_floor = kAlphaFloor;
  fit.limit_precision = kLimitPrecision;
  fit.weight_exponent = weight_exponent;
  EmFitOutcome fitted;
  std::vector<char> want(static_cast<size_t>(k)), warm(static_cast<size_t>(k)), owned(static_cast<size_t>(k), 1);
  bool full_m_step = false;
  int it = 0;
  for (;; ++it) {
    // M step: weighted histograms for every component in one pass, then a
    // Newton fit of each alpha_k, warm-started from the last one.
    for (int j = 0; j < k; ++j) {
      want[static_cast<size_t>(j)] = comp_weight[static_cast<size_t>(j)] > empty;
      warm[static_cast<size_t>(j)] = have_alpha[static_cast<size_t>(j)];
    }
    fit.warm_iterations =
        full_m_step ? kMStepIterations : std::min(o.m_step_iterations, kMStepIterations);
    r = state->histograms(o.interrupt);
    if (table.collective != nullptr) {
      // Over ranks each component is merged and fitted by its owner.
      for (int j = 0; j < k; ++j) {
        owned[static_cast<size_t>(j)] = owns_component(*table.collective, j);
        if (!owned[static_cast<size_t>(j)]) want[static_cast<size_t>(j)] = 0;
      }
      r = merge_over_ranks(*table.collective, r, state->host_histograms(), V, owned.data());
    }
    if (!r.ok()) return failed(r);
    r = state->fit_components(fit, want.data(), warm.data(), host_threads, alpha.data(), &fitted);
    if (table.collective != nullptr) r = share_component_fits(*table.collective, r, k, V, alpha.data(), &fitted);
    if (!r.ok()) return failed(r);
    if (fitted.host_fallback) table.note_fallback(Step::kMixtureFits);
    double log_prior = 0.0;
    bool m_converged = true;
    for (int j = 0; j < k; ++j) {
      const size_t jj = static_cast<size_t>(j);
      log_pi[jj] = std::log(std::max(comp_weight[jj] / w_total, std::numeric_limits<double>::min()));
      if (fitted.status[jj] != EmFitOutcome::kFitted) continue;
      if (!fitted.converged[jj]) m_converged = false;
      have_alpha[jj] = true;
      log_prior += fitted.log_prior[jj];
      comp_log_det[jj] = fitted.log_det[jj];
    }
    // E step: all k log-likelihoods in one pass.
    EmStep st;
    r = state->e_step(alpha.data(), log_pi.data(), &st, o.interrupt);
    if (table.collective != nullptr) r = reduce_e_step(*table.collective, r, &st);
    if (!r.ok()) return failed(r);
    loglik = st.loglik;
    comp_weight = std::move(st.w_sum);
    comp_z = std::move(st.z_sum);
    objective = -loglik - log_prior;
    // A rank cancelled cancels every rank (comm.hpp's agree).
    const bool cancel =
        (o.progress &&
         o.progress(it + 1, std::ldexp(loglik, weight_exponent), st.max_change, o.progress_data) != 0) ||
        o.interrupt.poll();
    r = ranks_agree(table, cancel ? BackendResult{DIRMN_ERROR_CANCELLED, "", 0} : BackendResult{});
    if (r.status == DIRMN_ERROR_CANCELLED) return {r, it + 1};
    if (!r.ok()) return failed(r);
    // Empty components restart at the worst-explained row (every empty one
    // at the same row: the last of them keeps it).
    bool reseeded = false;
    int64_t worst = -1;  // this rank's row, if it holds it
    for (int j = 0; j < k; ++j) {
      if (comp_z[static_cast<size_t>(j)] > kEmptyComponent || totals.rows < 2) continue;
      if (!reseeded) {
        z.resize(static_cast<size_t>(rows * k));
        lse.resize(static_cast<size_t>(rows));
        r = state->download(z.data(), nullptr, lse.data());
        if (!(r = worst_row(table, r, totals, lse.data(), &worst)).ok()) return failed(r);
      }
      reseeded = true;
      if (worst >= 0)
        for (int i = 0; i < k; ++i) z[static_cast<size_t>(worst * k + i)] = i == j ? 1.0 : 0.0;
      have_alpha[static_cast<size_t>(j)] = false;
      prev = std::numeric_limits<double>::infinity();
    }
    if (reseeded) {
      if (!(r = m_step_weights(table, z, o.weights, rows, k, &w, &comp_weight)).ok()) return failed(r);
      if (!(r = ranks_agree(table, state->begin(z.data(), w.data()))).ok()) return failed(r);
    }
    const bool flat = std::fabs(prev - objective) <= o.tolerance * std::fabs(objective);
    if (k == 1 || (flat && (m_converged || full_m_step))) {
      out->converged = true;
      break;
    }
    full_m_step = flat;
    if (it + 1 >= o.max_iterations) break;
    prev = objective;
  }
  z.resize(static_cast<size_t>(rows * k));
  std::vector<double> z_before(z.size());
  if (!(r = ranks_agree(table, state->download(z.data(), z_before.data(), nullptr))).ok()) return failed(r);
  out->alpha = std::move(alpha);
  out->weights.resize(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) out->weights[static_cast<size_t>(j)] = std::exp(log_pi[static_cast<size_t>(j)]);
  out->resp = std::move(z);
  out->fitted_resp = std::move(z_before);
  out->loglik = loglik;
  out->objective = objective;
  out->log_det = 0.0;
  for (double d : comp_log_det) out->log_det += d;
  out->iterations = it + 1;
  return {};
}

// Marks the columns row b has counts in.
void mark_columns(const HostTable& t, int64_t b, std::vector<char>* seen) {
  with_value_type(t.vtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(t.values.data());
    if (t.sparse) {
      for (int64_t i = t.row_ptr[static_cast<size_t>(b)]; i < t.row_ptr[static_cast<size_t>(b) + 1]; ++i)
        if (x[i] != 0) (*seen)[static_cast<size_t>(t.col_idx[static_cast<size_t>(i)])] = 1;
    } else {
      for (int64_t v = 0; v < t.cols; ++v)
        if (x[b * t.cols + v] != 0) (*seen)[static_cast<size_t>(v)] = 1;
    }
  });
}

// The library's one order of components, the same from every binding:
// decreasing mixing weight, ties in the order EM had them.
void order_components(int k, int64_t V, int64_t rows, EmResult* r) {
  std::vector<int> order(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) order[static_cast<size_t>(j)] = j;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return r->weights[static_cast<size_t>(a)] > r->weights[static_cast<size_t>(b)];
  });
  std::vector<double> alpha(r->alpha.size()), weights(r->weights.size()), resp(r->resp.size());
  for (int j = 0; j < k; ++j) {
    const int from = order[static_cast<size_t>(j)];
    weights[static_cast<size_t>(j)] = r->weights[static_cast<size_t>(from)];
    std::copy(r->alpha.begin() + from * V, r->alpha.begin() + (from + 1) * V, alpha.begin() + j * V);
    for (int64_t b = 0; b < rows; ++b)
      resp[static_cast<size_t>(b * k + j)] = r->resp[static_cast<size_t>(b * k + from)];
  }
  r->alpha.swap(alpha);
  r->weights.swap(weights);
  r->resp.swap(resp);
}

}  // namespace

namespace {

// fit_mixture's body. Over ranks every failure is voted before it returns
// (each phase opens with a vote); an allocation failure thrown between
// phases is voted by fit_mixture.
MixtureResult fit(const StoredTable& table, const MixtureSettings& o, MixtureFit* out) {
  const int k = o.k;
  const bool dmn = o.objective == DIRMN_MIXTURE_DMN;
  const int max_exponent = dmn ? kPriorExponentMax : 1 << 20;
  // Over ranks the weights' scale is the largest of every rank's.
  double top = 0.0;
  BackendResult r = agreed_weight_top(table, o.weights, &top);
  if (!r.ok()) return failed(r);
  const ScaledWeights sw(o.weights, table.info->rows, max_exponent, top);
  MixtureSettings scaled = o;
  scaled.weights = sw.data();
  EmTotals totals;
  if (!(r = em_totals(table, {}, sw.data(), &totals)).ok()) return failed(r);
  EmResult best;
  int best_start = -1;
  std::unique_ptr<EmState> state;
  const auto run_start = [&](std::vector<double> z, int s) {
    EmResult e;
    const MixtureResult m = run_em(table, scaled, sw.exponent(), totals, std::move(z), &state, &e);
    if (m.ok() && (best_start < 0 || e.objective < best.objective)) {
      best = std::move(e);
      best_start = s;
    }
    return m;
  };
  // With one component every start is the same fit: run it once.
  const int starts = k == 1 ? 1 : o.starts;
  for (int s = 0; s < starts; ++s) {
    std::vector<double> z;
    if (!(r = start_responsibilities(table, o, s, &z)).ok()) return failed(r);
    const MixtureResult m = run_start(std::move(z), s);
    if (!m.ok()) return m;
  }
  const GrowFrom* g = k > 1 ? o.grow_from : nullptr;
  if (g != nullptr) {
    // The k - 1 fit's components of the largest weights, each split in two
    // (starts number `starts` on).
    std::vector<int> by_weight(static_cast<size_t>(g->k));
    for (int i = 0; i < g->k; ++i) by_weight[static_cast<size_t>(i)] = i;
    std::stable_sort(by_weight.begin(), by_weight.end(),
                     [&](int a, int b) { return g->weights[a] > g->weights[b]; });
    const int grown = std::min(g->k, kGrownStarts);
    const HostTable& host = *table.host_rows();
    MixtureResult m;
    for (int i = 0; i < grown; ++i) {
      const int j = by_weight[static_cast<size_t>(i)];
      SplitMembers members;
      if (table.collective == nullptr) {
        members = split_members(host, g->k, g->resp, j, o.weights);
      } else if (!(r = split_members_over_ranks(*table.collective, {}, host, g->k, g->resp, j,
                                                o.weights, &members))
                      .ok()) {
        return failed(r);
      }
      m = run_start(split_responsibilities(host, g->k, g->resp, j, members, *table.threads), starts + i);
      if (!m.ok()) return m;
    }
    const int j = by_weight[0];
    // Under ML a k-component mixture can always do as well as the k - 1
    // fit: that fit with the same component in two identical halves, from
    // which EM does not move. Where no start reached the k - 1 fit's
    // log-likelihood, that one (start number starts + 1) is the answer: the
    // data support no more components.
    if (!dmn && sw.unscale(-best.objective) < g->loglik) {
      const int64_t rows = table.info->rows;
      std::vector<double> z(static_cast<size_t>(rows * k));
      for (int64_t b = 0; b < rows; ++b) {
        for (int i = 0; i < g->k; ++i) z[static_cast<size_t>(b * k + i)] = g->resp[b * g->k + i];
        z[static_cast<size_t>(b * k + j)] *= 0.5;
        z[static_cast<size_t>(b * k + g->k)] = z[static_cast<size_t>(b * k + j)];
      }
      if (!(m = run_start(std::move(z), starts + grown)).ok()) return m;
    }
  }
  state.reset();  // a device state's workspace goes before dmn_log_det's
  // dmn's Laplace value (k = 1: the exact Hessian, which the M step's fit
  // already gave).
  if (dmn && k > 1 &&
      !(r = dmn_log_det(table, k, sw, o.interrupt, best.alpha, best.fitted_resp, &best.log_det)).ok())
    return failed(r);
  const int64_t rows = table.info->rows, V = table.info->cols;
  best.loglik = sw.unscale(best.loglik);
  best.objective = sw.unscale(best.objective);
  // The one rule of dirmn_fit_result: n the weight of the rows with
  // counts; P the fitted alphas, every column under dmn's prior, else those
  // with counts in rows of positive weight (over every rank's rows).
  const HostTable& host = *table.host_rows();
  std::vector<char> seen(static_cast<size_t>(V), 0);
  double n_scaled = 0.0;
  for (int64_t b = 0; b < rows; ++b) {
    const double wb = sw.data() ? sw.data()[b] : 1.0;
    if (host.row_total[static_cast<size_t>(b)] > 0.0 && wb > 0.0) {
      n_scaled += wb;
      if (!dmn) mark_columns(host, b, &seen);
    }
  }
  int64_t fitted_cols = dmn ? V : std::count(seen.begin(), seen.end(), 1);
  if (table.collective != nullptr) {
    if (!(r = sum_over_ranks(*table.collective, {}, &n_scaled, 1)).ok()) return failed(r);
    if (!dmn) {
      std::vector<int64_t> any(seen.begin(), seen.end());
      if (!(r = sum_over_ranks(*table.collective, {}, any.data(), any.size())).ok()) return failed(r);
      fitted_cols = std::count_if(any.begin(), any.end(), [](int64_t x) { return x > 0; });
    }
  }
  MixtureCriteriaInput c;
  c.objective_kind = o.objective;
  c.log_n_rows = std::log(n_scaled) + sw.log_scale();
  c.parameters = static_cast<int64_t>(k) * fitted_cols + k - 1;
  c.loglik = best.loglik;
  c.objective = best.objective;
  c.log_det = best.log_det;
  mixture_criteria(c, &out->aic, &out->bic, &out->laplace);
  out->parameters = c.parameters;
  out->observations = sw.unscale(n_scaled);
  order_components(k, V, rows, &best);
  // Every rank writes, or none does; nothing allocates after this vote.
  r = BackendResult{};
  if (!std::isfinite(best.loglik) || !std::isfinite(best.objective)) r = {DIRMN_ERROR_OVERFLOW, "", 0};
  if (!(r = ranks_agree(table, r)).ok()) return failed(r);
  out->alpha = std::move(best.alpha);
  out->weights = std::move(best.weights);
  out->resp = std::move(best.resp);
  out->loglik = best.loglik;
  out->objective = best.objective;
  out->iterations = best.iterations;
  out->converged = best.converged;
  out->start = best_start;
  return {};
}

}  // namespace

MixtureResult fit_mixture(const StoredTable& table, const MixtureSettings& o, MixtureFit* out) {
  if (table.collective == nullptr) return fit(table, o, out);
  try {
    return fit(table, o, out);
  } catch (const std::bad_alloc&) {
    return failed(vote_out_of_memory(table, "host memory for the mixture's EM"));
  }
}

BackendResult assign_mixture(const StoredTable& table, int k, const double* alpha,
                             const double* weights, const Interrupt& interrupt, double* z) {
  const int64_t rows = table.info->rows;
  std::vector<double> L(static_cast<size_t>(rows * k)), lse(static_cast<size_t>(rows));
  std::vector<double> log_pi(static_cast<size_t>(k));
  const BackendResult r = table.full_loglik(alpha, k, L.data(), interrupt);
  if (!r.ok()) return r;
  for (int j = 0; j < k; ++j)
    log_pi[static_cast<size_t>(j)] = std::log(std::max(weights[j], std::numeric_limits<double>::min()));
  math::responsibilities(L.data(), log_pi.data(), rows, k, nullptr, z, lse.data());
  return {};
}

}  // namespace dirmn
