# Dirichlet-multinomial regression (dirmn_reg, issue #29): against MGLM
# 0.2.1 (the reference implementation of the model) and against plain-R
# references written from the model (helper-regression.R).

test_that("dirmn_reg matches MGLM::MGLMreg(dist = \"DM\") on MGLM's rnaseq", {
  skip_if(nzchar(Sys.getenv("DIRMN_TEST_UNDER_VALGRIND")), "MGLM is not run under valgrind")
  lib <- mglm_library()
  skip_if(is.null(lib), "MGLM 0.2.1 (shared/vendor/MGLM_0.2.1.tar.gz) is not available")
  loadNamespace("MGLM", lib.loc = lib)
  rnaseq <- mglm_rnaseq()
  Y <- as.matrix(rnaseq[, 1:6])
  rnaseq_formula <- Y ~ log(totalReads) + treatment + age + gender
  # (MGLMreg passes a non-list contrasts argument to model.matrix, which warns)
  m <- suppressWarnings(MGLM::MGLMreg(rnaseq_formula, data = rnaseq, dist = "DM"))
  fit <- dirmn_reg(rnaseq_formula, data = rnaseq)
  # MGLM stops at a gradient of up to 2e-3 (age, whose values reach 70):
  # its coefficients are those of the optimum to about 1e-5
  expect_lte(max_rel(unname(coef(fit)), unname(m@coefficients)), 1e-5)
  se <- matrix(sqrt(diag(vcov(fit))), nrow(coef(fit)))
  expect_lte(max_rel(se, unname(m@SE)), 1e-5)
  expect_equal(fit$loglik, m@logL, tolerance = 1e-8)
  expect_equal(AIC(fit), m@AIC, tolerance = 1e-8)
  expect_equal(BIC(fit), m@BIC, tolerance = 1e-8)
  expect_lte(max_rel(wald_test(fit)$statistic, unname(m@test[, 1L])), 1e-5)
  expect_equal(wald_test(fit)$p_value, unname(m@test[, 2L]), tolerance = 1e-5)
  expect_identical(rownames(wald_test(fit)), rownames(m@test))
  expect_lte(max_rel(unname(fitted(fit)), unname(m@fitted)), 1e-5)
  expect_identical(colnames(coef(fit)), colnames(Y))
})

test_that("dirmn_reg gives MGLM's published rnaseq results (constants)", {
  rnaseq <- mglm_rnaseq()
  skip_if(is.null(rnaseq), "MGLM 0.2.1's data (shared/vendor/MGLM_0.2.1.tar.gz) is not available")
  Y <- as.matrix(rnaseq[, 1:6])
  rnaseq_formula <- Y ~ log(totalReads) + treatment + age + gender
  fit <- dirmn_reg(rnaseq_formula, data = rnaseq)
  expect_true(fit$converged)
  expect_true(fit$hessian_definite)
  # MGLM 0.2.1's values, as it prints them
  expect_equal(as.numeric(logLik(fit)), -4386.94079033, tolerance = 1e-10)
  expect_equal(AIC(fit), 8833.88158065, tolerance = 1e-10)
  expect_equal(BIC(fit), 8932.83110165, tolerance = 1e-10)
  expect_equal(coef(fit)[1, 1], -0.89584994, tolerance = 1e-5)
  expect_equal(sqrt(vcov(fit)[1, 1]), 3.98450246, tolerance = 1e-6)
  expect_equal(wald_test(fit)$statistic,
               c(14.579069, 8.502549, 1851.437449, 13.131512, 4.133364), tolerance = 1e-6)
  expect_equal(attr(logLik(fit), "df"), 30)
  expect_equal(nobs(fit), 200)
  expect_identical(dimnames(coef(fit)),
                   list(c("(Intercept)", "log(totalReads)", "treatment", "age", "gender"),
                        paste0("X", 1:6)))
  # the response as columns of the data, and as a sparse matrix
  f2 <- dirmn_reg(cbind(X1, X2, X3, X4, X5, X6) ~ log(totalReads) + treatment + age + gender,
                  data = rnaseq)
  expect_equal(coef(f2), coef(fit), tolerance = 1e-12)
  sp <- Matrix::Matrix(Y, sparse = TRUE)
  f3 <- dirmn_reg(sp ~ log(totalReads) + treatment + age + gender, data = rnaseq)
  expect_equal(coef(f3), coef(fit), tolerance = 1e-12)
  expect_equal(vcov(f3), vcov(fit), tolerance = 1e-10)
})

