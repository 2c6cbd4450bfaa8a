/* mpi_fit.c: one table, its rows split over MPI ranks, fitted as one.
 * Usage: mpiexec -n N dirmn_example_mpi [table.csv]
 *
 * Each rank reads only its own block of the CSV's rows (a header row, the
 * row name first on each line, as examples/data/bci.csv), makes a counts
 * object of them and attaches it to a communicator over MPI_COMM_WORLD
 * (libdirmn_mpi). dirmn_fit is then collective: every rank gets the alpha a
 * single process holding the whole table gets, bit for bit, and rank 0
 * prints it as dirmn_example does. Then mixtures of 1..3 components over
 * the ranks, collective too: rank 0 prints their criteria. */
#include <dirmn_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (1 << 20)

/* Rows [first, last) of the CSV: their counts (row-major) and the column
   count; the header's names into *header (its line). -1 on a read error. */
static long read_rows(const char* path, long first, long last, double** x, long* cols, char* header) {
  FILE* f = fopen(path, "r");
  char* line = malloc(MAX_LINE);
  long row = 0, n = 0;
  *x = NULL;
  *cols = -1;
  if (!f || !line || !fgets(header, MAX_LINE, f)) goto fail;
  while (fgets(line, MAX_LINE, f)) {
    if (row >= first && row < last) {
      long c = 0;
      for (char* p = strchr(line, ','); p; p = strchr(p + 1, ',')) ++c;
      if (*cols < 0) {
        *cols = c;
        *x = malloc((size_t)((last - first) * c) * sizeof(double));
        if (!*x) goto fail;
      }
      if (c != *cols) goto fail;
      for (char* p = strchr(line, ','); p; p = strchr(p + 1, ',')) (*x)[n++] = strtod(p + 1, NULL);
    }
    ++row;
  }
  free(line);
  fclose(f);
  return row;
fail:
  free(line);
  free(*x);
  if (f) fclose(f);
  return -1;
}

/* Column j's name in the header line (without quotes) into out. */
static void column_name(const char* header, long j, char* out, size_t size) {
  const char* p = header;
  for (long i = 0; i <= j && p; ++i)
    if ((p = strchr(p, ',')) != NULL) ++p;
  if (!p) {
    snprintf(out, size, "column %ld", j + 1);
    return;
  }
  size_t len = strcspn(p, ",\r\n");
  if (len >= 2 && p[0] == '"' && p[len - 1] == '"') {
    ++p;
    len -= 2;
  }
  snprintf(out, size, "%.*s", (int)len, p);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* path = argc > 1 ? argv[1] : "examples/data/bci.csv";
  char* header = malloc(MAX_LINE);
  double* x = NULL;
  long cols = 0;
  /* The row count first (every rank reads the file through once), then this
     rank's block of rows. */
  long rows = header ? read_rows(path, 0, 0, &x, &cols, header) : -1;
  const long first = rows * rank / ranks, last = rows * (rank + 1) / ranks;
  if (rows <= 0 || read_rows(path, first, last, &x, &cols, header) < 0 || cols <= 0) {
    fprintf(stderr, "rank %d: cannot read rows %ld..%ld of %s\n", rank, first, last, path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  dirmn_context* ctx = NULL;
  dirmn_counts* counts = NULL;
  dirmn_communicator* comm = NULL;
  double* alpha = calloc((size_t)cols, sizeof(double));
  dirmn_fit_result fit;
  memset(&fit, 0, sizeof fit);
  fit.size = sizeof fit;
  fit.alpha = alpha;
  dirmn_status s = dirmn_context_create(&ctx, DIRMN_BACKEND_AUTO, 0);
  if (s == DIRMN_SUCCESS)
    s = dirmn_counts_create_dense(ctx, &counts, last - first, cols, DIRMN_FLOAT64, x, cols, 1, NULL);
  if (s == DIRMN_SUCCESS) s = dirmn_mpi_communicator_create(MPI_COMM_WORLD, &comm);
  if (s == DIRMN_SUCCESS) s = dirmn_counts_set_communicator(ctx, counts, comm);
  if (s == DIRMN_SUCCESS) s = dirmn_fit(ctx, counts, NULL, &fit); /* collective */
  if (s != DIRMN_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, dirmn_status_name(s),
            comm ? dirmn_last_error(ctx) : dirmn_mpi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    printf("dirmn %s: %s, %ld rows x %ld columns over %d MPI ranks (rank 0 holds rows 1..%ld)\n",
           dirmn_version_string(), path, rows, cols, ranks, last);
    printf("fit             %s in %d Newton iterations, log-likelihood %.4f, precision %.4g\n",
           fit.converged ? "converged" : "NOT converged", fit.iterations, fit.loglik, fit.precision);
    printf("largest alpha   column                          alpha\n");
    for (int r = 0; r < 3 && r < cols; ++r) {
      long best = 0;
      for (long j = 1; j < cols; ++j)
        if (alpha[j] > alpha[best]) best = j;
      char name[64];
      column_name(header, best, name, sizeof name);
      printf("                %-28s %9.4f\n", name, alpha[best]);
      alpha[best] = -1.0;
    }
  }
  /* Mixtures of 1..3 components over the ranks (collective): every rank
     gets the whole table's fits, and its own rows' responsibilities. */
  enum { KMAX = 3 };
  dirmn_mixture* mix[KMAX] = {NULL};
  s = dirmn_mixture_fit_range(ctx, counts, 1, KMAX, NULL, mix);
  if (s != DIRMN_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, dirmn_status_name(s), dirmn_last_error(ctx));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) printf("mixture  k   log-likelihood          BIC   iterations\n");
  for (int k = 1; k <= KMAX; ++k) {
    dirmn_mixture_info info;
    info.size = sizeof info;
    dirmn_mixture_get_info(mix[k - 1], &info);
    if (rank == 0) printf("         %d %16.4f %12.4f   %d\n", k, info.loglik, info.bic, info.iterations);
    dirmn_mixture_destroy(mix[k - 1]);
  }
  dirmn_counts_destroy(counts);
  dirmn_communicator_destroy(comm);
  dirmn_context_destroy(ctx);
  free(alpha);
  free(x);
  free(header);
  MPI_Finalize();
  return 0;
}
