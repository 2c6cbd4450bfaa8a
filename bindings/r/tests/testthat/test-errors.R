x <- matrix(c(3L, 0L, 1L, 2L, 5L, 0L, 1L, 1L, 4L), 3, 3)
alpha <- c(1, 2, 3)

test_that("conditions carry class, status, message and call", {
  bad <- x
  bad[2, 3] <- -4L
  e <- tryCatch(ddirmn(bad, alpha), error = identity)
  expect_s3_class(e, "dirmn_error_invalid_counts")
  expect_identical(class(e), c("dirmn_error_invalid_counts", "dirmn_error", "error", "condition"))
  expect_identical(e$status, 3L)
  expect_match(conditionMessage(e), "row 2, column 3")
  expect_identical(conditionCall(e)[[1]], as.name("ddirmn"))
})

test_that("invalid counts name their row and column", {
  cases <- list(
    list(-1, "negative"), list(2.5, "integ"), list(Inf, "finite|inf"),
    list(NaN, "finite|nan|NaN")
  )
  for (case in cases) {
    bad <- x + 0
    bad[3, 2] <- case[[1]]
    expect_error(ddirmn(bad, alpha), "row 3, column 2", class = "dirmn_error_invalid_counts")
    expect_error(dirmn_counts(bad), "row 3, column 2", class = "dirmn_error_invalid_counts")
    sp <- Matrix::Matrix(bad, sparse = TRUE)
    expect_error(ddirmn(sp, alpha), "row 3, column 2", class = "dirmn_error_invalid_counts")
  }
})

test_that("NA counts are reported as NA with their row and column", {
  bad_int <- x
  bad_int[2, 3] <- NA_integer_
  expect_error(ddirmn(bad_int, alpha), "row 2, column 3: count is NA",
               class = "dirmn_error_invalid_counts")
  expect_error(dirmn_counts(bad_int), "row 2, column 3: count is NA",
               class = "dirmn_error_invalid_counts")
  bad_dbl <- x + 0
  bad_dbl[1, 2] <- NA_real_
  expect_error(ddirmn(bad_dbl, alpha), "row 1, column 2: count is NA",
               class = "dirmn_error_invalid_counts")
  sp <- Matrix::Matrix(bad_dbl, sparse = TRUE)
  expect_error(ddirmn(sp, alpha), "row 1, column 2: count is NA",
               class = "dirmn_error_invalid_counts")
  expect_error(ddirmn(methods::as(sp, "RsparseMatrix"), alpha), "row 1, column 2: count is NA",
               class = "dirmn_error_invalid_counts")
  expect_error(ddirmn(c(1L, NA, 2L), alpha), "row 1, column 2: count is NA",
               class = "dirmn_error_invalid_counts")
})

test_that("invalid alpha is an invalid-parameter error", {
  for (value in list(0, -1, Inf, NaN)) {
    bad <- alpha
    bad[2] <- value
    expect_error(ddirmn(x, bad), "^column 2: alpha", class = "dirmn_error_invalid_parameter")
    expect_error(ddirmn(dirmn_counts(x), bad), "^column 2: alpha",
                 class = "dirmn_error_invalid_parameter")
    per_row <- matrix(1, 3, 3)
    per_row[2, 3] <- value
    expect_error(ddirmn(x, per_row, rowwise = TRUE), "^row 2, column 3: alpha",
                 class = "dirmn_error_invalid_parameter")
    # K vectors: the position is alpha's row and column
    vectors <- matrix(1, 2, 3)
    vectors[2, 3] <- value
    expect_error(ddirmn(x, vectors), "^row 2, column 3 of alpha: alpha",
                 class = "dirmn_error_invalid_parameter")
  }
  expect_error(ddirmn(x, c(1, NA, 3)), "^column 2: alpha is NA$",
               class = "dirmn_error_invalid_parameter")
  expect_error(ddirmn(x, NA), class = "dirmn_error")
  per_row <- matrix(1, 3, 3)
  per_row[3, 1] <- NA
  expect_error(ddirmn(x, per_row, rowwise = TRUE), "^row 3, column 1: alpha is NA$",
               class = "dirmn_error_invalid_parameter")
  expect_error(ddirmn(x, per_row), "^row 3, column 1 of alpha: alpha is NA$",
               class = "dirmn_error_invalid_parameter")
  expect_error(ddirmn(x, c("1", "2", "3")), class = "dirmn_error_invalid_parameter")
  expect_error(ddirmn(x, data.frame(a = 1, b = 2, c = 3)),
               class = "dirmn_error_invalid_parameter")
})

