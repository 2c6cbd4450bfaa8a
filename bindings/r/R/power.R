# The power of the group test by simulation (issue #30), over libdirmn's
# dirmn_power_groups, and of the test of the rows against a given
# composition (HMP's Xsc), over dirmn_power_proportions.

#' Power of the group test by simulation
#'
#' The power of [dirmn_test_groups()]'s chi-square test, by simulation
#' (\pkg{HMP}'s `MC.Xdc.statistics()` for the full-likelihood test,
#' `MC.Xmcupo.statistics()` for `statistic = "xmcupo"`,
#' `MC.Xoc.statistics()` for `statistic = "xoc"`): `tables` tables
#' are drawn, each with `n[g]` rows from the Dirichlet-multinomial of group
#' g (row g of `alpha`) for every group, each table is tested as
#' [dirmn_test_groups()] tests it with `statistic`, and the power is the
#' share of tables whose p-value is below `sig.level`, with its binomial
#' standard error. Equal rows of `alpha` give the test's size (its actual
#' level). A table in which fewer than two groups have counts counts as
#' not rejected. Computed by libdirmn (`dirmn_power_groups()`); the tables
#' run on the host's threads, and the result depends on `seed` alone, not
#' on their number.
#'
#' @param alpha The groups' parameters (positive; alpha, or log alpha with
#'   `param = "logalpha"`): a k x V matrix, group g's in row g (as
#'   [rdirmn()] takes k vectors), or a list of k vectors of one length. At
#'   least two groups.
#' @param n The rows of each group: k whole numbers >= 0 (at least two of
#'   them positive), or one for every group.
#' @param size The rows' sizes (counts per row): one whole number for every
#'   row; k of them, one per group (every row of group g has `size[g]`); or
#'   a list of k vectors, group g's rows' sizes (`n[g]` of them, or one for
#'   all). Each in 0 .. 2147483647.
#' @param tables The number of tables simulated (a whole number >= 1).
#' @param sig.level The test's level, in (0, 1).
#' @param statistic The test's statistic, as for [dirmn_test_groups()]:
#'   `"lrt"` (the default: the likelihood ratio, chi-square on
#'   \eqn{(G - 1) P}{(G - 1) P} degrees of freedom), `"xmcupo"` (HMP's
#'   Xmcupo, chi-square on \eqn{(G - 1) (P - 1)}{(G - 1) (P - 1)}) or
#'   `"xoc"` (HMP's Xoc, one shared overdispersion against one per group,
#'   chi-square on \eqn{G - 1}{G - 1}).
#' @param seed `NULL` (draw the library's seed from R's random number
#'   generator, so [set.seed()] makes it reproducible) or the library's
#'   seed, a whole number in 0 .. 2^53, or any
#'   64-bit seed as a string of decimal digits ("18446744073709551615" at most).
#' @param param `"alpha"` (`alpha` holds alpha) or `"logalpha"` (it holds log
#'   alpha).
#' @param tolerance,max_iterations Every fit's, as for [dirmn_fit()].
#' @param backend Whose context runs the simulation (`"auto"`, `"cpu"` or
#'   `"cuda"`; the tables are drawn and tested on the host's threads
#'   either way).
#' @return An object of class `"power.htest"` (as [stats::power.t.test()]
#'   returns): `n` (the rows of each group), `tables`, `sig.level`, `power`
#'   (the share of tables rejected), `std_error` (its binomial standard
#'   error, `sqrt(power (1 - power) / tables)`), `rejected` (the tables
#'   rejected), `mean_statistic` (the test statistic's mean over the
#'   tables), `statistic_kind` (`"lrt"`, `"xmcupo"` or `"xoc"`, as
#'   `statistic` asked), `seed`, `note` and `method` (which test).
#' @references La Rosa PS, Brooks JP, Deych E, et al. (2012). Hypothesis
#'   testing and power calculations for taxonomic-based human microbiome
#'   data. PLoS ONE 7:e52078.
#' @seealso [dirmn_test_groups()] for the test itself; [rdirmn()] for the
#'   draws.
#' @export
#' @examples
#' alpha <- rbind(c(2, 3, 1, 4), c(3, 2, 1, 4))
#' dirmn_power(alpha, n = 30, size = 100, tables = 200, seed = 1)
#' # the size of the test: equal alphas
#' dirmn_power(rbind(alpha[1, ], alpha[1, ]), n = 30, size = 100, tables = 200,
#'             seed = 1)$power
#' # HMP's Xmcupo statistic instead of the likelihood ratio
#' dirmn_power(alpha, n = 30, size = 100, tables = 200, seed = 1, statistic = "xmcupo")
#' # HMP's Xoc: do the groups differ in overdispersion?
#' dirmn_power(rbind(alpha[1, ], 5 * alpha[1, ]), n = 30, size = 100, tables = 200,
#'             seed = 1, statistic = "xoc")
dirmn_power <- function(alpha, n, size, tables = 1000, sig.level = 0.05, seed = NULL,
                        statistic = c("lrt", "xmcupo", "xoc"), param = c("alpha", "logalpha"),
                        tolerance = 1e-10, max_iterations = 1000L,
                        backend = getOption("dirmn.backend", "auto")) {
  call <- sys.call()
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  statistic <- .match_choice(statistic, c("lrt", "xmcupo", "xoc"), "statistic", call)
  if (missing(alpha)) .stop("invalid_parameter", "alpha is missing", call)
  if (missing(n)) .stop("invalid_argument", "n is missing", call)
  if (missing(size)) .stop("invalid_argument", "size is missing", call)
  alpha <- .power_alpha(alpha, call)
  k <- nrow(alpha)
  n <- .power_rows(n, k, call)
  sizes <- .power_sizes(size, n, call)
  tables <- .check_count(tables, "tables", call, min = 1L)
  if (!is.numeric(sig.level) || length(sig.level) != 1L || is.na(sig.level) ||
      sig.level <= 0 || sig.level >= 1) {
    .stop("invalid_argument", "sig.level must be a single number in (0, 1)", call)
  }
  tolerance <- .check_positive(tolerance, "tolerance", call)
  max_iterations <- .check_count(max_iterations, "max_iterations", call, min = 1L)
  seed <- if (is.null(seed)) .draw_seed() else .check_seed(seed, call)
  ctx <- .context(backend, getOption("dirmn.device", 0L), call, backend_option = missing(backend),
                  device_option = TRUE)
  res <- cpp_power_groups(ctx$ptr, alpha, param == "logalpha", as.double(n), sizes, tables,
                          as.double(sig.level), seed, tolerance, max_iterations,
                          .group_statistic_code(statistic))
  if (.failed(res)) .raise(res, call, alpha = "matrix")
  structure(list(
    n = n, tables = as.integer(res$tables), sig.level = as.double(sig.level),
    power = res$power, std_error = res$std_error, rejected = as.integer(res$rejected),
    mean_statistic = res$mean_statistic, statistic_kind = statistic, seed = seed,
    note = "n is the number of rows in each group",
    method = paste(switch(statistic,
      lrt = "Dirichlet-multinomial group test (likelihood ratio, chi-square)",
      xmcupo = "Dirichlet-multinomial group test (HMP's Xmcupo, chi-square)",
      xoc = "Dirichlet-multinomial group test (HMP's Xoc, chi-square)"),
      "power calculation by simulation")),
    class = "power.htest")
}

