#!/usr/bin/env python3
"""dirmn.torch.DirichletMultinomial against the same kernel written in PyTorch.

Times one training step, forward and backward (``model(counts).sum()``,
then ``.backward()`` into log alpha), of

* the Module (dirmn's CPU kernels; its Counts is built on the first call and
  cached, so the build is reported apart, as "Counts build"),
* the seed's PyTorch formula (bench/torch_ref.py's ``loglik``) in eager mode,
  and under ``torch.compile`` where this torch has it ("n/a" otherwise),

on dense float32 tables of counts 0-9 (512 x 256, 16384 x 1024) and on a
sparse single-cell-like table (20000 x 20000, 3 % nonzero, counts mostly
1-3), where the PyTorch side is the sparse formulation: lgamma over the
nonzero values, summed per row with ``index_add_``, differentiated by
autograd. Both sides use the same number of threads (default: all cores).
Times are medians over ``--reps`` steps after ``--warmup`` steps ("of it
forward": the Module's forward pass alone, without autograd); "ratio" is
eager / Module. Agreement is checked in float64: the max relative difference
(|x - y| / |y|, elementwise) of the per-row values and of the gradient, and
for the gradient also normwise (max |x - y| / max |y|), since its entries
can nearly cancel.

    DIRMN_LIBRARY_PATH=build/release PYTHONPATH=bindings/python \\
        python3 bench/python_module.py [--threads N] [--reps 7] [--quick | --large] [--device cuda]
            [--only dense|sparse]

--quick drops the two large tables; --large makes them the GPU issue's
262144 x 1024 and 300000 x 20000. --device cuda runs both sides on the
GPU (the Module through a CUDA dirmn.Context); where torch or libdirmn lacks
CUDA or no device is present it prints "needs a CUDA build and device" and
exits 0 (nothing to compare there).
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ref import loglik as seed_loglik  # noqa: E402  (the seed's formula)

import dirmn  # noqa: E402
import dirmn.torch  # noqa: E402

SEED = 20240611
# torch 1.13 warns on every sparse CSR tensor made; it says nothing about results.
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


def log_alpha_for(cols, dtype, device):
    """A fixed log alpha spread over [-0.5, 0.5), as bench/torch_ref.py uses."""
    v = torch.arange(cols, dtype=torch.float64)
    return (-0.5 + torch.remainder(v, 97) / 97.0).to(dtype=dtype, device=device)


def dense_counts(rows, cols, device):
    g = torch.Generator().manual_seed(SEED)
    return torch.randint(0, 10, (rows, cols), generator=g).to(torch.float32).to(device)


def sparse_counts(rows, cols, density, device):
    """A CSR tensor: about ``density`` of each row's cells nonzero (a binomial
    number of columns drawn uniformly, repeats merged), values geometric
    from 1 (60 % ones, 24 % twos, ...), as in single-cell data."""
    rng = np.random.default_rng(SEED)
    ptr, idx = [np.zeros(1, np.int64)], []
    start = 0
    for r0 in range(0, rows, 4096):  # by blocks: the full mask would be rows x cols
        n = min(4096, rows - r0)
        per_row = rng.binomial(cols, density, size=n)
        row = np.repeat(np.arange(n, dtype=np.int64), per_row)
        key = np.unique(row * cols + rng.integers(0, cols, size=row.shape[0]))
        idx.append(key % cols)
        ptr.append(start + np.cumsum(np.bincount(key // cols, minlength=n)))
        start = ptr[-1][-1]
    ptr, idx = np.concatenate(ptr), np.concatenate(idx)
    vals = rng.geometric(0.6, size=idx.shape[0]).astype(np.float32)
    return torch.sparse_csr_tensor(torch.from_numpy(ptr), torch.from_numpy(idx),
                                   torch.from_numpy(vals), (rows, cols)).to(device)


class SparseRef:
    """The kernel of a CSR table in PyTorch: only nonzero cells cost anything.

    Per row, sum_v [lgamma(n_v + a_v) - lgamma(a_v)] runs over the row's
    nonzeros only (zero cells contribute lgamma(a_v) - lgamma(a_v) = 0).
    Row ids and totals depend on the table alone, so they are computed once,
    as the Module's Counts is.
    """

    def __init__(self, S):
        crow, self.col = S.crow_indices(), S.col_indices()
        rows = S.shape[0]
        self.row = torch.repeat_interleave(torch.arange(rows, device=crow.device),
                                           crow[1:] - crow[:-1])
        self.values = S.values()
        self.totals = torch.zeros(rows, dtype=self.values.dtype, device=crow.device)
        self.totals.index_add_(0, self.row, self.values)

    def __call__(self, log_alpha):
        alpha = log_alpha.exp()
        a_nz = alpha[self.col]
        vals = self.values.to(alpha.dtype)
        per_cell = torch.lgamma(vals + a_nz) - torch.lgamma(a_nz)
        out = torch.zeros(self.totals.shape[0], dtype=alpha.dtype, device=alpha.device)
        out = out.index_add(0, self.row, per_cell)
        A = alpha.sum()
        return out + torch.lgamma(A) - torch.lgamma(self.totals.to(alpha.dtype) + A)


def median_step(step, reps, warmup, sync):
    """Median seconds of ``step()`` over ``reps`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def train_step(fn, param):
    """One step's work: the values, their sum's gradient into ``param``."""
    def step():
        param.grad = None
        fn().sum().backward()
    return step


def max_rel(x, y):
    """Max elementwise |x - y| / |y|, and max |x - y| / max |y| (normwise).

    The gradient's entries sum row terms of both signs; where they nearly
    cancel, the elementwise figure shows the reference's rounding more than
    any disagreement, so the normwise one is given beside it.
    """
    x, y = x.detach().double().cpu(), y.detach().double().cpu()
    d = (x - y).abs()
    elem = (d / y.abs().clamp_min(torch.finfo(torch.float64).tiny)).max().item()
    return elem, (d.max() / y.abs().max()).item()


def agreement(model, ref_fn, counts):
    """Max relative differences of values and gradients, both sides in float64."""
    la = log_alpha_for(model.log_alpha.shape[0], torch.float64, model.log_alpha.device)
    m64 = dirmn.torch.DirichletMultinomial(la.shape[0], dtype=torch.float64,
                                           context=model.context).to(la.device)
    with torch.no_grad():
        m64.log_alpha.copy_(la)
    v1 = m64(counts)
    g1, = torch.autograd.grad(v1.sum(), m64.log_alpha)
    la_ref = la.clone().requires_grad_()
    v2 = ref_fn(la_ref)
    g2, = torch.autograd.grad(v2.sum(), la_ref)
    return max_rel(v1, v2), max_rel(g1, g2)


def bench_case(name, counts, ref_fn, ref64_fn, ctx, args, sync):
    cols = counts.shape[1]
    dev = counts.device
    model = dirmn.torch.DirichletMultinomial(cols, context=ctx).to(dev)
    with torch.no_grad():
        model.log_alpha.copy_(log_alpha_for(cols, torch.float32, dev))
    sync()
    t0 = time.perf_counter()
    model.prepare(counts)  # the one-off copy into the library (cached afterwards)
    build = time.perf_counter() - t0
    t_mod = median_step(train_step(lambda: model(counts), model.log_alpha), args.reps,
                        args.warmup, sync)

    def forward_only():
        with torch.no_grad():
            model(counts)
    t_fwd = median_step(forward_only, args.reps, args.warmup, sync)
    la = log_alpha_for(cols, torch.float32, dev).requires_grad_()
    t_eager = median_step(train_step(lambda: ref_fn(la), la), args.reps, args.warmup, sync)
    t_comp = None
    if hasattr(torch, "compile"):
        try:
            compiled = torch.compile(ref_fn)
            t_comp = median_step(train_step(lambda: compiled(la), la), args.reps,
                                 args.warmup + 2, sync)
        except Exception as e:  # e.g. sparse tensors the compiler does not take
            print(f"{name}: torch.compile failed ({type(e).__name__}); n/a", file=sys.stderr)
    rel_v, rel_g = agreement(model, ref64_fn, counts)
    # Each row as it is done (a long run stopped early keeps what it has).
    print(f"{name}: Module {fmt_t(t_mod)}, forward {fmt_t(t_fwd)}, eager {fmt_t(t_eager)}, "
          f"compile {fmt_t(t_comp)}, build {fmt_t(build)}", file=sys.stderr, flush=True)
    return dict(name=name, build=build, module=t_mod, forward=t_fwd, eager=t_eager,
                compile=t_comp,
                rel_v=rel_v, rel_g=rel_g)


def fmt_t(s):
    if s is None:
        return "n/a"
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.3f} s"


def print_table(results):
    head = ("table", "Counts build", "Module", "of it forward", "torch eager", "torch.compile",
            "eager/Module", "compile/Module", "rel diff value", "rel diff grad (elem / norm)")
    rows = [(r["name"], fmt_t(r["build"]), fmt_t(r["module"]), fmt_t(r["forward"]),
             fmt_t(r["eager"]),
             fmt_t(r["compile"]), f"{r['eager'] / r['module']:.2f}x",
             "n/a" if r["compile"] is None else f"{r['compile'] / r['module']:.2f}x",
             f"{r['rel_v'][0]:.1e}", "%.1e / %.1e" % r["rel_g"]) for r in results]
    width = [max(len(x) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, width)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in width) + "|")
    for r in rows:
        print(line(r))


def cuda_ready():
    return torch.cuda.is_available() and dirmn.backend_compiled("cuda") \
        and dirmn.cuda_device_count() > 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0))
                    if hasattr(os, "sched_getaffinity") else os.cpu_count())
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="only the 512 x 256 table")
    ap.add_argument("--large", action="store_true",
                    help="the GPU issue's sizes: 262144 x 1024 dense and a single-cell-like "
                    "300000 x 20000 CSR table at 3 %% (several GB)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--only", choices=("dense", "sparse"),
                    help="only the dense tables or only the sparse one")
    args = ap.parse_args()

    if args.device == "cuda":
        if not cuda_ready():
            print("needs a CUDA build and device")
            return 0
        ctx = dirmn.Context("cuda", threads=args.threads)
        sync = torch.cuda.synchronize
    else:
        ctx = dirmn.Context("cpu", threads=args.threads)
        sync = lambda: None  # noqa: E731  (CPU work is synchronous)
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    print(f"torch {torch.__version__}, libdirmn {dirmn.library_version()}, device "
          f"{args.device}, {args.threads} threads (torch and dirmn), median of {args.reps} "
          f"steps after {args.warmup} warm-up; forward + backward, float32 parameters")

    results = []
    dense_sizes = ((512, 256), (262144, 1024)) if args.large else ((512, 256), (16384, 1024))
    sparse_rows = 300000 if args.large else 20000
    for rows, cols in dense_sizes:
        if (args.quick and rows > 512) or args.only == "sparse":
            continue
        X = dense_counts(rows, cols, dev)
        X64 = X.double()
        results.append(bench_case(f"{rows} x {cols} dense", X, lambda la: seed_loglik(X, la),
                                  lambda la: seed_loglik(X64, la), ctx, args, sync))
        del X, X64
    if not args.quick and args.only != "dense":
        S = sparse_counts(sparse_rows, 20000, 0.03, dev)
        ref = SparseRef(S)
        results.append(bench_case(f"{sparse_rows} x 20000 CSR 3% ({S.values().shape[0]} nnz)",
                                  S, ref, ref, ctx, args, sync))
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
