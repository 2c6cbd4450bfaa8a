# confint() on the log scale and residuals() (issue #25).
mite <- mite_table()

test_that("confint() of a fit is the log-scale Wald interval, with positive bounds", {
  fit <- dirmn_fit(mite)
  ci <- confint(fit)
  expect_identical(dim(ci), c(35L, 2L))
  expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
  expect_identical(rownames(ci), colnames(mite))
  expect_true(all(ci[, 1] > 0))
  expect_true(all(ci[, 1] < coef(fit) & coef(fit) < ci[, 2]))
  # by hand from the standard errors of log alpha ...
  se <- fit$std_error_log_alpha
  expect_equal(ci[, 1], exp(log(coef(fit)) - qnorm(0.975) * se), tolerance = 1e-14)
  # ... which are those of the inverse observed information from plain R
  H <- ref_hessian(mite, coef(fit))$matrix
  Hlog <- H * outer(coef(fit), coef(fit))  # at the MLE the gradient term vanishes
  expect_lt(max_rel(sqrt(diag(solve(-Hlog))), unname(se)), 1e-5)
  # and summary() shows the same intervals
  expect_equal(unname(summary(fit)$coefficients[, 5:6]), unname(ci))
  ci90 <- confint(fit, c("Brachy", "LCIL"), level = 0.9)
  expect_identical(rownames(ci90), c("Brachy", "LCIL"))
  expect_identical(colnames(ci90), c("5 %", "95 %"))
  expect_equal(unname(confint(fit, 2:3)), unname(ci[2:3, ]))
  expect_error(confint(fit, "nope"), "\"nope\"", class = "dirmn_error_invalid_argument")
  expect_error(confint(fit, level = 2), "level", class = "dirmn_error_invalid_argument")
  # columns without counts have no interval
  ce <- confint(dirmn_fit(cbind(mite, empty = 0L)))
  expect_true(all(is.na(ce["empty", ])))
})

test_that("confint() of a mixture: each component's log-scale intervals, responsibilities fixed", {
  m <- dirmn_mixture(mite, k = 2, starts = 1L)
  model <- m$models[["2"]]
  ci <- confint(m)
  expect_identical(dim(ci), c(70L, 2L))
  expect_identical(rownames(ci)[c(1, 36)], c("comp1:Brachy", "comp2:Brachy"))
  expect_true(all(ci[, 1] > 0, na.rm = TRUE))
  # no interval only where the component's alpha is at its lower limit
  expect_true(all(is.na(ci[, 1]) == (as.vector(t(model$alpha)) < 1e-6)))
  # component 2 by hand: the responsibility-weighted information in log alpha
  a <- model$alpha[2, ]
  z <- model$responsibilities[, 2]
  H <- ref_hessian(mite, a, w = z)$matrix * outer(a, a) +
    diag(ref_gradient(mite, a, w = z) * a)
  se <- sqrt(diag(solve(-H)))
  expect_lt(max_rel(unname(ci[36:70, 1]), unname(exp(log(a) - qnorm(0.975) * se))), 1e-6)
  expect_identical(confint(m, components = 2), ci)
  expect_identical(confint(model, "comp1:Brachy"), ci["comp1:Brachy", , drop = FALSE])
  # a mixture of a prepared table computes them from it
  counts <- dirmn_counts(mite)
  mp <- dirmn_mixture(counts, k = 2, starts = 1L)
  expect_equal(confint(mp), ci)
  close(counts)
})

test_that("Pearson residuals of a fit are (x - N p) / sqrt(DM variance), by hand", {
  fit <- dirmn_fit(mite)
  r <- residuals(fit)
  a <- coef(fit)
  A <- sum(a)
  p <- a / A
  n <- rowSums(mite)
  v <- outer(n, p * (1 - p)) * (n + A) / (1 + A)
  expect_equal(r, (mite - outer(n, p)) / sqrt(v), tolerance = 1e-12)
  expect_identical(dimnames(r), dimnames(mite))
  # under the DM the squared Pearson residuals average about 1 per cell
  expect_lt(abs(mean(r^2) - 1), 0.35)
  expect_equal(residuals(fit, type = "response"), mite - fitted(fit), tolerance = 1e-12)
  expect_equal(residuals(fit, "response"), residuals(fit, type = "response"))
  expect_error(residuals(fit, type = "working"), "type", class = "dirmn_error_invalid_argument")
})

