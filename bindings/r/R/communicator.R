#' Split a table's rows over several processes
#'
#' A table too large for one process can be held in parts: each process (a
#' "rank", numbered from 0) prepares its own rows with [dirmn_counts()] and
#' attaches them to a communicator built from two R functions over the
#' message passing the job already runs (\pkg{Rmpi}, sockets, a scheduler's
#' channels). The whole table is rank 0's rows, then rank 1's, and so on.
#' [dirmn_fit()], [dirmn_loglik_sum()], [dirmn_overdispersion_test()],
#' [dirmn_mixture()] and [dirmn_reg()] on such a table are then collective:
#' every rank calls them with its own rows, and every rank gets the result
#' for the whole table.
#'
#' `allreduce(x)` receives a numeric vector and must return, on every rank,
#' the element-wise sum of all ranks' `x` (MPI's `MPI_Allreduce` with
#' `MPI_SUM`), a numeric vector of the same length. The library sums counts
#' (histograms, totals) as exact 64-bit integers: they reach R as doubles,
#' exact up to 2^53, and a value or sum beyond that fails the call. Its
#' sums of doubles go one slot per rank and are added by the library in
#' rank order, so the order in which the engine adds does not change the
#' result. `broadcast(x, root)` receives a raw vector and the 0-based rank
#' `root`, and must return, on every rank (`root` included), `root`'s raw
#' vector (`MPI_Bcast`). With `ranks = 1`, `function(x) x` and
#' `function(x, root) x` serve.
#'
#' Collective calls must be made by every rank, in the same order, with
#' arguments that agree (the same options; each rank its own rows' weights);
#' [dirmn_set_communicator()] is collective too. Every rank gets the result a
#' single process holding the whole table gets: alpha, its standard errors
#' and the iterations bit for bit, the log-likelihood to rounding; `nobs` is
#' the whole table's. A mixture ([dirmn_mixture()], the same `k`, `seed`
#' and options on every rank) starts from the whole table's rows (the rows
#' its initialisations sample are drawn over every rank's) and sums each EM
#' iteration over the ranks: every rank gets the whole table's mixture, its
#' `loglik`, `objective`, `aic` and `bic` to rounding, its alpha, mixing
#' weights and `laplace` (whose log-determinant is taken at alpha) to the
#' accuracy of the M step's Newton fits (about 1e-6 relative in alpha);
#' one rank's mixture is one process's, bit for bit. [confint()] of such a
#' mixture is collective too (it sums over the ranks through
#' [dirmn_loglik_sum()]). A regression ([dirmn_reg()] with the table as
#' its response, `counts ~ x`: the same formula and options on every rank,
#' each rank its own rows of `data`) sums each Newton step over the ranks:
#' every rank gets the whole table's fit, its log-likelihood, AIC and BIC to
#' rounding, its coefficients, covariance and standard errors to the
#' accuracy of the Newton solves (about 1e-7 relative); the design's rank
#' is checked over every rank's rows, and every rank's design must have the
#' same columns (a factor covariate the same levels on every rank, which
#' are kept where the rank's rows lack some). A progress report that
#' cancels on one rank (an interrupt, a handler that leaves it) cancels
#' every rank's fit (class `dirmn_error_cancelled`). What is about rows
#' stays local: [ddirmn()] and the row totals, [fitted()] and [residuals()]
#' of the fit are this rank's rows, and so are a mixture's
#' [responsibilities()] ([predict()] without `newdata`, [fitted()],
#' [residuals()], and the rows per component that [print()] and
#' [summary()] show) and a regression's [predict()], [fitted()] and
#' [residuals()]. [dirmn_test_groups()] and [dirmn_test_proportions()] do
#' not sum over ranks in this release: on an attached table they fail with
#' an error of class `dirmn_error_not_supported` ([dirmn_reg_groups()]
#' takes a matrix response only). `dirmn_set_communicator(counts, NULL)`
#' detaches the table (not collective), which is then this rank's rows
#' alone.
#'
#' A rank can draw its own rows of a random table with [rdirmn()]'s
#' `first_row`, the number of rows on the ranks before it: with the same
#' seed on every rank, the ranks' blocks are together the table one call
#' draws (the rank holding rows 101 .. 200 of the whole table passes
#' `first_row = 100`).
#'
#' An error raised by `allreduce` or `broadcast` (or an interrupt, or a
#' result of the wrong type or length) never leaves through libdirmn: the
#' callback returns a failure and the dirmn call raises an error of class
#' `dirmn_error_communication` whose message says what the R function did
#' (`"the communicator's allreduce_int64 callback returned 1: allreduce(x)
#' raised an error: ..."`). On the other ranks the call fails with the same
#' class, naming the rank whose part failed. A function that fails must fail
#' on every rank, as MPI's collectives do: a rank that returns early leaves
#' the others waiting in their next exchange until their engine gives up
#' (a socket's timeout, `mpirun` ending the job). The functions must not
#' call dirmn: every dirmn function refuses while one of them runs. They
#' run apart from the caller's condition handlers: a warning they raise is
#' shown once the top-level call returns.
#'
#' The functions are kept (protected from garbage collection) until the
#' communicator and every table attached to it are gone: a table holds its
#' communicator, so the communicator object may be dropped once tables are
#' attached. Like prepared tables, communicators do not survive
#' [saveRDS()] or a new R session.
#'
#' A complete SPMD script over \pkg{Rmpi} (`mpirun -np 4 Rscript
#' mpi_fit.R`: each rank takes its rows, builds the communicator over
#' `mpi.allreduce()` and `mpi.bcast()`, fits, and rank 0 prints alpha) comes
#' with the package, in
#' `system.file("examples", "mpi_fit.R", package = "dirmn")`; \pkg{Rmpi}
#' is not a dependency of dirmn.
#'
#' @param rank This process's rank, a whole number from 0 to `ranks - 1`.
#' @param ranks The number of ranks (processes), at least 1.
#' @param allreduce A function of one numeric vector returning its sum over
#'   the ranks (see Details).
#' @param broadcast A function of a raw vector and a root rank returning the
#'   root's raw vector (see Details).
#'
#' @return `dirmn_communicator()`: an object of class `dirmn_communicator`
#'   (a list holding `rank`, `ranks` and the library's handle), which
#'   [print()] describes.
#' @seealso [dirmn_fit()], [dirmn_loglik_sum()],
#'   [dirmn_overdispersion_test()], [dirmn_mixture()], [dirmn_reg()];
#'   [dirmn_error] for the condition classes.
#' @export
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' # one rank: the identity functions
#' comm <- dirmn_communicator(0, 1, allreduce = function(x) x,
#'                            broadcast = function(x, root) x)
#' comm
#' counts <- dirmn_counts(mite, backend = "cpu")
#' dirmn_set_communicator(counts, comm)
#' fit <- dirmn_fit(counts)
#' identical(coef(fit), coef(dirmn_fit(mite, backend = "cpu")))
#' # a mixture over the ranks: the whole table's, to the M step's accuracy
#' m <- dirmn_mixture(counts, k = 2, starts = 2)
#' all.equal(coef(m), coef(dirmn_mixture(mite, k = 2, starts = 2, backend = "cpu")),
#'           tolerance = 1e-5)
#' # a regression over the ranks: each rank its rows of the covariates
#' env <- read.csv(system.file("extdata", "mite_env.csv", package = "dirmn"),
#'                 row.names = 1)
#' r <- dirmn_reg(counts ~ log(WatrCont), data = env)
#' all.equal(coef(r), coef(dirmn_reg(mite ~ log(WatrCont), data = env, backend = "cpu")),
#'           tolerance = 1e-7)
#'
#' # an error in a function is an R error of the dirmn call
#' broken <- dirmn_communicator(0, 1, allreduce = function(x) stop("network down"),
#'                              broadcast = function(x, root) x)
#' other <- dirmn_counts(mite, backend = "cpu")
#' e <- tryCatch(dirmn_set_communicator(other, broken),
#'               dirmn_error_communication = identity)
#' conditionMessage(e)
#'
#' # the SPMD script for Rmpi (mpirun -np 4 Rscript mpi_fit.R)
#' system.file("examples", "mpi_fit.R", package = "dirmn")
dirmn_communicator <- function(rank, ranks, allreduce, broadcast) {
  call <- sys.call()
  if (!is.numeric(ranks) || length(ranks) != 1L || is.na(ranks) || ranks != trunc(ranks) ||
      ranks < 1 || ranks > .Machine$integer.max) {
    .stop("invalid_argument", "ranks must be a single whole number >= 1", call)
  }
  if (!is.numeric(rank) || length(rank) != 1L || is.na(rank) || rank != trunc(rank) ||
      rank < 0 || rank >= ranks) {
    .stop("invalid_argument", sprintf(
      "rank must be a single whole number from 0 to ranks - 1 = %s (ranks are numbered from 0)%s",
      format(ranks - 1, scientific = FALSE),
      if (is.numeric(rank) && length(rank) == 1L && !is.na(rank))
        sprintf(", not %s", format(rank, scientific = FALSE)) else ""), call)
  }
  if (!is.function(allreduce)) {
    .stop("invalid_argument", sprintf(
      "allreduce must be a function of a numeric vector returning its sum over the ranks, not %s",
      .what_is(allreduce)), call)
  }
  if (!is.function(broadcast)) {
    .stop("invalid_argument", sprintf(
      "broadcast must be a function of a raw vector and a root rank returning the root's raw vector, not %s",
      .what_is(broadcast)), call)
  }
  ptr <- cpp_communicator_create(as.integer(rank), as.integer(ranks), allreduce, broadcast)
  if (.failed(ptr)) .raise(ptr, call)
  structure(list(ptr = ptr, rank = as.integer(rank), ranks = as.integer(ranks)),
            class = "dirmn_communicator")
}

