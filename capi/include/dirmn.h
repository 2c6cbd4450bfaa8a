/*
 * dirmn.h: Dirichlet-multinomial likelihoods for large count tables, on CPUs
 * and NVIDIA GPUs, behind one stable C ABI.
 *
 * Conventions used throughout this header
 * ---------------------------------------
 * - Every fallible function returns a dirmn_status. DIRMN_SUCCESS is 0; every
 *   other value has a fixed number and a string (dirmn_status_string). After a
 *   failure, dirmn_last_error(ctx) holds a detailed message that says what was
 *   wrong and where ("row 17, column 3: count -2 is negative").
 * - A failed call changes nothing the caller owns: output arguments and output
 *   arrays are written only on success, and no handle is created or leaked.
 * - Handles are opaque and created and destroyed by the library. Destroy
 *   functions accept NULL.
 * - Options structs start with their own size. Initialise them with the
 *   matching *_init macro (it passes the struct's size to *_init_sized, which
 *   fills no more than that), then set fields; callers built against an
 *   older header, with a smaller struct, keep working when fields are
 *   appended. Bindings that cannot expand macros call *_init_sized with
 *   their struct's size.
 * - Matrices are passed with explicit strides, in elements (not bytes), so
 *   row-major (C, NumPy, PyTorch) and column-major (R, Julia, Fortran) arrays
 *   pass without a transpose. Element (i, j) of a matrix X with strides
 *   (s_i, s_j) is X[i * s_i + j * s_j]. Every array's extent is checked in
 *   bytes before any element is touched: where the last element's byte
 *   offset passes PTRDIFF_MAX, or the array would run past the end of the
 *   address space, the call fails with DIRMN_ERROR_OVERFLOW (an output whose
 *   strides make two elements share a place fails with INVALID_ARGUMENT).
 * - Rows of a counts table are observations (samples, documents), columns are
 *   categories (taxa, species, words). V denotes the number of columns.
 * - A context serves one call at a time (see Contexts); distinct contexts
 *   are independent and may be used from different threads concurrently.
 *   Every function given a context, or a counts object or mixture made by
 *   one, may also return DIRMN_ERROR_CONTEXT_IN_USE, which the lists of
 *   statuses below leave out.
 * - Nothing in the library prints, aborts or throws across this boundary.
 * - Row weights (fits, sums, mixtures) may be any finite non-negative
 *   doubles, 1e-320 and 1e305 alike: the estimators compute on the weights
 *   scaled by an exact power of two and scale their sums back. Where a
 *   weighted sum itself is beyond the largest double (weights near 1e305
 *   and above) the call fails with DIRMN_ERROR_OVERFLOW, naming it.
 *
 * The mathematics: for a row with counts n_v, N = sum_v n_v,
 * and parameters alpha_v > 0 with A = sum_v alpha_v,
 *
 *   kernel = lgamma(A) - lgamma(N + A) + sum_v [lgamma(n_v + alpha_v) - lgamma(alpha_v)]
 *   loglik = kernel + lgamma(N + 1) - sum_v lgamma(n_v + 1)   (the log pmf)
 *
 * "loglik" always means the log pmf, multinomial coefficients included: a
 * result's `loglik`, what every likelihood function and progress callback
 * gives by default. The part that depends on alpha alone is the kernel
 * (`loglik_kernel`, and the likelihood functions with DIRMN_KERNEL). The R
 * and Julia packages use the same words and the same default; every
 * user-facing name of the C API and the bindings is listed once in the
 * repository's bindings/names.tsv.
 */
#ifndef DIRMN_H
#define DIRMN_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(DIRMN_BUILDING_LIBRARY)
#    define DIRMN_API __declspec(dllexport)
#  else
#    define DIRMN_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define DIRMN_API __attribute__((visibility("default")))
#else
#  define DIRMN_API
#endif

/* C++ sees every enum with a fixed underlying type int, the type a C caller
 * passes: any int value a C caller sends is then a valid value in C++ and is
 * rejected by a check, rather than being undefined behaviour. */
#ifdef __cplusplus
#  define DIRMN_ENUM_INT : int
#else
#  define DIRMN_ENUM_INT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define DIRMN_VERSION_MAJOR 0
#define DIRMN_VERSION_MINOR 3
#define DIRMN_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, like ZSTD_VERSION_NUMBER. */
#define DIRMN_VERSION_NUMBER \
  (DIRMN_VERSION_MAJOR * 10000 + DIRMN_VERSION_MINOR * 100 + DIRMN_VERSION_PATCH)

/* The version of the library actually loaded, as DIRMN_VERSION_NUMBER would
 * give it. Compare its major part (value / 10000) with DIRMN_VERSION_MAJOR to
 * detect a header/library mismatch. Never fails. */
DIRMN_API unsigned dirmn_version_number(void);

/* The loaded library's version as "MAJOR.MINOR.PATCH". Static storage; never
 * NULL; never fails. */
DIRMN_API const char* dirmn_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

typedef enum dirmn_status DIRMN_ENUM_INT {
  DIRMN_SUCCESS = 0,
  DIRMN_ERROR_NULL_POINTER = 1,        /* a required pointer argument is NULL */
  DIRMN_ERROR_INVALID_ARGUMENT = 2,    /* a size, stride, flag or enum is invalid */
  DIRMN_ERROR_INVALID_COUNTS = 3,      /* a count is negative, NaN, infinite, non-integral
                                          or too large, or a row's total is too large */
  DIRMN_ERROR_INVALID_PARAMETER = 4,   /* an alpha is <= 0 or not finite (or log alpha not finite) */
  DIRMN_ERROR_DIMENSION_MISMATCH = 5,  /* sizes of arguments do not agree */
  DIRMN_ERROR_WRONG_CONTEXT = 6,       /* an object belongs to another context */
  DIRMN_ERROR_OUT_OF_MEMORY = 7,       /* host or device allocation failed */
  DIRMN_ERROR_BACKEND_UNAVAILABLE = 8, /* backend not compiled in, or no such device */
  DIRMN_ERROR_DEVICE = 9,              /* the CUDA runtime reported an error */
  DIRMN_ERROR_OVERFLOW = 10,           /* a size or an array's byte extent overflows, or a
                                          weighted sum is beyond the largest double */
  DIRMN_ERROR_CANCELLED = 11,          /* the interrupt callback asked to stop */
  DIRMN_ERROR_NOT_SUPPORTED = 12,      /* valid request this backend/object cannot serve */
  DIRMN_ERROR_CONTEXT_IN_USE = 13,     /* another call is using the context (see Contexts) */
  DIRMN_ERROR_COMMUNICATION = 14,      /* a communicator's callback failed, or another rank's
                                          part of a collective call failed (see Communicators) */
  DIRMN_ERROR_INTERNAL = 99            /* a bug in dirmn: please report it */
} dirmn_status;

/* A short fixed English description of a status ("invalid counts"). Static
 * storage; unknown values give "unknown status". Never fails. */
DIRMN_API const char* dirmn_status_string(dirmn_status status);

/* The status's name as written in this header ("DIRMN_ERROR_INVALID_COUNTS",
 * "DIRMN_SUCCESS"), for bindings that map statuses to their own condition
 * or exception types. Static storage; unknown values give
 * "DIRMN_STATUS_UNKNOWN". Never fails. */
DIRMN_API const char* dirmn_status_name(dirmn_status status);

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct dirmn_context dirmn_context; /* opaque */

/* A context serves one call at a time. A call on a context -- or on a
 * counts object or mixture it made -- while a call on another thread is
 * using it fails at once with DIRMN_ERROR_CONTEXT_IN_USE, changes nothing
 * and puts its message in dirmn_last_error(NULL) (the context's message
 * belongs to the call in flight). Share a context between threads only
 * with a lock of your own, or use one context per thread. From inside a
 * call (its interrupt or progress callback, on the calling thread) only
 * queries may be made on the same context: dirmn_last_error,
 * dirmn_last_error_location, dirmn_context_backend,
 * dirmn_context_get_threads, dirmn_context_get_stream, dirmn_counts_get_info
 * the dirmn_mixture_get_* and dirmn_reg_get_* functions, dirmn_reg_wald_test,
 * dirmn_reg_predict and dirmn_reg_predict_with_precision are served; any other call fails
 * with DIRMN_ERROR_CONTEXT_IN_USE (its message in dirmn_last_error(ctx)).
 * dirmn_counts_destroy, dirmn_mixture_destroy and dirmn_reg_destroy called there free the
 * handle when the call returns (the call may be using it; do not use the
 * handle again); dirmn_context_destroy called there keeps the context
 * (destroy it after the call returns) and says so in
 * dirmn_last_error(NULL). A destroy function called on another thread
 * while a call is in flight sleeps until that call returns. */

typedef enum dirmn_backend DIRMN_ENUM_INT {
  DIRMN_BACKEND_AUTO = 0, /* CUDA where a device exists, else CPU */
  DIRMN_BACKEND_CPU = 1,
  DIRMN_BACKEND_CUDA = 2
} dirmn_backend;

/* Whether `backend` was compiled into this library: 1 or 0. AUTO and CPU are
 * always 1. Does not look for devices (see dirmn_cuda_device_count). */
DIRMN_API int dirmn_backend_compiled(dirmn_backend backend);

/* Writes the number of usable CUDA devices to *count (0 where the driver or
 * devices are missing). Statuses: SUCCESS; NULL_POINTER; BACKEND_UNAVAILABLE
 * when the library was built without CUDA (then *count is set to 0). */
DIRMN_API dirmn_status dirmn_cuda_device_count(int* count);

/* The detailed message of the last failed call on `ctx`, or, when ctx is
 * NULL, of the last call on this thread that failed before a context existed
 * (dirmn_context_create, or any call given a NULL context). "" when there was
 * none. The string is owned by the library and valid until the next call on
 * the same context (thread). Never fails. */
DIRMN_API const char* dirmn_last_error(const dirmn_context* ctx);

/* Where the last failure was, as numbers, so that a binding can word
 * positions in its own convention (1-based in R and Julia) without reading
 * the message. Positions are 0-based; those that do not apply are -1.
 *
 * A failure that has a position reads, in dirmn_last_error,
 * "<function>: <position>: <detail>" -- for example
 * "dirmn_loglik: vector 0, index 3 (0-based): alpha -Inf is infinite" --
 * and `detail` holds the part after the position ("alpha -Inf is
 * infinite"); without a position it reads "<function>: <detail>". Which
 * fields are set, with `argument`, says what the position is:
 *   row, column             a cell of the table: "row r, column c (0-based)"
 *   vector, index           a parameter of dirmn_loglik: "vector j, index i (0-based)"
 *   row, index ("params")   a parameter of the row-wise functions: "row r, index i (0-based)"
 *   vector, or row alone    a vector whose sum of alpha overflows ("vector j (0-based)",
 *                           "row r (0-based)"), or a row weight ("weights": "row r (0-based)")
 *   index ("start")         an entry of dirmn_fit's start: "start index i (0-based)"
 *   index ("ptr")           an entry of a compressed pointer array, "ptr[i]", followed by the
 *                           detail without a colon ("ptr[3] = 5 is below ptr[2] = 7 ...")
 *   index ("indices"), with row (CSR) or column (CSC)
 *                           an entry of the index array: "entry i (row r)"
 *   row, column ("x")       a covariate of dirmn_reg_fit or dirmn_reg_predict: "row r,
 *                           column c (0-based)"
 *   index ("x column")      a covariate (column of x) that is a combination of those before
 *                           it: "x column index i (0-based)"
 *   index ("column")        a category of the table: "column index v (0-based)"
 *   row, column ("alpha")   an alpha of dirmn_reg_fit or dirmn_reg_predict beyond the double
 *                           range: its row and category
 *   row ("sizes", "options->component", "group")
 *                           a row's size or component of dirmn_sample, or its group of
 *                           dirmn_test_groups: "row r (0-based)"
 *   index ("options->mixture_weights", "rows_per_group")
 *                           a mixture weight of dirmn_sample, a group of dirmn_power_groups
 *   row, column ("counts")  a cell dirmn_counts_copy_dense or _sparse cannot write in the
 *                           type asked for
 * Every position is 0-based, in the message as in the fields. Non-finite
 * values are written Inf, -Inf and NaN, others in the fewest digits that
 * read back as the same double (-0.1); integer values as the caller's
 * integers, exactly (9007199254740993, not 9.007199254740992e+15). */
typedef struct dirmn_error_location {
  size_t size;          /* sizeof(dirmn_error_location), set by the caller */
  const char* argument; /* the argument at fault: "data", "values", "ptr", "indices",
                           "params", "weights", "start", "k", ... or "" (static storage) */
  int64_t row;          /* row (observation) of the table, or of row-wise parameters */
  int64_t column;       /* column (category) of the table */
  int64_t vector;       /* parameter vector (dirmn_loglik's j) */
  int64_t index;        /* element of the argument: a parameter's index within its vector
                           or row, or an entry of ptr, indices, values or start */
  int has_value;        /* 1 when `value` holds the offending value */
  double value;         /* the offending value (a count, alpha, weight, index ...) */
  const char* detail;   /* the message without function and position; owned by the
                           library, valid as dirmn_last_error's string */
  int has_integer_value; /* 1 when the offending value is an integer the caller passed
                            (an int64 or int32 count, a ptr or indices entry): then
                            integer_value holds it exactly, and `value` the nearest double */
  int64_t integer_value;
} dirmn_error_location;

