#!/usr/bin/env bash
# gpu-check.sh: everything that needs a GPU, in one go, on a machine with an
# NVIDIA device: Release build with CUDA, the whole ctest suite (the [cuda]
# cases included), the [cuda] cases again from an sm_90 build (the
# tensor-core kernels' mma.sync forms; on Hopper the default sm_90a code
# runs their wgmma forms), compute-sanitizer memcheck and racecheck over the [cuda]
# cases, the GPU benchmarks (gpu_bench, bench_fit, and bench_shapes at issue
# #27's sizes on the CUDA and CPU backends) and the PyTorch references. All logs go to one
# folder: $OUT if set, else ./gpu-logs. At most six files are written there.
#
#   scripts/gpu-check.sh            # build in build/gpu-release, then check
#   DIRMN_GPU_BUILD_DIR=dir DIRMN_GPU_SKIP_BUILD=1 scripts/gpu-check.sh
#                                   # use an existing build (same source path)
#   DIRMN_GPU_QUICK=1 ...           # smaller benchmark
#   DIRMN_GPU_SKIP_TORCH=1 ...      # leave out bench/torch_ref.py
#   DIRMN_GPU_SKIP_SANITIZERS=1 ... # leave out compute-sanitizer
#   DIRMN_GPU_SKIP_BENCH=1 ...      # leave out the benchmarks
#   DIRMN_GPU_SKIP_MMA_SYNC=1 ...   # leave out the sm_90 (mma.sync) build
#   DIRMN_GPU_SKIP_GPU_BENCH=1 ...  # leave out gpu_bench (the dense tables)
#   DIRMN_GPU_SKIP_SHAPES=1 ...     # leave out bench_shapes (issue #27's rows)
#   DIRMN_GPU_SHAPES=NAMES ...      # its tables (default microbiome,single-cell,text)
#   DIRMN_GPU_SKIP_FIT_BENCH=1 ...  # leave out bench_fit
#   DIRMN_GPU_SKIP_PYTHON=1 ...     # leave out pytest and bench/python_module.py
#   DIRMN_GPU_SANITIZER_FILTER='[cuda]~[hog]'  # Catch2 filter of the sanitizer runs
#   DIRMN_GPU_RACECHECK_FILTER=...  # racecheck's own filter (it is the slow one)
#
# Exit status: 0 when every step passed, 1 otherwise (see summary.md).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGS=${OUT:-$PWD/gpu-logs}
BUILD=${DIRMN_GPU_BUILD_DIR:-$ROOT/build/gpu-release}
CATCH2=$ROOT/.deps/catch2/usr
PY=${PYTHON:-python3}
mkdir -p "$LOGS"
SUMMARY=$LOGS/summary.md
: >"$SUMMARY"
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }
# SM clocks and throttling: kernels bound by the SMs (not by memory) run
# slower when the clocks are held down.
clocks() {
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv 2>/dev/null | sed 's/^/    /' | tee -a "$SUMMARY"
}
# run NAME LOGFILE CMD...: appends the command's output to LOGFILE.
run() {
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  { echo "===== $name: $*"; } >>"$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  note "- $name: exit $rc ($((SECONDS - t0)) s)"
  return $rc
}

note "# dirmn GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
  sed 's/^/device: /' | tee -a "$SUMMARY"

# 1. Build.
BT=$LOGS/build_and_test.log
: >"$BT"
if [[ ${DIRMN_GPU_SKIP_BUILD:-0} != 1 ]]; then
  if [[ ! -d $CATCH2 ]]; then
    note "- build: Catch2 missing at $CATCH2 (see the README: apt-get download catch2 into .deps)"
    exit 1
  fi
  run "configure" "$BT" cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDIRMN_CUDA=ON -DCMAKE_PREFIX_PATH="$CATCH2" || { note "build failed"; exit 1; }
  run "build" "$BT" cmake --build "$BUILD" --parallel || { note "build failed"; exit 1; }
fi