#' Power of the proportion test by simulation
#'
#' The power of [dirmn_test_proportions()]'s chi-square test (\pkg{HMP}'s
#' Xsc), by simulation (\pkg{HMP}'s `MC.Xsc.statistics()`): `tables` tables
#' of `n` rows are drawn from the Dirichlet-multinomial with parameter
#' `alpha`, each table is tested against the composition `p` as
#' [dirmn_test_proportions()] tests it, and the power is the share of
#' tables whose p-value is below `sig.level`, with its binomial standard
#' error. `alpha` proportional to `p` gives the test's size (its actual
#' level). A table without counts counts as not rejected. Computed by
#' libdirmn (`dirmn_power_proportions()`); the tables run on the host's
#' threads, and the result depends on `seed` alone, not on their number.
#'
#' @inheritParams dirmn_power
#' @param alpha The Dirichlet-multinomial's parameter (positive; alpha, or
#'   log alpha with `param = "logalpha"`): a vector of V >= 2 values, one per
#'   column of the tables (as [rdirmn()] takes one vector), or a 1 x V
#'   matrix.
#' @param p The composition to test against (\pkg{HMP}'s `pi0`), as for
#'   [dirmn_test_proportions()]: one proportion per entry of `alpha`, each
#'   finite and >= 0, at least two positive, summing to 1 (within 1e-6;
#'   they are divided by their sum). Where `p` and `alpha` both have names,
#'   they are matched by name.
#' @param n The rows of each table: a whole number >= 1.
#' @param size The rows' sizes (counts per row): one whole number for every
#'   row, or `n` of them, one per row. Each in 0 .. 2147483647.
#' @return An object of class `"power.htest"` (as [stats::power.t.test()]
#'   returns): `n` (the rows of each table), `tables`, `sig.level`, `power`
#'   (the share of tables rejected), `std_error` (its binomial standard
#'   error, `sqrt(power (1 - power) / tables)`), `rejected` (the tables
#'   rejected), `mean_statistic` (Xsc's mean over the tables; `Inf` where a
#'   table has counts in a column whose `p` is 0), `seed`, `note` and
#'   `method` (which test).
#' @references La Rosa PS, Brooks JP, Deych E, et al. (2012). Hypothesis
#'   testing and power calculations for taxonomic-based human microbiome
#'   data. PLoS ONE 7:e52078.
#' @seealso [dirmn_test_proportions()] for the test itself; [dirmn_power()]
#'   for the group test's power; [rdirmn()] for the draws.
#' @export
#' @examples
#' p0 <- (1:6) / 21
#' # the size of the test: alpha proportional to p0
#' dirmn_power_proportions(15 * p0, p0, n = 20, size = 200, tables = 200, seed = 1)
#' # the first share 1.6 times larger: more rows, more power
#' alpha <- 15 * p0 * c(1.6, 1, 1, 1, 1, 1)
#' dirmn_power_proportions(alpha, p0, n = 20, size = 200, tables = 200, seed = 1)$power
#' dirmn_power_proportions(alpha, p0, n = 40, size = 200, tables = 200, seed = 1)$power
#' # rows of different sizes
#' dirmn_power_proportions(alpha, p0, n = 20, size = rep(c(50, 350), 10), tables = 200,
#'                         seed = 1)$power
dirmn_power_proportions <- function(alpha, p, n, size, tables = 1000, sig.level = 0.05,
                                    seed = NULL, param = c("alpha", "logalpha"),
                                    backend = getOption("dirmn.backend", "auto")) {
  call <- sys.call()
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  if (missing(alpha)) .stop("invalid_parameter", "alpha is missing", call)
  if (missing(p)) .stop("invalid_argument", "p is missing", call)
  if (missing(n)) .stop("invalid_argument", "n is missing", call)
  if (missing(size)) .stop("invalid_argument", "size is missing", call)
  alpha <- .power_alpha_vector(alpha, call)
  p <- .as_proportions(p, length(alpha), names(alpha), call, against = "alpha")
  .refuse_integer64(n, "n", call)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || !is.finite(n) || n < 1 ||
      n != trunc(n) || n > 2^40) {
    .stop("invalid_argument",
          "n must be a single whole number in 1 .. 2^40 (the rows of each table)", call)
  }
  .refuse_integer64(size, "size", call)
  if (!is.numeric(size) || !is.null(dim(size)) && sum(dim(size) > 1L) > 1L ||
      !(length(size) %in% c(1, n))) {
    .stop("invalid_argument", sprintf(
      "size must be a number or a numeric vector of length %s (one size per row)",
      format(n, scientific = FALSE)), call)
  }
  .power_size_values(size, "size", call)
  tables <- .check_count(tables, "tables", call, min = 1L)
  if (!is.numeric(sig.level) || length(sig.level) != 1L || is.na(sig.level) ||
      sig.level <= 0 || sig.level >= 1) {
    .stop("invalid_argument", "sig.level must be a single number in (0, 1)", call)
  }
  seed <- if (is.null(seed)) .draw_seed() else .check_seed(seed, call)
  ctx <- .context(backend, getOption("dirmn.device", 0L), call, backend_option = missing(backend),
                  device_option = TRUE)
  res <- cpp_power_proportions(ctx$ptr, unname(alpha), param == "logalpha", as.double(n),
                               as.double(size), p, tables, as.double(sig.level), seed)
  if (.failed(res)) .raise(res, call, alpha = "vector")
  structure(list(
    n = if (n <= .Machine$integer.max) as.integer(n) else as.double(n),
    tables = as.integer(res$tables), sig.level = as.double(sig.level),
    power = res$power, std_error = res$std_error, rejected = as.integer(res$rejected),
    mean_statistic = res$mean_statistic, seed = seed,
    note = "n is the number of rows in each table",
    method = paste("HMP's Xsc test of the rows against a given composition (chi-square)",
                   "power calculation by simulation")),
    class = "power.htest")
}

