#' Dirichlet-multinomial regression
#'
#' Regresses the composition of count rows on covariates: row \eqn{b}, with
#' covariates \eqn{x_b} (a row of the design matrix that [model.matrix()]
#' makes from `formula`), has Dirichlet-multinomial parameters
#' \deqn{\alpha_{bv} = \exp(x_b^T \beta_v),}{alpha_bv = exp(x_b' beta_v),}
#' with \eqn{\beta} a p x V matrix of coefficients, one column per category
#' (`parametrization = "loglinear"`, the default). Every category has its
#' own coefficients (there is no reference category: \eqn{\alpha} is not
#' normalised, its sum carries the overdispersion), the parametrisation of
#' \pkg{MGLM}'s `MGLMreg(dist = "DM")`. A covariate shifts the proportions
#' \eqn{\alpha_{bv} / \sum_u \alpha_{bu}}{alpha_bv / sum_u alpha_bu} through
#' the differences of its coefficients between categories, and the precision
#' \eqn{\sum_u \alpha_{bu}}{sum_u alpha_bu} through their common level.
#'
#' With `parametrization = "meanprecision"` (the parametrisation of
#' \pkg{DRIMSeq} and \pkg{brms}) the covariates act on the proportions
#' alone and every row has the same precision
#' \eqn{\phi = \exp(\gamma)}{phi = exp(gamma)}:
#' \deqn{\alpha_{bv} = \phi \frac{\exp(x_b^T \beta_v)}{\sum_u \exp(x_b^T
#' \beta_u)}.}{alpha_bv = phi exp(x_b' beta_v) / sum_u exp(x_b' beta_u).}
#' The proportions do not change when a constant is added to a covariate's
#' coefficients across the categories, so they are identified by a
#' `contrast`: `"reference"` (the default) fixes the coefficients of the
#' `reference` category at 0 (the others are log-ratios of proportions to
#' its); `"sum"` makes each covariate's coefficients sum to 0 over the
#' categories (the `reference` category's are then minus the sum of the
#' others'). Both give the same fit, log-likelihood and Wald tests; the
#' coefficients differ by each covariate's mean over the categories. The
#' model has p (V - 1) + 1 free coefficients (V - 1 categories' betas and
#' the log precision \eqn{\gamma}{gamma}), which [logLik()], [AIC()],
#' [BIC()] and [anova()] count; with an intercept alone it is the shared-alpha
#' fit of [dirmn_fit()], as the log-linear model is. (`contrast` is not
#' `contrasts`, the coding of factor covariates in the design matrix.)
#'
#' The precision can have covariates of its own (`precision_design`, as
#' the precision formulas of \pkg{betareg} and \pkg{brms}): row b's
#' precision is \eqn{\phi_b = \exp(z_b^T \gamma)}{phi_b = exp(z_b' gamma)},
#' with \eqn{z_b} the row's covariates of the precision, a row of the model
#' matrix of a one-sided formula (`~ 1` is the one precision above) or of a
#' matrix given. The model then has p (V - 1) + q free coefficients, q the
#' columns of the precision's design. Its formula is evaluated in `data` as
#' `formula` is, for the same rows: `subset`, `weights` and `na.action` see
#' the variables of both formulas at once (`na.omit` leaves a row with an
#' `NA` in either out of both), and `contrasts` codes its factors too. A
#' matrix has one row per row of the response, before `subset` and
#' `na.action`, which take its rows with the others'. A precision covariate
#' that is not finite is an error naming its row and column (class
#' `dirmn_error_invalid_parameter`); one that is a linear combination of
#' those before it (over the rows with counts) is an error naming it (class
#' `dirmn_error_invalid_argument`), as is a `precision_design` given to the
#' log-linear model, whose covariates move the sum of alpha already.
#'
#' The maximum-likelihood fit is libdirmn's `dirmn_reg_fit()`: Newton's
#' method in the free coefficients from the per-row derivatives of the log-likelihood,
#' safeguarded by Levenberg damping and step halving, from the shared-alpha
#' fit ([dirmn_fit()]) regressed on the design. It stops when the predicted
#' gain of a Newton step (half the squared Newton decrement) is below
#' `tolerance` times the absolute log-likelihood. The covariance of the
#' free coefficients ([vcov()]) is the negative inverse Hessian at the fit,
#' and the Wald test of each covariate ([wald_test()]) tests that all its
#' free coefficients are 0 (chi-square with V degrees of freedom; V - 1 for
#' the mean/precision model). The log-linear model's Newton
#' system is solved in the smaller of the number of coefficients (p V) and
#' the number of rows with counts (through the Woodbury identity where the
#' rows are fewer), so many categories over few rows fit too; a fit is
#' refused only when both are above 8000 (libdirmn's
#' `DIRMN_REG_MAX_SYSTEM`).
#'
#' The covariance matrix of the coefficients is kept in the object only up
#' to 5000 free coefficients (`parameters`): above that it would be
#' `parameters`^2 numbers (51 GB at 80000), and [vcov()] is an error of class
#' `dirmn_error_not_supported`. The standard errors ([summary()],
#' [confint()]) and the Wald tests ([wald_test()]) are computed by libdirmn
#' at the fit for any size and kept.
#'
#' The response is a matrix of counts, one row per observation and one
#' column per category: `cbind(a, b, c) ~ x1 + x2` with columns of `data`,
#' or `Y ~ x1 + x2` with `Y` a matrix (a column of `data`, or a variable of
#' the formula's environment), dense or a sparse matrix of the \pkg{Matrix}
#' package (passed without being made dense). The right-hand side is any
#' formula [model.matrix()] takes (factors, interactions, transformations
#' such as `log(x)`, `- 1` or `0 +` for no intercept); offsets are not
#' supported. Rows with missing values are handled by `na.action` as
#' [lm()] handles them (by default `na.omit`, from `options("na.action")`);
#' a covariate that is still not finite (`Inf`, or `NA` kept by
#' `na.pass`) is an error naming its row and column.
#'
#' The response can also be a table prepared with [dirmn_counts()]
#' (`counts ~ x1 + x2`, `counts` a variable of the formula's environment),
#' as every dirmn function takes one: it is fitted as it is, every row in
#' order, so `data` holds one row per row of the table and `subset` and
#' `na.action` must leave none out (an error of class
#' `dirmn_error_invalid_argument` names the first left out). The fit keeps
#' the table as `y`, which [residuals()] and [simulate()] copy back.
#'
#' On a table split by rows over several processes (a prepared table
#' attached to a [dirmn_communicator()]), `dirmn_reg()` is a collective
#' call: every rank calls it with the same formula and options and its own
#' rows of `data` (of `weights`, and of a `precision_design` given as a
#' matrix), and every rank gets the whole table's fit: its log-likelihood,
#' AIC and BIC to rounding, its coefficients, covariance, standard errors
#' and Wald tests to the accuracy of the Newton solves (about 1e-7
#' relative); `nobs` is the whole table's. The design's rank is checked over
#' every rank's rows (a covariate constant on one rank's rows is no
#' collinearity). Every rank's design must have the same columns: on such a
#' table factors keep all their levels, those the rank's rows lack included
#' (as `model.frame(drop.unused.levels = FALSE)`), so a factor covariate
#' must have the same levels on every rank (`factor(x, levels = ...)`; a
#' character covariate's levels would be those of the rank's rows). A
#' covariate that is not finite on one rank fails that rank with its own
#' error and the others with one of class `dirmn_error_communication`
#' naming it, and a progress report that cancels on one rank cancels every
#' rank's fit. An error that R raises before the fit starts (a bad argument,
#' a row left out) is that rank's alone, and leaves the others waiting, as
#' a rank that skips the call does. What is about rows stays local: `x`,
#' `y`, [predict()] without `newdata`, [fitted()] and [residuals()] are this
#' rank's rows. See [dirmn_communicator()].
#'
#' Rows of zeros, and rows of weight 0, contribute nothing and do not count
#' in `nobs`. Errors (conditions of class [dirmn_error]) name what is wrong:
#' a design that is not of full column rank (over the rows with counts)
#' names the first covariate that is a combination of those before it
#' (class `dirmn_error_invalid_argument`), a category without counts names
#' the category (its coefficients would have no finite estimate), and a
#' fit with more covariates than rows with counts says so.
#'
#' A fit that stops at `max_iterations` without meeting the tolerance warns
#' (class `dirmn_convergence_warning`) and returns its last iterate with
#' `converged = FALSE`. Where the Hessian at the fit is not negative
#' definite (`hessian_definite = FALSE`: the fit is not a strict local
#' maximum), there are no covariance, standard errors or Wald tests: they
#' are `NA` (and `vcov` is `NULL`).
#'
#' @param formula A two-sided formula: a count matrix (or a table prepared
#'   with [dirmn_counts()]) on the left (see Details), covariates on the
#'   right.
#' @param data A data frame (or list, or environment) holding the variables
#'   of `formula`; by default they are taken from the formula's environment.
#' @param weights `NULL` or frequency weights, one finite, non-negative
#'   value per row of `data` (evaluated in `data` as [lm()]'s): a weight of
#'   2 counts the row twice, so integer weights give the fit of the repeated
#'   rows.
#' @param subset An optional expression selecting the rows to fit (as
#'   [lm()]'s).
#' @param na.action What to do with rows holding `NA` (as [lm()]'s).
#' @param parametrization `"loglinear"` (alpha = exp(X beta), MGLM's) or
#'   `"meanprecision"` (alpha = phi softmax(X beta), one precision phi; see
#'   Details).
#' @param contrast For `"meanprecision"`: how each covariate's coefficients
#'   are identified, `"reference"` (the `reference` category's are 0) or
#'   `"sum"` (they sum to 0 over the categories). Not used by the
#'   log-linear model.
#' @param reference For `"meanprecision"`: the reference category (with
#'   `contrast = "sum"`, the one whose coefficients are minus the sum of the
#'   others'), its number (1 to V) or its name (a column name of the
#'   response); the first by default. Not used by the log-linear model.
#' @param precision_design For `"meanprecision"`: `NULL` (one precision
#'   for every row), or the covariates of the log precision, \eqn{\log
#'   \phi_b = z_b^T \gamma}{log phi_b = z_b' gamma}: a one-sided formula
#'   (`~ group`, evaluated in `data` for the rows of `formula`; its model
#'   matrix has an intercept unless the formula has `- 1` or `0 +`), or a
#'   numeric matrix with one row per row of the response (its columns named
#'   by its column names, else `"z1"`, `"z2"`, ...). See Details.
#' @param contrasts `NULL` or a list of contrasts for the factors of the
#'   formula and of `precision_design`'s (the `contrasts.arg` of
#'   [model.matrix()]; not to be confused with `contrast`).
#' @param tolerance Relative convergence tolerance (see Details).
#' @param max_iterations Maximum number of Newton steps.
#' @param verbose If `TRUE`, report every Newton step (its number, the
#'   log-likelihood and the largest gradient component) through
#'   [message()].
#' @param backend Where to evaluate the counts: `"auto"`, `"cpu"` or
#'   `"cuda"` (see [dirmn_counts()]).
#' @param ... Unused; an argument that `dirmn_reg()` does not take is an
#'   error of class `dirmn_error_invalid_argument`.
#'
#' @return An object of class `dirmn_reg`, a list with elements
#'   \describe{
#'     \item{`coefficients`}{beta, the p x V matrix of coefficients: rows
#'       named by the columns of the design matrix (`"(Intercept)"`,
#'       `"x1"`, ...), columns by the categories (the response's column
#'       names, or `"V1"`, `"V2"`, ...). Mean/precision: the reference
#'       category's column is 0 (`contrast = "reference"`) or minus the sum
#'       of the others (`"sum"`).}
#'     \item{`vcov`}{the P x P covariance of the free coefficients:
#'       log-linear, in the order of `as.vector(coefficients)` (covariates
#'       fastest), named `"<category>:<covariate>"`; mean/precision, the
#'       same without the reference category's column, then the log
#'       precision, named `"(log precision)"`, or with a precision design
#'       its q coefficients, named `"(precision):<covariate>"` (as
#'       `"(precision):(Intercept)"`). `NULL` where
#'       `hessian_definite` is `FALSE`, and above 5000 free coefficients
#'       (see Details).}
#'     \item{`wald_test`}{a data frame with one row per covariate (named by
#'       it): `statistic`, `df` (V; V - 1 for mean/precision) and `p_value`
#'       of the Wald test that all the covariate's free coefficients are 0
#'       (computed at the fit, for any number of coefficients).}
#'     \item{`loglik`}{the maximised log-likelihood, with the multinomial
#'       coefficients (the log pmf of the counts).}
#'     \item{`aic`, `bic`}{-2 loglik + 2 P and -2 loglik + P log(nobs), as
#'       [AIC()] and [BIC()] give them.}
#'     \item{`parameters`}{P, the number of free coefficients: p V
#'       (log-linear) or p (V - 1) + q (mean/precision; q = 1 without a
#'       precision design).}
#'     \item{`parametrization`}{`"loglinear"` or `"meanprecision"`.}
#'     \item{`contrast`, `reference`}{mean/precision: the contrast
#'       (`"reference"` or `"sum"`) and the reference category's number (1
#'       to V; its name is `colnames(coefficients)[reference]`); `NULL` for
#'       a log-linear fit.}
#'     \item{`precision`, `log_precision`, `std_error_log_precision`}{
#'       mean/precision: phi, the sum of every row's alpha, its log
#'       \eqn{\gamma}{gamma} and the standard error of the log (`NA`
#'       where `hessian_definite` is `FALSE`); `NULL` for a log-linear fit
#'       (whose rows' sums of alpha differ). With a precision design,
#'       `precision` holds each fitted row's \eqn{\phi_b}{phi_b} (named by
#'       the rows), and `log_precision` and `std_error_log_precision` the q
#'       coefficients \eqn{\gamma}{gamma} and their standard errors, named
#'       by the design's columns.}
#'     \item{`precision_design`}{the precision's design, q columns, rows as
#'       fitted; `NULL` without one.}
#'     \item{`nobs`}{the observations: the rows with counts and positive
#'       weight (the sum of their weights when weights are given).}
#'     \item{`gradient_norm`, `iterations`, `converged`}{the largest absolute
#'       gradient component at the fit, the Newton steps taken, and whether
#'       the tolerance was met.}
#'     \item{`multinomial_limit`}{mean/precision with one precision: `TRUE`
#'       when the table shows no overdispersion, the likelihood rising toward
#'       the multinomial limit (precision -> Inf, the multinomial logit model,
#'       which the coefficients approach); `converged` is then `FALSE`.}
#'     \item{`hessian_definite`}{`TRUE` when the Hessian at the fit is
#'       negative definite (a strict local maximum), so that `vcov`,
#'       standard errors and Wald tests exist.}
#'     \item{`x`, `y`, `weights`}{the design matrix, the response (counts
#'       as given, rows as fitted; a prepared table as it is) and the
#'       weights (`NULL` for none).}
#'     \item{`call`, `formula`, `terms`, `contrasts`, `xlevels`, `na.action`}{as
#'       [lm()] keeps them, for [predict()] on new data (`na.action`: the
#'       rows left out for a variable of either design).}
#'     \item{`precision_formula`, `precision_terms`, `precision_contrasts`,
#'       `precision_xlevels`}{the same of a precision design given as a
#'       formula; `NULL` otherwise.}
#'   }
#'   Methods: [print()], [summary()], [coef()], [vcov()], [wald_test()],
#'   [logLik()] (so [AIC()] and [BIC()] work), [nobs()], [anova()]
#'   (likelihood-ratio tests between nested fits), [predict()],
#'   [fitted()], [residuals()] and [confint()]; see
#'   [dirmn_reg-methods].
#' @seealso [dirmn_reg-methods]; [dirmn_fit()] for one alpha shared by all
#'   rows (the regression with an intercept only); [dirmn_communicator()]
#'   for a table split by rows over several processes.
#' @references Zhang Y, Zhou H, Zhou J, Sun W (2017). Regression models for
#'   multivariate count data. Journal of Computational and Graphical
#'   Statistics 26:1-13.
#' @export
#' @examples
#' # simulated compositions that shift with a covariate
#' set.seed(1)
#' n <- 60
#' d <- data.frame(x = runif(n), group = factor(sample(c("a", "b"), n, TRUE)))
#' X <- model.matrix(~ x + group, d)
#' beta <- cbind(A = c(1, 1, 0), B = c(0.5, -1, 0.5), C = c(0, 0, 0))
#' alpha <- exp(X %*% beta)
#' Y <- t(sapply(seq_len(n), function(b) {
#'   g <- rgamma(3, alpha[b, ])
#'   rmultinom(1, 50, g / sum(g))
#' }))
#' colnames(Y) <- colnames(beta)
#' fit <- dirmn_reg(Y ~ x + group, data = d)
#' fit
#' summary(fit)
#' wald_test(fit)
#' head(predict(fit, newdata = data.frame(x = c(0, 1), group = "b"),
#'              type = "proportion"))
#'
#' # columns of the data as the response, and a likelihood-ratio test
#' d[colnames(Y)] <- as.data.frame(Y)
#' fit0 <- dirmn_reg(cbind(A, B, C) ~ x, data = d)
#' anova(fit0, fit)
#'
#' # the mean/precision parametrisation: proportions and one precision
#' mp <- dirmn_reg(Y ~ x + group, data = d, parametrization = "meanprecision",
#'                 reference = "C")
#' summary(mp)
#' mp$precision
#'
#' # covariates of the precision: one per group
#' mpg <- dirmn_reg(Y ~ x, data = d, parametrization = "meanprecision",
#'                  precision_design = ~ group)
#' mpg$log_precision
#' anova(dirmn_reg(Y ~ x, data = d, parametrization = "meanprecision"), mpg)
#' predict(mpg, newdata = data.frame(x = 0.5, group = c("a", "b")))
dirmn_reg <- function(formula, data, weights = NULL,
                      parametrization = c("loglinear", "meanprecision"),
                      contrast = c("reference", "sum"), reference = 1L,
                      precision_design = NULL, subset, na.action,
                      contrasts = NULL, tolerance = 1e-10, max_iterations = 200L,
                      verbose = FALSE, backend = getOption("dirmn.backend", "auto"), ...) {
  call <- match.call()
  ecall <- sys.call()
  caller <- parent.frame()
  .renamed_args(list(...), character(), ecall)
  parametrization <- .reg_choice(parametrization, c("loglinear", "meanprecision"),
                                 "parametrization", ecall)
  contrast <- .reg_choice(contrast, c("reference", "sum"), "contrast", ecall)
  mean_precision <- parametrization == "meanprecision"
  precision <- .reg_precision_spec(precision_design, mean_precision, ecall)
  .check_flag(verbose, "verbose", ecall)
  tolerance <- .check_positive(tolerance, "tolerance", ecall)
  max_iterations <- .check_count(max_iterations, "max_iterations", ecall, min = 0L)
  if (missing(formula) || !inherits(formula, "formula") || length(formula) != 3L) {
    .stop("invalid_argument",
          "formula must be a two-sided formula, counts ~ covariates (cbind(a, b, c) ~ x)", ecall)
  }
  env <- environment(formula)
  if (is.null(env)) env <- parent.frame()

  # The model frame, as lm() makes it (weights, subset and na.action
  # evaluated in data). A sparse Matrix response, or a table prepared with
  # dirmn_counts(), cannot sit in a model frame: the frame holds its row
  # numbers instead, and the rows kept are taken from it (all of a prepared
  # table's, which cannot be subset). On a table split over a communicator,
  # factors keep their levels, so that every rank's design has the same
  # columns whichever levels its rows hold.
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L))]
  mf[[1L]] <- quote(stats::model.frame)
  response <- eval(formula[[2L]], if (missing(data)) env else data, env)
  prepared_response <- inherits(response, "dirmn_counts")
  drop_levels <- !prepared_response || is.null(.communicator_of(response))
  mf$drop.unused.levels <- drop_levels
  sparse_response <- prepared_response || methods::is(response, "Matrix")
  if (sparse_response || !is.null(precision)) {
    # the package's own variables, beside the formula's
    f <- formula
    helper_env <- new.env(parent = env)
    environment(f) <- helper_env
    mf$formula <- f
  }
  if (sparse_response) {
    if (length(dim(response)) != 2L) .bad_response(ecall)
    helper_env$.dirmn_response_row <- seq_len(nrow(response))
    f[[2L]] <- as.name(".dirmn_response_row")
    mf$formula <- f
  }
  kept <- NULL
  if (!is.null(precision)) {
    # The rows of both designs must be the same: na.action sees the
    # variables of both formulas at once (as lm() sees its weights), and
    # the frames of the two designs are then made of the rows it kept.
    kept <- .reg_joint_rows(mf, f, precision, helper_env, NROW(response),
                            if (missing(data)) NULL else data, caller, ecall)
    mf$subset <- kept$rows
    mf$na.action <- stats::na.pass
  }
  mf <- eval(mf, caller)
  if (!is.null(kept)) attr(mf, "na.action") <- kept$na_action
  mt <- attr(mf, "terms")
  if (!is.null(stats::model.offset(mf))) {
    .stop("invalid_argument", "offsets are not supported by dirmn_reg()", ecall)
  }
  y <- stats::model.response(mf)
  if (prepared_response) {
    .reg_prepared_rows(y, nrow(response), ecall)
    y <- response
  } else if (sparse_response) {
    y <- response[y, , drop = FALSE]
    rownames(y) <- rownames(mf)
  } else {
    if (is.data.frame(y)) y <- as.matrix(y)
    if (!is.matrix(y) || !(is.numeric(y) || is.logical(y))) .bad_response(ecall)
  }
  z <- NULL
  if (!is.null(precision)) {
    zm <- match.call(expand.dots = FALSE)
    zm <- zm[c(1L, match("data", names(zm), 0L))]
    z <- .reg_precision_matrix(precision, zm, kept$rows, contrasts, caller, ecall, drop_levels)
    rownames(z$z) <- rownames(mf)
  }
  x <- stats::model.matrix(mt, mf, if (is.null(z)) contrasts
                                   else .reg_contrasts_of(contrasts, names(mf), z$variables))
  if (ncol(x) == 0L) {
    .stop("invalid_argument", "the design has no covariates (the formula's right-hand side is empty)",
          ecall)
  }
  storage.mode(x) <- "double"
  weights <- stats::model.weights(mf)
  if (!is.null(weights)) weights <- .as_weights(as.vector(weights), nrow(x), ecall)

  categories <- colnames(y)
  if (is.null(categories)) categories <- paste0("V", seq_len(ncol(y)))
  covariates <- colnames(x)
  reference <- .reg_reference(reference, categories, ecall)

  prepared <- .prepare(y, backend, ecall, arg = "response", backend_option = missing(backend))
  on.exit(.release(prepared))
  progress <- NULL
  if (verbose) {
    progress <- .progress_reporter(function(iteration, value, change) {
      sprintf("dirmn_reg: iteration %d, log-likelihood %.12g, gradient norm %.3g",
              iteration, value, change)
    })
  }
  res <- cpp_reg_fit(prepared$counts$ptr, x, weights, tolerance, max_iterations, progress,
                     .reg_vcov_max_coefficients, as.integer(mean_precision),
                     as.integer(contrast == "sum"), reference - 1, z$z)
  if (.failed(res)) .raise_reg(res, ecall, covariates, categories, rownames(x), colnames(z$z))
  if (isTRUE(res$model$multinomial_limit)) {
    .warn_convergence(
      "the table shows no overdispersion: the likelihood rises toward the multinomial limit (precision -> Inf), which the coefficients approach (multinomial_limit = TRUE, converged = FALSE)",
      ecall)
  } else if (!res$converged) {
    .warn_convergence(sprintf(
      "did not converge in %d iteration%s (largest gradient component %s, tolerance = %s); the result is the last iterate: increase max_iterations",
      res$iterations, if (res$iterations == 1) "" else "s", format(res$gradient_norm, digits = 3L),
      format(tolerance, digits = 3L)), ecall)
  }

  coefficients <- res$coefficients
  dimnames(coefficients) <- list(covariates, categories)
  std_errors <- res$std_errors
  dimnames(std_errors) <- list(covariates, categories)
  vcov <- res$vcov
  if (!is.null(vcov)) {
    nm <- .reg_free_names(covariates, categories, if (mean_precision) reference, colnames(z$z))
    dimnames(vcov) <- list(nm, nm)
  }
  model <- res$model
  if (mean_precision) {
    reference <- as.integer(model$reference) + 1L
    gamma <- model$log_precision
    gamma_se <- model$std_error_log_precision
    if (is.null(z)) {
      phi <- exp(gamma)
    } else {
      names(gamma) <- names(gamma_se) <- colnames(z$z)
      phi <- stats::setNames(exp(drop(z$z %*% gamma)), rownames(x))
    }
    precision <- list(contrast = if (model$contrast == 1L) "sum" else "reference",
                      reference = reference, precision = phi, log_precision = gamma,
                      std_error_log_precision = gamma_se)
  } else {
    precision <- list(contrast = NULL, reference = NULL, precision = NULL,
                      log_precision = NULL, std_error_log_precision = NULL)
  }
  wald <- data.frame(statistic = res$wald_statistic, df = res$wald_df,
                     p_value = res$wald_p_value, row.names = covariates)
  structure(
    list(
      coefficients = coefficients,
      vcov = vcov,
      wald_test = wald,
      loglik = res$loglik,
      aic = res$aic,
      bic = res$bic,
      parameters = res$parameters,
      parametrization = parametrization,
      contrast = precision$contrast,
      reference = precision$reference,
      precision = precision$precision,
      log_precision = precision$log_precision,
      std_error_log_precision = precision$std_error_log_precision,
      precision_design = z$z,
      nobs = res$observations,
      gradient_norm = res$gradient_norm,
      iterations = res$iterations,
      converged = res$converged,
      multinomial_limit = isTRUE(res$model$multinomial_limit),
      hessian_definite = res$hessian_definite,
      x = x,
      y = y,
      weights = weights,
      call = call,
      formula = formula,
      terms = mt,
      contrasts = attr(x, "contrasts"),
      xlevels = stats::.getXlevels(mt, mf),
      na.action = attr(mf, "na.action"),
      precision_formula = z$formula,
      precision_terms = z$terms,
      precision_contrasts = z$contrasts,
      precision_xlevels = z$xlevels,
      backend = prepared$counts$backend,
      ptr = res$ptr
    ),
    # the standard errors (p x V, NA without a covariance), the library's:
    # summary() and confint() read them (.reg_std_error_matrix), for any size
    std_errors = std_errors,
    class = "dirmn_reg"
  )
}