test_that("alpha may be a dense Matrix; anything refused is named by its class", {
  msg <- function(expr) conditionMessage(tryCatch(expr, error = identity))
  vectors <- rbind(flat = c(1, 1, 1), peaked = c(0.5, 4, 2))
  dge <- Matrix::Matrix(vectors, sparse = FALSE)
  expect_s4_class(dge, "dgeMatrix")
  expect_identical(ddirmn(x, dge), ddirmn(x, vectors))
  expect_identical(ddirmn(x, dge, log = TRUE), ddirmn(x, vectors, log = TRUE))
  per_row <- matrix(c(1, 2, 3, 2, 2, 2, 0.5, 1, 4), 3, 3)
  expect_identical(ddirmn(x, Matrix::Matrix(per_row, sparse = FALSE), rowwise = TRUE),
                   ddirmn(x, per_row, rowwise = TRUE))
  # a symmetric dense class too, and a bad value in it names its cell
  sym <- Matrix::Matrix(crossprod(per_row), sparse = FALSE)
  expect_s4_class(sym, "dsyMatrix")
  expect_identical(ddirmn(x, sym), ddirmn(x, as.matrix(sym)))
  bad <- Matrix::Matrix(replace(vectors, 4L, -1), sparse = FALSE)
  expect_error(ddirmn(x, bad), "^row 2, column 2 of alpha: alpha -1",
               class = "dirmn_error_invalid_parameter")
  # a shared vector for dirmn_loglik_sum() stays a vector
  expect_error(dirmn_loglik_sum(x, Matrix::Matrix(alpha, 1, sparse = FALSE)),
               "alpha must be a vector", class = "dirmn_error_dimension_mismatch")
  # still refused, with the class named
  expect_identical(msg(ddirmn(x, Matrix::Matrix(vectors, sparse = TRUE))),
                   "alpha must be a numeric vector or matrix, not an object of class dgCMatrix")
  expect_identical(msg(ddirmn(x, factor(1:3))),
                   "alpha must be a numeric vector or matrix, not an object of class factor")
  expect_identical(msg(ddirmn(x, c("1", "2", "3"))),
                   "alpha must be a numeric vector or matrix, not character")
  expect_error(dirmn_loglik_sum(x, Matrix::Matrix(vectors, sparse = TRUE)), "dgCMatrix",
               class = "dirmn_error_invalid_parameter")
})

test_that("a sum of alpha that overflows names alpha, not a vector", {
  # a single vector: no position (it was "vector 1: ..." once)
  overflow <- "the sum of alpha overflows (above the largest double, 1.8e+308)"
  for (input in list(1:4, matrix(1:8, 2), dirmn_counts(matrix(1:8, 2)))) {
    e <- tryCatch(ddirmn(input, rep(1e308, 4)), error = identity)
    expect_s3_class(e, "dirmn_error_invalid_parameter")
    expect_identical(conditionMessage(e), overflow)
  }
  expect_identical(conditionMessage(tryCatch(dirmn_loglik_sum(1:4, rep(1e308, 4)),
                                             error = identity)), overflow)
  # one alpha per row: the row; K vectors: alpha's row
  big <- matrix(1, 3, 3)
  big[2, ] <- 1e308
  expect_identical(conditionMessage(tryCatch(ddirmn(x, big, rowwise = TRUE), error = identity)),
                   paste("row 2:", overflow))
  expect_identical(conditionMessage(tryCatch(ddirmn(x, big), error = identity)),
                   paste("row 2 of alpha:", overflow))
})

