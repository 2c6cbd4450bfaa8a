/* bci_report.c: load a real count table, evaluate the Dirichlet-multinomial
 * log-likelihood of every row under a fitted-looking alpha, and print a
 * short report. Usage: dirmn_example [table.csv] [backend: auto|cpu|cuda]
 *
 * The table is a CSV with a header row and the row name first on each line,
 * like examples/data/bci.csv (vegan's BCI tree counts, 50 plots x 225
 * species). alpha is the method-of-moments-like guess "column proportions
 * times a precision of 50"; the report compares the DM fit with the
 * multinomial limit (alpha -> infinity), showing the overdispersion. */
#include <dirmn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (1 << 20)

typedef struct {
  long rows, cols;
  double* x; /* row-major */
} table;

static int read_csv(const char* path, table* t) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  char* line = malloc(MAX_LINE);
  size_t cap = 1024, n = 0;
  t->x = malloc(cap * sizeof(double));
  t->rows = 0;
  t->cols = -1;
  if (!line || !t->x || !fgets(line, MAX_LINE, f)) goto fail; /* header */
  while (fgets(line, MAX_LINE, f)) {
    char* p = strchr(line, ',');
    long c = 0;
    while (p) {
      if (n == cap) {
        double* bigger = realloc(t->x, 2 * cap * sizeof(double));
        if (!bigger) goto fail;
        t->x = bigger;
        cap *= 2;
      }
      t->x[n++] = strtod(p + 1, NULL);
      ++c;
      p = strchr(p + 1, ',');
    }
    if (t->cols < 0) t->cols = c;
    if (c != t->cols) goto fail;
    ++t->rows;
  }
  free(line);
  fclose(f);
  return t->rows > 0 ? 0 : -1;
fail:
  free(line);
  free(t->x);
  fclose(f);
  return -1;
}

static int check(dirmn_context* ctx, dirmn_status s, const char* what) {
  if (s == DIRMN_SUCCESS) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, dirmn_status_string(s), dirmn_last_error(ctx));
  return 1;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "examples/data/bci.csv";
  const char* be = argc > 2 ? argv[2] : "auto";
  dirmn_backend backend = strcmp(be, "cpu") == 0    ? DIRMN_BACKEND_CPU
                          : strcmp(be, "cuda") == 0 ? DIRMN_BACKEND_CUDA
                                                    : DIRMN_BACKEND_AUTO;
  table t;
  if (read_csv(path, &t) != 0) {
    fprintf(stderr, "cannot read a count table from %s\n", path);
    return 1;
  }

  dirmn_context* ctx = NULL;
  if (check(NULL, dirmn_context_create(&ctx, backend, 0), "dirmn_context_create")) return 1;
  dirmn_backend used;
  dirmn_context_backend(ctx, &used, NULL);

  dirmn_counts* counts = NULL;
  int rc = 1;
  double *alpha = NULL, *ll = NULL, *ll_multi = NULL;
  if (check(ctx, dirmn_counts_create_dense(ctx, &counts, t.rows, t.cols, DIRMN_FLOAT64, t.x,
                                           t.cols, 1, NULL),
            "dirmn_counts_create_dense"))
    goto done;
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_counts_get_info(counts, &info);

  alpha = calloc((size_t)t.cols, sizeof(double));
  ll = calloc((size_t)t.rows, sizeof(double));
  ll_multi = calloc((size_t)t.rows, sizeof(double));
  if (!alpha || !ll || !ll_multi) goto done;
  for (long i = 0; i < t.rows; ++i)
    for (long j = 0; j < t.cols; ++j) alpha[j] += t.x[i * t.cols + j];
  /* Column proportions (smoothed so no alpha is 0) times a precision. */
  const double precision = 50.0, smooth = 0.5;
  double scale = info.total + smooth * (double)t.cols;
  for (long j = 0; j < t.cols; ++j) alpha[j] = precision * (alpha[j] + smooth) / scale;
  if (check(ctx, dirmn_loglik(ctx, counts, 1, alpha, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL, ll, 1, 1),
            "dirmn_loglik"))
    goto done;
  /* The multinomial limit: the same proportions with a huge precision. */
  for (long j = 0; j < t.cols; ++j) alpha[j] *= 1e9 / precision;
  if (check(ctx, dirmn_loglik(ctx, counts, 1, alpha, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                              ll_multi, 1, 1),
            "dirmn_loglik"))
    goto done;

  double sum = 0, sum_multi = 0, worst = 0;
  long worst_row = 0;
  for (long i = 0; i < t.rows; ++i) {
    sum += ll[i];
    sum_multi += ll_multi[i];
    if (ll[i] < worst || i == 0) {
      worst = ll[i];
      worst_row = i;
    }
  }
  printf("dirmn %s on %s\n", dirmn_version_string(), used == DIRMN_BACKEND_CUDA ? "CUDA" : "CPU");
  printf("table            %s: %ld rows x %ld columns, %lld nonzero (%.0f%%), max count %.0f\n",
         path, t.rows, t.cols, (long long)info.nnz, 100.0 * (double)info.nnz / (double)(t.rows * t.cols),
         info.max_count);
  printf("storage          %s, %d-bit counts\n",
         info.storage == DIRMN_STORAGE_SPARSE ? "sparse rows" : "dense", info.value_bits);
  printf("alpha            column proportions x precision %.0f\n", precision);
  printf("log-likelihood   DM %.4f   multinomial limit %.4f   difference %.1f nats\n", sum,
         sum_multi, sum - sum_multi);
  printf("per row          mean %.4f, lowest %.4f (row %ld)\n", sum / (double)t.rows, worst,
         worst_row + 1);
  rc = 0;
done:
  free(alpha);
  free(ll);
  free(ll_multi);
  free(t.x);
  dirmn_counts_destroy(counts);
  dirmn_context_destroy(ctx);
  return rc;
}