# The most free coefficients (`parameters`: p V, or p (V - 1) + q for the
# mean/precision model) whose covariance a dirmn_reg object keeps
# (`vcov`): their number squared doubles, 200 MB at 5000. Above it the object holds no
# matrix and vcov() is an error; the standard errors and Wald tests are
# libdirmn's (dirmn_reg_get_std_errors, dirmn_reg_wald_test), for any size.
# The Julia and Python packages keep it up to the same size.
.reg_vcov_max_coefficients <- 5000

# A response prepared with dirmn_counts() is fitted whole: its rows (`n`)
# are the design's, in order (on a table split over a communicator, this
# rank's rows), so subset and na.action must keep every one (`rows`, the
# rows the model frame kept).
.reg_prepared_rows <- function(rows, n, call) {
  if (length(rows) == n && all(rows == seq_len(n))) return(invisible())
  left <- setdiff(seq_len(n), rows)
  .stop("invalid_argument", sprintf(paste(
    "the response is a table prepared with dirmn_counts(), whose %s rows are fitted whole",
    "and in order: %s; prepare the rows to fit as a table of their own"), .num(n),
    if (length(left) == 0L) "subset reorders them"
    else sprintf("subset or na.action left out %s (row %s first)",
                 if (length(left) == 1L) "1 row" else paste(.num(length(left)), "rows"),
                 .num(left[[1L]]))), call)
}

