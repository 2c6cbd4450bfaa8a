#!/usr/bin/env python3
"""PyTorch reference for issue #26's benchmark (bench/bench_shapes.cpp).

Times, on the CPU or (--device cuda) the GPU, the per-row Dirichlet-multinomial log pmf (K = 1: one
alpha for every row) the way a PyTorch user would write it for a sparse
table, in float64 and float32:

    a   = alpha[col]                                 # per nonzero
    t   = lgamma(x + a) - lgamma(a) - lgamma(x + 1)  # per nonzero
    out = zeros(rows).index_add_(0, row, t)          # per row
    out += lgamma(A) - lgamma(N + A) + lgamma(N + 1) # A = sum alpha, N row totals

on the tables `dirmn_bench_shapes --dump DIR` wrote (the same CSR, the same
alpha), with torch.set_num_threads(--threads, default the dump's own thread
count). The tensors a user holds for the table (x, col, row ids, N) are made
before the clock starts, as dirmn's counts object is; everything else is
timed: the median of at least 5 calls and 1 s after one warm-up call.

Agreement: the float64 total is compared with dirmn's (from the per-row log
pmf in the dump), and float32's with both.

    /usr/bin/python3 bench/shapes_torch.py DIR [--threads N] [--csv OUT] [--device cuda] [--gradient]
    /usr/bin/python3 bench/shapes_torch.py --merge BASE.csv NOW.csv [TORCH.csv]

--merge prints bench/run_shapes.sh's side-by-side table from the CSVs of
dirmn_bench_shapes --csv (an earlier library and this one) and of this
script. Debian's python3-torch and python3-numpy are enough.
"""
import argparse
import csv
import os
import statistics
import sys
import time

ORDER = ["microbiome", "single-cell", "text", "globalpatterns", "soilrep"]


def tables_in(folder):
    names = [f[:-4] for f in os.listdir(folder) if f.endswith(".txt")]
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def load(folder, name):
    import numpy as np
    p = os.path.join(folder, name)
    meta = {}
    with open(p + ".txt") as f:
        for line in f:
            k, v = line.split()
            meta[k] = int(v)
    arr = {ext: np.fromfile(p + "." + ext, dtype=np.int32 if ext.endswith("i32") else np.float64)
           for ext in ("ptr.i32", "idx.i32", "val.i32", "alpha.f64", "loglik.f64")}
    assert arr["ptr.i32"].size == meta["rows"] + 1 and arr["idx.i32"].size == meta["nnz"]
    return meta, arr


def median_time(fn, min_reps=5, budget=1.0, sync=None):
    fn()
    if sync:
        sync()
    t = []
    start = time.perf_counter()
    while len(t) < min_reps or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        t.append(time.perf_counter() - t0)
        if len(t) >= 200:
            break
    return statistics.median(t)


def run(args):
    import torch
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else None
    where = f"{dev.type}(torch)"
    rows_out = []

    def record(name, step, sec, rate, unit, threads, value, note):
        print(f"{step:<24} {sec * 1e3:10.3f} ms {rate / 1e6:9.1f} M{unit}  {note}")
        rows_out.append([name, step, f"{sec:.9g}", f"{rate:.6f}", unit, where, threads,
                         "" if value is None else f"{value:.17g}", note.replace(",", ";")])

    for name in tables_in(args.dir):
        meta, arr = load(args.dir, name)
        threads = args.threads or meta["threads"]
        torch.set_num_threads(threads)
        rows, cols, nnz = meta["rows"], meta["cols"], meta["nnz"]
        ptr = torch.from_numpy(arr["ptr.i32"].astype("int64"))
        col = torch.from_numpy(arr["idx.i32"].astype("int64")).to(dev)
        row = torch.repeat_interleave(torch.arange(rows), ptr[1:] - ptr[:-1]).to(dev)
        dirmn_rows = torch.from_numpy(arr["loglik.f64"])
        dirmn_total = float(dirmn_rows.sum())
        print(f"\n== {name}: {rows} x {cols}, {nnz} nonzeros; torch {torch.__version__} on {dev}"
              + ("" if sync else f", {torch.get_num_threads()} threads"))
        totals = {}
        for dtype, label in ((torch.float64, "float64"), (torch.float32, "float32")):
            x = torch.from_numpy(arr["val.i32"]).to(dev, dtype)
            alpha = torch.from_numpy(arr["alpha.f64"]).to(dev, dtype)
            n = torch.zeros(rows, dtype=dtype, device=dev).index_add_(0, row, x)

            def loglik(alpha=alpha):
                a = alpha[col]
                t = torch.lgamma(x + a) - torch.lgamma(a) - torch.lgamma(x + 1)
                out = torch.zeros(rows, dtype=dtype, device=dev).index_add_(0, row, t)
                big_a = alpha.sum()
                return out + (torch.lgamma(big_a) - torch.lgamma(n + big_a) + torch.lgamma(n + 1))

            sec = median_time(loglik, sync=sync)
            res = loglik().double().cpu()
            total = float(res.sum())
            totals[label] = total
            rel_total = abs(total - dirmn_total) / abs(dirmn_total)
            rel_rows = float(((res - dirmn_rows).abs() / dirmn_rows.abs().clamp(min=1.0)).max())
            note = (f"total {total:.10g}; vs dirmn: total rel. diff {rel_total:.2e}, "
                    f"largest per-row rel. diff {rel_rows:.2e}")
            if label == "float32":
                note += f"; vs torch float64 total {abs(total - totals['float64']) / abs(totals['float64']):.2e}"
            step = "loglik K=1" if label == "float64" else "loglik K=1 float32"
            record(name, step, sec, nnz / sec, "nz/s", torch.get_num_threads(), total, note)
            if args.gradient:
                # Value and gradient of the summed log pmf in log alpha, by
                # autograd: what training the seed's PyTorch module costs.
                log_alpha = alpha.log().detach().requires_grad_(True)

                def value_and_gradient():
                    log_alpha.grad = None
                    v = loglik(log_alpha.exp()).sum()
                    v.backward()
                    return v

                sec = median_time(value_and_gradient, sync=sync)
                record(name, "loglik+grad " + label, sec, nnz / sec, "nz/s", torch.get_num_threads(), None,
                       "summed log pmf and its gradient in log alpha (autograd)")
        # The seed module's formula on a dense float32 copy, where it fits
        # (a quarter of the device's free memory for the copy: the
        # temporaries take the rest).
        dense_bytes = 4 * rows * cols
        free = torch.cuda.mem_get_info()[0] if sync else 0
        if sync and dense_bytes * 4 <= free:
            xd = torch.zeros(rows * cols, dtype=torch.float32, device=dev)
            xd[row * cols + col] = torch.from_numpy(arr["val.i32"]).to(dev, torch.float32)
            xd = xd.view(rows, cols)
            alpha = torch.from_numpy(arr["alpha.f64"]).to(dev, torch.float32)
            nd = xd.sum(1)

            def dense():
                big_a = alpha.sum()
                return (torch.lgamma(big_a) - torch.lgamma(nd + big_a)
                        + (torch.lgamma(xd + alpha) - torch.lgamma(alpha)).sum(1))

            sec = median_time(dense, sync=sync)
            record(name, "kernel dense float32", sec, rows * cols / sec, "cell/s", 0, None,
                   "the seed module's formula (no multinomial coefficient) on a dense float32 copy")
            del xd
            torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["table", "step", "seconds", "rate", "unit", "device", "threads", "value", "note"])
            w.writerows(rows_out)


