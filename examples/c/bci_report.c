/* bci_report.c: load a real count table, fit the Dirichlet-multinomial by
 * maximum likelihood, compare it with the multinomial, and fit DM mixtures
 * for k = 1..3. Usage: dirmn_example [table.csv] [backend: auto|cpu|cuda]
 *
 * The table is a CSV with a header row and the row name first on each line,
 * like examples/data/bci.csv (vegan's BCI tree counts, 50 plots x 225
 * species). */
#include <dirmn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (1 << 20)

typedef struct {
  long rows, cols;
  double* x;    /* row-major */
  char** names; /* the header's column names (cols of them), or NULL */
} table;

/* The header's fields after the first (the row-name column's), so that the
   report names categories as the file does. */
static char** read_names(char* header, long* count) {
  header[strcspn(header, "\r\n")] = '\0';
  long n = 0;
  for (char* p = strchr(header, ','); p; p = strchr(p + 1, ',')) ++n;
  char** names = calloc((size_t)(n > 0 ? n : 1), sizeof(char*));
  if (!names) return NULL;
  char* p = strchr(header, ',');
  for (long j = 0; j < n; ++j) {
    char* field = p + 1;
    p = strchr(field, ',');
    size_t len = p ? (size_t)(p - field) : strlen(field);
    if (len >= 2 && field[0] == '"' && field[len - 1] == '"') { ++field; len -= 2; }
    names[j] = malloc(len + 1);
    if (!names[j]) { *count = j; return names; }
    memcpy(names[j], field, len);
    names[j][len] = '\0';
  }
  *count = n;
  return names;
}

static void free_names(char** names, long count) {
  if (!names) return;
  for (long j = 0; j < count; ++j) free(names[j]);
  free(names);
}

static int read_csv(const char* path, table* t) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  char* line = malloc(MAX_LINE);
  size_t cap = 1024, n = 0;
  t->x = malloc(cap * sizeof(double));
  t->rows = 0;
  t->cols = -1;
  t->names = NULL;
  long names = 0;
  if (!line || !t->x || !fgets(line, MAX_LINE, f)) goto fail;
  t->names = read_names(line, &names);
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
  if (names != t->cols) { /* a header that does not match: number the columns instead */
    free_names(t->names, names);
    t->names = NULL;
  }
  return t->rows > 0 ? 0 : -1;
fail:
  free(line);
  free(t->x);
  free_names(t->names, names);
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
  double *alpha = NULL, *se = NULL, *prop = NULL;
  if (check(ctx, dirmn_counts_create_dense(ctx, &counts, t.rows, t.cols, DIRMN_FLOAT64, t.x,
                                           t.cols, 1, NULL),
            "dirmn_counts_create_dense"))
    goto done;
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_counts_get_info(counts, &info);

  alpha = calloc((size_t)t.cols, sizeof(double));
  se = calloc((size_t)t.cols, sizeof(double)); /* standard errors of log alpha */
  prop = calloc((size_t)t.cols, sizeof(double));
  if (!alpha || !se || !prop) goto done;

  /* Maximum-likelihood alpha: Newton on log alpha over count histograms. */
  dirmn_fit_result fit;
  fit.size = sizeof fit;
  fit.alpha = alpha;
  fit.std_error_alpha = NULL;
  fit.std_error_log_alpha = se;
  if (check(ctx, dirmn_fit(ctx, counts, NULL, &fit), "dirmn_fit")) goto done;

  /* The multinomial fit (the DM's limit as the precision grows), for
     comparison: its log pmf, multinomial coefficients included as in
     fit.loglik. */
  double mult = 0.0;
  for (long i = 0; i < t.rows; ++i)
    for (long j = 0; j < t.cols; ++j) prop[j] += t.x[i * t.cols + j];
  for (long i = 0; i < t.rows; ++i) {
    double n_i = 0.0;
    for (long j = 0; j < t.cols; ++j) {
      const double n = t.x[i * t.cols + j];
      n_i += n;
      if (n > 0) mult += n * log(prop[j] / info.total) - lgamma(n + 1.0);
    }
    mult += lgamma(n_i + 1.0);
  }

  printf("dirmn %s on %s\n", dirmn_version_string(), used == DIRMN_BACKEND_CUDA ? "CUDA" : "CPU");
  printf("table           %s: %ld rows x %ld columns, %lld nonzero (%.0f%%), max count %.0f\n",
         path, t.rows, t.cols, (long long)info.nnz,
         100.0 * (double)info.nnz / (double)(t.rows * t.cols), info.max_count);
  printf("storage         %s, %d-bit counts\n",
         info.storage == DIRMN_STORAGE_SPARSE ? "sparse rows" : "dense", info.value_bits);
  printf("fit             %s in %d Newton iterations, gradient norm %.2g\n",
         fit.converged ? "converged" : "NOT converged", fit.iterations, fit.gradient_norm);
  if (fit.multinomial_limit) {
    printf("                no overdispersion: the multinomial limit fits best\n");
  } else {
    printf("precision       sum(alpha) = %.4g (overdispersion 1/(1+A) = %.4g)\n", fit.precision,
           1.0 / (1.0 + fit.precision));
  }
  printf("log-likelihood  DM %.4f   multinomial %.4f   gain %.1f nats\n", fit.loglik, mult,
         fit.loglik - mult);
  /* The three largest alphas, named as the file's header names them. */
  printf("largest alpha   column                          alpha   log alpha +/- s.e.\n");
  for (int r = 0; r < 3 && r < t.cols; ++r) {
    long best = -1;
    for (long j = 0; j < t.cols; ++j)
      if ((best < 0 || alpha[j] > alpha[best]) && alpha[j] >= 0) best = j;
    char number[32];
    snprintf(number, sizeof number, "column %ld", best + 1);
    printf("                %-28s %9.4f   %.3f\n", t.names ? t.names[best] : number, alpha[best],
           se[best]);
    alpha[best] = -alpha[best]; /* exclude from the next round */
  }

  /* DM mixtures for k = 1..3, compared by BIC. */
  printf("mixtures        k   loglik        BIC\n");
  for (int k = 1; k <= 3; ++k) {
    dirmn_mixture* m = NULL;
    if (check(ctx, dirmn_mixture_fit(ctx, counts, k, NULL, &m), "dirmn_mixture_fit")) goto done;
    dirmn_mixture_info mi;
    mi.size = sizeof mi;
    dirmn_mixture_get_info(m, &mi);
    printf("                %d   %.3f   %.3f\n", k, mi.loglik, mi.bic);
    dirmn_mixture_destroy(m);
  }
  rc = 0;
done:
  free(alpha);
  free(se);
  free(prop);
  free(t.x);
  free_names(t.names, t.cols);
  dirmn_counts_destroy(counts);
  dirmn_context_destroy(ctx);
  return rc;
}
