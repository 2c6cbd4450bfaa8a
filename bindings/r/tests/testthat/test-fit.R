set.seed(601)
alpha_true <- c(0.2, 0.5, 0.8, 1.5, 2.5, 4, 0.1, 0.35, 1.1, 3)
sim <- ref_rdirmn(300, rpois(300, 150) + 1, alpha_true)
colnames(sim) <- paste0("taxon", seq_along(alpha_true))
mite <- mite_table()
bci <- bci_table()

# dirmn's maximum against another fit of the same table: never lower by
# more than 1e-8 relative (both through the plain-R log-likelihood), and
# the same alpha to 1e-5 where the other converged. other_alpha holds the
# columns with counts only.
compare_fits <- function(fit, x, other_alpha, other_converged = TRUE) {
  active <- colSums(x) > 0
  used <- rowSums(x) > 0
  xa <- x[used, active, drop = FALSE]
  ours <- ref_loglik_sum(xa, fit$alpha[active], full = TRUE)
  theirs <- ref_loglik_sum(xa, other_alpha, full = TRUE)
  expect_gte(ours - theirs, -1e-8 * abs(theirs))
  # dirmn's reported maximum is the plain-R log-likelihood at its alpha
  expect_rel_equal(fit$loglik, ours, 1e-10)
  if (other_converged) expect_lt(max_rel(unname(fit$alpha[active]), other_alpha), 1e-5)
}

test_that("the fit agrees with dirmult on simulated and real tables", {
  skip_if_not_installed("dirmult")
  for (x in list(sim, mite, bci)) {
    fit <- dirmn_fit(x)
    expect_true(fit$converged)
    ref <- dirmult::dirmult(x, epsilon = 1e-10, trace = FALSE)
    compare_fits(fit, x, ref$gamma)
  }
})

test_that("the fit agrees with a plain-R Minka fixed point", {
  for (x in list(sim, mite, bci)) {
    fit <- dirmn_fit(x)
    ref <- minka_fit(x)
    expect_true(ref$converged)
    compare_fits(fit, x, ref$alpha[colSums(x) > 0])
  }
})

test_that("the fit recovers a known alpha and its standard errors cover it", {
  fit <- dirmn_fit(sim)
  expect_named(fit$alpha, colnames(sim))
  z <- (log(fit$alpha) - log(alpha_true)) / fit$std_error_log_alpha
  expect_true(all(abs(z) < 4))
  expect_rel_equal(fit$precision, sum(fit$alpha), 1e-12)
  expect_false(fit$multinomial_limit)
  expect_identical(fit$zero_columns, 0L)
  expect_equal(fit$nobs, 300)
  expect_lt(fit$gradient_norm, 1e-4)
  # gradient at the fit (plain R, in log alpha) is ~0
  g <- fit$alpha * ref_gradient(sim, fit$alpha)
  expect_lt(max(abs(g)), 1e-5 * abs(fit$loglik))
  # loglik_kernel leaves out the multinomial coefficients
  expect_rel_equal(fit$loglik_kernel, ref_loglik_sum(sim, fit$alpha, full = FALSE), 1e-10)
})

test_that("vcov is the inverse observed information and matches the standard errors", {
  for (x in list(sim, mite)) {
    fit <- dirmn_fit(x)
    V <- vcov(fit)
    expect_identical(dimnames(V), list(colnames(x), colnames(x)))
    ref <- solve(-ref_hessian(x, fit$alpha)$matrix)
    expect_lt(max(abs(V - ref)) / max(abs(ref)), 1e-8)
    expect_lt(max_rel(sqrt(diag(V)), unname(fit$std_error_alpha)), 1e-6)
    expect_lt(max_rel(unname(fit$std_error_log_alpha), unname(fit$std_error_alpha / fit$alpha)), 1e-10)
  }
})

