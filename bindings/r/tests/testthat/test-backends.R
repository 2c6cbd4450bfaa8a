test_that("dirmn_backends() describes the library", {
  b <- dirmn_backends()
  expect_s3_class(b, "dirmn_backends")
  expect_match(b$version, "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  expect_identical(strsplit(b$version, ".", fixed = TRUE)[[1]][1],
                   strsplit(b$header_version, ".", fixed = TRUE)[[1]][1])
  expect_identical(b$backends$backend, c("cpu", "cuda"))
  expect_type(b$backends$compiled, "logical")
  expect_true(b$backends$compiled[1])
  expect_identical(b$backends$devices[2], b$cuda_devices)
  if (!b$backends$compiled[2]) expect_identical(b$cuda_devices, 0L)
  expect_output(print(b), "libdirmn [0-9.]+")
})

test_that("backend = \"cpu\" runs on the CPU and \"auto\" picks an available backend", {
  x <- matrix(1:6, 2)
  expect_match(format(dirmn_counts(x, backend = "cpu"))[2], "on the CPU")
  auto <- format(dirmn_counts(x, backend = "auto"))[2]
  if (has_cuda()) expect_match(auto, "on CUDA device 0") else expect_match(auto, "on the CPU")
})

test_that("the dirmn.backend option chooses where raw tables run", {
  x <- matrix(1:6, 2)
  old <- options(dirmn.backend = "tpu")
  on.exit(options(old))
  expect_error(ddirmn(x, c(1, 1, 1)), class = "dirmn_error_invalid_argument")
  options(dirmn.backend = "cpu")
  expect_rel_equal(ddirmn(x, c(1, 1, 1), log = TRUE), ref_loglik(x, c(1, 1, 1)))
})
