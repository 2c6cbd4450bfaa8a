#' dirmn: Fast Dirichlet-Multinomial Likelihoods for Large Count Tables
#'
#' R bindings to libdirmn, a C library computing Dirichlet-multinomial (DM)
#' log-likelihoods for count tables (samples by taxa, plots by species,
#' documents by words) on CPUs and NVIDIA GPUs.
#'
#' * [ddirmn()]: the DM density of every row of a table.
#' * [dirmn_loglik_sum()]: the weighted sum of the rows' log-likelihoods,
#'   with gradient and Hessian.
#' * [dirmn_fit()]: the maximum-likelihood alpha of a table.
#' * [dirmn_mixture()]: DM mixtures (clustering of the rows), with the number
#'   of components chosen by BIC, AIC or a Laplace approximation.
#' * [dirmn_reg()]: DM regression of the rows' composition on covariates
#'   (alpha = exp(X beta)), with standard errors, Wald and likelihood-ratio
#'   tests and predictions.
#' * [dirmn_reg_groups()]: per-group likelihood-ratio tests of regressions
#'   (differential usage within groups of columns, DRIMSeq's workflow).
#' * [dirmn_counts()]: validate and upload a table once, for many calls.
#' * [dirmn_communicator()]: a table split by rows over several processes
#'   (MPI, sockets), fitted as one.
#' * [dirmn_backends()]: the backends and devices available.
#' * [dirmn_error]: the conditions raised on failure.
#'
#' @section Example data:
#' The package ships two real tables (rows are samples, the first column
#' holds row names):
#' * `extdata/bci.csv`, tree counts of 225 species in 50 one-hectare plots of
#'   Barro Colorado Island. Source: R package vegan (GPL-2), data `BCI`;
#'   Condit et al. 2002, Science 295:666.
#' * `extdata/mite.csv`, counts of 35 oribatid mite species in 70 soil cores.
#'   Source: R package vegan (GPL-2), data `mite`; Borcard & Legendre 1994,
#'   Environmental and Ecological Statistics 1:37.
#'
#' Read them with, for example,
#' `read.csv(system.file("extdata", "mite.csv", package = "dirmn"), row.names = 1)`.
#'
#' @section Options:
#' `dirmn.backend` (default `"auto"`) and `dirmn.device` (default 0) choose
#' where tables that were not prepared with [dirmn_counts()] are evaluated.
#'
#' @keywords internal
#' @useDynLib dirmn, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @importFrom methods is as
#' @importFrom stats AIC BIC anova coef confint fitted logLik nobs predict residuals simulate vcov
#' @importClassesFrom Matrix dgCMatrix dgRMatrix
"_PACKAGE"
