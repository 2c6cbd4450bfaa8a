# A table split by rows over a communicator's ranks (dirmn_communicator,
# dirmn_set_communicator): the R functions behind the library's callbacks,
# their failures as R conditions, and their lifetime. One rank in this
# process (the identity functions), and two ranks in two processes (a fork)
# over a base R socket.

mite <- mite_table()
# mite's environment: a numeric covariate and factors (Shrub's level "None"
# is absent from rows 1 .. 30, rank 0's rows in the two-rank test below)
mite_env <- read.csv(system.file("extdata", "mite_env.csv", package = "dirmn"), row.names = 1,
                     stringsAsFactors = TRUE)
mite_env$water <- as.vector(scale(mite_env$WatrCont))

identity_comm <- function(rank = 0L, ranks = 1L) {
  dirmn_communicator(rank, ranks, allreduce = function(x) x, broadcast = function(x, root) x)
}

# A table of mite's rows attached to a one-rank communicator over `allreduce`
# and `broadcast`, or the condition the attaching raised.
attach_to <- function(allreduce = function(x) x, broadcast = function(x, root) x) {
  counts <- dirmn_counts(mite, backend = "cpu")
  comm <- dirmn_communicator(0, 1, allreduce, broadcast)
  tryCatch(dirmn_set_communicator(counts, comm), error = identity)
}

test_that("one rank with the identity functions gives the plain fit, bit for bit", {
  plain <- dirmn_fit(mite, backend = "cpu")
  counts <- dirmn_counts(mite, backend = "cpu")
  expect_identical(dirmn_set_communicator(counts, identity_comm()), counts)
  split <- dirmn_fit(counts)
  expect_identical(split$alpha, plain$alpha)
  expect_identical(split$std_error_alpha, plain$std_error_alpha)
  expect_identical(split$std_error_log_alpha, plain$std_error_log_alpha)
  expect_identical(split$iterations, plain$iterations)
  expect_identical(split$nobs, plain$nobs)
  expect_equal(split$loglik, plain$loglik, tolerance = 1e-12)
  expect_identical(vcov(split), vcov(plain))
  # weighted
  w <- rep(c(1, 2, 0.5), length.out = nrow(mite))
  expect_identical(dirmn_fit(counts, weights = w)$alpha,
                   dirmn_fit(mite, weights = w, backend = "cpu")$alpha)
  # with progress reports (the progress callback inside a collective call)
  verbose <- suppressMessages(dirmn_fit(counts, verbose = TRUE))
  expect_identical(verbose$alpha, plain$alpha)
  # the sum, its derivatives and the overdispersion test
  a <- plain$alpha
  s_split <- dirmn_loglik_sum(counts, a)
  s_plain <- dirmn_loglik_sum(mite, a, backend = "cpu")
  expect_equal(s_split, s_plain, tolerance = 1e-12)
  od_split <- dirmn_overdispersion_test(counts)
  od_plain <- dirmn_overdispersion_test(mite, backend = "cpu")
  expect_identical(od_split$statistic, od_plain$statistic)
  expect_identical(od_split$p.value, od_plain$p.value)
  expect_identical(od_split$estimate, od_plain$estimate)
  expect_identical(od_split$score, od_plain$score)
  expect_identical(od_split$lrt, od_plain$lrt)
  score_split <- dirmn_overdispersion_test(counts, method = "score")
  expect_identical(score_split$statistic,
                   dirmn_overdispersion_test(mite, method = "score", backend = "cpu")$statistic)
  # the per-row calls stay local, as before
  expect_identical(ddirmn(counts, a, log = TRUE),
                   ddirmn(dirmn_counts(mite, backend = "cpu"), a, log = TRUE))
})

test_that("a communicator and an attached table print what they are", {
  comm <- identity_comm()
  expect_s3_class(comm, "dirmn_communicator")
  expect_identical(comm$rank, 0L)
  expect_identical(comm$ranks, 1L)
  expect_output(print(comm), "<dirmn_communicator> rank 0 of 1", fixed = TRUE)
  counts <- dirmn_counts(mite, backend = "cpu")
  expect_false(any(grepl("rank", format(counts))))
  dirmn_set_communicator(counts, comm)
  expect_output(print(counts), "rank 0's rows of a table split over 1 rank (dirmn_communicator)",
                fixed = TRUE)
  expect_identical(attr(counts$ptr, "dirmn_communicator"), comm)
  dirmn_set_communicator(counts, NULL)
  expect_false(any(grepl("rank", format(counts))))
  expect_null(attr(counts$ptr, "dirmn_communicator"))
  # restored from disk, as prepared tables
  restored <- unserialize(serialize(comm, NULL))
  expect_output(print(restored), "not usable (restored from disk)", fixed = TRUE)
  expect_error(dirmn_set_communicator(counts, restored), "do not survive saveRDS",
               class = "dirmn_error_null_pointer")
})

test_that("an R error in a callback is a communication condition carrying its message", {
  e <- attach_to(allreduce = function(x) stop("the network is down"))
  expect_s3_class(e, "dirmn_error_communication")
  expect_s3_class(e, "dirmn_error")
  expect_identical(e$status, 14L)
  expect_match(conditionMessage(e), "allreduce_int64 callback returned 1", fixed = TRUE)
  expect_match(conditionMessage(e), "allreduce(x) raised an error: the network is down",
               fixed = TRUE)
  expect_identical(deparse(e$call[[1L]]), "dirmn_set_communicator")
  # in a fit: its first callbacks succeed, a later one fails
  calls <- 0
  counts <- attach_to(allreduce = function(x) {
    calls <<- calls + 1
    if (calls > 3) stop("lost rank 3 at call ", calls)
    x
  })
  expect_s3_class(counts, "dirmn_counts")
  expect_error(dirmn_fit(counts), "allreduce(x) raised an error: lost rank 3 at call 4",
               fixed = TRUE, class = "dirmn_error_communication")
  # (an error in broadcast: with two ranks, below; one rank may broadcast
  # nothing, its fit being one process's)
  # the message of a condition of another class; a warning made an error
  e <- attach_to(allreduce = function(x) {
    stop(structure(class = c("my_error", "error", "condition"),
                   list(message = "a classed failure", call = NULL)))
  })
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), "raised an error: a classed failure", fixed = TRUE)
  old <- options(warn = 2)
  e <- tryCatch(attach_to(allreduce = function(x) {
    warning("a warning")
    x
  }), finally = options(old))
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), "(converted from warning) a warning", fixed = TRUE)
  # the table is usable after a failed call, and the context too
  expect_identical(dirmn_fit(mite, backend = "cpu")$alpha,
                   dirmn_fit(dirmn_counts(mite, backend = "cpu"))$alpha)
})

