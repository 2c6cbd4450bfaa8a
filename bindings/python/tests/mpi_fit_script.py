"""Run by test_communicator.py as ``mpirun -n 3 python3 mpi_fit_script.py``.

Every rank builds the same deterministic table, fits it whole without a
communicator, then takes its own contiguous rows, attaches them to
``Communicator.from_mpi4py(MPI.COMM_WORLD)`` and fits, sums and tests them
collectively. It prints ``OK rank R of N`` when its results are the whole
table's (alpha and standard errors bit for bit), else ``FAIL ...`` with
what differed, and exits non-zero.
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


def main():
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    x = table()
    rows = x.shape[0]
    w = 0.5 + (np.arange(rows) % 3)
    mine = slice(rows * rank // size, rows * (rank + 1) // size)
    problems = []
    # One thread a rank: the ranks may share few cores (--oversubscribe).
    with dirmn.Context("cpu", threads=1) as ctx:
        whole = dirmn.fit(x, weights=w, context=ctx)
        whole_sum = dirmn.loglik_sum(x, whole.alpha, weights=w, derivatives=True, context=ctx)
        whole_od = dirmn.overdispersion_test(x, context=ctx)
        with dirmn.Communicator.from_mpi4py(world) as comm, \
                dirmn.Counts(x[mine], context=ctx) as counts:
            if (comm.rank, comm.ranks) != (rank, size):
                problems.append("rank %d of %d" % (comm.rank, comm.ranks))
            counts.set_communicator(comm)
            f = dirmn.fit(counts, weights=w[mine])
            s = dirmn.loglik_sum(counts, whole.alpha, weights=w[mine], derivatives=True)
            od = dirmn.overdispersion_test(counts)
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
