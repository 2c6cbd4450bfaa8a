#' Prepare a count table once for many likelihood evaluations
#'
#' Validates a table of counts and copies it into libdirmn's compact form on
#' the chosen backend, so that later calls (for example [ddirmn()] under many
#' values of alpha) do not check or transfer the table again. Every dirmn
#' function accepts the result in place of the table.
#'
#' Counts must be non-negative whole numbers; `NA`, `NaN`, infinite, negative
#' and fractional values are errors that name the offending row and column.
#' A logical table, dense or sparse, holds 0/1 counts (`FALSE` 0, `TRUE` 1;
#' `NA` is an error naming its row and column). \pkg{bit64}'s `integer64` is
#' not supported: convert it with [as.integer()], or [as.double()] (exact
#' below 2^53, as libdirmn's counts must be).
#' Dense matrices are read in place (column-major, through strides), and
#' sparse matrices are passed in their compressed form without ever being
#' made dense.
#'
#' The object holds library memory (on the GPU for the CUDA backend). It is
#' freed when the object is garbage collected, or at once by `close()`;
#' closing twice is harmless. From a handler of a fit's progress messages
#' (`verbose = TRUE`), where a computation on the backend runs, a table
#' closed or garbage collected is freed when that computation returns; the
#' table the fit reads cannot be closed there. Prepared tables cannot be saved: an object
#' restored with [readRDS()] or [load()] gives an error when used, and must be
#' made again from the data.
#'
#' @param x A table of counts with one row per observation (sample, plot,
#'   document) and one column per category: an integer, double or logical
#'   (0/1) matrix, a numeric or logical vector, 1-d array or one-way
#'   [table()], or a \pkg{Matrix} `sparseVector` (each a single
#'   observation, its names the category names), a numeric or logical data
#'   frame, or a matrix from the \pkg{Matrix} package (`dgCMatrix` and
#'   `dgRMatrix` are used as they are; other sparse classes are converted to
#'   `dgCMatrix`, dense ones such as `dgeMatrix` or `lgeMatrix` to base
#'   matrices). Also the objects that hold count tables in Bioconductor (see
#'   the section below).
#' @param samples Where the samples (observations) of a plain table are:
#'   `"rows"` (the default: one row per sample, one column per category) or
#'   `"columns"` (a features x samples table, as genes x cells or OTUs x
#'   samples tables are usually kept; it is transposed, a sparse
#'   `dgCMatrix` without copying its entries). dirmn never guesses the
#'   orientation of a plain matrix. For \pkg{phyloseq},
#'   \pkg{SummarizedExperiment} and BIOM data the object says where its
#'   samples are, and `samples` must not be given.
#' @param assay For a `SummarizedExperiment` (or `SingleCellExperiment`):
#'   the assay to use, by name or number; `NULL` (the default) takes the
#'   assay named `"counts"` where there is one, else the first.
#'
#' @section Bioconductor objects:
#' These packages are optional (Suggests); an object of theirs is read
#' through them when they are installed.
#' * A \pkg{phyloseq} object, or its `otu_table`: the OTU table, with its
#'   orientation from `taxa_are_rows()` (taxa become the columns).
#' * A `SummarizedExperiment` or `SingleCellExperiment`: the assay chosen
#'   by `assay`; features are its rows and samples (cells) its columns, so
#'   it is transposed (a `dgCMatrix` assay stays sparse).
#' * A BIOM table: an object of class `biom` from \pkg{biomformat}, or the
#'   path of a BIOM file (a single character string), read with
#'   `biomformat::read_biom()`; observations (OTUs) are its rows and
#'   samples its columns, so it is transposed.
#' @param backend `"auto"` (a CUDA device where libdirmn was built with CUDA
#'   and the device exists, else the CPU), `"cpu"` or `"cuda"`.
#' @param device The CUDA device index (0-based); ignored for the CPU.
#'
#' @return An object of class `dirmn_counts`. [dim()], [nrow()], [ncol()],
#'   [dimnames()] and [print()] work on it; on a CUDA device [print()] also
#'   names the steps that run on the host copy of the table (those the
#'   device lacks for its form).
#' @seealso [ddirmn()], [dirmn_backends()]
#' @export
#' @examples
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' counts <- dirmn_counts(bci, backend = "cpu")
#' counts
#' dim(counts)
#' ddirmn(counts, alpha = rep(0.5, ncol(counts)), log = TRUE)[1:5]
#' close(counts)
dirmn_counts <- function(x, backend = "auto", device = 0L, samples = c("rows", "columns"),
                         assay = NULL) {
  call <- sys.call()
  x <- .counts_input(x, samples, assay, call, missing(samples))
  if (inherits(x, "dirmn_counts")) {
    backend <- .check_backend(backend, call)
    if (backend != "auto" && !identical(backend, x$backend)) {
      .stop("invalid_argument", sprintf(
        "x is already prepared on the %s backend; prepare the original data again for %s",
        x$backend, backend), call)
    }
    return(x)
  }
  .make_counts(x, backend, device, call)
}