test_that("no jump out of a callback crosses the library", {
  # an interrupt, a restart, an exiting handler of the caller's: each stops
  # at the callback, which fails the call
  e <- attach_to(allreduce = function(x) {
    signalCondition(structure(class = c("interrupt", "condition"), list()))
    x
  })
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), "allreduce(x) was interrupted", fixed = TRUE)
  e <- attach_to(allreduce = function(x) invokeRestart("abort"))
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), "allreduce(x) was left by a jump", fixed = TRUE)
  # the caller's handlers do not see what the functions signal (their
  # warnings are shown at top level): an exiting handler of the caller's
  # would otherwise jump over the library
  signalling <- function(x) {
    signalCondition(structure(class = c("dirmn_test_signal", "condition"),
                              list(message = "inside allreduce", call = NULL)))
    x
  }
  seen <- FALSE
  counts <- withCallingHandlers(attach_to(allreduce = signalling),
                                dirmn_test_signal = function(m) seen <<- TRUE)
  expect_false(seen)
  expect_s3_class(counts, "dirmn_counts")
  counts <- tryCatch(attach_to(allreduce = signalling), dirmn_test_signal = function(m) "jumped")
  expect_s3_class(counts, "dirmn_counts")
  expect_identical(dirmn_fit(counts)$alpha, dirmn_fit(mite, backend = "cpu")$alpha)
})

test_that("bad results of the functions fail the call, saying what was wrong", {
  e <- attach_to(allreduce = function(x) c(x, 1))
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), paste(
    "allreduce_int64 callback returned 2: allreduce(x) returned a double vector of length 2;",
    "it must return a numeric vector of length 1"), fixed = TRUE)
  e <- attach_to(allreduce = function(x) NULL)
  expect_match(conditionMessage(e), "allreduce(x) returned NULL", fixed = TRUE)
  e <- attach_to(allreduce = function(x) as.character(x))
  expect_match(conditionMessage(e), "returned a character vector of length 1", fixed = TRUE)
  # integers serve for sums of counts and of doubles; NA does not
  counts <- attach_to(allreduce = function(x) if (all(x == round(x))) as.integer(x) else x)
  expect_identical(dirmn_fit(counts)$alpha, dirmn_fit(mite, backend = "cpu")$alpha)
  e <- attach_to(allreduce = function(x) rep(NA_integer_, length(x)))
  expect_match(conditionMessage(e), "allreduce(x) returned NA at element 1", fixed = TRUE)
  # a sum of counts must be a whole number within 2^53
  e <- attach_to(allreduce = function(x) x + 0.5)
  expect_match(conditionMessage(e), "callback returned 2: allreduce(x) returned 0.5 at element 1",
               fixed = TRUE)
  e <- attach_to(allreduce = function(x) x + 2^60)
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e), paste(
    "callback returned 3: allreduce(x) returned 1152921504606846976 at element 1 of a sum of",
    "whole numbers, which must be a whole number of magnitude at most 2^53"), fixed = TRUE)
  # (broadcast's results: with two ranks, below)
})

test_that("dirmn functions are refused inside the functions", {
  inner <- NULL
  e <- attach_to(allreduce = function(x) {
    inner <<- tryCatch(dirmn_fit(mite, backend = "cpu"), error = identity)
    dirmn_loglik_sum(mite, rep(1, ncol(mite)), backend = "cpu")
    x
  })
  expect_s3_class(inner, "dirmn_error_invalid_argument")
  expect_match(conditionMessage(inner),
               "cannot be called from a communicator's allreduce or broadcast function", fixed = TRUE)
  expect_s3_class(e, "dirmn_error_communication")
  expect_match(conditionMessage(e),
               "raised an error: dirmn functions cannot be called from a communicator's", fixed = TRUE)
  # and allowed again afterwards
  expect_length(dirmn_fit(mite, backend = "cpu")$alpha, ncol(mite))
})

test_that("arguments are checked", {
  f <- function(x) x
  b <- function(x, root) x
  expect_error(dirmn_communicator(1, 1, f, b), "from 0 to ranks - 1 = 0 (ranks are numbered from 0), not 1",
               fixed = TRUE, class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(2, 2, f, b), "not 2", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(-1, 2, f, b), "not -1", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0.5, 2, f, b), "whole number",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(NA, 2, f, b), "rank must be",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(c(0, 1), 2, f, b), "rank must be",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator("0", 2, f, b), "rank must be",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 0, f, b), "ranks must be a single whole number >= 1",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, NA, f, b), "ranks must be",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 2^31, f, b), "ranks must be",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 1, 1, b), "allreduce must be a function .*, not a double vector",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 1, f, NULL), "broadcast must be a function .*, not NULL",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 1, "sum", b), "not a character vector",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_communicator(0, 1, f), "broadcast", class = "error")
  # builtins serve (sum would not sum element-wise, but is a function)
  expect_s3_class(dirmn_communicator(0, 1, identity, function(x, root) x), "dirmn_communicator")
  comm <- identity_comm()
  expect_error(dirmn_set_communicator(mite, comm),
               "counts must be a table prepared with dirmn_counts\\(\\) \\(this rank's rows\\), not an integer matrix",
               class = "dirmn_error_invalid_argument")
  counts <- dirmn_counts(mite, backend = "cpu")
  expect_error(dirmn_set_communicator(counts, list(ptr = NULL)),
               "comm must be a dirmn_communicator\\(\\) or NULL", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_set_communicator(counts), "comm", class = "error")
  close(counts)
  expect_error(dirmn_set_communicator(counts, comm), "closed", class = "dirmn_error_null_pointer")
})

