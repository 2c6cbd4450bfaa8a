# The test of the multinomial against the Dirichlet-multinomial (issue #25).
mite <- mite_table()
bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"), row.names = 1))

# Kim & Margolin's T in plain R, from its formula (as HMP's T.statistics
# computes it).
ref_T <- function(x) {
  X <- colSums(x)
  N <- rowSums(x)
  sum(colSums((x - outer(N, X) / sum(x))^2) / X)
}

test_that("the score test equals HMP::C.alpha.multinomial on mite and bci", {
  for (x in list(mite, bci)) {
    x <- x[, colSums(x) > 0]
    s <- dirmn_overdispersion_test(x, method = "score")
    expect_s3_class(s, "htest")
    expect_equal(unname(s$statistic), ref_T(x), tolerance = 1e-12)
    expect_identical(names(s$statistic), "T")
    expect_identical(names(s$parameter), c("df", "scale"))
    if (requireNamespace("HMP", quietly = TRUE)) {
      h <- HMP::C.alpha.multinomial(x)
      expect_equal(unname(s$statistic), h[["T statistics"]], tolerance = 1e-12)
      expect_equal(s$p.value, h[["p value"]], tolerance = 1e-10)
    }
  }
  # empty columns are left out (HMP gives NaN there)
  s <- dirmn_overdispersion_test(cbind(mite, empty = 0L), method = "score")
  expect_equal(unname(s$statistic), ref_T(mite), tolerance = 1e-12)
  expect_identical(s$categories, 35L)
})

test_that("the LRT is 2 (logLik of the DM fit - the multinomial's), with the boundary p-value", {
  t <- dirmn_overdispersion_test(mite)
  fit <- dirmn_fit(mite)
  p <- colSums(mite) / sum(mite)
  mult <- sum(vapply(seq_len(nrow(mite)), function(b) dmultinom(mite[b, ], prob = p, log = TRUE), 0))
  expect_equal(unname(t$statistic), 2 * (as.numeric(logLik(fit)) - mult), tolerance = 1e-8)
  expect_identical(names(t$statistic), "LRT")
  expect_equal(t$p.value, 0.5 * pchisq(unname(t$statistic), 1, lower.tail = FALSE))
  expect_equal(t$loglik_multinomial, mult, tolerance = 1e-10)
  expect_equal(unname(t$estimate), fit$precision, tolerance = 1e-6)
  expect_match(t$data.name, "mite")
  expect_output(print(t), "Likelihood-ratio test")
  # at the multinomial limit the statistic is 0 and the p-value 1
  set.seed(2)
  multi <- t(rmultinom(40, 100, c(0.5, 0.3, 0.2)))
  tm <- dirmn_overdispersion_test(multi)
  if (dirmn_fit(multi)$multinomial_limit) {
    expect_identical(unname(tm$statistic), 0)
    expect_identical(tm$p.value, 1)
  }
  # integer weights are repeated rows
  w <- rep(1:2, length.out = 70)
  expect_equal(dirmn_overdispersion_test(mite, weights = w)$statistic,
               dirmn_overdispersion_test(mite[rep(1:70, w), ])$statistic, tolerance = 1e-8)
})

test_that("both tests hold their size at 5% under multinomial sampling", {
  set.seed(25)
  reps <- 400L
  p <- c(0.4, 0.3, 0.2, 0.1)
  pv <- t(vapply(seq_len(reps), function(i) {
    x <- t(rmultinom(20, 30, p))
    s <- dirmn_overdispersion_test(x)
    c(lrt = s$p.value, score = s$score[["p.value"]])
  }, c(lrt = 0, score = 0)))
  size <- colMeans(pv <= 0.05)
  # within 3 Monte Carlo standard errors of 0.05 (the LRT may be a little
  # conservative)
  mc <- 3 * sqrt(0.05 * 0.95 / reps)
  expect_lt(abs(size[["score"]] - 0.05), mc)
  expect_lt(size[["lrt"]], 0.05 + mc)
  expect_gt(size[["lrt"]], 0.05 - 2 * mc)
  # and it rejects on overdispersed data
  expect_lt(dirmn_overdispersion_test(mite)$p.value, 1e-10)
})
