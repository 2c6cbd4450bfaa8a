# The power of the group test by simulation (dirmn_power, issue #30),
# against the package's own draws and tests (rdirmn + dirmn_test_groups:
# another path through libdirmn). The library draws table t of a power call
# with the seed derived_key(seed, 3, t), a full 64-bit value; rdirmn takes
# seeds up to 2^53 only, so the same tables cannot be replayed from R, and
# the comparison is statistical: the share rejected and the statistic's
# mean over many tables drawn in R agree within Monte Carlo error.

power_alpha <- rbind(c(2, 3, 1, 4, 0.5), c(3, 2, 1, 4, 0.5), c(2, 3, 1.5, 3, 0.5))

# (rejected share, the statistics) of `tables` tables drawn with rdirmn and
# tested with dirmn_test_groups, at `sig.level`.
power_replay <- function(alpha, n, sizes, tables, sig.level, seed) {
  groups <- rep(seq_len(nrow(alpha)), n)
  stats <- numeric(tables)
  rejected <- 0L
  for (t in seq_len(tables)) {
    x <- rdirmn(length(groups), sizes, alpha, component = groups, seed = seed + t)
    with_counts <- unique(groups[rowSums(x) > 0])
    if (length(with_counts) < 2L) next
    r <- dirmn_test_groups(x, groups)
    stats[[t]] <- unname(r$statistic)
    rejected <- rejected + (r$p.value < sig.level)
  }
  list(power = rejected / tables, statistics = stats)
}

test_that("the power agrees with rdirmn + dirmn_test_groups within Monte Carlo error", {
  n <- c(8, 11, 6)
  size <- list(seq(40, 61, by = 3), 55, seq(20, 70, by = 10))
  sizes <- c(seq(40, 61, by = 3), rep(55, 11), seq(20, 70, by = 10))
  p <- dirmn_power(power_alpha, n, size, tables = 2000, sig.level = 0.1, seed = 7)
  ref <- power_replay(power_alpha, n, sizes, 400, 0.1, 1e6)
  expect_gt(p$power, 0.15)                      # neither extreme: a discriminating check
  expect_lt(p$power, 0.85)
  se <- sqrt(p$power * (1 - p$power) * (1 / 2000 + 1 / 400))
  expect_lt(abs(p$power - ref$power), 4 * se)
  se_mean <- sd(ref$statistics) * sqrt(1 / 2000 + 1 / 400)
  expect_lt(abs(p$mean_statistic - mean(ref$statistics)), 4 * se_mean)
  # A different alternative gives a clearly different power: the check above
  # can tell them apart.
  far <- dirmn_power(power_alpha * c(1, 3, 1), n, size, tables = 400, sig.level = 0.1,
                     seed = 7)
  expect_gt(abs(far$power - ref$power), 4 * se)
})

test_that("equal alphas give the level, very different ones power near 1", {
  a <- rbind(power_alpha[1, ], power_alpha[1, ])
  p <- dirmn_power(a, 25, 60, tables = 400, sig.level = 0.05, seed = 11)
  expect_gte(p$rejected, 6L)
  expect_lte(p$rejected, 45L)
  # the statistic's mean is near its chi-square df, (2 - 1) 5
  expect_gt(p$mean_statistic, 3.5)
  expect_lt(p$mean_statistic, 7)
  far <- dirmn_power(rbind(c(10, 1, 1, 3), c(1, 1, 10, 3)), 15, 50, tables = 100, seed = 2)
  expect_gt(far$power, 0.9)
  near <- rbind(c(2, 3, 1, 4), c(3, 2, 1, 4))
  expect_gt(dirmn_power(near, 40, 50, tables = 200, seed = 4)$power,
            dirmn_power(near, 5, 50, tables = 200, seed = 4)$power + 0.2)
})

test_that("the result is a power.htest with a binomial standard error", {
  p <- dirmn_power(power_alpha[1:2, ], 20, 60, tables = 150, seed = 5)
  expect_s3_class(p, "power.htest")
  expect_identical(p$n, c(20L, 20L))
  expect_identical(p$tables, 150L)
  expect_identical(p$sig.level, 0.05)
  expect_identical(p$power, p$rejected / 150)
  expect_equal(p$std_error, sqrt(p$power * (1 - p$power) / 150), tolerance = 1e-12)
  expect_true(p$power > 0 && p$power < 1)
  expect_match(p$note, "each group")
  out <- capture.output(print(p))
  expect_true(any(grepl("power = ", out, fixed = TRUE)))
  expect_true(any(grepl("sig.level = 0.05", out, fixed = TRUE)))
})

