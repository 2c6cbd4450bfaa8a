# Issue #25: the default starts, growing k from k - 1, the criteria's
# arguments, one count of parameters and observations, the library's
# component order.
mite <- mite_table()

# mite as the repository's shared data holds it, where the test run knows
# that folder (scripts/test-r.sh sets DIRMN_SHARED_DATA); NULL elsewhere.
shared_mite <- function() {
  dir <- Sys.getenv("DIRMN_SHARED_DATA")
  path <- file.path(dir, "mite.csv")
  if (!nzchar(dir) || !file.exists(path)) return(NULL)
  as.matrix(read.csv(path, row.names = 1))
}

test_that("the default init is the library's mixed starts, with the library's number of starts", {
  m <- dirmn_mixture(mite, k = 2)
  expect_identical(m$init, "mixed")
  defaults <- dirmn:::cpp_mixture_defaults()
  expect_identical(defaults$init, 3L)  # DIRMN_INIT_MIXED, the library's default
  expect_identical(m$starts, defaults$starts)
  expect_identical(formals(dirmn_mixture)$init[[2L]], "mixed")
  # the same fit as asking for it by name
  expect_identical(coef(m), coef(dirmn_mixture(mite, k = 2, init = "mixed",
                                               starts = defaults$starts)))
})

test_that("under ML the log-likelihood does not fall as k grows (k - 1 seeds k)", {
  tables <- list(shipped = mite, shared = shared_mite())
  for (name in names(tables)) {
    x <- tables[[name]]
    if (is.null(x)) next
    for (init in c("mixed", "kmeanspp")) {
      m <- dirmn_mixture(x, k = 1:8, init = init, starts = 2L)
      ll <- m$criteria$loglik
      expect_true(all(diff(ll) >= -1e-8 * abs(ll[-1L])),
                  info = sprintf("%s, init %s: %s", name, init, paste(format(ll), collapse = " ")))
    }
  }
  # the same models as fitting each k after its predecessor by hand: k = 3
  # alone (no k - 1 to grow from) is never better than k = 3 grown from 2
  grown <- dirmn_mixture(mite, k = 2:3, starts = 1L)$models[["3"]]$loglik
  alone <- dirmn_mixture(mite, k = 3, starts = 1L)$models[["3"]]$loglik
  expect_gte(grown, alone - 1e-8 * abs(alone))
})

test_that("select = \"laplace\" with objective = \"ml\" is refused, saying why", {
  e <- expect_error(dirmn_mixture(mite, k = 1:3, select = "laplace"),
                    class = "dirmn_error_invalid_argument")
  expect_match(conditionMessage(e), "Laplace criterion belongs to dmn's")
  expect_match(conditionMessage(e), "rewards extra components")
  expect_s3_class(e, "dirmn_error")
  m <- dirmn_mixture(mite, k = 1:3, objective = "dmn", select = "laplace", starts = 1L)
  expect_identical(m$selected, m$criteria$k[which.min(m$criteria$laplace)])
})

