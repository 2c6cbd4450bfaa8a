#!/usr/bin/env bash
# Builds, checks and installs the dirmn R package (bindings/r) both ways it
# installs: from the library sources its tarball carries (the one-step
# install R users get), and against a libdirmn installed under PREFIX.
#
# Usage: scripts/test-r.sh PREFIX
#
#   1. installs the R toolchain from Debian where it is missing;
#   2. checks that bindings/r/configure finds the library each way it can
#      (pkg-config, DIRMN_HOME, INCLUDE_DIR/LIB_DIR), that a DIRMN_HOME
#      without the library is an error, and that with no library in sight
#      it writes the bundled build: with the CUDA backend where nvcc works,
#      the CPU backend and a message where nvcc fails;
#   3. R CMD build: one tarball, carrying the library's sources;
#   4. the bundled way: R CMD check --no-manual on the tarball with no
#      libdirmn visible (DIRMN_HOME unset, PKG_CONFIG_PATH empty, PREFIX off
#      the loader's and compiler's paths), failing on any ERROR or WARNING,
#      or on a NOTE about sizes, flags or compiled code; prints testthat's
#      summary; then checks that dirmn.so exports none of the library's
#      symbols and that an impostor libdirmn loaded into R first changes
#      nothing;
#   5. the installed way: R CMD INSTALL into PREFIX/R-library against
#      PREFIX and the testthat suite on it; the install serves later steps
#      (R_LIBS=PREFIX/R-library Rscript bench/r_ddirmn.R, bench/r_fit.R,
#      bench/r_mixture.R);
#   6. the same testthat suite on the same install under valgrind (memcheck,
#      leak check), failing on an invalid read, write or free anywhere in R's
#      process, and on a use of an uninitialised value or memory definitely
#      lost in dirmn (a record whose stack passes through libdirmn or the
#      package's dirmn.so). DIRMN_TEST_R_VALGRIND=0 skips it.
# The full R CMD check runs the bundled way only, the way install.packages()
# builds and the one whose sizes and flags check judges; the installed way
# differs in how the library is found and linked, which install + testthat
# cover. The bundled check builds the CPU backend only (DIRMN_CUDA=no):
# compiling the CUDA sources takes minutes, and step 2 checks configure's
# CUDA detection. DIRMN_TEST_R_CUDA=1 also installs the bundled build with
# its CUDA backend and loads it.
#
# Everything it writes goes under PREFIX (PREFIX/R-check, PREFIX/R-library).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX   (PREFIX: where libdirmn is installed)" >&2
  exit 2
fi
PREFIX=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG_SRC="$ROOT/bindings/r"
WORK="$PREFIX/R-check"
RLIB="$PREFIX/R-library"

log() { echo "test-r: $*"; }

# --- 1. R and the packages the build, tests and vignette use -------------
# dirmult and DirichletMultinomial are the references the fit and mixture
# tests compare with (the tests skip them where missing; CI installs them).
DEBS=(r-base-core r-cran-rcpp r-cran-testthat r-cran-matrix r-cran-extradistr
  r-cran-knitr r-cran-markdown r-cran-dirmult r-bioc-dirichletmultinomial)
if [ "${DIRMN_TEST_R_VALGRIND:-1}" != 0 ]; then DEBS+=(valgrind); fi
# HMP's dependencies, for the HMP reference of the overdispersion tests
# (installed from shared/vendor below); DIRMN_TEST_R_HMP=0 leaves them out.
if [ "${DIRMN_TEST_R_HMP:-1}" != 0 ]; then
  DEBS+=(r-cran-ggplot2 r-cran-foreach r-cran-doparallel r-cran-mass r-cran-vegan r-cran-gplots
    r-cran-rpart r-cran-lattice)
