# The mean/precision parametrisation of dirmn_reg (alpha = phi softmax(X
# beta), one precision phi = exp(gamma)): against the plain-R log-likelihood
# of helper-regression.R (ref_mp_loglik) maximised by optim(), against
# dirmn_fit() for an intercept alone, and sum-to-zero against reference
# contrasts.

test_that("the mean/precision fit: its fields, coefficients, vcov and precision", {
  pr <- mp_problem()
  fit <- dirmn_reg(y ~ x, data = pr$data, parametrization = "meanprecision",
                   tolerance = 1e-14)
  V <- ncol(pr$y)
  expect_true(fit$converged)
  expect_true(fit$hessian_definite)
  expect_identical(fit$parametrization, "meanprecision")
  expect_identical(fit$contrast, "reference")
  expect_identical(fit$reference, 1L)
  expect_equal(fit$parameters, 2 * (V - 1) + 1)
  expect_identical(dim(coef(fit)), c(2L, V))
  expect_identical(unname(coef(fit)[, "a"]), c(0, 0))
  expect_equal(fit$precision, exp(fit$log_precision))
  expect_gt(fit$std_error_log_precision, 0)
  nm <- c("b:(Intercept)", "b:x", "c:(Intercept)", "c:x", "d:(Intercept)", "d:x",
          "(log precision)")
  expect_identical(dimnames(vcov(fit)), list(nm, nm))
  expect_equal(unname(sqrt(diag(vcov(fit)))),
               c(as.vector(attr(fit, "std_errors")[, -1]), fit$std_error_log_precision),
               tolerance = 1e-12)
  expect_identical(unname(attr(fit, "std_errors")[, "a"]), c(0, 0))
  ll <- logLik(fit)
  expect_equal(attr(ll, "df"), 7)
  expect_equal(AIC(fit), -2 * fit$loglik + 14, tolerance = 1e-12)
  expect_equal(BIC(fit), -2 * fit$loglik + 7 * log(60), tolerance = 1e-12)
  # the summary: three category tables (not the reference's), the
  # precision, Wald tests on V - 1 df
  s <- summary(fit)
  expect_identical(rownames(s$coefficients), nm[-7])
  expect_identical(unname(s$coefficients[, "Std. Error"]), unname(sqrt(diag(vcov(fit))))[-7])
  expect_equal(unname(s$precision[1, ]),
               c(fit$log_precision, fit$std_error_log_precision, fit$precision))
  expect_identical(wald_test(fit)$df, rep(V - 1, 2))
  out <- capture.output(print(s))
  expect_true(any(grepl("mean/precision", out)))
  expect_true(any(grepl("^Reference category: a \\(its coefficients are 0\\)", out)))
  expect_false(any(grepl("^Category a:", out)))
  expect_true(any(grepl("^Category d:", out)))
  expect_true(any(grepl("^\\(log precision\\)", out)))
  expect_true(any(grepl("Wald tests of the covariates", out)))
  expect_output(print(fit), "Precision: phi = ")
  ci <- confint(fit)
  expect_identical(rownames(ci), nm)
  expect_equal(unname(rowMeans(ci)), c(as.vector(coef(fit)[, -1]), fit$log_precision))
  # a log-linear fit has none of it
  ll_fit <- dirmn_reg(y ~ x, data = pr$data)
  expect_identical(ll_fit$parametrization, "loglinear")
  expect_null(ll_fit$contrast)
  expect_null(ll_fit$precision)
  expect_null(ll_fit$log_precision)
  expect_equal(ll_fit$parameters, 2 * V)
})

