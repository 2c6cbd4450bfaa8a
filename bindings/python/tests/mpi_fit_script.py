"""Run by test_communicator.py as ``mpirun -n 3 python3 mpi_fit_script.py``.

Every rank builds the same deterministic table, fits it whole without a
communicator, then takes its own contiguous rows, attaches them to
``Communicator.from_mpi4py(MPI.COMM_WORLD)`` and fits, sums and tests them
collectively. It prints ``OK rank R of N`` when its results are the whole
table's (alpha and standard errors bit for bit), else ``FAIL ...`` with
what differed, and exits non-zero. A second table, of three DM profiles, is
fitted as mixtures the same way (one k, and a range of k): the criteria to
1e-9 of the whole table's, the parameters and this rank's responsibilities
to 1e-5. The first table is also regressed on a design (each rank its own
rows of it), log-linear and mean/precision with a precision design: the
log-likelihood and BIC to 1e-12 of the whole table's, the coefficients and
standard errors to 1e-7, every rank's coefficients rank 0's bit for bit.
"""

import sys

import numpy as np
from mpi4py import MPI

import dirmn
from dirmn import communicator as dcomm


def table(rows=50, cols=12, depth=200, seed=2024):
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.2, 3.0, cols)
    return np.array([rng.multinomial(depth, rng.dirichlet(alpha)) for _ in range(rows)])


