#' The Dirichlet-multinomial density of each row of a count table
#'
#' For a row with counts \eqn{n_1, \dots, n_V}{n_1, ..., n_V}, total
#' \eqn{N = \sum_v n_v}{N = sum(n)} and parameters
#' \eqn{\alpha_v > 0}{alpha_v > 0} with \eqn{A = \sum_v \alpha_v}{A = sum(alpha)},
#' the Dirichlet-multinomial probability is
#' \deqn{P(n \mid \alpha) = \frac{N!}{\prod_v n_v!}
#'   \frac{\Gamma(A)}{\Gamma(N + A)} \prod_v \frac{\Gamma(n_v + \alpha_v)}{\Gamma(\alpha_v)}.}{
#'   P(n | alpha) = N! / prod(n_v!) * Gamma(A) / Gamma(N + A) * prod(Gamma(n_v + alpha_v) / Gamma(alpha_v)).}
#' `ddirmn()` evaluates it for every row of `x`, in libdirmn, on the CPU or a
#' GPU.
#'
#' With `full = FALSE` the multinomial coefficient \eqn{N! / \prod_v n_v!}{N! / prod(n_v!)}
#' is left out. It does not depend on alpha, so likelihood-based estimation
#' of alpha can skip it.
#'
#' A table given as a matrix is validated and uploaded on every call; when
#' the same table is evaluated under many alphas, prepare it once with
#' [dirmn_counts()]. Unprepared tables use the backend in
#' `getOption("dirmn.backend", "auto")` and device
#' `getOption("dirmn.device", 0)`.
#'
#' Errors are conditions of class `dirmn_error` (see [dirmn_error]); bad
#' counts or parameters are reported with their row and column.
#'
#' @param x The counts, one row per observation: an integer or double matrix,
#'   a numeric vector (one observation), a numeric data frame, a sparse matrix
#'   from \pkg{Matrix} (`dgCMatrix`, `dgRMatrix`, ...; never made dense), or a
#'   table prepared with [dirmn_counts()].
#' @param alpha The parameters, all positive and finite: a vector with one
#'   value per column of `x`, shared by all rows, or a matrix of the same
#'   dimensions as `x` giving each row its own parameters.
#' @param log If `TRUE`, return log densities.
#' @param full If `TRUE`, include the multinomial coefficient (the density
#'   proper, as [extraDistr::ddirmnom()] computes it); if `FALSE`, leave it out.
#'
#' @return A double vector with one value per row of `x`, named by the row
#'   names of `x` where it has them. A row of zeros has density 1 (log
#'   density 0).
#' @seealso [dirmn_counts()] to prepare a table once; [dirmn_error] for the
#'   conditions raised.
#' @export
#' @examples
#' # Three draws of 10 items over 3 categories
#' x <- rbind(c(5L, 3L, 2L), c(0L, 10L, 0L), c(3L, 3L, 4L))
#' ddirmn(x, alpha = c(1, 1, 1))
#' ddirmn(x, alpha = c(1, 1, 1), log = TRUE, full = FALSE)
#'
#' # One alpha per row
#' ddirmn(x, alpha = rbind(c(1, 1, 1), c(0.1, 5, 0.1), c(2, 2, 2)))
#'
#' # A real table: tree counts in 50 plots of Barro Colorado Island
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' counts <- dirmn_counts(bci)
#' p <- colSums(bci) / sum(bci)
#' sapply(c(1, 10, 100, 1000), function(theta) sum(ddirmn(counts, theta * p, log = TRUE)))
#'
#' # Sparse input is used without densifying
#' sp <- Matrix::Matrix(bci, sparse = TRUE)
#' all.equal(ddirmn(sp, 10 * p, log = TRUE), ddirmn(counts, 10 * p, log = TRUE))
ddirmn <- function(x, alpha, log = FALSE, full = TRUE) {
  if (!is.double(alpha)) alpha <- .as_alpha(alpha, sys.call())
  if (!isTRUE(log) && !isFALSE(log)) {
    .stop("invalid_argument", "log must be TRUE or FALSE", sys.call())
  }
  if (!isTRUE(full) && !isFALSE(full)) {
    .stop("invalid_argument", "full must be TRUE or FALSE", sys.call())
  }
  if (inherits(x, "dirmn_counts")) {
    res <- cpp_ddirmn_counts(x$ptr, alpha, full, log)
    rn <- x$dimnames[[1L]]
  } else {
    table <- .as_table(x, sys.call())
    ctx <- .default_context(sys.call())
    res <- cpp_ddirmn_table(ctx$ptr, table$data, table$kind, alpha, full, log)
    rn <- table$dimnames[[1L]]
  }
  if (.failed(res)) .raise(res, sys.call())
  if (!is.null(rn)) names(res) <- rn
  res
}

# alpha as a double vector or matrix (dimensions kept), or an error.
.as_alpha <- function(alpha, call) {
  if (is.integer(alpha) || is.logical(alpha) && all(is.na(alpha))) {
    storage.mode(alpha) <- "double"
    return(alpha)
  }
  if (is.data.frame(alpha)) {
    .stop("invalid_parameter",
          "alpha must be a numeric vector or matrix, not a data frame (use as.matrix())", call)
  }
  .stop("invalid_parameter", sprintf(
    "alpha must be a numeric vector or matrix, not %s", typeof(alpha)), call)
}
