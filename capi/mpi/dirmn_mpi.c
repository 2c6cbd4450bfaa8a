/* dirmn_mpi.c: dirmn.h's communicator callbacks over an MPI communicator. */
#include "dirmn_mpi.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The most elements one MPI call takes (its counts are int). */
#define CHUNK ((size_t)INT_MAX / 8)

static _Thread_local char last_error[512];

static dirmn_status failed(dirmn_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

/* The duplicate a communicator owns. */
typedef struct {
  MPI_Comm comm;
} shim;

static int allreduce(void* data, void* values, size_t count, MPI_Datatype type, size_t bytes, int device) {
  if (device) return -1; /* this release reduces host buffers only */
  MPI_Comm comm = ((shim*)data)->comm;
  char* p = (char*)values;
  for (size_t done = 0; done < count;) {
    const size_t n = count - done < CHUNK ? count - done : CHUNK;
    const int e = MPI_Allreduce(MPI_IN_PLACE, p + done * bytes, (int)n, type, MPI_SUM, comm);
    if (e != MPI_SUCCESS) return e;
    done += n;
  }
  return 0;
}

static int allreduce_int64(void* data, int64_t* values, size_t count, int device) {
  return allreduce(data, values, count, MPI_INT64_T, sizeof(int64_t), device);
}

static int allreduce_double(void* data, double* values, size_t count, int device) {
  return allreduce(data, values, count, MPI_DOUBLE, sizeof(double), device);
}

static int broadcast(void* data, void* buffer, size_t bytes, int root, int device) {
  if (device) return -1;
  MPI_Comm comm = ((shim*)data)->comm;
  char* p = (char*)buffer;
  for (size_t done = 0; done < bytes;) {
    const size_t n = bytes - done < CHUNK ? bytes - done : CHUNK;
    const int e = MPI_Bcast(p + done, (int)n, MPI_BYTE, root, comm);
    if (e != MPI_SUCCESS) return e;
    done += n;
  }
  return 0;
}

static void release(void* data) {
  shim* s = (shim*)data;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&s->comm);
  free(s);
}

static dirmn_status mpi_failed(int e, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(e, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  return failed(DIRMN_ERROR_COMMUNICATION, "dirmn_mpi_communicator_create: %s failed (%d: %s)", what, e,
                text);
}

dirmn_status dirmn_mpi_communicator_create(MPI_Comm comm, dirmn_communicator** out) {
  last_error[0] = '\0';
  if (out == NULL) return failed(DIRMN_ERROR_NULL_POINTER, "dirmn_mpi_communicator_create: out is NULL");
  *out = NULL;
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (!up || down)
    return failed(DIRMN_ERROR_INVALID_ARGUMENT,
                  "dirmn_mpi_communicator_create: MPI is not initialised (or already finalised)");
  if (comm == MPI_COMM_NULL)
    return failed(DIRMN_ERROR_INVALID_ARGUMENT, "dirmn_mpi_communicator_create: comm is MPI_COMM_NULL");
  shim* s = (shim*)malloc(sizeof *s);
  if (s == NULL) return failed(DIRMN_ERROR_OUT_OF_MEMORY, "dirmn_mpi_communicator_create: out of memory");
  int e = MPI_Comm_dup(comm, &s->comm);
  if (e != MPI_SUCCESS) {
    free(s);
    return mpi_failed(e, "MPI_Comm_dup");
  }
  int rank = 0, size = 0;
  if ((e = MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
      (e = MPI_Comm_rank(s->comm, &rank)) != MPI_SUCCESS ||
      (e = MPI_Comm_size(s->comm, &size)) != MPI_SUCCESS) {
    MPI_Comm_free(&s->comm);
    free(s);
    return mpi_failed(e, "MPI_Comm_set_errhandler, MPI_Comm_rank or MPI_Comm_size");
  }
  dirmn_communicator_callbacks cb;
  cb.size = sizeof cb;
  cb.rank = rank;
  cb.ranks = size;
  cb.allreduce_int64 = allreduce_int64;
  cb.allreduce_double = allreduce_double;
  cb.broadcast = broadcast;
  cb.data = s;
  cb.release = release;
  const dirmn_status st = dirmn_communicator_create(out, &cb);
  if (st != DIRMN_SUCCESS) {
    MPI_Comm_free(&s->comm);
    free(s);
    return failed(st, "%s", dirmn_last_error(NULL));
  }
  return DIRMN_SUCCESS;
}

const char* dirmn_mpi_last_error(void) { return last_error; }
