#!/usr/bin/env bash
# Builds the libFuzzer harness (tests/fuzz) with clang-14 and runs it.
#
#   scripts/fuzz.sh SECONDS [BUILD_DIR]     (BUILD_DIR defaults to build/fuzz)
#
# Exits non-zero when the fuzzer finds a crash, a sanitizer report, a
# contract violation (the harness aborts), a timeout or an out-of-memory;
# the offending input is left in BUILD_DIR/artifacts/. Reproduce one with
#   BUILD_DIR/tests/fuzz/dirmn_fuzz BUILD_DIR/artifacts/crash-...
set -euo pipefail

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [BUILD_DIR]" >&2
  exit 2
fi
seconds=$1
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build/fuzz}
mkdir -p "$build"
build=$(cd "$build" && pwd)

CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIRMN_FUZZ=ON -DDIRMN_CUDA=OFF \
  -DDIRMN_BUILD_TESTS=OFF -DDIRMN_BUILD_BENCH=OFF -DDIRMN_BUILD_EXAMPLES=OFF
cmake --build "$build" --target dirmn_fuzz

fuzzer=$(find "$build" -type f -name dirmn_fuzz -perm -u+x | head -n 1)
[[ -n $fuzzer ]] || { echo "dirmn_fuzz was not built" >&2; exit 1; }

# The corpus persists between runs in the build directory; a few fixed seeds
# get a fresh one past the decoder's first branches.
corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"
if [[ -z $(ls -A "$corpus") ]]; then
  for i in 0 1 2 3 4 5 6 7; do
    byte=$(printf '\\%03o' $(((i * 37 + 1) % 256)))
    printf "$byte%.0s" $(seq 1 $((16 + 24 * i))) >"$corpus/seed$i"
  done
fi

# One job per core; jobs share finds through the corpus directory. Their logs
# (fuzz-N.log) land in the build directory.
jobs=$(nproc 2>/dev/null || echo 1)
rm -f "$build"/fuzz-*.log
cd "$build"
set +e
"$fuzzer" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 -jobs="$jobs" -workers="$jobs" \
  >"$build/fuzz.log" 2>&1
status=$?
set -e
cat "$build"/fuzz-*.log "$build/fuzz.log" 2>/dev/null | grep -E "^(#|==|SUMMARY|stat::|dirmn contract)" | tail -n 40 || true
if [[ $status -ne 0 ]] || ls "$artifacts" | grep -q .; then
  echo "fuzzing found a problem (exit $status); inputs in $artifacts:" >&2
  ls -l "$artifacts" >&2
  exit 1
fi
echo "no crash in $seconds s"
