# Run only where libdirmn has CUDA and a device exists.

test_that("the CUDA backend matches extraDistr", {
  skip_if_not(has_cuda(), "no CUDA device")
  skip_if_not_installed("extraDistr")
  x <- random_counts(500, 64, seed = 31)
  set.seed(32)
  alpha <- runif(64, 0.05, 20)
  counts <- dirmn_counts(x, backend = "cuda")
  expect_match(format(counts)[2], "on CUDA device 0")
  expect_rel_equal(ddirmn(counts, alpha, log = TRUE), extra_loglik(x, alpha))
  expect_rel_equal(ddirmn(counts, alpha, log = TRUE, full = FALSE),
                   ref_loglik(x, alpha, full = FALSE))
  alpha_rows <- matrix(runif(500 * 64, 0.1, 5), 500, 64)
  expect_rel_equal(ddirmn(counts, alpha_rows, log = TRUE, rowwise = TRUE),
                   extra_loglik(x, alpha_rows))
  sp <- dirmn_counts(Matrix::Matrix(x, sparse = TRUE), backend = "cuda")
  expect_rel_equal(ddirmn(sp, alpha, log = TRUE), extra_loglik(x, alpha))
  close(sp)
  close(counts)
})

test_that("real data on the GPU matches the CPU reference", {
  skip_if_not(has_cuda(), "no CUDA device")
  bci <- bci_table()
  alpha <- 5 * colSums(bci) / sum(bci)
  counts <- dirmn_counts(bci, backend = "cuda")
  expect_rel_equal(ddirmn(counts, alpha, log = TRUE), ref_loglik(bci, alpha))
  expect_error(dirmn_counts(bci, backend = "cuda", device = dirmn_backends()$cuda_devices),
               class = "dirmn_error_backend_unavailable")
})
