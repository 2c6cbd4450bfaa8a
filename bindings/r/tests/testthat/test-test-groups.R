# The test of one Dirichlet-multinomial against one per group of rows
# (dirmn_test_groups, issue #30), against the package's single-alpha fits
# of the groups' rows (dirmn_fit: another path through libdirmn) and R's
# chi-square tail.

# 2 (sum of the groups' fitted log pmfs - the pooled fit's), rows with NA
# groups left out.
ref_group_lrt <- function(x, groups) {
  keep <- !is.na(groups)
  x <- x[keep, , drop = FALSE]
  groups <- groups[keep]
  pooled <- dirmn_fit(x)$loglik
  per_group <- vapply(split(seq_len(nrow(x)), groups, drop = TRUE),
                      function(rows) dirmn_fit(x[rows, , drop = FALSE])$loglik, 0)
  2 * (sum(per_group) - pooled)
}

group_table <- function(alpha1, alpha2, n = 40, seed = 1) {
  set.seed(seed)
  x <- rbind(ref_rdirmn(n, 80 + rpois(n, 40), alpha1), ref_rdirmn(n, 80 + rpois(n, 40), alpha2))
  colnames(x) <- paste0("c", seq_len(ncol(x)))
  x
}

test_that("the statistic, df and p-value agree with fits of the groups' rows", {
  mite <- mite_table()
  g <- rep(c("a", "b", "c"), length.out = nrow(mite))
  t3 <- dirmn_test_groups(mite, g)
  expect_s3_class(t3, "htest")
  ref <- ref_group_lrt(mite, g)
  expect_equal(unname(t3$statistic), ref, tolerance = 1e-6)
  expect_identical(names(t3$statistic), "LRT")
  expect_identical(names(t3$parameter), "df")
  expect_equal(unname(t3$parameter), 2 * 35)
  expect_equal(t3$p.value, pchisq(ref, 2 * 35, lower.tail = FALSE), tolerance = 1e-6)
  expect_identical(t3$p_value_chisq, t3$p.value)
  expect_true(is.na(t3$p_value_bootstrap))
  expect_identical(t3$B, 0L)
  expect_identical(t3$groups, 3L)
  expect_identical(t3$levels, c("a", "b", "c"))
  expect_identical(t3$categories, 35L)
  expect_true(t3$converged)
  expect_equal(t3$loglik_null, dirmn_fit(mite)$loglik, tolerance = 1e-9)
  expect_equal(t3$loglik_groups - t3$loglik_null, ref / 2, tolerance = 1e-6)
  expect_identical(unname(t3$estimate), c(t3$loglik_null, t3$loglik_groups))
  expect_identical(t3$data.name, "mite by g")

  # NA rows are left out; a column without counts is not counted in P;
  # a factor's unused levels are not groups
  x <- cbind(mite, empty = 0)
  f <- factor(rep(c("u", "v", NA), length.out = nrow(x)), levels = c("w", "u", "v"))
  t2 <- dirmn_test_groups(x, f)
  ref2 <- ref_group_lrt(x, f)
  expect_equal(unname(t2$statistic), ref2, tolerance = 1e-6)
  expect_identical(t2$categories, 35L)
  expect_equal(unname(t2$parameter), 35)
  expect_identical(t2$levels, c("u", "v"))
  expect_equal(t2$p.value, pchisq(ref2, 35, lower.tail = FALSE), tolerance = 1e-6)
  # a sparse table and a prepared one give the same test
  expect_equal(dirmn_test_groups(Matrix::Matrix(x, sparse = TRUE), f)$statistic, t2$statistic,
               tolerance = 1e-10)
  ct <- dirmn_counts(x)
  expect_equal(dirmn_test_groups(ct, f)$statistic, t2$statistic, tolerance = 1e-10)
  close(ct)
  # numeric groups
  expect_equal(dirmn_test_groups(mite, rep(1:2, 35))$statistic,
               dirmn_test_groups(mite, rep(c("p", "q"), 35))$statistic)
})