.bad_response <- function(call) {
  .stop("invalid_argument", paste(
    "the response must be a matrix of counts with one column per category:",
    "cbind(a, b, c) ~ x, or Y ~ x with Y a matrix (dense or a sparse Matrix)"), call)
}

# The names of the coefficients in vec(beta) order (covariates fastest):
# "<category>:<covariate>".
.reg_parameter_names <- function(covariates, categories) {
  paste(rep(categories, each = length(covariates)), rep(covariates, length(categories)),
        sep = ":")
}

# The names of the free coefficients, in the library's order of the
# covariance: vec(beta); for the mean/precision model (`reference`, the
# reference or implied category's number, not NULL) without the reference
# category's column, then the log precision ("(log precision)"), or its
# coefficients where it has a design (`precision_covariates`, the design's
# column names).
.reg_free_names <- function(covariates, categories, reference = NULL,
                            precision_covariates = NULL) {
  if (is.null(reference)) return(.reg_parameter_names(covariates, categories))
  gamma <- if (is.null(precision_covariates)) "(log precision)"
           else .reg_precision_names(precision_covariates)
  c(.reg_parameter_names(covariates, categories[-reference]), gamma)
}

# The names of the precision's coefficients gamma in vcov() and confint(),
# by the precision design's columns: "(precision):<covariate>", as a
# category's are "<category>:<covariate>".
.reg_precision_names <- function(precision_covariates) {
  paste0("(precision):", precision_covariates)
}