# 2. The whole suite, [cuda] cases included.
run "ctest" "$BT" ctest --test-dir "$BUILD" --output-on-failure || failed=1
TESTS=$BUILD/tests/dirmn_tests

# 2b. The tensor-core kernels' mma.sync forms: the default sm_90a code runs
#     their wgmma forms on Hopper, so the [cuda] cases run again from plain
#     sm_90 code, where the loaded code has no wgmma.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [[ ${DIRMN_GPU_SKIP_MMA_SYNC:-0} == 1 ]]; then
  note "- mma.sync forms: skipped (DIRMN_GPU_SKIP_MMA_SYNC=1)"
elif [[ ${DIRMN_GPU_SKIP_BUILD:-0} == 1 ]]; then
  note "- mma.sync forms: skipped (DIRMN_GPU_SKIP_BUILD=1)"
elif [[ $cc != 9.0 ]]; then
  note "- mma.sync forms: skipped (compute capability ${cc:-unknown}: sm_90 code runs on 9.0 only)"
else
  MMA_BUILD=$BUILD-sm90
  if run "configure (sm_90)" "$BT" cmake -S "$ROOT" -B "$MMA_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDIRMN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DCMAKE_PREFIX_PATH="$CATCH2" &&
    run "build (sm_90)" "$BT" cmake --build "$MMA_BUILD" --parallel --target dirmn_tests; then
    run "[cuda] cases, mma.sync forms (sm_90)" "$BT" "$MMA_BUILD/tests/dirmn_tests" '[cuda]~[hog]' || failed=1
  else
    failed=1
  fi
fi

# 2c. The Python package's tests against this build (its CUDA cases run
#     here only), where the machine's Python has numpy, scipy and pytest.
if [[ ${DIRMN_GPU_SKIP_PYTHON:-0} == 1 ]]; then
  note "- pytest: skipped (DIRMN_GPU_SKIP_PYTHON=1)"
elif $PY -c "import numpy, scipy, pytest" >>"$BT" 2>&1; then
  run "pytest (bindings/python)" "$BT" env DIRMN_LIBRARY_PATH="$BUILD" \
    PYTHONPATH="$ROOT/bindings/python" $PY -m pytest -q -p no:cacheprovider \
    "$ROOT/bindings/python/tests" || failed=1
  grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$BT" | tail -1 | sed 's/^/  /' | tee -a "$SUMMARY"
else
  note "- pytest: numpy, scipy or pytest missing for $PY; not run"
fi

# 3. compute-sanitizer over the [cuda] cases. [hog] fills the device on
#    purpose and is left out: the sanitizer tracks every allocation.
SAN=$LOGS/sanitizer.log
: >"$SAN"
if [[ ${DIRMN_GPU_SKIP_SANITIZERS:-0} == 1 ]]; then
  note "- compute-sanitizer: skipped (DIRMN_GPU_SKIP_SANITIZERS=1)"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
  note "- compute-sanitizer: not installed on this machine; not run"
else
  for tool in memcheck racecheck; do
    extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    filter=${DIRMN_GPU_SANITIZER_FILTER:-[cuda]~[hog]}
    [[ $tool == racecheck ]] && filter=${DIRMN_GPU_RACECHECK_FILTER:-$filter}
    run "compute-sanitizer $tool ($filter)" "$SAN" compute-sanitizer --tool "$tool" "${extra[@]}" \
      --error-exitcode 1 "$TESTS" "$filter"
    rc=$?
    if grep -q -E "Device not supported|CUDA_ERROR_NOT_SUPPORTED|error 999|Target application terminated before first instrumented API call" "$SAN"; then
      note "  compute-sanitizer REFUSED the device (see sanitizer.log); $tool results are not valid"
    elif [[ $rc != 0 ]]; then
      failed=1
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$SAN" | tail -3 | sed 's/^/  /' | tee -a "$SUMMARY"
  done
fi

