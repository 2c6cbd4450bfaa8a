# The HMP anchor of issue #30's power benchmark: HMP 2.0.1's
# MC.Xdc.statistics on its own example design (the saliva, throat and
# tonsils tables' method-of-moments DMs; 9, 11 and 12 subjects of 12000
# reads), with the likelihood-ratio statistic (est = "mle": dirmult fits,
# as dirmn's test) and HMP's Xmcupo (MC.Xmcupo.statistics), timed on
# HMP_MC tables (default 10: HMP re-fits per table) and scaled to 1000;
# then dirmn_bench_sample --power on the same alphas with 1000 tables.
# HMP is not in Debian: its CRAN source (../shared/vendor/HMP_2.0.1.tar.gz,
# with rpart.plot_3.1.3.tar.gz) is installed into a temporary library
# unless HMP_LIBRARY names one that has it.
#
# Usage: Rscript bench/power_hmp.R [BENCH_BINARY]
args <- commandArgs(trailingOnly = TRUE)
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- if (length(script) == 1L) normalizePath(file.path(dirname(script), "..")) else getwd()
bin <- if (length(args) >= 1L) args[[1L]] else file.path(root, "build", "release", "bench", "dirmn_bench_sample")
lib <- Sys.getenv("HMP_LIBRARY", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
if (!requireNamespace("HMP", quietly = TRUE)) {
  lib <- file.path(tempdir(), "hmp-lib")
  dir.create(lib, showWarnings = FALSE)
  vendor <- file.path(root, "..", "shared", "vendor")
  for (tarball in file.path(vendor, c("rpart.plot_3.1.3.tar.gz", "HMP_2.0.1.tar.gz"))) {
    status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "-l", shQuote(lib), shQuote(tarball)),
                      stdout = FALSE, stderr = FALSE)
    if (status != 0L) stop("R CMD INSTALL ", tarball, " failed")
  }
  .libPaths(c(lib, .libPaths()))
}
suppressPackageStartupMessages(library(HMP))
data(saliva, throat, tonsils, package = "HMP", envir = environment())
fits <- list(DM.MoM(saliva), DM.MoM(throat), DM.MoM(tonsils))
alphap <- do.call(rbind, lapply(fits, function(f) f$gamma))
group.pi <- do.call(rbind, lapply(fits, function(f) f$pi))
group.theta <- sapply(fits, function(f) f$theta)
group.Nrs <- list(rep(12000, 9), rep(12000, 11), rep(12000, 12))
mc <- as.integer(Sys.getenv("HMP_MC", "10"))
cat(sprintf("HMP %s on its MC.Xdc.statistics example (3 groups x %d taxa; 9, 11, 12 subjects of 12000 reads), %d tables\n",
            as.character(packageVersion("HMP")), ncol(alphap), mc))
set.seed(1)
t0 <- proc.time()[["elapsed"]]
invisible(MC.Xdc.statistics(group.Nrs, mc, alphap, "ha", est = "mle"))
t_lrt <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
invisible(MC.Xmcupo.statistics(group.Nrs, mc, group.pi = group.pi, group.theta = group.theta))
t_x <- proc.time()[["elapsed"]] - t0
cat(sprintf("  LRT (MC.Xdc.statistics, est = \"mle\"): %.2f s for %d tables, %.1f ms a table: %.0f s for 1000\n",
            t_lrt, mc, 1e3 * t_lrt / mc, 1000 * t_lrt / mc))
cat(sprintf("  Xmcupo (MC.Xmcupo.statistics):          %.2f s for %d tables, %.1f ms a table: %.0f s for 1000\n",
            t_x, mc, 1e3 * t_x / mc, 1000 * t_x / mc))
f <- tempfile(fileext = ".csv")
write.table(alphap, f, sep = ",", row.names = FALSE, col.names = FALSE)
if (file.exists(bin)) {
  system2(bin, c("--only", "none", "--power", f, "--tables", "1000"))
} else {
  cat(bin, "is not built: dirmn's rows are left out\n")
}