# precision_design as given to dirmn_reg(): NULL (one precision), or a
# list with a one-sided `formula` or a double `matrix` (its columns named).
.reg_precision_spec <- function(design, mean_precision, call) {
  if (is.null(design)) return(NULL)
  if (!mean_precision) {
    .stop("invalid_argument", paste(
      "precision_design is given with parametrization = \"loglinear\": only the",
      "mean/precision model (parametrization = \"meanprecision\") has a precision of its own",
      "(the log-linear model's covariates move the sum of alpha through their coefficients)"),
      call)
  }
  if (inherits(design, "formula")) {
    if (length(design) != 2L) {
      .stop("invalid_argument", paste(
        "precision_design must be a one-sided formula (~ z1 + z2): the counts are the",
        "left-hand side of formula"), call)
    }
    return(list(formula = design, matrix = NULL))
  }
  if (is.matrix(design) && (is.numeric(design) || is.logical(design)) && !is.object(design)) {
    if (ncol(design) == 0L) {
      .stop("invalid_argument", "precision_design has no columns", call)
    }
    storage.mode(design) <- "double"
    if (is.null(colnames(design))) colnames(design) <- paste0("z", seq_len(ncol(design)))
    return(list(formula = NULL, matrix = design))
  }
  .stop("invalid_argument", sprintf(paste(
    "precision_design must be a one-sided formula (~ z1 + z2) or a numeric matrix with one",
    "row per row of the response, not %s"), .reg_describe(design)), call)
}