/* Fills *location (fields up to location->size) for the last failed call on
 * `ctx` (NULL: this thread's failures before a context existed, as
 * dirmn_last_error). After a success, or a failure without a position,
 * every position is -1. Statuses: SUCCESS; NULL_POINTER (location);
 * INVALID_ARGUMENT (location->size too small to hold `argument`). This call
 * records no failure of its own: the message and location asked about stay. */
DIRMN_API dirmn_status dirmn_last_error_location(const dirmn_context* ctx,
                                                 dirmn_error_location* location);

/* Creates a context on `backend` (device index `device` for CUDA, ignored for
 * CPU). AUTO picks CUDA device `device` where CUDA is compiled in and a
 * device exists, else the CPU. The caller owns *ctx and frees it with
 * dirmn_context_destroy. Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT
 * (unknown backend, negative device); BACKEND_UNAVAILABLE (CUDA asked for but
 * not compiled in, or no such device); DEVICE; OUT_OF_MEMORY. On failure *ctx
 * is left unchanged and the message is in dirmn_last_error(NULL). */
DIRMN_API dirmn_status dirmn_context_create(dirmn_context** ctx, dirmn_backend backend,
                                            int device);

/* Destroys a context. Counts objects created from it stay valid for
 * dirmn_counts_destroy (they keep the resources they need alive) but cannot
 * be used in computations with any other context. NULL is a no-op. */
DIRMN_API void dirmn_context_destroy(dirmn_context* ctx);

/* Writes the context's backend (CPU or CUDA, never AUTO) and device index
 * (0 for CPU). Either output pointer may be NULL. Statuses: SUCCESS;
 * NULL_POINTER (ctx). */
DIRMN_API dirmn_status dirmn_context_backend(const dirmn_context* ctx, dirmn_backend* backend,
                                             int* device);

/* Sets the number of CPU threads the context uses for host-side work; 0 means
 * all cores (the default). Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT
 * (negative); OUT_OF_MEMORY (threads could not be started). */
DIRMN_API dirmn_status dirmn_context_set_threads(dirmn_context* ctx, int threads);

/* Writes the number of CPU threads in use (after resolving 0 to the core
 * count). Statuses: SUCCESS; NULL_POINTER. */
DIRMN_API dirmn_status dirmn_context_get_threads(const dirmn_context* ctx, int* threads);

typedef enum dirmn_precision DIRMN_ENUM_INT {
  DIRMN_PRECISION_DOUBLE = 0, /* default: double throughout; ~1e-12 relative */
  DIRMN_PRECISION_FAST = 1    /* float32 arithmetic where the backend gains from it; 1e-6 relative */
} dirmn_precision;
/* Both bounds are relative to the result or, for a row whose terms cancel,
 * to the size of those terms: a float32 term carries a rounding error of
 * 6e-8 of itself, whatever the sum it ends in. The CUDA backend's terms are
 * shifted so that at large alpha they are of the size of the result. For
 * four or more parameter vectors over a dense 8-bit table of counts below
 * 16 it sums the terms exactly, in integers on the tensor cores, after
 * rounding each to a fixed point of 48 bits (32 in fast mode) over its
 * vector's range: within 1.1e-13 (7.5e-9) per count, which the bounds
 * above cover. */

/* Selects the arithmetic of later computations on this context. Results are
 * always returned as double. The CPU backend computes in double in both
 * modes. Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT. */
DIRMN_API dirmn_status dirmn_context_set_precision(dirmn_context* ctx, dirmn_precision precision);

/* A callback polled from the calling thread during long computations; a
 * non-zero return stops the computation, which then fails with
 * DIRMN_ERROR_CANCELLED and leaves outputs untouched. Calls back into dirmn
 * with the same context are limited to queries (see the top of this
 * section: anything else gets DIRMN_ERROR_CONTEXT_IN_USE); it must return
 * (not longjmp). Pass NULL
 * to remove. Statuses: SUCCESS; NULL_POINTER (ctx). */
typedef int (*dirmn_interrupt_fn)(void* user_data);
DIRMN_API dirmn_status dirmn_context_set_interrupt(dirmn_context* ctx, dirmn_interrupt_fn fn,
                                                   void* user_data);

/* CUDA only: orders the context's work on `stream` (a cudaStream_t passed as
 * void*; NULL returns to the context's own stream). The context's own stream
 * is non-blocking: it does not wait for work on the legacy default stream,
 * which a caller names as cudaStreamLegacy ((void*)1) to order the library
 * after it. The caller keeps the stream alive while it is set. Statuses:
 * SUCCESS; NULL_POINTER (ctx); NOT_SUPPORTED on a CPU context. */
DIRMN_API dirmn_status dirmn_context_set_stream(dirmn_context* ctx, void* stream);

/* CUDA only: writes the stream in use (the context's own or the caller's).
 * Statuses: SUCCESS; NULL_POINTER; NOT_SUPPORTED on a CPU context. */
DIRMN_API dirmn_status dirmn_context_get_stream(const dirmn_context* ctx, void** stream);

/* Waits until all work queued by this context has finished (a no-op on the
 * CPU). Statuses: SUCCESS; NULL_POINTER; DEVICE. */
DIRMN_API dirmn_status dirmn_context_synchronize(dirmn_context* ctx);

/* ------------------------------------------------------------------------ */
/* Counts                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct dirmn_counts dirmn_counts; /* opaque */

/* What a counts object costs in host memory (a CPU context; a CUDA context
 * keeps the same on the device, and a host copy of it for the steps the
 * device lacks). The compact form stores each count in the narrowest of 1,
 * 2, 4 or 8 bytes that holds the table's largest count (8 for real-valued
 * or 2^32 and larger counts): per cell when dense, per nonzero plus 4 bytes
 * of column index when sparse (AUTO picks sparse when that is at most 3/4
 * of the dense bytes). Per row: 16 bytes (the row's total and multinomial
 * coefficient), 8 more for a sparse table's row offsets, and 8 more where
 * counts can reach 2^16 (4- and 8-byte counts: where the row's largest count
 * is). Per column: 16 bytes, and 8 more once a CPU context has taken a
 * likelihood of shared alpha on it (where its per-call tables go). A 2e7 x 2
 * table of counts below 256 thus takes 40 MB of counts and 320 MB of row
 * data; building it takes no more than that beside the caller's array,
 * which it reads in place. A mixture fitted
 * on the host to a table of counts of 2 bytes or more (or of 1 byte, where
 * k x cols x (largest count + 1) passes 2^23) adds its nonzeros by column,
 * 8 bytes per nonzero, kept until the object is destroyed: every M step's
 * histograms are summed from them. */

typedef enum dirmn_dtype DIRMN_ENUM_INT {
  DIRMN_INT32 = 0,
  DIRMN_INT64 = 1,
  DIRMN_FLOAT32 = 2,
  DIRMN_FLOAT64 = 3
} dirmn_dtype;

typedef enum dirmn_index_type DIRMN_ENUM_INT { DIRMN_INDEX_INT32 = 0, DIRMN_INDEX_INT64 = 1 } dirmn_index_type;

/* Compressed sparse formats: CSR compresses rows (ptr has rows + 1 entries,
 * indices are columns); CSC compresses columns (ptr has cols + 1 entries,
 * indices are rows), as R's dgCMatrix and Julia's SparseMatrixCSC. */
typedef enum dirmn_sparse_format DIRMN_ENUM_INT { DIRMN_CSR = 0, DIRMN_CSC = 1 } dirmn_sparse_format;

typedef enum dirmn_storage DIRMN_ENUM_INT {
  DIRMN_STORAGE_AUTO = 0,   /* the library chooses from the fraction of zeros */
  DIRMN_STORAGE_DENSE = 1,  /* every cell stored, in the narrowest fitting type */
  DIRMN_STORAGE_SPARSE = 2  /* nonzero cells only, by row */
} dirmn_storage;

/* Counts are non-negative integers unless this flag is set; with it, any
 * non-negative value (int64 values taken as the nearest double). Either way
 * every count and each row's total must be below 2^53 (at most
 * 9007199254740991): every integer below it is a double exactly, so no
 * integer count is rounded (int64 counts are compared as integers), and no
 * term of the log pmf or its derivatives comes near overflow. Device
 * validation (dirmn_counts_wrap_device*) checks each count so, but not yet
 * the row totals. */
#define DIRMN_COUNTS_REAL_VALUED 0x1u
/* dirmn_counts_create_sparse's ptr and indices count from 1, as Julia's
 * SparseMatrixCSC and Fortran programs keep them: ptr runs from 1 to
 * nnz + 1 and indices are 1..rows (CSC) or 1..cols (CSR), so such arrays
 * pass without a shifted copy. Messages name entries by their 0-based
 * positions in ptr and indices, as always, and quote their values as the
 * caller wrote them; dirmn_last_error_location is 0-based as always. The
 * table does not keep the flag (dirmn_counts_info's flags); the dense
 * functions ignore it; dirmn_counts_wrap_device_sparse refuses it
 * (NOT_SUPPORTED). */
#define DIRMN_COUNTS_ONE_BASED 0x2u

typedef struct dirmn_counts_options {
  size_t size;           /* sizeof(dirmn_counts_options) */
  uint32_t flags;        /* DIRMN_COUNTS_* bits */
  dirmn_storage storage; /* storage request; AUTO by default */
} dirmn_counts_options;

/* Fills the first `size` bytes of *options with defaults (no flags, AUTO
 * storage) and sets options->size to the bytes filled: `size`, or this
 * library's sizeof(dirmn_counts_options) where that is smaller. NULL, or a
 * size below sizeof(size_t), is a no-op. Never fails. */
DIRMN_API void dirmn_counts_options_init_sized(dirmn_counts_options* options, size_t size);
/* The same for the struct as the first release of this header had it
 * (binaries built against it call this symbol). */
DIRMN_API void dirmn_counts_options_init(dirmn_counts_options* options);
#define dirmn_counts_options_init(options) \
  dirmn_counts_options_init_sized((options), sizeof(dirmn_counts_options))

/* Validates a dense host table and copies it into a counts object on the
 * context's device, in the library's compact form. Element (i, j) is
 * data[i * row_stride + j * col_stride] (strides in elements, >= 1; a stride
 * is ignored when its dimension is 1). `options` may be NULL for defaults.
 * The caller keeps ownership of `data` (it is not referenced after return)
 * and owns *counts (free with dirmn_counts_destroy). Statuses: SUCCESS;
 * NULL_POINTER; INVALID_ARGUMENT (rows or cols <= 0, bad strides, dtype or
 * options); OVERFLOW (sizes, the strided extent in bytes); INVALID_COUNTS
 * (with row, column and value: a bad count, or the count that takes its
 * row's total past the bound of DIRMN_COUNTS_REAL_VALUED's comment);
 * OUT_OF_MEMORY; DEVICE; CANCELLED (the interrupt callback is polled at
 * once and then every few million cells or entries; nothing is kept). */
DIRMN_API dirmn_status dirmn_counts_create_dense(dirmn_context* ctx, dirmn_counts** counts,
                                                 int64_t rows, int64_t cols, dirmn_dtype dtype,
                                                 const void* data, int64_t row_stride,
                                                 int64_t col_stride,
                                                 const dirmn_counts_options* options);

/* Validates a compressed sparse host table (CSR or CSC, see
 * dirmn_sparse_format) and copies it into a counts object. `ptr` has
 * (rows + 1) or (cols + 1) entries starting at 0 and non-decreasing to nnz;
 * `indices` and `values` have nnz entries; indices need not be sorted but
 * may not repeat within a row (column). Explicit zeros are allowed and
 * dropped. nnz may be 0 (then indices and values may be NULL). Ownership as
 * for dirmn_counts_create_dense. With DIRMN_COUNTS_ONE_BASED in the
 * options' flags, ptr and indices count from 1 instead (see there).
 * Statuses: as dirmn_counts_create_dense, with INVALID_ARGUMENT also for
 * malformed ptr/indices (naming the entry). */
DIRMN_API dirmn_status dirmn_counts_create_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                                  dirmn_sparse_format format, int64_t rows,
                                                  int64_t cols, int64_t nnz,
                                                  dirmn_index_type index_type, const void* ptr,
                                                  const void* indices, dirmn_dtype value_dtype,
                                                  const void* values,
                                                  const dirmn_counts_options* options);

/* CUDA only: makes a counts object from a dense table already in device
 * memory (int32, float32 or float64; strides in elements as for
 * dirmn_counts_create_dense), validating it on the device. Where the layout
 * allows (float32 or int32, unit column stride, integer counts) the object
 * references `device_data` without a copy: the caller must then keep that
 * memory alive and unchanged until dirmn_counts_destroy returns; otherwise
 * the table is copied into the compact form and `device_data` is not
 * referenced after return. dirmn_counts_get_info tells which (value_bits 0
 * means wrapped, not copied). Statuses: as dirmn_counts_create_dense, plus
 * NOT_SUPPORTED on a CPU context and for INT64 device data. */
