# dirmn_reg_groups (dirmn_reg_test_groups, issue #29): per-group
# likelihood-ratio tests, DRIMSeq's differential usage workflow. Against
# each group's own fits by dirmn_reg() (on the group's columns with counts,
# full and null), pchisq(lower.tail = FALSE) and p.adjust(method = "BH");
# an untestable group's NA and status; the full design built from the null
# and full formulas; bad input.

# 12 samples in two conditions (and a batch of three levels); genes of 1
# to 5 transcripts: "g3"'s second transcript is empty, "g5" has one
# transcript (untestable), column 4 belongs to no gene (NA); the condition
# shifts the usage of "g1" and "g4".
groups_problem <- function(seed = 1729L) {
  set.seed(seed)
  n <- 12L
  sizes <- c(g1 = 3L, g2 = 2L, g3 = 4L, g4 = 5L, g5 = 1L, g6 = 3L, g7 = 2L)
  d <- data.frame(condition = factor(rep(c("a", "b"), n / 2L)),
                  batch = factor(rep(c("x", "y", "z"), each = 4L)))
  gene <- character()
  Y <- NULL
  for (g in names(sizes)) {
    k <- sizes[[g]]
    block <- t(vapply(seq_len(n), function(b) {
      base <- seq(1, 2, length.out = k)
      if (g %in% c("g1", "g4") && d$condition[b] == "b") base <- rev(base)^3
      pr <- rgamma(k, 30 * base / sum(base))
      stats::rmultinom(1L, sample(40:90, 1L), pr / sum(pr))[, 1L]
    }, numeric(k)))
    if (k == 1L) block <- t(block)
    if (g == "g3") block[, 2L] <- 0
    Y <- cbind(Y, block)
    gene <- c(gene, rep(g, k))
    if (g == "g1") {
      Y <- cbind(Y, sample(0:9, n, TRUE))
      gene <- c(gene, NA)
    }
  }
  colnames(Y) <- paste0("t", seq_len(ncol(Y)))
  d$Y <- Y
  list(data = d, Y = Y, gene = gene, genes = names(sizes))
}

# The group's columns with counts.
group_columns <- function(pr, g) which(pr$gene %in% g & colSums(pr$Y) > 0)

for (parametrization in c("meanprecision", "loglinear")) {
  test_that(sprintf("%s: each group against its own dirmn_reg fits, pchisq and p.adjust",
                    parametrization), {
    pr <- groups_problem()
    res <- dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene,
                            parametrization = parametrization)
    expect_s3_class(res, c("dirmn_reg_groups", "data.frame"))
    expect_identical(names(res), c("group", "categories", "loglik_full", "loglik_null",
                                   "statistic", "df", "p_value", "p_adjusted", "converged",
                                   "status"))
    expect_identical(res$group, pr$genes)
    expect_identical(rownames(res), pr$genes)
    expect_identical(attr(res, "tested"), length(pr$genes) - 1L)
    expect_identical(attr(res, "p_null"), 1L)
    expect_identical(attr(res, "covariates"), c("(Intercept)", "conditionb"))
    expect_identical(attr(res, "parametrization"), parametrization)
    for (i in seq_along(pr$genes)) {
      g <- pr$genes[[i]]
      cols <- group_columns(pr, g)
      expect_identical(res$categories[i], length(cols))
      if (g == "g5") next
      Yg <- pr$Y[, cols]
      full <- dirmn_reg(Yg ~ condition, data = pr$data, parametrization = parametrization)
      null <- dirmn_reg(Yg ~ 1, data = pr$data, parametrization = parametrization)
      expect_equal(res$loglik_full[i], full$loglik, tolerance = 1e-10)
      expect_equal(res$loglik_null[i], null$loglik, tolerance = 1e-10)
      expect_lt(abs(res$statistic[i] - 2 * (full$loglik - null$loglik)),
                1e-9 * abs(full$loglik))
      k <- length(cols)
      expect_equal(res$df[i], if (parametrization == "meanprecision") k - 1 else k)
      expect_equal(res$df[i], full$parameters - null$parameters)
      expect_equal(res$p_value[i], pchisq(res$statistic[i], res$df[i], lower.tail = FALSE),
                   tolerance = 1e-10)
      expect_true(res$converged[i])
      expect_identical(res$status[i], "ok")
    }
    # Benjamini-Hochberg over the groups tested, as R's p.adjust
    ok <- res$status == "ok"
    expect_equal(res$p_adjusted[ok], p.adjust(res$p_value[ok], method = "BH"),
                 tolerance = 1e-14)
    if (parametrization == "meanprecision") {
      expect_true(all(res$p_adjusted[c(1L, 4L)] < 0.05))
    }
  })
}