# alpha of dirmn_power_proportions as a double vector of V >= 2 values,
# from a vector or a 1 x V matrix (its column names the vector's names);
# NA is reported here, by its entry (before the library reports p), other
# bad values (NaN too) by the library.
.power_alpha_vector <- function(alpha, call) {
  alpha <- .as_alpha(alpha, call)
  if (is.matrix(alpha)) {
    if (nrow(alpha) != 1L) {
      .stop("invalid_parameter", sprintf(
        "alpha must be a vector (one value per column), not a %d x %d matrix", nrow(alpha),
        ncol(alpha)), call)
    }
    alpha <- stats::setNames(as.vector(alpha), colnames(alpha))
  }
  if (!is.null(dim(alpha))) alpha <- stats::setNames(as.vector(alpha), names(alpha))
  if (length(alpha) < 2L) {
    .stop("invalid_parameter", sprintf(
      "alpha must hold at least two values (one per column), not %d", length(alpha)), call)
  }
  na <- which(is.na(alpha) & !is.nan(alpha))
  if (length(na) > 0L) .stop("invalid_parameter", sprintf("column %d: alpha is NA", na[[1L]]), call)
  alpha
}

# alpha as a k x V double matrix (k >= 2), from a matrix or a list of k
# vectors of one length.
.power_alpha <- function(alpha, call) {
  if (is.list(alpha) && !is.data.frame(alpha)) {
    lens <- lengths(alpha)
    if (length(alpha) < 2L || any(lens != lens[[1L]]) || lens[[1L]] < 1L) {
      .stop("invalid_parameter", sprintf(
        "alpha as a list must hold at least two vectors of one length (one per group), not %s",
        if (length(alpha) < 2L) sprintf("%d", length(alpha))
        else paste("vectors of lengths", paste(lens, collapse = ", "))), call)
    }
    alpha <- do.call(rbind, lapply(alpha, .as_alpha, call = call))
  }
  alpha <- .as_alpha(alpha, call)
  if (!is.matrix(alpha) || nrow(alpha) < 2L || ncol(alpha) < 1L) {
    .stop("invalid_parameter", sprintf(
      "alpha must be a k x V matrix with one row per group (k >= 2), or a list of k vectors, not %s",
      if (is.matrix(alpha)) sprintf("a %d x %d matrix", nrow(alpha), ncol(alpha))
      else "a vector"), call)
  }
  storage.mode(alpha) <- "double"
  alpha
}

