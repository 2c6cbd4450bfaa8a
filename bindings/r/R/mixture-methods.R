# Methods for dirmn_mixture and dirmn_mixture_fit objects.

#' Methods for Dirichlet-multinomial mixtures
#'
#' Methods for objects returned by [dirmn_mixture()] (they apply to the
#' selected model, or to the model with `components` components when
#' `components` is given) and for its fitted models (class
#' `dirmn_mixture_fit`, the elements of its `models`: `m$models[["3"]]` is
#' the model with 3 components).
#'
#' * `coef()` returns alpha, a k x V matrix (one row per component).
#' * `mixture_weights()` returns the mixing weights \eqn{\pi}{pi}.
#' * `responsibilities()` returns the rows x k matrix of the fitted rows'
#'   posterior component probabilities.
#' * `predict()` returns, for the rows of `newdata` (any form [ddirmn()]
#'   takes, with the fitted table's columns: where both have column names
#'   they are matched by name), the posterior component probabilities
#'   (`type = "prob"`, a rows x k matrix) or the most probable component
#'   (`type = "class"`, an integer vector: the component's row in `coef()`);
#'   newdata without rows gives a 0 x k matrix (an empty vector). Without
#'   `newdata`, the fitted rows'. A model restored with [readRDS()] predicts
#'   too (from its alpha and weights).
#' * `logLik()` returns the mixture log-likelihood (with the multinomial
#'   coefficients) as a `"logLik"` object with `df` = P, the parameters as
#'   libdirmn counts them (ML: k times the columns with counts, plus k - 1;
#'   dmn: kV + k - 1), and `nobs` = n, the observations (rows with counts
#'   and positive weight; the sum of their weights when given), so [AIC()]
#'   and [BIC()] work (on R's scale; see [dirmn_mixture()] for `dmn()`'s).
#' * `AIC()` and `BIC()` of a `dirmn_mixture` are those of its selected
#'   model, or of the model given by `components`. `k` of `AIC()` is R's
#'   penalty per parameter, as for every model: `AIC(m, k = 5)` is
#'   \eqn{-2\ell + 5P}{-2 l + 5 P}, not the model with 5 components, and
#'   warns (class `dirmn_argument_warning`) when `k` is also the number of
#'   components of a fitted model; use `AIC(m, components = 5)`.
#' * `fitted()` returns the expected counts given each row's
#'   responsibilities: \eqn{N_b \sum_j z_{bj} \alpha_{jv} / \sum_v \alpha_{jv}}{N_b sum_j z_bj alpha_jv / sum_v alpha_jv}.
#' * `plot()` draws, in base graphics, the model-selection curve (`type =
#'   "criteria"`: the criterion against k, the selected k marked) or the
#'   component profiles (`type = "components"`: alpha / sum(alpha) of the
#'   `top` categories with the largest share in any component, per
#'   component).
#' * [confint()] and [residuals()]: see [dirmn_confint].
#'
#' Before version 0.3.0 these methods took the number of components as
#' `k`; `k` is still accepted (except by `AIC()`, where it is the penalty)
#' with a warning of class `dirmn_deprecated_warning`.
#'
#' @param object,x A `dirmn_mixture` or `dirmn_mixture_fit` object (or a
#'   summary, for `print()`).
#' @param components For a `dirmn_mixture`: the number of components of the
#'   fitted model to use; `NULL` for the selected one.
#' @param newdata Counts to assign to components; `NULL` for the fitted rows.
#' @param type For `predict()`: `"prob"` or `"class"`. For `plot()`:
#'   `"criteria"` or `"components"`.
#' @param criterion For `plot(type = "criteria")`: `"bic"`, `"aic"` or
#'   `"laplace"`; by default the one that selected k.
#' @param top For `plot(type = "components")` and `summary()`: how many
#'   categories to show.
#' @param digits Significant digits to print.
#' @param k For `AIC()`: the penalty per parameter (2, R's default).
#' @param ... Further arguments: graphical parameters for `plot()`; for
#'   `AIC()` and `BIC()`, further fitted models to compare; else unused
#'   (but for the deprecated `k`, see Details).
#' @return See Details.
#' @name dirmn_mixture-methods
#' @examples
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' m <- dirmn_mixture(bci, k = 1:3)
#' summary(m)
#' coef(m, components = 2)[, 1:5]
#' coef(m$models[["2"]])[, 1:5]
#' mixture_weights(m)
#' head(responsibilities(m))
#' logLik(m)
#' AIC(m)
#' AIC(m, components = 3)
#' predict(m, bci[1:5, ], type = "class")
NULL