def read_csv(path):
    if not path or not os.path.exists(path):
        return {}, []
    out, order = {}, []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["table"], r["step"])
            out[key] = r
            order.append(key)
    return out, order


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def seconds(r):
    return float(r["seconds"]) if r and r.get("seconds") else None


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def merge(base_path, now_path, torch_path, names=("base", "now")):
    base, _ = read_csv(base_path)
    now, order = read_csv(now_path)
    tor, _ = read_csv(torch_path)
    b_name, n_name = names
    print(f"times: median unless the bench's notes say 1 run; {b_name}/{n_name} > 1: {n_name} is faster; "
          f"torch/{n_name} > 1: dirmn ({n_name}) is faster than PyTorch")
    hdr = (f"{'step':<30} {b_name:>11} {n_name:>11} {'torch':>11} {b_name + '/' + n_name:>9} "
           f"{'torch/' + n_name:>9}  {'device':<10} thr  agree")
    table = None
    worst = 0.0
    for key in order:
        if key[0] != table:
            table = key[0]
            print(f"\n== {table}\n{hdr}")
        b, n, t = base.get(key), now.get(key), tor.get(key)
        sb, sn, st = seconds(b), seconds(n), seconds(t)
        agree = ""
        if b and n and b["value"] and n["value"]:
            vb, vn = float(b["value"]), float(n["value"])
            d = abs(vb - vn) / max(1.0, abs(vn))
            worst = max(worst, d)
            agree = f"{b_name}~{n_name} {d:.1e}"
        print(f"{key[1]:<30} {fmt_time(sb):>11} {fmt_time(sn):>11} {fmt_time(st):>11} {ratio(sb, sn):>9} "
              f"{ratio(st, sn):>9}  {n['device']:<10} {n['threads']:>3}  {agree}")
        beside = {"loglik K=1": ("loglik K=1 float32", "kernel dense float32"),
                  "loglik_sum+grad": ("loglik+grad float64", "loglik+grad float32")}
        if key[1] in beside:
            for step in beside[key[1]]:
                t32 = tor.get((table, step))
                if t32:
                    print(f"{'  torch ' + step:<30} {'':>11} {'':>11} {fmt_time(seconds(t32)):>11} {'':>9} "
                          f"{ratio(seconds(t32), sn):>9}  {t32['device']:<10} {t32['threads']:>3}")
    if tor:
        print("\nPyTorch's agreement with dirmn (loglik K=1):")
        for key, r in tor.items():
            if key[1].startswith("loglik K=1"):
                print(f"  {key[0]:<15} {key[1]:<20} {r['note']}")
    if base:
        print(f"\nlargest relative difference of a result between {b_name} and {n_name}: {worst:.2e}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="?")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--csv")
    p.add_argument("--device", default="cpu", help="cpu or cuda (the tensors and the timed work)")
    p.add_argument("--gradient", action="store_true",
                   help="also time value + gradient in log alpha (autograd)")
    p.add_argument("--merge", nargs="+", metavar="CSV")
    p.add_argument("--names", default="base,now", help="--merge's labels of its first two CSVs")
    args = p.parse_args()
    if args.merge:
        paths = args.merge + [None] * (3 - len(args.merge))
        names = tuple(args.names.split(","))
        if len(names) != 2 or not all(names):
            p.error("--names takes two labels, e.g. cpu,cuda")
        merge(*paths[:3], names=names)
    elif args.dir:
        run(args)
    else:
        p.error("give the dump folder, or --merge")


if __name__ == "__main__":
    sys.exit(main())
