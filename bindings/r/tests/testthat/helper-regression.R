# Plain-R references for Dirichlet-multinomial regression (dirmn_reg):
# written from the model, alpha_bv = exp(x_b . beta_v), sharing no code with
# dirmn.

# The log-likelihood (with the multinomial coefficients) of counts y (rows x
# V) under design x (rows x p) and coefficients beta (p x V, or vec(beta)),
# through lgamma, rows weighted by w.
ref_reg_loglik <- function(beta, x, y, w = rep(1, nrow(y))) {
  beta <- matrix(beta, ncol(x))
  alpha <- exp(x %*% beta)
  n <- rowSums(y)
  A <- rowSums(alpha)
  ll <- lgamma(A) - lgamma(n + A) + rowSums(lgamma(y + alpha) - lgamma(alpha)) +
    lgamma(n + 1) - rowSums(lgamma(y + 1))
  sum(w * ll)
}

# The Hessian of f at b by central differences of its values, step h_i =
# rel * max(|b_i|, 1).
fd_hessian <- function(f, b, rel = 1e-3) {
  k <- length(b)
  h <- rel * pmax(abs(b), 1)
  H <- matrix(0, k, k)
  at <- function(i, si, j, sj) {
    e <- b
    e[i] <- e[i] + si * h[i]
    e[j] <- e[j] + sj * h[j]
    f(e)
  }
  for (i in seq_len(k)) {
    for (j in i:k) {
      H[i, j] <- H[j, i] <- (at(i, 1, j, 1) - at(i, 1, j, -1) - at(i, -1, j, 1) +
                               at(i, -1, j, -1)) / (4 * h[i] * h[j])
    }
  }
  H
}

# Draws DM counts: row b has alpha_b = exp(x_b beta), size `size`.
ref_reg_counts <- function(x, beta, size) {
  alpha <- exp(x %*% beta)
  size <- rep_len(size, nrow(x))
  y <- t(vapply(seq_len(nrow(x)), function(b) {
    g <- rgamma(ncol(alpha), shape = alpha[b, ])
    stats::rmultinom(1L, size[b], g / sum(g))[, 1L]
  }, numeric(ncol(alpha))))
  colnames(y) <- colnames(beta)
  y
}

# A small simulated regression problem: a numeric and a three-level factor
# covariate, V = 4 categories.
reg_problem <- function(n = 80L, seed = 11L, size = 40L) {
  set.seed(seed)
  d <- data.frame(x = round(rnorm(n), 3),
                  f = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi")),
                  z = round(runif(n), 3))
  x <- model.matrix(~ x + f, d)
  beta <- cbind(a = c(1.0, 0.5, 0.3, -0.2), b = c(0.5, -0.5, 0.0, 0.4),
                c = c(0.2, 0.0, 0.6, 0.1), d = c(0.8, 0.2, -0.3, 0.0))
  y <- ref_reg_counts(x, beta, size)
  d$y <- y
  list(data = d, y = y, x = x, beta = beta)
}

# MGLM 0.2.1, the reference implementation of the same model
# (MGLMreg(dist = "DM")): its source tarball as the repository keeps it in
# shared/vendor (beside the clone: found from DIRMN_MGLM_TARBALL, from
# DIRMN_SHARED_DATA, which scripts/test-r.sh sets, or from the test
# directory upwards), or NULL.
mglm_tarball <- function() {
  candidates <- Sys.getenv("DIRMN_MGLM_TARBALL")
  shared_data <- Sys.getenv("DIRMN_SHARED_DATA")
  if (nzchar(shared_data)) {
    candidates <- c(candidates, file.path(shared_data, "..", "vendor", "MGLM_0.2.1.tar.gz"))
  }
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    candidates <- c(candidates, file.path(dir, "shared", "vendor", "MGLM_0.2.1.tar.gz"))
    parent <- dirname(dir)
    if (parent == dir) break
    dir <- parent
  }
  hit <- candidates[nzchar(candidates) & file.exists(candidates)]
  if (length(hit) == 0L) NULL else normalizePath(hit[[1L]])
}

