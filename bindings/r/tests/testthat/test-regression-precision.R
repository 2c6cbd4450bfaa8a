# Covariates on the precision of the mean/precision model (dirmn_reg(...,
# precision_design = ~ z)): alpha_b = exp(z_b gamma) softmax(x_b beta).
# Against the model's log-likelihood written here in plain R (lgamma)
# maximised by optim(), its numerical Hessian (optimHess), alpha computed
# by hand, the fit without a design (an intercept alone), a
# reparametrised design and replicated rows.

# The log-likelihood (with the multinomial coefficients) of counts y under
# designs x (mean) and z (precision): theta holds the free coefficients in
# the library's order, vec(beta) without the first (reference) category's
# column, then gamma; rows weighted by w.
ref_prec_loglik <- function(theta, x, z, y, w = rep(1, nrow(y))) {
  p <- ncol(x)
  V <- ncol(y)
  k <- p * (V - 1L)
  beta <- cbind(0, matrix(theta[seq_len(k)], p, V - 1L))
  alpha <- ref_prec_alpha(x, z, beta, theta[k + seq_len(ncol(z))])
  n <- rowSums(y)
  A <- rowSums(alpha)
  sum(w * (lgamma(A) - lgamma(n + A) + rowSums(lgamma(y + alpha) - lgamma(alpha)) +
             lgamma(n + 1) - rowSums(lgamma(y + 1))))
}

# alpha_b = exp(z_b gamma) softmax(x_b beta), rows x V.
ref_prec_alpha <- function(x, z, beta, gamma) {
  eta <- x %*% beta
  e <- exp(eta - apply(eta, 1L, max))
  unname(exp(drop(z %*% gamma)) * e / rowSums(e))
}

# Two groups of rows with precisions 8 and 48 (log 8 = 2.08, log 6 = 1.79
# between them), proportions moving with x; 120 rows, 4 categories, sizes
# 60 to 120. `w` is a second, unrelated covariate.
precision_problem <- function(seed = 20240607L) {
  set.seed(seed)
  n <- 120L
  d <- data.frame(x = round(rnorm(n), 3), group = factor(rep(c("a", "b"), each = n / 2L)),
                  w = round(runif(n), 3))
  x <- model.matrix(~ x, d)
  z <- model.matrix(~ group, d)
  beta <- cbind(A = c(0, 0), B = c(0.4, -0.5), C = c(-0.3, 0.3), D = c(0.6, 0.2))
  gamma <- c(log(8), log(48 / 8))
  y <- ref_dm_counts(ref_prec_alpha(x, z, beta, gamma), sample(60:120, n, TRUE))
  colnames(y) <- colnames(beta)
  d$y <- y
  list(data = d, x = x, z = z, y = y, beta = beta, gamma = gamma)
}

fit_precision <- function(data, precision_design = ~ group, ...) {
  dirmn_reg(y ~ x, data = data, parametrization = "meanprecision",
            precision_design = precision_design, tolerance = 1e-14, ...)
}

# The free coefficients of a fit in the library's order.
free_theta <- function(fit) c(as.vector(coef(fit)[, -1L]), fit$log_precision)

test_that("the fit is the maximum of the plain-R log-likelihood, its standard errors the numerical Hessian's", {
  pr <- precision_problem()
  fit <- fit_precision(pr$data)
  expect_true(fit$converged)
  expect_true(fit$hessian_definite)
  theta <- unname(free_theta(fit))
  f <- function(t) ref_prec_loglik(t, pr$x, pr$z, pr$y)
  expect_equal(fit$loglik, f(theta), tolerance = 1e-12)
  # BFGS from the fit's neighbourhood (the objective scaled to order 1)
  start <- theta + rep(c(0.05, -0.05), length.out = length(theta))
  o <- optim(start, function(t) -f(t), method = "BFGS",
             control = list(reltol = 1e-15, maxit = 5000L, fnscale = abs(f(start))))
  expect_identical(o$convergence, 0L)
  expect_lt(abs(-o$value - fit$loglik) / abs(fit$loglik), 1e-6)
  expect_gte(fit$loglik, -o$value - 1e-6)
  expect_lt(max(abs(o$par - theta)), 1e-3)
  # the covariance: the inverse of the numerical Hessian of -loglik
  C <- solve(optimHess(theta, function(t) -f(t)))
  expect_lte(max_rel(unname(sqrt(diag(vcov(fit)))), sqrt(diag(C))), 1e-3)
  expect_lte(max(abs(unname(vcov(fit)) - C)) / max(abs(C)), 1e-3)
  se <- fit$std_error_log_precision
  expect_lte(max_rel(unname(se), sqrt(diag(C))[7:8]), 1e-3)
  # the simulation's precisions, roughly
  expect_lt(max(abs(fit$log_precision - pr$gamma) / se), 4)
})