# The model of `object` with `components` components (NULL: the selected
# one); `dots` are the method's `...`, where the deprecated `k` may stand
# for `components`. A dirmn_mixture_fit is its own model.
.model <- function(object, components = NULL, dots = list(), call = sys.call(-1L)) {
  renamed <- .renamed_args(dots, c(k = "components"), call)
  if (!is.null(renamed$components)) {
    if (!is.null(components)) {
      .stop("invalid_argument", "give components once (k is its deprecated name)", call)
    }
    components <- renamed$components
  }
  if (inherits(object, "dirmn_mixture_fit")) {
    if (!is.null(components) && !identical(as.numeric(components), as.numeric(object$k))) {
      .stop("invalid_argument", sprintf(
        "this model has %d components; components = %s names another (use the dirmn_mixture)",
        object$k, paste(components, collapse = ", ")), call)
    }
    return(object)
  }
  if (is.null(components)) components <- object$selected
  model <- if (length(components) == 1L) object$models[[as.character(components)]] else NULL
  if (is.null(model)) {
    .stop("invalid_argument", sprintf(
      "no model with %s components was fitted (fitted: components = %s)",
      paste(components, collapse = ", "), paste(object$criteria$k, collapse = ", ")), call)
  }
  model
}

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights <- function(object, ...) UseMethod("mixture_weights")

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights.dirmn_mixture <- function(object, components = NULL, ...) {
  .model(object, components, list(...))$weights
}

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights.dirmn_mixture_fit <- function(object, ...) object$weights

#' @rdname dirmn_mixture-methods
#' @export
responsibilities <- function(object, ...) UseMethod("responsibilities")

#' @rdname dirmn_mixture-methods
#' @export
responsibilities.dirmn_mixture <- function(object, components = NULL, ...) {
  .model(object, components, list(...))$responsibilities
}

#' @rdname dirmn_mixture-methods
#' @export
responsibilities.dirmn_mixture_fit <- function(object, ...) object$responsibilities

#' @rdname dirmn_mixture-methods
#' @export
coef.dirmn_mixture <- function(object, components = NULL, ...) {
  .model(object, components, list(...))$alpha
}

#' @rdname dirmn_mixture-methods
#' @export
coef.dirmn_mixture_fit <- function(object, ...) object$alpha

#' @rdname dirmn_mixture-methods
#' @export
logLik.dirmn_mixture <- function(object, components = NULL, ...) {
  logLik(.model(object, components, list(...)))
}

#' @rdname dirmn_mixture-methods
#' @export
logLik.dirmn_mixture_fit <- function(object, ...) {
  structure(object$loglik, df = object$parameters, nobs = object$nobs, class = "logLik")
}

#' @rdname dirmn_mixture-methods
#' @export
AIC.dirmn_mixture <- function(object, ..., k = 2, components = NULL) {
  call <- sys.call()
  if (is.numeric(k) && length(k) == 1L && !is.na(k) && k != 2 && k == trunc(k) &&
      k %in% object$criteria$k) {
    warning(structure(class = c("dirmn_argument_warning", "warning", "condition"), list(
      message = sprintf(paste(
        "k = %s is AIC's penalty per parameter (R's default 2), not a number of components:",
        "this is -2 logLik + %s df of the %s model; for the model with %s components use",
        "AIC(m, components = %s)"), format(k), format(k),
        if (is.null(components)) "selected" else sprintf("%s-component", components),
        format(k), format(k)),
      call = call)))
  }
  model <- .model(object, components, call = call)
  if (...length() > 0L) return(stats::AIC(model, ..., k = k))
  stats::AIC(model, k = k)
}

#' @rdname dirmn_mixture-methods
#' @export
BIC.dirmn_mixture <- function(object, ..., components = NULL) {
  call <- sys.call()
  dots <- list(...)
  if ("k" %in% names(dots)) {
    .stop("invalid_argument", paste(
      "BIC() has no argument k (its penalty is log(nobs)); for the model with k components",
      "use BIC(m, components = k)"), call)
  }
  model <- .model(object, components, call = call)
  if (length(dots) > 0L) return(stats::BIC(model, ...))
  stats::BIC(model)
}

#' @rdname dirmn_mixture-methods
#' @export
nobs.dirmn_mixture <- function(object, ...) object$nobs

#' @rdname dirmn_mixture-methods
#' @export
nobs.dirmn_mixture_fit <- function(object, ...) object$nobs

#' @rdname dirmn_mixture-methods
#' @export
fitted.dirmn_mixture <- function(object, components = NULL, ...) {
  fitted(.model(object, components, list(...)))
}

#' @rdname dirmn_mixture-methods
#' @export
fitted.dirmn_mixture_fit <- function(object, ...) {
  p <- object$alpha / rowSums(object$alpha)
  out <- object$row_totals * (object$responsibilities %*% p)
  dimnames(out) <- list(rownames(object$responsibilities), colnames(object$alpha))
  out
}

