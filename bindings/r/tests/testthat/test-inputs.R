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

test_that("a 1-d array, a one-way table and a sparseVector are one observation", {
  skip_if_not_installed("extraDistr")
  counts <- c(4L, 0L, 2L, 7L)
  a <- c(0.5, 2, 1, 3)
  ref <- extraDistr::ddirmnom(counts, sum(counts), a, log = TRUE)
  # a one-way table() of a factor: its levels are the categories
  tab <- table(factor(rep(c("ant", "bee", "cat", "dog"), counts),
                      levels = c("ant", "bee", "cat", "dog")))
  expect_identical(dim(tab), 4L)
  expect_rel_equal(ddirmn(tab, a, log = TRUE), ref)
  prepared <- dirmn_counts(tab)
  expect_identical(dim(prepared), c(1L, 4L))
  expect_identical(colnames(prepared), c("ant", "bee", "cat", "dog"))
  fit <- dirmn_fit(tab)
  expect_named(fit$alpha, c("ant", "bee", "cat", "dog"))
  expect_rel_equal(dirmn_loglik_sum(tab, a)$value, ref)
  # a plain 1-d array, with and without names
  arr <- array(as.double(counts), dim = 4L, dimnames = list(letters[1:4]))
  expect_rel_equal(ddirmn(arr, a, log = TRUE), ref)
  expect_identical(colnames(dirmn_counts(arr)), letters[1:4])
  expect_rel_equal(ddirmn(array(counts, 4L), a, log = TRUE), ref)
  expect_error(ddirmn(array(c("a", "b"), 2L), c(1, 1)), "not character",
               class = "dirmn_error_invalid_argument")
  # Matrix's sparse vectors, double, integer and pattern
  sv <- methods::as(as.double(counts), "sparseVector")
  expect_s4_class(sv, "dsparseVector")
  expect_rel_equal(ddirmn(sv, a, log = TRUE), ref)
  expect_identical(dim(dirmn_counts(sv)), c(1L, 4L))
  expect_rel_equal(dirmn_loglik_sum(sv, a)$value, ref)
  iv <- methods::new("isparseVector", length = 4L, i = c(1L, 3L, 4L), x = c(4L, 2L, 7L))
  expect_rel_equal(ddirmn(iv, a, log = TRUE), ref)
  nv <- methods::new("nsparseVector", length = 4L, i = c(2L, 4L))
  expect_rel_equal(ddirmn(nv, a, log = TRUE),
                   extraDistr::ddirmnom(c(0, 1, 0, 1), 2, a, log = TRUE))
  # a long, very sparse vector stays sparse (a 1 x 1e6 row with 2 entries)
  long <- methods::new("dsparseVector", length = 1e6, i = c(3, 7e5), x = c(2, 1))
  expect_identical(format(dirmn_counts(long))[1],
                   "<dirmn_counts> 1 x 1,000,000 table, 2 nonzero (0.0%), counts up to 2, total 3")
  # a bad count in a sparse vector names its column
  bad <- methods::new("dsparseVector", length = 4L, i = c(2L, 3L), x = c(1, -3))
  expect_error(ddirmn(bad, a), "^row 1, column 3: count -3 is negative",
               class = "dirmn_error_invalid_counts")
  bad@x[2] <- NA
  expect_error(ddirmn(bad, a), "^row 1, column 3: count is NA",
               class = "dirmn_error_invalid_counts")
})

test_that("logical tables, dense or sparse, are 0/1 counts under one rule", {
  set.seed(13)
  l <- matrix(runif(40 * 30) < 0.3, 40, 30)
  l[2, ] <- FALSE
  ones <- l * 1L
  a <- alpha
  expected01 <- ref_loglik(ones, a)
  dense <- methods::new("lgeMatrix", x = as.vector(l), Dim = dim(l))
  sparse <- methods::as(Matrix::Matrix(l, sparse = TRUE), "CsparseMatrix")
  expect_s4_class(sparse, "lgCMatrix")
  for (form in list(l, dense, sparse, as.data.frame(l))) {
    expect_rel_equal(unname(ddirmn(form, a, log = TRUE)), expected01)
    expect_identical(dim(dirmn_counts(form)), c(40L, 30L))
  }
  expect_identical(dirmn_fit(l)$alpha, dirmn_fit(ones)$alpha)
  expect_rel_equal(dirmn_loglik_sum(dense, a)$value, sum(expected01))
  # a logical vector is one observation
  expect_rel_equal(ddirmn(l[1, ], a, log = TRUE), expected01[1])
  # a dense logical table is read in place
  if (capabilities("profmem")) {
    on.exit(untracemem(l))
    tracemem(l)
    expect_silent(ddirmn(l, a))
    untracemem(l)
  }
  # NA is an error naming its cell, dense or sparse
  l[7, 4] <- NA
  dense <- methods::new("lgeMatrix", x = as.vector(l), Dim = dim(l))
  sparse <- methods::as(Matrix::Matrix(l, sparse = TRUE), "CsparseMatrix")
  for (form in list(l, dense, sparse)) {
    expect_error(ddirmn(form, a), "^row 7, column 4: count is NA$",
                 class = "dirmn_error_invalid_counts")
    expect_error(dirmn_counts(form), "^row 7, column 4: count is NA$",
                 class = "dirmn_error_invalid_counts")
  }
  expect_error(ddirmn(c(TRUE, NA, FALSE), c(1, 1, 1)), "^row 1, column 2: count is NA$",
               class = "dirmn_error_invalid_counts")
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
    expect_rel_equal(ddirmn(counts, alpha_rows, log = TRUE, rowwise = TRUE),
                     ref_loglik(x_int, alpha_rows))
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