test_that("the test finds different compositions and not identical ones", {
  different <- group_table(c(4, 2, 1, 1, 0.5), c(1, 1, 2, 4, 0.5), seed = 3)
  g <- rep(1:2, each = 40)
  td <- dirmn_test_groups(different, g)
  expect_lt(td$p.value, 1e-8)
  expect_equal(unname(td$statistic), ref_group_lrt(different, g), tolerance = 1e-6)
  same <- group_table(c(4, 2, 1, 1, 0.5), c(4, 2, 1, 1, 0.5), seed = 4)
  ts <- dirmn_test_groups(same, g)
  expect_gt(ts$p.value, 0.01)
  expect_equal(unname(ts$statistic), ref_group_lrt(same, g), tolerance = 1e-6)
  tb <- dirmn_test_groups(different, g, method = "bootstrap", B = 49, seed = 2)
  expect_equal(tb$p.value, 1 / 50)
  tsb <- dirmn_test_groups(same, g, method = "bootstrap", B = 49, seed = 2)
  expect_gt(tsb$p.value, 0.01)
})

test_that("the bootstrap p-value is (1 + #exceedances) / (B + 1), reproducible with a seed", {
  mite <- mite_table()
  g <- rep(c("a", "b"), 35)
  B <- 39
  tb <- dirmn_test_groups(mite, g, method = "bootstrap", B = B, seed = 17)
  expect_s3_class(tb, "htest")
  expect_identical(tb$B, as.integer(B))
  expect_identical(tb$seed, 17)
  expect_identical(tb$p.value, tb$p_value_bootstrap)
  expect_gte(tb$p.value, 1 / (B + 1))
  expect_lte(tb$p.value, 1)
  hits <- tb$p.value * (B + 1) - 1
  expect_equal(hits, round(hits), tolerance = 1e-9)
  # the chi-square p-value is kept, and the statistic is the LRT's
  tl <- dirmn_test_groups(mite, g)
  expect_identical(tb$p_value_chisq, tl$p.value)
  expect_identical(tb$statistic, tl$statistic)
  expect_identical(dirmn_test_groups(mite, g, method = "bootstrap", B = B, seed = 17), tb)
  set.seed(3)
  a <- dirmn_test_groups(mite, g, method = "bootstrap", B = 19)
  set.seed(3)
  expect_identical(dirmn_test_groups(mite, g, method = "bootstrap", B = 19), a)
  expect_true(is.numeric(a$seed) && length(a$seed) == 1L)
})

test_that("bad arguments of dirmn_test_groups are errors naming them", {
  mite <- mite_table()
  g <- rep(1:2, 35)
  expect_error(dirmn_test_groups(mite, g[-1]), "groups has length 69",
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_test_groups(mite, rep("a", 70)), "groups must have at least two",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, c(1, rep(NA, 69))), "groups must have at least two",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, list(1, 2)), "groups",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, g, B = -1), "B must",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, g, method = "bootstrap", B = 0), "B must",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, g, method = "permutation"), "method",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, g, seed = -2, method = "bootstrap", B = 5), "seed",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite, g, tolerance = 0), "tolerance",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_groups(mite), "groups", class = "dirmn_error_invalid_argument")
  # a group without counts leaves fewer than two groups: the library says so
  z <- mite
  z[g == 2, ] <- 0
  expect_error(dirmn_test_groups(z, g), class = "dirmn_error_invalid_argument")
})

# HMP 2.0.1's saliva, throat and tonsils tables (tests/data: samples are
# rows, 21 taxa), as the package's tests carry them.
hmp_table <- function(name) {
  as.matrix(read.csv(test_path("data", paste0("hmp_", name, ".csv")), row.names = 1))
}

hmp_groups <- function(names) {
  tabs <- lapply(names, hmp_table)
  list(x = do.call(rbind, tabs), g = rep(names, vapply(tabs, nrow, 0L)))
}

