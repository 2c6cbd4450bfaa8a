# Draws from the Dirichlet-multinomial (rdirmn, simulate), its moments and
# tables copied back to R (issue #30), against plain-R references: the
# closed-form moments, the exact pmf through lgamma, and the tables given.

# The closed-form moments of DM(alpha, size).
ref_moments <- function(alpha, size) {
  alpha <- unname(alpha)
  A <- sum(alpha)
  p <- alpha / A
  f <- size * (size + A) / (1 + A)
  cov <- -f * outer(unname(p), unname(p))
  diag(cov) <- f * p * (1 - p)
  list(mean = size * p, variance = f * p * (1 - p), covariance = cov)
}

# The DM pmf of one row of counts through lgamma.
ref_pmf <- function(x, alpha) {
  N <- sum(x)
  A <- sum(alpha)
  exp(lgamma(N + 1) - sum(lgamma(x + 1)) + lgamma(A) - lgamma(N + A) +
        sum(lgamma(x + alpha) - lgamma(alpha)))
}

# Every composition of `size` into `V` non-negative parts, one per row.
compositions <- function(size, V) {
  if (V == 1L) return(matrix(size, 1L, 1L))
  do.call(rbind, lapply(0:size, function(first) cbind(first, compositions(size - first, V - 1L))))
}

# Pearson's chi-square test of drawn rows against the exact pmf, cells with
# expected counts below 5 pooled.
gof_p_value <- function(x, alpha) {
  cells <- compositions(sum(x[1L, ]), ncol(x))
  probs <- apply(cells, 1L, ref_pmf, alpha = alpha)
  expect_equal(sum(probs), 1, tolerance = 1e-10)
  if (requireNamespace("extraDistr", quietly = TRUE)) {
    expect_equal(extraDistr::ddirmnom(cells, rowSums(cells), matrix(alpha, nrow(cells),
                                                                   length(alpha), byrow = TRUE)),
                 probs, tolerance = 1e-10)
  }
  key <- function(m) apply(m, 1L, paste, collapse = ",")
  observed <- tabulate(match(key(x), key(cells)), nbins = nrow(cells))
  expect_identical(sum(observed), nrow(x))  # every row a composition of its size
  expected <- probs * nrow(x)
  small <- expected < 5
  o <- c(observed[!small], sum(observed[small]))
  e <- c(expected[!small], sum(expected[small]))
  if (e[length(e)] == 0) {
    o <- o[-length(o)]
    e <- e[-length(e)]
  }
  stat <- sum((o - e)^2 / e)
  pchisq(stat, length(o) - 1L, lower.tail = FALSE)
}

test_that("dirmn_moments agrees with the closed-form Dirichlet-multinomial moments", {
  for (case in list(list(alpha = c(a = 0.5, b = 1.5, c = 3), size = 30),
                    list(alpha = c(2, 2), size = 7.5),
                    list(alpha = c(1e-3, 1e3, 1, 10), size = 1000),
                    list(alpha = c(x = 4), size = 5),
                    list(alpha = c(0.2, 0.3, 0.5), size = 0))) {
    ref <- ref_moments(case$alpha, case$size)
    m <- dirmn_moments(case$alpha, case$size)
    expect_identical(names(m), c("mean", "variance", "covariance"))
    expect_equal(unname(m$mean), ref$mean, tolerance = 1e-12)
    expect_equal(unname(m$variance), ref$variance, tolerance = 1e-12)
    expect_equal(unname(m$covariance), ref$covariance, tolerance = 1e-12)
    expect_identical(names(m$mean), names(case$alpha))
    expect_identical(names(m$variance), names(case$alpha))
    if (!is.null(names(case$alpha))) {
      expect_identical(dimnames(m$covariance), list(names(case$alpha), names(case$alpha)))
    }
    lm <- dirmn_moments(log(case$alpha), case$size, param = "logalpha")
    expect_equal(unname(lm$covariance), ref$covariance, tolerance = 1e-10)
  }
})