test_that("alpha of the wrong size is a dimension mismatch", {
  expect_error(ddirmn(x, c(1, 2)), "length 2 .* 3 columns",
               class = "dirmn_error_dimension_mismatch")
  expect_error(ddirmn(dirmn_counts(x), c(1, 2, 3, 4)),
               class = "dirmn_error_dimension_mismatch")
  expect_error(ddirmn(x, matrix(1, 2, 3), rowwise = TRUE),
               "with rowwise = TRUE, alpha must be a 3 x 3 matrix .* not a 2 x 3 matrix",
               class = "dirmn_error_dimension_mismatch")
  expect_error(ddirmn(x, c(1, 1, 1), rowwise = TRUE), "not a vector",
               class = "dirmn_error_dimension_mismatch")
  expect_error(ddirmn(x, matrix(1, 3, 2)), "3 x 2 matrix but the counts have 3 columns",
               class = "dirmn_error_dimension_mismatch")
  expect_error(ddirmn(x, alpha, rowwise = NA), "rowwise must be TRUE or FALSE",
               class = "dirmn_error_invalid_argument")
  expect_identical(tryCatch(ddirmn(x, 1), error = function(e) e$status), 5L)
})

test_that("bad arguments are invalid-argument errors", {
  expect_error(ddirmn(letters[1:3], alpha), "not character",
               class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(list(1, 2, 3), alpha), class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(array(1L, c(3, 3, 3)), alpha), class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(data.frame(a = 1, b = "x", c = 2), alpha), "column b",
               class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(x, alpha, log = NA), "log", class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(x, alpha, full = "yes"), "full", class = "dirmn_error_invalid_argument")
  expect_error(dirmn_counts(x, backend = "tpu"), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_counts(x, device = -1), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_counts(x, device = 1.5), class = "dirmn_error_invalid_argument")
  expect_error(dirmn_counts(x[0, , drop = FALSE]), class = "dirmn_error_invalid_argument")
  expect_error(ddirmn(matrix(integer(0), 2, 0), numeric(0)), class = "dirmn_error_invalid_argument")
})

test_that("a bad dirmn.backend or dirmn.device option is named as the option, with its value", {
  msg <- function(expr) conditionMessage(tryCatch(expr, error = identity))
  old <- options(dirmn.backend = "gpu", dirmn.device = getOption("dirmn.device"))
  on.exit(options(old))
  backend <- "options(dirmn.backend = \"gpu\") is not one of \"auto\", \"cpu\" or \"cuda\""
  for (f in list(function() ddirmn(x, alpha), function() dirmn_fit(x),
                 function() dirmn_loglik_sum(x, alpha), function() dirmn_mixture(x, k = 1))) {
    expect_identical(msg(f()), backend)
    expect_error(f(), class = "dirmn_error_invalid_argument")
  }
  # an argument given is named as the argument
  expect_identical(msg(dirmn_fit(x, backend = "gpu")),
                   "backend must be one of \"auto\", \"cpu\" or \"cuda\"")
  expect_identical(msg(dirmn_counts(x, backend = "gpu")),
                   "backend must be one of \"auto\", \"cpu\" or \"cuda\"")
  # and a good argument overrides the bad option
  expect_s3_class(dirmn_fit(x, backend = "cpu"), "dirmn_fit")
  options(dirmn.backend = c("cpu", "cuda"))
  expect_identical(msg(ddirmn(x, alpha)),
                   "options(dirmn.backend = c(\"cpu\", \"cuda\")) is not one of \"auto\", \"cpu\" or \"cuda\"")
  options(dirmn.backend = "cpu", dirmn.device = -1)
  device <- paste("options(dirmn.device = -1) is not a single non-negative whole number",
                  "(a CUDA device index)")
  for (f in list(function() ddirmn(x, alpha), function() dirmn_fit(x),
                 function() dirmn_loglik_sum(x, alpha), function() dirmn_mixture(x, k = 1))) {
    expect_identical(msg(f()), device)
    expect_error(f(), class = "dirmn_error_invalid_argument")
  }
  options(dirmn.device = "0")
  expect_identical(msg(ddirmn(x, alpha)), paste(
    "options(dirmn.device = \"0\") is not a single non-negative whole number (a CUDA device index)"))
  expect_identical(msg(dirmn_counts(x, device = 1.5)),
                   "device must be a single non-negative whole number")
  # a prepared table does not read the options
  options(dirmn.backend = "gpu", dirmn.device = -1)
  expect_length(ddirmn(dirmn_counts(x, backend = "cpu", device = 0), alpha), 3L)
})