# What a dirmn_mixture() holds per k, as plain values (they travel from a
# forked rank): the criteria, the objective and, per model, alpha, the
# mixing weights, the responsibilities (this rank's rows), n and P.
mixture_values <- function(m) {
  list(criteria = m$criteria, nobs = m$nobs, selected = m$selected, objective = m$objective,
       models = lapply(m$models, function(f) {
         list(alpha = f$alpha, weights = f$weights, responsibilities = f$responsibilities,
              nobs = f$nobs, parameters = f$parameters, k = f$k)
       }))
}

# A mixture over ranks is the whole table's fit (libdirmn's contract): the
# log-likelihood, objective, AIC and BIC to rounding (1e-9 relative), the
# parameters to the M step's accuracy (1e-5 relative), and this rank's
# responsibilities the whole fit's `rows` to 1e-5. `laplace` follows alpha
# (its log-determinant of the Hessian, taken at alpha, is not stationary at
# the optimum as the objective is): 1e-7 here (1.2e-8 relative seen on
# mite at k = 3 under objective = "dmn").
expect_mixture_matches <- function(got, whole, rows = NULL) {
  whole <- mixture_values(whole)
  if (is.null(rows)) rows <- seq_len(nrow(whole$models[[1L]]$responsibilities))
  expect_identical(got$criteria$k, whole$criteria$k)
  expect_identical(got$objective, whole$objective)
  for (field in c("loglik", "objective", "aic", "bic", "laplace")) {
    expect_equal(got$criteria[[field]], whole$criteria[[field]],
                 tolerance = if (field == "laplace") 1e-7 else 1e-9,
                 label = paste0("criteria$", field))
  }
  expect_identical(got$criteria$parameters, whole$criteria$parameters)
  expect_true(all(got$criteria$converged))
  expect_identical(got$nobs, whole$nobs)
  expect_identical(got$selected, whole$selected)
  expect_identical(names(got$models), names(whole$models))
  for (k in names(whole$models)) {
    g <- got$models[[k]]
    w <- whole$models[[k]]
    expect_identical(g$k, w$k)
    expect_identical(g$nobs, w$nobs)
    expect_identical(g$parameters, w$parameters)
    expect_identical(dimnames(g$alpha), dimnames(w$alpha))
    expect_equal(g$alpha, w$alpha, tolerance = 1e-5)
    expect_lt(max(abs(g$alpha / w$alpha - 1)), 1e-5)
    expect_equal(g$weights, w$weights, tolerance = 1e-5)
    expect_lt(max(abs(g$weights / w$weights - 1)), 1e-5)
    expect_identical(dimnames(g$responsibilities),
                     list(rownames(w$responsibilities)[rows], colnames(w$responsibilities)))
    expect_lt(max(abs(g$responsibilities - w$responsibilities[rows, , drop = FALSE])), 1e-5)
  }
}

test_that("mixtures work on split counts; group tests refuse them, and work once detached", {
  counts <- dirmn_counts(mite, backend = "cpu")
  dirmn_set_communicator(counts, identity_comm())
  # one rank: the plain table's mixture, k chosen over a range (each k but
  # the first grown from the k - 1 mixture, a handle over the split table)
  split <- dirmn_mixture(counts, k = 2:3, starts = 2L, seed = 1)
  plain <- dirmn_mixture(mite, k = 2:3, starts = 2L, seed = 1, backend = "cpu")
  expect_s3_class(split, "dirmn_mixture")
  expect_mixture_matches(mixture_values(split), plain)
  # weighted, dmn's objective and criteria, with progress reports
  w <- rep(c(1, 2, 0.5), length.out = nrow(mite))
  expect_mixture_matches(
    mixture_values(dirmn_mixture(counts, k = 2L, starts = 2L, seed = 3, weights = w)),
    dirmn_mixture(mite, k = 2L, starts = 2L, seed = 3, weights = w, backend = "cpu"))
  reported <- 0L
  dmn_split <- withCallingHandlers(
    dirmn_mixture(counts, k = 2:3, starts = 1L, objective = "dmn", select = "laplace",
                  verbose = TRUE),
    message = function(m) {
      reported <<- reported + 1L
      invokeRestart("muffleMessage")
    })
  expect_gt(reported, 0L)
  expect_mixture_matches(mixture_values(dmn_split),
                         dirmn_mixture(mite, k = 2:3, starts = 1L, objective = "dmn",
                                       select = "laplace", backend = "cpu"))
  # the model's methods: confint() sums over the ranks (dirmn_loglik_sum of
  # the attached table), predict() assigns this rank's rows
  expect_equal(confint(split, components = 2), confint(plain, components = 2), tolerance = 1e-5)
  expect_identical(predict(split, type = "class"), predict(plain, type = "class"))
  expect_equal(predict(split, mite), predict(plain, mite), tolerance = 1e-5)
  # the group tests do not sum over ranks: refused
  g <- rep(1:2, length.out = nrow(mite))
  expect_error(dirmn_test_groups(counts, g), "one rank's rows of a table split",
               class = "dirmn_error_not_supported")
  expect_error(dirmn_test_groups(counts, g), paste(
    "does not sum over ranks in this release (dirmn_fit, dirmn_loglik_sum,",
    "dirmn_overdispersion_test, dirmn_reg_fit and the mixture fits do)"), fixed = TRUE,
    class = "dirmn_error_not_supported")
  expect_error(dirmn_test_proportions(counts, colSums(mite) / sum(mite)),
               "does not sum over ranks", class = "dirmn_error_not_supported")
  # the fits still work on it
  expect_identical(dirmn_fit(counts)$alpha, dirmn_fit(mite, backend = "cpu")$alpha)
  expect_identical(dirmn_set_communicator(counts, NULL), counts)
  m <- dirmn_mixture(counts, k = 2, starts = 1L, seed = 1)
  expect_identical(coef(m), coef(dirmn_mixture(mite, k = 2, starts = 1L, seed = 1, backend = "cpu")))
  expect_s3_class(dirmn_test_groups(counts, g), "htest")
  # attached again: the group tests refused again, the mixtures served
  dirmn_set_communicator(counts, identity_comm())
  expect_error(dirmn_test_groups(counts, g), class = "dirmn_error_not_supported")
  expect_mixture_matches(mixture_values(dirmn_mixture(counts, k = 2, starts = 1L, seed = 1)),
                         dirmn_mixture(mite, k = 2, starts = 1L, seed = 1, backend = "cpu"))
})

