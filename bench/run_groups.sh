#!/usr/bin/env bash
# Issue #29's grouped benchmark, side by side on the same table:
# dirmn_reg_test_groups (bench_groups, all genes) and DRIMSeq
# (bench/groups_drimseq.R, the first GENES genes: all 7764 take minutes),
# with the two tools' p-values compared.
#
#   bash bench/run_groups.sh [GENES]     # DRIMSeq's genes, default 300
#
# Needs Debian's r-bioc-drimseq for the second half. Uses build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${DIRMN_BUILD_DIR:-build/release}/bench/dirmn_bench_groups
[[ -x $bin ]] || { echo "run_groups.sh: $bin not built" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" "${BACKEND:-cpu}" --hold-precision --dump "$dir"
echo
if Rscript -e 'library(DRIMSeq)' >/dev/null 2>&1; then
  Rscript bench/groups_drimseq.R "$dir" "${1:-300}"
else
  echo "DRIMSeq is not installed (apt-get install r-bioc-drimseq): its half is not run"
fi