test_that("the fit is the maximum of the plain-R log-likelihood, with its Hessian's standard errors", {
  pr <- reg_problem(n = 50L, seed = 5L)
  d <- pr$data
  fit <- dirmn_reg(y ~ x + z, data = d)
  x <- model.matrix(~ x + z, d)
  b <- as.vector(coef(fit))
  f <- function(beta) ref_reg_loglik(beta, x, pr$y)
  expect_equal(fit$loglik, f(b), tolerance = 1e-12)
  # a maximum: the central-difference gradient vanishes there
  g <- fd_gradient(f, b, rel = 1e-5)
  expect_lt(max(abs(g)), 1e-4)
  H <- fd_hessian(f, b)
  se_fd <- sqrt(diag(solve(-H)))
  expect_lte(max_rel(sqrt(diag(vcov(fit))), se_fd), 1e-4)
  expect_lte(max(abs(vcov(fit) - solve(-H))) / max(abs(solve(-H))), 1e-4)
  # the Wald statistics, from the covariance's blocks
  p <- ncol(x)
  for (i in seq_len(p)) {
    k <- i + p * (seq_len(ncol(pr$y)) - 1L)
    w <- drop(t(b[k]) %*% solve(vcov(fit)[k, k], b[k]))
    expect_equal(wald_test(fit)$statistic[[i]], w, tolerance = 1e-8)
    expect_equal(wald_test(fit)$p_value[[i]], pchisq(w, ncol(pr$y), lower.tail = FALSE),
                 tolerance = 1e-8)
  }
  expect_identical(wald_test(fit)$df, rep(4, p))
  # summary(): estimates, standard errors, z and p by the formulas
  s <- summary(fit)
  expect_identical(rownames(s$coefficients), rownames(vcov(fit)))
  expect_equal(unname(s$coefficients[, "Std. Error"]), unname(sqrt(diag(vcov(fit)))))
  se <- unname(sqrt(diag(vcov(fit))))
  expect_equal(unname(s$coefficients[, "z value"]), b / se)
  expect_equal(unname(s$coefficients[, "Pr(>|z|)"]), 2 * pnorm(-abs(b / se)))
  expect_identical(s$wald_test, wald_test(fit))
  ci <- confint(fit, level = 0.9)
  expect_equal(unname(ci[, 2L] - ci[, 1L]), 2 * qnorm(0.95) * se)
  expect_equal(unname(rowMeans(ci)), b)
  expect_identical(confint(fit, "b:x"), confint(fit)["b:x", , drop = FALSE])
  expect_error(confint(fit, "nonesuch"), "nonesuch", class = "dirmn_error_invalid_argument")
})

test_that("the standard errors are the library's, and summary() reads them", {
  pr <- reg_problem(n = 60L, seed = 4L)
  fit <- dirmn_reg(y ~ x + f, data = pr$data)
  se <- attr(fit, "std_errors")
  expect_identical(dimnames(se), dimnames(coef(fit)))
  expect_equal(as.vector(se), unname(sqrt(diag(vcov(fit)))), tolerance = 1e-12)
  # an object without them (saved by an earlier version) takes them from vcov()
  old <- fit
  attr(old, "std_errors") <- NULL
  expect_equal(summary(old)$coefficients, summary(fit)$coefficients, tolerance = 1e-12)
  expect_equal(confint(old), confint(fit), tolerance = 1e-12)
})