test_that("rdirmn gives rows of the sizes asked for, the same for the same seed", {
  alpha <- c(a = 0.5, b = 1.5, c = 3, d = 0.1)
  x <- rdirmn(50, 25, alpha, seed = 11)
  expect_true(is.integer(x))
  expect_identical(dim(x), c(50L, 4L))
  expect_identical(colnames(x), names(alpha))
  expect_true(all(rowSums(x) == 25))
  expect_true(all(x >= 0))
  sizes <- c(0, 1, 7, 1000, 123456)
  y <- rdirmn(5, sizes, unname(alpha), seed = 3)
  expect_identical(as.numeric(rowSums(y)), sizes)
  expect_null(colnames(y))
  expect_identical(rdirmn(50, 25, alpha, seed = 11), x)
  expect_false(identical(rdirmn(50, 25, alpha, seed = 12), x))
  # the first rows of a larger draw with the same seed are the same rows
  expect_identical(rdirmn(80, 25, alpha, seed = 11)[1:50, ], x)
  # seed = NULL draws from R's generator
  set.seed(4)
  a <- rdirmn(20, 10, alpha)
  set.seed(4)
  expect_identical(rdirmn(20, 10, alpha), a)
  expect_false(identical(rdirmn(20, 10, alpha), a))
  # log alpha
  expect_identical(rdirmn(50, 25, log(alpha), param = "logalpha", seed = 11), x)
})

test_that("every 64-bit seed reaches the library, written as decimal digits", {
  alpha <- c(a = 1, b = 2, c = 0.5, d = 4)
  x <- rdirmn(40, 30, alpha, seed = 11)
  expect_identical(rdirmn(40, 30, alpha, seed = "11"), x)
  expect_identical(rdirmn(40, 30, alpha, seed = "0011"), x)
  # 2^53 + 1 has no double: as digits it is its own seed, not 2^53's
  at53 <- rdirmn(40, 30, alpha, seed = 2^53)
  expect_identical(rdirmn(40, 30, alpha, seed = "9007199254740992"), at53)
  above <- rdirmn(40, 30, alpha, seed = "9007199254740993")
  expect_false(identical(above, at53))
  expect_identical(rdirmn(40, 30, alpha, seed = "9007199254740993"), above)
  top <- rdirmn(40, 30, alpha, seed = "18446744073709551615")
  expect_false(identical(top, above))
  expect_true(all(rowSums(top) == 30))
  # simulate() hands the seed back as given
  s <- simulate(dirmn_fit(x), nsim = 1, seed = "18446744073709551615")
  expect_identical(attr(s, "seed"), "18446744073709551615")
  for (bad in list("18446744073709551616", "-1", "1e5", "", 2^53 + 2, -1, c(1, 2), NA)) {
    expect_error(rdirmn(4, 30, alpha, seed = bad), class = "dirmn_error_invalid_argument")
  }
})

test_that("the rows' sample moments are within Monte Carlo error of the formulas", {
  alpha <- c(0.5, 1.5, 3, 0.2)
  size <- 30
  n <- 20000
  x <- rdirmn(n, size, alpha, seed = 2024)
  ref <- ref_moments(alpha, size)
  m <- colMeans(x)
  expect_true(all(abs(m - ref$mean) < 6 * sqrt(ref$variance / n)))
  centred <- sweep(x, 2L, ref$mean)
  for (u in 1:4) {
    for (v in u:4) {
      prod <- centred[, u] * centred[, v]
      se <- sd(prod) / sqrt(n)
      expect_lt(abs(mean(prod) - ref$covariance[u, v]), 6 * se)
    }
  }
  # overdispersion far beyond the multinomial's variance is seen
  expect_gt(var(x[, 3]), 2 * size * (3 / 5.2) * (1 - 3 / 5.2))
  # a row-wise draw: each row's own mean
  rows <- rbind(c(5, 1, 1), c(1, 1, 5))
  a <- rows[rep(1:2, n / 2), ]
  y <- rdirmn(n, 40, a, rowwise = TRUE, seed = 9)
  for (j in 1:2) {
    r <- ref_moments(rows[j, ], 40)
    mj <- colMeans(y[seq(j, n, by = 2), ])
    expect_true(all(abs(mj - r$mean) < 6 * sqrt(r$variance / (n / 2))))
  }
})

test_that("drawn rows follow the exact Dirichlet-multinomial pmf (chi-square goodness of fit)", {
  cases <- list(list(alpha = c(0.7, 1.3, 2), size = 4),
                list(alpha = c(0.05, 0.3, 4), size = 6),
                list(alpha = rep(0.4, 8), size = 3),
                list(alpha = c(50, 20, 30), size = 5))
  for (i in seq_along(cases)) {
    case <- cases[[i]]
    x <- rdirmn(20000, case$size, case$alpha, seed = 100 + i)
    expect_gt(gof_p_value(x, case$alpha), 1e-4)
  }
  # a mixture's component rows, by the components drawn
  alpha <- rbind(c(0.7, 1.3, 2), c(3, 0.5, 0.5))
  x <- rdirmn(20000, 4, alpha, seed = 7)
  comp <- attr(x, "component")
  for (j in 1:2) expect_gt(gof_p_value(x[comp == j, ], alpha[j, ]), 1e-4)
})