#' @rdname dirmn_mixture-methods
#' @export
predict.dirmn_mixture <- function(object, newdata = NULL, type = c("prob", "class"),
                                  components = NULL, ...) {
  predict(.model(object, components, list(...)), newdata = newdata, type = type)
}

#' @rdname dirmn_mixture-methods
#' @export
predict.dirmn_mixture_fit <- function(object, newdata = NULL, type = c("prob", "class"), ...) {
  call <- sys.call()
  type <- .match_choice(type, c("prob", "class"), "type", call)
  if (is.null(newdata)) {
    prob <- object$responsibilities
  } else {
    prob <- .assign(object, newdata, call)
  }
  if (type == "prob") return(prob)
  cls <- max.col(prob, ties.method = "first")
  names(cls) <- rownames(prob)
  cls
}

# Posterior component probabilities of the rows of newdata: through the
# library's mixture handle where it is alive and newdata's columns are in
# the fitted order, else (a model restored from disk, or newdata's columns
# named in another order) from the rows x k log-likelihoods under alpha
# (reordered to newdata's columns) and the weights. Newdata without rows
# (which the library has no table for) has a 0 x k answer, as ddirmn() has
# for a table without rows.
.assign <- function(object, newdata, call) {
  table <- NULL
  if (!inherits(newdata, "dirmn_counts")) {
    table <- .as_table(newdata, call, "newdata")
    if (table$dim[1L] == 0L) {
      .check_new_columns(object, table$dim[2L], table$dimnames[[2L]], call)
      return(matrix(numeric(0), 0L, nrow(object$alpha),
                    dimnames = list(table$dimnames[[1L]], rownames(object$alpha))))
    }
  }
  prepared <- .prepare(newdata, object$backend, call, "newdata", table = table)
  on.exit(.release(prepared))
  counts <- prepared$counts
  alpha <- .check_new_columns(object, counts$dim[2L], counts$dimnames[[2L]], call)
  reordered <- !identical(alpha, object$alpha)
  prob <- if (reordered) NULL else cpp_mixture_assign(object$ptr, counts$ptr)
  if (reordered || .failed(prob) && prob$status == .status_code("null_pointer") &&
      grepl("mixture handle", prob$message, fixed = TRUE)) {
    ll <- cpp_ddirmn_counts(counts$ptr, alpha, FALSE, TRUE, TRUE)
    if (.failed(ll)) .raise(ll, call, alpha = "matrix")
    s <- sweep(ll, 2L, log(object$weights), `+`)
    s <- exp(s - apply(s, 1L, max))
    prob <- s / rowSums(s)
  } else if (.failed(prob)) {
    .raise(prob, call)
  }
  dimnames(prob) <- list(counts$dimnames[[1L]], rownames(object$alpha))
  prob
}

# newdata's columns (`cols` of them, named `new_cn`) are the fitted table's,
# in any order where both are named: returns alpha with its columns in
# newdata's order.
.check_new_columns <- function(object, cols, new_cn, call) {
  if (cols != ncol(object$alpha)) {
    .stop("dimension_mismatch", sprintf(
      "newdata has %d columns but the mixture was fitted to %d", cols, ncol(object$alpha)), call)
  }
  .match_names(object$alpha, new_cn, "the fitted mixture's alpha", "newdata", call)
}

#' @rdname dirmn_mixture-methods
#' @export
print.dirmn_mixture_fit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixture, k = %d (%s objective)\n", x$k,
              if (x$objective_kind == "dmn") "dmn" else "maximum-likelihood"))
  cat("Log-likelihood: ", format(x$loglik, digits = max(digits, 8L)),
      " (with the multinomial coefficients), df = ", x$parameters, "\n", sep = "")
  cat(sprintf("%s after %d EM iteration%s (best of the starts: %d)\n",
              if (x$converged) "Converged" else "NOT converged", x$iterations,
              if (x$iterations == 1) "" else "s", x$start))
  print(.component_table(x), digits = digits, row.names = FALSE)
  invisible(x)
}

.component_table <- function(model) {
  data.frame(component = rownames(model$alpha), weight = unname(model$weights),
             rows = unname(colSums(model$responsibilities)),
             precision = unname(rowSums(model$alpha)), stringsAsFactors = FALSE)
}

#' @rdname dirmn_mixture-methods
#' @export
print.dirmn_mixture <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixtures (%s objective), %s rows x %s categories\n",
              if (x$objective == "dmn") "dmn" else "maximum-likelihood",
              .num(length(x$models[[1L]]$row_totals)), .num(ncol(x$models[[1L]]$alpha))))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("Criteria (%s scale; smaller is better):\n",
              if (x$objective == "dmn") "dmn's" else "R's -2 log-likelihood"))
  crit <- x$criteria
  crit$selected <- ifelse(crit$k == x$selected, "<-", "")
  print(crit[, c("k", "loglik", "aic", "bic", "laplace", "iterations", "converged",
                 "selected")], digits = max(digits, 7L), row.names = FALSE)
  cat(sprintf("\nSelected by %s: k = %d\n", toupper(x$select), x$selected))
  print(.component_table(.model(x)), digits = digits, row.names = FALSE)
  invisible(x)
}