test_that("a wide fit (p V above 5000) keeps no covariance; standard errors and Wald tests stay", {
  # 40 rows x 2600 categories x 2 covariates = 5200 coefficients: solved in
  # the rows' dimension (Woodbury); the covariance matrix is not kept
  set.seed(7)
  n <- 40L
  nv <- 2600L
  d <- data.frame(x = rnorm(n))
  beta <- rbind(rnorm(nv, 0, 0.3), rnorm(nv, 0, 0.3))
  alpha <- exp(cbind(1, d$x) %*% beta)
  Y <- t(vapply(seq_len(n), function(b) {
    g <- rgamma(nv, alpha[b, ])
    stats::rmultinom(1L, 3L * nv, g / sum(g))[, 1L]
  }, numeric(nv)))
  expect_true(all(colSums(Y) > 0))
  fit <- dirmn_reg(Y ~ x, data = d)
  expect_true(fit$converged)
  expect_true(fit$hessian_definite)
  expect_identical(dim(coef(fit)), c(2L, nv))
  expect_equal(fit$parameters, 2 * nv)
  expect_null(fit$vcov)
  e <- expect_error(vcov(fit), class = "dirmn_error_not_supported")
  expect_match(conditionMessage(e),
               "the covariance of the 5200 coefficients is not kept above 5000 coefficients")
  expect_match(conditionMessage(e), "standard errors .* Wald tests")
  s <- summary(fit)
  se <- s$coefficients[, "Std. Error"]
  expect_length(se, 2L * nv)
  expect_true(all(is.finite(se) & se > 0))
  expect_true(all(s$coefficients[, "Pr(>|z|)"] >= 0 & s$coefficients[, "Pr(>|z|)"] <= 1))
  # the simulated coefficients, to within a few standard errors
  expect_lt(mean(abs(as.vector(coef(fit)) - as.vector(beta)) / se), 2)
  w <- wald_test(fit)
  expect_identical(w$df, rep(nv + 0, 2L))
  expect_true(all(w$statistic > 0 & w$p_value >= 0 & w$p_value <= 1))
  ci <- confint(fit)
  expect_identical(dim(ci), c(2L * nv, 2L))
  expect_equal(unname(ci[, 2L] - ci[, 1L]), unname(2 * qnorm(0.975) * se))
  expect_true(any(grepl("Wald tests of the covariates", capture.output(print(s)))))
  expect_identical(dim(predict(fit, newdata = d[1:3, , drop = FALSE])), c(3L, nv))
  # at 5000 coefficients the covariance is kept, its diagonal the standard errors
  d$Y5 <- Y[, 1:2500]
  f5 <- dirmn_reg(Y5 ~ x, data = d)
  expect_identical(dim(vcov(f5)), c(5000L, 5000L))
  expect_equal(unname(sqrt(diag(vcov(f5)))), unname(summary(f5)$coefficients[, "Std. Error"]),
               tolerance = 1e-12)
})

test_that("an intercept-only regression is dirmn_fit's alpha", {
  mite <- mite_table()
  fit <- dirmn_fit(mite)
  reg <- dirmn_reg(mite ~ 1)
  expect_lte(max_rel(drop(exp(coef(reg))), coef(fit)), 1e-8)
  expect_equal(reg$loglik, fit$loglik, tolerance = 1e-12)
  expect_lte(max_rel(sqrt(diag(vcov(reg))), fit$std_error_log_alpha), 1e-6)
  expect_identical(nobs(reg), nobs(fit))
  expect_identical(rownames(coef(reg)), "(Intercept)")
})

test_that("integer weights are repeated rows; rows of zeros count for nothing", {
  pr <- reg_problem(n = 60L, seed = 7L)
  d <- pr$data
  set.seed(2)
  w <- sample(0:3, nrow(d), replace = TRUE)
  d$w <- w
  fw <- dirmn_reg(y ~ x + f, data = d, weights = w)
  rep_rows <- d[rep(seq_len(nrow(d)), w), ]
  fr <- dirmn_reg(y ~ x + f, data = rep_rows)
  expect_lte(max_rel(coef(fw), coef(fr)), 1e-8)
  expect_equal(fw$loglik, fr$loglik, tolerance = 1e-8)
  expect_lte(max_rel(sqrt(diag(vcov(fw))), sqrt(diag(vcov(fr)))), 1e-8)
  expect_equal(nobs(fw), sum(w))
  expect_equal(nobs(fw), nobs(fr))
  expect_equal(BIC(fw), BIC(fr), tolerance = 1e-8)
  # weights given as a vector of the caller, not a column of data
  ww <- w
  fv <- dirmn_reg(y ~ x + f, data = d, weights = ww)
  expect_identical(coef(fv), coef(fw))
  # a row of zeros is no observation and changes nothing
  d0 <- d
  d0$y[1, ] <- 0
  f0 <- dirmn_reg(y ~ x + f, data = d0)
  f1 <- dirmn_reg(y ~ x + f, data = d[-1, ])
  expect_equal(coef(f0), coef(f1), tolerance = 1e-8)
  expect_equal(nobs(f0), nrow(d) - 1)
  # bad weights
  expect_error(dirmn_reg(y ~ x, data = d, weights = rep(-1, nrow(d))), "weight of row 1",
               class = "dirmn_error_invalid_parameter")
})

