# The R baselines of bench/bench_cpu.cpp, timed on the very tables that
# dirmn_bench_cpu generated:
#   extraDistr::ddirmnom(x, size, alpha, log = TRUE)     (the log pmf)
#   plain vectorised R: lgamma(A) - lgamma(N + A)
#                       + rowSums(lgamma(x + alpha_matrix)) - sum(lgamma(alpha))
# (alpha_matrix and sum(lgamma(alpha)) prepared outside the timing, as a user
# evaluating many tables would).
#
#   Rscript bench/cpu_baselines.R DIR
#
# Reads DIR/counts_<R>x<C>.i32 and DIR/alpha_<C>.f64; writes DIR/r_times.csv
# and DIR/r_loglik_<R>x<C>.f64 (both methods' per-row values, for
# dirmn_bench_cpu to check that everyone computed the same thing).
# Usually run through bench/run_cpu.sh.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript bench/cpu_baselines.R DIR")
dir <- args[[1]]
if (!requireNamespace("extraDistr", quietly = TRUE))
  stop("the extraDistr package is needed (Debian: r-cran-extradistr)")

shapes <- list(c(65536L, 256L), c(16384L, 1024L))
now <- function() as.numeric(Sys.time())

# Median seconds per call over `reps` calls after one warm-up call, and the
# warm-up call's value. A call here takes about a second, so a few
# repetitions are enough.
median_time <- function(f, reps) {
  value <- f()
  seconds <- stats::median(vapply(seq_len(reps), function(i) {
    gc(FALSE)  # collect outside the timed region
    t0 <- now()
    f()
    now() - t0
  }, 0))
  list(seconds = seconds, value = value)
}

times <- data.frame(method = character(), rows = integer(), cols = integer(),
                    seconds = numeric(), reps = integer())
for (s in shapes) {
  rows <- s[[1]]
  cols <- s[[2]]
  x <- matrix(readBin(file.path(dir, sprintf("counts_%dx%d.i32", rows, cols)), "integer",
                      n = rows * cols, size = 4L, endian = "little"),
              nrow = rows, ncol = cols, byrow = TRUE)
  alpha <- readBin(file.path(dir, sprintf("alpha_%d.f64", cols)), "double", n = cols,
                   size = 8L, endian = "little")
  stopifnot(length(x) == rows * cols, length(alpha) == cols)
  size <- rowSums(x)

  extradistr <- function() extraDistr::ddirmnom(x, size, alpha, log = TRUE)
  alpha_matrix <- matrix(alpha, nrow = rows, ncol = cols, byrow = TRUE)
  A <- sum(alpha)
  lg_alpha <- sum(lgamma(alpha))
  plain <- function() {
    N <- rowSums(x)
    lgamma(A) - lgamma(N + A) + rowSums(lgamma(x + alpha_matrix)) - lg_alpha
  }

  ed <- median_time(extradistr, reps = 2L)
  pl <- median_time(plain, reps = 3L)
  t_ed <- ed$seconds
  t_plain <- pl$seconds
  times <- rbind(times,
                 data.frame(method = "extraDistr::ddirmnom", rows = rows, cols = cols,
                            seconds = t_ed, reps = 2L),
                 data.frame(method = "plain R lgamma", rows = rows, cols = cols,
                            seconds = t_plain, reps = 3L))
  writeBin(c(as.double(ed$value), as.double(pl$value)),
           file.path(dir, sprintf("r_loglik_%dx%d.f64", rows, cols)), size = 8L,
           endian = "little")
  cat(sprintf("%d x %d: extraDistr %.3f s, plain R %.3f s\n", rows, cols, t_ed, t_plain))
}
utils::write.csv(times, file.path(dir, "r_times.csv"), row.names = FALSE, quote = FALSE)
