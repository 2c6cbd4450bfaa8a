# Matching parameters to a table's columns by name (issue #25, item 8):
# where both carry names, a parameter vector (or the columns of a parameter
# matrix) is reordered to the table's columns; names that are not the
# table's are an error. Without names on either side, positions count.

# `value`: a vector (names) or a matrix (column names) of parameters; `cn`:
# the table's column names (NULL for none); `what` and `table_arg` name the
# two in messages. Lengths that differ are left to the caller's own checks
# (which say so); duplicated names are matched only when they are already
# in the table's order.
.match_names <- function(value, cn, what, table_arg, call) {
  if (is.null(cn)) return(value)
  is_matrix <- length(dim(value)) == 2L
  nm <- if (is_matrix) colnames(value) else names(value)
  if (is.null(nm) || identical(nm, cn)) return(value)
  if (length(nm) != length(cn)) return(value)
  if (anyDuplicated(nm) || anyDuplicated(cn) || !setequal(nm, cn)) {
    missing_in_value <- setdiff(cn, nm)
    extra_in_value <- setdiff(nm, cn)
    parts <- character()
    if (length(extra_in_value) > 0L) {
      parts <- c(parts, sprintf("%s %s not %s column%s of %s", .quote_names(extra_in_value),
                                if (length(extra_in_value) == 1L) "is" else "are",
                                if (length(extra_in_value) == 1L) "a" else "among the",
                                if (length(extra_in_value) == 1L) "" else "s", table_arg))
    }
    if (length(missing_in_value) > 0L) {
      parts <- c(parts, sprintf("%s of %s %s missing from %s", .quote_names(missing_in_value),
                                table_arg, if (length(missing_in_value) == 1L) "is" else "are",
                                what))
    }
    if (length(parts) == 0L) parts <- "names are duplicated"
    .stop("dimension_mismatch", sprintf(
      "the %snames of %s are not the column names of %s: %s", if (is_matrix) "column " else "",
      what, table_arg, paste(parts, collapse = "; ")), call)
  }
  if (is_matrix) value[, cn, drop = FALSE] else value[cn]
}

# At most `n` names, quoted, then how many more.
.quote_names <- function(names, n = 5L) {
  shown <- paste0("\"", names[seq_len(min(n, length(names)))], "\"", collapse = ", ")
  if (length(names) > n) shown <- sprintf("%s and %d more", shown, length(names) - n)
  shown
}