if [[ ${DIRMN_GPU_SKIP_BENCH:-0} == 1 ]]; then
  note "- benchmarks: skipped (DIRMN_GPU_SKIP_BENCH=1)"
  note ""
  note "result: $([[ $failed == 0 ]] && echo PASS || echo FAIL)"
  exit $failed
fi

# 4. Benchmarks: dirmn and the anchors, then PyTorch on the same data.
BL=$LOGS/bench.log
: >"$BL"
clocks
quick=()
[[ ${DIRMN_GPU_QUICK:-0} == 1 ]] && quick=(--quick)
if [[ ${DIRMN_GPU_SKIP_GPU_BENCH:-0} == 1 ]]; then
  note "- gpu_bench: skipped (DIRMN_GPU_SKIP_GPU_BENCH=1)"
elif [[ -x $BUILD/bench/dirmn_gpu_bench ]]; then
  t0=$SECONDS
  "$BUILD/bench/dirmn_gpu_bench" "${quick[@]}" >"$LOGS/gpu_bench.csv" 2>>"$BL"
  rc=$?
  note "- gpu_bench: exit $rc ($((SECONDS - t0)) s)"
  [[ $rc != 0 ]] && failed=1
else
  note "- gpu_bench: not built (configure with DIRMN_BUILD_BENCH=ON)"
  failed=1
fi
if [[ ${DIRMN_GPU_SKIP_FIT_BENCH:-0} == 1 ]]; then
  note "- bench_fit: skipped (DIRMN_GPU_SKIP_FIT_BENCH=1)"
elif [[ -x $BUILD/bench/dirmn_bench_fit ]]; then
  t0=$SECONDS
  {
    echo '```'
    "$BUILD/bench/dirmn_bench_fit" cuda 262144 1024
    "$BUILD/bench/dirmn_bench_fit" cpu 262144 1024
    "$BUILD/bench/dirmn_bench_fit" cuda mixture 262144 1024 8 100
    [[ ${DIRMN_GPU_QUICK:-0} == 1 ]] || "$BUILD/bench/dirmn_bench_fit" cuda microbiome 800 26742 20
    echo '```'
  } >>"$SUMMARY" 2>>"$BL"
  note "- bench_fit: exit $? ($((SECONDS - t0)) s)"
fi
# Issue #27's real-shape rows (bench/bench_shapes.cpp --large): the CUDA
# backend, then the CPU backend on the same host threads, then PyTorch on
# the GPU on the same tables (sparse formulation, value and value +
# gradient, and the seed's dense formula where it fits), merged into
# summary.md; each run's own table goes to bench.log.
SHAPES=$BUILD/bench/dirmn_bench_shapes
if [[ ${DIRMN_GPU_SKIP_SHAPES:-0} == 1 ]]; then
  note "- bench_shapes: skipped (DIRMN_GPU_SKIP_SHAPES=1)"
elif [[ -x $SHAPES ]]; then
  t0=$SECONDS
  sdir=$BUILD/shapes-out
  rm -rf "$sdir"
  mkdir -p "$sdir/dump"
  size=(--large)
  [[ ${DIRMN_GPU_QUICK:-0} == 1 ]] && size=()
  sargs=("${size[@]}" --range-k 0 --em-iterations 3 --only "${DIRMN_GPU_SHAPES:-microbiome,single-cell,text}")
  "$SHAPES" cuda "${sargs[@]}" --dump "$sdir/dump" --csv "$sdir/cuda.csv" >>"$BL" 2>&1 &&
    "$SHAPES" cpu "${sargs[@]}" --csv "$sdir/cpu.csv" >>"$BL" 2>&1
  rc=$?
  note "- bench_shapes (cuda, cpu): exit $rc ($((SECONDS - t0)) s)"
  [[ $rc != 0 ]] && failed=1
  if [[ ${DIRMN_GPU_SKIP_TORCH:-0} == 1 ]]; then
    note "- shapes_torch.py: skipped (DIRMN_GPU_SKIP_TORCH=1)"
  elif $PY -c "import torch; assert torch.cuda.is_available()" >>"$BL" 2>&1; then
    $PY "$ROOT/bench/shapes_torch.py" "$sdir/dump" --device cuda --gradient --csv "$sdir/torch.csv" >>"$BL" 2>&1 ||
      { note "- shapes_torch.py --device cuda: failed (see bench.log)"; failed=1; }
  else
    note "- shapes_torch.py: no CUDA-enabled PyTorch for $PY; not run"
  fi
  {
    echo
    echo "## Real shapes (bench_shapes ${size[*]}: CPU backend, CUDA backend, PyTorch on the GPU)"
    echo
    echo '```'
    $PY "$ROOT/bench/shapes_torch.py" --merge "$sdir/cpu.csv" "$sdir/cuda.csv" "$sdir/torch.csv" --names cpu,cuda
    echo '```'
  } >>"$SUMMARY" 2>&1
  rm -rf "$sdir/dump"
