# Plain-R references for the sums, derivatives, fits and mixtures: written
# from the formulas, sharing no code with dirmn.

mite_table <- function() {
  as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"), row.names = 1))
}

# Draws `rows` Dirichlet-multinomial rows: proportions from Dirichlet(alpha)
# through normalised gamma variates, then multinomial counts of the sizes.
ref_rdirmn <- function(rows, size, alpha) {
  size <- rep_len(size, rows)
  t(vapply(seq_len(rows), function(b) {
    g <- rgamma(length(alpha), shape = alpha)
    stats::rmultinom(1L, size[b], g / sum(g))[, 1L]
  }, numeric(length(alpha))))
}

# Weighted sum of the rows' log-likelihoods through lgamma.
ref_loglik_sum <- function(x, alpha, w = rep(1, nrow(x)), full = TRUE) {
  sum(w * ref_loglik(x, alpha, full = full))
}

# Gradient with respect to alpha through digamma.
ref_gradient <- function(x, alpha, w = rep(1, nrow(x))) {
  x <- as.matrix(x)
  n <- rowSums(x)
  A <- sum(alpha)
  per_cell <- digamma(sweep(x, 2L, alpha, "+")) - rep(digamma(alpha), each = nrow(x))
  colSums(w * per_cell) - sum(w * (digamma(n + A) - digamma(A)))
}

# Hessian with respect to alpha through trigamma: diag(h) + c 11'.
ref_hessian <- function(x, alpha, w = rep(1, nrow(x))) {
  x <- as.matrix(x)
  n <- rowSums(x)
  A <- sum(alpha)
  per_cell <- trigamma(sweep(x, 2L, alpha, "+")) - rep(trigamma(alpha), each = nrow(x))
  h <- colSums(w * per_cell)
  s <- sum(w * (trigamma(A) - trigamma(n + A)))
  list(diag = h, scalar = s, matrix = diag(h, length(h)) + s)
}

# Central finite differences of f at p: the gradient (f scalar) or the
# Jacobian (f vector; rows are outputs).
fd_gradient <- function(f, p, rel = 1e-6) {
  vapply(seq_along(p), function(i) {
    h <- rel * max(abs(p[i]), 1e-3)
    up <- p
    down <- p
    up[i] <- p[i] + h
    down[i] <- p[i] - h
    (f(up) - f(down)) / (2 * h)
  }, numeric(length(f(p))))
}

# Minka's fixed point for the Dirichlet-multinomial MLE,
#   alpha_v <- alpha_v sum_b w_b [psi(n_bv + alpha_v) - psi(alpha_v)] /
#                      sum_b w_b [psi(N_b + A) - psi(A)],
# from the multinomial proportions, to a relative change of `tol`; columns
# without counts are left at 0.
minka_fit <- function(x, weights = NULL, tol = 1e-10, maxit = 100000L) {
  x <- as.matrix(x)
  w <- if (is.null(weights)) rep(1, nrow(x)) else weights
  keep <- rowSums(x) > 0 & w > 0
  x <- x[keep, , drop = FALSE]
  w <- w[keep]
  n <- rowSums(x)
  active <- colSums(x) > 0
  xa <- x[, active, drop = FALSE]
  alpha <- colSums(w * xa) / sum(w * n)
  change <- Inf
  it <- 0L
  while (change >= tol && it < maxit) {
    it <- it + 1L
    A <- sum(alpha)
    num <- colSums(w * (digamma(sweep(xa, 2L, alpha, "+")) - rep(digamma(alpha), each = nrow(xa))))
    den <- sum(w * (digamma(n + A) - digamma(A)))
    new <- alpha * num / den
    change <- max(abs(new - alpha) / new)
    alpha <- new
  }
  out <- numeric(ncol(x))
  out[active] <- alpha
  list(alpha = out, iterations = it, converged = change < tol)
}

# Largest relative difference, over entries where `expected` is not 0.
max_rel <- function(actual, expected) {
  nz <- expected != 0
  max(abs(actual[nz] - expected[nz]) / abs(expected[nz]))
}

# Adjusted Rand index of two labelings (Hubert & Arabie 1985).
ari <- function(a, b) {
  tab <- table(a, b)
  pairs <- function(n) sum(n * (n - 1) / 2)
  index <- pairs(tab)
  rows <- pairs(rowSums(tab))
  cols <- pairs(colSums(tab))
  expected <- rows * cols / pairs(sum(tab))
  (index - expected) / ((rows + cols) / 2 - expected)
}

# Mixture log-likelihood (full log pmf) and posterior probabilities from
# alpha (k x V) and mixing weights, through lgamma and log-sum-exp.
ref_mixture <- function(x, alpha, weights) {
  L <- vapply(seq_len(nrow(alpha)), function(j) ref_loglik(x, alpha[j, ]), numeric(nrow(x)))
  L <- matrix(L, nrow(x))
  s <- sweep(L, 2L, log(weights), "+")
  m <- apply(s, 1L, max)
  lse <- m + log(rowSums(exp(s - m)))
  list(loglik = sum(lse), posterior = exp(s - lse))
}

# Laplace criterion of a mixture on dmn's scale, with the exact Hessian of
# the negative log posterior in log alpha (Gamma(shape, rate) prior on every
# alpha) per component, weighted by the responsibilities; the mixing weights
# are left out.
# DirichletMultinomial::dmn's log-determinant ("LogDet") for a fit with
# alpha (k x V) and responsibilities resp (rows x k), in plain R with dense
# matrices: per component the Hessian of the negative log posterior in log
# alpha, with dmn's sums over rows of digamma/trigamma(alpha_v + n_bv) not
# weighted by the responsibilities (rows with z n = 0 count as n = 0), plus
# 2 log n - log n_j for every component but `first` (dmn's first component;
# NULL: every component's term weighted (k - 1) / k, as libdirmn does).
ref_logdet_dmn <- function(x, alpha, resp, first = NULL, rate = 0.1) {
  k <- nrow(alpha)
  N <- rowSums(x)
  W <- colSums(resp)
  ld <- sum(vapply(seq_len(k), function(j) {
    a <- alpha[j, ]
    z <- resp[, j]
    A <- sum(a)
    an <- sweep(x * (z * x != 0), 2L, a, "+")
    c1 <- sum(z * trigamma(A + N)) - sum(z) * trigamma(A)
    c0 <- sum(z * digamma(A + N)) - sum(z) * digamma(A)
    H <- c1 * outer(a, a)
    diag(H) <- a * (c0 - colSums(digamma(an)) + sum(z) * digamma(a) + rate) +
      a^2 * (c1 - colSums(trigamma(an)) + sum(z) * trigamma(a))
    as.numeric(determinant(H)$modulus)
  }, 0))
  extra <- 2 * log(nrow(x)) - log(W)
  if (k > 1) ld <- ld + if (is.null(first)) (k - 1) / k * sum(extra) else sum(extra[-first])
  ld
}

ref_laplace_dmn <- function(x, alpha, resp, objective, first = NULL) {
  k <- nrow(alpha)
  P <- k * ncol(alpha) + k - 1
  objective + 0.5 * ref_logdet_dmn(x, alpha, resp, first) - 0.5 * P * log(2 * pi)
}

# Evaluates expr with dirmn's convergence warnings muffled (a fit stopped at
# maxit on purpose), letting every other condition through.
unconverged <- function(expr) {
  withCallingHandlers(expr, dirmn_convergence_warning = function(w) invokeRestart("muffleWarning"))
}
