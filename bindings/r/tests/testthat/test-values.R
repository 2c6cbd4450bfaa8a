test_that("log pmf matches extraDistr and the lgamma formula on random tables", {
  skip_if_not_installed("extraDistr")
  x <- random_counts(60, 40, seed = 1)
  set.seed(2)
  for (alpha in list(runif(40, 0.05, 20), rep(1, 40), runif(40, 0.001, 0.01))) {
    got <- ddirmn(x, alpha, log = TRUE)
    expect_rel_equal(got, extra_loglik(x, alpha))
    expect_rel_equal(got, ref_loglik(x, alpha))
  }
})

test_that("density (log = FALSE) matches extraDistr", {
  skip_if_not_installed("extraDistr")
  x <- random_counts(30, 6, seed = 3, max_mean = 3)
  alpha <- c(0.5, 1, 2, 3, 0.2, 7)
  got <- ddirmn(x, alpha)
  expect_rel_equal(got, extra_loglik(x, alpha, log = FALSE))
  expect_true(all(got > 0 & got <= 1))
})

test_that("full = FALSE drops exactly the multinomial coefficient", {
  x <- random_counts(50, 25, seed = 4)
  set.seed(5)
  alpha <- runif(25, 0.1, 5)
  got <- ddirmn(x, alpha, log = TRUE, full = FALSE)
  expect_rel_equal(got, ref_loglik(x, alpha, full = FALSE))
  coef <- lgamma(rowSums(x) + 1) - rowSums(lgamma(x + 1))
  expect_rel_equal(ddirmn(x, alpha, log = TRUE) - got, unname(coef), tol = 1e-9)
  expect_rel_equal(ddirmn(x, alpha, full = FALSE), exp(ref_loglik(x, alpha, full = FALSE)))
})

test_that("rowwise = TRUE gives each row its own parameters", {
  skip_if_not_installed("extraDistr")
  x <- random_counts(30, 12, seed = 6)
  set.seed(7)
  alpha <- matrix(runif(30 * 12, 0.1, 10), 30, 12)
  got <- ddirmn(x, alpha, log = TRUE, rowwise = TRUE)
  expect_rel_equal(got, extra_loglik(x, alpha))
  expect_rel_equal(got, ref_loglik(x, alpha))
  expect_rel_equal(ddirmn(x, alpha, log = TRUE, full = FALSE, rowwise = TRUE),
                   ref_loglik(x, alpha, full = FALSE))
  expect_rel_equal(ddirmn(x, alpha, rowwise = TRUE), extra_loglik(x, alpha, log = FALSE))
  # row b under its own alpha equals row b evaluated alone
  expect_rel_equal(got[9], ddirmn(x[9, ], alpha[9, ], log = TRUE), tol = 1e-13)
})

test_that("a K x V matrix alpha evaluates every row under each of its K rows", {
  skip_if_not_installed("extraDistr")
  x <- random_counts(25, 8, seed = 8)
  rownames(x) <- paste0("s", 1:25)
  set.seed(9)
  alpha <- matrix(runif(3 * 8, 0.1, 10), 3, 8, dimnames = list(c("a", "b", "c"), NULL))
  got <- ddirmn(x, alpha, log = TRUE)
  expect_identical(dim(got), c(25L, 3L))
  expect_identical(dimnames(got), list(rownames(x), c("a", "b", "c")))
  for (j in 1:3) {
    ref <- extraDistr::ddirmnom(x, rowSums(x), alpha[j, ], log = TRUE)
    expect_rel_equal(unname(got[, j]), ref)
    expect_rel_equal(unname(ddirmn(x, alpha, log = TRUE, full = FALSE)[, j]),
                     ref_loglik(x, alpha[j, ], full = FALSE))
  }
  expect_rel_equal(unname(ddirmn(x, alpha)), exp(unname(got)))
  # the same through a prepared and a sparse table, and one vector as a 1 x V matrix
  expect_rel_equal(ddirmn(dirmn_counts(x), alpha, log = TRUE), got)
  expect_rel_equal(ddirmn(Matrix::Matrix(x, sparse = TRUE), alpha, log = TRUE), got)
  one <- ddirmn(x, alpha[2, , drop = FALSE], log = TRUE)
  expect_identical(dim(one), c(25L, 1L))
  expect_rel_equal(one[, 1], ddirmn(x, alpha[2, ], log = TRUE))
  # no vectors: an empty answer of the right shape
  expect_identical(dim(ddirmn(x, alpha[0, , drop = FALSE])), c(25L, 0L))
})

test_that("real data (BCI tree counts) matches both references", {
  skip_if_not_installed("extraDistr")
  bci <- bci_table()
  expect_identical(dim(bci), c(50L, 225L))
  p <- colSums(bci) / sum(bci)
  for (theta in c(0.5, 10, 300)) {
    alpha <- theta * p
    got <- ddirmn(bci, alpha, log = TRUE)
    expect_rel_equal(got, extra_loglik(bci, alpha))
    expect_rel_equal(got, ref_loglik(bci, alpha))
  }
})

test_that("large alpha stays accurate where lgamma differences cancel", {
  x <- random_counts(20, 10, seed = 8, max_mean = 20)
  set.seed(9)
  alpha <- runif(10, 1e5, 1e7)
  expect_rel_equal(ddirmn(x, alpha, log = TRUE, full = FALSE), ref_loglik_lpoch(x, alpha))
})

test_that("rows of zeros have log density 0", {
  x <- matrix(0L, 3, 4)
  x[2, ] <- c(1L, 0L, 2L, 0L)
  got <- ddirmn(x, c(1, 2, 3, 4), log = TRUE)
  expect_identical(got[c(1, 3)], c(0, 0))
  expect_identical(ddirmn(x, c(1, 2, 3, 4))[c(1, 3)], c(1, 1))
  expect_rel_equal(got[2], ref_loglik(x[2, , drop = FALSE], c(1, 2, 3, 4)))
})

test_that("results are named by the row names of x", {
  x <- matrix(1:6, 2, dimnames = list(c("a", "b"), NULL))
  expect_named(ddirmn(x, c(1, 1, 1)), c("a", "b"))
  expect_null(names(ddirmn(unname(x), c(1, 1, 1))))
  expect_named(ddirmn(dirmn_counts(x), c(1, 1, 1)), c("a", "b"))
})

test_that("the probabilities of all outcomes sum to 1", {
  # every composition of 4 items into 3 categories
  grid <- as.matrix(expand.grid(0:4, 0:4, 0:4))
  grid <- grid[rowSums(grid) == 4, ]
  expect_equal(sum(ddirmn(grid, c(0.3, 2, 5))), 1, tolerance = 1e-12)
})