test_that("AIC's k is the penalty; components picks the model", {
  m <- dirmn_mixture(mite, k = 1:5, starts = 1L)
  sel <- m$models[[as.character(m$selected)]]
  five <- m$models[["5"]]
  expect_equal(AIC(m), -2 * sel$loglik + 2 * sel$parameters)
  expect_equal(AIC(m, components = 5), -2 * five$loglik + 2 * five$parameters)
  expect_equal(AIC(m, components = 5), five$aic)
  expect_equal(BIC(m, components = 5), five$bic)
  # k = 5 is the penalty (that is what AIC means), with a warning that 5 is
  # also a number of components
  w <- expect_warning(a5 <- AIC(m, k = 5), class = "dirmn_argument_warning")
  expect_match(conditionMessage(w), "AIC\\(m, components = 5\\)")
  expect_equal(a5, -2 * sel$loglik + 5 * sel$parameters)
  expect_silent(a <- AIC(m, k = log(70)))
  expect_equal(a, -2 * sel$loglik + log(70) * sel$parameters)
  expect_silent(AIC(m, k = 2))
  expect_error(BIC(m, k = 5), "components = k", class = "dirmn_error_invalid_argument")
  # every method takes components; k still works there, with a warning
  expect_identical(coef(m, components = 3), m$models[["3"]]$alpha)
  expect_identical(mixture_weights(m, components = 3), m$models[["3"]]$weights)
  expect_identical(responsibilities(m, components = 3), m$models[["3"]]$responsibilities)
  expect_identical(fitted(m, components = 3), fitted(m$models[["3"]]))
  expect_identical(logLik(m, components = 3), logLik(m$models[["3"]]))
  expect_identical(predict(m, mite[1:4, ], components = 3),
                   predict(m$models[["3"]], mite[1:4, ]))
  expect_identical(summary(m, components = 3)$k, 3L)
  expect_warning(c3 <- coef(m, k = 3), "k is deprecated; use components",
                 class = "dirmn_deprecated_warning")
  expect_identical(c3, coef(m, components = 3))
  expect_error(coef(m, components = 9), "no model with 9 components was fitted \\(fitted: components = 1, 2, 3, 4, 5\\)",
               class = "dirmn_error_invalid_argument")
  path <- tempfile(fileext = ".png")
  grDevices::png(path)
  expect_identical(plot(m, type = "components", components = 2), m)
  grDevices::dev.off()
  unlink(path)
})

test_that("dirmn_fit and dirmn_mixture(k = 1) count parameters and observations alike", {
  x <- cbind(mite, empty = 0L)
  x <- rbind(x, zero = 0L)
  fit <- dirmn_fit(x)
  one <- dirmn_mixture(x, k = 1)$models[["1"]]
  expect_equal(attr(logLik(fit), "df"), 35)
  expect_equal(attr(logLik(one), "df"), 35)
  expect_equal(nobs(fit), 70)
  expect_equal(nobs(one), 70)
  expect_equal(one$loglik, fit$loglik, tolerance = 1e-8)
  expect_equal(AIC(one), AIC(fit), tolerance = 1e-8)
  expect_equal(BIC(one), BIC(fit), tolerance = 1e-8)
  # the library's own criteria agree with R's from logLik()
  expect_equal(one$aic, AIC(one), tolerance = 1e-10)
  expect_equal(one$bic, BIC(one), tolerance = 1e-10)
  # weights: the observations are the sum of the positive weights of rows with counts
  w <- c(rep(2, 35), rep(0.5, 35), 3)
  fw <- dirmn_fit(x, weights = w)
  expect_equal(nobs(fw), sum(w[1:70]))
  expect_equal(nobs(dirmn_mixture(x, k = 1, weights = w)$models[[1L]]), sum(w[1:70]))
})

test_that("components keep the library's order: decreasing weight, predict() labels match", {
  counts <- dirmn_counts(mite)
  m <- dirmn_mixture(counts, k = 4, starts = 2L, seed = 3)$models[["4"]]
  raw <- dirmn:::cpp_mixture_fit(counts$ptr, 4L, 0L, 3L, 2L, 3, 1e-9, 1000L, 4L, NULL, NULL, NULL)
  expect_identical(unname(m$alpha), unname(raw$alpha))
  expect_identical(unname(m$weights), raw$weights)
  expect_true(all(diff(m$weights) <= 0))
  # the labels of predict() are the rows of coef(): R's reference posterior
  ref <- ref_mixture(mite, m$alpha, m$weights)
  expect_identical(unname(predict(m, mite, type = "class")),
                   max.col(ref$posterior, ties.method = "first"))
  expect_equal(unname(predict(m, mite)), ref$posterior, tolerance = 1e-8)
  expect_identical(predict(m, mite, type = "class"), predict(m, type = "class"))
  close(counts)
})