else
  note "- bench_shapes: not built (configure with DIRMN_BUILD_BENCH=ON)"
  failed=1
fi
# The PyTorch layer on the GPU (issue #28): a training step of the Module
# against the seed's formula, eager and compiled, at the issue's sizes.
if [[ ${DIRMN_GPU_SKIP_PYTHON:-0} == 1 || ${DIRMN_GPU_SKIP_TORCH:-0} == 1 ]]; then
  note "- python_module.py: skipped"
elif $PY -c "import numpy, torch; assert torch.cuda.is_available()" >>"$BL" 2>&1; then
  t0=$SECONDS
  psize=--large
  [[ ${DIRMN_GPU_QUICK:-0} == 1 ]] && psize=--quick
  {
    echo
    echo "## The PyTorch layer on the GPU (bench/python_module.py --device cuda $psize)"
    echo
    echo '```'
    DIRMN_LIBRARY_PATH="$BUILD" PYTHONPATH="$ROOT/bindings/python" PYTHONUNBUFFERED=1 \
      $PY "$ROOT/bench/python_module.py" --device cuda "$psize" 2>>"$BL"
    echo $? >"$LOGS/.python_module.rc"
    echo '```'
  } >>"$SUMMARY"
  rc=$(cat "$LOGS/.python_module.rc")
  rm -f "$LOGS/.python_module.rc"
  note "- python_module.py: exit $rc ($((SECONDS - t0)) s)"
  [[ $rc != 0 ]] && failed=1
else
  note "- python_module.py: no CUDA-enabled PyTorch for $PY; not run"
fi
# Clocks again after the benchmarks.
clocks
if [[ ${DIRMN_GPU_SKIP_TORCH:-0} == 1 || ${DIRMN_GPU_SKIP_GPU_BENCH:-0} == 1 ]]; then
  note "- torch_ref.py: skipped (DIRMN_GPU_SKIP_TORCH=1 or DIRMN_GPU_SKIP_GPU_BENCH=1)"
elif $PY -c "import torch; assert torch.cuda.is_available()" >>"$BL" 2>&1; then
  t0=$SECONDS
  PYTHONUNBUFFERED=1 $PY "$ROOT/bench/torch_ref.py" "${quick[@]}" --csv "$LOGS/torch_ref.csv" 2>>"$BL"
  rc=$?
  note "- torch_ref.py: exit $rc ($((SECONDS - t0)) s)"
  [[ $rc != 0 ]] && failed=1
else
  note "- torch_ref.py: no CUDA-enabled PyTorch for $PY; not run"
fi
if [[ -s $LOGS/gpu_bench.csv ]]; then
  {
    echo
    echo "## Benchmark (GPU time per call, median; see bench.log for every row)"
    echo
    $PY "$ROOT/bench/torch_ref.py" --merge "$LOGS/gpu_bench.csv" \
      $([[ -s $LOGS/torch_ref.csv ]] && echo "$LOGS/torch_ref.csv")
  } >>"$SUMMARY" 2>&1
fi

note ""
note "result: $([[ $failed == 0 ]] && echo PASS || echo FAIL)"
exit $failed
