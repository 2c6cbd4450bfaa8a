#!/usr/bin/env bash
# The CPU benchmark: dirmn's per-row log-likelihood (all cores and one
# thread) against extraDistr::ddirmnom and plain vectorised R, on the same
# tables in one run, printed as one table.
#
#   bench/run_cpu.sh [BUILD_DIR]        (BUILD_DIR defaults to build/bench-cpu)
#
# Set DIRMN_BENCH_CPU to an existing dirmn_bench_cpu binary to skip the
# build. Needs Rscript with extraDistr (Debian: r-cran-extradistr). Run on a
# quiet machine: the timings share its cores with everything else.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/bench-cpu}
bench=${DIRMN_BENCH_CPU:-}
if [[ -z $bench ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIRMN_CUDA=OFF \
    -DDIRMN_BUILD_BENCH=ON -DDIRMN_BUILD_TESTS=OFF -DDIRMN_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$build" --target dirmn_bench_cpu
  bench=$(find "$build" -type f -name dirmn_bench_cpu -perm -u+x | head -n 1)
fi
[[ -x $bench ]] || { echo "no dirmn_bench_cpu binary" >&2; exit 1; }

data=$(mktemp -d "${TMPDIR:-/tmp}/dirmn-bench-cpu.XXXXXX")
trap 'rm -rf "$data"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
"$bench" generate "$data"
Rscript "$root/bench/cpu_baselines.R" "$data"
"$bench" time "$data"
