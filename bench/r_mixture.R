# Benchmark of dirmn_mixture() (Dirichlet-multinomial mixtures by EM)
# against DirichletMultinomial::dmn(), the Bioconductor implementation.
#
# Usage (after scripts/test-r.sh PREFIX has installed the package), from
# the repository root:
#   R_LIBS=PREFIX/R-library Rscript bench/r_mixture.R
# Environment: DMN_TIME_LIMIT, seconds one dmn() call may take (default 600);
# a call that takes longer is stopped and the larger k of that table are
# skipped, with a note. DMN_TABLES, a comma-separated list of the tables to
# run (default all four; e.g. DMN_TABLES=mite,bci for a short run).
#
# Real tables, k = 1..4, in one R session on the same data:
#   mite (70 x 35) and bci (50 x 225), shipped with the package, and, where
#   ../shared/data beside the repository has them, globalpatterns
#   (26 x 19216) and soilrep (56 x 16825).
# dmn(count, k, seed = 1) against dirmn_mixture(count, k, objective = "dmn",
# init = "kmeans") with one start (as dmn) and with the default three
# starts, on the CPU backend. dmn() runs in a forked child (the same data,
# the same R), so that a call beyond the time limit can be stopped: its C
# code cannot be interrupted. Printed: times, the speed-up, and both
# objectives (dmn's NLE; equal where both reach the same optimum).
# Target: dirmn at least 50x faster than dmn for every k.

suppressPackageStartupMessages({
  library(dirmn)
  library(parallel)
})
if (!requireNamespace("DirichletMultinomial", quietly = TRUE)) {
  stop("the DirichletMultinomial package is needed")
}
options(width = 200, dirmn.backend = "cpu")

now <- function() as.numeric(Sys.time())
fmt_time <- function(s) {
  if (is.na(s)) return("-")
  if (s >= 1) sprintf("%.2f s", s) else if (s >= 1e-3) sprintf("%.1f ms", 1e3 * s)
  else sprintf("%.0f us", 1e6 * s)
}

# Median seconds of f() over at least `min_reps` runs and `min_time` seconds.
per_call <- function(f, min_reps = 3L, min_time = 1) {
  times <- numeric(0)
  start <- now()
  while (length(times) < min_reps || now() - start < min_time) {
    t0 <- now()
    value <- f()
    times <- c(times, now() - t0)
  }
  list(value = value, time = stats::median(times))
}

# dmn() in a forked child, stopped after `limit` seconds: list(time, nle)
# or NULL on timeout.
dmn_limited <- function(x, k, limit) {
  job <- mcparallel({
    t0 <- now()
    fit <- DirichletMultinomial::dmn(x, k, seed = 1)
    list(time = now() - t0, nle = DirichletMultinomial::goodnessOfFit(fit)[["NLE"]])
  }, silent = TRUE)
  res <- mccollect(job, wait = FALSE, timeout = limit)
  if (is.null(res)) {
    tools::pskill(job$pid, tools::SIGKILL)
    suppressWarnings(mccollect(job, wait = TRUE)) # reap the stopped child
    return(NULL)
  }
  res <- res[[1L]]
  if (inherits(res, "try-error")) stop("dmn failed: ", res)
  res
}

args <- commandArgs(trailingOnly = FALSE)
script <- sub("^--file=", "", args[grepl("^--file=", args)])
root <- if (length(script) == 1L) normalizePath(file.path(dirname(script), "..")) else getwd()
shared <- normalizePath(file.path(root, "..", "shared", "data"), mustWork = FALSE)
read_table <- function(path) as.matrix(utils::read.csv(path, row.names = 1, check.names = FALSE))

tables <- list(
  mite = read_table(system.file("extdata", "mite.csv", package = "dirmn")),
  bci = read_table(system.file("extdata", "bci.csv", package = "dirmn"))
)
wanted <- strsplit(Sys.getenv("DMN_TABLES", "mite,bci,globalpatterns,soilrep"), ",")[[1L]]
tables <- tables[intersect(names(tables), wanted)]
for (name in intersect(c("globalpatterns", "soilrep"), wanted)) {
  path <- file.path(shared, paste0(name, ".csv"))
  if (file.exists(path)) tables[[name]] <- read_table(path)
  else cat(sprintf("note: %s not found (looked in %s); skipped\n", name, shared))
}
limit <- as.numeric(Sys.getenv("DMN_TIME_LIMIT", "600"))

b <- dirmn_backends()
cat(sprintf("libdirmn %s, CPU backend, %d cores; R %s; DirichletMultinomial %s; dmn time limit %g s\n\n",
            b$version, detectCores(), getRversion(),
            utils::packageVersion("DirichletMultinomial"), limit))

rows <- list()
notes <- character(0)
for (name in names(tables)) {
  x <- tables[[name]]
  storage.mode(x) <- "integer"
  counts <- dirmn_counts(x, backend = "cpu")
  timed_out <- FALSE
  for (k in 1:4) {
    one <- per_call(function() dirmn_mixture(counts, k = k, objective = "dmn", init = "kmeans",
                                             starts = 1L))
    three <- per_call(function() dirmn_mixture(counts, k = k, objective = "dmn",
                                               init = "kmeans", starts = 3L))
    d <- NULL
    ran <- !timed_out
    if (ran) {
      cat(sprintf("%s, k = %d: dmn ...\n", name, k))
      d <- dmn_limited(x, k, limit)
      if (is.null(d)) {
        timed_out <- TRUE
        notes <- c(notes, sprintf(paste0(
          "%s: dmn(k = %d) did not finish within %g s and was stopped; larger k were not ",
          "run (dmn's final step, a dense V x V Hessian per component, grows with k)"),
          name, k, limit))
      }
    }
    dmn_time <- if (!is.null(d)) fmt_time(d$time) else if (ran) sprintf("> %g s", limit)
                else "not run"
    ratio <- function(t) {
      if (!is.null(d)) sprintf("%.0fx", d$time / t) else if (ran) sprintf("> %.0fx", limit / t)
      else "-"
    }
    obj1 <- one$value$criteria$objective
    obj3 <- three$value$criteria$objective
    rows[[length(rows) + 1L]] <- data.frame(
      table = sprintf("%s (%d x %d)", name, nrow(x), ncol(x)), k = k,
      dmn = dmn_time,
      dirmn_1start = fmt_time(one$time),
      speedup_1start = ratio(one$time),
      dirmn_3starts = fmt_time(three$time),
      speedup_3starts = ratio(three$time),
      NLE_dmn = if (is.null(d)) "-" else sprintf("%.4f", d$nle),
      objective_dirmn_1start = sprintf("%.4f", obj1),
      objective_dirmn_3starts = sprintf("%.4f", obj3),
      stringsAsFactors = FALSE
    )
  }
  close(counts)
}
cat("\n")
print(do.call(rbind, rows), row.names = FALSE, right = FALSE)
if (length(notes)) cat(paste0("\nnote: ", notes, "\n"), sep = "")
cat(paste("\nobjective = dmn's negative log posterior (NLE); lower is better. Times are",
          "medians of repeated runs for dirmn, one run for dmn.\n"))