DIRMN_API dirmn_status dirmn_counts_wrap_device(dirmn_context* ctx, dirmn_counts** counts,
                                                int64_t rows, int64_t cols, dirmn_dtype dtype,
                                                const void* device_data, int64_t row_stride,
                                                int64_t col_stride,
                                                const dirmn_counts_options* options);

/* CUDA only: makes a counts object from a CSR table in device memory (int32
 * or int64 indices; int32, float32 or float64 values), validating it on the
 * device and copying it into the compact form; the device arrays are not
 * referenced after return. Statuses: as dirmn_counts_create_sparse, plus
 * NOT_SUPPORTED on a CPU context and with DIRMN_COUNTS_ONE_BASED. */
DIRMN_API dirmn_status dirmn_counts_wrap_device_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                                       int64_t rows, int64_t cols, int64_t nnz,
                                                       dirmn_index_type index_type,
                                                       const void* device_ptr,
                                                       const void* device_indices,
                                                       dirmn_dtype value_dtype,
                                                       const void* device_values,
                                                       const dirmn_counts_options* options);

/* Destroys a counts object and frees its host and device memory. May be
 * called after its context was destroyed. NULL is a no-op. */
DIRMN_API void dirmn_counts_destroy(dirmn_counts* counts);

typedef struct dirmn_counts_info {
  size_t size;           /* sizeof(dirmn_counts_info), set by the caller */
  int64_t rows;
  int64_t cols;
  int64_t nnz;           /* number of nonzero cells */
  double max_count;      /* largest count */
  double total;          /* sum of all counts */
  uint32_t flags;        /* DIRMN_COUNTS_* flags in effect */
  dirmn_storage storage; /* DENSE or SPARSE: the form the library chose */
  int value_bits;        /* bits per stored count: 8, 16, 32 or 64 (64 = double) */
  dirmn_backend backend; /* where the table lives: CPU or CUDA */
  int device;            /* CUDA device index, 0 for CPU */
  uint32_t host_steps;   /* DIRMN_STEP_* bits: the steps that run on the host CPU for this
                            object (on a CPU context all of them; on CUDA, those the device
                            lacks for this table's form, run on a host copy), and those a
                            call on it has run on the host after all: the device refused at
                            run time (a mixture's state for its k, the M-step workspace, a
                            pass it cannot size) or cannot take the call's form (M-step fits
                            under row weights rescaled by a power of two). Bits once set stay
                            set for the object's life */
  uint32_t unavailable_steps; /* DIRMN_STEP_* bits no backend can run for this object
                                 (counts wrapped from device memory keep no host copy);
                                 calls that need them fail with NOT_SUPPORTED */
} dirmn_counts_info;

/* The steps of the computations on a counts object, as dirmn_counts_info
 * reports where each runs. The fit's Newton iterations, the mixtures'
 * initialisations and their criteria always run on the host. */
#define DIRMN_STEP_LOGLIK 0x01u              /* dirmn_loglik, the E step's likelihoods */
#define DIRMN_STEP_LOGLIK_ROWWISE 0x02u      /* dirmn_loglik_rowwise */
#define DIRMN_STEP_DERIVATIVES_ROWWISE 0x04u /* dirmn_loglik_rowwise_derivatives */
#define DIRMN_STEP_HISTOGRAMS 0x08u          /* the count histograms of dirmn_loglik_sum and
                                                dirmn_fit, and of a mixture's M step */
#define DIRMN_STEP_MIXTURE_EM 0x10u          /* a mixture's responsibilities kept beside the
                                                table: E step and M-step histograms there */
#define DIRMN_STEP_MIXTURE_FITS 0x20u        /* a mixture's per-component Newton fits
                                                beside the table, once warm-started */
#define DIRMN_STEPS_ALL 0x3fu

/* ------------------------------------------------------------------------ */
/* Communicators: one table split by rows over several processes             */
/* ------------------------------------------------------------------------ */

/* A table too large for one process is loaded in parts: each process (a
 * "rank") makes a counts object of its own rows, and attaches it to a
 * communicator that the caller builds from callbacks over the engine it
 * already runs (MPI, Gloo, a job scheduler's sockets); the ABI depends on
 * no MPI. The global table is rank 0's rows, then rank 1's, and so on
 * (every rank holds at least one row: a counts object has rows >= 1).
 * dirmn ships an optional MPI shim (dirmn_mpi.h, libdirmn_mpi) that builds
 * the callbacks from an MPI_Comm.
 *
 * Collective calls: on counts with a communicator, dirmn_fit,
 * dirmn_loglik_sum, dirmn_overdispersion_test, dirmn_mixture_fit,
 * dirmn_mixture_fit_range, dirmn_reg_fit and dirmn_counts_set_communicator
 * itself must be called by every rank, in the same order, with arguments
 * that agree (the same options; each rank its own rows' weights and
 * designs); the mixture fits and dirmn_reg_fit compare the ranks' k,
 * starts, seed, iterations, tolerance, objective and init, or p, q, model,
 * contrast, reference, tolerance and log_precision, and fail on every rank
 * with INVALID_ARGUMENT naming the first rank and argument that differ. A
 * call refused before it starts (a NULL or busy context) leaves the other
 * ranks waiting, as a missed MPI collective does. Every rank gets the
 * same result, the one a single
 * process holding the whole table gets: alpha, standard errors and
 * iterations bit for bit (the count histograms are summed as exact integers
 * and merged in rank order; row weights are summed in rank order), the
 * log-likelihood to rounding (its multinomial coefficients are summed per
 * rank, then over ranks). Where one rank's part fails (bad weights, memory,
 * a callback), that rank returns its own status and message and every other
 * rank returns DIRMN_ERROR_COMMUNICATION naming the first failed rank: no
 * rank waits for ever on another's error; a progress callback or interrupt
 * that cancels on one rank cancels every rank (DIRMN_ERROR_CANCELLED).
 * A mixture over ranks takes the whole table's starts (the rows its
 * initialisations sample are drawn over every rank's rows and sent to each
 * rank) and sums its histograms and E steps over the ranks in rank order
 * each iteration; its log-likelihood, objective, AIC and BIC agree with
 * one process's to rounding, its parameters and Laplace value (whose
 * log-determinant follows alpha) to the M step's accuracy (the Newton fits
 * stop on a relative change of 1e-12 in their objective, ~1e-6 in alpha);
 * one rank's fit is one process's, bit for bit. Each rank's
 * mixture handle holds the shared parameters and its own rows'
 * responsibilities (info.rows: this rank's rows). A regression over ranks
 * (dirmn_reg_fit, each rank its own rows of x and of the precision
 * design) sums its design's Gram matrix, log-likelihood, gradient and
 * Newton matrix over the ranks each step -- the matrix formed whole, (p
 * V)^2 doubles broadcast by each rank a step, where one process with fewer
 * rows than coefficients solves in the rows' dimension -- and gives every
 * rank the whole table's fit: the log-likelihood to rounding, the
 * coefficients and standard errors to the Newton stopping rule's accuracy
 * (the rule may stop a step apart: 1e-7 of the largest coefficient);
 * the rank of the design is checked over every rank's rows. The per-row
 * calls (dirmn_loglik, dirmn_loglik_rowwise, the row derivatives, row
 * totals, copies, dirmn_mixture_assign, dirmn_reg_predict) stay local:
 * each rank's rows, no communication. dirmn_reg_test_groups and the group
 * tests over a communicator are not available in this release: they
 * return NOT_SUPPORTED on such counts. */

typedef struct dirmn_communicator dirmn_communicator;

/* Sum `count` values over all ranks, in place on every rank: each rank
 * passes its values and receives the sums (MPI_Allreduce with MPI_SUM).
 * `device` is 0: this release passes host memory only. Return 0 on
 * success, anything else on failure (dirmn then fails the call with
 * DIRMN_ERROR_COMMUNICATION, the value in its message). A callback that
 * fails must fail on every rank, as MPI's collectives do: a rank that
 * carries on after its callback succeeded waits for the others at the next
 * one. Callbacks run on the thread that made the dirmn call, and must not
 * call dirmn on the same context. */
typedef int (*dirmn_allreduce_int64_fn)(void* data, int64_t* values, size_t count, int device);
typedef int (*dirmn_allreduce_double_fn)(void* data, double* values, size_t count, int device);
/* Copies `bytes` bytes of `root`'s buffer into every other rank's buffer
 * (MPI_Bcast). `device` as above. 0 on success. */
typedef int (*dirmn_broadcast_fn)(void* data, void* buffer, size_t bytes, int root, int device);

typedef struct dirmn_communicator_callbacks {
  size_t size;  /* sizeof(dirmn_communicator_callbacks) */
  int rank;     /* this process's rank, 0 <= rank < ranks */
  int ranks;    /* the number of ranks, >= 1 */
  dirmn_allreduce_int64_fn allreduce_int64;
  dirmn_allreduce_double_fn allreduce_double;
  dirmn_broadcast_fn broadcast;
  void* data;                 /* passed to every callback */
  void (*release)(void* data); /* called once, when the communicator and every counts object
                                  attached to it are destroyed; may be NULL */
} dirmn_communicator_callbacks;

/* Makes a communicator over the callbacks (copied; `data` is the caller's
 * until `release` is called). The caller owns *comm and frees it with
 * dirmn_communicator_destroy; counts attached to it keep what they need,
 * so it may be destroyed first; where the call fails, `release` is not
 * called (the data is still the caller's). Not collective. Statuses: SUCCESS;
 * NULL_POINTER (comm, callbacks, a callback); INVALID_ARGUMENT
 * (callbacks->size too small, ranks < 1, rank outside [0, ranks));
 * OUT_OF_MEMORY. */
DIRMN_API dirmn_status dirmn_communicator_create(dirmn_communicator** comm,
                                                 const dirmn_communicator_callbacks* callbacks);
/* Destroys the handle (NULL is ignored). The callbacks' `release` runs
 * when no counts object holds the communicator either. */
DIRMN_API void dirmn_communicator_destroy(dirmn_communicator* comm);
/* This process's rank and the number of ranks (either pointer may be
 * NULL). Statuses: SUCCESS; NULL_POINTER (comm). */
DIRMN_API dirmn_status dirmn_communicator_get_rank(const dirmn_communicator* comm, int* rank,
                                                   int* ranks);

/* Makes `counts` this rank's rows of a table split over the communicator's
 * ranks (collective: every rank calls it with its own counts). Checks that
 * every rank's table has the same number of columns; forgets the histograms
 * cached on the counts. NULL `comm` detaches (not collective). Statuses:
 * SUCCESS; NULL_POINTER; WRONG_CONTEXT; DIMENSION_MISMATCH (the ranks'
 * column counts differ: the message names the first rank that differs from
 * rank 0, and its count); COMMUNICATION (a callback failed, or another rank's part failed). */
DIRMN_API dirmn_status dirmn_counts_set_communicator(dirmn_context* ctx, dirmn_counts* counts,
                                                     dirmn_communicator* comm);

/* Describes a counts object. info->size must be set by the caller; fields
 * beyond it are not written. Statuses: SUCCESS; NULL_POINTER;
 * INVALID_ARGUMENT (info->size too small to hold `rows`). */
DIRMN_API dirmn_status dirmn_counts_get_info(const dirmn_counts* counts, dirmn_counts_info* info);

/* Copies the row totals N_b (length rows) to host memory `totals`.
 * Statuses: SUCCESS; NULL_POINTER; WRONG_CONTEXT; DEVICE. */
DIRMN_API dirmn_status dirmn_counts_row_totals(dirmn_context* ctx, const dirmn_counts* counts,
                                               double* totals);

/* Copies the table out as a dense host array: cell (i, j) goes to
 * out[i * row_stride + j * col_stride] (strides in elements, >= 1; a stride
 * is ignored when its dimension is 1), every cell written, zeros included.
 * dtype INT32 or INT64 needs integer counts (not DIRMN_COUNTS_REAL_VALUED)
 * within its range; FLOAT32 rounds each count to the nearest float;
 * FLOAT64 is exact. The caller owns `out`. On a CUDA context the host copy
 * the object keeps is read (counts wrapped from device memory have none:
 * NOT_SUPPORTED). Nothing is written unless the call succeeds. Statuses:
 * SUCCESS; NULL_POINTER; INVALID_ARGUMENT (dtype, strides, an integer dtype
 * for real-valued counts); OVERFLOW (the strided extent in bytes; a count
 * beyond INT32's range, naming its row, column and value); WRONG_CONTEXT;
 * NOT_SUPPORTED. */
DIRMN_API dirmn_status dirmn_counts_copy_dense(dirmn_context* ctx, const dirmn_counts* counts,
                                               dirmn_dtype dtype, void* out, int64_t row_stride,
                                               int64_t col_stride);

/* Copies the table's nonzero cells out in compressed form (CSR or CSC, see
 * dirmn_sparse_format): `ptr` (rows + 1 entries for CSR, cols + 1 for CSC)
 * from 0 to nnz, `indices` and `values` nnz entries each (nnz as
 * dirmn_counts_get_info gives it), indices ascending within each row
 * (column), as dirmn_counts_create_sparse, R's dgCMatrix (CSC) and scipy
 * take them. Index and value types and ownership as for
 * dirmn_counts_copy_dense; INT32 indices need nnz and the table's extents
 * below 2^31 (else OVERFLOW). `indices` and `values` may be NULL when nnz is
 * 0. Statuses: as dirmn_counts_copy_dense, INVALID_ARGUMENT also for an
 * unknown format or index type. */
