#!/usr/bin/env bash
# Installs, from Debian/Ubuntu packages, what building dirmn needs (`build`)
# or what every test suite needs (`test`). Idempotent; uses sudo when not root.
set -euo pipefail
what=${1:-build}
pkgs=(cmake ninja-build g++ pkg-config)
if [ "$what" = test ]; then
  pkgs+=(catch2 clang libclang-rt-dev python3-mpmath binutils
         r-base-core r-cran-rcpp r-cran-testthat r-cran-matrix r-cran-extradistr valgrind
         python3-numpy python3-scipy python3-pytest python3-torch
         libopenmpi-dev openmpi-bin python3-mpi4py)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
