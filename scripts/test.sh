#!/usr/bin/env bash
# Every test suite, from a clean clone: installs the test dependencies, then
#   1. builds (Release, CUDA backend compiled where nvcc exists) and runs the
#      Catch2 suite under ctest, the exported-symbol check and the installed-
#      consumer check;
#   2. rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and runs
#      the suite again;
#   3. runs the two libFuzzer harnesses for a bounded time;
#   4. the R package: R CMD check, testthat, and testthat under valgrind;
#   5. the Julia package's tests under a real Julia, the ccall layer's
#      handle paths once under valgrind;
#   6. the Python package's tests (pytest, Debian's python3).
# Stops at the first failing stage; ends with a "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/install-deps.sh test
build=${DIRMN_BUILD_DIR:-$root/build}
mkdir -p "$build"
jobs=$(nproc)
passed=0

stage() { echo; echo "=== $* ==="; }

stage "C/C++: Release build and ctest"
cmake -S . -B "$build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/release" -j "$jobs"
ctest --test-dir "$build/release" --output-on-failure
rm -rf "$build/prefix"
cmake --install "$build/release" --prefix "$build/prefix" >/dev/null
passed=$((passed + 1))

stage "C/C++: AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B "$build/asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DDIRMN_CUDA=OFF \
  -DDIRMN_SANITIZE=address,undefined -DDIRMN_BUILD_BENCH=OFF -DDIRMN_MPI=OFF >/dev/null
cmake --build "$build/asan" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$build/asan" --output-on-failure -E install_consumer
passed=$((passed + 1))

stage "C/C++: libFuzzer"
bash scripts/fuzz.sh "${DIRMN_FUZZ_SECONDS:-120}" "$build/fuzz"
passed=$((passed + 1))

if [ -f scripts/test-r.sh ]; then
  stage "R package"
  bash scripts/test-r.sh "$build/prefix"
  passed=$((passed + 1))
fi

if [ -f scripts/test-julia.sh ]; then
  stage "Julia package"
  bash scripts/test-julia.sh "$build/prefix"
  passed=$((passed + 1))
fi

if [ -f scripts/test-python.sh ]; then
  stage "Python package"
  bash scripts/test-python.sh "$build/prefix"
  passed=$((passed + 1))
fi

echo
echo "suites: $passed passed, 0 failed"
