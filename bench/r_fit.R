# Benchmark of dirmn_fit() (maximum-likelihood alpha of a Dirichlet-
# multinomial) against what an R user runs instead.
#
# Usage (after scripts/test-r.sh PREFIX has installed the package):
#   R_LIBS=PREFIX/R-library Rscript bench/r_fit.R
#
# One simulated 2000 x 50 table (row totals about 500, known alpha; seed
# fixed), in one R session:
#   - dirmn_fit() on the CPU backend, given the matrix (validated, uploaded
#     and reduced to count histograms on every call) and given a table
#     prepared once with dirmn_counts();
#   - dirmult::dirmult() with its default tolerance (epsilon = 1e-4), no trace;
#   - a plain-R Minka fixed point, to a relative change of 1e-10.
# Printed: time, iterations, the maximised log-likelihood (all evaluated by
# the same plain-R lgamma formula at each method's alpha) and the largest
# relative difference of alpha from dirmn's. Target: dirmn_fit to full
# convergence within 10 ms.

suppressPackageStartupMessages(library(dirmn))
if (!requireNamespace("dirmult", quietly = TRUE)) stop("the dirmult package is needed")

now <- function() as.numeric(Sys.time())

per_call <- function(f, min_reps = 5L, min_time = 2) {
  f()
  times <- numeric(0)
  start <- now()
  while (length(times) < min_reps || now() - start < min_time) {
    t0 <- now()
    f()
    times <- c(times, now() - t0)
  }
  stats::median(times)
}

time_once <- function(expr) {
  t0 <- now()
  value <- force(expr)
  list(value = value, time = now() - t0)
}

fmt_time <- function(s) {
  if (s >= 1) sprintf("%.2f s", s) else if (s >= 1e-3) sprintf("%.2f ms", 1e3 * s)
  else sprintf("%.1f us", 1e6 * s)
}

# Dirichlet-multinomial draws: Dirichlet proportions from gamma variates,
# then multinomial counts.
rdirmn <- function(rows, size, alpha) {
  t(vapply(seq_len(rows), function(b) {
    g <- stats::rgamma(length(alpha), shape = alpha)
    stats::rmultinom(1L, size[b], g / sum(g))[, 1L]
  }, numeric(length(alpha))))
}

loglik <- function(x, alpha) {
  n <- rowSums(x)
  a <- matrix(alpha, nrow(x), ncol(x), byrow = TRUE)
  sum(lgamma(sum(alpha)) - lgamma(n + sum(alpha)) + rowSums(lgamma(x + a) - lgamma(a)) +
        lgamma(n + 1) - rowSums(lgamma(x + 1)))
}

minka <- function(x, tol = 1e-10, maxit = 100000L) {
  n <- rowSums(x)
  alpha <- colSums(x) / sum(x)
  for (it in seq_len(maxit)) {
    A <- sum(alpha)
    num <- colSums(digamma(sweep(x, 2L, alpha, "+")) - rep(digamma(alpha), each = nrow(x)))
    new <- alpha * num / sum(digamma(n + A) - digamma(A))
    change <- max(abs(new - alpha) / new)
    alpha <- new
    if (change < tol) break
  }
  list(alpha = alpha, iterations = it)
}

options(width = 200, dirmn.backend = "cpu")
set.seed(20240611)
rows <- 2000L
cols <- 50L
alpha_true <- stats::runif(cols, 0.05, 2)
x <- rdirmn(rows, stats::rpois(rows, 500), alpha_true)
storage.mode(x) <- "integer"
prepared <- dirmn_counts(x, backend = "cpu")

b <- dirmn_backends()
cat(sprintf("libdirmn %s, CPU backend, %d cores; R %s; dirmult %s\n", b$version,
            parallel::detectCores(), getRversion(), utils::packageVersion("dirmult")))
cat(sprintf("table: %d x %d, row totals %d..%d (mean %.0f), sum of alpha %.2f\n\n", rows, cols,
            min(rowSums(x)), max(rowSums(x)), mean(rowSums(x)), sum(alpha_true)))

fit <- dirmn_fit(x)
stopifnot(fit$converged)
t_dense <- per_call(function() dirmn_fit(x), min_reps = 20L)
t_prep <- per_call(function() dirmn_fit(prepared), min_reps = 50L)

cat("running dirmult::dirmult (default tolerance) ...\n")
dm <- time_once(dirmult::dirmult(x, trace = FALSE))
cat("running the plain-R Minka fixed point ...\n")
mk <- time_once(minka(x))

results <- data.frame(
  method = c("dirmn_fit(x)  [dense matrix]", "dirmn_fit(prepared)",
             "dirmult::dirmult(x, trace = FALSE)", "plain-R Minka fixed point (1e-10)"),
  time = vapply(c(t_dense, t_prep, dm$time, mk$time), fmt_time, ""),
  iterations = c(fit$iterations, fit$iterations, dm$value$ite, mk$value$iterations),
  loglik = sprintf("%.6f", c(loglik(x, fit$alpha), loglik(x, fit$alpha),
                             loglik(x, dm$value$gamma), loglik(x, mk$value$alpha))),
  max_rel_diff_alpha = c("", "", sprintf("%.1e", max(abs(dm$value$gamma / fit$alpha - 1))),
                         sprintf("%.1e", max(abs(mk$value$alpha / fit$alpha - 1)))),
  speedup = sprintf("%.0fx", dm$time / c(t_dense, t_prep, dm$time, mk$time)),
  stringsAsFactors = FALSE
)
print(results, row.names = FALSE, right = FALSE)
cat(sprintf("\ndirmn_fit reported loglik %.6f (plain R at its alpha %.6f)\n", fit$loglik,
            loglik(x, fit$alpha)))
cat(sprintf("dirmn_fit(x) to full convergence: %s (target <= 10 ms): %s\n", fmt_time(t_dense),
            if (t_dense <= 0.010) "met" else "NOT met"))
