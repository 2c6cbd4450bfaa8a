# mpi_fit.R: one Dirichlet-multinomial fit of a table whose rows are split
# over MPI processes, with dirmn's communicator over Rmpi.
#
#   mpirun -np 4 Rscript mpi_fit.R
#
# Every process (rank) runs this same script (SPMD). Each holds only its
# own rows of the table, prepares them with dirmn_counts(), and attaches
# them to a dirmn_communicator() whose allreduce and broadcast go through
# Rmpi. dirmn_fit(), dirmn_loglik_sum(), dirmn_overdispersion_test(),
# dirmn_mixture() and dirmn_reg() are then collective: every rank calls
# them, in the same order, and every rank gets the whole table's result
# (alpha and its standard errors bit for bit those of one process holding
# the whole table; a mixture's log-likelihood, AIC and BIC to rounding and
# its parameters to the M step's accuracy; a regression's log-likelihood to
# rounding and its coefficients to ~1e-7). See ?dirmn_communicator.
#
# Needs the Rmpi package and an MPI installation (Rmpi is not a dependency
# of dirmn). The script's path once dirmn is installed:
#   system.file("examples", "mpi_fit.R", package = "dirmn")

suppressMessages(library(Rmpi))
library(dirmn)

# Rmpi's communicator 0 is MPI_COMM_WORLD; work on a copy of it, 1.
invisible(mpi.comm.dup(0, 1))
rank <- mpi.comm.rank(1)
ranks <- mpi.comm.size(1)

# Each rank's rows. A real job reads only its own part (a file per rank, a
# range of rows of a database); here every rank reads the example table and
# keeps its block of rows: rank 0 the first, rank 1 the next, and so on, as
# the whole table is ordered.
mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
                           row.names = 1))
first <- floor(nrow(mite) * rank / ranks)
last <- floor(nrow(mite) * (rank + 1) / ranks)
mine <- mite[seq_len(last - first) + first, , drop = FALSE]

# The communicator. allreduce(x): the element-wise sum of every rank's
# numeric vector x, on every rank (MPI_Allreduce, MPI_SUM). broadcast(x,
# root): the raw vector of rank `root`, on every rank; Rmpi's mpi.bcast()
# carries integer, double and character vectors, so the bytes travel as
# integers. Every rank passes vectors of the same length, so a length of 0
# is skipped on all ranks alike.
comm <- dirmn_communicator(
  rank, ranks,
  allreduce = function(x) {
    if (length(x) == 0L) return(x)
    mpi.allreduce(as.double(x), type = 2, op = "sum", comm = 1)
  },
  broadcast = function(x, root) {
    if (length(x) == 0L) return(x)
    as.raw(mpi.bcast(as.integer(x), type = 1, rank = root, comm = 1))
  })

counts <- dirmn_counts(mine, backend = "cpu")
# Collective: every rank attaches its rows (the column counts must agree).
dirmn_set_communicator(counts, comm)

# An error on one rank must not leave the others waiting for ever: stop the
# whole job (a collective call that fails on one rank fails on all of them,
# each with a condition of class dirmn_error_communication or its own).
fit <- tryCatch(dirmn_fit(counts), error = function(e) {
  message(sprintf("rank %d: %s", rank, conditionMessage(e)))
  mpi.abort(1)
})
test <- dirmn_overdispersion_test(counts)

if (rank == 0) {
  cat(sprintf("alpha of the %d rows of %d ranks (%d iterations, log-likelihood %.6f):\n",
              as.integer(fit$nobs), ranks, fit$iterations, fit$loglik))
  print(round(coef(fit), 5))
  cat(sprintf("precision %.4f; overdispersion LRT %.2f, p = %.3g\n", fit$precision,
              test$statistic, test$p.value))
  # the same as one process holding the whole table
  whole <- dirmn_fit(mite, backend = "cpu")
  cat("identical to the whole table's fit:", identical(coef(fit), coef(whole)), "\n")
}

mpi.quit()