DIRMN_API dirmn_status dirmn_counts_copy_sparse(dirmn_context* ctx, const dirmn_counts* counts,
                                                dirmn_sparse_format format,
                                                dirmn_index_type index_type, void* ptr,
                                                void* indices, dirmn_dtype value_dtype,
                                                void* values);

/* ------------------------------------------------------------------------ */
/* Log-likelihood                                                            */
/* ------------------------------------------------------------------------ */

typedef enum dirmn_param DIRMN_ENUM_INT {
  DIRMN_PARAM_ALPHA = 0,    /* parameters are alpha (> 0, finite) */
  DIRMN_PARAM_LOG_ALPHA = 1 /* parameters are log(alpha) (finite; exp must not overflow or underflow to 0) */
} dirmn_param;

/* Flags of the likelihood functions. */
/* Without DIRMN_KERNEL every likelihood function gives the log pmf. On the CPU
 * it is summed in the log-beta form, to 1e-12 relative at any count; the CUDA
 * backend's per-row values add the stored coefficient to the kernel, which
 * cancels to ~5e-10 relative for counts near 1e7 (dirmn_loglik_sum and
 * dirmn_fit are exact on both, from the histograms). */
#define DIRMN_FULL 0x1u          /* the log pmf: the default since 0.3 (before, the kernel
                                    was); accepted so that earlier callers keep working */
#define DIRMN_OUTPUT_DEVICE 0x2u /* CUDA: the results (`out`; dirmn_loglik_sum's value,
                                    gradient and Hessian) are device memory */
#define DIRMN_ASYNC 0x4u         /* CUDA, with OUTPUT_DEVICE: return without waiting; the
                                    result is ready when the context's stream reaches it */
#define DIRMN_KERNEL 0x8u        /* leave out the multinomial coefficients: the kernel, the
                                    part that depends on alpha (with DIRMN_FULL:
                                    INVALID_ARGUMENT) */
#define DIRMN_PARAMS_DEVICE 0x10u  /* CUDA: `params` is device memory of the context's device
                                      (as a tensor library holds it). The span its strides
                                      reach is copied to the host in the order of the context's
                                      stream and waited for, then validated there as host
                                      parameters are; the table stays on the device. The
                                      library sees only where an array starts: the caller
                                      answers for its length */
#define DIRMN_WEIGHTS_DEVICE 0x20u /* CUDA, dirmn_loglik_sum: `weights` is device memory, copied
                                      to the host likewise (rows doubles) */

/* Per-row log-likelihood of every row under each of k parameter vectors:
 * out[b * out_stride_row + j * out_stride_k] = loglik of row b under vector
 * j, for b < rows, j < k. Parameter v of vector j is
 * params[j * params_stride_k + v * params_stride_v] (host memory, or with
 * DIRMN_PARAMS_DEVICE device memory; read before return). A row of zeros
 * has log-likelihood 0. The context keeps a
 * copy of the last parameters it converted: a call with the same values
 * (bit for bit, of the same kind) skips their validation and conversion,
 * and on CUDA the rebuilding of its per-alpha tables. The caller owns all
 * arrays. Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT (k <= 0, bad
 * strides, unknown param or flags, DIRMN_FULL with DIRMN_KERNEL); WRONG_CONTEXT (counts made by another
 * context); INVALID_PARAMETER (naming vector and index); OVERFLOW;
 * OUT_OF_MEMORY; DEVICE; CANCELLED; NOT_SUPPORTED (device output or
 * parameters on CPU); INVALID_ARGUMENT also for an `out` or `params`
 * flagged as device memory that is not memory of the context's device. */
DIRMN_API dirmn_status dirmn_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t k,
                                    const double* params, int64_t params_stride_k,
                                    int64_t params_stride_v, dirmn_param param, uint32_t flags,
                                    double* out, int64_t out_stride_row, int64_t out_stride_k);

/* Per-row log-likelihood with one parameter vector per row (the building block
 * of DM regression): out[b * out_stride] = loglik of row b under the vector
 * params[b * params_stride_row + v * params_stride_v]. Ownership, flags and
 * statuses as dirmn_loglik; INVALID_PARAMETER names row and column. */
DIRMN_API dirmn_status dirmn_loglik_rowwise(dirmn_context* ctx, const dirmn_counts* counts,
                                            const double* params, int64_t params_stride_row,
                                            int64_t params_stride_v, dirmn_param param,
                                            uint32_t flags, double* out, int64_t out_stride);

/* ------------------------------------------------------------------------ */
/* Derivatives                                                               */
/* ------------------------------------------------------------------------ */

/* The Hessian of the DM log-likelihood in its diagonal-plus-rank-one form:
 *
 *   H = diag(hessian_diag) + hessian_scalar * u u^T,
 *
 * with u = (1, ..., 1) for derivatives with respect to alpha
 * (DIRMN_PARAM_ALPHA) and u = alpha for derivatives with respect to
 * log alpha (DIRMN_PARAM_LOG_ALPHA). Newton steps and the inverse's diagonal
 * then cost O(V) by the Sherman-Morrison formula. */

/* Weighted sums over rows, for one parameter vector shared by all rows, of
 * the log pmf (*value; with DIRMN_KERNEL the kernel), its gradient
 * (V entries) and its Hessian (V diagonal entries and one scalar), with
 * respect to alpha or log alpha as `param` says. Row b has weight
 * weights[b] (finite, >= 0; NULL means all 1). Any of value, gradient,
 * hessian_diag and hessian_scalar may be NULL when not wanted. The sums come
 * from count histograms built in one pass over the table and cached on the
 * counts object while the weights are unchanged, so repeated calls (as in a
 * fit) cost O(distinct counts), not O(rows x cols). The caller owns all
 * arrays: host memory, except on CUDA contexts where flags say device
 * memory -- DIRMN_PARAMS_DEVICE (params), DIRMN_WEIGHTS_DEVICE (weights),
 * DIRMN_OUTPUT_DEVICE (value, gradient, hessian_diag, hessian_scalar; all
 * written, and the copies waited for, before return): an autograd layer's
 * backward pass on the GPU, whose row weights are the incoming gradient.
 * The outputs are copied out one by one after the sums: a device failure
 * (DEVICE) while copying may leave the earlier ones written. The table is
 * never copied. On
 * CUDA the histograms of 8-bit tables are built on the device; other
 * tables use the host copy the counts object keeps (counts wrapped from
 * device memory have none: NOT_SUPPORTED). Statuses: SUCCESS; NULL_POINTER;
 * INVALID_ARGUMENT (unknown param or flags, bad stride, an array flagged
 * as device memory that is not memory of the context's device);
 * INVALID_PARAMETER (alpha, or a weight, naming its index); OVERFLOW
 * (params_stride's extent; a weighted sum beyond the largest double);
 * WRONG_CONTEXT; OUT_OF_MEMORY; DEVICE; CANCELLED; NOT_SUPPORTED (also:
 * device flags on a CPU context). */
DIRMN_API dirmn_status dirmn_loglik_sum(dirmn_context* ctx, dirmn_counts* counts,
                                        const double* params, int64_t params_stride,
                                        dirmn_param param, const double* weights, uint32_t flags,
                                        double* value, double* gradient, double* hessian_diag,
                                        double* hessian_scalar);

/* Per-row derivatives with one parameter vector per row (the building block
 * of DM regression): for row b with parameters
 * params[b * params_stride_row + v * params_stride_v], writes loglik[b] and
 * hessian_scalar[b] (contiguous, `rows` entries each) and the gradient and
 * Hessian-diagonal entries (b, v) at [b * out_stride_row + v * out_stride_v]
 * of two rows x V arrays. Derivatives are with respect to alpha or log
 * alpha as `param` says (u as above, per row). Any output may be NULL.
 * Statuses: as dirmn_loglik_rowwise. */
DIRMN_API dirmn_status dirmn_loglik_rowwise_derivatives(
    dirmn_context* ctx, const dirmn_counts* counts, const double* params,
    int64_t params_stride_row, int64_t params_stride_v, dirmn_param param, uint32_t flags,
    double* loglik, double* gradient, double* hessian_diag, double* hessian_scalar,
    int64_t out_stride_row, int64_t out_stride_v);

/* ------------------------------------------------------------------------ */
/* Maximum-likelihood fit of alpha                                           */
/* ------------------------------------------------------------------------ */

/* Called once after each iteration of a fit or of a mixture's EM, with
 * iteration = 1, 2, ... (the last call's is the result's `iterations`; a
 * mixture counts from 1 again for each start), the log pmf after it (a fit
 * with DIRMN_KERNEL: the kernel), and a measure of change: a fit's gradient
 * max-norm in log alpha, a mixture's largest change of a responsibility. A
 * non-zero return cancels the call (DIRMN_ERROR_CANCELLED, outputs
 * untouched). */
typedef int (*dirmn_progress_fn)(int iteration, double loglik, double change,
                                 void* user_data);

typedef struct dirmn_fit_options {
  size_t size;               /* sizeof(dirmn_fit_options) */
  double tolerance;          /* stop when the predicted gain of a Newton step (half the
                                Newton decrement squared) is below tolerance x |loglik|;
                                default 1e-10 */
  int max_iterations;        /* default 1000 */
  const double* weights;     /* row weights (finite, >= 0), NULL for all 1 */
  const double* start;       /* V starting alphas (> 0), NULL for the method of moments */
  dirmn_progress_fn progress; /* NULL for none */
  void* progress_data;
  uint32_t flags;            /* DIRMN_KERNEL: the progress callback receives the kernel
                                rather than the log pmf; default 0 (DIRMN_FULL, the log
                                pmf, is accepted) */
  double* hessian_diag;      /* caller-allocated V entries, or NULL (the default): receives,
                                with dirmn_fit_result's hessian_scalar, the Hessian of the
                                log-likelihood with respect to alpha at the fit,
                                diag(hessian_diag) + hessian_scalar 11^T, as dirmn_loglik_sum
                                gives it (0 on the diagonal for columns without counts). An
                                output, written on success; not written under
                                multinomial_limit, nor when a single column has counts (any
                                alpha is then an MLE) */
} dirmn_fit_options;

/* Fills the first `size` bytes of *options with defaults and sets
 * options->size to the bytes filled (`size`, or this library's
 * sizeof(dirmn_fit_options) where that is smaller). NULL, or a size below
 * sizeof(size_t), is a no-op. Never fails. */
DIRMN_API void dirmn_fit_options_init_sized(dirmn_fit_options* options, size_t size);
/* The same for the struct as the first release of this header had it (up
 * to progress_data; binaries built against it call this symbol). */
DIRMN_API void dirmn_fit_options_init(dirmn_fit_options* options);
#define dirmn_fit_options_init(options) \
  dirmn_fit_options_init_sized((options), sizeof(dirmn_fit_options))

typedef struct dirmn_fit_result {
  size_t size;              /* sizeof(dirmn_fit_result), set by the caller */
  double* alpha;            /* caller-allocated, V entries: the fitted alpha; 0 for columns
                               without counts (their MLE is the limit alpha -> 0); under
                               multinomial_limit, the multinomial proportions */
  double* std_error_alpha;  /* caller-allocated V entries or NULL: standard errors of alpha */
  double* std_error_log_alpha; /* caller-allocated V entries or NULL: of log alpha */
  double loglik_kernel;     /* the maximised log-likelihood without the multinomial
                               coefficients (the part that depends on alpha) */
  double loglik;            /* the same with them: the log pmf of the data, as every
                               "loglik" of this library and its bindings means */
  double gradient_norm;     /* max-norm of the gradient with respect to log alpha */
  double precision;         /* sum of alpha (infinite under multinomial_limit) */
  int iterations;           /* Newton iterations (from a caller's start that went nowhere,
                               plus those from the method of moments' start) */
  int converged;            /* 1 only at a stationary point with finite values: the predicted
                               gain below tolerance x |loglik| and gradient_norm at most
                               sqrt(tolerance) x the weight of the rows with counts (or the
                               multinomial limit); 0 at max_iterations */
  int multinomial_limit;    /* 1 when the data show no overdispersion: the likelihood grows
                               toward the multinomial limit (sum of alpha -> infinity) */
  int64_t zero_columns;     /* columns without counts (alpha reported as 0) */
  double hessian_scalar;    /* the Hessian's rank-one scalar, written with
                               options->hessian_diag (see dirmn_fit_options) */
  /* The one rule every criterion of this library and its bindings counts by
     (dirmn_mixture_info too): */
  int64_t parameters;       /* the alphas fitted: the columns with counts,
                               cols - zero_columns (AIC's and BIC's P) */
  double observations;      /* the rows with counts and a positive weight: their number,
                               or with row weights the sum of their weights (BIC's n) */
} dirmn_fit_result;

