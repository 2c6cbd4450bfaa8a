#' dirmn: Fast Dirichlet-Multinomial Likelihoods for Large Count Tables
#'
#' R bindings to libdirmn, a C library computing Dirichlet-multinomial (DM)
#' log-likelihoods for count tables (samples by taxa, plots by species,
#' documents by words) on CPUs and NVIDIA GPUs.
#'
#' * [ddirmn()]: the DM density of every row of a table.
#' * [dirmn_counts()]: validate and upload a table once, for many calls.
#' * [dirmn_backends()]: the backends and devices available.
#' * [dirmn_error]: the conditions raised on failure.
#'
#' @section Example data:
#' The package ships `extdata/bci.csv`, tree counts of 225 species in 50
#' one-hectare plots of Barro Colorado Island (rows are plots, the first
#' column holds row names). Source: R package vegan (GPL-2), data `BCI`;
#' Condit et al. 2002, Science 295:666. Read it with
#' `read.csv(system.file("extdata", "bci.csv", package = "dirmn"), row.names = 1)`.
#'
#' @section Options:
#' `dirmn.backend` (default `"auto"`) and `dirmn.device` (default 0) choose
#' where tables that were not prepared with [dirmn_counts()] are evaluated.
#'
#' @keywords internal
#' @useDynLib dirmn, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @importFrom methods is as
#' @importClassesFrom Matrix dgCMatrix dgRMatrix
"_PACKAGE"