test_that("Xmcupo reproduces HMP's Xmcupo.sevsample on saliva, throat and tonsils", {
  all3 <- hmp_groups(c("saliva", "throat", "tonsils"))
  expect_identical(dim(all3$x), c(70L, 21L))
  t3 <- dirmn_test_groups(all3$x, all3$g, statistic = "xmcupo")
  expect_s3_class(t3, "htest")
  # HMP 2.0.1: Xmcupo.sevsample(list(saliva, throat, tonsils))
  expect_equal(unname(t3$statistic), 150.443851750275, tolerance = 1e-9)
  expect_identical(names(t3$statistic), "Xmcupo")
  expect_identical(unname(t3$parameter), (3 - 1) * (21 - 1))
  expect_equal(t3$p.value, pchisq(unname(t3$statistic), 40, lower.tail = FALSE),
               tolerance = 1e-9)
  expect_identical(t3$statistic_kind, "xmcupo")
  expect_match(t3$method, "^HMP's Xmcupo test")
  expect_match(t3$method, "(chi-square)", fixed = TRUE)
  # the log-likelihoods are still the fits', as for the likelihood ratio
  lrt <- dirmn_test_groups(all3$x, all3$g)
  expect_identical(t3$estimate, lrt$estimate)
  st <- hmp_groups(c("saliva", "throat"))
  expect_equal(unname(dirmn_test_groups(st$x, st$g, statistic = "xmcupo")$statistic),
               98.3973853587345, tolerance = 1e-9)
  tt <- hmp_groups(c("throat", "tonsils"))
  t2 <- dirmn_test_groups(tt$x, tt$g, statistic = "xmcupo")
  expect_equal(unname(t2$statistic), 3.24781427884673, tolerance = 1e-9)
  expect_equal(t2$p.value, 0.99999189153229, tolerance = 1e-9)
  expect_identical(unname(t2$parameter), 20)
})

test_that("the likelihood ratio reproduces HMP's Xdc.sevsample (est = \"mle\")", {
  all3 <- hmp_groups(c("saliva", "throat", "tonsils"))
  t3 <- dirmn_test_groups(all3$x, all3$g)
  expect_equal(unname(t3$statistic), 529.509073461, tolerance = 1e-9)
  expect_identical(unname(t3$parameter), (3 - 1) * 21)
  expect_identical(names(t3$statistic), "LRT")
  expect_identical(t3$statistic_kind, "lrt")
  expect_match(t3$method, "^Likelihood-ratio test")
  expect_identical(dirmn_test_groups(all3$x, all3$g, statistic = "lrt"), t3)
})

test_that("Xmcupo's bootstrap p-value is on its grid and reproducible with a seed", {
  tt <- hmp_groups(c("throat", "tonsils"))
  B <- 39
  tb <- dirmn_test_groups(tt$x, tt$g, method = "bootstrap", B = B, seed = 5,
                          statistic = "xmcupo")
  expect_identical(tb$B, as.integer(B))
  expect_identical(tb$p.value, tb$p_value_bootstrap)
  hits <- tb$p.value * (B + 1) - 1
  expect_equal(hits, round(hits), tolerance = 1e-9)
  # throat and tonsils do not differ (chi-square p-value 0.99999)
  expect_gt(tb$p.value, 0.5)
  expect_match(tb$method, "Xmcupo.*parametric bootstrap, B = 39")
  expect_equal(unname(tb$statistic), 3.24781427884673, tolerance = 1e-9)
  expect_identical(dirmn_test_groups(tt$x, tt$g, method = "bootstrap", B = B, seed = 5,
                                     statistic = "xmcupo"), tb)
  # saliva against throat differ by far: no bootstrap table reaches it
  st <- hmp_groups(c("saliva", "throat"))
  sb <- dirmn_test_groups(st$x, st$g, method = "bootstrap", B = B, seed = 5,
                          statistic = "xmcupo")
  expect_equal(sb$p.value, 1 / (B + 1))
  # other seeds give other bootstrap samples (saliva's rows in two halves)
  saliva <- hmp_table("saliva")
  halves <- rep(c("a", "b"), 12)
  ps <- vapply(1:6, function(s) {
    dirmn_test_groups(saliva, halves, method = "bootstrap", B = 19, seed = s,
                      statistic = "xmcupo")$p.value
  }, 0)
  expect_gt(length(unique(ps)), 1L)
})

