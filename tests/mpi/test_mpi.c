/* test_mpi.c: the shared-alpha estimators over MPI ranks (libdirmn_mpi),
 * run by ctest under mpiexec at 1-4 ranks. Each rank makes its block of
 * rows of one seeded table and fits it over the communicator; it also fits
 * the whole table alone, and the two must agree: alpha and standard errors
 * bit for bit, the log pmf to 1e-14, dirmn_loglik_sum's gradient to 1e-13.
 * Then rank 1 (or rank 0 alone) passes a negative weight: it must get its
 * own INVALID_PARAMETER, every other rank DIRMN_ERROR_COMMUNICATION naming
 * it, and the next collective call must work again. Then mixtures of
 * k = 1..3 and a regression over the ranks must be the whole table's.
 * Last, each rank draws
 * its block of one random table (first_row): its rows must be the whole
 * draw's, and the blocks' fit the whole draw's, bit for bit. Exit 0 on every check
 * passing, 1 otherwise, a line per failure on stderr. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirmn_mpi.h"

enum { ROWS = 97, COLS = 31 };

static int failures = 0;
static int me = 0;

#define EXPECT(cond, ...)                               \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "rank %d: %s: ", me, #cond);      \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n");                            \
      ++failures;                                       \
    }                                                   \
  } while (0)

/* splitmix64: the table's counts, the same on every rank. */
static uint64_t next(uint64_t* s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* Overdispersed counts: a row's column weights drawn around a shared
   profile, counts up to a few hundred, a deep column every fifth row. */
static void make_table(double* x) {
  uint64_t s = 20261207u;
  for (int b = 0; b < ROWS; ++b)
    for (int v = 0; v < COLS; ++v) {
      const double u = (double)(next(&s) >> 11) / 9007199254740992.0;
      const double profile = 40.0 / (1.0 + v);
      x[b * COLS + v] = floor(profile * u * u * 4.0) + (v == 0 && b % 5 == 0 ? 3000.0 + b : 0.0);
    }
}

static int first_row(int r, int n) { return (int)((int64_t)ROWS * r / n); }

static dirmn_status fit(dirmn_context* ctx, dirmn_counts* c, const double* w, double* alpha, double* se,
                        dirmn_fit_result* out) {
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.weights = w;
  memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  out->alpha = alpha;
  out->std_error_alpha = se;
  return dirmn_fit(ctx, c, &o, out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  static double x[ROWS * COLS];
  make_table(x);
  dirmn_context* ctx = NULL;
  dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0);

  /* The whole table, alone. */
  dirmn_counts* whole = NULL;
  dirmn_counts_create_dense(ctx, &whole, ROWS, COLS, DIRMN_FLOAT64, x, COLS, 1, NULL);
  double a_whole[COLS], se_whole[COLS], g_whole[COLS], ll_whole = 0.0;
  dirmn_fit_result f_whole;
  EXPECT(fit(ctx, whole, NULL, a_whole, se_whole, &f_whole) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  EXPECT(dirmn_loglik_sum(ctx, whole, a_whole, 1, DIRMN_PARAM_ALPHA, NULL, DIRMN_FULL, &ll_whole, g_whole,
                          NULL, NULL) == DIRMN_SUCCESS,
         "%s", dirmn_last_error(ctx));

  /* This rank's rows over the communicator. */
  const int b0 = first_row(me, n), b1 = first_row(me + 1, n);
  dirmn_counts* mine = NULL;
  EXPECT(dirmn_counts_create_dense(ctx, &mine, b1 - b0, COLS, DIRMN_FLOAT64, x + b0 * COLS, COLS, 1, NULL) ==
             DIRMN_SUCCESS,
         "%s", dirmn_last_error(ctx));
  dirmn_communicator* comm = NULL;
  EXPECT(dirmn_mpi_communicator_create(MPI_COMM_WORLD, &comm) == DIRMN_SUCCESS, "%s", dirmn_mpi_last_error());
  int rank = -1, ranks = -1;
  dirmn_communicator_get_rank(comm, &rank, &ranks);
  EXPECT(rank == me && ranks == n, "rank %d of %d", rank, ranks);
  EXPECT(dirmn_counts_set_communicator(ctx, mine, comm) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  dirmn_communicator_destroy(comm); /* the counts keep it */

  double a[COLS], se[COLS], g[COLS], ll = 0.0;
  dirmn_fit_result f;
  EXPECT(fit(ctx, mine, NULL, a, se, &f) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  EXPECT(memcmp(a, a_whole, sizeof a) == 0, "alpha differs from the whole table's");
  EXPECT(memcmp(se, se_whole, sizeof se) == 0, "standard errors differ from the whole table's");
  EXPECT(f.iterations == f_whole.iterations, "%d iterations, whole %d", f.iterations, f_whole.iterations);
  EXPECT(fabs(f.loglik - f_whole.loglik) <= 1e-14 * fabs(f_whole.loglik), "loglik %.17g, whole %.17g",
         f.loglik, f_whole.loglik);
  EXPECT(dirmn_loglik_sum(ctx, mine, a, 1, DIRMN_PARAM_ALPHA, NULL, DIRMN_FULL, &ll, g, NULL, NULL) ==
             DIRMN_SUCCESS,
         "%s", dirmn_last_error(ctx));
  EXPECT(fabs(ll - ll_whole) <= 1e-14 * fabs(ll_whole), "loglik_sum %.17g, whole %.17g", ll, ll_whole);
  for (int v = 0; v < COLS; ++v)
    EXPECT(fabs(g[v] - g_whole[v]) <= 1e-13 * (1.0 + fabs(g_whole[v])), "gradient %d: %.17g, whole %.17g", v,
           g[v], g_whole[v]);

  /* One rank's bad weight fails every rank; nothing is written. */
  const int bad = n > 1 ? 1 : 0;
  double w[ROWS];
  for (int b = 0; b < b1 - b0; ++b) w[b] = 1.0;
  if (me == bad) w[0] = -1.0;
  double untouched[COLS];
  for (int v = 0; v < COLS; ++v) untouched[v] = -7.0;
  const dirmn_status s = fit(ctx, mine, w, untouched, NULL, &f);
  if (me == bad) {
    EXPECT(s == DIRMN_ERROR_INVALID_PARAMETER, "status %s: %s", dirmn_status_name(s), dirmn_last_error(ctx));
  } else {
    EXPECT(s == DIRMN_ERROR_COMMUNICATION, "status %s", dirmn_status_name(s));
    EXPECT(strstr(dirmn_last_error(ctx), "rank 1's part") != NULL, "message: %s", dirmn_last_error(ctx));
  }
  for (int v = 0; v < COLS; ++v) EXPECT(untouched[v] == -7.0, "alpha written after a failure");
  EXPECT(fit(ctx, mine, NULL, a, se, &f) == DIRMN_SUCCESS, "again: %s", dirmn_last_error(ctx));

  /* Mixtures of k = 1..3 over the ranks: the whole table's, to the
     criteria's rounding and the fits' accuracy (test_communicator_mixture.cpp
     says why not bit for bit), responsibilities for this rank's rows. */
  {
    enum { KMAX = 3 };
    dirmn_mixture_options mo;
    dirmn_mixture_options_init(&mo);
    mo.starts = 2;
    dirmn_mixture *mw[KMAX] = {NULL}, *mm[KMAX] = {NULL};
    EXPECT(dirmn_mixture_fit_range(ctx, whole, 1, KMAX, &mo, mw) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
    EXPECT(dirmn_mixture_fit_range(ctx, mine, 1, KMAX, &mo, mm) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
    for (int i = 0; i < KMAX && mw[i] && mm[i]; ++i) {
      const int k = i + 1;
      dirmn_mixture_info iw, im;
      iw.size = im.size = sizeof iw;
      dirmn_mixture_get_info(mw[i], &iw);
      dirmn_mixture_get_info(mm[i], &im);
      EXPECT(fabs(im.loglik - iw.loglik) <= 1e-9 * fabs(iw.loglik), "k %d loglik %.17g, whole %.17g", k,
             im.loglik, iw.loglik);
      EXPECT(fabs(im.bic - iw.bic) <= 1e-9 * fabs(iw.bic), "k %d BIC %.17g, whole %.17g", k, im.bic, iw.bic);
      EXPECT(im.parameters == iw.parameters && im.rows == b1 - b0, "k %d parameters or rows", k);
      static double zw[ROWS * KMAX], zm[ROWS * KMAX];
      double pw[KMAX], pm[KMAX];
      dirmn_mixture_get_params(mw[i], NULL, 0, 0, pw);
      dirmn_mixture_get_params(mm[i], NULL, 0, 0, pm);
      for (int j = 0; j < k; ++j) EXPECT(fabs(pm[j] - pw[j]) <= 1e-5 * pw[j], "k %d weight %d", k, j);
      dirmn_mixture_get_responsibilities(mw[i], zw, k, 1);
      dirmn_mixture_get_responsibilities(mm[i], zm, k, 1);
      for (int b = 0; b < (b1 - b0) * k; ++b)
        EXPECT(fabs(zm[b] - zw[b0 * k + b]) <= 1e-5, "k %d responsibility %d", k, b);
    }
    for (int i = 0; i < KMAX; ++i) {
      dirmn_mixture_destroy(mw[i]);
      dirmn_mixture_destroy(mm[i]);
    }
  }

  /* A log-linear regression on an intercept and a covariate, over the
     ranks: the whole table's, to the Newton solves' rounding. */
  {
    static double design[ROWS * 2];
    for (int b = 0; b < ROWS; ++b) {
      design[2 * b] = 1.0;
      design[2 * b + 1] = (double)(b % 5) / 4.0 - 0.5;
    }
    dirmn_reg *rw = NULL, *rm = NULL;
    EXPECT(dirmn_reg_fit(ctx, whole, design, ROWS, 2, 2, 1, NULL, &rw) == DIRMN_SUCCESS, "%s",
           dirmn_last_error(ctx));
    EXPECT(dirmn_reg_fit(ctx, mine, design + 2 * b0, b1 - b0, 2, 2, 1, NULL, &rm) == DIRMN_SUCCESS, "%s",
           dirmn_last_error(ctx));
    if (rw && rm) {
      dirmn_reg_info iw, im;
      iw.size = im.size = sizeof iw;
      dirmn_reg_get_info(rw, &iw);
      dirmn_reg_get_info(rm, &im);
      EXPECT(fabs(im.loglik - iw.loglik) <= 1e-12 * fabs(iw.loglik), "regression loglik %.17g, whole %.17g",
             im.loglik, iw.loglik);
      static double cw[2 * COLS], cm[2 * COLS];
      dirmn_reg_get_coef(rw, cw, COLS, 1);
      dirmn_reg_get_coef(rm, cm, COLS, 1);
      for (int i = 0; i < 2 * COLS; ++i)
        EXPECT(fabs(cm[i] - cw[i]) <= 1e-7 * fabs(cw[i]) + 1e-9, "coefficient %d: %.17g, whole %.17g", i, cm[i],
               cw[i]);
    }
    dirmn_reg_destroy(rw);
    dirmn_reg_destroy(rm);
  }

  /* Each rank draws its own block of one random table (first_row): its
     rows are the whole draw's, and the blocks fit as the whole draw does. */
  enum { DRAWN = 240 };
  const int d0 = DRAWN * me / n, d1 = DRAWN * (me + 1) / n;
  const int64_t size = 500;
  dirmn_sample_options so;
  dirmn_sample_options_init(&so);
  so.seed = 4242;
  dirmn_counts *drawn_all = NULL, *drawn_mine = NULL;
  EXPECT(dirmn_sample(ctx, &drawn_all, DRAWN, COLS, 1, a_whole, COLS, 1, DIRMN_PARAM_ALPHA, &size, 0, &so) ==
             DIRMN_SUCCESS,
         "%s", dirmn_last_error(ctx));
  so.first_row = d0;
  EXPECT(dirmn_sample(ctx, &drawn_mine, d1 - d0, COLS, 1, a_whole, COLS, 1, DIRMN_PARAM_ALPHA, &size, 0, &so) ==
             DIRMN_SUCCESS,
         "%s", dirmn_last_error(ctx));
  static int64_t all_rows[DRAWN * COLS], my_rows[DRAWN * COLS];
  EXPECT(dirmn_counts_copy_dense(ctx, drawn_all, DIRMN_INT64, all_rows, COLS, 1) == DIRMN_SUCCESS, "%s",
         dirmn_last_error(ctx));
  EXPECT(dirmn_counts_copy_dense(ctx, drawn_mine, DIRMN_INT64, my_rows, COLS, 1) == DIRMN_SUCCESS, "%s",
         dirmn_last_error(ctx));
  EXPECT(memcmp(my_rows, all_rows + d0 * COLS, sizeof(int64_t) * (size_t)((d1 - d0) * COLS)) == 0,
         "drawn rows %d..%d differ from the whole draw's", d0, d1);
  EXPECT(dirmn_mpi_communicator_create(MPI_COMM_WORLD, &comm) == DIRMN_SUCCESS, "%s", dirmn_mpi_last_error());
  EXPECT(dirmn_counts_set_communicator(ctx, drawn_mine, comm) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  dirmn_communicator_destroy(comm);
  double ad[COLS], ad_whole[COLS];
  EXPECT(fit(ctx, drawn_all, NULL, ad_whole, NULL, &f) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  EXPECT(fit(ctx, drawn_mine, NULL, ad, NULL, &f) == DIRMN_SUCCESS, "%s", dirmn_last_error(ctx));
  EXPECT(memcmp(ad, ad_whole, sizeof ad) == 0, "the drawn blocks' alpha differs from the whole draw's");
  dirmn_counts_destroy(drawn_mine);
  dirmn_counts_destroy(drawn_all);

  dirmn_counts_destroy(mine);
  dirmn_counts_destroy(whole);
  dirmn_context_destroy(ctx);
  if (failures == 0) printf("rank %d of %d: every check passed\n", me, n);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