test_that("an unavailable backend is a backend-unavailable error", {
  if (!dirmn_backends()$backends$compiled[2]) {
    expect_error(dirmn_counts(x, backend = "cuda"), class = "dirmn_error_backend_unavailable")
  }
  expect_error(dirmn_counts(x, backend = "cuda", device = 4096),
               class = "dirmn_error_backend_unavailable")
})

test_that("an interrupted computation is a cancelled error and leaves no handle", {
  big <- random_counts(20000, 200, seed = 21)
  counts <- dirmn_counts(big, backend = "cpu")
  gc()
  live <- dirmn:::cpp_live_counts()
  dirmn:::cpp_set_force_cancel(TRUE)
  on.exit(dirmn:::cpp_set_force_cancel(FALSE))
  a <- rep(1, 200)
  expect_error(ddirmn(counts, a), class = "dirmn_error_cancelled")
  expect_error(ddirmn(big, a), class = "dirmn_error_cancelled")
  dirmn:::cpp_set_force_cancel(FALSE)
  gc()
  expect_identical(dirmn:::cpp_live_counts(), live)
  expect_length(ddirmn(counts, a), 20000)
})

test_that("every library status maps to its condition class", {
  statuses <- c(null_pointer = 1, invalid_argument = 2, invalid_counts = 3,
                invalid_parameter = 4, dimension_mismatch = 5, wrong_context = 6,
                out_of_memory = 7, backend_unavailable = 8, device = 9, overflow = 10,
                cancelled = 11, not_supported = 12, context_in_use = 13, communication = 14,
                internal = 99)
  for (name in names(statuses)) {
    cond <- dirmn:::dirmn_condition(statuses[[name]], "msg")
    expect_s3_class(cond, paste0("dirmn_error_", name))
    expect_s3_class(cond, "dirmn_error")
    expect_identical(cond$status, as.integer(statuses[[name]]))
  }
  expect_s3_class(dirmn:::dirmn_condition(1234, "msg"), "dirmn_error_unknown")
  # the table covers exactly the statuses the library knows
  known <- vapply(0:200, function(s) dirmn:::cpp_status_string(s) != "unknown status", TRUE)
  expect_setequal((0:200)[known], c(0, unname(statuses)))
})