test_that("a group of one column with counts is NA with its status; NA groups are left out", {
  pr <- groups_problem()
  res <- dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene)
  g5 <- res["g5", ]
  expect_identical(g5$status, "invalid_argument")
  expect_identical(g5$categories, 1L)
  for (col in c("loglik_full", "loglik_null", "statistic", "df", "p_value", "p_adjusted")) {
    expect_true(is.na(g5[[col]]), info = col)
  }
  expect_false(g5$converged)
  # column 4 (NA) is in no group: giving it a group of its own adds a row
  gene <- pr$gene
  gene[4] <- "extra"
  more <- dirmn_reg_groups(Y ~ condition, data = pr$data, groups = gene)
  expect_identical(more$group, c("g1", "extra", pr$genes[-1]))
  expect_identical(more["g1", "loglik_full"], res["g1", "loglik_full"])
  # every test's adjustment counts the groups tested
  expect_equal(more$p_adjusted[more$status == "ok"],
               p.adjust(more$p_value[more$status == "ok"], method = "BH"), tolerance = 1e-14)
  # print(): the header and the groups, the untested one's status
  out <- capture.output(print(res))
  expect_match(out[1], "Per-group likelihood-ratio tests", fixed = TRUE)
  expect_true(any(grepl("7 groups, 6 tested, 1 not", out, fixed = TRUE)))
  expect_true(any(grepl("invalid_argument", out, fixed = TRUE)))
  short <- capture.output(print(res, n = 2))
  expect_identical(short[length(short)], "... 5 more groups")
  expect_false(any(grepl("g3", short, fixed = TRUE)))
})

test_that("the full design is the null design's columns, then the full model's others", {
  pr <- groups_problem()
  d <- pr$data
  res <- dirmn_reg_groups(Y ~ condition + batch, data = d, groups = pr$gene, null = ~ batch)
  expect_identical(attr(res, "covariates"),
                   c("(Intercept)", "batchy", "batchz", "conditionb"))
  expect_identical(attr(res, "p_null"), 3L)
  cols <- group_columns(pr, "g1")
  Yg <- pr$Y[, cols]
  full <- dirmn_reg(Yg ~ condition + batch, data = d, parametrization = "meanprecision")
  null <- dirmn_reg(Yg ~ batch, data = d, parametrization = "meanprecision")
  expect_equal(res$loglik_full[1], full$loglik, tolerance = 1e-10)
  expect_equal(res$loglik_null[1], null$loglik, tolerance = 1e-10)
  expect_identical(res$df[1], length(cols) - 1)
  # a two-sided null formula's left side is not used; factor groups; a
  # sparse response; groups as numbers
  same <- dirmn_reg_groups(Y ~ condition, data = d, groups = factor(pr$gene, levels = pr$genes),
                           null = Y ~ 1)
  base <- dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene)
  expect_identical(same$loglik_full, base$loglik_full)
  sp <- Matrix::Matrix(pr$Y, sparse = TRUE)
  sparse <- dirmn_reg_groups(sp ~ condition, data = d, groups = pr$gene)
  expect_equal(sparse$loglik_full, base$loglik_full, tolerance = 1e-12)
  num <- dirmn_reg_groups(Y ~ condition, data = d, groups = as.integer(sub("g", "", pr$gene)))
  expect_identical(num$group, 1:7)
  expect_identical(num$p_value, base$p_value)
  # a factor's levels order the groups, unused ones dropped
  rev_levels <- dirmn_reg_groups(Y ~ condition, data = d,
                                 groups = factor(pr$gene, levels = c("zz", rev(pr$genes))))
  expect_identical(rev_levels$group, rev(pr$genes))
  expect_identical(rev_levels$p_value, rev(base$p_value))
})

