# bindings/names.tsv is the one table of user-facing names (issue #25); the
# package ships it as inst/names.tsv (a link to it in the git tree, followed
# by R CMD build). Every name of its r column must be something the package
# exports, accepts (an argument, or a value of a choice argument) or returns
# (a field of a result).

names_table <- function() {
  path <- system.file("names.tsv", package = "dirmn")
  expect_true(nzchar(path))
  read.delim(path, comment.char = "#", quote = "", stringsAsFactors = FALSE,
                    colClasses = "character", na.strings = character())
}

# Every exported function and registered S3 method of the package.
package_functions <- function() {
  ns <- asNamespace("dirmn")
  exports <- mget(getNamespaceExports(ns), envir = ns, inherits = TRUE)
  s3 <- getNamespaceInfo(ns, "S3methods")
  methods <- lapply(s3[, 3L], get, envir = ns)
  c(Filter(is.function, exports), Filter(is.function, methods))
}

package_vocabulary <- function() {
  fns <- package_functions()
  arguments <- unique(unlist(lapply(fns, function(f) names(formals(f)))))
  choices <- unique(unlist(lapply(fns, function(f) {
    unlist(lapply(formals(f), function(a) {
      if (is.call(a) && identical(a[[1L]], as.name("c"))) {
        v <- as.list(a)[-1L]
        unlist(Filter(is.character, v))
      }
    }))
  })))
  mite <- mite_table()
  fit <- dirmn_fit(mite)
  mix <- dirmn_mixture(mite, k = 1:2, starts = 1L)
  test <- dirmn_overdispersion_test(mite)
  reg <- names_regression()
  groups <- names_groups()
  moments <- dirmn_moments(c(1, 2, 3), size = 10)
  group_test <- dirmn_test_groups(mite, rep(1:2, length.out = nrow(mite)))
  proportion_test <- dirmn_test_proportions(mite, colSums(mite) / sum(mite))
  power <- dirmn_power(rbind(c(1, 2, 3), c(3, 2, 1)), 4, 20, tables = 5, seed = 1)
  power_proportions <- dirmn_power_proportions(c(1, 2, 3), c(1, 2, 3) / 6, 4, 20, tables = 5,
                                               seed = 1)
  fields <- unique(c(names(fit), names(mix), names(mix$models[[1L]]), names(mix$criteria),
                     names(test), names(dirmn_loglik_sum(mite, rep(1, ncol(mite)))),
                     names(reg), names(summary(reg)), names(wald_test(reg)),
                     names(groups), names(attributes(groups)), names(moments),
                     names(group_test), names(proportion_test), names(power),
                     names(power_proportions)))
  list(exports = getNamespaceExports("dirmn"), arguments = arguments, choices = choices,
       fields = fields, generics = s3_generics())
}

# The generics the package registers S3 methods for (vcov, predict, ...):
# an idea reached through one of them (names.tsv's r column names the
# generic) is a method of the package's class; by class, the generics with
# a method for it.
s3_generics <- function(class = NULL) {
  s3 <- getNamespaceInfo(asNamespace("dirmn"), "S3methods")
  unique(s3[is.null(class) | s3[, 2L] %in% class, 1L])
}

# A small regression (dirmn_reg) for its fields; `...` for dirmn_reg.
names_regression <- function(...) {
  set.seed(3)
  d <- data.frame(x = rnorm(30))
  y <- matrix(rpois(90, 5), 30, 3)
  dirmn_reg(y ~ x, data = d, ...)
}

# A small per-group test (dirmn_reg_groups): two groups of 3 and 2 columns.
names_groups <- function() {
  set.seed(3)
  d <- data.frame(x = rnorm(30))
  y <- matrix(rpois(150, 5), 30, 5)
  dirmn_reg_groups(y ~ x, data = d, groups = c("a", "a", "a", "b", "b"))
}

test_that("names.tsv is shipped with its header and an r column", {
  tab <- names_table()
  expect_identical(names(tab), c("idea", "c", "r", "julia", "python"))
  expect_gt(nrow(tab), 30L)
  expect_false(anyDuplicated(tab$idea) > 0L)
})