test_that("mean/precision is the maximum of the plain-R log-likelihood (optim)", {
  pr <- mp_problem()
  fit <- dirmn_reg(y ~ x, data = pr$data, parametrization = "meanprecision",
                   tolerance = 1e-14)
  theta <- c(as.vector(coef(fit)[, -1]), fit$log_precision)
  f <- function(t) ref_mp_loglik(t, pr$x, pr$y)
  expect_equal(fit$loglik, f(theta), tolerance = 1e-12)
  # an independent optimiser from zeros (the objective scaled to order 1, so
  # that BFGS's first steps stay where the lgamma form is accurate)
  start <- rep(0, length(theta))
  o <- optim(start, function(t) -f(t), method = "BFGS",
             control = list(reltol = 1e-15, maxit = 2000L, fnscale = abs(f(start))))
  expect_identical(o$convergence, 0L)
  expect_gte(fit$loglik, -o$value - 1e-6)
  expect_lt(max(abs(o$par - theta)), 1e-3)
  # the standard errors and covariance: the finite-difference Hessian's
  H <- fd_hessian(f, theta)
  C <- solve(-H)
  expect_lte(max_rel(unname(sqrt(diag(vcov(fit)))), sqrt(diag(C))), 1e-3)
  # the Wald test of x over its V - 1 free coefficients
  k <- c(2L, 4L, 6L)
  w <- drop(t(theta[k]) %*% solve(C[k, k], theta[k]))
  expect_equal(wald_test(fit)["x", "statistic"], w, tolerance = 1e-3)
  expect_equal(wald_test(fit)["x", "p_value"],
               pchisq(wald_test(fit)["x", "statistic"], 3, lower.tail = FALSE),
               tolerance = 1e-10)
  # the simulation's precision, roughly
  expect_lt(abs(fit$log_precision - log(pr$phi)), 4 * fit$std_error_log_precision)
})

test_that("mean/precision with an intercept alone is dirmn_fit's", {
  mite <- mite_table()
  fit <- dirmn_fit(mite)
  reg <- dirmn_reg(mite ~ 1, parametrization = "meanprecision", tolerance = 1e-14)
  expect_equal(reg$loglik, fit$loglik, tolerance = 1e-10)
  expect_equal(reg$parameters, ncol(mite))
  expect_identical(nobs(reg), nobs(fit))
  alpha <- predict(reg, newdata = data.frame(row = 1))
  expect_lte(max_rel(drop(alpha), unname(coef(fit))), 1e-6)
  expect_equal(reg$precision, fit$precision, tolerance = 1e-6)
  p <- predict(reg, newdata = data.frame(row = 1), type = "proportion")
  expect_equal(unname(drop(p)), unname(coef(fit) / sum(coef(fit))), tolerance = 1e-6)
})

test_that("sum-to-zero and reference contrasts are the same fit", {
  pr <- mp_problem(seed = 22L)
  d <- pr$data
  fr <- dirmn_reg(y ~ x + g, data = d, parametrization = "meanprecision", tolerance = 1e-14)
  fz <- dirmn_reg(y ~ x + g, data = d, parametrization = "meanprecision", contrast = "sum",
                  reference = "d", tolerance = 1e-14)
  expect_identical(fz$contrast, "sum")
  expect_identical(fz$reference, 4L)
  expect_equal(fz$loglik, fr$loglik, tolerance = 1e-10)
  expect_equal(fz$parameters, fr$parameters)
  br <- coef(fr)
  expect_lt(max(abs(rowSums(coef(fz)))), 1e-12)
  # the betas differ by each covariate's mean over the categories
  expect_lt(max(abs(coef(fz) - (br - rowMeans(br)))), 1e-7)
  expect_equal(wald_test(fz)$statistic, wald_test(fr)$statistic, tolerance = 1e-7)
  expect_identical(wald_test(fz)$df, wald_test(fr)$df)
  expect_equal(fz$log_precision, fr$log_precision, tolerance = 1e-8)
  expect_equal(predict(fz, newdata = d[1:5, ]), predict(fr, newdata = d[1:5, ]), tolerance = 1e-8)
  # the implied category's standard errors: from the covariance of the sum
  C <- vcov(fz)
  expect_false("d:x" %in% rownames(C))
  k <- paste0(c("a", "b", "c"), ":x")
  expect_equal(attr(fz, "std_errors")["x", "d"], sqrt(sum(C[k, k])), tolerance = 1e-10)
  s <- summary(fz)
  expect_true("d:x" %in% rownames(s$coefficients))
  out <- capture.output(print(s))
  expect_true(any(grepl("^Category d \\(implied", out)))
  expect_true(any(grepl("sum to 0 \\(category d implied\\)", out)))
  # another reference category by number: the same fit, its column 0
  f3 <- dirmn_reg(y ~ x + g, data = d, parametrization = "meanprecision", reference = 3,
                  tolerance = 1e-14)
  expect_identical(unname(coef(f3)[, 3]), c(0, 0, 0))
  expect_lt(max(abs(coef(f3) - (br - br[, 3]))), 1e-7)
  expect_equal(f3$loglik, fr$loglik, tolerance = 1e-10)
})