test_that("deviance residuals of a fit: sqrt(2 (saturated - DM log pmf)) per row", {
  fit <- dirmn_fit(mite)
  d <- residuals(fit, type = "deviance")
  expect_length(d, 70L)
  expect_identical(names(d), rownames(mite))
  n <- rowSums(mite)
  # the saturated model: each row's multinomial at its own proportions
  sat <- vapply(seq_len(nrow(mite)), function(b) {
    dmultinom(mite[b, ], prob = mite[b, ] / n[b], log = TRUE)
  }, 0)
  ll <- log(extraDistr::ddirmnom(mite, n, coef(fit)))
  expect_equal(unname(d), sqrt(2 * (sat - ll)), tolerance = 1e-8)
  expect_true(all(d >= 0))
  # rows of zeros and the multinomial limit
  set.seed(3)
  multi <- rbind(t(rmultinom(30, 40, c(0.5, 0.3, 0.2))), 0L)
  fm <- dirmn_fit(multi)
  expect_true(fm$multinomial_limit)
  dm <- residuals(fm, type = "deviance")
  p <- coef(fm)
  ref <- vapply(1:30, function(b) 2 * (dmultinom(multi[b, ], prob = multi[b, ] / 40, log = TRUE) -
                                        dmultinom(multi[b, ], prob = p, log = TRUE)), 0)
  expect_equal(unname(dm[1:30]), sqrt(ref), tolerance = 1e-10)
  expect_identical(unname(dm[31]), 0)
  pr <- residuals(fm)
  expect_equal(pr[1:30, ], (multi[1:30, ] - 40 * rep(p, each = 30)) /
                 sqrt(40 * rep(p * (1 - p), each = 30)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_true(all(pr[31, ] == 0))
})

test_that("residuals of a mixture and of models on prepared tables", {
  m <- dirmn_mixture(mite, k = 2, starts = 1L)
  model <- m$models[["2"]]
  expect_equal(residuals(m, type = "response"), mite - fitted(m), tolerance = 1e-12)
  z <- model$responsibilities
  n <- rowSums(mite)
  # Pearson: by hand, the mixture of the two DMs with the row's responsibilities
  v <- matrix(0, 70, 35)
  mu <- matrix(0, 70, 35)
  for (j in 1:2) {
    a <- model$alpha[j, ]
    A <- sum(a)
    p <- a / A
    mj <- outer(n, p)
    vj <- outer(n, p * (1 - p)) * (n + A) / (1 + A)
    v <- v + z[, j] * (vj + mj^2)
    mu <- mu + z[, j] * mj
  }
  expect_equal(unname(residuals(m)), unname((mite - mu) / sqrt(v - mu^2)), tolerance = 1e-10)
  ref <- ref_mixture(mite, model$alpha, model$weights)
  sat <- vapply(1:70, function(b) dmultinom(mite[b, ], prob = mite[b, ] / n[b], log = TRUE), 0)
  d <- residuals(m, type = "deviance")
  expect_equal(sum(d^2), 2 * (sum(sat) - ref$loglik), tolerance = 1e-8)
  counts <- dirmn_counts(mite)
  fit <- dirmn_fit(counts)
  expect_error(residuals(fit), "pass the counts as data", class = "dirmn_error_invalid_argument")
  expect_equal(residuals(fit, data = mite), residuals(dirmn_fit(mite)), tolerance = 1e-10)
  expect_error(residuals(fit, data = mite[, 1:3]), "3", class = "dirmn_error_dimension_mismatch")
  close(counts)
})