# What a dirmn_reg() holds, as plain values (they travel from a forked
# rank): the coefficients, their covariance and standard errors, the
# criteria and the Wald tests, the precision's coefficients and the rows.
reg_values <- function(f) {
  list(coefficients = f$coefficients, vcov = f$vcov, std_errors = attr(f, "std_errors"),
       loglik = f$loglik, aic = f$aic, bic = f$bic, nobs = f$nobs, parameters = f$parameters,
       converged = f$converged, wald = f$wald_test, log_precision = f$log_precision,
       std_error_log_precision = f$std_error_log_precision, rows = rownames(f$x))
}

# A regression over ranks is the whole table's fit (libdirmn's contract):
# the log-likelihood, AIC and BIC to rounding (1e-12 relative), the
# coefficients, their covariance, standard errors and the precision's
# coefficients to the Newton solves' accuracy (1e-7 relative to the
# largest), the Wald statistics to 1e-6; `rows`: this rank's rows of the
# whole fit's.
expect_reg_matches <- function(got, whole, rows = NULL) {
  whole <- reg_values(whole)
  if (is.null(rows)) rows <- seq_along(whole$rows)
  close_to <- function(a, b, what) {
    expect_identical(dim(a), dim(b), label = what)
    expect_identical(dimnames(a), dimnames(b), label = what)
    expect_identical(names(a), names(b), label = what)
    expect_lt(max(abs(a - b)) / max(abs(b)), 1e-7, label = paste("relative error of", what))
  }
  close_to(got$coefficients, whole$coefficients, "coefficients")
  close_to(got$vcov, whole$vcov, "vcov")
  close_to(got$std_errors, whole$std_errors, "std_errors")
  if (!is.null(whole$log_precision)) {
    close_to(got$log_precision, whole$log_precision, "log_precision")
    close_to(got$std_error_log_precision, whole$std_error_log_precision,
             "std_error_log_precision")
  } else {
    expect_null(got$log_precision)
  }
  for (field in c("loglik", "aic", "bic")) {
    expect_equal(got[[field]], whole[[field]], tolerance = 1e-12, label = field)
  }
  expect_identical(got$nobs, whole$nobs)
  expect_identical(got$parameters, whole$parameters)
  expect_true(got$converged)
  expect_identical(rownames(got$wald), rownames(whole$wald))
  expect_identical(got$wald$df, whole$wald$df)
  expect_equal(got$wald$statistic, whole$wald$statistic, tolerance = 1e-6)
  expect_identical(got$rows, whole$rows[rows])
}

