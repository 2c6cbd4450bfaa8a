# The R anchors of issue #30's sampling benchmark (bench/bench_sample.cpp's
# shapes and alpha): extraDistr's rdirmnom (Debian r-cran-extradistr) and
# MGLM 0.2.1's rdirmn (its CRAN source from ../shared/vendor, installed into
# a temporary library, never the user's). Both are one-threaded R; each
# shape is drawn at a fraction of its rows (ANCHOR_ROWS_FRACTION, default
# 0.1; MGLM a further tenth) and reported as cells per second, with the
# share of rows that came out NaN or with a wrong total.
#
# Usage: Rscript bench/sample_anchors.R [NAMES]
args <- commandArgs(trailingOnly = TRUE)
wanted <- if (length(args) >= 1L) strsplit(args[[1L]], ",")[[1L]] else
  c("wide-deep", "wide-shallow", "tall", "sparse", "tiny-alpha")
fraction <- as.numeric(Sys.getenv("ANCHOR_ROWS_FRACTION", "0.1"))

script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- if (length(script) == 1L) normalizePath(file.path(dirname(script), "..")) else getwd()
tarball <- Sys.getenv("MGLM_TARBALL", file.path(root, "..", "shared", "vendor", "MGLM_0.2.1.tar.gz"))
if (!requireNamespace("MGLM", quietly = TRUE) && file.exists(tarball)) {
  lib <- file.path(tempdir(), "mglm-lib")
  dir.create(lib, showWarnings = FALSE)
  status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "-l", shQuote(lib), shQuote(tarball)),
                    stdout = FALSE, stderr = FALSE)
  if (status == 0L) .libPaths(c(lib, .libPaths()))
}
have_extra <- requireNamespace("extraDistr", quietly = TRUE)
have_mglm <- requireNamespace("MGLM", quietly = TRUE)

shapes <- list(
  "wide-deep" = list(rows = 1e4, cols = 1000, size = 1e4, alpha = 0),
  "wide-shallow" = list(rows = 1e4, cols = 1000, size = 100, alpha = 0),
  "tall" = list(rows = 1e5, cols = 100, size = 1000, alpha = 0),
  "sparse" = list(rows = 1e4, cols = 30000, size = 2000, alpha = 0.01),
  "tiny-alpha" = list(rows = 1e4, cols = 1000, size = 1e4, alpha = 1e-300))

alpha_of <- function(s) if (s$alpha > 0) rep(s$alpha, s$cols) else 0.5 + ((seq_len(s$cols) - 1L) %% 7L) / 2
timed <- function(f) {
  t0 <- proc.time()[["elapsed"]]
  x <- f()
  list(x = x, time = proc.time()[["elapsed"]] - t0)
}
report <- function(tool, name, rows, s, r) {
  x <- r$x
  bad <- if (is.null(x)) NA else mean(!is.finite(rowSums(x)) | rowSums(x) != s$size)
  cat(sprintf("%-11s %-13s %8d x %5d, %6d %9.3f s %12.3g %10s\n", tool, name, as.integer(rows), as.integer(s$cols),
              as.integer(s$size), r$time, rows * s$cols / r$time,
              if (is.na(bad)) "-" else sprintf("%.1f %%", 100 * bad)))
}
cat(sprintf("R anchors (one thread), rows drawn: %g of each shape's (MGLM: a tenth of that)\n", fraction))
cat(sprintf("%-11s %-13s %24s %11s %12s %10s\n", "tool", "shape", "rows x cols, size", "time", "cells/s", "bad rows"))
for (name in intersect(wanted, names(shapes))) {
  s <- shapes[[name]]
  a <- alpha_of(s)
  rows <- max(10, round(s$rows * fraction))
  if (have_extra) {
    set.seed(1)
    r <- timed(function() suppressWarnings(extraDistr::rdirmnom(rows, s$size, matrix(a, rows, s$cols, byrow = TRUE))))
    report("extraDistr", name, rows, s, r)
  }
  if (have_mglm) {
    m <- max(10, round(rows / 10))
    set.seed(1)
    r <- timed(function() suppressWarnings(MGLM::rdirmn(n = m, size = s$size, alpha = a)))
    report("MGLM", name, m, s, r)
  }
}
if (!have_extra) cat("extraDistr is not installed (apt-get install r-cran-extradistr)\n")
if (!have_mglm) cat("MGLM could not be installed from ", tarball, "\n")