test_that("Xoc reproduces HMP's Xoc.sevsample on saliva, throat and tonsils", {
  all3 <- hmp_groups(c("saliva", "throat", "tonsils"))
  t3 <- dirmn_test_groups(all3$x, all3$g, statistic = "xoc")
  expect_s3_class(t3, "htest")
  # HMP 2.0.1: Xoc.sevsample(list(saliva, throat, tonsils), epsilon = 1e-10)
  expect_equal(unname(t3$statistic), 107.907114781439, tolerance = 1e-8)
  expect_identical(names(t3$statistic), "Xoc")
  expect_identical(names(t3$parameter), "df")
  expect_identical(unname(t3$parameter), 3 - 1)
  expect_equal(t3$p.value, pchisq(unname(t3$statistic), 2, lower.tail = FALSE),
               tolerance = 1e-9)
  expect_identical(t3$p.value, t3$p_value_chisq)
  expect_identical(t3$statistic_kind, "xoc")
  expect_match(t3$method, "^HMP's Xoc test")
  expect_match(t3$method, "(chi-square)", fixed = TRUE)
  expect_identical(t3$groups, 3L)
  # the statistic is the likelihood ratio of the shared-precision fit
  # (loglik_null) against the groups' own fits (as for the likelihood ratio)
  lrt <- dirmn_test_groups(all3$x, all3$g)
  expect_identical(t3$loglik_groups, lrt$loglik_groups)
  expect_equal(unname(t3$statistic), 2 * (t3$loglik_groups - t3$loglik_null),
               tolerance = 1e-9)
  expect_gt(t3$loglik_null, lrt$loglik_null)
  st <- hmp_groups(c("saliva", "throat"))
  ts <- dirmn_test_groups(st$x, st$g, statistic = "xoc")
  expect_equal(unname(ts$statistic), 27.9373973570764, tolerance = 1e-8)
  expect_equal(ts$p.value, 1.25304413067795e-07, tolerance = 1e-7)
  expect_identical(unname(ts$parameter), 1)
  tt <- hmp_groups(c("throat", "tonsils"))
  t2 <- dirmn_test_groups(tt$x, tt$g, statistic = "xoc")
  expect_equal(unname(t2$statistic), 25.5870610596612, tolerance = 1e-8)
  expect_equal(t2$p.value, 4.22865448324039e-07, tolerance = 1e-7)
  expect_identical(unname(t2$parameter), 1)
})

test_that("Xoc's bootstrap p-value is on its grid and reproducible with a seed", {
  tt <- hmp_groups(c("throat", "tonsils"))
  B <- 49
  tb <- dirmn_test_groups(tt$x, tt$g, method = "bootstrap", B = B, seed = 3,
                          statistic = "xoc")
  expect_identical(tb$B, as.integer(B))
  expect_identical(tb$statistic_kind, "xoc")
  expect_identical(tb$p.value, tb$p_value_bootstrap)
  expect_match(tb$method, "Xoc.*parametric bootstrap, B = 49")
  expect_equal(unname(tb$statistic), 25.5870610596612, tolerance = 1e-8)
  # the observed statistic is far out (chi-square p-value 4e-7): no
  # bootstrap table reaches it
  expect_equal(tb$p.value, 1 / (B + 1))
  expect_identical(dirmn_test_groups(tt$x, tt$g, method = "bootstrap", B = B, seed = 3,
                                     statistic = "xoc"), tb)
})

test_that("a bad statistic is an error naming the argument and its values", {
  mite <- mite_table()
  g <- rep(1:2, 35)
  for (bad in list("Xmcupo", "Xoc", "wald", c("lrt", "xmcupo", "x"), NA_character_, 1L)) {
    expect_error(dirmn_test_groups(mite, g, statistic = bad),
                 "statistic must be one of \"lrt\", \"xmcupo\", \"xoc\"",
                 class = "dirmn_error_invalid_argument")
  }
})