test_that("every r-column name of names.tsv is an export, argument, choice or field of the package", {
  tab <- names_table()
  voc <- package_vocabulary()
  known <- unique(unlist(voc))
  r <- tab$r[tab$r != "-"]
  for (i in seq_along(r)) {
    entry <- r[[i]]
    if (grepl(" = ", entry, fixed = TRUE)) {
      # an argument and its value ("full = FALSE")
      parts <- strsplit(entry, " = ", fixed = TRUE)[[1L]]
      expect_true(parts[[1L]] %in% voc$arguments, info = entry)
      expect_true(parts[[2L]] %in% c("TRUE", "FALSE") || parts[[2L]] %in% voc$choices,
                  info = entry)
    } else {
      expect_true(entry %in% known, info = sprintf("names.tsv r name %s", entry))
    }
  }
  # the table's ideas land where they belong
  idea <- function(name) tab$r[tab$idea == name]
  expect_true(idea("overdispersion_test") %in% voc$exports)
  expect_true(idea("mixing_weights") %in% voc$exports)
  for (name in c("std_error_alpha", "std_error_log_alpha", "zero_columns", "parameters",
                 "observations", "precision", "multinomial_limit")) {
    expect_true(idea(name) %in% voc$fields, info = name)
  }
  for (name in c("tolerance", "max_iterations", "m_step_iterations", "weights", "start", "init",
                 "starts", "seed", "select", "mixture_objective")) {
    expect_true(idea(name) %in% voc$arguments, info = name)
  }
  for (name in c("init_mixed", "init_kmeans", "init_kmeanspp", "init_soft_kmeans",
                 "objective_ml", "objective_dmn", "test_lrt", "test_score")) {
    expect_true(idea(name) %in% voc$choices, info = name)
  }
  # regression (issue #29): the fitting function, its object's field, and
  # the generics with a dirmn_reg method (wald_test one of the package's own)
  expect_true(idea("regression") %in% voc$exports)
  expect_true(idea("reg_hessian_definite") %in% names(names_regression()))
  for (name in c("reg_covariance", "reg_predict", "reg_wald_test", "reg_predict_with_precision")) {
    expect_true(idea(name) %in% s3_generics("dirmn_reg"), info = name)
  }
  expect_true(idea("reg_wald_test") %in% voc$exports)
  expect_identical(idea("reg_std_errors"), "-")
  # the regression's parametrisations: arguments of dirmn_reg and fields of
  # its object, their values choices of dirmn_reg's arguments
  reg <- names_regression()
  mp <- suppressWarnings(names_regression(parametrization = idea("reg_mean_precision"),
                                          contrast = idea("reg_contrast_sum")))
  for (name in c("reg_parametrization", "reg_contrast", "reg_reference")) {
    expect_true(idea(name) %in% names(formals(dirmn_reg)), info = name)
    expect_true(idea(name) %in% names(reg), info = name)
  }
  for (name in c("reg_loglinear", "reg_mean_precision", "reg_contrast_reference",
                 "reg_contrast_sum")) {
    expect_true(idea(name) %in% voc$choices, info = name)
  }
  expect_identical(reg[[idea("reg_parametrization")]], idea("reg_loglinear"))
  expect_identical(mp[[idea("reg_parametrization")]], idea("reg_mean_precision"))
  expect_identical(mp[[idea("reg_contrast")]], idea("reg_contrast_sum"))
  expect_identical(mp[[idea("reg_reference")]], 1L)
  for (name in c("precision", "reg_log_precision", "reg_std_error_log_precision")) {
    expect_true(idea(name) %in% names(reg), info = name)
    expect_null(reg[[idea(name)]])
    expect_true(is.numeric(mp[[idea(name)]]) && length(mp[[idea(name)]]) == 1L, info = name)
  }
  expect_equal(mp[[idea("precision")]], exp(mp[[idea("reg_log_precision")]]))
  # the precision's covariates: an argument of dirmn_reg and of its
  # predict() method (the new rows' matrix), and a field of the object (NULL
  # without them); with them the log precision and its standard errors have
  # one entry per covariate, named by it, and the precision one per row
  pd_name <- idea("reg_precision_design")
  expect_true(pd_name %in% names(formals(dirmn_reg)))
  expect_true(pd_name %in% names(formals(getS3method(idea("reg_predict_with_precision"),
                                                     "dirmn_reg"))))
  expect_true(pd_name %in% names(reg))
  expect_null(reg[[pd_name]])
  expect_null(mp[[pd_name]])
  args <- list(parametrization = idea("reg_mean_precision"), ~ x)
  names(args)[2] <- pd_name
  pd <- suppressWarnings(do.call(names_regression, args))
  expect_identical(colnames(pd[[pd_name]]), c("(Intercept)", "x"))
  for (name in c("reg_log_precision", "reg_std_error_log_precision")) {
    expect_identical(names(pd[[idea(name)]]), c("(Intercept)", "x"), info = name)
  }
  expect_length(pd[[idea("precision")]], 30L)
  expect_identical(dim(predict(pd, newdata = data.frame(x = c(0, 1)))), c(2L, 3L))
  # the per-group tests: the function, its arguments, its columns and the
  # attribute `tested`; a test's statistic, df and p-value as wald_test's
  # table names them
  expect_true(idea("reg_test_groups") %in% voc$exports)
  for (name in c("reg_groups", "reg_null", "reg_hold_precision", "weights",
                 "reg_parametrization", "tolerance", "max_iterations")) {
    expect_true(idea(name) %in% names(formals(dirmn_reg_groups)), info = name)
  }
  gr <- names_groups()
  for (name in c("reg_group_label", "columns_with_counts", "reg_loglik_full",
                 "reg_loglik_null", "test_statistic", "test_df", "test_p_value",
                 "test_p_adjusted", "converged", "reg_group_status")) {
    expect_true(idea(name) %in% names(gr), info = name)
  }
  for (name in c("test_statistic", "test_df", "test_p_value")) {
    expect_true(idea(name) %in% names(wald_test(reg)), info = name)
  }
  expect_identical(attr(gr, idea("reg_groups_tested")), 2L)
  expect_false(attr(gr, idea("reg_hold_precision")))
  expect_identical(gr[[idea("reg_group_status")]], c("ok", "ok"))
  expect_identical(gr[[idea("columns_with_counts")]], c(3L, 2L))
})

