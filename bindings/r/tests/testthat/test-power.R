# The power of the group test by simulation (dirmn_power, issue #30),
# against the package's own draws and tests (rdirmn + dirmn_test_groups:
# another path through libdirmn). The library draws table t of a power call
# with the seed derived_key(seed, 3, t), a full 64-bit value; the
# comparison here is statistical: the share rejected and the statistic's
# mean over many tables drawn in R agree within Monte Carlo error. (The
# tests of dirmn_power_proportions below replay the tables exactly, passing
# rdirmn the derived seed as decimal digits.)

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

# The power of the test of the rows against a given composition
# (dirmn_power_proportions, HMP's MC.Xsc.statistics), against the package's
# own draws and tests (rdirmn + dirmn_test_proportions). Table t (from 0) of
# a call with seed S is the library's table of seed derived_key(S, 3, t)
# (splitmix64, as the other bindings' tests compute it); rdirmn takes that
# 64-bit seed as a string of decimal digits, so the tables are replayed
# exactly. R has no unsigned 64-bit integers: a value is held as four
# 16-bit limbs, lowest first, in a double vector (every sum and product
# below stays exact).

u64 <- function(x) floor(x / 65536^(0:3)) %% 65536          # x a whole number < 2^53
u64_hex <- function(h) {
  h <- formatC(h, width = 16L, flag = "0")
  strtoi(substring(h, c(13L, 9L, 5L, 1L), c(16L, 12L, 8L, 4L)), 16L)
}
u64_carry <- function(r) {
  for (k in 1:4) {
    carry <- floor(r[[k]] / 65536)
    r[[k]] <- r[[k]] %% 65536
    if (k < 4L) r[[k + 1L]] <- r[[k + 1L]] + carry
  }
  r
}
u64_add <- function(a, b) u64_carry(a + b)
u64_mul <- function(a, b) {
  r <- numeric(4L)
  for (i in 1:4) for (j in seq_len(5L - i)) r[[i + j - 1L]] <- r[[i + j - 1L]] + a[[i]] * b[[j]]
  u64_carry(r)
}
u64_xor <- function(a, b) as.double(bitwXor(as.integer(a), as.integer(b)))
u64_shr <- function(a, s) {
  bits <- as.vector(vapply(a, function(l) as.integer(intToBits(as.integer(l)))[1:16], integer(16L)))
  bits <- c(bits[(s + 1L):64L], integer(s))
  colSums(matrix(bits, 16L) * 2^(0:15))
}
u64_text <- function(a) {                                 # decimal digits
  digits <- character()
  repeat {
    rem <- 0
    for (k in 4:1) {
      cur <- rem * 65536 + a[[k]]
      a[[k]] <- floor(cur / 10)
      rem <- cur %% 10
    }
    digits <- c(as.character(rem), digits)
    if (all(a == 0)) break
  }
  paste(digits, collapse = "")
}
u64_hex_text <- function(a) paste(sprintf("%04x", as.integer(rev(a))), collapse = "")

# splitmix64's output for a state started at `key`, advanced counter + 1 times.
random_bits <- function(key, counter) {
  z <- u64_add(key, u64_mul(u64(counter + 1), u64_hex("9E3779B97F4A7C15")))
  z <- u64_mul(u64_xor(z, u64_shr(z, 30L)), u64_hex("BF58476D1CE4E5B9"))
  z <- u64_mul(u64_xor(z, u64_shr(z, 27L)), u64_hex("94D049BB133111EB"))
  u64_xor(z, u64_shr(z, 31L))
}
# `seed`: a whole number < 2^53, or four limbs.
derived_seed <- function(seed, family, index) {
  key <- if (length(seed) == 4L) seed else u64(seed)
  u64_text(random_bits(random_bits(key, family), index))
}

test_that("the 64-bit arithmetic of the replay is splitmix64's", {
  # splitmix64 seeded with 0 (Vigna's reference implementation) starts
  # 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f
  expect_identical(vapply(0:2, function(i) u64_hex_text(random_bits(u64(0), i)), ""),
                   c("e220a8397b1dcdaf", "6e789e6aa1b965f4", "06c45d188009454f"))
  expect_identical(u64_text(u64_hex("FFFFFFFFFFFFFFFF")), "18446744073709551615")
  expect_identical(u64_text(u64(2^53 - 1)), "9007199254740991")
})

pp_p0 <- (1:8) / 36

test_that("dirmn_power_proportions gives the level under the null and power under an alternative", {
  p <- dirmn_power_proportions(20 * pp_p0, pp_p0, 30, 500, tables = 400, seed = 23)
  expect_s3_class(p, "power.htest")
  expect_identical(p$tables, 400L)
  # the test's size: alpha proportional to the proportions
  expect_lt(abs(p$power - 0.05), 0.04)
  # Xsc's mean under the null is its df, 8 - 1
  expect_lt(abs(p$mean_statistic - 7), 1)
  # the first and last categories' shares swapped: rejected almost always
  swapped <- 20 * pp_p0[c(8, 2:7, 1)]
  far <- dirmn_power_proportions(swapped, pp_p0, 30, 500, tables = 400, seed = 23)
  expect_gt(far$power, 0.9)
  expect_equal(far$std_error, sqrt(far$power * (1 - far$power) / 400), tolerance = 1e-12)
  expect_gt(far$mean_statistic, p$mean_statistic + 10)
})