fi
# The containers microbiome and single-cell tables come in (Suggests of the
# package; test-objects.R skips each one missing); DIRMN_TEST_R_BIOC=0
# leaves them out.
if [ "${DIRMN_TEST_R_BIOC:-1}" != 0 ]; then
  DEBS+=(r-bioc-phyloseq r-bioc-summarizedexperiment r-bioc-singlecellexperiment r-bioc-biomformat)
fi
command -v g++ >/dev/null 2>&1 || DEBS+=(g++)
command -v make >/dev/null 2>&1 || DEBS+=(make)
missing=()
for deb in "${DEBS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$deb")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  log "installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# References from outside Debian, in a library of their own that only the
# tests see: HMP (its C.alpha.multinomial is the score test's reference)
# from shared/vendor, where its Debian dependencies are installed (the test
# recomputes the statistic in R either way). The tests also read the
# shared data tables (DIRMN_SHARED_DATA) where the clone has them beside it.
REFLIB="$PREFIX/R-reference-library"
VENDOR="$ROOT/../shared/vendor"
REF_LIBS=""
if [ -f "$VENDOR/HMP_2.0.1.tar.gz" ] && [ -f "$VENDOR/rpart.plot_3.1.3.tar.gz" ] &&
   Rscript -e 'q(status = !all(vapply(c("dirmult", "ggplot2", "foreach", "doParallel", "MASS", "vegan", "gplots", "rpart", "lattice"), requireNamespace, TRUE, quietly = TRUE)))' >/dev/null 2>&1; then
  if ! R_LIBS="$REFLIB" Rscript -e 'q(status = !requireNamespace("HMP", quietly = TRUE))' >/dev/null 2>&1; then
    mkdir -p "$REFLIB"
    log "installing HMP (a test reference) into $REFLIB"
    R CMD INSTALL --library="$REFLIB" "$VENDOR/rpart.plot_3.1.3.tar.gz" > "$PREFIX/hmp-install.log" 2>&1 &&
      R_LIBS="$REFLIB" R CMD INSTALL --library="$REFLIB" "$VENDOR/HMP_2.0.1.tar.gz" >> "$PREFIX/hmp-install.log" 2>&1 ||
      log "HMP did not install (see $PREFIX/hmp-install.log); the score test compares with its formula only"
  fi
  if R_LIBS="$REFLIB" Rscript -e 'q(status = !requireNamespace("HMP", quietly = TRUE))' >/dev/null 2>&1; then
    REF_LIBS="$REFLIB"
  fi
else
  log "HMP's dependencies (r-cran-vegan, r-cran-ggplot2, ...) or shared/vendor missing: not installing HMP"
fi
if [ -d "$ROOT/../shared/data" ]; then
  DIRMN_SHARED_DATA=$(cd "$ROOT/../shared/data" && pwd)
  export DIRMN_SHARED_DATA
fi

# --- 2. where the library is ---------------------------------------------
PC_PATH=""
for d in "$PREFIX/lib/pkgconfig" "$PREFIX/lib/x86_64-linux-gnu/pkgconfig" "$PREFIX/lib64/pkgconfig"; do
  if [ -d "$d" ]; then PC_PATH="${PC_PATH:+$PC_PATH:}$d"; fi
done
export PKG_CONFIG_PATH="${PC_PATH}${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export DIRMN_HOME="$PREFIX"
LIBDIR=""
for d in "$PREFIX/lib" "$PREFIX/lib64" "$PREFIX/lib/x86_64-linux-gnu"; do
  if compgen -G "$d/libdirmn.so*" >/dev/null; then LIBDIR="$d"; break; fi
done
if [ -z "$LIBDIR" ] || [ ! -f "$PREFIX/include/dirmn.h" ]; then
  echo "test-r: no libdirmn under $PREFIX (need include/dirmn.h and lib/libdirmn.so);" >&2
  echo "test-r: install it first: cmake --install BUILD --prefix $PREFIX" >&2
  exit 1
fi

