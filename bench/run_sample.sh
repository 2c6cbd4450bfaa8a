#!/usr/bin/env bash
# Issue #30's sampling benchmark, side by side in one run: dirmn_sample
# (bench_sample, the CPU backend or, with BACKEND=cuda, the GPU), R's
# extraDistr::rdirmnom and MGLM::rdirmn (bench/sample_anchors.R, one
# thread) and torch.distributions (bench/sample_torch.py, the same threads
# on the CPU, or TORCH_DEVICE=cuda). The anchors draw a fraction of each
# shape's rows (see their headers); all report cells per second.
#
#   bash bench/run_sample.sh [NAMES]   # default: every shape and the bootstrap
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${DIRMN_BUILD_DIR:-build/release}/bench/dirmn_bench_sample
[[ -x $bin ]] || { echo "run_sample.sh: $bin not built" >&2; exit 1; }
threads=${THREADS:-$(nproc)}
only=()
[[ $# -gt 0 ]] && only=(--only "$1")
"$bin" "${BACKEND:-cpu}" --threads "$threads" "${only[@]}"
echo
Rscript bench/sample_anchors.R "${1:-wide-deep,wide-shallow,tall,sparse,tiny-alpha}"
echo
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 bench/sample_torch.py --device "${TORCH_DEVICE:-cpu}" --threads "$threads" ${1:+--only "$1"}
else
  echo "PyTorch is not installed (apt-get install python3-torch): its rows are left out"
fi