.reg_describe <- function(value) {
  if (is.matrix(value)) return(sprintf("a %s matrix", typeof(value)))
  sprintf("an object of class \"%s\"", class(value)[[1L]])
}

# The rows of the data that both designs keep: model.frame() of `mf` (the
# main model frame's call) for the response of `f` (the main formula, whose
# environment is `helper_env`) on the variables of both designs (the
# precision's formula's, or its matrix, rows as the response's) and the
# rows' numbers: subset and na.action see every variable at once. The
# variables are listed one by one, `.` expanded first: terms() of `.`
# beside variables added to it warns. Returns the rows' numbers and the
# frame's na.action.
.reg_joint_rows <- function(mf, f, precision, helper_env, n, data, caller, ecall) {
  if (!is.null(precision$matrix)) {
    if (nrow(precision$matrix) != n) {
      .stop("dimension_mismatch", sprintf(paste(
        "precision_design has %s rows; the response has %s (precision_design holds one row",
        "per row of the response, before subset and na.action)"), .num(nrow(precision$matrix)),
        .num(n)), ecall)
    }
    helper_env$.dirmn_precision_design <- precision$matrix
    extra <- list(as.name(".dirmn_precision_design"))
  } else {
    extra <- as.list(attr(stats::terms(precision$formula, data = data), "variables"))[-1L]
  }
  helper_env$.dirmn_row <- seq_len(n)
  # the main formula's variables, its response first
  main <- as.list(attr(stats::terms(f, data = data), "variables"))[-(1:2)]
  joint <- f
  joint[[3L]] <- Reduce(function(a, b) as.call(list(as.name("+"), a, b)),
                        c(main, extra, list(as.name(".dirmn_row"))))
  mf$formula <- joint
  frame <- eval(mf, caller)
  list(rows = frame[[".dirmn_row"]], na_action = attr(frame, "na.action"))
}

