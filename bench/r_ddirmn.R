# Benchmark of the dirmn R package against extraDistr, and of its per-call
# R overhead.
#
# Usage (after scripts/test-r.sh PREFIX has installed the package):
#   R_LIBS=PREFIX/R-library Rscript bench/r_ddirmn.R
#
# 1. One 65536 x 256 table of counts 0..9, one alpha, in one session:
#    extraDistr::ddirmnom against ddirmn() on the CPU backend, given the
#    dense matrix (validated and uploaded on every call) and given a table
#    prepared once with dirmn_counts(). Target: ddirmn at least 30x faster.
# 2. R overhead per call on a 512 x 256 prepared table: median time of
#    ddirmn(prepared, alpha) minus the median time of the same dirmn_loglik
#    call made in a C++ loop. Target: under 50 microseconds.

suppressPackageStartupMessages(library(dirmn))
if (!requireNamespace("extraDistr", quietly = TRUE)) stop("the extraDistr package is needed")

now <- function() as.numeric(Sys.time())

# Median seconds per call of f(), over at least `min_reps` calls and at least
# `min_time` seconds.
per_call <- function(f, min_reps = 5L, min_time = 2) {
  f() # warm up: first-use allocations, context creation, page faults
  times <- numeric(0)
  start <- now()
  while (length(times) < min_reps || now() - start < min_time) {
    t0 <- now()
    f()
    times <- c(times, now() - t0)
  }
  stats::median(times)
}

# Median seconds per call when a call is too short to time alone: timed in
# batches of `batch` calls.
per_call_batched <- function(f, batch = 200L, batches = 50L) {
  for (i in seq_len(batch)) f()
  times <- vapply(seq_len(batches), function(b) {
    t0 <- now()
    for (i in seq_len(batch)) f()
    (now() - t0) / batch
  }, 0)
  stats::median(times)
}

fmt_time <- function(s) {
  if (abs(s) >= 1) sprintf("%.3f s", s)
  else if (abs(s) >= 1e-3) sprintf("%.2f ms", 1e3 * s)
  else sprintf("%.1f us", 1e6 * s)
}

options(dirmn.backend = "cpu")
set.seed(20240601)
rows <- 65536L
cols <- 256L
x <- matrix(sample.int(10L, rows * cols, replace = TRUE) - 1L, rows, cols)
alpha <- stats::runif(cols, 0.1, 5)
size <- rowSums(x)
prepared <- dirmn_counts(x, backend = "cpu")

b <- dirmn_backends()
cat(sprintf("libdirmn %s, CPU backend, %d cores; R %s; extraDistr %s\n", b$version,
            parallel::detectCores(), getRversion(), utils::packageVersion("extraDistr")))
cat(sprintf("table: %d x %d integer counts 0..9 (%.0f%% zeros)\n\n", rows, cols,
            100 * mean(x == 0)))

# The three must agree before their times mean anything.
ref <- extraDistr::ddirmnom(x, size, alpha, log = TRUE)
rel <- function(a) max(abs(a - ref) / abs(ref))
stopifnot(rel(ddirmn(x, alpha, log = TRUE)) < 1e-10,
          rel(ddirmn(prepared, alpha, log = TRUE)) < 1e-10)

t_extra <- per_call(function() extraDistr::ddirmnom(x, size, alpha, log = TRUE), min_reps = 3L)
t_dense <- per_call(function() ddirmn(x, alpha, log = TRUE))
t_prep <- per_call(function() ddirmn(prepared, alpha, log = TRUE), min_reps = 20L)

results <- data.frame(
  method = c("extraDistr::ddirmnom(x, size, alpha)", "ddirmn(x, alpha)  [dense matrix]",
             "ddirmn(prepared, alpha)"),
  time_per_call = vapply(c(t_extra, t_dense, t_prep), fmt_time, ""),
  speedup_vs_extraDistr = sprintf("%.1fx", t_extra / c(t_extra, t_dense, t_prep)),
  stringsAsFactors = FALSE
)
print(results, row.names = FALSE, right = FALSE)

# --- R overhead per call ------------------------------------------------
# Batches of R calls and of C-loop calls alternate, so that drift in the
# machine's speed affects both alike; the overhead is the median difference.
small <- dirmn_counts(x[seq_len(512L), ], backend = "cpu")
reps <- 200L
for (k in seq_len(reps)) ddirmn(small, alpha, log = TRUE)
pairs <- vapply(seq_len(60L), function(i) {
  t0 <- now()
  for (k in seq_len(reps)) ddirmn(small, alpha, log = TRUE)
  t_r <- (now() - t0) / reps
  t_c <- dirmn:::cpp_bench_loglik(small$ptr, alpha, reps, TRUE) / reps
  c(r = t_r, c = t_c)
}, c(r = 0, c = 0))
t_r <- stats::median(pairs["r", ])
t_c <- stats::median(pairs["c", ])
overhead <- stats::median(pairs["r", ] - pairs["c", ])
# the same on a one-row table, where the computation itself is negligible
tiny <- dirmn_counts(x[1L, , drop = FALSE], backend = "cpu")
t_tiny_r <- per_call_batched(function() ddirmn(tiny, alpha, log = TRUE), batch = 1000L)
t_tiny_c <- stats::median(vapply(seq_len(20L), function(i)
  dirmn:::cpp_bench_loglik(tiny$ptr, alpha, 1000L, TRUE) / 1000, 0))
cat(sprintf(paste0("\nR overhead per call, 512 x %d prepared table: ddirmn() %s, ",
                   "dirmn_loglik alone (C++ loop) %s, overhead %s (target < 50 us)\n"),
            cols, fmt_time(t_r), fmt_time(t_c), fmt_time(overhead)))
cat(sprintf(paste0("R overhead per call, 1 x %d prepared table: ddirmn() %s, ",
                   "dirmn_loglik alone %s, overhead %s\n"),
            cols, fmt_time(t_tiny_r), fmt_time(t_tiny_c), fmt_time(t_tiny_r - t_tiny_c)))
cat(sprintf("ddirmn(x, alpha) vs extraDistr: %.1fx (target >= 30x)\n", t_extra / t_dense))
