/* dirmn_mpi.h: a dirmn communicator over an MPI communicator.
 *
 * dirmn's core ABI depends on no MPI (dirmn.h's Communicators section takes
 * the reduction as callbacks). This optional shim, libdirmn_mpi, built where
 * CMake finds an MPI, makes those callbacks from an MPI_Comm: MPI_Allreduce
 * with MPI_SUM for the sums and MPI_Bcast for the broadcasts, in chunks below
 * INT_MAX elements. Link it with the same MPI the program runs under. */
#ifndef DIRMN_MPI_H
#define DIRMN_MPI_H

#include <mpi.h>

#include "dirmn.h"

#if defined(__GNUC__)
#  define DIRMN_MPI_API __attribute__((visibility("default")))
#else
#  define DIRMN_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Makes *out, a dirmn communicator over `comm`'s processes with this
 * process's rank in it. Collective over `comm` (every rank calls it): it
 * duplicates `comm` (MPI_Comm_dup), so that dirmn's messages never match the
 * caller's, and sets MPI_ERRORS_RETURN on the duplicate, so that an MPI
 * failure inside a dirmn call becomes DIRMN_ERROR_COMMUNICATION rather than
 * an abort. The duplicate is freed when the communicator and every counts
 * object attached to it are destroyed: destroy them before MPI_Finalize (a
 * duplicate still held then is left to MPI_Finalize). The caller owns *out
 * and frees it with dirmn_communicator_destroy. Statuses: SUCCESS;
 * NULL_POINTER (out); INVALID_ARGUMENT (MPI not initialised, or comm is
 * MPI_COMM_NULL); COMMUNICATION (an MPI call failed); OUT_OF_MEMORY.
 * dirmn_mpi_last_error() words a failure. */
DIRMN_MPI_API dirmn_status dirmn_mpi_communicator_create(MPI_Comm comm, dirmn_communicator** out);

/* The message of this thread's last failed dirmn_mpi_communicator_create,
 * "" after a success. Static storage per thread; never NULL. */
DIRMN_MPI_API const char* dirmn_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DIRMN_MPI_H */