rm -rf "$WORK"
mkdir -p "$WORK" "$RLIB"
# The bundled build compiles ~35 C++ files: on every core.
export MAKEFLAGS="${MAKEFLAGS:--j$(nproc)}"

# configure must find the library through each of its routes; run it on a
# scratch copy so the source tree is left as it was.
try_configure() {
  local name=$1
  shift
  rm -rf "$WORK/configure-$name"
  cp -r "$PKG_SRC" "$WORK/configure-$name"
  if ! (cd "$WORK/configure-$name" && env "$@" sh ./configure > configure.log 2>&1 \
        && grep -q -- "-ldirmn" src/Makevars); then
    cat "$WORK/configure-$name/configure.log" >&2
    echo "test-r: configure failed to find libdirmn via $name" >&2
    exit 1
  fi
  log "configure finds libdirmn via $name"
  rm -rf "$WORK/configure-$name"
}
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists dirmn; then
  try_configure pkg-config -u DIRMN_HOME -u INCLUDE_DIR -u LIB_DIR
else
  log "pkg-config does not see dirmn.pc under $PREFIX; skipping that route"
fi
try_configure DIRMN_HOME -u INCLUDE_DIR -u LIB_DIR PKG_CONFIG_PATH=/nonexistent
try_configure INCLUDE_DIR_LIB_DIR -u DIRMN_HOME PKG_CONFIG_PATH=/nonexistent \
  INCLUDE_DIR="$PREFIX/include" LIB_DIR="$LIBDIR"

# With no libdirmn in sight configure builds the bundled sources. NOLIB is
# the environment of a machine without libdirmn: no route of configure's,
# nor the compiler or loader, sees PREFIX.
drop_dir() {  # $1, a PATH-like list, without the entries that are directory $2
  local out="" d target
  target=$(cd "$2" && pwd -P)
  local IFS=:
  for d in $1; do
    if [ -n "$d" ] && [ "$(cd "$d" 2>/dev/null && pwd -P)" != "$target" ]; then
      out="${out:+$out:}$d"
    fi
  done
  echo "$out"
}
NOLIB=(env -u DIRMN_HOME -u INCLUDE_DIR -u LIB_DIR PKG_CONFIG_PATH=
  "LD_LIBRARY_PATH=$(drop_dir "${LD_LIBRARY_PATH:-}" "$LIBDIR")"
  "LIBRARY_PATH=$(drop_dir "${LIBRARY_PATH:-}" "$LIBDIR")"
  "CPATH=$(drop_dir "${CPATH:-}" "$PREFIX/include")"
  "C_INCLUDE_PATH=$(drop_dir "${C_INCLUDE_PATH:-}" "$PREFIX/include")")

# configure in a scratch copy (symbolic links followed, as R CMD build
# does) under the environment "$@"; its output in $WORK/configure.log.
configure_copy() {
  rm -rf "$WORK/configure-copy"
  cp -rL "$PKG_SRC" "$WORK/configure-copy"
  (cd "$WORK/configure-copy" && "$@" sh ./configure > "$WORK/configure.log" 2>&1)
}
# expect_configure WHAT LOG-PATTERN MAKEVARS-PATTERN ENV...: configure
# succeeds, says LOG-PATTERN and writes MAKEVARS-PATTERN into src/Makevars.
expect_configure() {
  local what=$1 log_re=$2 mk_re=$3
  shift 3
  if ! configure_copy "$@" || ! grep -q -- "$log_re" "$WORK/configure.log" ||
     ! grep -q -- "$mk_re" "$WORK/configure-copy/src/Makevars"; then
    cat "$WORK/configure.log" >&2
    echo "test-r: configure, $what: expected '$log_re' and, in src/Makevars, '$mk_re'" >&2
    exit 1
  fi
  log "configure: $what"
}
# expect_configure_error WHAT LOG-PATTERN ENV...: configure fails saying LOG-PATTERN.
expect_configure_error() {
  local what=$1 log_re=$2
  shift 2
  if configure_copy "$@" || ! grep -q -- "$log_re" "$WORK/configure.log"; then
    cat "$WORK/configure.log" >&2
    echo "test-r: configure, $what: expected a failure saying '$log_re'" >&2
    exit 1
  fi
  log "configure: $what"
}
expect_configure_error "a DIRMN_HOME without the library is an error" \
  "unset INCLUDE_DIR, LIB_DIR and DIRMN_HOME" \
  env -u INCLUDE_DIR -u LIB_DIR PKG_CONFIG_PATH= DIRMN_HOME="$WORK/nowhere"