test_that("anova() is the likelihood-ratio test of nested fits", {
  pr <- reg_problem(n = 80L, seed = 3L)
  d <- pr$data
  f0 <- dirmn_reg(y ~ 1, data = d)
  f1 <- dirmn_reg(y ~ x, data = d)
  f2 <- dirmn_reg(y ~ x + f, data = d)
  a <- anova(f0, f2, f1)
  expect_s3_class(a, "anova")
  expect_identical(a$Parameters, c(4, 8, 16))
  expect_equal(a$logLik, c(f0$loglik, f1$loglik, f2$loglik))
  expect_equal(a$Df, c(NA, 4, 8))
  expect_equal(a$Chisq, c(NA, 2 * (f1$loglik - f0$loglik), 2 * (f2$loglik - f1$loglik)))
  expect_equal(a[["Pr(>Chisq)"]],
               c(NA, pchisq(a$Chisq[2:3], a$Df[2:3], lower.tail = FALSE)))
  expect_equal(a$AIC, c(AIC(f0), AIC(f1), AIC(f2)))
  expect_output(print(a), "Model 3: y ~ x \\+ f")
  # the factor shifts the composition: the test finds it
  expect_lt(a[["Pr(>Chisq)"]][3], 1e-3)
  # fits to other counts, the same number of parameters, models that are
  # not nested
  other <- dirmn_reg(y ~ x, data = d[-1, ])
  expect_error(anova(f0, other), "other counts", class = "dirmn_error_invalid_argument")
  expect_error(anova(f1, dirmn_reg(y ~ z, data = d)), "same number of parameters",
               class = "dirmn_error_invalid_argument")
  expect_warning(anova(dirmn_reg(y ~ z, data = d), f2), "not nested",
                 class = "dirmn_argument_warning")
  expect_error(anova(f1), "two or more", class = "dirmn_error_invalid_argument")
  expect_error(anova(f1, dirmn_fit(d$y)), "model 2 is not", class = "dirmn_error_invalid_argument")
})

test_that("predict() on the training data is fitted(); proportions sum to 1", {
  pr <- reg_problem(n = 60L, seed = 9L)
  d <- pr$data
  fit <- dirmn_reg(y ~ x + f + x:f, data = d)
  x <- model.matrix(~ x + f + x:f, d)
  alpha <- exp(x %*% coef(fit))
  expect_equal(predict(fit, newdata = d), alpha, tolerance = 1e-13, ignore_attr = TRUE)
  expect_equal(predict(fit, newdata = d), fitted(fit, type = "alpha"))
  expect_equal(predict(fit), fitted(fit, type = "alpha"))
  pp <- predict(fit, newdata = d, type = "proportion")
  expect_equal(pp, fitted(fit))
  expect_equal(unname(rowSums(pp)), rep(1, nrow(d)))
  expect_identical(colnames(pp), colnames(d$y))
  # new rows, with a subset of the factor's levels, coded as in the fit
  new <- data.frame(x = c(-1, 0.5), f = factor(c("hi", "hi"), levels = c("mid", "hi")))
  newx <- cbind(1, new$x, 0, 1, 0, new$x)
  expect_equal(unname(predict(fit, newdata = new)), unname(exp(newx %*% coef(fit))),
               tolerance = 1e-13)
  expect_error(predict(fit, data.frame(x = 1, f = "top")), "new level")
  # NA covariates give NA rows
  na_new <- data.frame(x = c(NA, 1), f = factor(c("lo", "lo"), levels = c("lo", "mid", "hi")))
  out <- predict(fit, na_new)
  expect_true(all(is.na(out[1, ])))
  expect_equal(unname(out[2, ]), unname(predict(fit, na_new[2, ])[1, ]))
  expect_identical(dim(predict(fit, d[0, ])), c(0L, 4L))
  # a fit restored from disk (its library handle gone) predicts from its
  # coefficients
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  restored <- readRDS(path)
  unlink(path)
  expect_equal(predict(restored, newdata = new), predict(fit, newdata = new), tolerance = 1e-13)
  expect_equal(fitted(restored), fitted(fit), tolerance = 1e-13)
  expect_error(predict(fit, type = "prob"), "\"alpha\", \"proportion\"",
               class = "dirmn_error_invalid_argument")
})

