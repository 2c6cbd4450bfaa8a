x_int <- random_counts(40, 30, seed = 11)
set.seed(12)
alpha <- runif(30, 0.1, 8)
expected <- ref_loglik(x_int, alpha)

test_that("integer and double matrices give the reference values", {
  expect_rel_equal(ddirmn(x_int, alpha, log = TRUE), expected)
  x_dbl <- x_int
  storage.mode(x_dbl) <- "double"
  expect_rel_equal(ddirmn(x_dbl, alpha, log = TRUE), expected)
})

test_that("sparse dgCMatrix and dgRMatrix give the reference values", {
  csc <- Matrix::Matrix(x_int, sparse = TRUE)
  expect_s4_class(csc, "dgCMatrix")
  expect_rel_equal(ddirmn(csc, alpha, log = TRUE), expected)
  csr <- methods::as(csc, "RsparseMatrix")
  expect_s4_class(csr, "dgRMatrix")
  expect_rel_equal(ddirmn(csr, alpha, log = TRUE), expected)
})

test_that("other sparse classes are converted without densifying", {
  trip <- methods::as(Matrix::Matrix(x_int, sparse = TRUE), "TsparseMatrix")
  expect_s4_class(trip, "dgTMatrix")
  expect_rel_equal(ddirmn(trip, alpha, log = TRUE), expected)
  # a sparse matrix too large to densify in memory (1e6 x 1e5 doubles)
  big <- Matrix::sparseMatrix(i = c(1, 5e5, 1e6), j = c(1, 2, 1e5), x = c(3, 1, 2),
                              dims = c(1e6, 1e5))
  a <- rep(0.5, 1e5)
  got <- ddirmn(big, a, log = TRUE)
  expect_length(got, 1e6)
  expect_identical(sum(got != 0), 3L)
  expect_rel_equal(got[5e5], log(0.5 / (0.5 * 1e5)))
})

test_that("a vector is one observation", {
  got <- ddirmn(x_int[5, ], alpha, log = TRUE)
  expect_length(got, 1)
  expect_rel_equal(got, expected[5])
  expect_rel_equal(ddirmn(as.double(x_int[5, ]), alpha, log = TRUE), expected[5])
})

test_that("a numeric data frame is accepted", {
  df <- as.data.frame(x_int)
  expect_rel_equal(unname(ddirmn(df, alpha, log = TRUE)), expected)
})

test_that("prepared objects give the same values as the raw table", {
  for (form in list(x_int, Matrix::Matrix(x_int, sparse = TRUE),
                    methods::as(Matrix::Matrix(x_int, sparse = TRUE), "RsparseMatrix"))) {
    counts <- dirmn_counts(form, backend = "cpu")
    expect_s3_class(counts, "dirmn_counts")
    expect_rel_equal(ddirmn(counts, alpha, log = TRUE), expected)
    expect_rel_equal(ddirmn(counts, alpha, log = TRUE, full = FALSE),
                     ref_loglik(x_int, alpha, full = FALSE))
    alpha_rows <- matrix(alpha, nrow(x_int), ncol(x_int), byrow = TRUE) * (1:40 / 10)
    expect_rel_equal(ddirmn(counts, alpha_rows, log = TRUE), ref_loglik(x_int, alpha_rows))
    close(counts)
  }
})

test_that("integer alpha is accepted", {
  expect_rel_equal(ddirmn(x_int, rep(2L, 30), log = TRUE), ref_loglik(x_int, rep(2, 30)))
})

test_that("a table with no rows gives an empty result", {
  expect_identical(ddirmn(x_int[0, , drop = FALSE], alpha), numeric(0))
})

test_that("dense tables are read in place, not duplicated", {
  skip_if_not(capabilities("profmem"), "R built without memory profiling")
  x <- x_int
  on.exit(untracemem(x))
  tracemem(x)
  expect_silent(ddirmn(x, alpha))
  counts <- expect_silent(dirmn_counts(x))
  close(counts)
})