test_that("the sampling, moments, group-test and proportion-test names of names.tsv land where they belong", {
  tab <- names_table()
  idea <- function(name) tab$r[tab$idea == name]
  exports <- getNamespaceExports("dirmn")
  for (name in c("sample", "sample_rowwise", "moments", "counts_to_sparse", "group_test")) {
    expect_true(idea(name) %in% exports, info = name)
  }
  # the per-row form is rdirmn's rowwise = TRUE
  expect_identical(idea("sample"), idea("sample_rowwise"))
  expect_true("rowwise" %in% names(formals(rdirmn)))
  for (name in c("sample_size", "sample_component", "seed", "mixing_weights", "first_row")) {
    expect_true(idea(name) %in% names(formals(rdirmn)), info = name)
  }
  # first_row: the seed's rows before a block, rdirmn's argument by that name
  expect_identical(idea("first_row"), "first_row")
  expect_identical(formals(rdirmn)[[idea("first_row")]], 0)
  block <- do.call(rdirmn, stats::setNames(list(3, 5, c(1, 2), 1, 2), c(
    "n", "size", "alpha", idea("seed"), idea("first_row"))))
  expect_identical(block, rdirmn(5, 5, c(1, 2), seed = 1)[3:5, ])
  for (name in c("moment_mean", "moment_variance", "moment_covariance")) {
    expect_true(idea(name) %in% names(dirmn_moments(c(1, 2), size = 3)), info = name)
  }
  expect_true(idea("sample_size") %in% names(formals(dirmn_moments)))
  # simulate() of every fitted class; as.matrix() of a prepared table
  for (cls in c("dirmn_fit", "dirmn_mixture", "dirmn_mixture_fit", "dirmn_reg")) {
    expect_true(idea("simulate") %in% s3_generics(cls), info = cls)
  }
  expect_true(idea("counts_to_dense") %in% s3_generics("dirmn_counts"))
  expect_true(idea("counts_to_sparse") %in% s3_generics("dirmn_counts"))
  expect_true(idea("bootstrap") %in% names(formals(dirmn_test_groups)))
  expect_true("bootstrap" %in% eval(formals(dirmn_test_groups)$method))
  mite <- mite_table()
  gt <- dirmn_test_groups(mite, rep(1:2, length.out = nrow(mite)), method = "bootstrap",
                          B = 9, seed = 1)
  for (name in c("p_value_bootstrap", "loglik_groups", "bootstrap")) {
    expect_true(idea(name) %in% names(gt), info = name)
  }
  expect_identical(gt[[idea("bootstrap")]], 9L)
  # the sample attribute of a mixture draw
  x <- rdirmn(4, 5, rbind(c(1, 2), c(2, 1)), seed = 1)
  expect_true(idea("sample_component") %in% names(attributes(x)))
  # the group test's power: the function, its arguments (power.t.test's
  # n and sig.level) and the fields of its power.htest
  expect_true(idea("power") %in% exports)
  for (name in c("power_tables", "power_level", "power_rows_per_group", "tolerance",
                 "max_iterations", "seed", "sample_size")) {
    expect_true(idea(name) %in% names(formals(dirmn_power)), info = name)
  }
  pw <- dirmn_power(rbind(c(1, 2, 3), c(3, 2, 1)), c(4, 5), 20, tables = 20, sig.level = 0.1,
                    seed = 1)
  expect_s3_class(pw, "power.htest")
  for (name in c("power_tables", "power_level", "power_rows_per_group", "power_value")) {
    expect_true(idea(name) %in% names(pw), info = name)
  }
  expect_identical(pw[[idea("power_tables")]], 20L)
  expect_identical(pw[[idea("power_level")]], 0.1)
  expect_identical(pw[[idea("power_rows_per_group")]], c(4L, 5L))
  expect_identical(pw[[idea("power_value")]], pw$rejected / 20)
  # the group test's statistic: an argument of both functions, its values
  # their choices (the likelihood ratio the default), recorded in results
  for (f in list(dirmn_test_groups, dirmn_power)) {
    expect_true(idea("group_statistic") %in% names(formals(f)))
    expect_identical(eval(formals(f)[[idea("group_statistic")]]),
                     c(idea("group_statistic_lrt"), idea("group_statistic_xmcupo"),
                       idea("group_statistic_xoc")))
  }
  g <- rep(1:2, length.out = nrow(mite))
  lrt <- dirmn_test_groups(mite, g)
  xm <- dirmn_test_groups(mite, g, statistic = idea("group_statistic_xmcupo"))
  expect_identical(lrt$statistic_kind, idea("group_statistic_lrt"))
  expect_identical(xm$statistic_kind, idea("group_statistic_xmcupo"))
  expect_identical(names(xm[[idea("group_statistic")]]), "Xmcupo")
  expect_identical(unname(xm$parameter), unname(lrt$parameter) - 1)   # (G - 1)(P - 1)
  xo <- dirmn_test_groups(mite, g, statistic = idea("group_statistic_xoc"))
  expect_identical(xo$statistic_kind, idea("group_statistic_xoc"))
  expect_identical(names(xo[[idea("group_statistic")]]), "Xoc")
  expect_identical(unname(xo$parameter), 1)                           # G - 1
  expect_identical(
    dirmn_test_groups(mite, g, statistic = idea("group_statistic_lrt"))$statistic,
    lrt$statistic)
  pwx <- dirmn_power(rbind(c(1, 2, 3), c(3, 2, 1)), c(4, 5), 20, tables = 20, seed = 1,
                     statistic = idea("group_statistic_xmcupo"))
  expect_identical(pwx$statistic_kind, idea("group_statistic_xmcupo"))
  pwo <- dirmn_power(rbind(c(1, 2, 3), c(3, 2, 1)), c(4, 5), 20, tables = 20, seed = 1,
                     statistic = idea("group_statistic_xoc"))
  expect_identical(pwo$statistic_kind, idea("group_statistic_xoc"))
  expect_identical(pw$statistic_kind, idea("group_statistic_lrt"))
  # the rows against a given composition (HMP's Xsc): the function, its
  # composition argument (p, as stats::chisq.test names it) and the
  # field theta of its htest
  expect_true(idea("proportion_test") %in% exports)
  prop <- get(idea("proportion_test"), envir = asNamespace("dirmn"))
  expect_true(idea("proportion_test_null") %in% names(formals(prop)))
  args <- list(mite, colSums(mite) / sum(mite))
  names(args) <- c("x", idea("proportion_test_null"))
  pt <- do.call(prop, args)
  expect_s3_class(pt, "htest")
  expect_true(idea("proportion_test_theta") %in% names(pt))
  expect_true(is.numeric(pt[[idea("proportion_test_theta")]]))
  expect_identical(names(pt$statistic), "Xsc")
  # the proportion test's power (HMP's MC.Xsc.statistics): the function,
  # its arguments named as the group test's power and the proportion test
  # name them (n the rows of each table, size, tables, sig.level, seed, p)
  # and the fields of its power.htest
  expect_identical(idea("power_proportions"), "dirmn_power_proportions")
  expect_true(idea("power_proportions") %in% exports)
  pprop <- get(idea("power_proportions"), envir = asNamespace("dirmn"))
  for (name in c("proportion_test_null", "power_rows_per_group", "sample_size", "power_tables",
                 "power_level", "seed")) {
    expect_true(idea(name) %in% names(formals(pprop)), info = name)
  }
  args <- list(c(2, 3, 1), c(2, 3, 1) / 6, 7, 30, 25, 0.1, 4)
  names(args) <- c("alpha", idea("proportion_test_null"), idea("power_rows_per_group"),
                   idea("sample_size"), idea("power_tables"), idea("power_level"), idea("seed"))
  pp <- do.call(pprop, args)
  expect_s3_class(pp, "power.htest")
  for (name in c("power_tables", "power_level", "power_rows_per_group", "power_value", "seed")) {
    expect_true(idea(name) %in% names(pp), info = name)
  }
  expect_identical(pp[[idea("power_tables")]], 25L)
  expect_identical(pp[[idea("power_level")]], 0.1)
  expect_identical(pp[[idea("power_rows_per_group")]], 7L)
  expect_identical(pp[[idea("power_value")]], pp$rejected / 25)
  expect_identical(pp[[idea("seed")]], 4)
})