test_that("the fit's precision fields, names, df and tables", {
  pr <- precision_problem()
  fit <- fit_precision(pr$data)
  gamma <- fit$log_precision
  expect_identical(names(gamma), c("(Intercept)", "groupb"))
  expect_identical(names(fit$std_error_log_precision), names(gamma))
  expect_identical(colnames(fit$precision_design), names(gamma))
  expect_equal(unname(fit$precision_design), unname(pr$z))
  expect_equal(unname(fit$precision), unname(exp(drop(pr$z %*% gamma))), tolerance = 1e-14)
  expect_identical(deparse(fit$precision_formula), "~group")
  # P = p (V - 1) + q free coefficients
  expect_identical(fit$parameters, 2 * 3 + 2)
  ll <- logLik(fit)
  expect_identical(attr(ll, "df"), 8)
  expect_identical(nobs(fit), 120)
  expect_equal(AIC(fit), -2 * fit$loglik + 2 * 8, tolerance = 1e-12)
  expect_equal(BIC(fit), -2 * fit$loglik + 8 * log(120), tolerance = 1e-12)
  nm <- c("B:(Intercept)", "B:x", "C:(Intercept)", "C:x", "D:(Intercept)", "D:x",
          "(precision):(Intercept)", "(precision):groupb")
  expect_identical(dimnames(vcov(fit)), list(nm, nm))
  expect_equal(unname(sqrt(diag(vcov(fit)))[7:8]), unname(fit$std_error_log_precision),
               tolerance = 1e-12)
  ci <- confint(fit)
  expect_identical(rownames(ci), nm)
  expect_equal(unname(ci[7:8, 1]), unname(gamma - qnorm(0.975) * fit$std_error_log_precision))
  # the gammas' table: estimate, standard error, z value, two-sided p-value
  s <- summary(fit)
  tab <- s$precision
  expect_identical(dimnames(tab), list(names(gamma),
                                       c("Estimate", "Std. Error", "z value", "Pr(>|z|)")))
  expect_identical(unname(tab[, "Estimate"]), unname(gamma))
  expect_equal(unname(tab[, "z value"]), unname(gamma / fit$std_error_log_precision))
  expect_equal(unname(tab[, "Pr(>|z|)"]),
               unname(2 * pnorm(-abs(gamma / fit$std_error_log_precision))))
  expect_identical(rownames(s$coefficients), nm[1:6])
  # printed: the table's header and a row per gamma, after its heading
  for (out in list(capture.output(print(s)), capture.output(print(fit)))) {
    expect_match(out[[1L]], "log phi = Z gamma", fixed = TRUE)
    i <- grep("^Precision coefficients \\(log phi = Z gamma; phi [0-9.]+ to [0-9.]+ over the rows\\):$",
              out)
    expect_length(i, 1L)
    expect_match(out[[i + 1L]], "Estimate +Std. Error +z value +Pr\\(>\\|z\\|\\)")
    expect_match(out[[i + 2L]], "^\\(Intercept\\) ")
    shown <- as.numeric(strsplit(trimws(sub("^\\(Intercept\\)", "", out[[i + 2L]])), " +")[[1L]][1:2])
    expect_equal(shown, unname(c(gamma[[1L]], fit$std_error_log_precision[[1L]])),
                 tolerance = 1e-3)
    expect_match(out[[i + 3L]], "^groupb ")
    expect_false(any(grepl("(log precision)", out, fixed = TRUE)))
    expect_false(any(grepl("Precision: phi = ", out, fixed = TRUE)))
  }
})

