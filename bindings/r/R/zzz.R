.onLoad <- function(libname, pkgname) {
  v <- cpp_version()
  .check_version(v$runtime, v$header)
}

# The ABI only promises compatibility within a major version: a package built
# against one major version must not run on another.
# And the package needs the API of 0.3.0 (the version the package has).
.check_version <- function(runtime, header) {
  if (runtime %/% 10000 != header %/% 10000 || runtime < 300) {
    stop(structure(
      class = c("dirmn_error_version_mismatch", "dirmn_error", "error", "condition"),
      list(
        message = sprintf(paste(
          "the dirmn R package was built against libdirmn %s but the loaded",
          "libdirmn is %s, a different major version or one older than 0.3.0; reinstall the package",
          "(R CMD INSTALL) against the libdirmn now installed"),
          .version_string(header), .version_string(runtime)),
        call = NULL, status = NA_integer_
      )
    ))
  }
  invisible(TRUE)
}

# The package DLL is deliberately never unloaded: finalizers of live
# dirmn_counts objects point into it, and would crash R if they ran after an
# unload.
