# Contexts (one per backend and device) are made on first use and kept for
# the session: a context owns a device stream and workspace, and making one
# per call would cost far more than the calls themselves.
.state <- new.env(parent = emptyenv())
.state$contexts <- new.env(parent = emptyenv())

.backend_codes <- c(auto = 0L, cpu = 1L, cuda = 2L)

# `option`: the value came from options(dirmn.backend) (or dirmn.device),
# not from an argument, and the message names the option and its value.
.check_backend <- function(backend, call, option = FALSE) {
  if (!is.character(backend) || length(backend) != 1L || is.na(backend) ||
      !(backend %in% names(.backend_codes))) {
    choices <- "one of \"auto\", \"cpu\" or \"cuda\""
    .stop("invalid_argument",
          if (option) sprintf("options(dirmn.backend = %s) is not %s", .option_text(backend), choices)
          else paste("backend must be", choices), call)
  }
  backend
}

.check_device <- function(device, call, option = FALSE) {
  if (!is.numeric(device) || length(device) != 1L || is.na(device) ||
      device != trunc(device) || device < 0 || device > .Machine$integer.max) {
    what <- "a single non-negative whole number"
    .stop("invalid_argument",
          if (option) sprintf("options(dirmn.device = %s) is not %s (a CUDA device index)",
                              .option_text(device), what)
          else paste("device must be", what), call)
  }
  as.integer(device)
}

# An option's value as the user would have written it, shortened.
.option_text <- function(value) {
  text <- paste(deparse(value, width.cutoff = 500L), collapse = " ")
  if (nchar(text) > 60L) paste0(substr(text, 1L, 57L), "...") else text
}

# The cached context for (backend, device), made if needed. Returns a list
# with the context's external pointer and the backend and device it really
# runs on ("auto" resolved by the library). `backend_option`,
# `device_option`: the values came from options(dirmn.backend, dirmn.device)
# (for the wording of errors).
.context <- function(backend = "auto", device = 0L, call = NULL, backend_option = FALSE,
                     device_option = FALSE) {
  backend <- .check_backend(backend, call, backend_option)
  device <- .check_device(device, call, device_option)
  if (backend == "cpu") device <- 0L
  key <- paste0(backend, ":", device)
  ctx <- .state$contexts[[key]]
  if (!is.null(ctx)) return(ctx)

  ptr <- cpp_context_create(.backend_codes[[backend]], device)
  if (.failed(ptr)) .raise(ptr, call)
  where <- cpp_context_backend(ptr)
  if (.failed(where)) .raise(where, call)
  # "auto" lands on a concrete backend; reuse that backend's context if one
  # exists so that there is a single context per device.
  real_key <- paste0(where$backend, ":", where$device)
  ctx <- .state$contexts[[real_key]]
  if (is.null(ctx)) {
    ctx <- list(ptr = ptr, backend = where$backend, device = where$device)
    assign(real_key, ctx, envir = .state$contexts)
  }
  assign(key, ctx, envir = .state$contexts)
  ctx
}

# The context used for tables that were not prepared with dirmn_counts().
.default_context <- function(call) {
  .context(getOption("dirmn.backend", "auto"), getOption("dirmn.device", 0L), call,
           backend_option = TRUE, device_option = TRUE)
}
