#' Backends and devices available to dirmn
#'
#' Reports which backends the loaded libdirmn was built with, how many CUDA
#' devices it can use, and the library's version next to the version of the
#' header this package was built against.
#'
#' @return A list of class `dirmn_backends` with elements
#'   \describe{
#'     \item{`version`}{the loaded libdirmn's version, as `"MAJOR.MINOR.PATCH"`.}
#'     \item{`header_version`}{the libdirmn version whose header the package was built with.}
#'     \item{`backends`}{a data frame with one row per backend (`"cpu"`,
#'       `"cuda"`) and columns `backend`, `compiled` (logical: built into the
#'       library) and `devices` (number of usable devices; 1 for the CPU).}
#'     \item{`cuda_devices`}{the number of usable CUDA devices (0 without CUDA).}
#'   }
#' @seealso [dirmn_counts()] to choose a backend.
#' @export
#' @examples
#' b <- dirmn_backends()
#' b
#' b$cuda_devices > 0 # can backend = "cuda" be used?
dirmn_backends <- function() {
  v <- cpp_version()
  b <- cpp_backends()
  structure(
    list(
      version = v$runtime_string,
      header_version = .version_string(v$header),
      backends = data.frame(
        backend = c("cpu", "cuda"),
        compiled = c(TRUE, b$cuda_compiled),
        devices = c(1L, as.integer(b$cuda_devices)),
        stringsAsFactors = FALSE
      ),
      cuda_devices = as.integer(b$cuda_devices)
    ),
    class = "dirmn_backends"
  )
}

#' @export
print.dirmn_backends <- function(x, ...) {
  cat(sprintf("libdirmn %s (package built with dirmn.h %s)\n", x$version, x$header_version))
  print(x$backends, row.names = FALSE)
  invisible(x)
}

.version_string <- function(number) {
  number <- as.integer(number)
  sprintf("%d.%d.%d", number %/% 10000L, (number %/% 100L) %% 100L, number %% 100L)
}