test_that("an intercept-only precision design is the fit without one", {
  pr <- precision_problem(seed = 7L)
  f0 <- fit_precision(pr$data, NULL)
  f1 <- fit_precision(pr$data, ~ 1)
  expect_equal(f1$loglik, f0$loglik, tolerance = 1e-10)
  expect_identical(f1$parameters, f0$parameters)
  expect_lt(max(abs(coef(f1) - coef(f0))), 1e-7)
  expect_equal(unname(f1$log_precision), f0$log_precision, tolerance = 1e-8)
  expect_equal(unname(f1$std_error_log_precision), f0$std_error_log_precision,
               tolerance = 1e-6)
  expect_equal(unname(vcov(f1)), unname(vcov(f0)), tolerance = 1e-6)
  expect_identical(rownames(vcov(f0))[7], "(log precision)")
  expect_identical(rownames(vcov(f1))[7], "(precision):(Intercept)")
  expect_equal(unname(f1$precision), rep(f0$precision, 120), tolerance = 1e-8)
  expect_equal(predict(f1, newdata = pr$data[1:5, ]), predict(f0, newdata = pr$data[1:5, ]),
               tolerance = 1e-8)
  # the fit without a design keeps its one unnamed precision
  expect_null(names(f0$log_precision))
  expect_length(f0$precision, 1L)
  expect_null(f0$precision_design)
})

test_that("~ group and ~ 0 + group, and the same design as a matrix, are the same fit", {
  pr <- precision_problem(seed = 8L)
  d <- pr$data
  f1 <- fit_precision(d, ~ group)
  f2 <- fit_precision(d, ~ 0 + group)
  expect_equal(f2$loglik, f1$loglik, tolerance = 1e-10)
  expect_identical(names(f2$log_precision), c("groupa", "groupb"))
  g1 <- f1$log_precision
  expect_equal(unname(f2$log_precision), unname(c(g1[[1]], g1[[1]] + g1[[2]])),
               tolerance = 1e-7)
  # the first group's log precision is the intercept in both
  expect_equal(unname(f2$std_error_log_precision[1]), unname(f1$std_error_log_precision[1]),
               tolerance = 1e-6)
  # each group's variance: Var(g1 + g2) of the first parametrisation
  V1 <- vcov(f1)[7:8, 7:8]
  expect_equal(unname(f2$std_error_log_precision[2]), sqrt(sum(V1)), tolerance = 1e-6)
  expect_equal(unname(f2$precision), unname(f1$precision), tolerance = 1e-7)
  expect_lt(max(abs(coef(f2) - coef(f1))), 1e-7)
  # the matrix: the same fit, its columns named by its column names (else z1, ...)
  fm <- fit_precision(d, model.matrix(~ group, d))
  expect_equal(fm$loglik, f1$loglik, tolerance = 1e-12)
  expect_identical(names(fm$log_precision), c("(Intercept)", "groupb"))
  expect_null(fm$precision_formula)
  fu <- fit_precision(d, unname(model.matrix(~ group, d)))
  expect_identical(names(fu$log_precision), c("z1", "z2"))
  expect_identical(rownames(vcov(fu))[7:8], c("(precision):z1", "(precision):z2"))
  expect_equal(unname(fu$log_precision), unname(f1$log_precision), tolerance = 1e-12)
  # a sparse response, and `.` in the main formula, take the same rows
  sparse <- Matrix::Matrix(pr$y, sparse = TRUE)
  fs <- dirmn_reg(sparse ~ x, data = d, parametrization = "meanprecision",
                  precision_design = ~ group, tolerance = 1e-14)
  expect_equal(fs$loglik, f1$loglik, tolerance = 1e-12)
  expect_equal(fs$log_precision, f1$log_precision, tolerance = 1e-10)
  fd <- dirmn_reg(y ~ . - group - w, data = d, parametrization = "meanprecision",
                  precision_design = ~ group, tolerance = 1e-14)
  expect_identical(colnames(fd$x), c("(Intercept)", "x"))
  expect_equal(fd$loglik, f1$loglik, tolerance = 1e-12)
})