/* Maximum-likelihood alpha for the table, by Newton's method on log alpha
 * with O(V) Sherman-Morrison steps, safeguarded by step halving, a step of
 * the precision alone and a Minka fixed-point step where Newton does not
 * increase the likelihood. Any finite positive start works: it is brought
 * into [1e-150, 1e150] with a sum of alpha in [1e-6, 1e10] (its proportions
 * kept), the iterates stay in that range, and a start from which the
 * iteration does not converge is followed by the method of moments' start
 * (the better result is returned). Works on
 * count histograms (see dirmn_loglik_sum). Rows of zeros and zero-weight rows
 * contribute nothing; columns without counts are reported, not fitted;
 * data without overdispersion are reported through multinomial_limit.
 * `options` may be NULL for defaults. result->size must be set and
 * result->alpha must point to V doubles. Statuses: SUCCESS (also when not
 * converged within max_iterations: see result->converged); NULL_POINTER;
 * INVALID_ARGUMENT (options, a table with no counts at all); INVALID_PARAMETER
 * (weights or start, naming the index); OVERFLOW (array extents; the weighted
 * log-likelihood or Hessian beyond the largest double); WRONG_CONTEXT;
 * OUT_OF_MEMORY; DEVICE; CANCELLED (progress callback or interrupt);
 * NOT_SUPPORTED (as dirmn_loglik_sum). */
DIRMN_API dirmn_status dirmn_fit(dirmn_context* ctx, dirmn_counts* counts,
                                 const dirmn_fit_options* options, dirmn_fit_result* result);

/* ------------------------------------------------------------------------ */
/* Dirichlet-multinomial mixtures (EM clustering)                            */
/* ------------------------------------------------------------------------ */

typedef struct dirmn_mixture dirmn_mixture; /* opaque: one fitted mixture */

typedef enum dirmn_mixture_objective DIRMN_ENUM_INT {
  DIRMN_MIXTURE_ML = 0, /* plain maximum likelihood */
  DIRMN_MIXTURE_DMN = 1 /* DirichletMultinomial::dmn's MAP fit: a Gamma(0.1, 0.1) prior on
                           every alpha (as a density on log alpha), and its criteria scale */
} dirmn_mixture_objective;

typedef enum dirmn_mixture_init DIRMN_ENUM_INT {
  DIRMN_INIT_KMEANS = 0,   /* k-means on row proportions, centres from random rows */
  DIRMN_INIT_KMEANSPP = 1, /* k-means++ seeding, then k-means */
  DIRMN_INIT_SOFT_KMEANS = 2, /* dmn's initialisation: soft k-means on row proportions from
                                random hard labels, responsibilities exp(-50 d) normalised
                                (d the Euclidean distance to a centre), iterated until no
                                centre moves by more than 1e-6 (at most 1000 times); EM starts
                                from those soft responsibilities */
  DIRMN_INIT_MIXED = 3     /* the default: the starts take turns, soft k-means (dmn's) for
                              start 0, 3, 6, ..., k-means++ for 1, 4, ..., k-means for 2, 5,
                              ...: on real tables no one of them is best at every k, and
                              EM often stops within a few iterations of its start */
} dirmn_mixture_init;

typedef struct dirmn_mixture_options {
  size_t size;                       /* sizeof(dirmn_mixture_options) */
  dirmn_mixture_objective objective; /* default ML */
  dirmn_mixture_init init;           /* default MIXED */
  int starts;                        /* random starts, the best objective kept; default 6 */
  uint64_t seed;                     /* makes results reproducible on every backend; default 1 */
  int max_iterations;                /* EM iterations per start; default 1000 */
  double tolerance;                  /* stop when the objective changes by less than
                                        tolerance x |objective|; default 1e-9 */
  const double* weights;             /* row weights (finite, >= 0), NULL for all 1 */
  dirmn_progress_fn progress;        /* after each EM iteration (see dirmn_progress_fn):
                                        iteration, log pmf, largest responsibility change;
                                        non-zero cancels */
  void* progress_data;
  const dirmn_mixture* grow_from;    /* NULL (the default), or a mixture of k - 1 components
                                        fitted to a table of the same rows and columns: up to
                                        3 starts more are grown from it, each splitting one of
                                        its components of the largest weights in two by
                                        2-means; under ML, where none of the starts reaches
                                        its log-likelihood, the k - 1 fit itself is kept (see
                                        dirmn_mixture_info.start), so the log-likelihood is
                                        non-decreasing in k. Read during the call only */
  int m_step_iterations;             /* Newton steps per component per M step once the
                                        component has a warm start: a generalized EM (no
                                        step lowers the likelihood, or raises the objective);
                                        EM stops on `tolerance` only after an M step whose
                                        fits all converged or one with the full budget of
                                        200 steps, at a stationary point as the classical EM
                                        does (from the same start the two may reach different
                                        local optima). >= 1; default 4; 200 or more: every M
                                        step fits to convergence (the classical EM) */
} dirmn_mixture_options;

/* Fills the first `size` bytes of *options with defaults and sets
 * options->size to the bytes filled, as dirmn_fit_options_init_sized.
 * Never fails. */
DIRMN_API void dirmn_mixture_options_init_sized(dirmn_mixture_options* options, size_t size);
/* The same for the struct as the first release of this header had it
 * (binaries built against it call this symbol). */
DIRMN_API void dirmn_mixture_options_init(dirmn_mixture_options* options);
#define dirmn_mixture_options_init(options) \
  dirmn_mixture_options_init_sized((options), sizeof(dirmn_mixture_options))

/* Fits a k-component DM mixture to the table by EM: the E step evaluates
 * the rows x k log-likelihoods in one pass and turns them into
 * responsibilities by log-sum-exp; the M step refits each component's alpha
 * by Newton's method on responsibility-weighted count histograms (all k
 * built in one more pass), the k fits on parallel host threads. On a CUDA
 * context with a table of 8-bit counts the responsibilities stay on the
 * device: the E step, the histograms and, once every component has a warm
 * start, the k Newton fits run there, and only alpha and per-component
 * sums cross to the host per iteration (a fit the host makes another way --
 * the multinomial limit, Minka's step -- is handed back to it; CPU and CUDA
 * results agree to rounding). When every count of such a table is
 * below 16, on devices of compute capability 8.0 or later, the histograms
 * are made on the int8 tensor cores, exact for the weights in 63-bit fixed
 * point; for that the first fit keeps a second copy of the table on the
 * device (rows x cols bytes) until `counts` is destroyed, and goes without
 * the tensor cores where there is no room for it. Rows of zeros, columns of zeros and components
 * that lose all their rows are handled (an empty component is re-seeded at
 * the worst-explained row). The caller owns *mixture (free with
 * dirmn_mixture_destroy); it does not reference `counts` after return.
 * Components come out ordered by decreasing mixing weight (the order every
 * binding shows). Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT (k < 1,
 * k above the number of rows with counts -- under options->weights, rows
 * with counts and a positive weight, so weights that are all 0 are refused
 * --, options, a grow_from that is not a k - 1 fit of this table's shape);
 * INVALID_PARAMETER (weights, naming the row); OVERFLOW (the weighted
 * log-likelihood beyond the largest double);
 * WRONG_CONTEXT; OUT_OF_MEMORY; DEVICE; CANCELLED; NOT_SUPPORTED (counts
 * wrapped from device memory: the initialisation needs rows on the host). */
DIRMN_API dirmn_status dirmn_mixture_fit(dirmn_context* ctx, dirmn_counts* counts, int k,
                                         const dirmn_mixture_options* options,
                                         dirmn_mixture** mixture);

/* Fits a mixture for every k from k_min to k_max (each as dirmn_mixture_fit
 * with the same options and, for every k after k_min, grow_from set to the
 * fit of k - 1, so that under ML the log-likelihood is non-decreasing in k;
 * separate calls so made give the same fits) and stores them in
 * mixtures[0 .. k_max - k_min], which must have
 * room for k_max - k_min + 1 handles. For model selection compare their
 * dirmn_mixture_info (BIC, AIC, Laplace). On success the caller owns every
 * stored mixture; on failure nothing is stored and nothing stays allocated.
 * Statuses: those of dirmn_mixture_fit (the message names the k that
 * failed); INVALID_ARGUMENT also for k_min < 1 or k_max < k_min, and for
 * k_max above the rows dirmn_mixture_fit accepts (checked before anything
 * is fitted or reserved). */
DIRMN_API dirmn_status dirmn_mixture_fit_range(dirmn_context* ctx, dirmn_counts* counts, int k_min,
                                               int k_max, const dirmn_mixture_options* options,
                                               dirmn_mixture** mixtures);

/* Frees a mixture. NULL is a no-op. */
DIRMN_API void dirmn_mixture_destroy(dirmn_mixture* mixture);

typedef struct dirmn_mixture_info {
  size_t size;            /* sizeof(dirmn_mixture_info), set by the caller */
  int k;                  /* components */
  int64_t rows;           /* rows of the fitted table */
  int64_t cols;           /* categories */
  int64_t parameters;     /* P, counted by dirmn_fit_result's rule: ML, k C + k - 1 with C
                             the columns with counts (in rows of positive weight); DMN,
                             k V + k - 1 (dmn's count: its prior keeps every alpha
                             estimated) */
  double loglik;          /* the mixture log-likelihood, with multinomial coefficients */
  double objective;       /* what was optimised: -loglik (ML), or dmn's objective
                             -loglik - sum of log prior terms (DMN) */
  double aic;             /* ML: -2 loglik + 2P; DMN: dmn's scale, objective + P */
  double bic;             /* ML: -2 loglik + P log(n); DMN: objective + P/2 log(n), with n
                             = observations */
  double laplace;         /* objective + 1/2 log det(Hessian) - P/2 log(2 pi), O(V) per
                             component. ML: the Hessian of the objective in log alpha per
                             component, on the -2 log scale (x2), where without a prior it
                             rewards extra components more than BIC does. DMN: dmn's value --
                             its per-component Hessian (whose per-category digamma and
                             trigamma sums it leaves unweighted by the responsibilities) plus
                             (k - 1)/k sum_j (2 log n - log W_j), W_j the component weights
                             (dmn adds that term for all components but one, chosen by its
                             random initial labels; the mean over that choice is used here) */
  int iterations;         /* EM iterations of the best start */
  int converged;          /* 1 when the best start met the tolerance */
  int start;              /* which start was best: 0 .. starts - 1 the random ones; with
                             grow_from, starts .. starts + g - 1 those grown from it (g =
                             min(k - 1, 3): its components of the largest weights, each
                             split in two), and starts + g the k - 1 fit kept (its largest
                             component in two identical halves: under ML no start did
                             better than k - 1 components) */
  double observations;    /* n, by dirmn_fit_result's rule: the rows with counts and a
                             positive weight (with row weights, the sum of their weights) */
} dirmn_mixture_info;

/* Describes a fitted mixture; info->size must be set (fields beyond it are
 * not written). Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT (size).
 * Failure messages go to dirmn_last_error(NULL). */
DIRMN_API dirmn_status dirmn_mixture_get_info(const dirmn_mixture* mixture,
                                              dirmn_mixture_info* info);

/* Copies the fitted parameters: alpha of component j, category v, to
 * alpha[j * stride_k + v * stride_v] (k x V), and the mixing weights to
 * weights[j] (k entries). Either output may be NULL. Statuses: SUCCESS;
 * NULL_POINTER; INVALID_ARGUMENT (overlapping strides); OVERFLOW (extent). */
DIRMN_API dirmn_status dirmn_mixture_get_params(const dirmn_mixture* mixture, double* alpha,
                                                int64_t stride_k, int64_t stride_v,
                                                double* weights);

/* Copies the responsibilities of the fitted rows: P(component j | row b) to
 * out[b * stride_row + j * stride_k]. Statuses: SUCCESS; NULL_POINTER;
 * INVALID_ARGUMENT (overlapping strides); OVERFLOW (extent). */
DIRMN_API dirmn_status dirmn_mixture_get_responsibilities(const dirmn_mixture* mixture,
                                                          double* out, int64_t stride_row,
                                                          int64_t stride_k);

/* Assigns new rows (a counts object with the same number of columns, made
 * by `ctx`) to the fitted components: posterior probabilities to
 * out[b * stride_row + j * stride_k]. Statuses: SUCCESS; NULL_POINTER;
 * DIMENSION_MISMATCH (columns); INVALID_ARGUMENT (strides); OVERFLOW
 * (extent); WRONG_CONTEXT; OUT_OF_MEMORY; DEVICE; CANCELLED. A mixture
 * fitted by another context is held for the call too: CONTEXT_IN_USE while
 * that context is in a call on another thread. */
DIRMN_API dirmn_status dirmn_mixture_assign(dirmn_context* ctx, const dirmn_mixture* mixture,
                                            const dirmn_counts* counts, double* out,
                                            int64_t stride_row, int64_t stride_k);

/* ------------------------------------------------------------------------ */
/* Overdispersion: is the multinomial enough?                                */
/* ------------------------------------------------------------------------ */