test_that("integer weights equal repeated rows; zero weights equal dropped rows", {
  w <- rep(c(1L, 2L, 0L, 3L), length.out = nrow(mite))
  fw <- dirmn_fit(mite, weights = w)
  fr <- dirmn_fit(mite[rep(seq_len(nrow(mite)), w), ])
  expect_lt(max_rel(fw$alpha, fr$alpha), 1e-8)
  expect_rel_equal(fw$loglik, fr$loglik, 1e-10)
  # observations: the sum of the weights of the rows with counts
  expect_equal(fw$nobs, sum(w[rowSums(mite) > 0]))
  expect_equal(fw$nobs, fr$nobs)
  # against the independent references with the same weights
  ref <- minka_fit(mite, weights = w)
  expect_lt(max_rel(unname(fw$alpha), ref$alpha), 1e-5)
  expect_rel_equal(fw$loglik, ref_loglik_sum(mite, fw$alpha, w, full = TRUE), 1e-10)
  # fractional weights
  wf <- seq(0.5, 2, length.out = nrow(mite))
  ff <- dirmn_fit(mite, weights = wf)
  expect_lt(max_rel(unname(ff$alpha), minka_fit(mite, weights = wf)$alpha), 1e-5)
})

test_that("rows and columns of zeros: rows are ignored, columns get alpha 0 and no error", {
  x <- cbind(mite[, 1:10], empty = 0L, mite[, 11:20])
  x <- rbind(x[1:5, ], 0L, x[6:70, ])
  fit <- dirmn_fit(x)
  plain <- dirmn_fit(mite[, 1:20])
  expect_identical(fit$zero_columns, 1L)
  expect_equal(fit$nobs, 70)
  expect_identical(unname(fit$alpha["empty"]), 0)
  expect_true(is.na(fit$std_error_alpha["empty"]))
  expect_true(is.na(fit$std_error_log_alpha["empty"]))
  expect_lt(max_rel(fit$alpha[-11], plain$alpha), 1e-9)
  V <- vcov(fit)
  expect_true(all(is.na(V["empty", ])) && all(is.na(V[, "empty"])))
  expect_false(anyNA(V[-11, -11]))
  ref <- solve(-ref_hessian(mite[, 1:20], plain$alpha)$matrix)
  expect_lt(max(abs(V[-11, -11] - ref)) / max(abs(ref)), 1e-8)
  expect_output(print(fit), "1 column without counts")
  skip_if_not_installed("dirmult")
  d <- dirmult::dirmult(x, epsilon = 1e-10, trace = FALSE)
  compare_fits(fit, x, d$gamma)
})

test_that("underdispersed data give the multinomial limit", {
  set.seed(602)
  p <- c(0.5, 0.3, 0.15, 0.05)
  # rows closer to the pooled proportions than multinomial sampling allows
  x <- t(vapply(1:60, function(b) {
    n <- 200
    base <- floor(n * p)
    base[1] <- base[1] + n - sum(base)
    jitter <- sample(c(-1L, 0L, 1L), 1)
    base + c(jitter, -jitter, 0L, 0L)
  }, numeric(4)))
  fit <- dirmn_fit(x)
  expect_true(fit$multinomial_limit)
  expect_identical(fit$precision, Inf)
  expect_rel_equal(unname(fit$alpha), colSums(x) / sum(x), 1e-12)
  multinomial <- sum(vapply(1:60, function(b) dmultinom(x[b, ], prob = colSums(x) / sum(x),
                                                        log = TRUE), 0))
  expect_rel_equal(fit$loglik, multinomial, 1e-10)
  # no finite alpha does better
  for (theta in 10^(2:6)) {
    expect_lt(ref_loglik_sum(x, theta * colSums(x) / sum(x), full = TRUE), fit$loglik)
  }
  expect_true(all(is.na(fit$std_error_alpha)))
  expect_true(all(is.na(vcov(fit))))
  expect_output(print(fit), "no overdispersion: the multinomial limit fits best", ignore.case = TRUE)
  # the one rule of the library: the columns with counts, also at the limit
  expect_equal(attr(logLik(fit), "df"), sum(colSums(x) > 0))
  expect_output(print(summary(fit)), "multinomial limit")
})

expect_silent_messages <- function(expr) {
  msgs <- character(0)
  withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  expect_length(msgs, 0L)
}

test_that("verbose reports every iteration through message()", {
  msgs <- character(0)
  fit <- withCallingHandlers(
    dirmn_fit(mite, verbose = TRUE),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    }
  )
  # once after each iteration, counted from 1
  expect_length(msgs, fit$iterations)
  expect_match(msgs[1], "^dirmn_fit: iteration 1, log-likelihood")
  expect_match(msgs[length(msgs)], sprintf("^dirmn_fit: iteration %d,", fit$iterations))
  last <- as.numeric(sub(".*log-likelihood ([-0-9.e+]+),.*", "\\1", msgs[length(msgs)]))
  expect_lt(abs(last - fit$loglik), 1e-6 * abs(fit$loglik))
  expect_warning(
    expect_message(dirmn_fit(sim, verbose = TRUE, max_iterations = 1),
                   "^dirmn_fit: iteration 1, log-likelihood -[0-9.]+, gradient norm [0-9.e+-]+\n?$"),
    class = "dirmn_convergence_warning")
  # no iteration, no message
  expect_warning(expect_silent_messages(dirmn_fit(sim, verbose = TRUE, max_iterations = 0)),
                 class = "dirmn_convergence_warning")
  msgs <- capture_messages(dirmn_fit(sim, verbose = TRUE))
  expect_match(msgs, "gradient norm")
  expect_silent(dirmn_fit(sim))
})