test_that("frequency weights are replicated rows", {
  pr <- precision_problem(seed = 9L)
  d <- pr$data
  w <- rep(c(1, 2, 3, 0), length.out = nrow(d))
  fw <- fit_precision(d, ~ group + w, weights = w)
  keep <- rep(seq_len(nrow(d)), w)
  fr <- fit_precision(d[keep, ], ~ group + w)
  expect_identical(nobs(fw), sum(w))
  expect_identical(nobs(fr), sum(w))
  expect_equal(fw$loglik, fr$loglik, tolerance = 1e-10)
  expect_lt(max(abs(coef(fw) - coef(fr))), 1e-7)
  expect_equal(fw$log_precision, fr$log_precision, tolerance = 1e-7)
  expect_equal(fw$std_error_log_precision, fr$std_error_log_precision, tolerance = 1e-6)
  expect_equal(unname(vcov(fw)), unname(vcov(fr)), tolerance = 1e-6)
  z <- model.matrix(~ group + w, d)
  expect_equal(fw$loglik, ref_prec_loglik(unname(free_theta(fw)), pr$x, z, pr$y, w),
               tolerance = 1e-12)
})

test_that("predict() is exp(z gamma) softmax(x beta) of newdata's rows; fitted(), residuals() and simulate() use the fit's rows", {
  pr <- precision_problem(seed = 10L)
  d <- pr$data
  fit <- fit_precision(d, ~ group + w)
  beta <- coef(fit)
  gamma <- fit$log_precision
  nd <- data.frame(x = c(-1, 0, 1.5, 0.2), group = c("b", "a", "b", "a"),
                   w = c(0.1, 0.9, 0.5, NA))
  x_new <- cbind(1, nd$x)
  z_new <- cbind(1, nd$group == "b", nd$w)
  hand <- ref_prec_alpha(x_new, z_new, beta, gamma)
  a <- predict(fit, newdata = nd)
  expect_identical(dim(a), c(4L, 4L))
  expect_identical(colnames(a), colnames(pr$y))
  expect_equal(unname(a[1:3, ]), hand[1:3, ], tolerance = 1e-12)
  # an NA precision covariate: an NA row, or none (na.omit)
  expect_true(all(is.na(a[4, ])))
  expect_equal(unname(predict(fit, newdata = nd, na.action = na.omit)), hand[1:3, ],
               tolerance = 1e-12)
  p <- predict(fit, newdata = nd[1:3, ], type = "proportion")
  expect_equal(unname(p), hand[1:3, ] / rowSums(hand[1:3, ]), tolerance = 1e-12)
  expect_equal(unname(rowSums(a[1:3, ])), exp(drop(z_new[1:3, ] %*% gamma)), tolerance = 1e-12)
  # the fit's own rows
  z <- model.matrix(~ group + w, d)
  fitted_alpha <- ref_prec_alpha(pr$x, z, beta, gamma)
  expect_equal(unname(predict(fit)), fitted_alpha, tolerance = 1e-12)
  expect_equal(unname(fitted(fit, type = "alpha")), fitted_alpha, tolerance = 1e-12)
  expect_equal(unname(fitted(fit)), fitted_alpha / rowSums(fitted_alpha), tolerance = 1e-12)
  expect_equal(unname(residuals(fit, type = "response")),
               unname(pr$y / rowSums(pr$y)) - fitted_alpha / rowSums(fitted_alpha),
               tolerance = 1e-12)
  # deviance residuals: against the multinomial at each row's own proportions
  n <- rowSums(pr$y)
  saturated <- lgamma(n + 1) - rowSums(lgamma(pr$y + 1)) +
    rowSums(ifelse(pr$y > 0, pr$y * log(pr$y / n), 0))
  dev <- residuals(fit, type = "deviance")
  expect_equal(unname(dev^2), 2 * (saturated - ref_loglik(pr$y, fitted_alpha)),
               tolerance = 1e-8)
  # simulate(): each row from its fitted alpha, its own precision included
  s <- simulate(fit, nsim = 1, seed = 42)
  direct <- rdirmn(nrow(d), rowSums(pr$y), fitted(fit, type = "alpha"), seed = 42,
                   rowwise = TRUE)
  expect_identical(unname(s[[1L]]), unname(direct))
  expect_identical(unname(rowSums(s[[1L]])), rowSums(pr$y))
  # a fit restored from disk predicts from its coefficients
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  restored <- readRDS(path)
  unlink(path)
  expect_equal(predict(restored, newdata = nd), a, tolerance = 1e-13)
  expect_equal(fitted(restored), fitted(fit), tolerance = 1e-13)
})