# "a character vector", "an integer matrix", "NULL", "an object of class
# lm": what an argument is, for messages.
.what_is <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.object(x)) return(sprintf("an object of class %s", paste(class(x), collapse = "/")))
  type <- typeof(x)
  kind <- if (is.matrix(x)) "matrix" else if (is.atomic(x) || is.list(x)) "vector" else "object"
  sprintf("%s %s %s", if (grepl("^[aeiou]", type)) "an" else "a", type, kind)
}

#' @rdname dirmn_communicator
#' @param counts A table prepared with [dirmn_counts()]: this rank's rows.
#' @param comm A `dirmn_communicator`, or `NULL` to detach the table.
#' @return `dirmn_set_communicator()`: `counts`, invisibly, now this rank's
#'   rows of the table split over `comm`'s ranks (it keeps `comm`); its
#'   [print()] says so. Every rank's table must have the same columns (an
#'   error of class `dirmn_error_dimension_mismatch` names the first rank
#'   whose table differs).
#' @export
dirmn_set_communicator <- function(counts, comm) {
  call <- sys.call()
  if (!inherits(counts, "dirmn_counts")) {
    .stop("invalid_argument", sprintf(
      "counts must be a table prepared with dirmn_counts() (this rank's rows), not %s",
      .what_is(counts)), call)
  }
  if (!is.null(comm) && !inherits(comm, "dirmn_communicator")) {
    .stop("invalid_argument", sprintf(
      "comm must be a dirmn_communicator() or NULL (to detach the table), not %s",
      .what_is(comm)), call)
  }
  res <- cpp_counts_set_communicator(counts$ptr, if (is.null(comm)) NULL else comm$ptr, comm)
  if (.failed(res)) .raise(res, call)
  invisible(counts)
}

# The communicator a prepared table is attached to, or NULL.
.communicator_of <- function(counts) attr(counts$ptr, "dirmn_communicator", exact = TRUE)

#' @export
format.dirmn_communicator <- function(x, ...) {
  info <- cpp_communicator_info(x$ptr)
  if (.failed(info)) {
    return(sprintf("<dirmn_communicator> rank %d of %d, not usable (restored from disk)",
                   x$rank, x$ranks))
  }
  sprintf("<dirmn_communicator> rank %d of %d", info$rank, info$ranks)
}

#' @export
print.dirmn_communicator <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}
