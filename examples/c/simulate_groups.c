/* simulate_groups.c: draw a two-group table from Dirichlet-multinomials,
 * test whether one DM fits both groups (the likelihood ratio and HMP's
 * Xmcupo, with a parametric bootstrap), and size a study by simulation.
 * Usage: dirmn_example_simulate [backend: auto|cpu|cuda]
 *
 * The two groups share a composition but for two taxa: half of the first's
 * share moves to the second, the kind of shift a microbiome study is sized
 * for. The LRT's chi-square reference is liberal with few samples a group
 * (its power at 5 a group is mostly its size): the bootstrap p-value is the
 * one to report there. */
#include <dirmn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAXA 12
#define ROWS 40

static int check(dirmn_context* ctx, dirmn_status s, const char* what) {
  if (s == DIRMN_SUCCESS) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, dirmn_status_name(s), dirmn_last_error(ctx));
  return 1;
}

int main(int argc, char** argv) {
  dirmn_backend backend = DIRMN_BACKEND_AUTO;
  if (argc > 1 && strcmp(argv[1], "cpu") == 0) backend = DIRMN_BACKEND_CPU;
  if (argc > 1 && strcmp(argv[1], "cuda") == 0) backend = DIRMN_BACKEND_CUDA;
  dirmn_context* ctx = NULL;
  if (check(NULL, dirmn_context_create(&ctx, backend, 0), "context")) return 1;

  /* Two groups' alphas (precision about 60): group 1 moves half of taxon
     0's share to taxon 1. */
  double alpha[2 * TAXA];
  for (int v = 0; v < TAXA; ++v) alpha[v] = alpha[TAXA + v] = 60.0 / (v + 2) / 3.0;
  alpha[TAXA + 0] = alpha[0] * 0.5;
  alpha[TAXA + 1] = alpha[1] + alpha[0] * 0.5;
  int64_t component[ROWS], sizes[ROWS], group[ROWS];
  for (int b = 0; b < ROWS; ++b) {
    component[b] = group[b] = b < ROWS / 2 ? 0 : 1;
    sizes[b] = 2000 + 100 * (b % 7); /* reads per sample */
  }

  /* Draw the table: row b from its group's DM, 2000-2600 reads. */
  dirmn_sample_options so;
  dirmn_sample_options_init(&so);
  so.seed = 2026;
  so.component = component;
  dirmn_counts* counts = NULL;
  if (check(ctx, dirmn_sample(ctx, &counts, ROWS, TAXA, 2, alpha, TAXA, 1, DIRMN_PARAM_ALPHA, sizes, 1, &so),
            "dirmn_sample"))
    return 1;
  int32_t table[ROWS * TAXA];
  if (check(ctx, dirmn_counts_copy_dense(ctx, counts, DIRMN_INT32, table, TAXA, 1), "copy")) return 1;
  printf("first rows of the drawn %d x %d table:\n", ROWS, TAXA);
  for (int b = 0; b < 3; ++b) {
    for (int v = 0; v < TAXA; ++v) printf(" %5d", table[b * TAXA + v]);
    printf("\n");
  }
  double mean[TAXA], variance[TAXA];
  if (check(ctx, dirmn_moments(ctx, TAXA, alpha, 1, DIRMN_PARAM_ALPHA, 2000.0, mean, variance, NULL, 0),
            "dirmn_moments"))
    return 1;
  printf("group 0, 2000 reads: taxon 0 mean %.1f, sd %.1f\n", mean[0], variance[0] > 0 ? sqrt(variance[0]) : 0.0);

  /* Test the groups: the likelihood ratio, then Xmcupo, each with a
     199-table parametric bootstrap. */
  for (int s = 0; s < 2; ++s) {
    dirmn_group_test_options go;
    dirmn_group_test_options_init(&go);
    go.statistic = s == 0 ? DIRMN_GROUP_LRT : DIRMN_GROUP_XMCUPO;
    go.bootstrap = 199;
    go.seed = 7;
    dirmn_group_test_result r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    if (check(ctx, dirmn_test_groups(ctx, counts, group, 2, &go, &r), "dirmn_test_groups")) return 1;
    printf("%-6s statistic %8.3f on %2.0f df: chi-square p %.3g, bootstrap p %.3f\n", s == 0 ? "LRT" : "Xmcupo",
           r.statistic, r.df, r.p_value, r.p_value_bootstrap);
  }

  /* Size a study: the likelihood ratio's power for 5 to 40 samples a group. */
  printf("power at level 0.05 (500 simulated studies each):\n");
  for (int n = 5; n <= 40; n *= 2) {
    int64_t rows_per_group[2] = {n, n};
    int64_t study_sizes[80];
    for (int b = 0; b < 2 * n; ++b) study_sizes[b] = 2000;
    dirmn_power_options po;
    dirmn_power_options_init(&po);
    po.tables = 500;
    po.seed = 1;
    dirmn_power_result p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    if (check(ctx, dirmn_power_groups(ctx, 2, TAXA, alpha, TAXA, 1, DIRMN_PARAM_ALPHA, rows_per_group, study_sizes,
                                      &po, &p),
              "dirmn_power_groups"))
      return 1;
    printf("  %2d samples a group: power %.3f (se %.3f)\n", n, p.power, p.std_error);
  }
  dirmn_counts_destroy(counts);
  dirmn_context_destroy(ctx);
  return 0;
}