test_that("regressions work on split counts (one rank: the plain table's fit)", {
  counts <- dirmn_counts(mite, backend = "cpu")
  dirmn_set_communicator(counts, identity_comm())
  d <- mite_env
  # log-linear: the whole table's fit, its rows' predictions, the response
  # the prepared table (copied back for residuals and simulate)
  plain <- dirmn_reg(mite ~ water + Topo, data = d, backend = "cpu")
  split <- dirmn_reg(counts ~ water + Topo, data = d)
  expect_s3_class(split, "dirmn_reg")
  expect_reg_matches(reg_values(split), plain)
  expect_identical(split$y, counts)
  expect_identical(split$x, plain$x)
  expect_equal(predict(split), predict(plain), tolerance = 1e-7)
  expect_equal(predict(split, newdata = d[1:5, ], type = "proportion"),
               predict(plain, newdata = d[1:5, ], type = "proportion"), tolerance = 1e-7)
  expect_equal(fitted(split), fitted(plain), tolerance = 1e-7)
  expect_equal(residuals(split), residuals(plain), tolerance = 1e-6)
  expect_equal(residuals(split, type = "deviance"), residuals(plain, type = "deviance"),
               tolerance = 1e-6)
  expect_identical(dim(simulate(split, seed = 1)[[1L]]), dim(mite))
  expect_equal(confint(split), confint(plain), tolerance = 1e-7)
  small <- dirmn_reg(counts ~ water, data = d)
  expect_equal(anova(small, split)$Chisq, anova(dirmn_reg(mite ~ water, data = d, backend = "cpu"),
                                                plain)$Chisq, tolerance = 1e-9)
  # weighted, with progress reports
  w <- rep(c(1, 2, 0.5), length.out = nrow(mite))
  reported <- 0L
  weighted <- withCallingHandlers(
    dirmn_reg(counts ~ water + Topo, data = d, weights = w, verbose = TRUE),
    message = function(m) {
      reported <<- reported + 1L
      invokeRestart("muffleMessage")
    })
  expect_gt(reported, 0L)
  expect_reg_matches(reg_values(weighted),
                     dirmn_reg(mite ~ water + Topo, data = d, weights = w, backend = "cpu"))
  # mean/precision: one precision, and a precision design (a formula, and
  # the same as a matrix), with either contrast
  expect_reg_matches(
    reg_values(dirmn_reg(counts ~ water + Topo, data = d, parametrization = "meanprecision")),
    dirmn_reg(mite ~ water + Topo, data = d, parametrization = "meanprecision", backend = "cpu"))
  mp <- dirmn_reg(counts ~ water, data = d, parametrization = "meanprecision",
                  precision_design = ~ Shrub)
  mp_plain <- dirmn_reg(mite ~ water, data = d, parametrization = "meanprecision",
                        precision_design = ~ Shrub, backend = "cpu")
  expect_reg_matches(reg_values(mp), mp_plain)
  expect_equal(mp$precision, mp_plain$precision, tolerance = 1e-7)
  expect_equal(predict(mp, newdata = d[c(1, 40), ]), predict(mp_plain, newdata = d[c(1, 40), ]),
               tolerance = 1e-7)
  z <- model.matrix(~ Shrub, d)
  expect_reg_matches(
    reg_values(dirmn_reg(counts ~ water, data = d, parametrization = "meanprecision",
                         contrast = "sum", reference = "LCIL", precision_design = z)),
    dirmn_reg(mite ~ water, data = d, parametrization = "meanprecision", contrast = "sum",
              reference = "LCIL", precision_design = z, backend = "cpu"))
  # a prepared table is fitted whole: subset and na.action may leave no row out
  expect_error(dirmn_reg(counts ~ water, data = d, subset = water > 0), paste(
    "the response is a table prepared with dirmn_counts(), whose 70 rows are fitted whole and",
    "in order: subset or na.action left out 38 rows (row 1 first)"), fixed = TRUE,
    class = "dirmn_error_invalid_argument")
  d_na <- d
  d_na$water[5] <- NA
  expect_error(dirmn_reg(counts ~ water, data = d_na), "left out 1 row (row 5 first)",
               fixed = TRUE, class = "dirmn_error_invalid_argument")
  # a non-finite covariate is the library's error, naming its row
  d_inf <- d
  d_inf$water[3] <- Inf
  expect_error(dirmn_reg(counts ~ water, data = d_inf), "row 3, covariate 2 (water)",
               fixed = TRUE, class = "dirmn_error_invalid_parameter")
  # detached: this process's rows alone, the same fit
  dirmn_set_communicator(counts, NULL)
  expect_reg_matches(reg_values(dirmn_reg(counts ~ water + Topo, data = d)), plain)
})

# A communicator whose functions live in an environment with a finalizer
# that counts in `released`: the functions are released by the package
# when that environment can be collected.
counted_comm <- function(released) {
  env <- new.env()
  reg.finalizer(env, function(e) released$n <- released$n + 1L)
  local({
    allreduce <- function(x) x
    broadcast <- function(x, root) x
    dirmn_communicator(0, 1, allreduce, broadcast)
  }, envir = env)
}

# Collects garbage until `done()` (at most `times` collections): an
# object reachable only from another's finalizer goes a collection later.
collect_until <- function(done, times = 5L) {
  for (i in seq_len(times)) {
    if (done()) return(TRUE)
    gc()
  }
  done()
}

test_that("the functions are kept until the communicator and its tables are gone", {
  # (what earlier tests left goes first)
  for (i in 1:4) gc()
  live <- dirmn:::cpp_live_communicators()
  released <- new.env()
  released$n <- 0L
  gone <- function(n) function() released$n == n && dirmn:::cpp_live_communicators() == live
  # the communicator alone
  comm <- counted_comm(released)
  expect_identical(dirmn:::cpp_live_communicators(), live + 1)
  gc()
  gc()
  expect_identical(released$n, 0L)
  rm(comm)
  expect_true(collect_until(gone(1L)))
  # attached to a table: the table keeps it after the object is gone, and
  # its functions still serve
  comm <- counted_comm(released)
  counts <- dirmn_counts(mite, backend = "cpu")
  dirmn_set_communicator(counts, comm)
  rm(comm)
  gc()
  gc()
  gc()
  expect_identical(released$n, 1L)
  expect_identical(dirmn:::cpp_live_communicators(), live + 1)
  expect_identical(dirmn_fit(counts)$alpha, dirmn_fit(mite, backend = "cpu")$alpha)
  rm(counts)
  expect_true(collect_until(gone(2L)))
  # close() of the table and detaching release it just as well
  comm <- counted_comm(released)
  counts <- dirmn_counts(mite, backend = "cpu")
  other <- dirmn_counts(mite, backend = "cpu")
  dirmn_set_communicator(counts, comm)
  dirmn_set_communicator(other, comm)
  rm(comm)
  close(counts)
  gc()
  gc()
  gc()
  expect_identical(released$n, 2L)  # `other` holds it
  dirmn_set_communicator(other, NULL)
  expect_true(collect_until(gone(3L)))
  # attached, detached and attached again
  comm <- counted_comm(released)
  dirmn_set_communicator(other, comm)
  dirmn_set_communicator(other, NULL)
  dirmn_set_communicator(other, comm)
  rm(comm, other)
  expect_true(collect_until(gone(4L)))
})

# ---------------------------------------------------------------------------
# Two ranks in two processes: this one (rank 0) and a fork of it (rank 1),
# exchanging over a base R socket.

# Reads exactly n values of `what` ("double" or "raw") from a blocking
# connection.
read_exactly <- function(con, what, n) {
  out <- if (what == "raw") raw(0) else double(0)
  while (length(out) < n) {
    got <- readBin(con, what, n = n - length(out))
    if (length(got) == 0L) stop("the other rank closed the connection or timed out")
    out <- c(out, got)
  }
  out
}

