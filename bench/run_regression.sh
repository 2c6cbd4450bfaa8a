#!/usr/bin/env bash
# Issue #29's regression benchmark, side by side on the same tables:
# dirmn_reg_fit (bench_regression, the CPU backend or, with BACKEND=cuda,
# the GPU), MGLM's MGLMreg (bench/regression_mglm.R, in R, one thread) and
# PyTorch's full-batch LBFGS (bench/regression_torch.py, on the CPU with
# the same threads, or with TORCH_DEVICE=cuda on the GPU).
#
#   bash bench/run_regression.sh [NAMES]    # default small,medium,large
#
# NAMES: small, medium, large, wide (bench/bench_regression.cpp). MGLM takes
# minutes on large (and stops after MGLM_TIME_LIMIT seconds, default 300).
# Uses build/release (built by the README's commands); prints each tool's
# table and then the merged one.
set -euo pipefail
cd "$(dirname "$0")/.."
names=${1:-small,medium,large}
bin=${DIRMN_BUILD_DIR:-build/release}/bench/dirmn_bench_regression
[[ -x $bin ]] || { echo "run_regression.sh: $bin not built" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
threads=${THREADS:-$(nproc)}
"$bin" "${BACKEND:-cpu}" --threads "$threads" --only "$names" --dump "$dir" --csv "$dir/dirmn.csv"
echo
Rscript bench/regression_mglm.R "$dir" "$names" "$dir/mglm.csv"
echo
/usr/bin/python3 bench/regression_torch.py "$dir" "$names" --device "${TORCH_DEVICE:-cpu}" \
  --threads "$threads" --csv "$dir/torch.csv"
echo
/usr/bin/python3 - "$dir" <<'PY'
import csv, math, sys
d = sys.argv[1]
def read(n):
    with open(f"{d}/{n}.csv") as f:
        return {r["shape"]: r for r in csv.DictReader(f)}
dm, mg, to = read("dirmn"), read("mglm"), read("torch")
def sec(r):
    try:
        v = float(r["seconds"])
        return v if math.isfinite(v) else None
    except (KeyError, ValueError, TypeError):
        return None
def fmt(s):
    return "-" if s is None else (f"{s:.2f} s" if s >= 1 else f"{1e3 * s:.1f} ms")
print("Merged (time; loglik where the fits end):")
print(f"{'shape':8} {'rows x V x p':>18} {'dirmn':>10} {'MGLM':>10} {'PyTorch':>10} {'MGLM/dirmn':>11} {'torch/dirmn':>12} "
      f"{'loglik dirmn':>18} {'loglik MGLM':>18} {'loglik torch':>18}")
for name, r in dm.items():
    s0, s1, s2 = sec(r), sec(mg.get(name, {})), sec(to.get(name, {}))
    dims = f"{r['rows']} x {r['categories']} x {r['covariates']}"
    ratio = lambda s: "-" if s is None else f"{s / s0:.0f}x"
    ll = lambda t: "-" if not t or t.get("loglik") in (None, "", "NA") else f"{float(t['loglik']):.6f}"
    print(f"{name:8} {dims:>18} {fmt(s0):>10} {fmt(s1):>10} {fmt(s2):>10} {ratio(s1):>11} {ratio(s2):>12} "
          f"{ll(r):>18} {ll(mg.get(name)):>18} {ll(to.get(name)):>18}")
PY
