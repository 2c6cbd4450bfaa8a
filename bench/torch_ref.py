#!/usr/bin/env python3
"""PyTorch reference for the GPU benchmark table (bench/gpu_bench.cu).

Times, on the same data as gpu_bench (the same counter-based hash), the
per-row Dirichlet-multinomial log-likelihood a PyTorch user would write,
eagerly and under torch.compile, with CUDA events and the L2 cache flushed
(a 256 MB write) before every repetition; reports the median. As in
gpu_bench, the GPU is held for about a millisecond before each start event,
so the events time the GPU's work rather than the host's kernel launches.

    python3 bench/torch_ref.py [--quick] [--reps N] [--csv OUT]
    python3 bench/torch_ref.py --merge gpu_bench.csv torch.csv   # one table

The float32 reference's error is printed against a float64 evaluation of the
same formula (the naive lgamma difference loses ~1 nat at alpha ~ 3000).
"""
import argparse
import csv
import math
import statistics
import sys

MINSTD_MUL = 48271
MINSTD_MOD = 2147483647
SEED_COUNTS = 12345
SEED_ZEROS = 67890
FLUSH_BYTES = 256 << 20
# Cycles the GPU spins before each timed region (torch.cuda._sleep): about
# 1 ms at the H200's 1.98 GHz, gpu_bench's kHeadStartNs.
HEAD_START_CYCLES = 2_000_000

SHAPES = [
    ("512x256", 512, 256, 0),
    ("262144x1024", 262144, 1024, 0),
    ("262144x1024_z77", 262144, 1024, 770),
    ("1048576x256", 1048576, 256, 0),
    ("16384x16384_z80", 16384, 16384, 800),
]


def hash31(i, seed):
    """gpu_bench's hash31 in int64 tensor arithmetic (products stay < 2^63)."""
    x = (i + seed) % MINSTD_MOD
    x = (x * MINSTD_MUL) % MINSTD_MOD
    x = (x * MINSTD_MUL) % MINSTD_MOD
    return x ^ (x >> 13)


def make_counts(torch, rows, cols, zero_permille, device):
    out = torch.empty(rows * cols, dtype=torch.float32, device=device)
    chunk = 1 << 26  # bounds the int64 temporaries
    for s in range(0, rows * cols, chunk):
        i = torch.arange(s, min(s + chunk, rows * cols), dtype=torch.int64, device=device)
        h = hash31(i, SEED_COUNTS)
        if zero_permille == 0:
            v = h % 10
        else:
            zero = (hash31(i, SEED_ZEROS) % 1000) < zero_permille
            v = torch.where(zero, torch.zeros_like(h), 1 + h % 9)
        out[s:s + i.numel()] = v.to(torch.float32)
    return out.view(rows, cols)


def log_alpha_vec(torch, cols, device):
    v = torch.arange(cols, dtype=torch.float64, device=device)
    return (-0.5 + torch.remainder(v, 97) / 97.0)


def loglik(counts, log_alpha):
    import torch
    alpha = torch.exp(log_alpha)[None, :]
    n = counts.sum(-1)
    a = alpha.sum(-1)
    return torch.lgamma(a) - torch.lgamma(n + a) + (torch.lgamma(counts + alpha) - torch.lgamma(alpha)).sum(-1)


def time_median(torch, fn, reps, flush, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for r in range(reps):
        flush.fill_(r & 0xFF)
        torch.cuda._sleep(HEAD_START_CYCLES)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(times)


def run(args):
    import torch
    dev = torch.device("cuda")
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device=dev)
    compiled = torch.compile(loglik)
    rows_out = []
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {args.reps} reps, median",
          file=sys.stderr)
    for name, rows, cols, zp in SHAPES:
        if args.quick and rows * cols > (1 << 28):
            continue
        counts = make_counts(torch, rows, cols, zp, dev)
        la64 = log_alpha_vec(torch, cols, dev)
        la = la64.to(torch.float32)
        eager_us = time_median(torch, lambda: loglik(counts, la), args.reps, flush)
        try:
            compile_us = time_median(torch, lambda: compiled(counts, la), args.reps, flush, warmup=5)
        except Exception as e:  # noqa: BLE001 - report, keep going
            print(f"{name}: torch.compile failed: {e}", file=sys.stderr)
            compile_us = float("nan")
        # Accuracy of the float32 reference on the first rows, against float64.
        sub = counts[:256].double()
        err = (loglik(counts[:256], la).double() - loglik(sub, la64)).abs().max().item()
        # And at alpha ~ 3000, where float32 lgamma differences break down.
        la_big = torch.full_like(la64, math.log(3000.0))
        err_big = (loglik(counts[:256], la_big.float()).double() - loglik(sub, la_big)).abs().max().item()
        for variant, us, note in (("torch eager", eager_us, ""),
                                  ("torch.compile", compile_us, ""),
                                  ("check: torch fp32 max abs err vs fp64", err, "nats"),
                                  ("check: torch fp32 max abs err at alpha=3000", err_big, "nats")):
            rows_out.append((name, variant, us, note))
            print(f"  {name:<22} {variant:<44} {us:12.2f}  {note}", file=sys.stderr)
        del counts
        torch.cuda.empty_cache()
    w = csv.writer(open(args.csv, "w", newline="") if args.csv else sys.stdout)
    w.writerow(["shape", "variant", "us", "note"])
    for r in rows_out:
        w.writerow([r[0], r[1], f"{r[2]:.3f}", r[3]])


COLUMNS = [
    ("eager", "torch eager"),
    ("compile", "torch.compile"),
    ("kernel (1)", "kernel (1) per-block alpha"),
    ("kernel (2)", "kernel (2) prepared alpha"),
    ("read floor", "read floor (float32 table)"),
    ("dirmn fast", None),
    ("dirmn double", None),
    ("wrapped f32 fast", "dirmn wrapped-f32 fast"),
    ("wrapped f32 double", "dirmn wrapped-f32 double"),
]


def merge(paths):
    data = {}
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f):
                try:
                    data[(r["shape"], r["variant"])] = float(r["us"])
                except (KeyError, ValueError):
                    pass
    shapes = [s[0] for s in SHAPES]

    def fmt(us):
        if us is None or math.isnan(us):
            return "fails" if us is not None else "-"
        return f"{us / 1000:.3f} ms" if us >= 1000 else f"{us:.1f} us"

    def prepared(shape, mode):
        # The prepared form the library's default storage (AUTO) picks for
        # these tables: dense u8 (CSR only beyond ~85% zeros with 8-bit
        # counts); the CSR rows are listed below the table.
        for st in ("dense-u8", "csr-u8"):
            k = (shape, f"dirmn prepared {st} {mode}")
            if k in data:
                return data[k], st
        return None, ""

    print("| shape | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for s in shapes:
        cells = []
        for label, key in COLUMNS:
            if key is None:
                v, st = prepared(s, label.split()[1])
                cells.append(fmt(v) + (f" ({st})" if v is not None else ""))
            else:
                cells.append(fmt(data.get((s, key))))
        print(f"| {s} | " + " | ".join(cells) + " |")
    print()
    print("Other rows from the same run:")
    for (s, v), us in sorted(data.items()):
        if any(v == c[1] for c in COLUMNS):
            continue
        print(f"  {s:<18} {v:<50} {us:14.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--csv")
    ap.add_argument("--merge", nargs="+")
    args = ap.parse_args()
    if args.merge:
        merge(args.merge)
    else:
        run(args)


if __name__ == "__main__":
    main()