test_that("jumps out of the progress display are carried past the library", {
  counts <- dirmn_counts(mite, backend = "cpu")
  gc()
  live <- dirmn:::cpp_live_counts()
  # an error raised by a message handler
  expect_error(withCallingHandlers(dirmn_fit(counts, verbose = TRUE),
                                   message = function(m) stop("handler failed")),
               "handler failed")
  # an exiting handler
  expect_identical(tryCatch(dirmn_fit(mite, verbose = TRUE), message = function(m) "left"),
                   "left")
  # a progress function that returns TRUE cancels the fit, and the display
  # returns TRUE when an interrupt arrives while it shows a message
  res <- dirmn:::cpp_fit(counts$ptr, NULL, NULL, 1e-10, 1000L, function(i, value, change) i >= 2)
  expect_s3_class(res, "dirmn_failure")
  expect_identical(res$status, 11L)
  interrupt <- structure(class = c("interrupt", "condition"), list(message = "", call = NULL))
  display <- dirmn:::.progress_reporter(function(i, value, change) signalCondition(interrupt))
  expect_true(display(1L, 0, 0))
  display <- dirmn:::.progress_reporter(function(i, value, change) "shown")
  expect_false(suppressMessages(display(1L, 0, 0)))
  # calling dirmn on the same backend from the handler is refused
  expect_error(withCallingHandlers(dirmn_fit(counts, verbose = TRUE),
                                   message = function(m) ddirmn(counts, rep(1, 35))),
               "progress", class = "dirmn_error_invalid_argument")
  # and so is closing the table being fitted (other tables close: test-lifecycle.R)
  expect_error(withCallingHandlers(dirmn_fit(counts, verbose = TRUE),
                                   message = function(m) close(counts)),
               "progress", class = "dirmn_error_invalid_argument")
  gc()
  expect_identical(dirmn:::cpp_live_counts(), live)
  # everything still works afterwards
  expect_true(dirmn_fit(counts)$converged)
  expect_length(ddirmn(counts, rep(1, 35)), 70)
})

test_that("an interrupted fit is a cancelled error", {
  dirmn:::cpp_set_force_cancel(TRUE)
  on.exit(dirmn:::cpp_set_force_cancel(FALSE))
  expect_error(dirmn_fit(mite), class = "dirmn_error_cancelled")
  dirmn:::cpp_set_force_cancel(FALSE)
  expect_true(dirmn_fit(mite)$converged)
})

test_that("S3 methods: coef, vcov, logLik, AIC, BIC, fitted, nobs, print, summary", {
  fit <- dirmn_fit(mite)
  expect_identical(coef(fit), fit$alpha)
  ll <- logLik(fit)
  expect_s3_class(ll, "logLik")
  expect_equal(attr(ll, "df"), 35)
  expect_equal(attr(ll, "nobs"), 70)
  expect_equal(nobs(fit), 70)
  expect_equal(AIC(fit), -2 * ref_loglik_sum(mite, fit$alpha, full = TRUE) + 2 * 35,
               tolerance = 1e-10)
  expect_equal(BIC(fit), -2 * ref_loglik_sum(mite, fit$alpha, full = TRUE) + log(70) * 35,
               tolerance = 1e-10)
  f <- fitted(fit)
  expect_identical(dim(f), dim(mite))
  expect_identical(dimnames(f), dimnames(mite))
  expect_equal(unname(rowSums(f)), unname(rowSums(mite) + 0), tolerance = 1e-12)
  expect_equal(f[7, ], rowSums(mite)[7] * fit$alpha / sum(fit$alpha), tolerance = 1e-12)
  expect_output(print(fit), "Precision \\(sum of alpha\\)")
  expect_output(print(fit), "Converged after")
  s <- summary(fit)
  expect_s3_class(s, "summary.dirmn_fit")
  expect_identical(dim(s$coefficients), c(35L, 6L))
  expect_equal(unname(s$coefficients[, "log(alpha)"]), unname(log(fit$alpha)))
  lower <- exp(log(fit$alpha) - qnorm(0.975) * fit$std_error_log_alpha)
  expect_equal(unname(s$coefficients[, "2.5 %"]), unname(lower))
  expect_output(print(s), "Coefficients")
  expect_output(print(s), "AIC")
  # a fit survives saveRDS/readRDS: it holds no library memory
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_equal(vcov(back), vcov(fit))
  expect_equal(AIC(back), AIC(fit))
})

