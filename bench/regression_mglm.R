# The MGLM anchor of issue #29's regression benchmark: MGLM 0.2.1's
# MGLMreg(Y ~ X - 1, dist = "DM") on the tables bench_regression --dump
# wrote (X holds its own intercept column), each in a forked child stopped
# after MGLM_TIME_LIMIT seconds (default 300). MGLM is not in Debian: its
# CRAN source (../shared/vendor/MGLM_0.2.1.tar.gz beside the repository,
# or MGLM_TARBALL) is installed into a temporary library, never into the
# user's.
#
# Usage: Rscript bench/regression_mglm.R DIR NAME[,NAME...] [CSV]
# Prints one row per table (seconds, iterations, logL) and writes them to
# CSV when given.
suppressPackageStartupMessages(library(parallel))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2L) stop("usage: regression_mglm.R DIR NAME[,NAME...] [CSV]")
dir <- args[[1L]]
names <- strsplit(args[[2L]], ",")[[1L]]
csv <- if (length(args) >= 3L) args[[3L]] else ""
limit <- as.numeric(Sys.getenv("MGLM_TIME_LIMIT", "300"))

script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- if (length(script) == 1L) normalizePath(file.path(dirname(script), "..")) else getwd()
tarball <- Sys.getenv("MGLM_TARBALL", file.path(root, "..", "shared", "vendor", "MGLM_0.2.1.tar.gz"))
if (!requireNamespace("MGLM", quietly = TRUE)) {
  if (!file.exists(tarball)) stop("MGLM is not installed and ", tarball, " does not exist")
  lib <- file.path(tempdir(), "mglm-lib")
  dir.create(lib, showWarnings = FALSE)
  status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "-l", shQuote(lib), shQuote(tarball)),
                    stdout = FALSE, stderr = FALSE)
  if (status != 0L) stop("R CMD INSTALL ", tarball, " failed")
  .libPaths(c(lib, .libPaths()))
}
suppressPackageStartupMessages(library(MGLM))

now <- function() as.numeric(Sys.time())
rows <- list()
cat(sprintf("MGLM %s MGLMreg(dist = \"DM\"), time limit %g s\n", as.character(packageVersion("MGLM")), limit))
cat(sprintf("%-8s %22s %12s %6s %20s  %s\n", "shape", "rows x V x p", "time", "iter", "logL", "note"))
for (name in names) {
  Y <- as.matrix(read.csv(file.path(dir, paste0(name, ".y.csv")), header = FALSE))
  X <- as.matrix(read.csv(file.path(dir, paste0(name, ".x.csv")), header = FALSE))
  job <- mcparallel({
    t0 <- now()
    fit <- MGLMreg(Y ~ X - 1, dist = "DM")
    list(time = now() - t0, iter = fit@iter, logL = fit@logL,
         se = all(is.finite(fit@SE)))
  }, silent = TRUE)
  res <- mccollect(job, wait = FALSE, timeout = limit)
  if (is.null(res)) {
    tools::pskill(job$pid, tools::SIGKILL)
    suppressWarnings(mccollect(job, wait = TRUE))
    res <- list(time = NA_real_, iter = NA_integer_, logL = NA_real_, se = NA)
    note <- sprintf("stopped after %g s", limit)
  } else {
    res <- res[[1L]]
    note <- if (inherits(res, "try-error")) paste("failed:", conditionMessage(attr(res, "condition")))
            else if (isTRUE(res$se)) "" else "no standard errors"
    if (inherits(res, "try-error")) res <- list(time = NA_real_, iter = NA_integer_, logL = NA_real_)
  }
  dims <- sprintf("%d x %d x %d", nrow(Y), ncol(Y), ncol(X))
  cat(sprintf("%-8s %22s %10.1f ms %6s %20.6f  %s\n", name, dims, 1e3 * res$time,
              as.character(res$iter), res$logL, note))
  rows[[name]] <- data.frame(shape = name, seconds = res$time, iterations = res$iter,
                             loglik = res$logL, note = note)
}
if (nzchar(csv)) write.csv(do.call(rbind, rows), csv, row.names = FALSE)