test_that("library messages are restated with 1-based rows and columns", {
  # the wording, from the location the library reports (0-based)
  say <- function(...) dirmn:::.location_message(list(...))
  expect_identical(say(argument = "data", row = 0, column = 41, detail = "count -1 is negative"),
                   "row 1, column 42: count -1 is negative")
  expect_identical(say(argument = "params", vector = 0, index = 9,
                       detail = "alpha 0 is not positive"),
                   "column 10: alpha 0 is not positive")
  expect_identical(say(argument = "params", row = 4, index = 0, detail = "alpha NaN is NaN"),
                   "row 5, column 1: alpha NaN is NaN")
  expect_identical(say(argument = "", detail = "device index 3 is negative"),
                   "device index 3 is negative")
  expect_identical(say(argument = "data", row = 2, column = 0, detail = "count Inf is infinite"),
                   "row 3, column 1: count Inf is infinite")
  expect_identical(say(argument = "params", vector = 0, index = 1,
                       detail = "alpha -Inf is infinite"),
                   "column 2: alpha -Inf is infinite")
  expect_identical(say(argument = "data", row = 0, column = 0, detail = "count NaN is NaN"),
                   "row 1, column 1: count NaN is NaN")
  expect_identical(say(argument = "data", row = 1, column = 1, detail = paste(
    "count 2.5 is not an integer (set DIRMN_COUNTS_REAL_VALUED for real-valued counts)")),
    "row 2, column 2: count 2.5 is not an integer")
  expect_identical(say(argument = "params", vector = 0, detail = "the sum of alpha overflows"),
                   "the sum of alpha overflows (above the largest double, 1.8e+308)")
  expect_identical(say(argument = "params", row = 6, detail = "the sum of alpha overflows"),
                   "row 7: the sum of alpha overflows (above the largest double, 1.8e+308)")
  # positions that do not apply come as NA (from the C++ layer) or -1
  expect_identical(say(argument = "params", row = NA, column = -1, vector = 2, index = 0,
                       value = NA, detail = "alpha 0 is not positive"),
                   "vector 3, column 1: alpha 0 is not positive")
  expect_identical(say(argument = "weights", row = 2, value = -1,
                       detail = "weight -1 is negative; weights must be finite and >= 0"),
                   "weight of row 3 is -1; weights must be finite and >= 0")
  expect_identical(say(argument = "weights", row = 0, value = Inf,
                       detail = "weight Inf is infinite; weights must be finite and >= 0"),
                   "weight of row 1 is Inf; weights must be finite and >= 0")
  expect_identical(say(argument = "start", index = 1, value = 0,
                       detail = "alpha 0 is not positive and finite"),
                   "start column 2: alpha 0 is not positive and finite")

  # end to end: the library's message and its location agree, and R words them
  bad <- x
  bad[3, 2] <- -1L
  ctx <- dirmn:::.context("cpu")
  f <- dirmn:::cpp_ddirmn_table(ctx$ptr, bad, 0L, alpha, FALSE, TRUE, TRUE)
  expect_s3_class(f, "dirmn_failure")
  expect_identical(f$name, "DIRMN_ERROR_INVALID_COUNTS")
  expect_identical(f$message,
                   "dirmn_counts_create_dense: row 2, column 1 (0-based): count -1 is negative")
  expect_identical(f[c("argument", "row", "column", "detail", "value")],
                   list(argument = "data", row = 2, column = 1,
                        detail = "count -1 is negative", value = -1))
  expect_identical(conditionMessage(tryCatch(ddirmn(bad, alpha), error = identity)),
                   "row 3, column 2: count -1 is negative")
  bad <- x + 0
  bad[2, 1] <- 2.5
  expect_identical(conditionMessage(tryCatch(ddirmn(bad, alpha), error = identity)),
                   "row 2, column 1: count 2.5 is not an integer")
  expect_identical(conditionMessage(tryCatch(ddirmn(x, c(1, 2, -Inf)), error = identity)),
                   "column 3: alpha -Inf is infinite")
  expect_identical(conditionMessage(tryCatch(dirmn_loglik_sum(x, alpha, weights = c(1, -2, 1)),
                                             error = identity)),
                   "weight of row 2 is -2; weights must be finite and >= 0")
})

