#!/usr/bin/env bash
# Issue #26's side-by-side benchmark: bench/bench_shapes.cpp, built from this
# checkout's source against two libraries -- BASE_REF's and this checkout's
# -- and bench/shapes_torch.py, all with the same thread count on the same
# tables, merged into one table of rows x (base, now, torch, ratios). With
# the bench option `cuda` both libraries run on the GPU, and so does torch.
#
#   bench/run_shapes.sh [BASE_REF] [BENCH OPTIONS...]
#
# BASE_REF defaults to 38f333c (main before the issue-#26 work). BENCH
# OPTIONS go to both dirmn_bench_shapes runs (see the top of
# bench_shapes.cpp: --quick, --range-k K, --data DIR, ...); --threads is set
# here, and --only NAMES picks the tables the two libraries take turns on. Environment:
#   DIRMN_BENCH_THREADS  threads for dirmn and torch (default: nproc)
#   DIRMN_BUILD_JOBS     parallel build jobs (default 2)
#   DIRMN_CUDA           the libraries' DIRMN_CUDA setting (default OFF)
#   DIRMN_CUDA_ARCH      their CMAKE_CUDA_ARCHITECTURES (default: the project's)
#   PYTHON               the interpreter with torch (default /usr/bin/python3,
#                        Debian's python3-torch)
#
# BASE_REF's sources are checked out into a temporary git worktree,
# build/shapes/base-src (removed on exit); the libraries build in
# build/shapes/{base,now}-build, the two bench binaries, the table dump and
# every run's output and CSV land in build/shapes/out. The bench uses the
# public API alone, and each binary is compiled with its library's own
# header. Run on a quiet machine: the timings share its cores with
# everything else.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base_ref=38f333c
if [[ $# -gt 0 && $1 != -* && $1 != cpu && $1 != cuda ]]; then
  base_ref=$1
  shift
fi
# --only is taken here: the two libraries take turns table by table, so
# that a burst of load on a shared machine falls on both alike.
tables=(microbiome single-cell text globalpatterns soilrep)
bench_args=()
torch_device=cpu
while [[ $# -gt 0 ]]; do
  [[ $1 == cuda ]] && torch_device=cuda
  if [[ $1 == --only ]]; then
    [[ $# -ge 2 ]] || { echo "--only needs a value" >&2; exit 2; }
    IFS=, read -r -a tables <<<"$2"
    shift 2
  else
    bench_args+=("$1")
    shift
  fi
done
threads=${DIRMN_BENCH_THREADS:-$(nproc)}
jobs=${DIRMN_BUILD_JOBS:-2}
python=${PYTHON:-/usr/bin/python3}
work=$root/build/shapes
out=$work/out
src=$work/base-src

base_commit=$(git -C "$root" rev-parse --verify "$base_ref^{commit}")
now_commit=$(git -C "$root" rev-parse HEAD)
dirty=$(git -C "$root" status --porcelain --untracked-files=no | head -c1)

# Only this script's own worktree is touched (no prune of others').
cleanup() {
  git -C "$root" worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"
}
trap cleanup EXIT
mkdir -p "$work"
cleanup  # a worktree left by an interrupted run
# --force: the path may still be registered where an interrupted run's
# folder was removed by hand.
git -C "$root" worktree add --force --detach "$src" "$base_commit" >/dev/null

build_lib() {  # SOURCE BUILD_DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIRMN_CUDA="${DIRMN_CUDA:-OFF}" \
    ${DIRMN_CUDA_ARCH:+-DCMAKE_CUDA_ARCHITECTURES="$DIRMN_CUDA_ARCH"} -DDIRMN_BUILD_TESTS=OFF -DDIRMN_BUILD_BENCH=OFF -DDIRMN_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$2" --target dirmn -j "$jobs" >/dev/null
}
build_bench() {  # SOURCE BUILD_DIR BINARY: this checkout's bench against SOURCE's header and library
  local lib
  lib=$(find "$2" -maxdepth 2 -name 'libdirmn.so' -print -quit)
  [[ -n $lib ]] || { echo "no libdirmn.so in $2" >&2; exit 1; }
  lib=$(dirname "$lib")
  "${CXX:-c++}" -O2 -std=c++17 -I"$1/capi/include" -I"$root/bench" \
    -DDIRMN_SHAPES_DATA_DIR="\"$root/../shared/data\"" "$root/bench/bench_shapes.cpp" \
    -o "$3" -L"$lib" -ldirmn -Wl,-rpath,"$lib"
}

echo "base: $base_ref = $base_commit"
echo "now:  $now_commit${dirty:+ (with uncommitted changes)}"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); threads $threads"
echo "building the libraries ..."
build_lib "$src" "$work/base-build"
build_lib "$root" "$work/now-build"
rm -rf "$out"
mkdir -p "$out/dump"
build_bench "$src" "$work/base-build" "$out/bench_base"
build_bench "$root" "$work/now-build" "$out/bench_now"

# Per table: now, which writes the table for torch, then base on the same
# table (the same generator and seeds). Then torch on every table.
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${tables[@]}"; do
  for lib in now base; do
    echo "== $lib: $t"
    dump=()
    [[ $lib == now ]] && dump=(--dump "$out/dump")
    "$out/bench_$lib" --threads "$threads" "${bench_args[@]}" --only "$t" "${dump[@]}" --csv "$out/$lib-$t.csv" |
      tee -a "$out/$lib.txt"
  done
done
for lib in now base; do
  csvs=()
  for t in "${tables[@]}"; do csvs+=("$out/$lib-$t.csv"); done
  awk 'FNR > 1 || NR == 1' "${csvs[@]}" >"$out/$lib.csv"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== torch"
"$python" "$root/bench/shapes_torch.py" "$out/dump" --threads "$threads" --device "$torch_device" --gradient \
  --csv "$out/torch.csv" |
  tee "$out/torch.txt"

echo
echo "== side by side: base $base_ref (${base_commit:0:10}), now ${now_commit:0:10}${dirty:+ + changes}, $threads threads"
"$python" "$root/bench/shapes_torch.py" --merge "$out/base.csv" "$out/now.csv" "$out/torch.csv" |
  tee "$out/merged.txt"
rm -rf "$out/dump"