expect_configure "no libdirmn visible: the bundled build, CPU backend" \
  "building the bundled libdirmn" "libdirmn/kernels/cuda_unavailable.o" "${NOLIB[@]}" DIRMN_CUDA=no
expect_configure "DIRMN_BUNDLED=yes: the bundled build although PREFIX is visible" \
  "DIRMN_BUNDLED=yes" "libdirmn/libdirmn.a" env DIRMN_BUNDLED=yes DIRMN_CUDA=no
expect_configure_error "DIRMN_BUNDLED=no with no libdirmn visible is an error" \
  "configure: ERROR" "${NOLIB[@]}" DIRMN_BUNDLED=no
# A toolkit whose nvcc fails, as one too old for the GPU targets or for R's
# compiler does.
mkdir -p "$WORK/broken-cuda/bin" "$WORK/broken-cuda/lib64"
printf '#!/bin/sh\necho "nvcc: this one always fails" >&2\nexit 1\n' > "$WORK/broken-cuda/bin/nvcc"
chmod +x "$WORK/broken-cuda/bin/nvcc"
: > "$WORK/broken-cuda/lib64/libcudart_static.a"
expect_configure "an nvcc that fails: the CPU backend, with a message" \
  "CUDA backend not built: .*broken-cuda/bin/nvcc cannot compile" "libdirmn/kernels/cuda_unavailable.o" \
  "${NOLIB[@]}" NVCC= CUDA_HOME="$WORK/broken-cuda"
expect_configure "a toolkit without cudart_static: the CPU backend, with a message" \
  "CUDA backend not built: no libcudart_static.a" "libdirmn/kernels/cuda_unavailable.o" \
  "${NOLIB[@]}" NVCC=/bin/false
expect_configure_error "DIRMN_CUDA=yes with an nvcc that fails is an error" \
  "DIRMN_CUDA=yes but the CUDA backend cannot be built" \
  "${NOLIB[@]}" NVCC= CUDA_HOME="$WORK/broken-cuda" DIRMN_CUDA=yes
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  expect_configure "nvcc found: the bundled build has the CUDA backend" \
    "CUDA backend: " "libdirmn/kernels/cuda/cuda_backend.o" "${NOLIB[@]}"
else
  log "configure: no nvcc here; not checking the bundled CUDA detection"
fi
rm -rf "$WORK/configure-copy"

# --- 3. build ---------------------------------------------------------------
# The tarball is the same whichever way configure goes later; its vignette is
# built here against PREFIX, the quicker way.
cd "$WORK"
log "R CMD build"
t0=$SECONDS
R CMD build "$PKG_SRC" > build.log 2>&1 || { cat build.log >&2; exit 1; }
TARBALL=$(ls dirmn_*.tar.gz)
tar tzf "$TARBALL" > tarball.list
if ! grep -q '^dirmn/src/libdirmn/capi/include/dirmn.h$' tarball.list ||
   ! grep -q '^dirmn/src/libdirmn/kernels/cuda/cuda_backend.cu$' tarball.list ||
   grep -qE '\.(o|a|so)$' tarball.list; then
  cat tarball.list >&2
  echo "test-r: $TARBALL lacks the library's sources or carries build products" >&2
  exit 1
fi
log "R CMD build: $TARBALL, $(du -k "$TARBALL" | cut -f1) kB ($((SECONDS - t0)) s)"