test_that("double counts are quoted as R prints them, integers exactly", {
  msg <- function(expr) conditionMessage(tryCatch(expr, error = identity))
  # R's digits, not the library's 17 where a double needs them
  expect_identical(msg(ddirmn(c(2, 0.1), c(1, 1))), "row 1, column 2: count 0.1 is not an integer")
  expect_identical(msg(ddirmn(Matrix::Matrix(c(0, 0.1, 3, 0), 2, sparse = TRUE), c(1, 1))),
                   "row 2, column 1: count 0.1 is not an integer")
  expect_identical(msg(dirmn_counts(rbind(c(1, 2), c(1e300, 1)))),
                   "row 2, column 1: count 1e+300 is 2^53 or more (counts must be below 2^53)")
  # above 2^53 with every digit R needs to give the number back: never a
  # rounding that reads below 2^53
  expect_identical(msg(ddirmn(c(2^53 + 2, 1), c(1, 1))),
                   "row 1, column 1: count 9007199254740994 is 2^53 or more (counts must be below 2^53)")
  expect_identical(msg(ddirmn(c(2^53, 1), c(1, 1))),
                   "row 1, column 1: count 9007199254740992 is 2^53 or more (counts must be below 2^53)")
  expect_identical(msg(ddirmn(c(1, 123456789012.5), c(1, 1))),
                   "row 1, column 2: count 123456789012.5 is not an integer")
  expect_identical(msg(ddirmn(c(1, -Inf), c(1, 1))), "row 1, column 2: count -Inf is infinite")
  # an integer count is the caller's integer: the library says which, exactly
  ctx <- dirmn:::.context("cpu")
  f <- dirmn:::cpp_ddirmn_table(ctx$ptr, matrix(c(1L, -7L), 1), 0L, c(1, 1), FALSE, TRUE, TRUE)
  expect_identical(f[c("value", "integer_value")], list(value = -7, integer_value = "-7"))
  f <- dirmn:::cpp_ddirmn_table(ctx$ptr, matrix(c(1, -7), 1), 0L, c(1, 1), FALSE, TRUE, TRUE)
  expect_identical(f[c("value", "integer_value")], list(value = -7, integer_value = NA_character_))
  # and R quotes it as given, where a double could not hold it (an int64
  # count, 2^53 + 1; R's own tables are int32 and double)
  say <- function(...) dirmn:::.location_message(list(...), table = list(kind = 1L, dim = c(3, 3)))
  expect_identical(say(argument = "data", row = 0, column = 1, value = 2^53,
                       integer_value = "9007199254740993",
                       detail = "count 9007199254740993 is 2^53 or more (counts must be below 2^53)"),
                   "row 1, column 2: count 9007199254740993 is 2^53 or more (counts must be below 2^53)")
  expect_identical(say(argument = "indices", column = 0, index = 0, value = 2^53,
                       integer_value = "9007199254740993", detail = "row index out of range"),
                   paste("x@i[1] = 9007199254740993 (column 1) is not a row index of a 3-row",
                         "matrix (x@i holds 0-based row indices, 0 to 2)"))
  # bit64's integer64 (int64 bits in a double vector) is refused, never read
  # as doubles
  i64 <- structure(numeric(6), dim = 2:3, class = "integer64")
  expect_error(ddirmn(i64, c(1, 1, 1)), "class integer64 \\(bit64\\) are not supported",
               class = "dirmn_error_invalid_argument")
  expect_error(dirmn_counts(i64), "integer64", class = "dirmn_error_invalid_argument")
  a64 <- structure(c(1, 2, 3), class = "integer64")
  expect_error(ddirmn(x, a64), "^alpha values of class integer64",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_loglik_sum(x, a64), "integer64", class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_fit(x, weights = a64), "^weights of class integer64",
               class = "dirmn_error_invalid_parameter")
  expect_error(dirmn_fit(x, start = a64), "^start values of class integer64",
               class = "dirmn_error_invalid_parameter")
})

test_that("a NaN weight is NaN and an NA weight NA, wherever weights are taken", {
  msg <- function(expr) conditionMessage(tryCatch(expr, error = identity))
  counts <- dirmn_counts(x, backend = "cpu")
  calls <- list(
    fit = function(w) dirmn_fit(x, weights = w),
    fit_prepared = function(w) dirmn_fit(counts, weights = w),
    loglik_sum = function(w) dirmn_loglik_sum(x, alpha, weights = w),
    loglik_sum_prepared = function(w) dirmn_loglik_sum(counts, alpha, weights = w),
    mixture = function(w) dirmn_mixture(x, k = 1, weights = w),
    mixture_prepared = function(w) dirmn_mixture(counts, k = 1, weights = w))
  for (name in names(calls)) {
    f <- calls[[name]]
    expect_identical(msg(f(c(1, NaN, 1))), "weight of row 2 is NaN; weights must be finite and >= 0",
                     label = name)
    expect_identical(msg(f(c(1, NA, 1))), "weight of row 2 is NA; weights must be finite and >= 0",
                     label = name)
    # the first of them, by its name
    expect_identical(msg(f(c(1, NaN, NA))), "weight of row 2 is NaN; weights must be finite and >= 0",
                     label = name)
    expect_identical(msg(f(c(NA, NaN, 1))), "weight of row 1 is NA; weights must be finite and >= 0",
                     label = name)
    expect_identical(msg(f(c(1, 1, -Inf))), "weight of row 3 is -Inf; weights must be finite and >= 0",
                     label = name)
    expect_error(f(c(1, NaN, 1)), class = "dirmn_error_invalid_parameter")
  }
  # the library words a NaN weight the same way
  res <- dirmn:::cpp_loglik_sum(counts$ptr, alpha, c(1, NaN, 1), FALSE, TRUE)
  expect_identical(dirmn:::.location_message(res),
                   "weight of row 2 is NaN; weights must be finite and >= 0")
  # start values: NaN is NaN too
  expect_identical(msg(dirmn_fit(x, start = c(1, NaN, 1))),
                   "start column 2: alpha NaN is not positive and finite")
  expect_identical(msg(dirmn_fit(x, start = c(1, NA, 1))), "start column 2: alpha is NA")
})