test_that("predict() of a fit whose precision design was a matrix takes the new rows' matrix", {
  pr <- precision_problem(seed = 11L)
  d <- pr$data
  z <- cbind(one = 1, b = as.numeric(d$group == "b"), w = d$w)
  fit <- fit_precision(d, z)
  nd <- data.frame(x = c(0.3, -0.7))
  znew <- cbind(one = 1, b = c(1, 0), w = c(0.2, 0.6))
  hand <- ref_prec_alpha(cbind(1, nd$x), znew, coef(fit), fit$log_precision)
  expect_equal(unname(predict(fit, newdata = nd, precision_design = znew)), hand,
               tolerance = 1e-12)
  e <- expect_error(predict(fit, newdata = nd), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "precision_design = a matrix of 3 columns (\"one\", \"b\", \"w\")",
               fixed = TRUE)
  expect_error(predict(fit, newdata = nd, precision_design = znew[1, , drop = FALSE]),
               "precision_design is 1 x 3; the fit's precision design has 3 columns and newdata 2 rows",
               class = "dirmn_error_dimension_mismatch")
  bad <- znew
  bad[2, 3] <- Inf
  e <- expect_error(predict(fit, newdata = nd, precision_design = bad),
                    class = "dirmn_error_invalid_parameter")
  expect_match(conditionMessage(e), "^row 2, precision covariate 3 \\(w\\): precision covariate Inf is not finite")
  # a formula's design comes from newdata
  ff <- fit_precision(d, ~ group)
  expect_error(predict(ff, newdata = nd, precision_design = znew), "only with newdata",
               class = "dirmn_error_invalid_argument")
})

test_that("subset and na.action see both designs' variables: the rows are the same", {
  pr <- precision_problem(seed = 12L)
  d <- pr$data
  d$w[c(5, 77)] <- NA          # a precision covariate
  d$x[9] <- NA                 # a mean covariate
  fit <- fit_precision(d, ~ group + w)
  ref <- fit_precision(d[-c(5, 9, 77), ], ~ group + w)
  expect_equal(fit$loglik, ref$loglik, tolerance = 1e-12)
  expect_identical(nobs(fit), 117)
  expect_identical(unname(as.vector(fit$na.action)), c(5L, 9L, 77L))
  expect_identical(rownames(fit$precision_design), rownames(fit$x))
  ex <- fit_precision(d, ~ group + w, na.action = na.exclude)
  expect_identical(dim(fitted(ex)), c(120L, 4L))
  expect_true(all(is.na(fitted(ex)[c(5, 9, 77), ])))
  expect_equal(fitted(ex)[-c(5, 9, 77), ], fitted(ref), tolerance = 1e-10)
  expect_error(fit_precision(d, ~ group + w, na.action = na.fail), "missing values")
  # a matrix's rows are the response's rows: its NA rows go too, and the
  # rows an NA mean covariate drops leave it
  z <- cbind(1, d$w)
  fm <- fit_precision(d, z)
  expect_identical(nobs(fm), 117)
  fz <- fit_precision(d[-c(5, 9, 77), ], z[-c(5, 9, 77), ])
  expect_equal(fm$loglik, fz$loglik, tolerance = 1e-12)
  expect_equal(unname(fm$log_precision), unname(fz$log_precision), tolerance = 1e-12)
  # subset, evaluated in data
  fs <- dirmn_reg(y ~ x, data = d, parametrization = "meanprecision",
                  precision_design = ~ group + w, subset = x > -1, tolerance = 1e-14)
  keep <- which(!is.na(d$x) & d$x > -1 & !is.na(d$w))
  expect_equal(fs$loglik, fit_precision(d[keep, ], ~ group + w)$loglik, tolerance = 1e-12)
  expect_identical(nrow(fs$precision_design), length(keep))
})

