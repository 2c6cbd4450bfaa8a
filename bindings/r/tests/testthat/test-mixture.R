mite <- mite_table()

# Three well-separated components over 30 categories, with known labels.
set.seed(701)
sep_alpha <- matrix(0.2, 3, 30)
for (j in 1:3) sep_alpha[j, (j - 1) * 10 + 1:10] <- 5
sep_labels <- sample(1:3, 240, replace = TRUE, prob = c(0.5, 0.3, 0.2))
sep <- t(vapply(sep_labels, function(j) ref_rdirmn(1, rpois(1, 200) + 20, sep_alpha[j, ])[1, ],
                numeric(30)))
dimnames(sep) <- list(paste0("s", 1:240), paste0("cat", 1:30))

test_that("the dmn objective and criteria agree with DirichletMultinomial::dmn on the mite table", {
  skip_if_not_installed("DirichletMultinomial")
  x <- mite
  storage.mode(x) <- "integer"
  for (k in 1:4) {
    fit <- DirichletMultinomial::dmn(x, k, seed = 1)
    gof <- DirichletMultinomial::goodnessOfFit(fit)
    # dmn's LogDet is its formula (helper-fit.R) at its own alpha and
    # responsibilities, for one choice of its first component.
    alpha_dmn <- t(DirichletMultinomial::fitted(fit))
    z_dmn <- DirichletMultinomial::mixture(fit)
    ld <- vapply(seq_len(k), function(f) ref_logdet_dmn(x, alpha_dmn, z_dmn, first = f), 0)
    expect_lt(min(abs(ld / gof[["LogDet"]] - 1)), 1e-10)
    # Different starts reach different optima: compare where one of a few
    # one-start k-means fits reaches dmn's (the same NLE).
    found <- FALSE
    for (seed in 1:5) {
      model <- dirmn_mixture(x, k = k, objective = "dmn", init = "kmeans", starts = 1L,
                             seed = seed)$models[[1L]]
      if (abs(model$objective / gof[["NLE"]] - 1) < 1e-8) {
        found <- TRUE
        break
      }
    }
    if (!found) next
    expect_equal(sort(unname(model$weights)), sort(DirichletMultinomial::mixturewt(fit)$pi),
                 tolerance = 1e-5)
    expect_lt(abs(model$aic / gof[["AIC"]] - 1), 1e-8)
    expect_lt(abs(model$bic / gof[["BIC"]] - 1), 1e-8)
    # laplace: dmn's formula with the weight term averaged over dmn's
    # possible first components: within 1e-4 of dmn's (1e-8 at k = 1) ...
    expect_lt(abs(model$laplace / gof[["Laplace"]] - 1), if (k == 1) 1e-8 else 1e-4)
    # ... and with dmn's first component, dmn's value (to dmn's convergence)
    as_dmn <- model$laplace + 0.5 * (log(model$weights) - mean(log(model$weights)))
    expect_lt(min(abs(as_dmn / gof[["Laplace"]] - 1)), 1e-6)
    # the plain-R formula at libdirmn's fit
    expect_lt(abs(ref_laplace_dmn(x, model$alpha, model$responsibilities, model$objective) /
                    model$laplace - 1), 1e-6)
  }
  # dmn reaches its optimum with at least k = 1 and 2 here
  m <- dirmn_mixture(x, k = 1:2, objective = "dmn", init = "kmeans", starts = 1L)
  gof <- t(vapply(1:2, function(k) DirichletMultinomial::goodnessOfFit(
    DirichletMultinomial::dmn(x, k, seed = 1)), numeric(5)))
  expect_lt(max(abs(m$criteria$objective / gof[, "NLE"] - 1)), 1e-8)
})

