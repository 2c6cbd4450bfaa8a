# Count tables held in the objects of other packages (issue #25, item 13):
# phyloseq, SummarizedExperiment (and SingleCellExperiment, which extends
# it) and BIOM (biomformat), all optional (Suggests), and the orientation of
# plain tables (`samples`). Each is brought to a table with one row per
# sample, which the rest of the package reads (R/counts.R).

# `x` as a table with samples in rows. `samples` is the caller's argument
# ("rows" or "columns"), `samples_missing` whether it was left out; `assay`
# the SummarizedExperiment assay (NULL: "counts", else the first).
.counts_input <- function(x, samples, assay, call, samples_missing = TRUE) {
  samples <- .match_choice(samples, c("rows", "columns"), "samples", call)
  source <- .object_source(x)
  if (is.null(source)) {
    if (!is.null(assay)) {
      .stop("invalid_argument", sprintf(
        "assay applies to a SummarizedExperiment, not to an object of class %s",
        paste(class(x), collapse = "/")), call)
    }
    if (samples == "columns") {
      if (inherits(x, "dirmn_counts")) {
        .stop("invalid_argument", paste(
          "samples = \"columns\" applies to the data, not to a prepared table (its rows",
          "are its samples): prepare it with dirmn_counts(data, samples = \"columns\")"), call)
      }
      x <- .transpose_table(x, call)
    }
    return(x)
  }
  if (!samples_missing) {
    .stop("invalid_argument", sprintf(paste(
      "samples applies to plain tables; a %s says where its samples are",
      "(leave samples out)"), source), call)
  }
  if (!is.null(assay) && source != "SummarizedExperiment") {
    .stop("invalid_argument", sprintf("assay applies to a SummarizedExperiment, not to a %s",
                                      source), call)
  }
  switch(source,
    phyloseq = .from_phyloseq(x, call),
    SummarizedExperiment = .from_summarized_experiment(x, assay, call),
    biom = .from_biom(x, call),
    biom_file = {
      # read before biom_data() dispatches on it (an error there would be
      # wrapped in S4's words)
      biom <- .read_biom_file(x, call)
      .from_biom(biom, call)
    }
  )
}

# Which kind of foreign object x is, or NULL for a plain table.
.object_source <- function(x) {
  # phyloseq's and Bioconductor's classes are S4: a plain matrix skips
  # methods::is(), which costs more than fitting a small table.
  if (isS4(x)) {
    if (methods::is(x, "phyloseq") || methods::is(x, "otu_table")) return("phyloseq")
    if (methods::is(x, "SummarizedExperiment")) return("SummarizedExperiment")
  }
  if (inherits(x, "biom")) return("biom")
  if (is.character(x) && length(x) == 1L && !is.na(x)) return("biom_file")
  NULL
}

.need_package <- function(package, what, call) {
  if (!requireNamespace(package, quietly = TRUE)) {
    .stop("invalid_argument", sprintf(
      "reading %s needs the %s package, which is not installed", what, package), call)
  }
}

.from_phyloseq <- function(x, call) {
  .need_package("phyloseq", "a phyloseq object", call)
  otu <- if (methods::is(x, "otu_table")) x else phyloseq::otu_table(x)
  # an otu_table is a matrix with its orientation in a slot
  m <- methods::as(otu, "matrix")
  if (phyloseq::taxa_are_rows(otu)) t(m) else m
}

.from_summarized_experiment <- function(x, assay, call) {
  .need_package("SummarizedExperiment", "a SummarizedExperiment", call)
  names_ <- SummarizedExperiment::assayNames(x)
  n <- length(SummarizedExperiment::assays(x))
  if (n == 0L) .stop("invalid_argument", "the SummarizedExperiment has no assay", call)
  if (is.null(assay)) {
    assay <- if ("counts" %in% names_) "counts" else 1L
  } else if (!((is.character(assay) && length(assay) == 1L && !is.na(assay) &&
                assay %in% names_) ||
               (is.numeric(assay) && length(assay) == 1L && !is.na(assay) &&
                assay == trunc(assay) && assay >= 1 && assay <= n))) {
    .stop("invalid_argument", sprintf(
      "assay must name one of the SummarizedExperiment's assays (%s) or be a number from 1 to %d",
      if (is.null(names_)) "unnamed" else paste0("\"", names_, "\"", collapse = ", "), n), call)
  }
  # features x samples: samples become rows
  .transpose_table(SummarizedExperiment::assay(x, assay, withDimnames = TRUE), call)
}

.read_biom_file <- function(path, call) {
  if (!file.exists(path)) {
    .stop("invalid_argument", sprintf(paste(
      "counts given as a character string are read as the path of a BIOM file;",
      "there is no file %s"), path), call)
  }
  .need_package("biomformat", "a BIOM file", call)
  biomformat::read_biom(path)
}

.from_biom <- function(x, call) {
  .need_package("biomformat", "a biom object", call)
  # observations x samples
  .transpose_table(biomformat::biom_data(x), call)
}

# The transpose of a table with samples in columns. A dgCMatrix becomes the
# dgRMatrix of the same slots (no entry copied), a dgRMatrix the dgCMatrix;
# other sparse matrices go through dgCMatrix; dense tables through t().
.transpose_table <- function(x, call) {
  if (methods::is(x, "sparseMatrix") && !methods::is(x, "dgCMatrix") &&
      !methods::is(x, "dgRMatrix")) {
    x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
  }
  if (methods::is(x, "dgCMatrix")) {
    return(methods::new("dgRMatrix", p = x@p, j = x@i, x = x@x, Dim = rev(x@Dim),
                        Dimnames = rev(.dimnames2(x@Dimnames))))
  }
  if (methods::is(x, "dgRMatrix")) {
    return(methods::new("dgCMatrix", p = x@p, i = x@j, x = x@x, Dim = rev(x@Dim),
                        Dimnames = rev(.dimnames2(x@Dimnames))))
  }
  if (methods::is(x, "Matrix")) x <- as.matrix(x)
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x)) || length(dim(x)) != 2L) {
    .stop("invalid_argument",
          "samples = \"columns\" needs a table with two dimensions (a matrix or data frame)", call)
  }
  t(x)
}