test_that("anova() tests the precision's covariates on q - 1 df", {
  pr <- precision_problem(seed = 13L)
  d <- pr$data
  f0 <- fit_precision(d, NULL)
  f1 <- fit_precision(d, ~ group)
  expect_silent(a <- anova(f0, f1))
  expect_identical(a$Parameters, c(7, 8))
  expect_equal(a$Df, c(NA, 1))
  expect_equal(a$Chisq[2], 2 * (f1$loglik - f0$loglik))
  expect_equal(a[["Pr(>Chisq)"]][2], pchisq(2 * (f1$loglik - f0$loglik), 1, lower.tail = FALSE))
  expect_gt(a$Chisq[2], 20)   # precisions 8 and 48 are told apart
  expect_match(attr(a, "heading")[2], "Model 2: y ~ x; precision ~group", fixed = TRUE)
  # and further covariates, on their number of df
  f2 <- fit_precision(d, ~ group + w + I(w^2))
  expect_equal(anova(f1, f2)$Df, c(NA, 2))
  # precision designs that are not nested
  f3 <- fit_precision(d, ~ w + I(w^2))
  expect_warning(anova(f1, f3), "precision's design of the fit with 8 parameters is not within",
                 class = "dirmn_argument_warning")
})

test_that("precision_design errors name what is wrong and where", {
  pr <- precision_problem(seed = 14L)
  d <- pr$data
  e <- expect_error(dirmn_reg(y ~ x, data = d, precision_design = ~ group),
                    class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "precision_design is given with parametrization = \"loglinear\"",
               fixed = TRUE)
  expect_identical(e$call[[1L]], as.name("dirmn_reg"))
  # a non-finite precision covariate: its row and column
  d$v <- d$w
  d$v[7] <- NaN
  e <- expect_error(fit_precision(d, ~ group + v, na.action = na.pass),
                    class = "dirmn_error_invalid_parameter")
  expect_match(conditionMessage(e),
               "^row 7, precision covariate 3 \\(v\\): precision covariate NaN is not finite")
  d$v[7] <- Inf
  e <- expect_error(fit_precision(d, ~ group + v), class = "dirmn_error_invalid_parameter")
  expect_match(conditionMessage(e),
               "^row 7, precision covariate 3 \\(v\\): precision covariate Inf is not finite")
  # rank deficiency: the covariate that is a combination of those before it
  d$v <- 2 * d$w - 1
  e <- expect_error(fit_precision(d, ~ w + group + v), class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e),
               "^precision covariate 4 \\(v\\): the precision's design is not of full column rank")
  e <- expect_error(fit_precision(d, cbind(a = d$w, b = d$w)),
                    class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "^precision covariate 2 \\(b\\): ")
  # what precision_design can be
  expect_error(fit_precision(d, y ~ group), "one-sided", class = "dirmn_error_invalid_argument")
  expect_error(fit_precision(d, d["w"]), "not an object of class \"data.frame\"",
               class = "dirmn_error_invalid_argument")
  expect_error(fit_precision(d, ~ 0), "no columns", class = "dirmn_error_invalid_argument")
  expect_error(fit_precision(d, matrix(1, 119, 1)),
               "precision_design has 119 rows; the response has 120",
               class = "dirmn_error_dimension_mismatch")
  expect_error(fit_precision(d, ~ group + offset(w)), "offsets",
               class = "dirmn_error_invalid_argument")
})

test_that("a table without overdispersion is the multinomial limit, not a converged fit", {
  # Each row's shares rounded: less spread than any multinomial, so the
  # likelihood rises toward phi -> Inf and no finite gamma is the MLE.
  set.seed(20261209L)
  n <- 150L
  d <- data.frame(x = rnorm(n))
  e <- exp(cbind(0, 0.4 * d$x, 0.2 - 0.3 * d$x))
  c23 <- round(90 * e[, 2:3] / rowSums(e))
  d$Y <- cbind(a = 90 - rowSums(c23), b = c23[, 1], c = c23[, 2])
  expect_warning(fit <- dirmn_reg(Y ~ x, data = d, parametrization = "meanprecision"),
                 "no overdispersion", class = "dirmn_convergence_warning")
  expect_true(fit$multinomial_limit)
  expect_false(fit$converged)
  # Its log-likelihood is the multinomial's at its proportions.
  eta <- model.matrix(~ x, d) %*% coef(fit)
  logp <- eta - log(rowSums(exp(eta)))
  mult <- sum(lgamma(rowSums(d$Y) + 1) + rowSums(d$Y * logp - lgamma(d$Y + 1)))
  expect_lt(abs(as.numeric(logLik(fit)) - mult), 1e-4)
  pp <- precision_problem()
  expect_false(dirmn_reg(y ~ x, data = pp$data, parametrization = "meanprecision")$multinomial_limit)
})