# `table`: .as_table(x, call, arg) where the caller has made it already.
.make_counts <- function(x, backend, device, call, arg = "x", backend_option = FALSE,
                         device_option = FALSE, table = NULL) {
  if (is.null(table)) table <- .as_table(x, call, arg)
  ctx <- .context(backend, device, call, backend_option, device_option)
  ptr <- cpp_counts_create(ctx$ptr, table$data, table$kind)
  if (.failed(ptr)) .raise(ptr, call, table = table)
  structure(
    list(ptr = ptr, dim = table$dim, dimnames = table$dimnames,
         backend = ctx$backend, device = ctx$device),
    class = "dirmn_counts"
  )
}

# The prepared table behind `x`, for functions that take a table in any
# form: x itself when it is prepared, else a table prepared on `backend`
# (device getOption("dirmn.device", 0)) that the caller should close once
# done (`temporary`), so that its memory goes at once rather than at the
# next garbage collection. `backend_option`: backend is
# getOption("dirmn.backend") (the caller's default, left missing).
.prepare <- function(x, backend, call, arg = "x", backend_option = FALSE, table = NULL) {
  if (inherits(x, "dirmn_counts")) return(list(counts = x, temporary = FALSE))
  list(counts = .make_counts(x, backend, getOption("dirmn.device", 0L), call, arg,
                             backend_option = backend_option, device_option = TRUE,
                             table = table),
       temporary = TRUE)
}

.release <- function(prepared) {
  if (prepared$temporary) cpp_counts_close(prepared$counts$ptr)
  invisible(NULL)
}

# Table kinds understood by the C++ layer.
.kind <- c(dense = 0L, csc = 1L, csr = 2L)

# Brings a user's table into a form the C++ layer reads without copying:
# integer/double/logical vector or matrix, dgCMatrix or dgRMatrix. Only
# inputs that have no such form (other sparse classes, sparse vectors, data
# frames, dense Matrix classes) are converted. Logical tables, dense or
# sparse, are 0/1 counts (FALSE 0, TRUE 1, NA an error naming its cell). A
# vector, 1-d array (a one-way table()) or sparse vector is a single
# observation, its names the category names. `arg` is the name of the
# argument, and `converted` tells a sparse matrix made from the user's (for
# the wording of messages about its slots).
.as_table <- function(x, call, arg = "x") {
  .refuse_integer64(x, "counts", call)
  if (is.array(x) && length(dim(x)) == 1L) {
    # a 1-d array: its data as they are (the C++ layer reads them as a
    # vector), its dimnames as names
    .check_count_type(x, call)
    return(list(kind = .kind[["dense"]], data = x, dim = c(1L, length(x)),
                dimnames = list(NULL, dimnames(x)[[1L]]), arg = arg))
  }
  if (is.matrix(x) || (is.vector(x) && is.atomic(x))) {
    .check_count_type(x, call)
    if (is.matrix(x)) {
      return(list(kind = .kind[["dense"]], data = x, dim = dim(x),
                  dimnames = .dimnames2(dimnames(x)), arg = arg))
    }
    return(list(kind = .kind[["dense"]], data = x, dim = c(1L, length(x)),
                dimnames = list(NULL, names(x)), arg = arg))
  }
  if (methods::is(x, "dgCMatrix")) {
    return(list(kind = .kind[["csc"]], data = x, dim = x@Dim,
                dimnames = .dimnames2(x@Dimnames), arg = arg))
  }
  if (methods::is(x, "dgRMatrix")) {
    return(list(kind = .kind[["csr"]], data = x, dim = x@Dim,
                dimnames = .dimnames2(x@Dimnames), arg = arg))
  }
  if (methods::is(x, "sparseVector")) return(.sparse_vector_table(x, call, arg))
  if (methods::is(x, "sparseMatrix")) {
    y <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"),
                     "dMatrix")
    table <- .as_table(y, call, arg)
    table$converted <- TRUE
    return(table)
  }
  if (methods::is(x, "Matrix")) return(.as_table(as.matrix(x), call, arg))
  if (is.data.frame(x)) {
    numeric_cols <- vapply(x, function(col) (is.numeric(col) || is.logical(col)) &&
                             !is.object(col), TRUE)
    if (!all(numeric_cols)) {
      .stop("invalid_argument", sprintf(
        "every column of a data frame of counts must be numeric or logical; column %s is not",
        names(x)[which(!numeric_cols)[1L]]), call)
    }
    return(.as_table(as.matrix(x), call, arg))
  }
  .stop("invalid_argument", sprintf(paste(
    "counts must be a numeric matrix or vector, a numeric data frame, a sparse",
    "Matrix or a dirmn_counts object, not an object of class %s"),
    paste(class(x), collapse = "/")), call)
}