# The precision's design of the rows `rows` of the data: the matrix's rows,
# or the formula's model matrix (model.frame() as `zm`, the call's data,
# evaluated in `caller`). Returns `z`, and for a formula the `formula`,
# `terms`, `contrasts` and `xlevels` that predict() needs for new data, and
# the frame's `variables`. `drop_levels`: model.frame()'s drop.unused.levels.
.reg_precision_matrix <- function(precision, zm, rows, contrasts, caller, ecall,
                                  drop_levels = TRUE) {
  if (!is.null(precision$matrix)) {
    return(list(z = precision$matrix[rows, , drop = FALSE]))
  }
  zm[[1L]] <- quote(stats::model.frame)
  zm$formula <- precision$formula
  zm$subset <- rows
  zm$na.action <- stats::na.pass
  zm$drop.unused.levels <- drop_levels
  zf <- eval(zm, caller)
  zt <- attr(zf, "terms")
  if (!is.null(stats::model.offset(zf))) {
    .stop("invalid_argument", "offsets are not supported in precision_design", ecall)
  }
  z <- stats::model.matrix(zt, zf, .reg_contrasts_of(contrasts, names(zf)))
  if (ncol(z) == 0L) {
    .stop("invalid_argument", paste(
      "the precision's design has no columns (precision_design's right-hand side is empty);",
      "~ 1 gives one precision for every row"), ecall)
  }
  storage.mode(z) <- "double"
  list(z = z, formula = precision$formula, terms = zt, contrasts = attr(z, "contrasts"),
       xlevels = stats::.getXlevels(zt, zf), variables = names(zf))
}