# MGLM's rnaseq data set (200 samples, counts of 6 isoforms X1..X6 and
# covariates totalReads, treatment, gender, age), read from the tarball's
# data/rnaseq.rda without installing MGLM; NULL without the tarball.
mglm_rnaseq <- function(tarball = mglm_tarball()) {
  if (is.null(tarball)) return(NULL)
  dir <- tempfile("mglm-data")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  utils::untar(tarball, files = "MGLM/data/rnaseq.rda", exdir = dir)
  env <- new.env()
  load(file.path(dir, "MGLM", "data", "rnaseq.rda"), envir = env)
  env$rnaseq
}

# The library holding MGLM 0.2.1: where it is installed already (a
# reference library on R_LIBS), else the tarball installed into a temporary
# library of its own (never the library dirmn is in), once per R session; NULL
# where neither is there or the tarball does not install.
mglm_library <- local({
  lib <- NA
  function() {
    if (!identical(lib, NA)) return(lib)
    lib <<- NULL
    installed <- system.file(package = "MGLM")
    if (nzchar(installed) && identical(as.character(packageVersion("MGLM")), "0.2.1")) {
      lib <<- dirname(installed)
      return(lib)
    }
    tarball <- mglm_tarball()
    if (is.null(tarball)) return(NULL)
    dir <- tempfile("mglm-lib")
    dir.create(dir)
    status <- system2(file.path(R.home("bin"), "R"),
                      c("CMD", "INSTALL", "--no-test-load", paste0("--library=", shQuote(dir)),
                        shQuote(tarball)), stdout = FALSE, stderr = FALSE)
    if (status == 0L && file.exists(file.path(dir, "MGLM", "DESCRIPTION"))) lib <<- dir
    lib
  }
})

# The mean/precision model (dirmn_reg(parametrization = "meanprecision")):
# alpha_b = phi softmax(x_b beta), written from the model. `theta` holds the
# free coefficients in the library's order: vec(beta) without the
# `reference` category's column, then gamma = log phi; with `sum_to_zero`
# the reference category's coefficients are minus the sum of the others'.
ref_mp_beta <- function(theta, p, V, reference = 1L, sum_to_zero = FALSE) {
  free <- matrix(theta[-length(theta)], p, V - 1L)
  beta <- matrix(0, p, V)
  beta[, -reference] <- free
  if (sum_to_zero) beta[, reference] <- -rowSums(free)
  beta
}

ref_mp_alpha <- function(x, beta, phi) {
  eta <- x %*% beta
  e <- exp(eta - apply(eta, 1L, max))
  phi * e / rowSums(e)
}

# Its log-likelihood (with the multinomial coefficients), through lgamma.
ref_mp_loglik <- function(theta, x, y, reference = 1L, sum_to_zero = FALSE,
                          w = rep(1, nrow(y))) {
  beta <- ref_mp_beta(theta, ncol(x), ncol(y), reference, sum_to_zero)
  alpha <- ref_mp_alpha(x, beta, exp(theta[length(theta)]))
  n <- rowSums(y)
  A <- rowSums(alpha)
  ll <- lgamma(A) - lgamma(n + A) + rowSums(lgamma(y + alpha) - lgamma(alpha)) +
    lgamma(n + 1) - rowSums(lgamma(y + 1))
  sum(w * ll)
}

# DM counts of rows with alpha (rows x V), totals `size`.
ref_dm_counts <- function(alpha, size) {
  size <- rep_len(size, nrow(alpha))
  t(vapply(seq_len(nrow(alpha)), function(b) {
    g <- rgamma(ncol(alpha), shape = alpha[b, ])
    stats::rmultinom(1L, size[b], g / sum(g))[, 1L]
  }, numeric(ncol(alpha))))
}

# A mean/precision problem: 60 rows, an intercept and a normal covariate
# and a two-level group, 4 categories, precision 15.
mp_problem <- function(n = 60L, seed = 21L, phi = 15) {
  set.seed(seed)
  d <- data.frame(x = round(rnorm(n), 3), g = factor(rep(c("u", "w"), length.out = n)))
  x <- model.matrix(~ x, d)
  beta <- cbind(a = c(0, 0), b = c(0.4, -0.5), c = c(-0.3, 0.3), d = c(0.6, 0.2))
  y <- ref_dm_counts(ref_mp_alpha(x, beta, phi), sample(20:60, n, TRUE))
  colnames(y) <- colnames(beta)
  d$y <- y
  list(data = d, x = x, y = y, beta = beta, phi = phi)
}