test_that("residuals() follow the Dirichlet-multinomial mean and variance", {
  pr <- reg_problem(n = 40L, seed = 4L)
  d <- pr$data
  d$y[3, ] <- 0
  fit <- dirmn_reg(y ~ x, data = d)
  y <- d$y
  n <- rowSums(y)
  alpha <- exp(model.matrix(~ x, d) %*% coef(fit))
  A <- rowSums(alpha)
  p <- alpha / A
  r <- residuals(fit, type = "response")
  expect_equal(unname(r[-3, ]), unname((y / n - p)[-3, ]))
  expect_true(all(is.na(r[3, ])))
  expect_equal(unname(rowSums(r[-3, ])), rep(0, nrow(y) - 1))
  pe <- residuals(fit)
  v <- n * p * (1 - p) * (n + A) / (1 + A)
  expect_equal(unname(pe[-3, ]), unname(((y - n * p) / sqrt(v))[-3, ]))
  expect_identical(unname(pe[3, ]), rep(0, 4))
  # the DM variance, checked by simulation at one row's alpha
  dev <- residuals(fit, type = "deviance")
  sat <- lgamma(n + 1) - rowSums(lgamma(y + 1)) + rowSums(ifelse(y > 0, y * log(y / n), 0))
  ll <- vapply(seq_len(nrow(y)), function(b) ref_loglik(y[b, , drop = FALSE], alpha[b, ]), 0)
  expect_equal(unname(dev), sqrt(pmax(2 * (sat - ll), 0)), tolerance = 1e-10)
  expect_true(all(dev >= 0))
  expect_identical(dev[[3]], 0)
  expect_identical(dimnames(pe), dimnames(fitted(fit)))
})

test_that("na.action: rows with missing covariates are left out as lm() leaves them", {
  pr <- reg_problem(n = 50L, seed = 6L)
  d <- pr$data
  d$x[c(4, 9)] <- NA
  d$z[12] <- NaN
  fit <- dirmn_reg(y ~ x + z, data = d)
  ref <- dirmn_reg(y ~ x + z, data = d[-c(4, 9, 12), ])
  expect_identical(coef(fit), coef(ref))
  expect_equal(nobs(fit), 47)
  expect_identical(nrow(fitted(fit)), 47L)
  ex <- dirmn_reg(y ~ x + z, data = d, na.action = na.exclude)
  expect_identical(coef(ex), coef(fit))
  expect_identical(nrow(fitted(ex)), 50L)
  expect_true(all(is.na(residuals(ex)[c(4, 9, 12), ])))
  expect_equal(residuals(ex)[-c(4, 9, 12), ], residuals(fit))
  expect_error(dirmn_reg(y ~ x + z, data = d, na.action = na.fail), "missing values")
  # subset, as lm()'s
  sub <- dirmn_reg(y ~ x + z, data = d, subset = f != "hi")
  expect_identical(coef(sub), coef(dirmn_reg(y ~ x + z, data = d[d$f != "hi", ])))
  # a covariate that is still not finite is named by row and column
  d$z[20] <- Inf
  e <- expect_error(dirmn_reg(y ~ x + z, data = d), class = "dirmn_error_invalid_parameter")
  expect_match(conditionMessage(e), "row 17 \\(\"20\"\\), covariate 3 \\(z\\): covariate Inf is not finite")
  e <- expect_error(dirmn_reg(y ~ x + z, data = d[-c(4, 9, 12), ], na.action = na.pass),
                    class = "dirmn_error_invalid_parameter")
  expect_match(conditionMessage(e), "covariate 3 \\(z\\)")
})