typedef struct dirmn_overdispersion_result {
  size_t size;               /* sizeof(dirmn_overdispersion_result), set by the caller */
  double lrt_statistic;      /* 2 (loglik of the DM fit - loglik of the multinomial) >= 0;
                                0 where the DM fit is the multinomial limit */
  double lrt_p_value;        /* under the boundary null (the multinomial is the DM's
                                precision at infinity: 2 log LR ~ chi2_0 / 2 + chi2_1 / 2,
                                Self & Liang 1987): P(chi2_1 >= statistic) / 2; 1 at 0 */
  double score_statistic;    /* Kim & Margolin's (1992) C(alpha) statistic
                                T = sum_j sum_b w_b (n_bj - N_b X_j / X)^2 / X_j over the
                                columns with counts (X_j their weighted totals), as HMP's
                                C.alpha.multinomial gives it (Tarone's 1979 test for two
                                columns) */
  double score_df;           /* its scaled chi-square's degrees of freedom,
                                (K - 1) tr(M)^2 / tr(M^2) with M = diag(p) - p p^T,
                                p_b = N_b / X (K columns with counts) */
  double score_scale;        /* and its scale g = tr(M^2) / tr(M) */
  double score_p_value;      /* P(chi2_score_df >= T / g); 1 with one column of counts */
  double loglik_dm;          /* the log pmf at the DM fit */
  double loglik_multinomial; /* the log pmf at the multinomial's pooled proportions */
  double precision;          /* the fitted sum of alpha (+Inf at the multinomial limit) */
  int64_t categories;        /* K: the columns with counts (the others are left out) */
  double observations;       /* n, as dirmn_fit_result counts it */
  int converged;             /* the DM fit's (see dirmn_fit_result) */
} dirmn_overdispersion_result;

/* Tests the multinomial against the Dirichlet-multinomial on the table: the
 * likelihood ratio (a dirmn_fit of the DM, with options as dirmn_fit takes
 * them, or NULL for defaults; options->start and hessian_diag are not used)
 * and the C(alpha) score test (from the table's count histograms alone).
 * Row weights (options->weights) count as frequencies: a weight of 2 is the
 * row twice. Columns without counts are left out of both tests. result->size
 * must be set; fields beyond it are not written. Statuses: those of
 * dirmn_fit; INVALID_ARGUMENT also for a result->size too small. */
DIRMN_API dirmn_status dirmn_overdispersion_test(dirmn_context* ctx, dirmn_counts* counts,
                                                 const dirmn_fit_options* options,
                                                 dirmn_overdispersion_result* result);

/* ------------------------------------------------------------------------ */
/* Regression: covariates -> composition                                     */
/* ------------------------------------------------------------------------ */

/* Dirichlet-multinomial regression, in one of two parametrisations
 * (dirmn_reg_model). Log-linear (MGLM's, the default): row b with
 * covariates x_b (p values) has alpha_bv = exp(x_b . beta_v), beta a p x V
 * matrix of coefficients, one column per category, all identified (alpha
 * is not normalised). Mean/precision (DRIMSeq's, brms's): row b's
 * proportions are softmax(x_b beta) and its precision (the sum of alpha)
 * phi_b = exp(z_b . gamma), with z_b the row's covariates of the precision
 * (options->precision_design; by default one precision for every row,
 * z_b = 1), so alpha_bv = phi_b softmax(x_b beta)_v; softmax leaves each covariate's row of beta free up to a
 * constant, fixed by a reference category (its betas 0) or by summing to
 * zero (dirmn_reg_contrast). Maximum likelihood by Newton's method in the
 * free coefficients, from the per-row derivatives (the
 * DIRMN_STEP_DERIVATIVES_ROWWISE step: on a CUDA context the device's where
 * it has them): the Hessian is one p x p block per category plus terms of
 * rank at most a few per row. The log-linear model's step is solved in the
 * smaller of the coefficients and the rows (see DIRMN_REG_MAX_SYSTEM); the
 * mean/precision model's in its free coefficients. Each step is
 * safeguarded (Levenberg damping where the Hessian is not negative
 * definite, step halving until the log-likelihood rises). It starts from
 * the shared-alpha fit (dirmn_fit), regressed on the design by least
 * squares. */
typedef struct dirmn_reg dirmn_reg; /* opaque: one fitted regression */

typedef enum dirmn_reg_model DIRMN_ENUM_INT {
  DIRMN_REG_LOGLINEAR = 0,       /* alpha_bv = exp(x_b . beta_v) */
  DIRMN_REG_MEAN_PRECISION = 1   /* alpha_bv = phi_b softmax(x_b beta)_v, log phi_b = z_b . gamma */
} dirmn_reg_model;

typedef enum dirmn_reg_contrast DIRMN_ENUM_INT {
  DIRMN_REG_REFERENCE = 0,   /* the reference category's betas are 0 */
  DIRMN_REG_SUM_TO_ZERO = 1  /* each covariate's betas sum to 0; the reference category's is
                                minus the sum of the others' */
} dirmn_reg_contrast;

typedef struct dirmn_reg_options {
  size_t size;               /* sizeof(dirmn_reg_options) */
  double tolerance;          /* stop when the predicted gain of a Newton step (half the
                                Newton decrement squared) is below tolerance x |loglik|;
                                default 1e-10 */
  int max_iterations;        /* Newton steps; default 200 */
  const double* weights;     /* row weights (finite, >= 0; frequencies: a weight of 2 is
                                the row twice), NULL for all 1 */
  dirmn_progress_fn progress; /* after each Newton step: iteration, log pmf, max-norm of the
                                gradient in beta; non-zero cancels */
  void* progress_data;
  dirmn_reg_model model;     /* default DIRMN_REG_LOGLINEAR */
  dirmn_reg_contrast contrast; /* mean/precision: default DIRMN_REG_REFERENCE */
  int64_t reference;         /* mean/precision: the reference (or, summing to zero, the
                                implied) category, 0-based; default 0 */
  double log_precision;      /* mean/precision: NaN (the default) fits log phi; a finite
                                value holds it there (DRIMSeq's dmFit at a given precision):
                                p (V - 1) free coefficients */
  int hold_precision;        /* dirmn_reg_test_groups, mean/precision: 1 = each group's null
                                fit holds its full fit's precision (DRIMSeq's dmTest); 0 (the
                                default) = each fit has its own */
  const double* precision_design; /* mean/precision, dirmn_reg_fit: z, the covariates of the
                                log precision (log phi_b = z_b . gamma, as betareg's and brms's
                                precision formulas), rows x precision_covariates, entry (b, j)
                                at precision_design[b * precision_stride_row + j *
                                precision_stride_col] (host memory, read during the call only;
                                finite; of full column rank over the rows with counts; an
                                intercept is a column of ones). NULL (the default): one
                                precision for every row (z_b = 1) */
  int64_t precision_covariates; /* q >= 1, with precision_design */
  int64_t precision_stride_row, precision_stride_col;
} dirmn_reg_options;

/* Fills the first `size` bytes of *options with defaults and sets
 * options->size to the bytes filled, as dirmn_fit_options_init_sized.
 * Never fails. */
DIRMN_API void dirmn_reg_options_init_sized(dirmn_reg_options* options, size_t size);
#define dirmn_reg_options_init(options) \
  dirmn_reg_options_init_sized((options), sizeof(dirmn_reg_options))

/* Most unknowns of a regression's Newton system. It is solved in the
 * smaller of the coefficients (p x V) and the rows with counts: formed
 * whole where the rows are more (rows x (p V)^2 / 2 multiply-adds), else in
 * the rows' dimension (Woodbury on the low-rank part: rows^2 p V / 2), and
 * that many unknowns squared are formed and factored (512 MB at this size). */
#define DIRMN_REG_MAX_SYSTEM 8000

/* Fits the regression of the table's rows on the design matrix x: rows x p
 * covariates, entry (b, i) at x[b * x_stride_row + i * x_stride_col] (host
 * memory, read during the call only; an intercept is a column of ones, as
 * R's model.matrix makes it). The caller owns *reg (free with
 * dirmn_reg_destroy); it does not reference `counts` or x after return.
 * Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT (p < 1, bad strides,
 * options; a table of fewer than two categories; a design that is not of
 * full column rank under the weights,
 * naming the first covariate that is a combination of those before it; a
 * category without counts under the weights, naming it: its coefficients
 * have no finite MLE; more rows with counts are needed than p; both p x V
 * and the rows with counts above DIRMN_REG_MAX_SYSTEM); INVALID_PARAMETER (a non-finite x, naming
 * row and column, or weight, naming the row); DIMENSION_MISMATCH (rows is
 * not the table's); WRONG_CONTEXT; OUT_OF_MEMORY; DEVICE; CANCELLED;
 * NOT_SUPPORTED (counts wrapped from device memory); OVERFLOW (an alpha
 * beyond the largest double at the start). A precision_design is checked
 * as x is (INVALID_PARAMETER naming a non-finite entry's row and column;
 * INVALID_ARGUMENT naming a column that is a combination of the ones
 * before it, or where it is given to a log-linear fit or beside a held
 * log_precision). A fit that stops at
 * max_iterations is returned with converged = 0, as is one whose steps no
 * longer raise the log-likelihood (where the MLE does not exist, as for a
 * table without overdispersion, whose alpha grows without bound). Options
 * past the caller's size take their defaults; a model, contrast or
 * reference out of range is an INVALID_ARGUMENT. Working memory: about
 * rows x (7 + 9 V) doubles and 4 m^2, m = min(p V, rows with counts) for the
 * log-linear model and p (V - 1) + q for mean/precision (q = 1 without a
 * precision_design). */
DIRMN_API dirmn_status dirmn_reg_fit(dirmn_context* ctx, dirmn_counts* counts, const double* x,
                                     int64_t rows, int64_t p, int64_t x_stride_row,
                                     int64_t x_stride_col, const dirmn_reg_options* options,
                                     dirmn_reg** reg);

/* Frees a regression. NULL is a no-op. */
DIRMN_API void dirmn_reg_destroy(dirmn_reg* reg);

typedef struct dirmn_reg_info {
  size_t size;            /* sizeof(dirmn_reg_info), set by the caller */
  int64_t rows;           /* rows of the fitted table */
  int64_t covariates;     /* p */
  int64_t categories;     /* V */
  int64_t parameters;     /* the free coefficients: p x V (log-linear), p (V - 1) + q
                             (mean/precision) */
  double loglik;          /* the log pmf at the fit (with multinomial coefficients) */
  double aic;             /* -2 loglik + 2 parameters */
  double bic;             /* -2 loglik + parameters log(observations) */
  double observations;    /* n: the rows with counts and a positive weight (with row
                             weights, the sum of their weights), as dirmn_fit counts it */
  double gradient_norm;   /* max-norm of the gradient in beta at the fit */
  int iterations;         /* Newton steps taken */
  int converged;          /* 1 when the tolerance was met */
  int hessian_definite;   /* 1 when the Hessian is negative definite at the fit (a strict
                             local maximum): the covariance and standard errors are its
                             negative inverse; 0: they are not given (dirmn_reg_get_vcov
                             and _get_std_errors answer NOT_SUPPORTED) */
  dirmn_reg_model model;
  dirmn_reg_contrast contrast; /* mean/precision */
  int64_t reference;      /* mean/precision: the reference (implied) category */
  int64_t precision_covariates; /* mean/precision: q, the gammas (1 without a
                                   precision_design), 0 where it was held; log-linear: 0 */
  int multinomial_limit;  /* mean/precision with one precision (no precision_design): 1 when
                             the data show no overdispersion -- the likelihood rises toward
                             phi -> infinity, the multinomial logit model, whose coefficients
                             beta the fit approaches; converged is then 0 and gamma only a
                             point on that plateau (dirmn_reg_test_groups's fits are not
                             tested for it: their likelihood ratios take the supremum
                             either way) */
} dirmn_reg_info;

/* Describes a fitted regression; info->size must be set (fields beyond it
 * are not written). Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT
 * (size). Failure messages go to dirmn_last_error(NULL). */
DIRMN_API dirmn_status dirmn_reg_get_info(const dirmn_reg* reg, dirmn_reg_info* info);

/* Copies the coefficients: beta of covariate i, category v, to
 * coef[i * stride_covariate + v * stride_category] (p x V; mean/precision:
 * the reference category's column 0, or minus the sum of the others').
 * Statuses:
 * SUCCESS; NULL_POINTER; INVALID_ARGUMENT (overlapping strides); OVERFLOW
 * (extent). */
DIRMN_API dirmn_status dirmn_reg_get_coef(const dirmn_reg* reg, double* coef,
                                          int64_t stride_covariate, int64_t stride_category);

/* Copies the standard errors of the coefficients (the square roots of the
 * covariance's diagonal), laid out as dirmn_reg_get_coef (mean/precision: 0
 * for a reference category's betas, which are fixed; summing to zero, the
 * implied betas' from the covariance of their sum). Statuses: those of
 * dirmn_reg_get_coef; NOT_SUPPORTED where the fit has no covariance
 * (hessian_definite = 0). */
DIRMN_API dirmn_status dirmn_reg_get_std_errors(const dirmn_reg* reg, double* se,
                                                int64_t stride_covariate,
                                                int64_t stride_category);