test_that("the documented condition classes are the library's status names", {
  # the class of each status is worded from dirmn_status_name
  for (s in c(1:14, 99)) {
    name <- dirmn:::cpp_status_name(s)
    expect_match(name, "^DIRMN_ERROR_[A-Z_]+$")
    expect_identical(class(dirmn:::dirmn_condition(s, "msg"))[1],
                     paste0("dirmn_error_", tolower(sub("DIRMN_ERROR_", "", name))))
  }
  expect_identical(dirmn:::cpp_status_name(1234), "DIRMN_STATUS_UNKNOWN")
  # and the table in ?dirmn_error lists exactly those classes and numbers
  rd <- tryCatch(tools::Rd_db("dirmn")[["dirmn_error.Rd"]], error = function(e) NULL)
  skip_if(is.null(rd), "the installed help of dirmn is not readable")
  text <- paste(as.character(rd), collapse = "")
  rows <- regmatches(text, gregexpr("dirmn_error_[a-z_]+\\}[[:space:]]*\\\\tab[[:space:]]*[0-9]+",
                                     text))[[1]]
  documented <- as.integer(sub(".*tab[[:space:]]*", "", rows))
  names(documented) <- sub("\\}.*", "", rows)
  expect_length(documented, 15L)
  for (cls in names(documented)) {
    expect_identical(class(dirmn:::dirmn_condition(documented[[cls]], "msg"))[1], cls)
  }
})

test_that("a library of another major version, or older than 0.3.0, is refused at load", {
  expect_invisible(dirmn:::.check_version(300, 302))
  expect_invisible(dirmn:::.check_version(401, 300))
  expect_error(dirmn:::.check_version(10000, 300), "different major version",
               class = "dirmn_error_version_mismatch")
  expect_error(dirmn:::.check_version(100, 300), "older than 0.3.0",
               class = "dirmn_error_version_mismatch")
  # the package's version is the library's it was built against
  v <- dirmn:::cpp_version()
  expect_identical(dirmn:::.version_string(v$header), as.character(utils::packageVersion("dirmn")))
})