test_that("the names before version 0.3.0 are gone from arguments and results", {
  voc <- package_vocabulary()
  for (old in c("se_alpha", "se_log_alpha", "objective_type", "tol", "maxit", "order")) {
    expect_false(old %in% c(voc$arguments, voc$fields), info = old)
  }
  expect_false(any(c("kmeans++", "soft") %in% voc$choices))
})

test_that("old argument names still work, with a deprecation warning", {
  mite <- mite_table()
  expect_warning(f <- dirmn_fit(mite, tol = 1e-8), "tol is deprecated; use tolerance",
                 class = "dirmn_deprecated_warning")
  expect_equal(coef(f), coef(dirmn_fit(mite, tolerance = 1e-8)))
  expect_warning(dirmn_fit(mite, maxit = 50), class = "deprecatedWarning")
  expect_error(suppressWarnings(dirmn_fit(mite, tol = 1e-8, tolerance = 1e-8)), "once",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_fit(mite, tolerence = 1e-8), "unused argument tolerence",
               class = "dirmn_error_invalid_argument")
  expect_warning(m <- dirmn_mixture(mite, k = 2, starts = 1L, init = "kmeans++"),
                 "init = \"kmeans\\+\\+\" is deprecated; use init = \"kmeanspp\"",
                 class = "dirmn_deprecated_warning")
  expect_identical(coef(m), coef(dirmn_mixture(mite, k = 2, starts = 1L, init = "kmeanspp")))
  expect_warning(dirmn_mixture(mite, k = 2, starts = 1L, init = "soft"), "soft_kmeans",
                 class = "dirmn_deprecated_warning")
  expect_warning(dirmn_mixture(mite, k = 2, starts = 1L, maxit = 100),
                 class = "dirmn_deprecated_warning")
  expect_error(dirmn_mixture(mite, k = 2, init = "kmeans+"), "\"mixed\", \"kmeanspp\"",
               class = "dirmn_error_invalid_argument")
})
