"""The PyTorch anchor of issue #30's sampling benchmark: what a PyTorch user
writes to draw DM tables,

    p = torch.distributions.Dirichlet(alpha).sample((rows,))
    x = torch.distributions.Multinomial(size, probs=p).sample()

(one total_count for the whole batch, as torch.distributions takes it), on
bench/bench_sample.cpp's shapes, on the CPU with --threads threads or on
the GPU (--device cuda). Each shape is drawn at --rows-fraction of its rows
(default 0.1 on the CPU, 1 on the GPU); times are the median of 3 after a
warm-up, reported as cells per second with the share of rows whose values
are NaN or whose total is wrong (torch's Dirichlet underflows at tiny
alpha). A draw that runs out of memory says so.

Usage: python3 bench/sample_torch.py [--device cpu|cuda] [--threads N]
                                     [--rows-fraction F] [--only NAMES]
"""
import argparse
import statistics
import time

import torch

SHAPES = {
    "wide-deep": (10000, 1000, 10000, 0.0),
    "wide-shallow": (10000, 1000, 100, 0.0),
    "tall": (100000, 100, 1000, 0.0),
    "sparse": (10000, 30000, 2000, 0.01),
    "tiny-alpha": (10000, 1000, 10000, 1e-300),
}
# The GPU shapes, drawn on the GPU only (or named by --only).
GPU_SHAPES = {
    "deep-1e5": (100000, 1000, 10000, 0.0),
    "shallow-1e5": (100000, 1000, 100, 0.0),
    "deep-1e6": (1000000, 1000, 10000, 0.0),
}


def alpha_of(cols, a, device):
    if a > 0:
        return torch.full((cols,), a, dtype=torch.float64, device=device)
    return 0.5 + (torch.arange(cols, device=device) % 7).to(torch.float64) / 2


def draw(alpha, rows, size):
    p = torch.distributions.Dirichlet(alpha).sample((rows,))
    return torch.distributions.Multinomial(size, probs=p).sample()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rows-fraction", type=float, default=None)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    if a.device == "cuda" and not torch.cuda.is_available():
        print("sample_torch.py: no CUDA device")
        return
    frac = a.rows_fraction if a.rows_fraction is not None else (1.0 if a.device == "cuda" else 0.1)
    only = set(a.only.split(",")) if a.only else None
    print(f"PyTorch {torch.__version__} Dirichlet + Multinomial, {a.device}, "
          f"{torch.get_num_threads()} threads, rows drawn: {frac:g} of each shape's")
    print(f"{'shape':13} {'rows x cols, size':>24} {'time':>11} {'cells/s':>12} {'bad rows':>10}")
    shapes = dict(SHAPES)
    if a.device == "cuda" or only:
        shapes.update(GPU_SHAPES)
    for name, (rows, cols, size, av) in shapes.items():
        if only and name not in only:
            continue
        n = max(10, int(rows * frac))
        alpha = alpha_of(cols, av, a.device)
        try:
            torch.manual_seed(1)
            x = draw(alpha, n, size)
            times = []
            for _ in range(3):
                if a.device == "cuda":
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                x = draw(alpha, n, size)
                if a.device == "cuda":
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
        except (RuntimeError, ValueError) as e:  # out of memory, or alpha torch refuses
            msg = str(e).splitlines()[0][:60]
            x = None
            if a.device == "cuda":
                torch.cuda.empty_cache()
            print(f"{name:13} {f'{n} x {cols}, {size}':>24} {'-':>11} {'-':>12} {msg}")
            continue
        t = statistics.median(times)
        tot = x.sum(dim=1)
        bad = ((~torch.isfinite(tot)) | (tot != size)).double().mean().item()
        print(f"{name:13} {f'{n} x {cols}, {size}':>24} {t:9.3f} s {n * cols / t:12.3g} {100 * bad:9.1f} %")


if __name__ == "__main__":
    main()
