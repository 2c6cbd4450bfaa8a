# Counts from phyloseq, SummarizedExperiment / SingleCellExperiment and BIOM
# objects, and the explicit orientation of plain tables (issue #25).
mite <- mite_table()
alpha <- seq(0.5, 3, length.out = 35)

# The conversions are R code over the same C entry points the other files
# test under valgrind; loading Bioconductor there took the stage from 8 to
# 17 minutes (test-r.sh sets DIRMN_TEST_UNDER_VALGRIND).
skip_under_valgrind <- function() {
  skip_if(nzchar(Sys.getenv("DIRMN_TEST_UNDER_VALGRIND")), "Bioconductor objects are not run under valgrind")
}

test_that("samples = \"columns\" reads a features x samples table; the default never guesses", {
  tx <- t(mite)
  expect_equal(ddirmn(tx, alpha, log = TRUE, samples = "columns"), ddirmn(mite, alpha, log = TRUE))
  expect_equal(coef(dirmn_fit(tx, samples = "columns")), coef(dirmn_fit(mite)))
  sp <- Matrix::Matrix(tx, sparse = TRUE)
  expect_equal(ddirmn(sp, alpha, log = TRUE, samples = "columns"), ddirmn(mite, alpha, log = TRUE))
  counts <- dirmn_counts(sp, samples = "columns")
  expect_identical(dim(counts), c(70L, 35L))
  expect_equal(dirmn_loglik_sum(tx, alpha, samples = "columns")$value,
               dirmn_loglik_sum(mite, alpha)$value)
  m1 <- dirmn_mixture(tx, k = 2, starts = 1L, samples = "columns")
  expect_identical(coef(m1), coef(dirmn_mixture(mite, k = 2, starts = 1L)))
  # a transposed plain table is fitted as given (35 rows), without a word
  expect_identical(length(coef(dirmn_fit(tx))), 70L)
  expect_error(dirmn_fit(mite, samples = "cols"), "\"rows\", \"columns\"",
               class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(counts, alpha, samples = "columns"), "prepared table",
               class = "dirmn_error_invalid_argument")
  close(counts)
  expect_error(ddirmn(mite, alpha, assay = "counts"), "SummarizedExperiment",
               class = "dirmn_error_invalid_argument")
})

test_that("a phyloseq object is read with its orientation", {
  skip_under_valgrind()
  skip_if_not_installed("phyloseq")
  ref <- ddirmn(mite, alpha, log = TRUE)
  by_taxa <- phyloseq::phyloseq(phyloseq::otu_table(t(mite), taxa_are_rows = TRUE))
  by_samples <- phyloseq::phyloseq(phyloseq::otu_table(mite, taxa_are_rows = FALSE))
  expect_equal(ddirmn(by_taxa, alpha, log = TRUE), ref)
  expect_equal(ddirmn(by_samples, alpha, log = TRUE), ref)
  expect_equal(ddirmn(phyloseq::otu_table(by_taxa), alpha, log = TRUE), ref)
  expect_equal(coef(dirmn_fit(by_taxa)), coef(dirmn_fit(mite)))
  expect_identical(dim(dirmn_counts(by_taxa)), c(70L, 35L))
  expect_identical(coef(dirmn_mixture(by_taxa, k = 2, starts = 1L)),
                   coef(dirmn_mixture(mite, k = 2, starts = 1L)))
  expect_error(dirmn_fit(by_taxa, samples = "columns"), "taxa_are_rows|says where",
               class = "dirmn_error_invalid_argument")
})

test_that("a SummarizedExperiment or SingleCellExperiment assay: features are rows", {
  skip_under_valgrind()
  skip_if_not_installed("SummarizedExperiment")
  ref <- ddirmn(mite, alpha, log = TRUE)
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(other = t(mite) * 2L, counts = t(mite)))
  expect_equal(ddirmn(se, alpha, log = TRUE), ref)
  expect_equal(ddirmn(se, alpha, log = TRUE, assay = 2), ref)
  expect_equal(ddirmn(se, alpha, log = TRUE, assay = "other"),
               ddirmn(mite * 2L, alpha, log = TRUE))
  expect_error(ddirmn(se, alpha, assay = "logcounts"), "\"other\", \"counts\"",
               class = "dirmn_error_invalid_argument")
  expect_equal(coef(dirmn_fit(se)), coef(dirmn_fit(mite)))
  skip_under_valgrind()
  skip_if_not_installed("SingleCellExperiment")
  sce <- SingleCellExperiment::SingleCellExperiment(
    assays = list(counts = Matrix::Matrix(t(mite), sparse = TRUE)))
  expect_equal(ddirmn(sce, alpha, log = TRUE), ref)
  expect_equal(dirmn_loglik_sum(sce, alpha)$value, dirmn_loglik_sum(mite, alpha)$value)
})

test_that("a BIOM table, as an object or a file", {
  skip_under_valgrind()
  skip_if_not_installed("biomformat")
  ref <- ddirmn(mite, alpha, log = TRUE)
  b <- biomformat::make_biom(t(mite))
  expect_equal(ddirmn(b, alpha, log = TRUE), ref)
  path <- tempfile(fileext = ".biom")
  biomformat::write_biom(b, path)
  expect_equal(ddirmn(path, alpha, log = TRUE), ref)
  expect_equal(coef(dirmn_fit(path)), coef(dirmn_fit(mite)))
  unlink(path)
  expect_error(ddirmn(path, alpha), "no file", class = "dirmn_error_invalid_argument")
})
