bci <- bci_table()
alpha <- rep(0.7, ncol(bci))

test_that("a prepared table reports its shape and prints a summary", {
  counts <- dirmn_counts(bci, backend = "cpu")
  expect_identical(dim(counts), c(50L, 225L))
  expect_identical(nrow(counts), 50L)
  expect_identical(ncol(counts), 225L)
  expect_identical(dimnames(counts), dimnames(bci))
  out <- capture.output(print(counts))
  expect_match(out[1], "50 x 225 table, 4,539 nonzero \\(40\\.3%\\), counts up to 247, total 21,457",
               fixed = FALSE)
  expect_match(out[2], "stored (dense|sparse) with [0-9]+-bit counts on the CPU")
  printed <- NULL
  capture.output(printed <- withVisible(print(counts)))
  expect_false(printed$visible)
  expect_identical(printed$value, counts)
  info <- dirmn:::cpp_counts_info(counts$ptr)
  expect_identical(info$nnz, sum(bci != 0) + 0)
  expect_identical(info$max_count, 247)
  expect_identical(info$total, sum(bci) + 0)
})

test_that("preparing a prepared table returns it unchanged", {
  counts <- dirmn_counts(bci, backend = "cpu")
  expect_identical(dirmn_counts(counts), counts)
  expect_identical(dirmn_counts(counts, backend = "cpu"), counts)
  expect_error(dirmn_counts(counts, backend = "cuda"), class = "dirmn_error_invalid_argument")
})

test_that("close() frees at once, twice is harmless, use afterwards is an error", {
  counts <- dirmn_counts(bci)
  live <- dirmn:::cpp_live_counts()
  expect_null(close(counts))
  expect_identical(dirmn:::cpp_live_counts(), live - 1)
  expect_silent(close(counts))
  expect_identical(dirmn:::cpp_live_counts(), live - 1)
  expect_error(ddirmn(counts, alpha), "has been closed", class = "dirmn_error_null_pointer")
  expect_match(format(counts), "closed")
  # copies share the handle, so they see the close too
  counts2 <- dirmn_counts(bci)
  copy <- counts2
  close(copy)
  expect_error(ddirmn(counts2, alpha), class = "dirmn_error_null_pointer")
})

test_that("the finalizer frees an unreachable table", {
  gc()
  live <- dirmn:::cpp_live_counts()
  counts <- dirmn_counts(bci)
  expect_identical(dirmn:::cpp_live_counts(), live + 1)
  rm(counts)
  gc()
  expect_identical(dirmn:::cpp_live_counts(), live)
})

test_that("a table restored from disk gives a clear error", {
  counts <- dirmn_counts(bci)
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(counts, path)
  restored <- readRDS(path)
  expect_identical(dim(restored), dim(counts))
  expect_error(ddirmn(restored, alpha), "saveRDS", class = "dirmn_error_null_pointer")
  expect_match(format(restored), "restored from disk")
  expect_silent(close(restored))
  # the original is untouched
  expect_rel_equal(ddirmn(counts, alpha, log = TRUE), ref_loglik(bci, alpha))
})

test_that("a prepared table keeps its context alive", {
  counts <- dirmn_counts(bci, backend = "cpu")
  cache <- dirmn:::.state$contexts
  saved <- as.list(cache)
  rm(list = ls(cache), envir = cache)
  on.exit(list2env(saved, envir = cache))
  gc()
  expect_rel_equal(ddirmn(counts, alpha, log = TRUE), ref_loglik(bci, alpha))
})

test_that("failed preparations leak no handle", {
  gc()
  live <- dirmn:::cpp_live_counts()
  bad <- bci
  bad[4, 9] <- -1L
  for (i in 1:5) expect_error(dirmn_counts(bad), class = "dirmn_error_invalid_counts")
  gc()
  expect_identical(dirmn:::cpp_live_counts(), live)
})