test_that("dmn refuses rows of zeros; dirmn_mixture gives finite results for zero rows and columns", {
  xz <- cbind(mite[, 1:10], empty = 0L, mite[, 11:35])
  xz <- rbind(xz[1:5, ], 0L, xz[6:70, ])
  if (requireNamespace("DirichletMultinomial", quietly = TRUE)) {
    expect_error(DirichletMultinomial::dmn(xz, 2, seed = 1))
  }
  for (objective in c("ml", "dmn")) {
    m <- dirmn_mixture(xz, k = 1:3, objective = objective)
    crit <- m$criteria
    expect_true(all(is.finite(as.matrix(crit[, c("loglik", "objective", "aic", "bic",
                                                  "laplace")]))))
    for (model in m$models) {
      expect_true(all(is.finite(model$alpha)) && all(model$alpha > 0))
      # a row of zeros is explained by every component alike: its posterior
      # is the mixing weights
      expect_equal(unname(model$responsibilities[6, ]), unname(model$weights), tolerance = 1e-12)
      ref <- ref_mixture(xz, model$alpha, model$weights)
      expect_rel_equal(model$loglik, ref$loglik, 1e-9)
    }
  }
  # under maximum likelihood the zeros change nothing
  plain <- dirmn_mixture(mite, k = 1:3)
  zeros <- dirmn_mixture(xz, k = 1:3)
  expect_lt(max(abs(zeros$criteria$loglik / plain$criteria$loglik - 1)), 1e-8)
})

test_that("well-separated simulated components are recovered", {
  m <- dirmn_mixture(sep, k = 1:4)
  expect_identical(m$selected, 3L)
  expect_gte(ari(predict(m, type = "class"), sep_labels), 0.95)
  for (objective in c("ml", "dmn")) {
    for (init in c("kmeanspp", "kmeans", "soft_kmeans")) {
      mk <- dirmn_mixture(sep, k = 3, objective = objective, init = init)
      expect_gte(ari(predict(mk, type = "class"), sep_labels), 0.95)
    }
  }
  # fitted log-likelihood and posteriors are the plain-R ones at the fit
  model <- m$models[["3"]]
  ref <- ref_mixture(sep, model$alpha, model$weights)
  expect_rel_equal(model$loglik, ref$loglik, 1e-9)
  expect_lt(max(abs(model$responsibilities - ref$posterior)), 1e-8)
  # the components' alpha are near the truth (matched by their largest block)
  for (j in 1:3) {
    block <- which.max(c(sum(model$alpha[j, 1:10]), sum(model$alpha[j, 11:20]),
                         sum(model$alpha[j, 21:30])))
    est <- model$alpha[j, ] / sum(model$alpha[j, ])
    truth <- sep_alpha[block, ] / sum(sep_alpha[block, ])
    expect_lt(max(abs(est - truth)), 0.03)
  }
})

test_that("k = 1 is the single Dirichlet-multinomial fit", {
  skip_if_not_installed("dirmult")
  m <- dirmn_mixture(mite, k = 1)
  ref <- dirmult::dirmult(mite, epsilon = 1e-10, trace = FALSE)
  expect_lt(max_rel(unname(m$models[[1]]$alpha[1, ]), ref$gamma), 1e-5)
  expect_rel_equal(m$models[[1]]$loglik, ref_loglik_sum(mite, ref$gamma, full = TRUE), 1e-9)
  expect_equal(unname(m$models[[1]]$weights), 1)
})

test_that("predict assigns new rows; class is the most probable component", {
  m <- dirmn_mixture(sep, k = 3)
  model <- m$models[[1]]
  set.seed(702)
  new_labels <- rep(1:3, each = 5)
  new <- t(vapply(new_labels, function(j) ref_rdirmn(1, 150, sep_alpha[j, ])[1, ], numeric(30)))
  dimnames(new) <- list(paste0("new", 1:15), colnames(sep))
  p <- predict(m, new)
  expect_identical(dim(p), c(15L, 3L))
  expect_identical(dimnames(p), list(rownames(new), rownames(model$alpha)))
  expect_lt(max(abs(p - ref_mixture(new, model$alpha, model$weights)$posterior)), 1e-8)
  cls <- predict(m, new, type = "class")
  expect_identical(unname(cls), max.col(p, ties.method = "first"))
  expect_identical(names(cls), rownames(new))
  expect_equal(ari(cls, new_labels), 1)
  # every input form; a vector is one row
  sp <- Matrix::Matrix(new, sparse = TRUE)
  for (input in list(sp, dirmn_counts(new, backend = "cpu"), as.data.frame(new))) {
    expect_lt(max(abs(predict(m, input) - p)), 1e-12)
  }
  expect_lt(max(abs(predict(m, new[4, ]) - p[4, , drop = FALSE])), 1e-12)
  # without newdata: the fitted rows' responsibilities
  expect_identical(predict(m), responsibilities(m))
  # a model restored from disk predicts the same, without the library handle
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(m, path)
  back <- readRDS(path)
  expect_lt(max(abs(predict(back, new) - p)), 1e-10)
  expect_identical(predict(back, new, type = "class"), cls)
  # columns must match
  expect_error(predict(m, new[, -1]), "29 columns", class = "dirmn_error_dimension_mismatch")
  renamed <- new
  colnames(renamed)[4] <- "other"
  expect_error(predict(m, renamed), "\"cat4\" is not a column of newdata; \"other\" of newdata",
               class = "dirmn_error_dimension_mismatch")
  expect_error(predict(m, new, type = "response"), class = "dirmn_error_invalid_argument")
})

