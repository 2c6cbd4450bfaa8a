#!/usr/bin/env python3
"""Train dirmn.torch.DirichletMultinomial with Adam and land on dirmn.fit's optimum.

Shows that the PyTorch module is an ordinary differentiable layer: a plain
training loop (Adam, lr 0.05, from alpha = 1) over a real table, Barro
Colorado Island tree counts (examples/data/bci.csv: 50 plots x 225 species),
reaches the maximum-likelihood alpha that dirmn.fit finds by Newton's method.
A few L-BFGS iterations then polish away Adam's jitter (pass --no-polish to
see Adam alone: its objective is already within ~1e-10 relative, its alpha
within ~1e-3).

Run from the repository root:

    DIRMN_LIBRARY_PATH=build/release PYTHONPATH=bindings/python \\
        python3 examples/python/train_module.py [--steps 1500] [--lr 0.05]

Exits 1 if the module's log-likelihood is not within 1e-6 (relative) of the
fit's.
"""
import argparse
import csv
import os
import sys
import time

import numpy as np
import torch

import dirmn
import dirmn.torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(HERE, "..", "data", "bci.csv")
TOLERANCE = 1e-6


def read_table(path):
    """A CSV of a header row and one named row per observation, as counts."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    species = rows[0][1:]
    X = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    return X, species


def train(counts, steps, lr, polish):
    """Fits the module by Adam (then L-BFGS if ``polish``); returns it and a log."""
    V = counts.shape[1]
    # float64 so that alpha can be compared with the fit to many digits; the
    # default float32 reaches the same objective to float32's precision.
    model = dirmn.torch.DirichletMultinomial(V, dtype=torch.float64)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    log = []
    for step in range(steps):
        opt.zero_grad()
        loss = -model(counts).sum()     # the same tensor every step: its Counts is cached
        loss.backward()
        opt.step()
        if step % max(1, steps // 6) == 0:
            log.append((f"adam {step}", loss.item()))
    if polish:
        # Adam's fixed step keeps it hopping around the optimum; L-BFGS with a
        # line search converges there in a handful of iterations.
        lbfgs = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=50,
                                  tolerance_grad=1e-12, tolerance_change=1e-15,
                                  history_size=20, line_search_fn="strong_wolfe")

        def closure():
            lbfgs.zero_grad()
            loss = -model(counts).sum()
            loss.backward()
            return loss

        lbfgs.step(closure)
    with torch.no_grad():
        log.append(("final", -model(counts).sum().item()))
    return model, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", nargs="?", default=DEFAULT_TABLE)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--no-polish", dest="polish", action="store_false")
    args = ap.parse_args()

    X, _ = read_table(args.table)
    print(f"table: {os.path.basename(args.table)}, {X.shape[0]} rows x {X.shape[1]} columns")
    fit = dirmn.fit(X)

    t0 = time.perf_counter()
    model, log = train(torch.from_numpy(X), args.steps, args.lr, args.polish)
    seconds = time.perf_counter() - t0
    print("negative log-likelihood (kernel) during training:")
    for what, nll in log:
        print(f"  {what:<12} {nll:16.6f}")
    print(f"trained in {seconds:.2f} s ({args.steps} Adam steps"
          f"{' + L-BFGS polish' if args.polish else ''})")

    alpha = model.log_alpha.detach().exp().numpy()
    # The module optimises the kernel (full=False); the fit reports both. The
    # full log pmf of the module's alpha comes from dirmn.loglik.
    kernel = -log[-1][1]
    full = float(dirmn.loglik(X, alpha).sum())
    rel_kernel = abs(kernel - fit.loglik_kernel) / abs(fit.loglik_kernel)
    rel_full = abs(full - fit.loglik) / abs(fit.loglik)
    rel_alpha = float(np.max(np.abs(alpha - fit.alpha) / fit.alpha))
    print(f"{'':<14}{'module':>18}{'dirmn.fit':>18}{'rel. diff':>12}")
    print(f"{'loglik kernel':<14}{kernel:18.6f}{fit.loglik_kernel:18.6f}{rel_kernel:12.2e}")
    print(f"{'loglik full':<14}{full:18.6f}{fit.loglik:18.6f}{rel_full:12.2e}")
    print(f"max relative difference of alpha: {rel_alpha:.2e}")
    if not rel_kernel <= TOLERANCE:
        print(f"FAIL: the module's objective is not within {TOLERANCE:g} of the fit's")
        return 1
    print(f"OK: within {TOLERANCE:g} relative of dirmn.fit's optimum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