# The rows of the k groups as whole numbers, at least two groups with rows.
.power_rows <- function(n, k, call) {
  .refuse_integer64(n, "n", call)
  if (!is.numeric(n) || !(length(n) %in% c(1L, k))) {
    .stop("invalid_argument", sprintf(
      "n must be a number or a numeric vector of length %d (the groups: rows of alpha)", k),
      call)
  }
  bad <- which(is.na(n) | !is.finite(n) | n < 0 | n != trunc(n) | n > 2^40)
  if (length(bad) > 0L) {
    .stop("invalid_argument", sprintf(
      "n must hold whole numbers >= 0 (rows per group); n[%d] is %s", bad[[1L]],
      format(n[[bad[[1L]]]], digits = 15L)), call)
  }
  n <- rep_len(as.double(n), k)
  if (sum(n > 0) < 2L) {
    .stop("invalid_argument", sprintf(
      "n gives rows to %d group%s: the test needs at least two groups with rows",
      sum(n > 0), if (sum(n > 0) == 1L) "" else "s"), call)
  }
  if (all(n <= .Machine$integer.max)) as.integer(n) else n
}

# Every row's size, the groups' rows in order, as doubles.
.power_sizes <- function(size, n, call) {
  k <- length(n)
  .refuse_integer64(size, "size", call)
  if (is.list(size)) {
    if (length(size) != k) {
      .stop("dimension_mismatch", sprintf(
        "size as a list must hold one vector of sizes per group (%d), not %d", k,
        length(size)), call)
    }
    parts <- lapply(seq_len(k), function(g) {
      s <- size[[g]]
      if (!is.numeric(s) || !(length(s) %in% c(1L, n[[g]]))) {
        .stop("dimension_mismatch", sprintf(
          "size[[%d]] must hold one size or one per row of group %d (%s), not %d values", g, g,
          format(n[[g]]), length(s)), call)
      }
      .power_size_values(s, sprintf("size[[%d]]", g), call)
      rep_len(as.double(s), n[[g]])
    })
    return(unlist(parts))
  }
  if (!is.numeric(size) || !(length(size) %in% c(1L, k))) {
    .stop("invalid_argument", sprintf(paste(
      "size must be a number, a numeric vector of length %d (one size per group) or a list",
      "of %d vectors (the sizes of each group's rows)"), k, k), call)
  }
  .power_size_values(size, "size", call)
  rep(rep_len(as.double(size), k), n)
}

.power_size_values <- function(s, what, call) {
  bad <- which(is.na(s) | !is.finite(s) | s < 0 | s > .Machine$integer.max | s != trunc(s))
  if (length(bad) > 0L) {
    .stop("invalid_argument", sprintf(
      "size must hold whole numbers from 0 to %d; %s[%d] is %s", .Machine$integer.max, what,
      bad[[1L]], format(s[[bad[[1L]]]], digits = 15L)), call)
  }
}
