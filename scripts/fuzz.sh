#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang-14 and runs both,
# two thirds of the time on table contents (dirmn_fuzz), a third on the
# other functions' strides, extents and structs (dirmn_fuzz_calls).
#
#   scripts/fuzz.sh SECONDS [BUILD_DIR]     (BUILD_DIR defaults to build/fuzz)
#
# Exits non-zero when the fuzzer finds a crash, a sanitizer report, a
# contract violation (the harness aborts), a timeout or an out-of-memory;
# the offending input is left in BUILD_DIR/artifacts/. Reproduce one with
#   BUILD_DIR/tests/fuzz/dirmn_fuzz BUILD_DIR/artifacts/dirmn_fuzz-crash-...
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
cmake --build "$build" --target dirmn_fuzz dirmn_fuzz_calls

# fuzz NAME SECONDS: runs one harness, one job per core (jobs share finds
# through the corpus directory; their logs, NAME-N.log, land in the build
# directory). The corpus persists between runs; a few fixed seeds get a
# fresh one past the decoder's first branches.
status=0
fuzz() {
  local name=$1 secs=$2 timeout=$3
  local fuzzer
  fuzzer=$(find "$build" -type f -name "$name" -perm -u+x | head -n 1)
  [[ -n $fuzzer ]] || { echo "$name was not built" >&2; exit 1; }
  local corpus=$build/corpus-$name artifacts=$build/artifacts
  mkdir -p "$corpus" "$artifacts"
  if [[ -z $(ls -A "$corpus") ]]; then
    for i in 0 1 2 3 4 5 6 7; do
      byte=$(printf '\\%03o' $(((i * 37 + 1) % 256)))
      printf "$byte%.0s" $(seq 1 $((16 + 24 * i))) >"$corpus/seed$i"
    done
  fi
  local jobs
  jobs=$(nproc 2>/dev/null || echo 1)
  rm -f "$build"/fuzz-*.log
  (cd "$build" && "$fuzzer" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -timeout="$timeout" \
    -report_slow_units="$timeout" \
    -artifact_prefix="$artifacts/$name-" -print_final_stats=1 -jobs="$jobs" -workers="$jobs" \
    >"$build/$name.log" 2>&1)
  local rc=$?
  echo "--- $name ($secs s)"
  cat "$build"/fuzz-*.log "$build/$name.log" 2>/dev/null |
    grep -E "^(#|==|SUMMARY|stat::|dirmn contract)" | tail -n 20 || true
  [[ $rc -eq 0 ]] || status=$rc
}

artifacts=$build/artifacts
mkdir -p "$artifacts"
rm -f "$artifacts"/*
set +e
# Table contents get more of the time: their decoder has more to reach.
# An input's time limit: dirmn_fuzz_calls may fit a mixture with the default
# 1000 EM iterations and 3 starts (an options struct too short to hold
# max_iterations), a few seconds under the sanitizers on a busy machine.
fuzz dirmn_fuzz $((seconds - seconds / 3)) 10
fuzz dirmn_fuzz_calls $((seconds / 3)) 30
set -e
# Any artifact but a slow unit (a note, not a finding) is a problem.
if [[ $status -ne 0 ]] || ls "$artifacts" | grep -qv '^dirmn_fuzz[a-z_]*-slow-unit-'; then
  echo "fuzzing found a problem (exit $status); inputs in $artifacts:" >&2
  ls -l "$artifacts" >&2
  exit 1
fi
echo "no crash in $seconds s"