test_that("a seed reproduces the simulation; NULL follows set.seed()", {
  a <- power_alpha[1:2, ]
  p1 <- dirmn_power(a, 12, 40, tables = 80, seed = 9)
  expect_identical(dirmn_power(a, 12, 40, tables = 80, seed = 9), p1)
  means <- vapply(0:3, function(s) dirmn_power(a, 12, 40, tables = 80, seed = s)$mean_statistic, 0)
  expect_gt(length(unique(means)), 1L)
  set.seed(3)
  q1 <- dirmn_power(a, 12, 40, tables = 80)
  set.seed(3)
  q2 <- dirmn_power(a, 12, 40, tables = 80)
  expect_identical(q1, q2)
})

test_that("the forms of alpha, n and size agree", {
  a <- power_alpha[1:2, ]
  base <- dirmn_power(a, c(10, 10), list(rep(30, 10), rep(30, 10)), tables = 40, seed = 6)
  same <- list(
    dirmn_power(a, 10, 30, tables = 40, seed = 6),
    dirmn_power(list(a[1, ], a[2, ]), 10, 30, tables = 40, seed = 6),
    dirmn_power(a, 10L, c(30, 30), tables = 40, seed = 6),
    dirmn_power(a, c(10, 10), list(30, rep(30L, 10)), tables = 40, seed = 6))
  for (s in same) {
    expect_identical(s$rejected, base$rejected)
    expect_identical(s$mean_statistic, base$mean_statistic)
  }
  logs <- dirmn_power(log(a), 10, 30, tables = 40, seed = 6, param = "logalpha")
  expect_identical(logs$rejected, base$rejected)
  expect_equal(logs$mean_statistic, base$mean_statistic, tolerance = 1e-9)
  # the fits' options reach them
  one <- dirmn_power(a, 15, 50, tables = 30, seed = 8, max_iterations = 1)
  expect_false(identical(one$mean_statistic,
                         dirmn_power(a, 15, 50, tables = 30, seed = 8)$mean_statistic))
})

test_that("bad input is refused, naming the argument", {
  a <- power_alpha[1:2, ]
  expect_error(dirmn_power(a[1, , drop = FALSE], 10, 30), "alpha",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power(a[1, ], 10, 30), "alpha", class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power(list(1:3, 1:2), 10, 30), "alpha",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power(a, c(10, -1), 30), "n\\[2\\]", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, c(10, 0), 30), "n gives rows to 1 group",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 2.5, 30), "^n must", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, c(1, 2, 3), 30), "^n must", class = "dirmn_error_invalid_argument")
  for (level in list(0, 1, -0.1, 1.5, NA, c(0.05, 0.1))) {
    expect_error(dirmn_power(a, 10, 30, sig.level = level), "sig.level",
                 class = "dirmn_error_invalid_argument")
  }
  for (tables in list(0, -3, 2.5)) {
    expect_error(dirmn_power(a, 10, 30, tables = tables), "tables",
                 class = "dirmn_error_invalid_argument")
  }
  expect_error(dirmn_power(a, c(3, 2), list(30, c(5, -4))), "size\\[\\[2\\]\\]\\[2\\]",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 3, 2^31), "size", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 3, c(30, 30, 30)), "size", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 3, list(30, 1:2)), "size\\[\\[2\\]\\]",
               class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_power(rbind(c(1, 1), c(2, 0)), 3, 30), "row 2, column 2 of alpha",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power(rbind(c(1, -1), c(2, 1)), 3, 30), "row 1, column 2 of alpha",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power(a, 3, 30, seed = -1), "seed", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 3, 30, param = "log"), "param",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power(a, 3, 30, tolerance = 0), "tolerance",
               class = "dirmn_error_invalid_argument")
})

