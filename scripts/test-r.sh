#!/usr/bin/env bash
# Builds, checks and installs the dirmn R package (bindings/r) against a
# libdirmn installed under PREFIX.
#
# Usage: scripts/test-r.sh PREFIX
#
#   1. installs the R toolchain from Debian where it is missing;
#   2. checks that bindings/r/configure finds the library each way it can
#      (pkg-config, DIRMN_HOME, INCLUDE_DIR/LIB_DIR);
#   3. R CMD build, then R CMD check --no-manual on the tarball, failing on
#      any ERROR or WARNING, and prints testthat's summary;
#   4. R CMD INSTALL into PREFIX/R-library, for later steps
#      (R_LIBS=PREFIX/R-library Rscript bench/r_ddirmn.R, bench/r_fit.R,
#      bench/r_mixture.R).
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

# --- 3. build and check ---------------------------------------------------
cd "$WORK"
log "R CMD build"
R CMD build "$PKG_SRC" > build.log 2>&1 || { cat build.log >&2; exit 1; }
TARBALL=$(ls dirmn_*.tar.gz)

log "R CMD check --no-manual $TARBALL"
# check reads the package index of the configured repositories for a
# dependency-cycle test; point it at an empty local repository so that it
# needs no network.
mkdir -p "$WORK/empty-repo/src/contrib"
: > "$WORK/empty-repo/src/contrib/PACKAGES"
echo "options(repos = c(CRAN = \"file://$WORK/empty-repo\"))" > Rprofile.check
set +e
R_PROFILE_USER="$WORK/Rprofile.check" _R_CHECK_FORCE_SUGGESTS_=false \
  R CMD check --no-manual "$TARBALL" > check.log 2>&1
check_rc=$?
set -e
cat check.log

# testthat's own summary line, e.g. "[ FAIL 0 | WARN 0 | SKIP 2 | PASS 180 ]"
TEST_OUT=""
for f in dirmn.Rcheck/tests/testthat.Rout dirmn.Rcheck/tests/testthat.Rout.fail; do
  if [ -f "$f" ]; then TEST_OUT="$f"; fi
done
if [ -n "$TEST_OUT" ]; then
  summary=$(grep -E '^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$TEST_OUT" | tail -n 1 || true)
  if [ "${TEST_OUT##*.}" = "fail" ]; then
    echo "---- $TEST_OUT (tail) ----"
    tail -n 60 "$TEST_OUT"
  fi
  if [ -n "$summary" ]; then
    echo "testthat summary: $summary"
    read -r n_fail n_skip n_pass < <(echo "$summary" |
      sed -E 's/.*FAIL ([0-9]+) \| WARN [0-9]+ \| SKIP ([0-9]+) \| PASS ([0-9]+).*/\1 \2 \3/')
    echo "testthat: $n_pass passed, $n_fail failed, $n_skip skipped"
  fi
fi

status_line=$(grep -E '^Status: ' check.log | tail -n 1 || true)
if [ "$check_rc" -ne 0 ] || [ -z "$status_line" ] || echo "$status_line" | grep -qE 'ERROR|WARNING'; then
  echo "test-r: R CMD check failed (${status_line:-no status line}, exit $check_rc)" >&2
  exit 1
fi
log "R CMD check: ${status_line#Status: }"

# --- 4. install for later steps -------------------------------------------
log "R CMD INSTALL into $RLIB"
R CMD INSTALL --library="$RLIB" "$TARBALL" > install.log 2>&1 || { cat install.log >&2; exit 1; }
R_LIBS="$RLIB" Rscript -e 'library(dirmn); print(dirmn_backends())'
log "done: use it with R_LIBS=$RLIB"