test_that("bad designs and responses are errors of dirmn's classes that name the culprit", {
  pr <- reg_problem(n = 40L, seed = 8L)
  d <- pr$data
  d$x2 <- d$x
  e <- expect_error(dirmn_reg(y ~ x + z + x2, data = d), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "^covariate 4 \\(x2\\): the design is not of full column rank")
  expect_identical(e$call[[1L]], as.name("dirmn_reg"))
  d$three <- 3 * d$z - d$x
  expect_error(dirmn_reg(y ~ x + z + three, data = d), "covariate 4 \\(three\\)",
               class = "dirmn_error_invalid_argument")
  # a category without counts
  y0 <- d$y
  y0[, 3] <- 0
  e <- expect_error(dirmn_reg(y0 ~ x, data = d), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "^category 3 \\(c\\): the category has no counts")
  # more covariates than rows with counts
  expect_error(dirmn_reg(y ~ x + z + f, data = d[1:3, ]), "rows with counts",
               class = "dirmn_error_invalid_argument")
  # a Newton system beyond DIRMN_REG_MAX_SYSTEM (8000) unknowns: 8001
  # coefficients (an intercept, 8001 categories) and 8001 rows with counts
  n <- 8001L
  big <- Matrix::sparseMatrix(i = seq_len(n), j = seq_len(n), x = 1)
  e <- expect_error(dirmn_reg(big ~ 1), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "8001 coefficients and 8001 rows with counts")
  expect_match(conditionMessage(e), "DIRMN_REG_MAX_SYSTEM", fixed = TRUE)
  # counts that are not counts, named by row and column of the response
  yf <- d$y
  yf[2, 4] <- 1.5
  expect_error(dirmn_reg(yf ~ x, data = d), "row 2, column 4",
               class = "dirmn_error_invalid_counts")
  # responses and formulas that are not a regression of counts
  expect_error(dirmn_reg(x ~ z, data = d), "matrix of counts", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg(~ x, data = d), "two-sided", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg(y ~ x + offset(z), data = d), "offsets",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg(y ~ 0, data = d), "no covariates", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg(y ~ x, data = d, tolerance = -1), "tolerance",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg(y ~ x, data = d, dist = "DM"), "unused argument dist",
               class = "dirmn_error_invalid_argument")
})

test_that("verbose reports Newton steps; max_iterations stops with a warning", {
  pr <- reg_problem(n = 40L, seed = 10L)
  d <- pr$data
  msgs <- character()
  fit <- withCallingHandlers(dirmn_reg(y ~ x, data = d, verbose = TRUE), message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  expect_length(msgs, fit$iterations)
  expect_match(msgs[[1L]], "^dirmn_reg: iteration 1, log-likelihood -[0-9.]+, gradient norm")
  expect_match(msgs[[length(msgs)]], sprintf("log-likelihood %.12g,", fit$loglik), fixed = TRUE)
  w <- expect_warning(short <- dirmn_reg(y ~ x, data = d, max_iterations = 1L),
                      "did not converge in 1 iteration", class = "dirmn_convergence_warning")
  expect_false(short$converged)
  expect_identical(short$iterations, 1L)
  expect_true(fit$converged)
  expect_gte(fit$loglik, short$loglik)
  expect_output(print(short), "NOT converged")
  # predict() of another fit from a progress handler, while the fit runs on
  # the same context, is refused (the library serves one call at a time)
  e <- NULL
  withCallingHandlers(dirmn_reg(y ~ x, data = d, verbose = TRUE), message = function(m) {
    if (is.null(e)) e <<- tryCatch(predict(fit, d[1:2, ]), error = identity)
    invokeRestart("muffleMessage")
  })
  expect_s3_class(e, "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "handler of a fit's progress messages")
  expect_identical(dim(predict(fit, d[1:2, ])), c(2L, 4L))
  # a progress handler that stops the fit with an error
  expect_error(withCallingHandlers(dirmn_reg(y ~ x, data = d, verbose = TRUE),
                                   message = function(m) stop("stop here")), "stop here")
})

test_that("print() and summary() show the fit; handles are freed by the garbage collector", {
  pr <- reg_problem(n = 40L, seed = 12L)
  fit <- dirmn_reg(y ~ x + f, data = pr$data)
  expect_output(print(fit), "Dirichlet-multinomial regression")
  expect_output(print(fit), "4 covariates, 4 categories")
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("^Category d:", out)))
  expect_true(any(grepl("Wald tests of the covariates", out)))
  expect_true(any(grepl("^fhi ", out)))
  gc()
  live <- dirmn:::cpp_live_regressions()
  local(for (i in 1:3) dirmn_reg(y ~ x, data = pr$data))
  expect_identical(dirmn:::cpp_live_regressions(), live + 3)
  gc()
  expect_identical(dirmn:::cpp_live_regressions(), live)
})
