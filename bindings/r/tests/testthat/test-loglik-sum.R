set.seed(501)
xs <- random_counts(40, 7, seed = 501)
colnames(xs) <- paste0("c", 1:7)
alpha_s <- c(0.3, 1.7, 0.05, 4, 12, 0.9, 2.5)
w_s <- c(rep(1, 10), runif(25, 0, 3), 0, 0, 2, 2, 5)

test_that("the value matches the plain-R sum of lgamma log-likelihoods", {
  for (w in list(NULL, w_s)) {
    ww <- if (is.null(w)) rep(1, nrow(xs)) else w
    # the default is the log-likelihood with the multinomial coefficients
    s <- dirmn_loglik_sum(xs, alpha_s, weights = w)
    expect_rel_equal(s$value, ref_loglik_sum(xs, alpha_s, ww, full = TRUE), 1e-11)
    kernel <- dirmn_loglik_sum(xs, alpha_s, weights = w, full = FALSE)
    expect_rel_equal(kernel$value, ref_loglik_sum(xs, alpha_s, ww, full = FALSE), 1e-11)
    expect_identical(kernel$gradient, s$gradient)
  }
})

test_that("gradient and Hessian match the digamma/trigamma formulas", {
  s <- dirmn_loglik_sum(xs, alpha_s, weights = w_s)
  expect_named(s, c("value", "gradient", "hessian_diag", "hessian_scalar"))
  expect_named(s$gradient, colnames(xs))
  expect_rel_equal(unname(s$gradient), unname(ref_gradient(xs, alpha_s, w_s)), 1e-9)
  h <- ref_hessian(xs, alpha_s, w_s)
  expect_rel_equal(unname(s$hessian_diag), unname(h$diag), 1e-9)
  expect_rel_equal(s$hessian_scalar, h$scalar, 1e-9)
})

test_that("gradient and Hessian match finite differences of the plain-R log-likelihood", {
  s <- dirmn_loglik_sum(xs, alpha_s, weights = w_s)
  f <- function(a) ref_loglik_sum(xs, a, w_s)
  expect_lt(max_rel(unname(s$gradient), fd_gradient(f, alpha_s)), 1e-6)
  H <- diag(s$hessian_diag) + s$hessian_scalar
  # the Hessian against differences of the plain-R gradient
  H_fd <- fd_gradient(function(a) ref_gradient(xs, a, w_s), alpha_s)
  expect_lt(max(abs(H - H_fd)) / max(abs(H_fd)), 1e-6)
  expect_lt(max(abs(H - t(H_fd))) / max(abs(H_fd)), 1e-6)
})

test_that("derivatives with respect to log alpha follow the chain rule", {
  la <- log(alpha_s)
  s <- dirmn_loglik_sum(xs, la, weights = w_s, param = "logalpha")
  expect_rel_equal(s$value, ref_loglik_sum(xs, alpha_s, w_s), 1e-11)
  f <- function(l) ref_loglik_sum(xs, exp(l), w_s)
  expect_lt(max_rel(unname(s$gradient), fd_gradient(f, la)), 1e-6)
  # H = diag(h) + c alpha alpha' in log alpha
  H <- diag(s$hessian_diag) + s$hessian_scalar * outer(alpha_s, alpha_s)
  g_log <- function(l) exp(l) * ref_gradient(xs, exp(l), w_s)
  H_fd <- fd_gradient(g_log, la)
  expect_lt(max(abs(H - H_fd)) / max(abs(H_fd)), 1e-6)
})

test_that("every input form gives the same sums", {
  ref <- dirmn_loglik_sum(xs, alpha_s, weights = w_s)
  sp <- Matrix::Matrix(xs, sparse = TRUE)
  prepared <- dirmn_counts(xs, backend = "cpu")
  for (input in list(sp, methods::as(sp, "RsparseMatrix"), prepared, as.data.frame(xs),
                     xs + 0)) {
    s <- dirmn_loglik_sum(input, alpha_s, weights = w_s)
    expect_rel_equal(s$value, ref_loglik_sum(xs, alpha_s, w_s), 1e-11)
    expect_rel_equal(unname(s$gradient), unname(ref_gradient(xs, alpha_s, w_s)), 1e-9)
  }
  # a vector is one row
  v <- dirmn_loglik_sum(xs[5, ], alpha_s)
  expect_rel_equal(v$value, ref_loglik(xs[5, , drop = FALSE], alpha_s, full = TRUE), 1e-11)
  # repeated calls on a prepared table with changing weights stay right
  for (w in list(w_s, NULL, rev(w_s))) {
    ww <- if (is.null(w)) rep(1, nrow(xs)) else w
    expect_rel_equal(dirmn_loglik_sum(prepared, alpha_s, weights = w)$value,
                     ref_loglik_sum(xs, alpha_s, ww), 1e-11)
  }
})

test_that("bad arguments are dirmn errors naming what is wrong", {
  expect_error(dirmn_loglik_sum(xs, alpha_s[-1]), "length 6",
               class = "dirmn_error_dimension_mismatch")
  bad <- alpha_s
  bad[3] <- 0
  expect_error(dirmn_loglik_sum(xs, bad), "^column 3: alpha",
               class = "dirmn_error_invalid_parameter")
  bad[3] <- NA
  expect_error(dirmn_loglik_sum(xs, bad), "column 3: alpha is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_loglik_sum(xs, log(alpha_s) + c(0, 0, Inf, 0, 0, 0, 0), param = "logalpha"),
               "column 3", class = "dirmn_error_invalid_parameter")
  w <- w_s
  w[12] <- -1
  expect_error(dirmn_loglik_sum(xs, alpha_s, weights = w), "weight of row 12 is -1",
               class = "dirmn_error_invalid_parameter")
  w[12] <- NA
  expect_error(dirmn_loglik_sum(xs, alpha_s, weights = w), "weight of row 12 is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_loglik_sum(xs, alpha_s, weights = 1:3), "length 3",
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_loglik_sum(xs, matrix(1, 40, 7)), class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_loglik_sum(xs, alpha_s, full = NA), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_loglik_sum(xs, alpha_s, param = "log"), "param must be one of",
               class = "dirmn_error_invalid_argument")
  # log = TRUE was the old spelling of param = "logalpha"; it is gone
  expect_error(dirmn_loglik_sum(xs, log(alpha_s), log = TRUE), "unused argument")
})
