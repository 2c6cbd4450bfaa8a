# Parameters are matched to the table's columns by name where both carry
# names (issue #25).
mite <- mite_table()

test_that("ddirmn matches a named alpha to named columns; other names are refused", {
  alpha <- setNames(seq(0.5, 3, length.out = 35), colnames(mite))
  rev_x <- mite[, 35:1]
  ref <- log(extraDistr::ddirmnom(mite, rowSums(mite), alpha))
  expect_equal(unname(ddirmn(rev_x, alpha, log = TRUE)), ref, tolerance = 1e-12)
  expect_equal(ddirmn(rev_x, alpha, log = TRUE), ddirmn(mite, alpha, log = TRUE))
  # prepared and sparse tables, K vectors and one per row
  counts <- dirmn_counts(rev_x)
  expect_equal(unname(ddirmn(counts, alpha, log = TRUE)), ref, tolerance = 1e-12)
  close(counts)
  sp <- Matrix::Matrix(rev_x, sparse = TRUE)
  expect_equal(unname(ddirmn(sp, alpha, log = TRUE)), ref, tolerance = 1e-12)
  K <- rbind(a = alpha, b = rev(alpha))
  expect_equal(ddirmn(rev_x, K, log = TRUE), ddirmn(mite, K, log = TRUE))
  rw <- matrix(alpha, 70, 35, byrow = TRUE, dimnames = list(NULL, colnames(mite)))
  expect_equal(unname(ddirmn(rev_x, rw, rowwise = TRUE, log = TRUE)), ref, tolerance = 1e-12)
  # names that are not the columns'
  bad <- alpha
  names(bad)[3] <- "Nonesuch"
  e <- expect_error(ddirmn(mite, bad), class = "dirmn_error_dimension_mismatch")
  expect_match(conditionMessage(e), "\"Nonesuch\" is not a column of x")
  expect_match(conditionMessage(e), sprintf("\"%s\" of x is missing from alpha", colnames(mite)[3]))
  # without names on either side, positions count
  expect_equal(ddirmn(unname(rev_x), alpha), unname(ddirmn(rev_x, unname(alpha))))
})

test_that("dirmn_loglik_sum, dirmn_fit's start and predict() match by name too", {
  alpha <- setNames(seq(0.5, 3, length.out = 35), colnames(mite))
  rev_x <- mite[, 35:1]
  s <- dirmn_loglik_sum(rev_x, alpha)
  expect_equal(s$value, ref_loglik_sum(mite, alpha), tolerance = 1e-10)
  expect_equal(s$gradient, ref_gradient(mite, alpha)[35:1], tolerance = 1e-8)
  expect_identical(names(s$gradient), colnames(rev_x))
  names(alpha)[1] <- "x"
  expect_error(dirmn_loglik_sum(mite, alpha), "\"x\"", class = "dirmn_error_dimension_mismatch")
  fit <- dirmn_fit(mite)
  f2 <- dirmn_fit(mite, start = rev(coef(fit)) * 2)
  expect_equal(coef(f2), coef(fit), tolerance = 1e-6)
  m <- dirmn_mixture(mite, k = 3, starts = 1L)
  expect_equal(predict(m, rev_x), predict(m, mite), tolerance = 1e-10)
  expect_identical(predict(m, rev_x, type = "class"), predict(m, mite, type = "class"))
  other <- mite
  colnames(other)[2] <- "Other"
  expect_error(predict(m, other), "\"Other\"", class = "dirmn_error_dimension_mismatch")
})

test_that("predict() matches a new precision design's columns to the fit's by name", {
  set.seed(5)
  d <- data.frame(x = rnorm(40), u = rnorm(40), v = runif(40))
  y <- matrix(rpois(160, 8), 40, 4)
  z <- cbind(one = 1, u = d$u, v = d$v)
  fit <- dirmn_reg(y ~ x, data = d, parametrization = "meanprecision", precision_design = z)
  nd <- data.frame(x = c(-1, 0.5))
  znew <- cbind(one = 1, u = c(0.2, -0.4), v = c(0.9, 0.1))
  # by hand: exp(z gamma) softmax(x beta)
  eta <- cbind(1, nd$x) %*% coef(fit)
  ref <- exp(drop(znew %*% fit$log_precision)) * exp(eta) / rowSums(exp(eta))
  expect_equal(unname(predict(fit, newdata = nd, precision_design = znew[, c(3, 1, 2)])),
               unname(ref), tolerance = 1e-12)
  bad <- znew
  colnames(bad)[2] <- "w"
  e <- expect_error(predict(fit, newdata = nd, precision_design = bad),
                    class = "dirmn_error_dimension_mismatch")
  expect_match(conditionMessage(e), "\"w\" is not a column of the fit's precision design")
  expect_match(conditionMessage(e), "\"u\" of the fit's precision design is missing from precision_design")
  # without names on either side, positions count; a fit's matrix without
  # column names has its own (z1, ...), which a new matrix's names do not contradict
  expect_equal(predict(fit, newdata = nd, precision_design = unname(znew)),
               predict(fit, newdata = nd, precision_design = znew))
  fu <- dirmn_reg(y ~ x, data = d, parametrization = "meanprecision", precision_design = unname(z))
  expect_identical(names(fu$log_precision), c("z1", "z2", "z3"))
  expect_equal(predict(fu, newdata = nd, precision_design = znew),
               predict(fu, newdata = nd, precision_design = unname(znew)))
  expect_equal(predict(fu, newdata = nd, precision_design = znew[, c(3, 1, 2)]),
               predict(fu, newdata = nd, precision_design = unname(znew)[, c(3, 1, 2)]))
})