test_that("S3 methods: coef, weights, responsibilities, logLik, AIC, BIC, fitted, nobs", {
  m <- dirmn_mixture(mite, k = 1:3, select = "aic")
  expect_s3_class(m, "dirmn_mixture")
  expect_identical(m$selected, m$criteria$k[which.min(m$criteria$aic)])
  model <- m$models[[as.character(m$selected)]]
  expect_s3_class(model, "dirmn_mixture_fit")
  k <- model$k
  expect_identical(coef(m), model$alpha)
  expect_identical(dim(coef(m)), c(k, 35L))
  expect_identical(colnames(coef(m)), colnames(mite))
  expect_identical(dim(coef(m, components = 2)), c(2L, 35L))
  expect_error(coef(m, components = 7), "no model with 7 components", class = "dirmn_error_invalid_argument")
  w <- mixture_weights(m)
  expect_equal(sum(w), 1)
  expect_true(all(diff(w) <= 0))
  r <- responsibilities(m)
  expect_identical(dim(r), c(70L, k))
  expect_identical(rownames(r), rownames(mite))
  expect_equal(unname(rowSums(r)), rep(1, 70))
  expect_equal(unname(colMeans(r)), unname(w), tolerance = 1e-4)
  ll <- logLik(m)
  P <- k * 35 + k - 1
  expect_identical(attr(ll, "df"), P)
  expect_equal(attr(ll, "nobs"), 70)
  expect_equal(nobs(m), 70)
  ref <- ref_mixture(mite, model$alpha, model$weights)$loglik
  expect_equal(AIC(m), -2 * ref + 2 * P, tolerance = 1e-9)
  expect_equal(BIC(m), -2 * ref + log(70) * P, tolerance = 1e-9)
  # under maximum likelihood the criteria are R's
  expect_equal(m$criteria$aic, vapply(m$models, AIC, 0), ignore_attr = TRUE, tolerance = 1e-12)
  expect_equal(m$criteria$bic, vapply(m$models, BIC, 0), ignore_attr = TRUE, tolerance = 1e-12)
  f <- fitted(m)
  expect_identical(dim(f), dim(mite))
  expect_equal(unname(rowSums(f)), unname(rowSums(mite) + 0))
  p <- model$alpha / rowSums(model$alpha)
  expect_equal(f[9, ], sum(mite[9, ]) * colSums(r[9, ] * p))
  expect_output(print(m), "Selected by AIC")
  expect_output(print(model), "Dirichlet-multinomial mixture, k =")
  s <- summary(m)
  expect_s3_class(s, "summary.dirmn_mixture")
  expect_output(print(s), "Largest shares")
})

test_that("plot writes the model-selection curve and the component profiles", {
  m <- dirmn_mixture(sep, k = 1:4)
  for (type in c("criteria", "components")) {
    path <- tempfile(fileext = ".png")
    grDevices::png(path, width = 600, height = 400)
    plot(m, type = type)
    grDevices::dev.off()
    expect_true(file.exists(path))
    expect_gt(file.size(path), 0)
    unlink(path)
  }
  path <- tempfile(fileext = ".png")
  grDevices::png(path)
  plot(m, type = "criteria", criterion = "laplace")
  plot(m$models[["2"]], top = 5)
  grDevices::dev.off()
  expect_gt(file.size(path), 0)
  unlink(path)
})