test_that("every input form gives the same fit", {
  ref <- dirmn_fit(mite)
  sp <- Matrix::Matrix(mite, sparse = TRUE)
  for (input in list(sp, methods::as(sp, "RsparseMatrix"), dirmn_counts(mite, backend = "cpu"),
                     as.data.frame(mite), mite + 0)) {
    fit <- dirmn_fit(input)
    expect_lt(max_rel(fit$alpha, ref$alpha), 1e-12)
  }
  # a start value converges to the same maximum
  fs <- dirmn_fit(mite, start = rep(1, 35))
  expect_lt(max_rel(fs$alpha, ref$alpha), 1e-6)
  # max_iterations = 0 stops at the start (and warns: see below)
  f0 <- unconverged(dirmn_fit(mite, max_iterations = 0))
  expect_false(f0$converged)
})

test_that("bad arguments give dirmn errors naming the row or column (1-based)", {
  w <- rep(1, 70)
  w[3] <- -1
  expect_error(dirmn_fit(mite, weights = w), "weight of row 3 is -1",
               class = "dirmn_error_invalid_parameter")
  w[3] <- Inf
  expect_error(dirmn_fit(mite, weights = w), "weight of row 3 is Inf",
               class = "dirmn_error_invalid_parameter")
  w[3] <- NA
  expect_error(dirmn_fit(mite, weights = w), "weight of row 3 is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_fit(mite, weights = rep(1, 69)), class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_fit(mite, weights = "a"), class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_fit(mite, start = rep(1, 34)), class = "dirmn_error_dimension_mismatch")
  st <- rep(1, 35)
  st[2] <- 0
  expect_error(dirmn_fit(mite, start = st), "column 2", class = "dirmn_error_invalid_parameter")
  st[2] <- NA
  expect_error(dirmn_fit(mite, start = st), "column 2: alpha is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_fit(mite, tolerance = 0), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_fit(mite, max_iterations = -1), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_fit(mite, verbose = NA), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_fit(matrix(0L, 3, 4)), "no counts", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_fit(mite, weights = rep(0, 70)), "no counts",
               class = "dirmn_error_invalid_argument")
  bad <- mite
  bad[4, 5] <- -2L
  expect_error(dirmn_fit(bad), "row 4, column 5", class = "dirmn_error_invalid_counts")
  e <- tryCatch(dirmn_fit(mite, weights = w), error = identity)
  expect_identical(conditionCall(e)[[1]], as.name("dirmn_fit"))
})

test_that("a fit stopped at max_iterations warns with a classed warning and keeps its result", {
  w <- tryCatch(dirmn_fit(mite, max_iterations = 1), warning = identity)
  expect_s3_class(w, "dirmn_convergence_warning")
  expect_s3_class(w, "warning")
  expect_match(conditionMessage(w),
               "^did not converge in 1 iteration \\(largest gradient component in log alpha [0-9.e+]+, tolerance = 1e-10\\)")
  expect_identical(conditionCall(w)[[1]], as.name("dirmn_fit"))
  # the result is kept, as glm() keeps its: the iterate after one Newton step
  f1 <- unconverged(dirmn_fit(mite, max_iterations = 1))
  expect_false(f1$converged)
  expect_identical(f1$iterations, 1L)
  expect_match(conditionMessage(tryCatch(dirmn_fit(mite, max_iterations = 3), warning = identity)),
               "in 3 iterations")
  full <- dirmn_fit(mite)
  expect_lt(f1$loglik, full$loglik)
  # a converged fit, and the multinomial limit, are silent
  expect_silent(dirmn_fit(mite))
  set.seed(1)
  expect_silent(dirmn_fit(t(rmultinom(40, 100, c(0.5, 0.3, 0.2))), max_iterations = 1))
})