test_that("alpha at 1e-300 gives no NA and every row's counts in one category", {
  x <- rdirmn(200, 17, rep(1e-300, 6), seed = 1)
  expect_false(anyNA(x))
  expect_true(all(rowSums(x) == 17))
  expect_true(all(rowSums(x > 0) == 1))
  # tiny beside ordinary alphas: the tiny categories stay empty
  y <- rdirmn(500, 50, c(1e-300, 1, 2, 1e-300), seed = 2)
  expect_true(all(y[, c(1, 4)] == 0))
  expect_true(all(rowSums(y) == 50))
  # huge alphas: multinomial rows
  z <- rdirmn(5000, 20, c(1e300, 1e300), seed = 3)
  expect_false(anyNA(z))
  expect_lt(abs(mean(z[, 1]) - 10), 6 * sqrt(20 * 0.25 / 5000))
  expect_lt(abs(var(z[, 1]) - 5), 0.5)
})

test_that("the matrix, dgCMatrix and counts outputs hold the same table", {
  alpha <- c(a = 0.1, b = 0.2, c = 0.3, d = 0.05, e = 1)
  x <- rdirmn(300, c(0, rep(12, 299)), alpha, seed = 5)
  s <- rdirmn(300, c(0, rep(12, 299)), alpha, seed = 5, output = "dgCMatrix")
  expect_s4_class(s, "dgCMatrix")
  expect_true(methods::validObject(s))
  expect_identical(dimnames(s), list(NULL, names(alpha)))
  expect_identical(as.matrix(s), x * 1)
  expect_identical(length(s@x), sum(x > 0))
  ct <- rdirmn(300, c(0, rep(12, 299)), alpha, seed = 5, output = "counts")
  expect_s3_class(ct, "dirmn_counts")
  expect_identical(dim(ct), c(300L, 5L))
  expect_identical(as.matrix(ct), x)
  expect_identical(as_sparse(ct), s)
  # straight into a fit: the same as the fit of the matrix
  expect_equal(coef(dirmn_fit(ct)), coef(dirmn_fit(x)), tolerance = 1e-12)
  close(ct)
})

test_that("mixture draws follow the given components, or the mixture weights", {
  # each component puts all of a row's counts in its own category
  alpha <- rbind(c(1, 1e-300, 1e-300), c(1e-300, 1, 1e-300), c(1e-300, 1e-300, 1))
  comp <- c(3L, 1L, 2L, 2L, 3L, 1L, 1L)
  x <- rdirmn(7, 9, alpha, component = comp, seed = 1)
  expect_identical(attr(x, "component"), comp)
  expect_identical(unname(apply(x, 1L, which.max)), comp)
  expect_true(all(x[cbind(1:7, comp)] == 9))
  s <- rdirmn(7, 9, alpha, component = comp, seed = 1, output = "dgCMatrix")
  expect_identical(attr(s, "component"), comp)
  # drawn from the weights
  n <- 6000
  w <- c(0.6, 0.3, 0.1)
  y <- rdirmn(n, 5, alpha, mixture_weights = w * 10, seed = 2)
  drawn <- attr(y, "component")
  expect_true(all(drawn %in% 1:3))
  expect_identical(unname(apply(y, 1L, which.max)), drawn)
  freq <- tabulate(drawn, 3) / n
  expect_true(all(abs(freq - w) < 6 * sqrt(w * (1 - w) / n)))
  # equal weights by default
  z <- attr(rdirmn(n, 5, alpha, seed = 3), "component")
  expect_true(all(abs(tabulate(z, 3) / n - 1 / 3) < 6 * sqrt(2 / 9 / n)))
  # a matrix with n rows is still a mixture without rowwise = TRUE
  m <- rdirmn(3, 9, alpha, seed = 4)
  expect_false(is.null(attr(m, "component")))
  r <- rdirmn(3, 9, alpha, rowwise = TRUE, seed = 4)
  expect_null(attr(r, "component"))
  expect_identical(unname(apply(r, 1L, which.max)), 1:3)
  # a one-row matrix is one shared alpha
  expect_identical(rdirmn(10, 9, alpha[2, , drop = FALSE], seed = 5),
                   rdirmn(10, 9, alpha[2, ], seed = 5))
})