test_that("a seed gives the same fit; verbose reports every EM iteration", {
  a <- dirmn_mixture(mite, k = 2:3, seed = 11)
  b <- dirmn_mixture(mite, k = 2:3, seed = 11)
  for (k in c("2", "3")) {
    expect_identical(a$models[[k]]$alpha, b$models[[k]]$alpha)
    expect_identical(a$models[[k]]$responsibilities, b$models[[k]]$responsibilities)
  }
  msgs <- capture_messages(v <- dirmn_mixture(mite, k = 2, starts = 2, verbose = TRUE))
  expect_match(msgs[1], "^dirmn_mixture: k = 2, start 1, iteration 1: log-likelihood")
  expect_true(any(grepl("start 2, iteration 1:", msgs)))
  expect_match(msgs[2], "\\(change [-0-9.e+]+\\)")
  unconverged(expect_message(dirmn_mixture(mite, k = 1, starts = 1, max_iterations = 1, verbose = TRUE),
                             "k = 1, start 1, iteration 1"))
})

test_that("predict() of newdata without rows is empty, as ddirmn() is", {
  m <- dirmn_mixture(mite, k = 1:2, starts = 1)
  model <- m$models[["2"]]
  comp <- rownames(model$alpha)
  for (empty in list(mite[0, , drop = FALSE], unname(mite[0, , drop = FALSE]),
                     Matrix::Matrix(mite, sparse = TRUE)[0, , drop = FALSE],
                     as.data.frame(mite)[0, ])) {
    for (object in list(m, model)) {
      prob <- predict(object, empty)
      expect_identical(dim(prob), c(0L, 2L))
      expect_type(prob, "double")
      expect_identical(colnames(prob), comp)
      cls <- predict(object, empty, type = "class")
      expect_type(cls, "integer")
      expect_length(cls, 0L)
    }
  }
  # what n rows give, with 0 rows
  expect_identical(predict(m, mite[0, , drop = FALSE]), predict(m, mite[1:3, ])[0, , drop = FALSE])
  expect_identical(predict(m, mite[0, , drop = FALSE], type = "class"), integer(0))
  # a restored model too, and the columns are still checked
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(model, path)
  expect_identical(dim(predict(readRDS(path), mite[0, , drop = FALSE])), c(0L, 2L))
  expect_error(predict(m, mite[0, 1:3, drop = FALSE]), "3 columns but the mixture was fitted to 35",
               class = "dirmn_error_dimension_mismatch")
  renamed <- mite[0, , drop = FALSE]
  colnames(renamed)[2] <- "other"
  expect_error(predict(m, renamed), "\"other\" of newdata is missing",
               class = "dirmn_error_dimension_mismatch")
})

test_that("bad arguments are dirmn errors", {
  expect_error(dirmn_mixture(mite[1:3, ], k = 4), "k \\(4\\)",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 0), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 2, objective = "map"), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 2, init = "random"), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 2, select = "dic"), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 2, starts = 0), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(mite, k = 2, seed = -1), class = "dirmn_error_invalid_argument")
  w <- rep(1, 70)
  w[8] <- -0.5
  expect_error(dirmn_mixture(mite, k = 2, weights = w), "weight of row 8",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_mixture(mite, k = 2, weights = w[-1]),
               class = "dirmn_error_dimension_mismatch")
  dirmn:::cpp_set_force_cancel(TRUE)
  on.exit(dirmn:::cpp_set_force_cancel(FALSE))
  expect_error(dirmn_mixture(mite, k = 2), class = "dirmn_error_cancelled")
})

test_that("fitted models and criteria have their documented layout", {
  # (built in R from cpp_mixture_fit's plain lists: .mixture_model, .mixture_criteria)
  m <- dirmn_mixture(unname(mite), k = c(3, 1), starts = 1L)
  expect_identical(names(m), c("models", "criteria", "selected", "select", "objective",
                               "init", "starts", "call", "nobs", "dimnames"))
  expect_identical(names(m$models), c("1", "3"))
  model <- m$models[["3"]]
  expect_identical(names(model), c(
    "alpha", "weights", "responsibilities", "loglik", "objective", "aic", "bic", "laplace",
    "parameters", "iterations", "converged", "k", "start", "nobs", "objective_kind", "ptr",
    "row_totals", "backend", "device", "data", "row_weights"))
  comp <- paste0("comp", 1:3)
  expect_identical(dimnames(model$alpha), list(comp, NULL))
  expect_identical(dimnames(model$responsibilities), list(NULL, comp))
  expect_identical(names(model$weights), comp)
  expect_true(all(diff(model$weights) <= 0))
  expect_type(model$parameters, "double")
  expect_type(model$iterations, "integer")
  expect_type(model$k, "integer")
  expect_type(model$start, "integer")
  expect_identical(model$nobs, 70)
  expect_identical(model$objective_kind, "ml")
  expect_identical(model$data, unname(mite))
  expect_equal(model$row_totals, unname(rowSums(mite)))
  crit <- m$criteria
  expect_s3_class(crit, "data.frame")
  expect_identical(names(crit), c("k", "loglik", "objective", "aic", "bic", "laplace",
                                  "parameters", "iterations", "converged"))
  expect_identical(crit$k, c(1L, 3L))
  expect_identical(crit$bic, unname(c(m$models[["1"]]$bic, model$bic)))
  expect_identical(crit$converged, unname(c(m$models[["1"]]$converged, model$converged)))
  expect_identical(attr(crit, "row.names"), 1:2)
  expect_identical(dim(crit), c(2L, 9L))
})