# A two-rank communicator over the socket connection `con`: rank 1 sends,
# rank 0 adds (in rank order) and sends the sums back; the root sends its
# bytes to the other. `after_broadcast(bytes, root)`, where given, makes
# broadcast's result of the bytes exchanged (so that a broadcast made to
# fail fails on both ranks after the same exchange, which keeps them in
# step).
socket_comm <- function(con, rank, after_broadcast = NULL) {
  allreduce <- function(x) {
    if (rank == 0L) {
      s <- x + read_exactly(con, "double", length(x))
      writeBin(s, con)
      s
    } else {
      writeBin(as.double(x), con)
      read_exactly(con, "double", length(x))
    }
  }
  broadcast <- function(x, root) {
    if (rank == root) {
      writeBin(x, con)
    } else {
      x <- read_exactly(con, "raw", length(x))
    }
    if (is.null(after_broadcast)) x else after_broadcast(x, root)
  }
  dirmn_communicator(rank, 2L, allreduce, broadcast)
}

# What each rank does, the same calls in the same order on both: its rows
# `x`, its rows' weights `w` and its rows of the covariates `d`.
rank_work <- function(con, rank, x, w, d) {
  comm <- socket_comm(con, rank)
  out <- list()
  catch <- function(expr) tryCatch(expr, error = function(e) list(class = class(e)[1L],
                                                                  message = conditionMessage(e)))
  # rank 1 first offers a table of other columns: every rank is refused
  wrong <- dirmn_counts(if (rank == 1L) x[, -1L] else x, backend = "cpu")
  out$mismatch <- catch(dirmn_set_communicator(wrong, comm))
  counts <- dirmn_counts(x, backend = "cpu")
  dirmn_set_communicator(counts, comm)
  fit <- dirmn_fit(counts)
  out$fit <- fit[c("alpha", "std_error_alpha", "std_error_log_alpha", "iterations", "loglik",
                   "nobs", "converged")]
  out$weighted <- dirmn_fit(counts, weights = w)$alpha
  out$sum <- dirmn_loglik_sum(counts, fit$alpha)
  od <- dirmn_overdispersion_test(counts)
  out$od <- list(statistic = od$statistic, p.value = od$p.value, estimate = od$estimate,
                 score = od$score)
  # rank 1's weights are bad: it gets its own error, rank 0 one naming it
  bad <- w
  if (rank == 1L) bad[1L] <- -1
  out$failed <- catch(dirmn_fit(counts, weights = bad))
  # and the ranks are in step again
  out$again <- dirmn_fit(counts)$alpha
  # mixtures: the whole table's, k chosen over a range (k = 3 grown from
  # this rank's k = 2 handle); each rank its own rows' responsibilities
  mix <- dirmn_mixture(counts, k = 2:3, starts = 2L, seed = 7)
  out$mixture <- mixture_values(mix)
  out$mixture_weighted <- mixture_values(dirmn_mixture(counts, k = 2L, starts = 2L, seed = 3,
                                                       weights = w))
  out$mixture_dmn <- mixture_values(dirmn_mixture(counts, k = 2:3, starts = 1L, objective = "dmn",
                                                  select = "laplace"))
  # confint() of the model sums over the ranks (a collective call)
  out$mixture_confint <- confint(mix, components = 3)
  # rank 1's progress report is left by an exiting handler, which cancels
  # its EM: every rank's is cancelled
  out$cancelled <- catch(if (rank == 1L) {
    tryCatch(dirmn_mixture(counts, k = 2L, starts = 1L, verbose = TRUE),
             message = function(m) list(class = "left", message = conditionMessage(m)))
  } else {
    dirmn_mixture(counts, k = 2L, starts = 1L)
  })
  # in step again
  out$after_cancel <- mixture_values(dirmn_mixture(counts, k = 2L, starts = 1L, seed = 5))
  # regressions: each rank its own rows of the data (rank 0's lack Shrub's
  # level "None", which its design keeps: every rank's has the same columns)
  reg <- dirmn_reg(counts ~ water + Shrub, data = d)
  out$reg <- reg_values(reg)
  out$reg_predict <- predict(reg)
  out$reg_predict_new <- predict(reg, newdata = d, type = "proportion")
  out$reg_weighted <- reg_values(dirmn_reg(counts ~ water + Shrub, data = d, weights = w))
  out$reg_mp <- reg_values(dirmn_reg(counts ~ water + Topo, data = d,
                                     parametrization = "meanprecision"))
  out$reg_mp_design <- reg_values(dirmn_reg(counts ~ water, data = d,
                                            parametrization = "meanprecision",
                                            precision_design = ~ Shrub))
  # a covariate not finite in rank 1's rows: its own error there, rank 0 one
  # naming it
  bad_d <- d
  if (rank == 1L) bad_d$water[2L] <- Inf
  out$reg_failed <- catch(dirmn_reg(counts ~ water, data = bad_d))
  # rank 1's progress report is left by an exiting handler: every rank's
  # fit is cancelled
  out$reg_cancelled <- catch(if (rank == 1L) {
    tryCatch(dirmn_reg(counts ~ water, data = d, verbose = TRUE),
             message = function(m) list(class = "left", message = conditionMessage(m)))
  } else {
    dirmn_reg(counts ~ water, data = d)
  })
  # in step again
  out$reg_again <- reg_values(dirmn_reg(counts ~ water, data = d))
  # broadcast's failures, on both ranks alike, each on a table of its own
  bad_broadcast <- function(after) {
    t <- dirmn_counts(x, backend = "cpu")
    dirmn_set_communicator(t, socket_comm(con, rank, after))
    catch(dirmn_fit(t))
  }
  out$broadcast_error <- bad_broadcast(function(x, root) stop("broadcast refused"))
  out$broadcast_classed <- bad_broadcast(function(x, root) {
    stop(structure(class = c("my_error", "error", "condition"),
                   list(message = "a classed failure", call = NULL)))
  })
  out$broadcast_integer <- bad_broadcast(function(x, root) as.integer(x))
  out$broadcast_short <- bad_broadcast(function(x, root) x[-1])
  # broadcast gets the root's rank, 0-based, as an integer
  roots <- NULL
  t <- dirmn_counts(x, backend = "cpu")
  dirmn_set_communicator(t, socket_comm(con, rank, function(x, root) {
    roots <<- c(roots, root)
    x
  }))
  out$broadcast_fit <- dirmn_fit(t)$alpha
  out$roots <- roots
  out
}