# (rejected, the statistics) of the tables of a power call, replayed: table
# t drawn by rdirmn with the library's derived seed, tested by
# dirmn_test_proportions.
power_proportions_replay <- function(alpha, p, n, size, tables, sig.level, seed) {
  tests <- lapply(seq_len(tables) - 1L, function(t) {
    x <- rdirmn(n, size, alpha, seed = derived_seed(seed, 3, t))
    dirmn_test_proportions(x, p)
  })
  list(rejected = sum(vapply(tests, function(r) r$p.value < sig.level, TRUE)),
       statistics = vapply(tests, function(r) unname(r$statistic), 0))
}

test_that("the power is the share of the tables, drawn by rdirmn, that dirmn_test_proportions rejects", {
  swapped <- 20 * pp_p0[c(8, 2:7, 1)]
  pw <- dirmn_power_proportions(swapped, pp_p0, 30, 500, tables = 30, seed = 23)
  ref <- power_proportions_replay(swapped, pp_p0, 30, 500, 30, 0.05, 23)
  expect_identical(pw$rejected, ref$rejected)
  expect_identical(pw$power, ref$rejected / 30)
  expect_equal(pw$mean_statistic, mean(ref$statistics), tolerance = 1e-10)
  # an alternative near the null, rejected about half the time, sizes
  # per row, another level and a seed above 2^53 (2^64 - 59): the count
  # tells the tables apart
  near <- 20 * pp_p0 * c(1.5, rep(1, 6), 0.8)
  sizes <- rep(c(100, 600, 350), 10)
  pw <- dirmn_power_proportions(near, pp_p0, 30, sizes, tables = 30, sig.level = 0.1,
                                seed = "18446744073709551557")
  ref <- power_proportions_replay(near, pp_p0, 30, sizes, 30, 0.1,
                                  u64_hex("FFFFFFFFFFFFFFC5"))
  expect_gt(ref$rejected, 5L)
  expect_lt(ref$rejected, 25L)
  expect_identical(pw$rejected, ref$rejected)
  expect_equal(pw$mean_statistic, mean(ref$statistics), tolerance = 1e-10)
})

test_that("the proportion power is a power.htest with its seed, and a seed reproduces it", {
  a <- 20 * pp_p0[c(2, 1, 3:8)]
  p <- dirmn_power_proportions(a, pp_p0, 15, 200, tables = 120, seed = 5)
  expect_s3_class(p, "power.htest")
  expect_identical(p$n, 15L)
  expect_identical(p$tables, 120L)
  expect_identical(p$sig.level, 0.05)
  expect_identical(p$seed, 5)
  expect_identical(p$power, p$rejected / 120)
  expect_equal(p$std_error, sqrt(p$power * (1 - p$power) / 120), tolerance = 1e-12)
  expect_true(p$power > 0 && p$power < 1)
  expect_match(p$method, "HMP's Xsc")
  expect_match(p$note, "each table")
  out <- capture.output(print(p))
  expect_true(any(grepl("power = ", out, fixed = TRUE)))
  expect_true(any(grepl("seed = 5", out, fixed = TRUE)))
  expect_identical(dirmn_power_proportions(a, pp_p0, 15, 200, tables = 120, seed = 5), p)
  expect_identical(dirmn_power_proportions(a, pp_p0, 15, 200, tables = 120, seed = "5")$rejected,
                   p$rejected)
  means <- vapply(0:3, function(s) {
    dirmn_power_proportions(a, pp_p0, 15, 200, tables = 40, seed = s)$mean_statistic
  }, 0)
  expect_gt(length(unique(means)), 1L)
  big <- dirmn_power_proportions(a, pp_p0, 15, 200, tables = 40, seed = "18446744073709551615")
  expect_identical(big$seed, "18446744073709551615")
  set.seed(3)
  q1 <- dirmn_power_proportions(a, pp_p0, 15, 200, tables = 40)
  set.seed(3)
  q2 <- dirmn_power_proportions(a, pp_p0, 15, 200, tables = 40)
  expect_identical(q1, q2)
  expect_true(is.numeric(q1$seed) && q1$seed >= 0 && q1$seed <= 2^53)
})