# The blocks of rows 1 .. ends[1], ends[1] + 1 .. ends[2], ... drawn apart:
# draw(n, first_row, rows) draws block `rows` (1-based rows of the whole
# table), passing its n rows and first_row, the rows before it.
draw_blocks <- function(ends, draw) {
  starts <- c(0, ends[-length(ends)])
  lapply(seq_along(ends), function(i) {
    draw(ends[[i]] - starts[[i]], starts[[i]], (starts[[i]] + 1):ends[[i]])
  })
}

without_component <- function(m) {
  attr(m, "component") <- NULL
  m
}

test_that("blocks drawn with first_row bind into the table of one call", {
  n <- 60
  size <- 10 + (seq_len(n) %% 7) * 3
  cuts <- list(c(1, 33, 60), c(20, 21, 45, 60), 60)
  # one shared alpha
  alpha <- c(a = 0.5, b = 1.5, c = 3, d = 0.1)
  whole <- rdirmn(n, size, alpha, seed = 7)
  for (ends in cuts) {
    parts <- draw_blocks(ends, function(k, first, rows) {
      rdirmn(k, size[rows], alpha, seed = 7, first_row = first)
    })
    expect_identical(do.call(rbind, parts), whole, info = paste(ends, collapse = ","))
  }
  # first_row as an integer, and the other outputs
  expect_identical(rdirmn(27, size[34:60], alpha, seed = 7, first_row = 33L), whole[34:60, ])
  expect_identical(as.matrix(rdirmn(27, size[34:60], alpha, seed = 7, first_row = 33,
                                    output = "dgCMatrix")), whole[34:60, ] * 1)
  ct <- rdirmn(27, size[34:60], alpha, seed = 7, first_row = 33, output = "counts")
  expect_identical(as.matrix(ct), whole[34:60, ])
  close(ct)
  # a string seed, and a block far into the seed's table
  far <- rdirmn(8, 12, alpha, seed = "18446744073709551615", first_row = 1e9)
  expect_identical(rdirmn(5, 12, alpha, seed = "18446744073709551615", first_row = 1e9 + 3),
                   far[4:8, ])
  expect_false(identical(rdirmn(8, 12, alpha, seed = "18446744073709551615"), far))
  top <- rdirmn(3, 12, alpha, seed = 1, first_row = 2^53)
  expect_true(all(rowSums(top) == 12))
  # a mixture drawn from its weights: the counts and the components
  mix <- rbind(c(5, 1, 1, 0.5), c(1, 5, 1, 0.5), c(0.5, 1, 1, 5))
  w <- c(0.5, 0.3, 0.2)
  for (weights in list(w, NULL)) {
    whole <- rdirmn(n, size, mix, mixture_weights = weights, seed = 8)
    expect_length(unique(attr(whole, "component")), 3L)
    for (ends in cuts) {
      parts <- draw_blocks(ends, function(k, first, rows) {
        rdirmn(k, size[rows], mix, mixture_weights = weights, seed = 8, first_row = first)
      })
      info <- paste(c(ends, weights), collapse = ",")
      expect_identical(do.call(rbind, parts), without_component(whole), info = info)
      expect_identical(unlist(lapply(parts, attr, "component")), attr(whole, "component"),
                       info = info)
    }
  }
  # given components: each block passes its own rows' components
  comp <- rep_len(c(3L, 1L, 2L, 2L), n)
  whole <- rdirmn(n, size, mix, component = comp, seed = 9)
  parts <- draw_blocks(cuts[[1L]], function(k, first, rows) {
    rdirmn(k, size[rows], mix, component = comp[rows], seed = 9, first_row = first)
  })
  expect_identical(do.call(rbind, parts), without_component(whole))
  expect_identical(unlist(lapply(parts, attr, "component")), comp)
  # one alpha per row: each block passes its own rows of alpha
  rowwise_alpha <- mix[rep_len(1:3, n), ]
  whole <- rdirmn(n, size, rowwise_alpha, rowwise = TRUE, seed = 10)
  parts <- draw_blocks(cuts[[2L]], function(k, first, rows) {
    rdirmn(k, size[rows], rowwise_alpha[rows, , drop = FALSE], rowwise = TRUE, seed = 10,
           first_row = first)
  })
  expect_identical(do.call(rbind, parts), whole)
  # a block is not the table's first rows unless first_row is 0
  expect_false(identical(rdirmn(10, 12, alpha, seed = 7, first_row = 5),
                         rdirmn(10, 12, alpha, seed = 7)))
  expect_identical(rdirmn(10, 12, alpha, seed = 7, first_row = 0),
                   rdirmn(10, 12, alpha, seed = 7))
})