test_that("weights are repeated rows; rows with NA covariates are left out", {
  pr <- groups_problem()
  d <- pr$data
  d$w <- c(2, 2, 2, rep(1, 9))
  tw <- dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene, weights = w)
  rep_rows <- c(1:3, seq_len(12))
  dr <- d[rep_rows, ]
  tr <- dirmn_reg_groups(Y ~ condition, data = dr, groups = pr$gene)
  ok <- tw$status == "ok"
  expect_equal(tw$loglik_full[ok], tr$loglik_full[ok], tolerance = 1e-8)
  d$z <- c(NA, round(rnorm(11), 2))
  na <- dirmn_reg_groups(Y ~ condition + z, data = d, groups = pr$gene, null = ~ z)
  sub <- dirmn_reg_groups(Y ~ condition + z, data = d[-1, ], groups = pr$gene, null = ~ z)
  expect_identical(attr(na, "covariates"), c("(Intercept)", "z", "conditionb"))
  expect_equal(na$loglik_full, sub$loglik_full, tolerance = 1e-12)
})

test_that("hold_precision fits each null model at its full fit's precision", {
  pr <- groups_problem()
  t <- dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene)
  h <- dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene,
                        hold_precision = TRUE)
  expect_false(attr(t, "hold_precision"))
  expect_true(attr(h, "hold_precision"))
  ok <- t$status == "ok"
  expect_identical(h$status, t$status)
  expect_identical(h$df, t$df)
  expect_equal(h$loglik_full, t$loglik_full, tolerance = 1e-10)
  # a constrained null fit: its loglik no larger, the statistic no smaller
  expect_true(all(h$loglik_null[ok] <= t$loglik_null[ok] + 1e-9 * abs(t$loglik_null[ok])))
  expect_true(all(h$statistic[ok] >= t$statistic[ok] - 1e-9 * abs(t$loglik_full[ok])))
  expect_equal(h$p_value[ok], pchisq(h$statistic[ok], h$df[ok], lower.tail = FALSE),
               tolerance = 1e-10)
  expect_equal(h$p_adjusted[ok], p.adjust(h$p_value[ok], method = "BH"), tolerance = 1e-14)
  expect_true(any(grepl("null at the full fit's precision", capture.output(print(h)),
                        fixed = TRUE)))
  expect_error(dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene,
                                hold_precision = NA),
               "hold_precision must be TRUE or FALSE", class = "dirmn_error_invalid_argument")
})

test_that("bad input is an error naming what is wrong", {
  pr <- groups_problem()
  d <- pr$data
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene[-1]),
               sprintf("one entry per column of the response \\(%d\\), not of length %d",
                       ncol(pr$Y), ncol(pr$Y) - 1L),
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d,
                                groups = matrix(pr$gene, 1L)),
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene, null = ~ batch),
               "not nested in the full model: its design columns \"batchy\", \"batchz\"",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ batch, data = d, groups = pr$gene, null = ~ batch),
               "adds no covariates", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene, null = ~ 0),
               "null design has no covariates", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d), "groups is missing",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = rep(NA, ncol(pr$Y))),
               "no group", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene, null = "~ 1"),
               "null must be a formula", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene,
                                parametrization = "dm"),
               "parametrization must be one of", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_reg_groups(Y ~ condition, data = d, groups = pr$gene, p_null = 1),
               "unused argument p_null", class = "dirmn_error_invalid_argument")
  d$cond2 <- d$condition
  expect_error(dirmn_reg_groups(Y ~ condition + cond2, data = d, groups = pr$gene),
               "full design is not of full column rank: its covariate cond2b",
               class = "dirmn_error_invalid_argument")
  d$x <- c(Inf, rep(1, 11)) * seq_len(12)
  expect_error(dirmn_reg_groups(Y ~ x, data = d, groups = pr$gene),
               "row 1, covariate 2 \\(x\\)", class = "dirmn_error_invalid_parameter")
  expect_warning(dirmn_reg_groups(Y ~ condition, data = pr$data, groups = pr$gene,
                                  max_iterations = 1L),
                 "did not converge", class = "dirmn_convergence_warning")
})
