#!/usr/bin/env bash
# The main job: installs what the build needs, builds dirmn (with the CUDA
# backend where nvcc exists) and runs the demo on a real table, on the GPU
# where there is one, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh build
build=${DIRMN_BUILD_DIR:-build}/demo
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIRMN_BUILD_TESTS=OFF -DDIRMN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build"
"$build/examples/c/dirmn_example" examples/data/bci.csv auto