/* Copies the covariance of the free coefficients (info.parameters of them,
 * P), the negative inverse Hessian of the log-likelihood at the fit, P x P
 * in the order of vec(beta) (covariate fastest: coefficient (i, v) is index
 * v p + i, as R's as.vector(coef) orders a p x V matrix); mean/precision:
 * vec(beta) without the reference category's column, then gamma. Entry
 * (r, c) goes to out[r * ld + c]; ld >= P. The log-linear model's
 * covariance is kept as the factors it was solved with where the rows are
 * fewer than the coefficients, and formed here (rows x P^2 / 2
 * multiply-adds, on the calling thread). Statuses: SUCCESS; NULL_POINTER;
 * INVALID_ARGUMENT (ld); OVERFLOW (extent); OUT_OF_MEMORY; NOT_SUPPORTED
 * where the fit has no covariance (hessian_definite = 0). */
DIRMN_API dirmn_status dirmn_reg_get_vcov(const dirmn_reg* reg, double* out, int64_t ld);

/* The Wald test that covariate i has no effect on any category (beta_iv = 0
 * for every v): statistic = b' S^-1 b with b the covariate's free
 * coefficients (V; mean/precision: V - 1) and S their covariance, against
 * chi-square with as many degrees of freedom.
 * Statuses: SUCCESS; NULL_POINTER; INVALID_ARGUMENT (covariate outside
 * 0 .. p - 1); NOT_SUPPORTED where the fit has no covariance. Failure
 * messages go to dirmn_last_error(NULL). */
DIRMN_API dirmn_status dirmn_reg_wald_test(const dirmn_reg* reg, int64_t covariate,
                                           double* statistic, double* df, double* p_value);

/* The precision's coefficients of a mean/precision fit, gamma (log phi_b
 * = z_b . gamma; without a precision_design gamma = log phi), and their
 * standard errors (se may be NULL; NaN without a covariance, 0 where it
 * was held): max(1, info.precision_covariates) entries each (one, the held
 * log_precision, where it was held). Statuses: SUCCESS; NULL_POINTER;
 * NOT_SUPPORTED (a log-linear fit). */
DIRMN_API dirmn_status dirmn_reg_get_precision(const dirmn_reg* reg, double* gamma, double* se);

/* The fitted model's alpha for new rows: covariates x (rows x p, strides as
 * dirmn_reg_fit's) give alpha_bv = exp(x_b . beta_v) (mean/precision:
 * phi softmax(x_b beta)_v) at
 * alpha[b * stride_row + v * stride_category]. Statuses: SUCCESS;
 * NULL_POINTER; INVALID_ARGUMENT (rows < 0, p other than the fit's, bad or
 * overlapping strides); INVALID_PARAMETER (non-finite x, naming row and
 * column); OVERFLOW (an alpha beyond the largest double, or 0, naming row
 * and category; extents); INVALID_ARGUMENT too for a fit with a
 * precision_design, whose new rows need their z
 * (dirmn_reg_predict_with_precision). Failure messages go to
 * dirmn_last_error(NULL). */
DIRMN_API dirmn_status dirmn_reg_predict(const dirmn_reg* reg, const double* x, int64_t rows,
                                         int64_t p, int64_t x_stride_row, int64_t x_stride_col,
                                         double* alpha, int64_t stride_row,
                                         int64_t stride_category);

/* dirmn_reg_predict for a mean/precision fit with a precision_design: new
 * rows' covariates x (rows x p) and z (rows x q, entry (b, j) at z[b *
 * z_stride_row + j * z_stride_col]; q the fit's precision_covariates) give
 * alpha_bv = exp(z_b . gamma) softmax(x_b beta)_v. A fit without one
 * takes z = NULL. Statuses: those of dirmn_reg_predict, with z checked as
 * x is (INVALID_ARGUMENT also for a q other than the fit's, z for a fit
 * without a precision_design, or a log-linear fit). */
DIRMN_API dirmn_status dirmn_reg_predict_with_precision(const dirmn_reg* reg, const double* x,
                                                        int64_t rows, int64_t p,
                                                        int64_t x_stride_row, int64_t x_stride_col,
                                                        const double* z, int64_t q,
                                                        int64_t z_stride_row, int64_t z_stride_col,
                                                        double* alpha, int64_t stride_row,
                                                        int64_t stride_category);

/* Many small regressions in one call: differential usage, DRIMSeq's
 * workflow. The table's columns are partitioned into groups (group[v] in 0
 * .. groups - 1, or -1 to leave column v out: genes and their transcripts).
 * Each group gets an independent regression (options->model; DRIMSeq's is
 * DIRMN_REG_MEAN_PRECISION, one precision per group) of its columns on the
 * full design x (rows x p, strides as dirmn_reg_fit's) and on the null
 * design, x's first p_null covariates, and a likelihood-ratio test: 2
 * (loglik_full - loglik_null) against chi-square with (p - p_null) times
 * the group's free coefficients per covariate (V_g - 1 for mean/precision,
 * V_g log-linear) degrees of freedom. A group's table holds its columns
 * with counts (under options->weights); its rows without counts take no
 * part. p-values are adjusted over the groups tested by Benjamini and
 * Hochberg (R's p.adjust(method = "BH")). DRIMSeq estimates the precision
 * once, on the full design, and holds it in the null fit: so does
 * options->hold_precision; by default each fit has its own
 * maximum-likelihood precision.
 *
 * A group that cannot be tested (fewer than two columns with counts, fewer
 * rows with counts than p, x not of full rank on its rows, an alpha beyond
 * the double range) gets that status in result->status and NaN results,
 * and the call still succeeds. Groups run on the context's threads, each
 * on one thread; results do not depend on the thread count. The host copy
 * of the table is used (the fits run on the CPU). */
typedef struct dirmn_reg_groups_result {
  size_t size;             /* sizeof(dirmn_reg_groups_result), set by the caller */
  double* loglik_full;     /* each array: `groups` entries, caller-allocated, or NULL */
  double* loglik_null;
  double* statistic;       /* the likelihood-ratio statistic */
  double* df;
  double* p_value;
  double* p_adjusted;      /* Benjamini-Hochberg over the groups tested */
  int32_t* status;         /* per group: DIRMN_SUCCESS where tested, else why not */
  int32_t* converged;      /* per group: 1 where both fits met the tolerance */
  int64_t* categories;     /* per group: its columns with counts */
  int64_t tested;          /* out: the groups tested */
} dirmn_reg_groups_result;

/* Tests every group (see above). The caller's arrays are written only on
 * SUCCESS. Statuses: SUCCESS; NULL_POINTER (counts, group, x, result);
 * INVALID_ARGUMENT (groups < 1, p < 2, p_null outside 1 .. p - 1, bad
 * strides or options, result->size; a mean/precision reference other than
 * 0: each group's first column with counts is its reference); INVALID_PARAMETER (a group entry
 * outside -1 .. groups - 1, naming the column; a non-finite x or weight);
 * DIMENSION_MISMATCH (rows); WRONG_CONTEXT; OUT_OF_MEMORY; CANCELLED;
 * NOT_SUPPORTED (counts wrapped from device memory). Working memory: rows x
 * (the columns in groups) doubles, and each running group's fits. */
DIRMN_API dirmn_status dirmn_reg_test_groups(dirmn_context* ctx, dirmn_counts* counts, const int64_t* group,
                                             int64_t groups, const double* x, int64_t rows, int64_t p,
                                             int64_t x_stride_row, int64_t x_stride_col, int64_t p_null,
                                             const dirmn_reg_options* options,
                                             dirmn_reg_groups_result* result);

/* ------------------------------------------------------------------------ */
/* Sampling and moments                                                      */
/* ------------------------------------------------------------------------ */

/* Draws a table of counts from the Dirichlet-multinomial: row b holds
 * sizes[b] counts over `cols` categories, drawn from DM(alpha, sizes[b]),
 * where alpha is one vector for every row (k = 1), row b's mixture
 * component's (k > 1: options->component, or drawn from
 * options->mixture_weights), or row b's own (dirmn_sample_rowwise).
 *
 * Exact at every alpha in [1e-306, 1e306] and size below 2^31, mixed tiny
 * and huge alphas in one vector included: never NaN, never a clamp. A row
 * takes one of two methods, whichever costs less (the draw is the same
 * distribution either way): gamma variates for the Dirichlet proportions,
 * drawn as logarithms (Marsaglia & Tsang 2000 with the alpha < 1 boost,
 * so that alpha = 1e-300 gives a finite log), then the multinomial by
 * conditional binomials (inversion for small means, Hormann's 1993 BTRS
 * otherwise), skipping the categories whose remaining probability is 0;
 * or, where the size is small against the categories, the Polya urn (each
 * ball from alpha by a cumulative table with probability A / (A + i), else
 * a copy of one of the i balls drawn so far).
 *
 * The draws are a function of (options->seed, row index, alpha, size)
 * alone (the row index counted from options->first_row): the same table for any thread count and (by the library's own
 * log and exp in every accept/reject test) on every backend. Row b's stream
 * is independent of the other rows', so a table of more rows drawn with the
 * same seed starts with the same rows.
 *
 * The result is a new counts object on the context (the storage options ask
 * for; AUTO picks sparse for mostly-zero tables), as dirmn_counts_create_*
 * makes it; dirmn_counts_copy_dense and dirmn_counts_copy_sparse copy it
 * out. The caller owns *counts.
 *
 * On a CUDA context the device draws the table (one thread per row, every
 * row twice: once to count its nonzeros, once to write them) and keeps it:
 * no counts pass through host memory. Its working memory beyond the table
 * is 16 bytes per category per row in flight (20 with urn rows), at most
 * 2 GiB or a quarter of the free device memory, plus 24 bytes per row. The
 * table gets a host copy only when a call needs its rows on the host (the
 * copies out, fits and mixtures on forms the device does not fit, per-row
 * derivatives, group tests); the first such call makes it. */

typedef struct dirmn_sample_options {
  size_t size;                    /* sizeof(dirmn_sample_options) */
  uint64_t seed;                  /* default 0 */
  const int64_t* component;       /* k > 1: rows entries, row b's component in 0 .. k - 1;
                                     NULL (the default): drawn per row from mixture_weights */
  const double* mixture_weights;  /* k > 1, component NULL: k weights (finite, >= 0, a
                                     positive sum; normalised here), NULL for equal weights */
  int64_t* component_out;         /* NULL, or rows entries: receives each row's component
                                     (an output, written on success) */
  dirmn_storage storage;          /* the counts object's storage request; AUTO by default */
  int64_t first_row;              /* >= 0, default 0: this call's row b is row first_row + b of
                                     the table the seed gives (its stream, and its component
                                     where drawn from mixture_weights), so that calls drawing
                                     blocks of rows -- the ranks of a split table (see
                                     Communicators) -- make, together, the rows of one call */
} dirmn_sample_options;

/* Fills the first `size` bytes of *options with defaults (seed 0, no
 * arrays, AUTO storage) and sets options->size to the bytes filled. NULL,
 * or a size below sizeof(size_t), is a no-op. Never fails. */
DIRMN_API void dirmn_sample_options_init_sized(dirmn_sample_options* options, size_t size);
#define dirmn_sample_options_init(options) \
  dirmn_sample_options_init_sized((options), sizeof(dirmn_sample_options))

/* Draws rows x cols counts (see above) under k parameter vectors, vector j's
 * entry v at params[j * params_stride_k + v * params_stride_v] (host memory,
 * read before return; alpha or log alpha as `param` says, alpha within
 * [1e-306, 1e306]). Row b's size is sizes[b * sizes_stride] (an integer in
 * 0 .. 2^31 - 1; sizes_stride 0: one size for every row). `options` may be
 * NULL for defaults. The caller owns every array and *counts. Statuses:
 * SUCCESS; NULL_POINTER (counts, params, sizes); INVALID_ARGUMENT (rows,
 * cols or k <= 0, strides, param, options, a component outside 0 .. k - 1
 * or a mixture weight, naming its row or index); INVALID_PARAMETER (an
 * alpha, naming vector and index); OVERFLOW (sizes, extents); OUT_OF_MEMORY;
 * CANCELLED (the interrupt callback, polled every few thousand rows);
 * DEVICE. A size outside its range is INVALID_ARGUMENT naming the row. */
DIRMN_API dirmn_status dirmn_sample(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                    int64_t cols, int64_t k, const double* params,
                                    int64_t params_stride_k, int64_t params_stride_v,
                                    dirmn_param param, const int64_t* sizes, int64_t sizes_stride,
                                    const dirmn_sample_options* options);

/* The same with one parameter vector per row (a fitted regression's
 * alpha): row b's entry v at params[b * params_stride_row + v *
 * params_stride_v]. options->component, mixture_weights and component_out
 * must be NULL. INVALID_PARAMETER names row and column. Working memory:
 * the validated alphas, rows x cols doubles (as much as `params` itself),
 * beside the table drawn. Otherwise as dirmn_sample. */
DIRMN_API dirmn_status dirmn_sample_rowwise(dirmn_context* ctx, dirmn_counts** counts,
                                            int64_t rows, int64_t cols, const double* params,
                                            int64_t params_stride_row, int64_t params_stride_v,
                                            dirmn_param param, const int64_t* sizes,
                                            int64_t sizes_stride,
                                            const dirmn_sample_options* options);

