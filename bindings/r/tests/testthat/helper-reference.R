# Independent references for the Dirichlet-multinomial log pmf.

# Plain-R formula through lgamma (accurate while alpha is moderate).
ref_loglik <- function(x, alpha, full = TRUE) {
  x <- as.matrix(x)
  if (is.null(dim(alpha))) alpha <- matrix(alpha, nrow(x), ncol(x), byrow = TRUE)
  n_total <- rowSums(x)
  a_total <- rowSums(alpha)
  ll <- lgamma(a_total) - lgamma(n_total + a_total) + rowSums(lgamma(x + alpha) - lgamma(alpha))
  if (full) ll <- ll + lgamma(n_total + 1) - rowSums(lgamma(x + 1))
  unname(ll)
}

# log rising factorial a (a + 1) ... (a + n - 1) as a sum of logs: exact to
# rounding for any a, so it stays a valid reference where lgamma differences
# cancel (alpha much larger than the counts).
lpoch_sum <- function(a, n) if (n == 0) 0 else sum(log(a + seq_len(n) - 1))

ref_loglik_lpoch <- function(x, alpha) {
  x <- as.matrix(x)
  vapply(seq_len(nrow(x)), function(b) {
    n <- x[b, ]
    terms <- vapply(seq_along(n), function(v) lpoch_sum(alpha[v], n[v]), 0)
    sum(terms) - lpoch_sum(sum(alpha), sum(n))
  }, 0)
}

extra_loglik <- function(x, alpha, log = TRUE) {
  x <- as.matrix(x)
  extraDistr::ddirmnom(x, rowSums(x), alpha, log = log)
}

# Element-wise relative error at most `tol` (exact where expected is 0).
expect_rel_equal <- function(actual, expected, tol = 1e-10) {
  expect_length(actual, length(expected))
  expect_true(all(is.finite(actual)))
  err <- ifelse(expected == 0, abs(actual), abs(actual - expected) / abs(expected))
  expect_lte(max(c(0, err)), tol)
}

random_counts <- function(rows, cols, seed, max_mean = 8) {
  set.seed(seed)
  means <- rexp(cols) * max_mean / 2
  x <- matrix(rpois(rows * cols, rep(means, each = rows)), rows, cols)
  # some rows of zeros and very sparse rows, as in real tables
  x[2, ] <- 0L
  x[3, -1] <- 0L
  x
}

bci_table <- function() {
  as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"), row.names = 1))
}

has_cuda <- function() dirmn_backends()$cuda_devices > 0