test_that("with Xmcupo, equal alphas give the level and different ones are found", {
  a <- rbind(power_alpha[1, ], power_alpha[1, ])
  p <- dirmn_power(a, 25, 60, tables = 400, sig.level = 0.05, seed = 11, statistic = "xmcupo")
  expect_identical(p$statistic_kind, "xmcupo")
  expect_match(p$method, "Xmcupo")
  expect_gte(p$rejected, 6L)
  expect_lte(p$rejected, 45L)
  # the statistic's mean is near its chi-square df, (2 - 1) (5 - 1) = 4,
  # not the likelihood ratio's 5
  expect_gt(p$mean_statistic, 2.8)
  expect_lt(p$mean_statistic, 5.2)
  lrt <- dirmn_power(a, 25, 60, tables = 400, sig.level = 0.05, seed = 11)
  expect_identical(lrt$statistic_kind, "lrt")
  expect_false(identical(p$mean_statistic, lrt$mean_statistic))
  far <- dirmn_power(rbind(c(10, 1, 1, 3), c(1, 1, 10, 3)), 15, 50, tables = 100, seed = 2,
                     statistic = "xmcupo")
  expect_gt(far$power, 0.9)
  expect_identical(dirmn_power(a, 12, 40, tables = 80, seed = 9, statistic = "xmcupo"),
                   dirmn_power(a, 12, 40, tables = 80, seed = 9, statistic = "xmcupo"))
})

test_that("Xmcupo's power agrees with rdirmn + dirmn_test_groups within Monte Carlo error", {
  n <- c(8, 11, 6)
  size <- list(seq(40, 61, by = 3), 55, seq(20, 70, by = 10))
  sizes <- c(seq(40, 61, by = 3), rep(55, 11), seq(20, 70, by = 10))
  p <- dirmn_power(power_alpha, n, size, tables = 1500, sig.level = 0.1, seed = 7,
                   statistic = "xmcupo")
  groups <- rep(seq_len(nrow(power_alpha)), n)
  tests <- lapply(seq_len(300), function(t) {
    x <- rdirmn(length(groups), sizes, power_alpha, component = groups, seed = 2e6 + t)
    dirmn_test_groups(x, groups, statistic = "xmcupo")
  })
  stats <- vapply(tests, function(r) unname(r$statistic), 0)
  ref_power <- mean(vapply(tests, function(r) r$p.value < 0.1, TRUE))
  expect_gt(p$power, 0.1)
  expect_lt(p$power, 0.9)
  se <- sqrt(p$power * (1 - p$power) * (1 / 1500 + 1 / 300))
  expect_lt(abs(p$power - ref_power), 4 * se)
  se_mean <- sd(stats) * sqrt(1 / 1500 + 1 / 300)
  expect_lt(abs(p$mean_statistic - mean(stats)), 4 * se_mean)
})

test_that("with Xoc, one shared overdispersion gives the level and different ones are found", {
  # 3 groups of 25 rows of size 200, 6 categories: one alpha for all
  a <- 2 + 1:6
  same <- rbind(a, a, a)
  p <- dirmn_power(same, 25, 200, tables = 200, sig.level = 0.05, seed = 4, statistic = "xoc")
  expect_s3_class(p, "power.htest")
  expect_identical(p$statistic_kind, "xoc")
  expect_match(p$method, "HMP's Xoc")
  expect_identical(p$tables, 200L)
  expect_gte(p$power, 0)
  expect_lte(p$power, 0.1)
  # the statistic's mean is near its chi-square df, G - 1 = 2
  expect_gt(p$mean_statistic, 1)
  expect_lt(p$mean_statistic, 3.5)
  # the third group's precision six times the others' (same proportions)
  differ <- rbind(a, a, 6 * a)
  far <- dirmn_power(differ, 25, 200, tables = 200, sig.level = 0.05, seed = 4,
                     statistic = "xoc")
  expect_gt(far$power, 0.5)
  expect_identical(dirmn_power(same, 10, 50, tables = 40, seed = 9, statistic = "xoc"),
                   dirmn_power(same, 10, 50, tables = 40, seed = 9, statistic = "xoc"))
})

test_that("a bad statistic for dirmn_power is an error naming it", {
  a <- power_alpha[1:2, ]
  for (bad in list("LRT", "xmcupo2", "Xoc", NA_character_, 2)) {
    expect_error(dirmn_power(a, 10, 30, statistic = bad),
                 "statistic must be one of \"lrt\", \"xmcupo\", \"xoc\"",
                 class = "dirmn_error_invalid_argument")
  }
})