test_that("as.matrix and as_sparse copy a prepared table back exactly", {
  x <- matrix(c(0L, 3L, 0L, 7L, 0L, 0L, 1L, 2L, 0L, 0L, 0L, 9L), 4, 3,
              dimnames = list(paste0("r", 1:4), c("u", "v", "w")))
  for (input in list(x, Matrix::Matrix(x, sparse = TRUE),
                     methods::as(Matrix::Matrix(x, sparse = TRUE), "RsparseMatrix"))) {
    ct <- dirmn_counts(input)
    expect_identical(as.matrix(ct), x)
    sp <- as_sparse(ct)
    expect_s4_class(sp, "dgCMatrix")
    expect_identical(as.matrix(sp), x * 1)
    expect_identical(sp, methods::as(Matrix::Matrix(x * 1, sparse = TRUE), "generalMatrix"))
    close(ct)
  }
  # counts beyond R's integer range come back as doubles, exactly
  big <- rbind(c(3e9, 1), c(0, 2^40))
  ct <- dirmn_counts(big)
  m <- as.matrix(ct)
  expect_true(is.double(m))
  expect_identical(m, big)
  expect_identical(as.matrix(as_sparse(ct)), big)
  close(ct)
  expect_error(as.matrix(ct), "closed", class = "dirmn_error_null_pointer")
  # as_sparse of a plain matrix
  expect_identical(as.matrix(as_sparse(x)), x * 1)
})

test_that("simulate() draws tables of the observed totals from fitted models", {
  mite <- mite_table()
  x <- cbind(mite, empty = 0)
  fit <- dirmn_fit(x)
  s <- simulate(fit, nsim = 3, seed = 8)
  expect_type(s, "list")
  expect_length(s, 3L)
  expect_identical(attr(s, "seed"), 8)
  for (m in s) {
    expect_true(is.integer(m))
    expect_identical(dimnames(m), dimnames(x))
    expect_identical(rowSums(m), rowSums(x))
    expect_true(all(m[, "empty"] == 0))
  }
  expect_false(identical(s[[1]], s[[2]]))
  expect_identical(simulate(fit, nsim = 3, seed = attr(s, "seed")), s)
  set.seed(5)
  a <- simulate(fit)
  set.seed(5)
  expect_identical(simulate(fit), a)
  expect_length(a, 1L)
  # many tables: the mean count of each cell within Monte Carlo error of N_b p_v
  many <- simulate(fit, nsim = 400, seed = 3)
  avg <- Reduce(`+`, many) / 400
  alpha <- coef(fit)[coef(fit) > 0]
  ref <- t(vapply(rowSums(x), function(N) ref_moments(alpha, N)$mean, numeric(35)))
  sdv <- sqrt(t(vapply(rowSums(x), function(N) ref_moments(alpha, N)$variance, numeric(35))))
  expect_true(all(abs(avg[, names(alpha)] - ref) <= 6 * sdv / sqrt(400) + 1e-12))
  # a fit at the multinomial limit draws multinomial rows
  set.seed(1)
  multi <- t(rmultinom(60, 100, c(0.5, 0.3, 0.2)))
  mfit <- dirmn_fit(multi)
  expect_true(mfit$multinomial_limit)
  ms <- simulate(mfit, nsim = 50, seed = 2)
  col1 <- unlist(lapply(ms, function(m) m[, 1]))
  p1 <- coef(mfit)[[1]]
  expect_lt(abs(mean(col1) - 100 * p1), 6 * sqrt(100 * p1 * (1 - p1) / length(col1)))
  expect_lt(abs(var(col1) / (100 * p1 * (1 - p1)) - 1), 0.1)
})

test_that("simulate() of a mixture draws components from its weights", {
  mite <- mite_table()
  mix <- dirmn_mixture(mite, k = 1:2, starts = 1L)
  s <- simulate(mix, nsim = 2, seed = 4, components = 2)
  expect_length(s, 2L)
  for (m in s) {
    expect_identical(rowSums(m), rowSums(mite) * 1)
    expect_true(all(attr(m, "component") %in% 1:2))
  }
  expect_identical(simulate(mix$models[["2"]], nsim = 2, seed = 4), s)
  # the components' frequencies follow the weights
  big <- simulate(mix$models[["2"]], nsim = 100, seed = 5)
  comp <- unlist(lapply(big, attr, "component"))
  w <- mixture_weights(mix, components = 2)[[1]]
  expect_lt(abs(mean(comp == 1) - w), 6 * sqrt(w * (1 - w) / length(comp)))
  # a one-component model has no components to draw
  one <- simulate(mix, seed = 1, components = 1)[[1]]
  expect_identical(attr(one, "component"), rep(1L, nrow(mite)))
  expect_error(simulate(mix, components = 7), "no model with 7", class = "dirmn_error_invalid_argument")
})