test_that("a corrupt sparse matrix is reported in terms of its slots, 1-based", {
  sp <- Matrix::Matrix(matrix(c(1, 0, 2, 0, 3, 0, 1, 1, 0), 3), sparse = TRUE)
  expect_identical(sp@i, c(0L, 2L, 1L, 0L, 1L))
  expect_identical(sp@p, c(0L, 2L, 3L, 5L))
  msg <- function(expr) conditionMessage(tryCatch(expr, error = identity))
  # slots edited in place: Matrix checks validity only in new() and validObject()
  bad <- sp
  bad@i[1] <- 7L
  expected <- paste("x@i[1] = 7 (column 1) is not a row index of a 3-row matrix",
                    "(x@i holds 0-based row indices, 0 to 2)")
  expect_identical(msg(ddirmn(bad, c(1, 1, 1))), expected)
  expect_identical(msg(dirmn_counts(bad)), expected)
  expect_identical(msg(dirmn_fit(bad)), expected)
  expect_error(ddirmn(bad, c(1, 1, 1)), class = "dirmn_error_invalid_argument")
  bad <- sp
  bad@i[4] <- -1L
  expect_match(msg(ddirmn(bad, c(1, 1, 1))), "^x@i\\[4\\] = -1 \\(column 3\\) is not a row index")
  bad <- sp
  bad@p[2:3] <- c(3L, 1L)
  expect_identical(msg(ddirmn(bad, c(1, 1, 1))),
                   "x@p[3] = 1 is below x@p[2] = 3 (the p slot must not decrease)")
  bad <- sp
  bad@p[3] <- 9L
  expect_identical(msg(ddirmn(bad, c(1, 1, 1))),
                   "x@p[3] = 9 is above x@p[4] = 5, the number of stored entries")
  bad <- sp
  bad@p[1] <- 1L
  expect_identical(msg(ddirmn(bad, c(1, 1, 1))), "x@p[1] = 1, but the p slot must start at 0")
  bad <- sp
  bad@i[2] <- 0L
  expect_identical(msg(ddirmn(bad, c(1, 1, 1))),
                   "cell [1, 1] is stored more than once: x@i holds 0 twice in column 1")
  # a dgRMatrix: its j slot, rows as the outer dimension
  csr <- methods::as(sp, "RsparseMatrix")
  csr@j[1] <- 9L
  expect_identical(msg(ddirmn(csr, c(1, 1, 1))), paste(
    "x@j[1] = 9 (row 1) is not a column index of a 3-column matrix",
    "(x@j holds 0-based column indices, 0 to 2)"))
  # the argument is named as the function calls it
  fit <- dirmn_mixture(matrix(c(5L, 1L, 0L, 4L, 0L, 6L), 3), k = 1)
  expect_identical(msg(predict(fit, bad)),
                   "cell [1, 1] is stored more than once: newdata@i holds 0 twice in column 1")
  # nothing of the old 0-based wording with C names is left
  expect_false(grepl("entry 0|outside \\[0", msg(ddirmn(csr, c(1, 1, 1)))))
})

test_that("a cancellation from the interrupt check prints nothing and says why", {
  # mode 2 raises an R error inside the interrupt check, as an elapsed
  # setTimeLimit() does; R used to print "Error in .Call(...)" for it even
  # when the caller caught the cancellation
  x2 <- random_counts(2000, 50, seed = 22)
  dirmn:::cpp_set_force_cancel(2L)
  on.exit(dirmn:::cpp_set_force_cancel(0L))
  printed <- capture.output(e <- tryCatch(ddirmn(x2, rep(1, 50)), error = identity),
                            type = "message")
  dirmn:::cpp_set_force_cancel(0L)
  expect_identical(printed, character(0))
  expect_s3_class(e, "dirmn_error_cancelled")
  expect_identical(conditionMessage(e), "cancelled (a test error raised by the interrupt check)")
  # the package still works afterwards
  expect_length(ddirmn(x2, rep(1, 50)), 2000)
})

test_that("a computation stopped by setTimeLimit() prints nothing when caught", {
  rscript <- file.path(R.home("bin"), "Rscript")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  # a single long call (an EM run of seconds) on a prepared table, so the
  # limit passes inside the library, which polls the interrupt check
  writeLines(c(
    "library(dirmn)",
    "set.seed(1)",
    "x <- matrix(rpois(3000 * 50, 3), ncol = 50)",
    "counts <- dirmn_counts(x, backend = 'cpu')",
    "e <- tryCatch({ setTimeLimit(elapsed = 0.1, transient = TRUE);",
    "  dirmn_mixture(counts, k = 6, starts = 5, max_iterations = 200, tolerance = 1e-14); 'finished' },",
    "  error = identity)",
    "setTimeLimit()",
    "cat(if (is.character(e)) e else class(e)[1], '\\n')"), script)
  err <- tempfile()
  on.exit(unlink(err), add = TRUE)
  out <- system2(rscript, c("--vanilla", shQuote(script)), stdout = TRUE, stderr = err,
                 env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
  expect_identical(readLines(err), character(0))
  # the limit lands inside the library, or (on a very slow machine) in R
  # code around it; either way it is caught and nothing is printed
  expect_true(trimws(out) %in% c("dirmn_error_cancelled", "simpleError"))
})