test_that("mixtures stopped at max_iterations warn once, naming the k, and keep the models", {
  w <- tryCatch(dirmn_mixture(mite, k = 1:3, max_iterations = 2), warning = identity)
  expect_s3_class(w, "dirmn_convergence_warning")
  expect_s3_class(w, "warning")
  m <- unconverged(dirmn_mixture(mite, k = 1:3, max_iterations = 2))
  bad <- m$criteria$k[!m$criteria$converged]
  expect_true(length(bad) > 0)
  expect_identical(conditionMessage(w), sprintf(
    "EM did not converge in max_iterations = 2 iterations for k = %s (the best of the starts); the result%s: increase max_iterations",
    paste(bad, collapse = ", "), if (length(bad) == 1) " is the last iterate" else "s are the last iterates"))
  expect_length(m$models, 3L)
  warnings <- 0L
  withCallingHandlers(dirmn_mixture(mite, k = 1:3, max_iterations = 2),
                      warning = function(w) {
                        warnings <<- warnings + 1L
                        invokeRestart("muffleWarning")
                      })
  expect_identical(warnings, 1L)
  expect_silent(dirmn_mixture(mite, k = 1:2))
})

test_that("m_step_iterations: a generalized EM with the classical EM's optimum", {
  # two well-separated clusters: the default (a few Newton steps per M step)
  # and 200 (every M step fitted to convergence, the classical EM) reach the
  # same optimum
  set.seed(702)
  alpha2 <- matrix(0.3, 2, 12)
  alpha2[1, 1:6] <- 4
  alpha2[2, 7:12] <- 4
  labels2 <- rep(1:2, c(50, 30))
  x2 <- t(vapply(labels2, function(j) ref_rdirmn(1, 150, alpha2[j, ])[1, ], numeric(12)))
  expect_identical(formals(dirmn_mixture)$m_step_iterations,
                   dirmn:::cpp_mixture_defaults()$m_step_iterations)
  for (objective in c("ml", "dmn")) {
    m_default <- dirmn_mixture(x2, k = 2, objective = objective, starts = 2L)$models[[1L]]
    m_classic <- dirmn_mixture(x2, k = 2, objective = objective, starts = 2L,
                               m_step_iterations = 200L)$models[[1L]]
    expect_true(m_default$converged)
    expect_true(m_classic$converged)
    expect_lt(abs(m_default$loglik / m_classic$loglik - 1), 1e-8)
    expect_lt(abs(m_default$objective / m_classic$objective - 1), 1e-8)
    expect_gte(ari(predict(m_default, x2, type = "class"), labels2), 0.95)
  }
  # a single step per M step is allowed too
  m1 <- dirmn_mixture(x2, k = 2, starts = 2L, m_step_iterations = 1L)$models[[1L]]
  expect_true(m1$converged)
  # below 1, or not a whole number, is an error naming the argument
  expect_error(dirmn_mixture(x2, k = 2, m_step_iterations = 0L), "m_step_iterations",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(x2, k = 2, m_step_iterations = 2.5), "m_step_iterations",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_mixture(x2, k = 2, m_step_iterations = NA), "m_step_iterations",
               class = "dirmn_error_invalid_argument")
  # the library's own check, reached below the R one
  counts <- dirmn_counts(x2)
  raw <- dirmn:::cpp_mixture_fit(counts$ptr, 2L, 0L, 3L, 1L, 1, 1e-9, 1000L, 0L, NULL, NULL,
                                 NULL)
  expect_s3_class(raw, "dirmn_failure")
  expect_match(raw$message, "m_step_iterations (0) must be >= 1", fixed = TRUE)
  close(counts)
})