# The pooled proportions of a table: HMP's pi0 of one group's rows.
pooled <- function(x) colSums(x) / sum(x)

test_that("dirmn_test_proportions reproduces HMP's Xsc.onesample on saliva, throat and tonsils", {
  saliva <- hmp_table("saliva")
  throat <- hmp_table("throat")
  tonsils <- hmp_table("tonsils")
  expect_identical(dim(saliva), c(24L, 21L))
  # HMP 2.0.1: Xsc.onesample(saliva, pooled(throat))
  ts <- dirmn_test_proportions(saliva, pooled(throat))
  expect_s3_class(ts, "htest")
  expect_equal(unname(ts$statistic), 366.142260583136, tolerance = 1e-9)
  expect_identical(names(ts$statistic), "Xsc")
  expect_identical(names(ts$parameter), "df")
  expect_identical(unname(ts$parameter), 20)
  expect_identical(ts$rows, 24L)
  expect_identical(ts$categories, 21L)
  expect_lt(ts$p.value, 1e-60)
  expect_equal(ts$p.value, pchisq(unname(ts$statistic), 20, lower.tail = FALSE),
               tolerance = 1e-9)
  expect_match(ts$method, "^HMP's Xsc test")
  expect_match(ts$method, "(chi-square)", fixed = TRUE)
  expect_identical(ts$data.name, "saliva against pooled(throat)")
  expect_true(is.finite(ts$theta) && ts$theta > 0)
  expect_identical(unname(ts$estimate), ts$theta)
  expect_identical(names(ts$estimate), "theta")
  # HMP 2.0.1: Xsc.onesample(tonsils, pooled(throat)) and
  # Xsc.onesample(throat, pooled(rbind(saliva, throat, tonsils)))
  tt <- dirmn_test_proportions(tonsils, pooled(throat))
  expect_equal(unname(tt$statistic), 5.17206513999273, tolerance = 1e-9)
  expect_equal(tt$p.value, 0.999639605330565, tolerance = 1e-9)
  expect_identical(unname(tt$parameter), 20)
  th <- dirmn_test_proportions(throat, pooled(rbind(saliva, throat, tonsils)))
  expect_equal(unname(th$statistic), 12.7067487387809, tolerance = 1e-9)
  expect_equal(th$p.value, 0.889608634576809, tolerance = 1e-9)
  # HMP itself, where it is installed (its p-value is 1 - pchisq: 0 for
  # saliva, whose upper tail is far below double precision's 1)
  if (requireNamespace("HMP", quietly = TRUE)) {
    for (case in list(list(saliva, pooled(throat), ts), list(tonsils, pooled(throat), tt),
                      list(throat, pooled(rbind(saliva, throat, tonsils)), th))) {
      h <- HMP::Xsc.onesample(case[[1L]], case[[2L]])
      expect_equal(unname(case[[3L]]$statistic), h[["Xsc statistics"]], tolerance = 1e-9)
      expect_lt(abs(case[[3L]]$p.value - h[["p value"]]), 1e-9)
    }
  }
})