# The entries of `contrasts` (model.matrix()'s contrasts.arg) for a frame
# of the variables `present`: a named list loses those the frame lacks
# (only those of `other`, the other design's variables, where given), which
# model.matrix() would warn about; anything else is left to model.matrix().
.reg_contrasts_of <- function(contrasts, present, other = NULL) {
  if (!is.list(contrasts) || is.null(names(contrasts))) return(contrasts)
  drop <- !(names(contrasts) %in% present)
  if (!is.null(other)) drop <- drop & names(contrasts) %in% other
  used <- contrasts[!drop]
  if (length(used) == 0L) NULL else used
}

# A choice among `choices` (the first when `value` is the default vector),
# or an error naming the argument and the value.
.reg_choice <- function(value, choices, name, call) {
  if (identical(value, choices)) return(choices[1L])
  if (!is.character(value) || length(value) != 1L || is.na(value) || !(value %in% choices)) {
    given <- paste(deparse(value, width.cutoff = 60L), collapse = " ")
    .stop("invalid_argument", sprintf("%s must be one of %s, not %s", name,
                                      paste0("\"", choices, "\"", collapse = ", "), given), call)
  }
  value
}

# The reference category's number (1 to V): `reference` is a number or a
# category's name (a column name of the response).
.reg_reference <- function(reference, categories, call) {
  V <- length(categories)
  if (is.character(reference) && length(reference) == 1L && !is.na(reference)) {
    i <- match(reference, categories)
    if (is.na(i)) {
      shown <- if (V <= 10L) categories else c(categories[1:10], "...")
      .stop("invalid_argument", sprintf(
        "reference \"%s\" is not a category: the categories are %s", reference,
        paste0("\"", shown, "\"", collapse = ", ")), call)
    }
    return(i)
  }
  if (!is.numeric(reference) || length(reference) != 1L || is.na(reference) ||
      reference != trunc(reference) || reference < 1 || reference > V) {
    given <- paste(deparse(reference, width.cutoff = 60L), collapse = " ")
    .stop("invalid_argument", sprintf(
      "reference must be a category, a number from 1 to %d or a category's name, not %s", V,
      given), call)
  }
  as.integer(reference)
}