# testthat's own summary line, e.g. "[ FAIL 0 | WARN 0 | SKIP 2 | PASS 180 ]",
# from R output file $1, and its counts.
testthat_summary() {
  local summary n_fail n_skip n_pass
  summary=$(grep -E '^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$1" | tail -n 1 || true)
  if [ -n "$summary" ]; then
    echo "testthat summary: $summary"
    read -r n_fail n_skip n_pass < <(echo "$summary" |
      sed -E 's/.*FAIL ([0-9]+) \| WARN [0-9]+ \| SKIP ([0-9]+) \| PASS ([0-9]+).*/\1 \2 \3/')
    echo "testthat: $n_pass passed, $n_fail failed, $n_skip skipped"
  fi
}

# --- 4. the bundled way: R CMD check with no libdirmn visible ---------------
log "R CMD check --no-manual $TARBALL (bundled libdirmn, CPU backend)"
# check reads the package index of the configured repositories for a
# dependency-cycle test; point it at an empty local repository so that it
# needs no network.
mkdir -p "$WORK/empty-repo/src/contrib"
: > "$WORK/empty-repo/src/contrib/PACKAGES"
echo "options(repos = c(CRAN = \"file://$WORK/empty-repo\"))" > Rprofile.check
t0=$SECONDS
set +e
"${NOLIB[@]}" DIRMN_CUDA=no R_PROFILE_USER="$WORK/Rprofile.check" _R_CHECK_FORCE_SUGGESTS_=false \
  R_LIBS="$REF_LIBS" R CMD check --no-manual "$TARBALL" > check.log 2>&1
check_rc=$?
set -e
cat check.log

TEST_OUT=""
for f in dirmn.Rcheck/tests/testthat.Rout dirmn.Rcheck/tests/testthat.Rout.fail; do
  if [ -f "$f" ]; then TEST_OUT="$f"; fi
done
if [ -n "$TEST_OUT" ]; then
  if [ "${TEST_OUT##*.}" = "fail" ]; then
    echo "---- $TEST_OUT (tail) ----"
    tail -n 60 "$TEST_OUT"
  fi
  testthat_summary "$TEST_OUT"
fi

status_line=$(grep -E '^Status: ' check.log | tail -n 1 || true)
if [ "$check_rc" -ne 0 ] || [ -z "$status_line" ] || echo "$status_line" | grep -qE 'ERROR|WARNING'; then
  echo "test-r: R CMD check failed (${status_line:-no status line}, exit $check_rc)" >&2
  exit 1
fi
# What the bundled build could draw: a NOTE in any of these fails the run.
not_ok=$(grep -E '^\* checking (installed package size|compilation flags|for GNU extensions|use of PKG_|compiled code)' check.log |
  grep -v '\.\.\. OK$' || true)
if [ -n "$not_ok" ]; then
  echo "$not_ok" >&2
  echo "test-r: R CMD check: the bundled build draws a NOTE on sizes, flags or compiled code" >&2
  exit 1
fi
if ! grep -q "building the bundled libdirmn" dirmn.Rcheck/00install.out; then
  echo "test-r: R CMD check did not build the bundled libdirmn (it found one installed)" >&2
  exit 1
fi
log "R CMD check (bundled): ${status_line#Status: } ($((SECONDS - t0)) s)"

# None of the archive's symbols leave dirmn.so, so a libdirmn already in the
# process (another package's, loaded globally) cannot take the package's
# calls: with an impostor (version 99.0.0) loaded globally first, the package
# must still load (.onLoad compares the runtime's and the header's major
# versions), report its own library, and compute.
SO=dirmn.Rcheck/dirmn/libs/dirmn.so
if nm -D --defined-only "$SO" | awk '{print $NF}' | grep '^dirmn_' > exported.list; then
  cat exported.list >&2
  echo "test-r: the bundled dirmn.so exports libdirmn's symbols" >&2
  exit 1
fi
mkdir -p "$WORK/impostor"
printf '%s\n' 'unsigned dirmn_version_number(void) { return 990000u; }' \
  'const char* dirmn_version_string(void) { return "99.0.0-impostor"; }' > "$WORK/impostor/impostor.c"
cc -shared -fPIC -o "$WORK/impostor/libdirmn.so" "$WORK/impostor/impostor.c"
"${NOLIB[@]}" R_LIBS="$WORK/dirmn.Rcheck" Rscript -e "
  dyn.load('$WORK/impostor/libdirmn.so', local = FALSE)
  library(dirmn)
  v <- dirmn:::cpp_version()
  stopifnot(v\$runtime < 990000, v\$runtime == v\$header)
  stopifnot(isTRUE(all.equal(ddirmn(c(1, 1), c(1, 1)), 1 / 3)))
  cat('test-r: an impostor libdirmn loaded first; the package keeps its own', v\$runtime_string, '\n')
"

if [ "${DIRMN_TEST_R_CUDA:-0}" = 1 ]; then
  log "R CMD INSTALL $TARBALL (bundled libdirmn with the CUDA backend)"
  t0=$SECONDS
  mkdir -p "$WORK/R-cuda-library"
  "${NOLIB[@]}" DIRMN_CUDA=yes R CMD INSTALL --library="$WORK/R-cuda-library" "$TARBALL" \
    > install-cuda.log 2>&1 || { cat install-cuda.log >&2; exit 1; }
  R_LIBS="$WORK/R-cuda-library" Rscript -e 'library(dirmn); print(dirmn_backends())'
  log "bundled CUDA install: $((SECONDS - t0)) s"
fi

# --- 5. the installed way: install against PREFIX, then testthat -----------
log "R CMD INSTALL into $RLIB (against $PREFIX)"
t0=$SECONDS
R CMD INSTALL --library="$RLIB" "$TARBALL" > install.log 2>&1 || { cat install.log >&2; exit 1; }
if ! grep -q "configure: found libdirmn" install.log; then
  cat install.log >&2
  echo "test-r: R CMD INSTALL did not use the libdirmn under $PREFIX" >&2
  exit 1
fi
R_LIBS="$RLIB" Rscript -e 'library(dirmn); print(dirmn_backends())'
rm -rf "$WORK/installed-tests"
mkdir -p "$WORK/installed-tests"
tar xzf "$TARBALL" -C "$WORK/installed-tests" dirmn/tests
if ! (cd "$WORK/installed-tests/dirmn/tests" &&
      R_LIBS="$RLIB${REF_LIBS:+:$REF_LIBS}" Rscript testthat.R > "$WORK/testthat-installed.Rout" 2>&1); then
  tail -n 60 "$WORK/testthat-installed.Rout" >&2
  echo "test-r: testthat failed against the libdirmn under $PREFIX" >&2
  exit 1
fi
testthat_summary "$WORK/testthat-installed.Rout"
log "installed way: install + testthat ($((SECONDS - t0)) s)"

# --- 6. the testthat suite under valgrind ------------------------------------
# The whole suite, the installed way, in one R process: about 8 minutes on
# two shared cores with the dirmult and DirichletMultinomial references
# installed, 4 without (R, testthat and Matrix load once; the suite takes
# ~40 s without valgrind), so no selection of files is needed. Among what
# it covers only valgrind sees: tables and mixtures freed by finalizers that
# a gc() runs inside a fit's progress callback (test-lifecycle.R: the library defers those frees;
# it used to keep the handles, 22 blocks definitely lost), jumps out of
# callbacks (test-fit.R), cancellations and failed calls (test-errors.R).
# Leaks and uninitialised values are judged from the log, dirmn's only: R's
# graphics stack (cairo, pango, fontconfig: the png() of the plot tests)
# loses a few blocks of its own. Invalid reads and writes fail wherever they
# are. Child processes (system(), the setTimeLimit() test's Rscript) are not
# traced.
if [ "${DIRMN_TEST_R_VALGRIND:-1}" != 0 ]; then
  log "testthat under valgrind (the installed way)"
  t0=$SECONDS
  VG_DIR="$WORK/valgrind"
  rm -rf "$VG_DIR"
  mkdir -p "$VG_DIR"
  # valgrind's own verdict (--error-exitcode) would count what other
  # libraries do: DirichletMultinomial, a reference of the mixture tests,
  # branches on uninitialised values, and cairo/fontconfig lose memory. The
  # exit status is R's (testthat's); the verdict on memory is read from the
  # logs below.
  VG="valgrind --leak-check=full --num-callers=40 --log-file=$VG_DIR/memcheck.%p.log"
  set +e
  (cd "$WORK/installed-tests/dirmn/tests" &&
    DIRMN_TEST_UNDER_VALGRIND=1 R_LIBS="$RLIB" R -d "$VG" --vanilla --no-echo -f testthat.R > "$VG_DIR/testthat.Rout" 2>&1)
  vg_rc=$?
  set -e
  # Over every log, valgrind's records (each up to a line "==PID== "): the
  # loss records "... definitely lost in loss record ..." whose stack names
  # libdirmn or the package's dirmn.so; invalid reads, writes and frees
  # anywhere; uses of uninitialised values whose stack names dirmn. Those
  # records go to dirmn-problems.txt.
  read -r dirmn_records dirmn_blocks bad_access < <(awk '
    function flush() {
      if ((kind == "leak" || kind == "uninit") && record !~ dirmn) kind = ""
      if (kind == "leak") { records++; lost += blocks }
      if (kind == "access" || kind == "uninit") bad++
      if (kind != "") print record "\n" > "/dev/stderr"
      kind = ""
    }
    BEGIN { dirmn = "libdirmn|/dirmn\\.so|dirmn_[a-z]|dirmn::" }
    /^==[0-9]+== *$/ { flush(); next }
    kind != "" { record = record "\n" $0; next }
    /are definitely lost in loss record/ {
      kind = "leak"; record = $0; n = $0
      sub(/.* bytes in /, "", n); sub(/ blocks? .*/, "", n); gsub(/,/, "", n)
      blocks = n + 0; next }
    /^==[0-9]+== (Invalid (read|write|free)|Mismatched free)/ { kind = "access"; record = $0; next }
    /^==[0-9]+== (Conditional jump|Use of uninitialised|Syscall param)/ {
      kind = "uninit"; record = $0; next }
    END { flush(); print records + 0, lost + 0, bad + 0 }' "$VG_DIR"/memcheck.*.log \
    2> "$VG_DIR/dirmn-problems.txt")
  leak_summary=$(grep -h "definitely lost:" "$VG_DIR"/memcheck.*.log | head -n 1 | sed 's/^==[0-9]*== *//')
  if [ "$vg_rc" -ne 0 ] || [ "$dirmn_records" -ne 0 ] || [ "$bad_access" -ne 0 ]; then
    tail -n 40 "$VG_DIR/testthat.Rout" >&2
    cat "$VG_DIR/dirmn-problems.txt" >&2
    echo "test-r: under valgrind: R exit $vg_rc, $bad_access memory errors (invalid accesses, or uninitialised values in dirmn), $dirmn_blocks blocks definitely lost in dirmn ($dirmn_records records); logs in $VG_DIR" >&2
    exit 1
  fi
  testthat_summary "$VG_DIR/testthat.Rout"
  log "valgrind: no invalid access, no uninitialised value in dirmn, 0 blocks definitely lost in dirmn (the process: ${leak_summary:-none}) ($((SECONDS - t0)) s)"
else
  log "DIRMN_TEST_R_VALGRIND=0: not running testthat under valgrind"
fi
log "done: use it with R_LIBS=$RLIB"