#' @rdname dirmn_mixture-methods
#' @export
summary.dirmn_mixture <- function(object, components = NULL, top = 5L, ...) {
  model <- .model(object, components, list(...))
  top <- .check_count(top, "top", sys.call())
  p <- model$alpha / rowSums(model$alpha)
  tops <- lapply(seq_len(model$k), function(j) {
    o <- order(p[j, ], decreasing = TRUE)[seq_len(min(top, ncol(p)))]
    stats::setNames(p[j, o], colnames(p)[o])
  })
  names(tops) <- rownames(model$alpha)
  structure(
    list(call = object$call, criteria = object$criteria, select = object$select,
         selected = object$selected, objective = object$objective, k = model$k,
         components = .component_table(model), top = tops, loglik = model$loglik,
         aic = stats::AIC(model), bic = stats::BIC(model), converged = model$converged),
    class = "summary.dirmn_mixture"
  )
}

#' @rdname dirmn_mixture-methods
#' @export
print.summary.dirmn_mixture <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixtures (%s objective)\n",
              if (x$objective == "dmn") "dmn" else "maximum-likelihood"))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  print(x$criteria, digits = max(digits, 7L), row.names = FALSE)
  cat(sprintf("\nSelected by %s: k = %d; shown: k = %d\n", toupper(x$select), x$selected, x$k))
  cat("Log-likelihood ", format(x$loglik, digits = max(digits, 8L)), "; AIC ",
      format(x$aic, digits = max(digits, 8L)), ", BIC ", format(x$bic, digits = max(digits, 8L)),
      " (R's scale)\n\n", sep = "")
  print(x$components, digits = digits, row.names = FALSE)
  cat("\nLargest shares alpha / sum(alpha) per component:\n")
  for (j in names(x$top)) {
    cat(j, ": ", paste(sprintf("%s %.3g", names(x$top[[j]]), x$top[[j]]), collapse = ", "),
        "\n", sep = "")
  }
  invisible(x)
}

#' @rdname dirmn_mixture-methods
#' @export
plot.dirmn_mixture <- function(x, type = c("criteria", "components"), criterion = x$select,
                               components = NULL, top = 10L, ...) {
  call <- sys.call()
  type <- .match_choice(type, c("criteria", "components"), "type", call)
  if (type == "criteria") {
    criterion <- .match_choice(criterion, c("bic", "aic", "laplace"), "criterion", call)
    crit <- x$criteria
    y <- crit[[criterion]]
    best <- which.min(y)
    graphics::plot(crit$k, y, type = "b", pch = 1, xaxt = "n",
                   xlab = "number of components k",
                   ylab = sprintf("%s (%s scale)", toupper(criterion),
                                  if (x$objective == "dmn") "dmn's" else "R's"),
                   main = sprintf("Model selection by %s", toupper(criterion)), ...)
    graphics::axis(1L, at = crit$k)
    graphics::points(crit$k[best], y[best], pch = 19, col = "red", cex = 1.6)
    graphics::legend("topright", legend = sprintf("smallest: k = %d", crit$k[best]), pch = 19,
                     col = "red", bty = "n")
    return(invisible(x))
  }
  dots <- list(...)
  if ("k" %in% names(dots)) {
    components <- .model(x, components, dots["k"])$k
    dots$k <- NULL
  }
  do.call(plot, c(list(.model(x, components), top = top), dots))
  invisible(x)
}

#' @rdname dirmn_mixture-methods
#' @export
plot.dirmn_mixture_fit <- function(x, top = 10L, ...) {
  top <- .check_count(top, "top", sys.call())
  p <- x$alpha / rowSums(x$alpha)
  if (is.null(colnames(p))) colnames(p) <- paste0("V", seq_len(ncol(p)))
  keep <- order(apply(p, 2L, max), decreasing = TRUE)[seq_len(min(top, ncol(p)))]
  cols <- grDevices::hcl.colors(nrow(p), "Dark 3")
  graphics::barplot(p[, keep, drop = FALSE], beside = TRUE, col = cols, las = 2,
                    ylab = "alpha / sum(alpha)",
                    main = sprintf("Components of the k = %d mixture", x$k), ...)
  graphics::legend("topright", legend = sprintf("%s (weight %.2f)", rownames(p), x$weights),
                   fill = cols, bty = "n")
  invisible(x)
}