test_that("two ranks in two processes over a socket give the whole table's fit", {
  skip_if(.Platform$OS.type != "unix", "needs fork()")
  skip_if(getRversion() < "4.0.0", "needs serverSocket() (R >= 4.0)")
  skip_if_not_installed("parallel")
  # valgrind checks the forked child's memory when it exits, and finds the
  # state of the parent's worker threads (threads a child does not have)
  # lost; the one-rank tests above cover the callbacks under valgrind
  skip_if(nzchar(Sys.getenv("DIRMN_TEST_UNDER_VALGRIND")), "forks are not run under valgrind")
  x0 <- mite[1:30, ]
  x1 <- mite[31:70, ]
  w <- rep(c(1, 2, 0.5), length.out = nrow(mite))
  w0 <- w[1:30]
  w1 <- w[31:70]
  d0 <- mite_env[1:30, ]
  d1 <- mite_env[31:70, ]
  whole <- dirmn_fit(mite, backend = "cpu")
  whole_weighted <- dirmn_fit(mite, weights = w, backend = "cpu")
  whole_sum <- dirmn_loglik_sum(mite, whole$alpha, backend = "cpu")
  whole_od <- dirmn_overdispersion_test(mite, backend = "cpu")
  whole_reg <- dirmn_reg(mite ~ water + Shrub, data = mite_env, backend = "cpu")
  whole_reg_weighted <- dirmn_reg(mite ~ water + Shrub, data = mite_env, weights = w,
                                  backend = "cpu")
  whole_reg_mp <- dirmn_reg(mite ~ water + Topo, data = mite_env,
                            parametrization = "meanprecision", backend = "cpu")
  whole_reg_mp_design <- dirmn_reg(mite ~ water, data = mite_env,
                                   parametrization = "meanprecision",
                                   precision_design = ~ Shrub, backend = "cpu")
  whole_reg_small <- dirmn_reg(mite ~ water, data = mite_env, backend = "cpu")

  server <- NULL
  for (attempt in 1:25) {
    port <- 20000L + (Sys.getpid() * 31L + attempt * 977L) %% 40000L
    server <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(server)) break
  }
  skip_if(is.null(server), "no free port for the socket")
  # TCP_NODELAY where R's sockets take options: a mixture's hundreds of small
  # exchanges would otherwise wait on delayed acknowledgements
  no_delay <- if ("options" %in% names(formals(socketConnection))) list(options = "no-delay")
  # The child shares this process's dirmn contexts (their worker threads
  # stay here: the calling thread runs a loop's every chunk alone there).
  # What is garbage now is finalized here, not there (a CUDA table's
  # memory cannot be freed from a fork).
  gc()
  job <- parallel::mcparallel(silent = TRUE, {
    tryCatch({
      con <- do.call(socketConnection, c(list("127.0.0.1", port, blocking = TRUE, open = "r+b",
                                              timeout = 120), no_delay))
      tryCatch(rank_work(con, 1L, x1, w1, d1), finally = close(con))
    }, error = function(e) list(child_error = conditionMessage(e)))
  })
  # (closing the connection on an error ends the other rank's wait)
  mine <- tryCatch({
    con <- do.call(socketAccept, c(list(server, blocking = TRUE, open = "r+b", timeout = 120),
                                   no_delay))
    close(server)
    tryCatch(rank_work(con, 0L, x0, w0, d0), finally = close(con))
  }, error = function(e) list(parent_error = conditionMessage(e)))
  theirs <- parallel::mccollect(job, wait = TRUE)[[1L]]
  expect_null(mine$parent_error)
  expect_null(theirs$child_error)

  # the columns differ: every rank refused, naming the rank
  for (r in list(mine, theirs)) {
    expect_identical(r$mismatch$class, "dirmn_error_dimension_mismatch")
    expect_match(r$mismatch$message, "rank 1's counts have 34 columns, rank 0's 35", fixed = TRUE)
  }
  for (r in list(mine, theirs)) {
    expect_identical(r$fit$alpha, whole$alpha)
    expect_identical(r$fit$std_error_alpha, whole$std_error_alpha)
    expect_identical(r$fit$std_error_log_alpha, whole$std_error_log_alpha)
    expect_identical(r$fit$iterations, whole$iterations)
    expect_identical(r$fit$nobs, whole$nobs)
    expect_true(r$fit$converged)
    expect_equal(r$fit$loglik, whole$loglik, tolerance = 1e-12)
    expect_identical(r$weighted, whole_weighted$alpha)
    expect_equal(r$sum, whole_sum, tolerance = 1e-12)
    expect_equal(r$od$statistic, whole_od$statistic, tolerance = 1e-10)
    expect_equal(r$od$p.value, whole_od$p.value, tolerance = 1e-10)
    expect_equal(r$od$estimate, whole_od$estimate, tolerance = 1e-10)
    expect_equal(r$od$score, whole_od$score, tolerance = 1e-10)
    expect_identical(r$again, whole$alpha)
  }
  # one rank's failure: its own error there, a communication error naming
  # it on the other
  expect_identical(theirs$failed$class, "dirmn_error_invalid_parameter")
  expect_match(theirs$failed$message, "weight of row 1 is -1")
  expect_identical(mine$failed$class, "dirmn_error_communication")
  expect_match(mine$failed$message, "rank 1's part of this collective call failed", fixed = TRUE)
  # mixtures: the whole table's parameters and criteria on every rank, and
  # its rows' responsibilities
  mine_rows <- 1:30
  theirs_rows <- 31:70
  whole_mix <- dirmn_mixture(mite, k = 2:3, starts = 2L, seed = 7, backend = "cpu")
  whole_mix_weighted <- dirmn_mixture(mite, k = 2L, starts = 2L, seed = 3, weights = w,
                                      backend = "cpu")
  whole_mix_dmn <- dirmn_mixture(mite, k = 2:3, starts = 1L, objective = "dmn",
                                 select = "laplace", backend = "cpu")
  for (r in list(list(got = mine, rows = mine_rows), list(got = theirs, rows = theirs_rows))) {
    expect_mixture_matches(r$got$mixture, whole_mix, r$rows)
    expect_mixture_matches(r$got$mixture_weighted, whole_mix_weighted, r$rows)
    expect_mixture_matches(r$got$mixture_dmn, whole_mix_dmn, r$rows)
    expect_equal(r$got$mixture_confint, confint(whole_mix, components = 3), tolerance = 1e-5)
    expect_mixture_matches(r$got$after_cancel,
                           dirmn_mixture(mite, k = 2L, starts = 1L, seed = 5, backend = "cpu"),
                           r$rows)
  }
  # the ranks' responsibilities are together the whole table's
  for (k in c("2", "3")) {
    expect_lt(max(abs(rbind(mine$mixture$models[[k]]$responsibilities,
                            theirs$mixture$models[[k]]$responsibilities) -
                      whole_mix$models[[k]]$responsibilities)), 1e-5)
  }
  # rank 1's handler left its progress report: cancelled there (the
  # handler's value) and on rank 0
  expect_identical(theirs$cancelled$class, "left")
  expect_match(theirs$cancelled$message, "dirmn_mixture: k = 2, start 1, iteration 1",
               fixed = TRUE)
  expect_identical(mine$cancelled$class, "dirmn_error_cancelled")
  expect_match(mine$cancelled$message, "cancelled at EM iteration 1", fixed = TRUE)
  # regressions: the whole table's fit on every rank, predictions of its rows
  for (r in list(list(got = mine, rows = mine_rows), list(got = theirs, rows = theirs_rows))) {
    expect_reg_matches(r$got$reg, whole_reg, r$rows)
    expect_equal(r$got$reg_predict, predict(whole_reg)[r$rows, ], tolerance = 1e-6)
    expect_equal(r$got$reg_predict_new,
                 predict(whole_reg, newdata = mite_env[r$rows, ], type = "proportion"),
                 tolerance = 1e-6)
    expect_reg_matches(r$got$reg_weighted, whole_reg_weighted, r$rows)
    expect_reg_matches(r$got$reg_mp, whole_reg_mp, r$rows)
    expect_reg_matches(r$got$reg_mp_design, whole_reg_mp_design, r$rows)
    expect_reg_matches(r$got$reg_again, whole_reg_small, r$rows)
  }
  expect_identical(colnames(mine$reg$std_errors), colnames(mite))
  expect_identical(rownames(mine$reg$coefficients),
                   c("(Intercept)", "water", "ShrubMany", "ShrubNone"))
  # a bad covariate on rank 1: its own error, a communication error on rank 0
  expect_identical(theirs$reg_failed$class, "dirmn_error_invalid_parameter")
  expect_match(theirs$reg_failed$message, "row 2 (\"32\"), covariate 2 (water)", fixed = TRUE)
  expect_identical(mine$reg_failed$class, "dirmn_error_communication")
  expect_match(mine$reg_failed$message, "rank 1's part of this collective call failed",
               fixed = TRUE)
  # rank 1's handler left its progress report: cancelled there and on rank 0
  expect_identical(theirs$reg_cancelled$class, "left")
  expect_match(theirs$reg_cancelled$message, "dirmn_reg: iteration 1", fixed = TRUE)
  expect_identical(mine$reg_cancelled$class, "dirmn_error_cancelled")
  expect_match(mine$reg_cancelled$message, "cancelled after 1 Newton step", fixed = TRUE)
  # broadcast's failures: R conditions of class dirmn_error_communication
  # saying what the function did
  for (r in list(mine, theirs)) {
    expect_identical(r$broadcast_error$class, "dirmn_error_communication")
    expect_match(r$broadcast_error$message,
                 "broadcast callback returned 1: broadcast(x, root) raised an error: broadcast refused",
                 fixed = TRUE)
    expect_identical(r$broadcast_classed$class, "dirmn_error_communication")
    expect_match(r$broadcast_classed$message, "raised an error: a classed failure", fixed = TRUE)
    # root's raw vector, of the length given
    expect_identical(r$broadcast_integer$class, "dirmn_error_communication")
    expect_match(r$broadcast_integer$message, paste0(
      "broadcast callback returned 2: broadcast\\(x, root\\) returned an integer vector of length ",
      "[0-9]+; it must return a raw vector of length [0-9]+, root's bytes"))
    expect_identical(r$broadcast_short$class, "dirmn_error_communication")
    expect_match(r$broadcast_short$message, "returned a raw vector of length", fixed = TRUE)
    expect_identical(r$broadcast_fit, whole$alpha)
    expect_type(r$roots, "integer")
    expect_true(length(r$roots) > 0L)
    expect_true(all(r$roots %in% 0:1))
  }
  # each rank broadcasts its part in turn
  expect_setequal(c(mine$roots, theirs$roots), 0:1)
})