test_that("simulate() of a regression draws each row from its fitted alpha", {
  set.seed(2)
  d <- data.frame(x = rnorm(40))
  alpha <- exp(cbind(1 + d$x, 1 - d$x, 0.5 + 0 * d$x))
  sizes <- 30 + rpois(40, 20)
  Y <- t(vapply(1:40, function(b) ref_rdirmn(1, sizes[b], alpha[b, ])[1, ], numeric(3)))
  colnames(Y) <- c("a", "b", "c")
  fit <- dirmn_reg(Y ~ x, data = d)
  s <- simulate(fit, nsim = 300, seed = 6)
  expect_length(s, 300L)
  expect_identical(colnames(s[[1]]), c("a", "b", "c"))
  for (m in s[1:3]) expect_identical(unname(rowSums(m)), rowSums(Y))
  fa <- predict(fit)
  N <- rowSums(Y)
  A <- rowSums(fa)
  p <- fa / A
  ref_mean <- N * p
  ref_sd <- sqrt(N * p * (1 - p) * (N + A) / (1 + A))
  avg <- Reduce(`+`, s) / 300
  expect_true(all(abs(avg - ref_mean) <= 6 * ref_sd / sqrt(300)))
  # a sparse response
  sfit <- dirmn_reg(Matrix::Matrix(Y, sparse = TRUE) ~ x, data = d)
  expect_identical(unname(simulate(sfit, seed = 6)[[1]]), unname(s[[1]]))
})

test_that("bad arguments of rdirmn, dirmn_moments and simulate are errors naming them", {
  expect_error(rdirmn(3, -1, c(1, 2)), "size", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 2.5, c(1, 2)), "size", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, c(1, 2), c(1, 2)), "size", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, NA, c(1, 2)), "size", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 2^31, c(1, 2)), "size", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, c(1, 0)), "column 2: alpha 0", class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, c(1, -2)), "alpha", class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, c(1, NA)), "column 2: alpha is NA",
               class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, c(1, Inf)), "alpha", class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 0))), "row 2, column 2 of alpha",
               class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1), c(0, 1)), rowwise = TRUE),
               "row 3, column 1", class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), rowwise = TRUE), "rowwise",
               class = "dirmn_error_dimension_mismatch")
  expect_error(rdirmn(3, 5, "a"), "alpha", class = "dirmn_error_invalid_parameter")
  expect_error(rdirmn(0, 5, c(1, 2)), "n must", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), component = c(1, 2, 3)), "component",
               class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), component = c(1, 2)), "component",
               class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, c(1, 2), component = c(1, 1, 1)), "component",
               class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), mixture_weights = c(1, -1)),
               "mixture_weights", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), mixture_weights = c(0, 0)),
               "mixture_weights", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, rbind(c(1, 2), c(1, 1)), mixture_weights = 1),
               "mixture_weights", class = "dirmn_error_invalid_argument")
  expect_error(rdirmn(3, 5, c(1, 2), seed = -1), "seed", class = "dirmn_error_invalid_argument")
  for (bad in list(-1, 1.5, NA, NA_integer_, NaN, Inf, 2^53 + 2, 2^63, c(0, 1), numeric(0),
                  "1", TRUE, NULL, -.Machine$integer.max)) {
    expect_error(rdirmn(3, 5, c(1, 2), seed = 1, first_row = bad), "first_row",
                 class = "dirmn_error_invalid_argument")
  }
  expect_error(rdirmn(3, 5, c(1, 2), output = "array"), "output",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_moments(c(1, 0), 3), "alpha", class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_moments(c(1, 2), -3), "size", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_moments(c(1, 2), Inf), "size", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_moments(rbind(c(1, 2), c(1, 2)), 3), "one parameter vector",
               class = "dirmn_error_dimension_mismatch")
  fit <- dirmn_fit(mite_table())
  expect_error(simulate(fit, nsim = 0), "nsim", class = "dirmn_error_invalid_argument")
  expect_error(simulate(fit, seed = 1.5), "seed", class = "dirmn_error_invalid_argument")
})
