# Handles freed by finalizers and close() while a computation on their
# context runs (a garbage collection or a close() in a handler of a fit's
# progress messages), and contexts kept alive by what uses them. The leak
# these guard against is invisible to R: scripts/test-r.sh runs this file
# under valgrind, which sees the library's memory.
mite <- mite_table()

# Makes, on the CPU context, `tables` prepared tables and one fitted mixture
# that nothing refers to once it returns: garbage whose finalizers the next
# gc() runs.
make_garbage <- function(tables = 3L) {
  for (i in seq_len(tables)) dirmn_counts(mite, backend = "cpu")
  dirmn_mixture(mite[1:30, ], k = 2, starts = 1, backend = "cpu")
  invisible(NULL)
}

test_that("a gc() in a progress handler frees counts and mixtures of the busy context", {
  counts <- dirmn_counts(mite, backend = "cpu")
  expected <- dirmn_fit(counts)
  gc()
  live <- c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures())
  make_garbage()
  expect_identical(c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures()), live + c(3, 1))
  during <- NULL
  fit <- withCallingHandlers(
    dirmn_fit(counts, verbose = TRUE),
    message = function(m) {
      if (is.null(during)) {
        # inside the fit's call on the CPU context: the finalizers of the
        # garbage (tables and a mixture of that context) run here
        gc()
        during <<- c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures())
      }
      invokeRestart("muffleMessage")
    })
  expect_identical(during, live)
  # the fit is undisturbed
  expect_identical(fit$alpha, expected$alpha)
  expect_identical(fit$loglik, expected$loglik)
  expect_identical(fit$iterations, expected$iterations)
  # the same during an EM run
  make_garbage()
  during <- NULL
  m <- withCallingHandlers(
    dirmn_mixture(counts, k = 2, starts = 1, verbose = TRUE),
    message = function(msg) {
      if (is.null(during)) {
        gc()
        during <<- c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures())
      }
      invokeRestart("muffleMessage")
    })
  expect_identical(during, live)
  expect_identical(coef(m), coef(dirmn_mixture(counts, k = 2, starts = 1)))
  gc()
  expect_identical(c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures()), live + c(0, 1))
  # the context serves the next calls as before
  expect_identical(dirmn_fit(counts)$alpha, expected$alpha)
  expect_identical(dim(predict(m, mite)), c(70L, 2L))
  rm(m)
  gc()
  expect_identical(c(dirmn:::cpp_live_counts(), dirmn:::cpp_live_mixtures()), live)
})

test_that("close() in a progress handler closes other tables of the context, not the fitted one", {
  counts <- dirmn_counts(mite, backend = "cpu")
  other <- dirmn_counts(mite[1:10, ], backend = "cpu")
  expected <- dirmn_fit(counts)
  live <- dirmn:::cpp_live_counts()
  closed <- FALSE
  fit <- withCallingHandlers(
    dirmn_fit(counts, verbose = TRUE),
    message = function(m) {
      if (!closed) {
        close(other)
        closed <<- TRUE
        expect_identical(dirmn:::cpp_live_counts(), live - 1)
      }
      invokeRestart("muffleMessage")
    })
  expect_identical(fit$alpha, expected$alpha)
  expect_error(ddirmn(other, rep(1, 35)), "has been closed", class = "dirmn_error_null_pointer")
  expect_silent(close(other))
  # the table the fit reads stays open
  expect_error(withCallingHandlers(dirmn_fit(counts, verbose = TRUE),
                                   message = function(m) close(counts)),
               "close it after the fit returns", class = "dirmn_error_invalid_argument")
  expect_identical(dirmn_fit(counts)$alpha, expected$alpha)
  close(counts)
  expect_identical(dirmn:::cpp_live_counts(), live - 2)
})

test_that("a fitted mixture keeps its context alive", {
  # A context is finalized only once nothing uses it: a mixture's
  # assignment of new rows holds the mixture's context, so a context
  # finalized during one (by a gc() in the interrupt check) would be lost.
  cache <- dirmn:::.state$contexts
  saved <- as.list(cache)
  rm(list = ls(cache), envir = cache)
  on.exit({
    rm(list = ls(cache), envir = cache)
    list2env(saved, envir = cache)
  })
  counts <- dirmn_counts(mite, backend = "cpu")
  m <- dirmn_mixture(counts, k = 2, starts = 1)
  # the new context is the cache's only one; watch it, and drop every
  # reference but the mixture's
  ptr <- cache[["cpu:0"]]$ptr
  expect_true(typeof(ptr) == "externalptr")
  gone <- FALSE
  reg.finalizer(ptr, function(p) gone <<- TRUE)
  rm(list = ls(cache), envir = cache)
  close(counts)
  rm(counts, ptr)
  gc()
  expect_false(gone)
  # it predicts, on another context of the CPU backend, from the library's
  # mixture (the same answer as its responsibilities of the fitted rows)
  expect_equal(unname(predict(m, mite)), unname(responsibilities(m)), tolerance = 1e-8)
  rm(m)
  gc()
  expect_true(gone)
})