test_that("anova() of mean/precision fits: an intercept alone against two groups is V - 1 df", {
  pr <- mp_problem(seed = 23L)
  d <- pr$data
  V <- ncol(pr$y)
  f0 <- dirmn_reg(y ~ 1, data = d, parametrization = "meanprecision")
  f1 <- dirmn_reg(y ~ g, data = d, parametrization = "meanprecision")
  a <- anova(f1, f0)
  expect_identical(a$Parameters, c(V, 2 * (V - 1) + 1))
  expect_equal(a$Df, c(NA, V - 1))
  expect_equal(a$Chisq[2], 2 * (f1$loglik - f0$loglik))
  expect_equal(a[["Pr(>Chisq)"]][2], pchisq(a$Chisq[2], V - 1, lower.tail = FALSE))
  expect_identical(wald_test(f1)["gw", "df"], V - 1)
  # the shared-alpha model is within either parametrisation; other mixes
  # are not nested
  ll1 <- dirmn_reg(y ~ g, data = d)
  expect_silent(anova(f0, ll1))
  expect_warning(anova(f1, dirmn_reg(y ~ x + g, data = d)), "different parametrizations",
                 class = "dirmn_argument_warning")
})

test_that("predict() of a mean/precision fit is phi softmax(X beta), also restored from disk", {
  pr <- mp_problem(seed = 24L)
  d <- pr$data
  fit <- dirmn_reg(y ~ x + g, data = d, parametrization = "meanprecision")
  x <- model.matrix(~ x + g, d)
  alpha <- ref_mp_alpha(x, coef(fit), fit$precision)
  expect_equal(unname(predict(fit)), unname(alpha), tolerance = 1e-12)
  expect_equal(unname(rowSums(predict(fit, newdata = d))), rep(fit$precision, nrow(d)),
               tolerance = 1e-12)
  pp <- predict(fit, newdata = d, type = "proportion")
  expect_equal(unname(pp), unname(alpha / fit$precision), tolerance = 1e-12)
  expect_equal(fitted(fit), pp)
  r <- residuals(fit, type = "response")
  expect_equal(unname(r), unname(pr$y / rowSums(pr$y) - pp))
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  restored <- readRDS(path)
  unlink(path)
  expect_equal(predict(restored, newdata = d[1:4, ]), predict(fit, newdata = d[1:4, ]),
               tolerance = 1e-13)
})

test_that("bad parametrizations, contrasts and references are errors naming the value", {
  pr <- mp_problem(n = 30L, seed = 25L)
  d <- pr$data
  e <- expect_error(dirmn_reg(y ~ x, data = d, parametrization = "mean_precision"),
                    class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e),
               "parametrization must be one of \"loglinear\", \"meanprecision\", not \"mean_precision\"",
               fixed = TRUE)
  e <- expect_error(dirmn_reg(y ~ x, data = d, parametrization = "meanprecision",
                              contrast = "helmert"), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "contrast must be one of \"reference\", \"sum\", not \"helmert\"",
               fixed = TRUE)
  for (bad in list(0, 5, 1.5, NA, c(1, 2), TRUE)) {
    e <- expect_error(dirmn_reg(y ~ x, data = d, parametrization = "meanprecision",
                                reference = bad), class = "dirmn_error_invalid_argument")
    expect_match(conditionMessage(e), "^reference must be a category, a number from 1 to 4")
  }
  e <- expect_error(dirmn_reg(y ~ x, data = d, parametrization = "meanprecision",
                              reference = "z"), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "reference \"z\" is not a category: the categories are \"a\"")
  expect_identical(e$call[[1L]], as.name("dirmn_reg"))
})
