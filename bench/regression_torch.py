"""The PyTorch anchor of issue #29's regression benchmark: the model as a
PyTorch user fits it -- the seed's formula per row with alpha = exp(X beta),
full-batch LBFGS (strong Wolfe line search, float64) to a gradient
tolerance of 1e-8 times the log-likelihood's size at beta = 0, no standard errors -- on the tables bench_regression --dump
wrote.

Usage: python3 bench/regression_torch.py DIR NAME[,NAME...] [--device cpu|cuda]
                                          [--threads N] [--csv FILE]
Prints one row per table: seconds, LBFGS iterations, the log pmf (the
kernel plus the multinomial coefficients, as dirmn's loglik) and the
gradient's max-norm at the end.
"""
import argparse
import csv
import os
import time

import numpy as np
import torch


def load(d, name):
    y = np.loadtxt(os.path.join(d, name + ".y.csv"), delimiter=",", ndmin=2)
    x = np.loadtxt(os.path.join(d, name + ".x.csv"), delimiter=",", ndmin=2)
    return y, x


def fit(y, x, device, rel_tol=1e-8, max_iter=2000):
    Y = torch.tensor(y, dtype=torch.float64, device=device)
    X = torch.tensor(x, dtype=torch.float64, device=device)
    N = Y.sum(1)
    coef = (torch.lgamma(N + 1) - torch.lgamma(Y + 1).sum(1)).sum()
    beta = torch.zeros(x.shape[1], y.shape[1], dtype=torch.float64, device=device, requires_grad=True)
    # The gradient tolerance relative to the log-likelihood's size (that
    # at beta = 0): LBFGS stops on it, or on a change below 1e-12.
    with torch.no_grad():
        alpha0 = torch.ones_like(Y)
        A0 = alpha0.sum(1)
        scale = abs(float((torch.lgamma(A0) - torch.lgamma(N + A0)).sum()
                          + (torch.lgamma(Y + alpha0) - torch.lgamma(alpha0)).sum()))
    opt = torch.optim.LBFGS([beta], lr=1, max_iter=max_iter, tolerance_grad=rel_tol * scale,
                            tolerance_change=1e-12, history_size=20, line_search_fn="strong_wolfe")

    def nll():
        opt.zero_grad()
        alpha = torch.exp(X @ beta)
        A = alpha.sum(1)
        ll = (torch.lgamma(A) - torch.lgamma(N + A)).sum() + (torch.lgamma(Y + alpha) - torch.lgamma(alpha)).sum()
        loss = -ll
        loss.backward()
        return loss

    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    opt.step(nll)
    iters = opt.state[opt._params[0]].get("n_iter", 0)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    loss = nll()  # the value and gradient at the end
    return seconds, iters, -loss.item() + coef.item(), beta.grad.abs().max().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("names")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--csv")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    print("PyTorch %s LBFGS (strong Wolfe, float64), %s, %d threads"
          % (torch.__version__, a.device, torch.get_num_threads()))
    print("%-8s %22s %12s %6s %20s %10s" % ("shape", "rows x V x p", "time", "iter", "loglik", "|grad|"))
    rows = []
    for name in a.names.split(","):
        y, x = load(a.dir, name)
        s, it, ll, g = fit(y, x, a.device)
        dims = "%d x %d x %d" % (y.shape[0], y.shape[1], x.shape[1])
        print("%-8s %22s %10.1f ms %6d %20.6f %10.2g" % (name, dims, 1e3 * s, it, ll, g))
        rows.append({"shape": name, "seconds": s, "iterations": it, "loglik": ll, "gradient": g})
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