def clustered(rows=60, cols=15, seed=2025):
    """Rows of three DM profiles (half, a third and a sixth of them, shuffled)."""
    rng = np.random.default_rng(seed)
    profiles = [rng.uniform(0.2, 3.0, cols) * s for s in (1.0, 4.0, 12.0)]
    for j, p in enumerate(profiles):
        p[5 * j:5 * j + 5] *= 2.0
    labels = rng.permutation(np.repeat([0, 1, 2], [rows // 2, rows // 3,
                                                   rows - rows // 2 - rows // 3]))
    return np.array([rng.multinomial(int(rng.integers(20, 80)), rng.dirichlet(profiles[j]))
                     for j in labels])


def design(rows, seed=2026):
    """An intercept and two normal covariates."""
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(rows), rng.normal(size=rows), rng.normal(size=rows)])


# The regressions compared: keyword arguments of dirmn.regression, the
# precision design (z) given as the design's first two columns or not.
REGRESSIONS = {"loglinear": ({}, False),
               "meanprecision": ({"parametrization": "meanprecision"}, True)}


def regression_problems(world, got, whole, mine):
    """What differs between this rank's regressions and one process's."""
    problems = []
    for name, want in whole.items():
        r = got[name]
        what = "regression %s" % name
        if r.rows != mine.stop - mine.start:
            problems.append("%s: rows %d" % (what, r.rows))
        for field in ("loglik", "bic"):
            a, b = getattr(r, field), getattr(want, field)
            if abs(a - b) > 1e-12 * abs(b):
                problems.append("%s: %s %r != %r" % (what, field, a, b))
        if r.nobs != want.nobs or r.parameters != want.parameters:
            problems.append("%s: nobs %r parameters %d" % (what, r.nobs, r.parameters))
        for field in ("params", "bse") + (("log_precision", "std_error_log_precision")
                                          if want.log_precision is not None else ()):
            if not np.allclose(getattr(r, field), getattr(want, field), rtol=1e-7, atol=1e-9):
                problems.append("%s: %s differs" % (what, field))
        first = world.bcast(r.params, root=0)
        if not np.array_equal(r.params, first):
            problems.append("%s: params differ from rank 0's" % what)
        if not r.converged:
            problems.append("%s: not converged" % what)
    return problems


def mixture_problems(got, whole, mine):
    """What differs between this rank's mixtures (a list) and one process's."""
    problems = []
    for m, want in zip(got, whole):
        what = "mixture k=%d" % want.k
        if (m.k, m.rows) != (want.k, mine.stop - mine.start):
            problems.append("%s: k %d rows %d" % (what, m.k, m.rows))
            continue
        for name in ("loglik", "aic", "bic", "laplace"):
            a, b = getattr(m, name), getattr(want, name)
            if abs(a - b) > 1e-9 * abs(b):
                problems.append("%s: %s %r != %r" % (what, name, a, b))
        if not np.allclose(m.alpha, want.alpha, rtol=1e-5, atol=0):
            problems.append("%s: alpha differs" % what)
        if not np.allclose(m.mixture_weights, want.mixture_weights, rtol=1e-5, atol=0):
            problems.append("%s: weights %r != %r" % (what, m.mixture_weights,
                                                      want.mixture_weights))
        if not np.allclose(m.responsibilities, want.responsibilities[mine], rtol=0, atol=1e-5):
            problems.append("%s: responsibilities differ" % what)
    return problems


def main():
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    x = table()
    rows = x.shape[0]
    w = 0.5 + (np.arange(rows) % 3)
    mine = slice(rows * rank // size, rows * (rank + 1) // size)
    y = clustered()
    y_mine = slice(y.shape[0] * rank // size, y.shape[0] * (rank + 1) // size)
    y_w = 0.5 + 0.25 * (np.arange(y.shape[0]) % 4)
    problems = []
    # One thread a rank: the ranks may share few cores (--oversubscribe).
    with dirmn.Context("cpu", threads=1) as ctx:
        whole = dirmn.fit(x, weights=w, context=ctx)
        whole_sum = dirmn.loglik_sum(x, whole.alpha, weights=w, derivatives=True, context=ctx)
        whole_od = dirmn.overdispersion_test(x, context=ctx)
        whole_mix = dirmn.mixture(y, range(1, 4), weights=y_w, context=ctx)
        d = design(rows)
        whole_reg = {name: dirmn.regression(x, d, w, precision_design=d[:, :2] if z else None,
                                            context=ctx, **kw)
                     for name, (kw, z) in REGRESSIONS.items()}
        with dirmn.Communicator.from_mpi4py(world) as comm, \
                dirmn.Counts(x[mine], context=ctx) as counts:
            if (comm.rank, comm.ranks) != (rank, size):
                problems.append("rank %d of %d" % (comm.rank, comm.ranks))
            counts.set_communicator(comm)
            f = dirmn.fit(counts, weights=w[mine])
            s = dirmn.loglik_sum(counts, whole.alpha, weights=w[mine], derivatives=True)
            od = dirmn.overdispersion_test(counts)
            reg = {name: dirmn.regression(counts, d[mine], w[mine],
                                          precision_design=d[mine, :2] if z else None, **kw)
                   for name, (kw, z) in REGRESSIONS.items()}
            problems += regression_problems(world, reg, whole_reg, mine)
            for r in list(reg.values()) + list(whole_reg.values()):
                r.close()
        # Mixtures: one dirmn_mixture_fit_range call, and one k.
        with dirmn.Communicator.from_mpi4py(world) as comm, \
                dirmn.Counts(y[y_mine], context=ctx) as counts:
            counts.set_communicator(comm)
            with dirmn.mixture(counts, range(1, 4), weights=y_w[y_mine]) as mix, \
                    dirmn.mixture(counts, 3, weights=y_w[y_mine]) as one:
                problems += mixture_problems(mix.fits + [one],
                                             whole_mix.fits + [whole_mix[3]], y_mine)
                if mix.k != whole_mix.k:
                    problems.append("mixture selected k=%d != %d" % (mix.k, whole_mix.k))
        whole_mix.close()
    if dcomm.registered() != 0:
        problems.append("%d communicators not released" % dcomm.registered())
    if not np.array_equal(f.alpha, whole.alpha):
        problems.append("alpha %r != %r" % (f.alpha, whole.alpha))
    if not np.array_equal(f.std_error_alpha, whole.std_error_alpha, equal_nan=True):
        problems.append("std_error_alpha differs")
    if f.iterations != whole.iterations:
        problems.append("iterations %d != %d" % (f.iterations, whole.iterations))
    if abs(f.loglik - whole.loglik) > 1e-14 * abs(whole.loglik):
        problems.append("loglik %r != %r" % (f.loglik, whole.loglik))
    if abs(s.value - whole_sum.value) > 1e-13 * abs(whole_sum.value):
        problems.append("loglik_sum %r != %r" % (s.value, whole_sum.value))
    if not np.allclose(s.gradient, whole_sum.gradient, rtol=1e-12,
                       atol=1e-12 * np.max(np.abs(whole_sum.gradient))):
        problems.append("gradient differs")
    if abs(od.score_statistic - whole_od.score_statistic) \
            > 1e-12 * abs(whole_od.score_statistic):
        problems.append("score statistic %r != %r" % (od.score_statistic,
                                                      whole_od.score_statistic))
    if problems:
        report("FAIL rank %d of %d: %s" % (rank, size, "; ".join(problems)))
        return 1
    report("OK rank %d of %d" % (rank, size))
    return 0


def report(line):
    # One write of the whole line: mpirun interleaves the ranks' output.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