# Raises the condition of a failed regression call, its position worded by
# the design's and the response's names: the library names a covariate
# ("x column", 0-based), a precision covariate ("precision_design column"),
# a category ("column"), a cell of the design ("x": row, column), of the
# precision's design ("precision_design" in a fit, "z" in a prediction) or
# of alpha ("alpha": row, category), 0-based; R counts from 1 and adds the
# names. Other failures are worded as everywhere.
.raise_reg <- function(failure, call, covariates, categories, row_names,
                       precision_covariates = NULL) {
  at <- function(name) {
    p <- failure[[name]]
    if (is.null(p) || length(p) != 1L || is.na(p) || p < 0) NA_real_ else p + 1
  }
  named <- function(what, i, names) {
    if (is.na(i)) return(NULL)
    nm <- if (i <= length(names)) names[[i]] else NULL
    if (is.null(nm) || is.na(nm) || nm == "") sprintf("%s %d", what, i)
    else sprintf("%s %d (%s)", what, i, nm)
  }
  row_text <- function(b) {
    if (is.na(b)) return(NULL)
    nm <- if (!is.null(row_names) && b <= length(row_names)) row_names[[b]] else NULL
    if (is.null(nm) || identical(nm, as.character(b))) sprintf("row %d", b)
    else sprintf("row %d (\"%s\")", b, nm)
  }
  argument <- failure$argument
  if (is.null(argument) || is.na(argument)) argument <- ""
  detail <- .drop_c_hints(failure$detail)
  where <- switch(argument,
    "x column" = named("covariate", at("index"), covariates),
    "column" = if (is.na(at("row"))) named("category", at("index"), categories),
    "x" = paste(c(row_text(at("row")), named("covariate", at("column"), covariates)),
                collapse = ", "),
    "precision_design column" = named("precision covariate", at("index"), precision_covariates),
    "precision_design" = ,
    "z" = paste(c(row_text(at("row")),
                  named("precision covariate", at("column"), precision_covariates)),
                collapse = ", "),
    "alpha" = paste(c(row_text(at("row")), named("category", at("column"), categories)),
                    collapse = ", "),
    NULL)
  if (is.null(where) || !nzchar(where)) .raise(failure, call)
  stop(dirmn_condition(failure$status, paste0(where, ": ", detail), call, failure$name))
}