# bit64's integer64 keeps int64 bits in a double vector: read as doubles
# they would be other numbers (5 would be 2.5e-323), so no argument takes it.
.refuse_integer64 <- function(x, what, call) {
  if (inherits(x, "integer64")) {
    .stop(if (what == "counts") "invalid_argument" else "invalid_parameter", sprintf(paste(
      "%s of class integer64 (bit64) are not supported; convert them with as.integer(),",
      "or as.double() (exact below 2^53)"), what), call)
  }
}

# Dense counts are integer, double or logical (0/1) vectors and matrices.
.check_count_type <- function(x, call) {
  if (!is.integer(x) && !is.double(x) && !is.logical(x)) {
    .stop("invalid_argument", sprintf(
      "counts must be integer, double or logical, not %s", typeof(x)), call)
  }
}

# A Matrix sparseVector as a 1 x length sparse row (dgRMatrix), never dense.
# Its i slot holds 1-based positions (integer, or double for long vectors).
.sparse_vector_table <- function(x, call, arg) {
  len <- x@length
  if (len > .Machine$integer.max) {
    .stop("invalid_argument", sprintf(
      "a sparse vector of counts can have at most %d elements, not %s",
      .Machine$integer.max, format(len, scientific = FALSE)), call)
  }
  # a pattern vector (nsparseVector) has no values: its entries are 1
  values <- if (methods::.hasSlot(x, "x")) x@x else rep(1, length(x@i))
  if (!is.numeric(values) && !is.logical(values)) {
    .stop("invalid_argument", sprintf(
      "counts must be integer, double or logical, not %s", typeof(values)), call)
  }
  values <- as.double(values)
  # R's NA in a logical vector is NA in the double one: the C++ layer reports it
  y <- methods::new("dgRMatrix", p = c(0L, length(values)), j = as.integer(x@i) - 1L,
                    x = values, Dim = c(1L, as.integer(len)))
  table <- .as_table(y, call, arg)
  table$converted <- TRUE
  table
}

.dimnames2 <- function(dn) if (is.null(dn)) list(NULL, NULL) else dn

#' @export
dim.dirmn_counts <- function(x) x$dim

#' @export
dimnames.dirmn_counts <- function(x) {
  if (is.null(x$dimnames[[1L]]) && is.null(x$dimnames[[2L]])) NULL else x$dimnames
}

#' @export
format.dirmn_counts <- function(x, ...) {
  info <- cpp_counts_info(x$ptr)
  if (.failed(info)) {
    state <- if (grepl("closed", info$message)) "closed" else "not usable (restored from disk)"
    return(sprintf("<dirmn_counts> %d x %d table, %s", x$dim[1L], x$dim[2L], state))
  }
  cells <- info$rows * info$cols
  where <- if (info$backend == "cuda") sprintf("CUDA device %d", info$device) else "the CPU"
  out <- c(
    sprintf("<dirmn_counts> %s x %s table, %s nonzero (%.1f%%), counts up to %s, total %s",
            .num(info$rows), .num(info$cols), .num(info$nnz), 100 * info$nnz / cells,
            .num(info$max_count), .num(info$total)),
    sprintf("  stored %s with %d-bit %s on %s", info$storage, info$value_bits,
            if (info$real_valued) "real values" else "counts", where)
  )
  # On a GPU, the steps the device lacks for this table run on a host copy.
  if (info$backend == "cuda" && length(info$host_steps) > 0L) {
    out <- c(out, sprintf("  on the host: %s", paste(info$host_steps, collapse = ", ")))
  }
  if (length(info$unavailable_steps) > 0L) {
    out <- c(out, sprintf("  unavailable: %s", paste(info$unavailable_steps, collapse = ", ")))
  }
  comm <- .communicator_of(x)
  if (!is.null(comm)) {
    out <- c(out, sprintf("  rank %d's rows of a table split over %d rank%s (dirmn_communicator)",
                          comm$rank, comm$ranks, if (comm$ranks == 1L) "" else "s"))
  }
  out
}

.num <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)

#' @export
print.dirmn_counts <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @rdname dirmn_counts
#' @param con A `dirmn_counts` object.
#' @param ... Unused.
#' @export
close.dirmn_counts <- function(con, ...) {
  res <- cpp_counts_close(con$ptr)
  if (.failed(res)) .raise(res, sys.call())
  invisible(NULL)
}