test_that("dirmn_test_proportions takes every form of table and matches p by name", {
  saliva <- hmp_table("saliva")
  p0 <- pooled(hmp_table("throat"))
  ref <- dirmn_test_proportions(saliva, p0)
  same <- function(t) {
    expect_equal(unname(t$statistic), unname(ref$statistic), tolerance = 1e-12)
    expect_equal(t$p.value, ref$p.value, tolerance = 1e-9)
    expect_identical(t$parameter, ref$parameter)
    expect_equal(t$theta, ref$theta, tolerance = 1e-12)
    expect_identical(t$rows, ref$rows)
    expect_identical(t$categories, ref$categories)
  }
  same(dirmn_test_proportions(Matrix::Matrix(saliva, sparse = TRUE), p0))
  same(dirmn_test_proportions(as.data.frame(saliva), p0))
  same(dirmn_test_proportions(t(saliva), p0, samples = "columns"))
  ct <- dirmn_counts(saliva)
  same(dirmn_test_proportions(ct, p0))
  close(ct)
  # p by name where both have names, else by position; a 1 x V matrix is
  # a vector
  same(dirmn_test_proportions(saliva, rev(p0)))
  same(dirmn_test_proportions(saliva, unname(p0)))
  same(dirmn_test_proportions(unname(saliva), p0))
  same(dirmn_test_proportions(saliva, matrix(p0, 1L)))
  expect_gt(unname(dirmn_test_proportions(saliva, unname(rev(p0)))$statistic),
            unname(ref$statistic))
  # p is divided by its sum (within 1e-6 of 1)
  same(dirmn_test_proportions(saliva, p0 * (1 + 1e-7)))
  # rows without counts are left out
  z <- rbind(saliva, 0)
  same(dirmn_test_proportions(z, p0))
  # one row: no overdispersion to estimate, theta 0
  one <- dirmn_test_proportions(saliva[1L, , drop = FALSE], p0)
  expect_identical(one$theta, 0)
  expect_identical(one$rows, 1L)
})

test_that("a column with counts where p is 0 makes the statistic Inf", {
  saliva <- hmp_table("saliva")
  p0 <- pooled(hmp_table("throat"))
  expect_true(all(colSums(saliva)[1:2] > 0))
  p <- p0
  p[1L] <- p[1L] + p[2L]
  p[2L] <- 0
  t0 <- dirmn_test_proportions(saliva, p)
  expect_identical(unname(t0$statistic), Inf)
  expect_identical(t0$p.value, 0)
  expect_identical(unname(t0$parameter), 19)
  expect_identical(t0$categories, 20L)
  # a column where p is 0 and the rows have no counts is left out
  x <- saliva
  x[, 2L] <- 0
  tx <- dirmn_test_proportions(x, p)
  expect_true(is.finite(tx$statistic))
  expect_identical(unname(tx$parameter), 19)
})

test_that("bad arguments of dirmn_test_proportions are errors naming them", {
  saliva <- hmp_table("saliva")
  p0 <- pooled(hmp_table("throat"))
  p <- p0
  p[2L] <- -0.1
  expect_error(dirmn_test_proportions(saliva, p), "column 2: proportion -0.1 is negative",
               class = "dirmn_error_invalid_parameter")
  p <- p0
  p[5L] <- Inf
  expect_error(dirmn_test_proportions(saliva, p), "column 5: proportion Inf is not finite",
               class = "dirmn_error_invalid_parameter")
  p <- p0
  p[3L] <- NA
  expect_error(dirmn_test_proportions(saliva, p), "column 3: proportion NA is not finite",
               class = "dirmn_error_invalid_parameter")
  p[3L] <- NaN
  expect_error(dirmn_test_proportions(saliva, p), "column 3: proportion NaN is not finite",
               class = "dirmn_error_invalid_parameter")
  # the column is the table's, after matching names
  p <- rev(p0)
  p[["Taxa.4"]] <- -1
  expect_error(dirmn_test_proportions(saliva, p), "column 4: proportion -1 is negative",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_test_proportions(saliva, p0 * 0.9),
               "the proportions sum to 0[.][89][0-9]*, not 1 \\(within 1e-6\\)",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_proportions(saliva, p0 * 2), "sum to 2, not 1",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_proportions(saliva, c(1, rep(0, 20))), "at least two",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_proportions(saliva, p0[-1L]),
               "p has length 20 but the counts have 21 columns",
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_test_proportions(saliva, c(p0, 0)), "p has length 22",
               class = "dirmn_error_dimension_mismatch")
  named <- p0
  names(named)[1L] <- "other"
  expect_error(dirmn_test_proportions(saliva, named), "\"other\" is not a column of x",
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_test_proportions(saliva, as.character(p0)), "p must be a numeric vector",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_test_proportions(saliva, matrix(p0, 3L)), "p must be a numeric vector",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_test_proportions(saliva), "p is missing",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_test_proportions(saliva * 0, p0), "no row has counts",
               class = "dirmn_error_invalid_argument")
})