test_that("the forms of alpha, p and size agree; p is matched to alpha by name", {
  a <- 20 * pp_p0[c(2, 1, 3:8)]
  base <- dirmn_power_proportions(a, pp_p0, 12, 150, tables = 40, seed = 6)
  v <- paste0("taxon", 1:8)
  same <- list(
    dirmn_power_proportions(a, pp_p0, 12L, rep(150L, 12), tables = 40, seed = 6),
    dirmn_power_proportions(matrix(a, 1L), pp_p0, 12, 150, tables = 40, seed = 6),
    dirmn_power_proportions(setNames(a, v), setNames(pp_p0, v)[8:1], 12, 150, tables = 40,
                            seed = 6),
    dirmn_power_proportions(setNames(a, v), pp_p0, 12, 150, tables = 40, seed = 6),
    dirmn_power_proportions(a, setNames(pp_p0, v)[8:1][8:1], 12, 150, tables = 40, seed = 6),
    dirmn_power_proportions(a, matrix(pp_p0, 1L), 12, 150, tables = 40, seed = 6),
    dirmn_power_proportions(log(a), pp_p0, 12, 150, tables = 40, seed = 6, param = "logalpha"))
  for (s in same) {
    expect_identical(s$rejected, base$rejected)
    expect_equal(s$mean_statistic, base$mean_statistic, tolerance = 1e-12)
  }
  # unnamed p against named alpha is by position: reversed, another test
  rev_p <- dirmn_power_proportions(setNames(a, v), rev(pp_p0), 12, 150, tables = 40, seed = 6)
  expect_gt(rev_p$mean_statistic, base$mean_statistic + 10)
  # a column with counts where p is 0: Xsc is Inf, every table rejected
  p0 <- c(pp_p0[1] + pp_p0[2], 0, pp_p0[3:8])
  inf <- dirmn_power_proportions(a, p0, 12, 150, tables = 20, seed = 6)
  expect_identical(inf$mean_statistic, Inf)
  expect_identical(inf$power, 1)
  # rows without counts: a table without counts is not rejected
  empty <- dirmn_power_proportions(a, pp_p0, 5, 0, tables = 10, seed = 6)
  expect_identical(empty$rejected, 0L)
})

test_that("bad input to dirmn_power_proportions is refused, naming it", {
  a <- 20 * pp_p0
  bad <- pp_p0
  bad[3L] <- -0.1
  expect_error(dirmn_power_proportions(a, bad, 10, 50), "column 3: proportion -0.1 is negative",
               class = "dirmn_error_invalid_parameter")
  bad[3L] <- NA
  expect_error(dirmn_power_proportions(a, bad, 10, 50), "column 3: proportion NA is not finite",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power_proportions(a, pp_p0 * 0.9, 10, 50),
               "the proportions sum to 0[.]9[0-9]*, not 1 \\(within 1e-6\\)",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, c(1, rep(0, 7)), 10, 50), "at least two",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a[-1L], pp_p0, 10, 50),
               "p has length 8 but alpha has length 7", class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_power_proportions(c(a, 1), pp_p0, 10, 50),
               "p has length 8 but alpha has length 9", class = "dirmn_error_dimension_mismatch")
  v <- paste0("taxon", 1:8)
  expect_error(dirmn_power_proportions(setNames(a, v), setNames(pp_p0, c("other", v[-1L])), 10,
                                       50),
               "\"other\" is not a column of alpha", class = "dirmn_error_dimension_mismatch")
  expect_error(dirmn_power_proportions(a, as.character(pp_p0), 10, 50), "p must be a numeric",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power_proportions(a, n = 10, size = 50), "p is missing",
               class = "dirmn_error_invalid_argument")
  for (tables in list(0, -3, 2.5, NA, c(10, 20))) {
    expect_error(dirmn_power_proportions(a, pp_p0, 10, 50, tables = tables), "tables",
                 class = "dirmn_error_invalid_argument")
  }
  for (level in list(0, 1, -0.1, 1.5, NA, c(0.05, 0.1), "0.05")) {
    expect_error(dirmn_power_proportions(a, pp_p0, 10, 50, sig.level = level), "sig.level",
                 class = "dirmn_error_invalid_argument")
  }
  aa <- a
  aa[2L] <- 0
  expect_error(dirmn_power_proportions(aa, pp_p0, 10, 50), "column 2: alpha 0 is not positive",
               class = "dirmn_error_invalid_parameter")
  aa[2L] <- NA
  expect_error(dirmn_power_proportions(aa, pp_p0, 10, 50), "column 2: alpha is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power_proportions(1, 1, 10, 50), "at least two",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power_proportions(rbind(a, a), pp_p0, 10, 50), "2 x 8 matrix",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_power_proportions(as.list(a), pp_p0, 10, 50), "alpha",
               class = "dirmn_error_invalid_parameter")
  for (n in list(0, -1, 2.5, NA, c(10, 10), 2^41, "10")) {
    expect_error(dirmn_power_proportions(a, pp_p0, n, 50), "^n must",
                 class = "dirmn_error_invalid_argument")
  }
  expect_error(dirmn_power_proportions(a, pp_p0, 3, c(50, 50)), "size must be a number",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3, c(50, 50, -1)), "size\\[3\\] is -1",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3, 2^31), "size",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3, list(50)), "size must be a number",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3, 50, seed = -1), "seed",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3, 50, param = "log"), "param",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, size = 50), "n is missing",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_power_proportions(a, pp_p0, 3), "size is missing",
               class = "dirmn_error_invalid_argument")
})