/* The moments of DM(alpha, size) over `cols` categories (A = sum alpha,
 * p = alpha / A): mean[v] = size p_v; variance[v] = size p_v (1 - p_v)
 * (size + A) / (1 + A); covariance[u * ld + v] = -size p_u p_v (size + A) /
 * (1 + A) for u != v and variance[v] on the diagonal (a cols x cols
 * row-major block, ld >= cols). Any output may be NULL. `size` is any
 * finite value >= 0 (not only integers: the formulas are polynomial in
 * it). Statuses: SUCCESS; NULL_POINTER (params); INVALID_ARGUMENT (cols
 * <= 0, param, ld < cols with a covariance, size); INVALID_PARAMETER (an
 * alpha, naming its index); OVERFLOW (cols x ld). */
DIRMN_API dirmn_status dirmn_moments(dirmn_context* ctx, int64_t cols, const double* params,
                                     int64_t params_stride, dirmn_param param, double size,
                                     double* mean, double* variance, double* covariance,
                                     int64_t ld);

/* ------------------------------------------------------------------------ */
/* Group tests                                                               */
/* ------------------------------------------------------------------------ */

/* Does one composition fit every group of rows? The likelihood-ratio test
 * of one DM for all rows (a dirmn_fit of the whole table) against one DM
 * per group (a fit of each group's rows), HMP's Xdc test on the full
 * likelihood: statistic 2 (sum_g loglik_g - loglik_0), referred to
 * chi-square with (G - 1) P degrees of freedom (P: the columns with
 * counts), and, with bootstrap > 0, to its parametric bootstrap: that many
 * tables drawn from the fitted null DM with each row's observed total,
 * each refitted under both hypotheses (p-value (1 + #{T* >= T}) / (1 + B),
 * Davison & Hinkley 1997, eq. 4.11). */

/* The statistic the groups are compared by. */
typedef enum dirmn_group_statistic DIRMN_ENUM_INT {
  DIRMN_GROUP_LRT = 0,    /* the likelihood ratio above: chi-square on (G - 1) P df */
  DIRMN_GROUP_XMCUPO = 1  /* HMP's Xmcupo (La Rosa et al. 2012): the groups' pooled
                             proportions pi_g against their precision-weighted mean pi_0,
                             sum_g sum_v (pi_gv - pi_0v)^2 / (pi_0v c_g), c_g = (theta_g
                             (sum N^2 - sum N) + sum N) / (sum N)^2 from Weir's
                             method-of-moments theta_g over group g's rows with counts (0 for
                             one row); chi-square on (G - 1)(P - 1) df. No fit enters it, but
                             the result's log-likelihoods are still the fits' */,
  DIRMN_GROUP_XOC = 2     /* HMP's Xoc (Xoc.sevsample): do the groups share one
                             overdispersion theta = 1 / (1 + A)? The likelihood ratio of one
                             DM per group of one shared precision A (each group's proportions
                             free) against one per group; chi-square on G - 1 df. loglik_null
                             is then the shared-precision fit's, and the bootstrap's tables are
                             drawn from it (each row from its group's DM) */
} dirmn_group_statistic;

typedef struct dirmn_group_test_options {
  size_t size;           /* sizeof(dirmn_group_test_options) */
  int64_t bootstrap;     /* B: bootstrap tables (0, the default: the chi-square p-value alone) */
  uint64_t seed;         /* the bootstrap tables' seed (dirmn_sample's); default 0 */
  double tolerance;      /* every fit's, as dirmn_fit_options; default 1e-10 */
  int max_iterations;    /* every fit's; default 1000 */
  dirmn_group_statistic statistic; /* default DIRMN_GROUP_LRT; the bootstrap's tables are
                                      drawn from the null's fit (the one DM's; for Xoc the
                                      shared-precision fit's) and tested by the statistic */
} dirmn_group_test_options;

/* Fills the first `size` bytes of *options with defaults and sets
 * options->size to the bytes filled. NULL, or a size below sizeof(size_t),
 * is a no-op. Never fails. */
DIRMN_API void dirmn_group_test_options_init_sized(dirmn_group_test_options* options, size_t size);
#define dirmn_group_test_options_init(options) \
  dirmn_group_test_options_init_sized((options), sizeof(dirmn_group_test_options))

typedef struct dirmn_group_test_result {
  size_t size;              /* sizeof(dirmn_group_test_result), set by the caller */
  double statistic;         /* 2 (sum_g loglik_g - loglik_0), >= 0 */
  double df;                /* (G - 1) P */
  double p_value;           /* P(chi2_df >= statistic) */
  double p_value_bootstrap; /* (1 + #{T* >= T}) / (1 + B); 1 with bootstrap 0 */
  int64_t bootstrap;        /* B as run */
  double loglik_null;       /* the log pmf at the one DM */
  double loglik_groups;     /* the sum of the groups' log pmfs at their DMs */
  int64_t groups;           /* G: the groups with counts */
  int64_t categories;       /* P: the columns with counts */
  int converged;            /* 1 when every fit of the observed table converged */
} dirmn_group_test_result;

/* Tests (see above) the rows of `counts` in `groups` groups, row b in group
 * group[b] (0 .. groups - 1, or -1: left out). Groups without counts are
 * left out of G. A group whose rows show no overdispersion is fitted at the
 * multinomial limit. The bootstrap's tables and fits run on the context's
 * host threads, each table on one; the result does not depend on their
 * number. The table's host copy is read (a CUDA context's counts wrapped
 * from device memory: NOT_SUPPORTED). Statuses: SUCCESS; NULL_POINTER
 * (counts, group, result); INVALID_ARGUMENT (groups < 2, options, fewer
 * than two groups with counts, result->size); INVALID_PARAMETER (a group
 * entry outside -1 .. groups - 1, naming its row); WRONG_CONTEXT;
 * OUT_OF_MEMORY; CANCELLED; NOT_SUPPORTED. */
DIRMN_API dirmn_status dirmn_test_groups(dirmn_context* ctx, dirmn_counts* counts,
                                         const int64_t* group, int64_t groups,
                                         const dirmn_group_test_options* options,
                                         dirmn_group_test_result* result);

/* Do the rows share a given composition? HMP's Xsc (La Rosa et al. 2012,
 * PLoS ONE 7:e52078; HMP's Xsc.onesample): the rows' pooled proportions pi
 * (column sums over the grand total) against `proportions` (pi0), a Wald
 * statistic in the method-of-moments covariance of pi, c (diag(pi0) - pi0
 * pi0^T) with c = (theta (sum N^2 - sum N) + sum N) / (sum N)^2 (theta:
 * Weir's method-of-moments overdispersion of the rows, 0 for one row; N: a
 * row's total), through that matrix's Moore-Penrose inverse: sum over
 * pi0_v > 0 of (pi_v - pi0_v)^2 / pi0_v / c, referred to chi-square on
 * (categories with pi0_v > 0) - 1 df. A column with counts where pi0_v = 0
 * makes the statistic +Inf and the p-value 0 (HMP's numerical inverse
 * ignores that column). Rows without counts are left out (HMP counts them
 * in Weir's theta). No fit enters it. */

typedef struct dirmn_proportion_test_result {
  size_t size;          /* sizeof(dirmn_proportion_test_result), set by the caller */
  double statistic;     /* Xsc, >= 0 (+Inf: see above) */
  double df;            /* categories - 1 */
  double p_value;       /* P(chi2_df >= statistic) */
  double theta;         /* Weir's method-of-moments overdispersion of the rows */
  int64_t rows;         /* the rows with counts */
  int64_t categories;   /* the columns with pi0_v > 0 */
} dirmn_proportion_test_result;

/* Tests (see above) the rows of `counts` against pi0, entry v at
 * proportions[v * proportions_stride] (cols entries, each finite and >= 0,
 * at least two positive, summing to 1 within 1e-6; they are divided by
 * their sum). The caller owns both arrays. The table's host copy is read
 * (counts wrapped from device memory: NOT_SUPPORTED). Statuses: SUCCESS;
 * NULL_POINTER (counts, proportions, result); INVALID_ARGUMENT
 * (proportions_stride < 1, fewer than two positive proportions, their sum,
 * no row with counts, result->size); INVALID_PARAMETER (a proportion
 * negative or not finite, naming its index and value); WRONG_CONTEXT;
 * OVERFLOW; OUT_OF_MEMORY; CANCELLED; NOT_SUPPORTED. */
DIRMN_API dirmn_status dirmn_test_proportions(dirmn_context* ctx, dirmn_counts* counts,
                                              const double* proportions,
                                              int64_t proportions_stride,
                                              dirmn_proportion_test_result* result);

/* The power of dirmn_test_groups's chi-square test by simulation (HMP's
 * MC.Xdc.statistics for the full-likelihood test): `tables` tables drawn
 * from one DM per group -- group g's alpha at params[g * params_stride_k + v
 * * params_stride_v], its rows_per_group[g] rows of the sizes listed in
 * `sizes` (all groups' rows in group order, sum of rows_per_group entries)
 * -- each tested at options->level; power = the share rejected, with its
 * binomial standard error. Equal alphas give the test's size. Tables run on
 * the context's host threads, each on one; table t is drawn from stream t
 * of options->seed, so the result does not depend on the thread count. A
 * table in which fewer than two groups have counts counts as not rejected. */

typedef struct dirmn_power_options {
  size_t size;         /* sizeof(dirmn_power_options) */
  int64_t tables;      /* tables simulated; default 1000 */
  double level;        /* the test's level, in (0, 1); default 0.05 */
  uint64_t seed;       /* default 0 */
  double tolerance;    /* every fit's, as dirmn_fit_options; default 1e-10 */
  int max_iterations;  /* every fit's; default 1000 */
  dirmn_group_statistic statistic; /* the test simulated; default DIRMN_GROUP_LRT */
} dirmn_power_options;

/* Fills the first `size` bytes of *options with defaults and sets
 * options->size to the bytes filled. NULL, or a size below sizeof(size_t),
 * is a no-op. Never fails. */
DIRMN_API void dirmn_power_options_init_sized(dirmn_power_options* options, size_t size);
#define dirmn_power_options_init(options) \
  dirmn_power_options_init_sized((options), sizeof(dirmn_power_options))

typedef struct dirmn_power_result {
  size_t size;           /* sizeof(dirmn_power_result), set by the caller */
  double power;          /* rejected / tables */
  double std_error;      /* sqrt(power (1 - power) / tables) */
  int64_t tables;
  int64_t rejected;
  double mean_statistic; /* the likelihood-ratio statistic's mean over the tables */
} dirmn_power_result;

/* Simulates (see above) `groups` groups over `cols` categories. The caller
 * owns every array. Statuses: SUCCESS; NULL_POINTER (params, rows_per_group,
 * sizes, result); INVALID_ARGUMENT (groups < 2, cols < 1, strides, param,
 * options -- tables < 1, level outside (0, 1) --, a negative rows_per_group
 * entry or fewer than two groups with rows, naming the group, a size outside
 * 0 .. 2^31 - 1, naming the row, result->size); INVALID_PARAMETER (an alpha,
 * naming group and index; the sampler's range as dirmn_sample's); OVERFLOW;
 * OUT_OF_MEMORY; CANCELLED. */
DIRMN_API dirmn_status dirmn_power_groups(dirmn_context* ctx, int64_t groups, int64_t cols,
                                          const double* params, int64_t params_stride_k,
                                          int64_t params_stride_v, dirmn_param param,
                                          const int64_t* rows_per_group, const int64_t* sizes,
                                          const dirmn_power_options* options,
                                          dirmn_power_result* result);

/* The power of dirmn_test_proportions's chi-square test by simulation
 * (HMP's MC.Xsc.statistics): `tables` tables of `rows` rows, row b of
 * sizes[b], drawn from DM(alpha) -- alpha_v at params[v * params_stride],
 * `cols` entries -- each tested against `proportions` (as
 * dirmn_test_proportions takes them) at options->level; power = the share
 * rejected, with its binomial standard error; mean_statistic is Xsc's mean
 * (+Inf where a table has counts in a column whose proportion is 0). alpha
 * proportional to the proportions gives the test's size. Table t is drawn
 * from stream t of options->seed, as dirmn_power_groups draws, so the
 * result does not depend on the thread count; a table without counts
 * counts as not rejected. options->statistic, tolerance and max_iterations
 * are checked as for dirmn_power_groups but do not apply (no fit enters
 * the test). The caller owns every array. Statuses: SUCCESS; NULL_POINTER
 * (params, sizes, proportions, result); INVALID_ARGUMENT (cols < 2, rows
 * outside 1 .. 2^40, strides, param, options, a size outside 0 .. 2^31 -
 * 1, naming the row, the proportions as dirmn_test_proportions says,
 * result->size); INVALID_PARAMETER (an alpha, naming its index; a
 * proportion); OUT_OF_MEMORY; CANCELLED. */
DIRMN_API dirmn_status dirmn_power_proportions(dirmn_context* ctx, int64_t cols,
                                               const double* params, int64_t params_stride,
                                               dirmn_param param, int64_t rows,
                                               const int64_t* sizes, const double* proportions,
                                               int64_t proportions_stride,
                                               const dirmn_power_options* options,
                                               dirmn_power_result* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DIRMN_H */
