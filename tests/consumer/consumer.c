/* A minimal program built against an installed dirmn: it must compile with
 * the installed header, link, load the installed library and compute. */
#include <dirmn.h>
#include <math.h>
#include <stdio.h>

int main(void) {
  if (dirmn_version_number() / 10000 != DIRMN_VERSION_MAJOR) return 2;
  dirmn_context* ctx = NULL;
  if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) return 3;
  const int counts[2] = {1, 0};
  dirmn_counts* c = NULL;
  if (dirmn_counts_create_dense(ctx, &c, 1, 2, DIRMN_INT32, counts, 2, 1, NULL)) return 4;
  const double alpha[2] = {1.0, 1.0};
  double ll = 0.0;
  if (dirmn_loglik(ctx, c, 1, alpha, 2, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, &ll, 1, 1)) return 5;
  dirmn_counts_destroy(c);
  dirmn_context_destroy(ctx);
  /* One draw of category 0 under a flat Dirichlet: probability 1/2. */
  if (fabs(ll - log(0.5)) > 1e-15) return 6;
  printf("dirmn %s: loglik %.6f\n", dirmn_version_string(), ll);
  return 0;
}
