"""A table split by rows over a communicator's ranks (dirmn.Communicator,
Counts.set_communicator).

The ranks are threads of this process over an in-memory communicator
(World: sums and broadcasts of NumPy arrays through shared slots and a
barrier), each with its own Context and a Counts of its contiguous block of
rows of one table; every result is compared with the one process that holds
the whole table. The ranks only record what they got: the assertions run
on the main thread. A last test runs the same under mpirun with mpi4py
(mpi_fit_script.py), where both are installed.
"""

import gc
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import dirmn
from dirmn import communicator as dcomm

HERE = os.path.dirname(os.path.abspath(__file__))


class Boom(RuntimeError):
    """What an armed World callback raises."""


class World:
    """``n`` ranks' shared slots and a barrier (with a timeout, so that a
    rank that never arrives fails the test instead of hanging it).

    The sums add the ranks' arrays in rank order, so every rank gets the
    same bits. :meth:`arm` makes a rank's next callback raise :class:`Boom`
    once its exchange is done (as an MPI collective that fails, fails on
    every rank that takes part).
    """

    def __init__(self, n):
        self.n = n
        self.slots = [None] * n
        self.barrier = threading.Barrier(n, timeout=60)
        self.armed = [False] * n
        self.raised = [None] * n
        self.seen = set()     # (callback, buffer format, ndim, writeable, a view of C memory)
        self._lock = threading.Lock()

    def communicator(self, rank):
        return dirmn.Communicator(rank, self.n, lambda buf: self.allreduce(rank, buf),
                                  lambda buf, root: self.broadcast(rank, buf, root))

    def arm(self, rank):
        self.armed[rank] = True

    def _saw(self, what, buf):
        with self._lock:
            self.seen.add((what, memoryview(buf).format, buf.ndim, buf.flags.writeable,
                           buf.size == 0 or not buf.flags.owndata))

    def _done(self, rank):
        if self.armed[rank]:
            self.armed[rank] = False
            self.raised[rank] = Boom("rank %d's callback failed" % rank)
            raise self.raised[rank]

    def allreduce(self, rank, buf):
        self._saw("allreduce", buf)
        self.slots[rank] = buf
        self.barrier.wait()
        total = self.slots[0].copy()
        for r in range(1, self.n):
            total += self.slots[r]
        self.barrier.wait()
        buf[...] = total
        self.barrier.wait()
        self._done(rank)

    def broadcast(self, rank, buf, root):
        self._saw("broadcast", buf)
        self.slots[rank] = buf
        self.barrier.wait()
        if rank != root:
            buf[...] = self.slots[root]
        self.barrier.wait()
        self._done(rank)


def first_row(r, n, rows):
    """Rank r's first row of n ranks: uneven parts (rank r takes r + 1 shares)."""
    return rows * (r * (r + 1) // 2) // (n * (n + 1) // 2)


def rows_of(r, n, rows):
    return slice(first_row(r, n, rows), first_row(r + 1, n, rows))


class Outcome:
    """What one rank got: ``attached`` (set_communicator succeeded), ``value``
    (the body's return) or ``error`` (what it raised) and ``stage``."""

    def __init__(self):
        self.attached = False
        self.value = None
        self.error = None
        self.stage = None


def run_ranks(world, x, body, cols_of=None):
    """Runs ``body(rank, counts)`` on one thread per rank, each with its own
    Context and a Counts of its rows of ``x`` attached to its communicator.

    ``cols_of(r)`` may give a rank fewer columns. Everything a rank made is
    closed before its thread ends.

    Returns
    -------
    list of Outcome
    """
    n, rows = world.n, x.shape[0]
    out = [Outcome() for _ in range(n)]

    def rank_main(r):
        o = out[r]
        o.stage = "setup"
        try:
            with dirmn.Context("cpu", threads=1 + r % 2) as ctx:
                mine = x[rows_of(r, n, rows)]
                if cols_of is not None:
                    mine = mine[:, :cols_of(r)]
                with dirmn.Counts(mine, context=ctx) as counts, world.communicator(r) as comm:
                    o.stage = "attach"
                    counts.set_communicator(comm)
                    o.attached = counts.communicator is comm
                    o.stage = "body"
                    o.value = body(r, counts)
                    o.stage = "done"
        except BaseException as exc:  # noqa: B902 -- reported on the main thread
            o.error = exc

    threads = [threading.Thread(target=rank_main, args=(r,), name="rank %d" % r)
               for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a rank did not finish"
    return out


def simulate(rows, cols, depth, seed, deep=False):
    """A DM table from fixed seeds (rows x cols, int64)."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.1, 2.5, cols)
    x = np.array([rng.multinomial(depth, rng.dirichlet(alpha)) for _ in range(rows)])
    if deep:  # deep counts in a column
        x[::3, 0] += 5000 + 97 * np.arange(0, rows, 3)
    return x.astype(np.int64)


@pytest.fixture(scope="module")
def table():
    return simulate(60, 40, 400, 31, deep=True)


@pytest.fixture(autouse=True)
def nothing_left_registered():
    """Every test releases every communicator it made."""
    gc.collect()
    before = dcomm.registered()
    yield
    gc.collect()
    assert dcomm.registered() == before


def check_ok(outcomes):
    for r, o in enumerate(outcomes):
        assert o.error is None, "rank %d (%s): %r" % (r, o.stage, o.error)
        assert o.attached


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_fit_over_ranks_is_the_whole_tables(table, ranks, weighted):
    rows = table.shape[0]
    w = (np.arange(rows) % 4).astype(float) if weighted else None
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.fit(table, weights=w, context=ctx)
    world = World(ranks)
    before = dcomm.registered()

    def body(r, counts):
        return dirmn.fit(counts, weights=None if w is None else w[rows_of(r, ranks, rows)])

    got = run_ranks(world, table, body)
    check_ok(got)
    assert dcomm.registered() == before  # released as each rank closed its objects
    for r, o in enumerate(got):
        f = o.value
        assert np.array_equal(f.alpha, whole.alpha), r
        assert np.array_equal(f.std_error_alpha, whole.std_error_alpha, equal_nan=True), r
        assert np.array_equal(f.std_error_log_alpha, whole.std_error_log_alpha,
                              equal_nan=True), r
        assert f.iterations == whole.iterations and f.converged
        assert f.loglik_kernel == whole.loglik_kernel
        assert f.nobs == whole.nobs and f.parameters == whole.parameters
        # The multinomial coefficients are summed per rank, then over ranks.
        assert abs(f.loglik - whole.loglik) <= 1e-14 * abs(whole.loglik), r
    # The callbacks were given writable 1-D views of the library's buffers,
    # of the types the header names, in NumPy's own formats (which buffer
    # consumers such as mpi4py read).
    if ranks > 1:
        kinds = {(what, fmt) for what, fmt, ndim, writeable, view in world.seen
                 if ndim == 1 and writeable and view}
        assert kinds == {(what, fmt) for what, fmt, *_ in world.seen}
        formats = {dt: memoryview(np.empty(1, dt)).format
                   for dt in (np.int64, np.float64, np.uint8)}
        assert ("allreduce", formats[np.int64]) in kinds
        assert ("allreduce", formats[np.float64]) in kinds
        assert kinds <= {("allreduce", formats[np.int64]), ("allreduce", formats[np.float64]),
                         ("broadcast", formats[np.uint8])}


def test_loglik_sum_and_overdispersion_test_over_ranks():
    x = simulate(45, 25, 150, 41)
    rows, V = x.shape
    alpha = np.random.default_rng(42).uniform(0.1, 2.0, V)
    # Real weights: their sums depend on the order they are added in.
    w = 0.3 + 0.01 * np.arange(rows)
    with dirmn.Context("cpu") as ctx, dirmn.Counts(x, context=ctx) as c:
        want = dirmn.loglik_sum(c, alpha, weights=w, derivatives=True)
        want_log = dirmn.loglik_sum(c, np.log(alpha), weights=w, param="logalpha",
                                    derivatives=True)
        want_od = dirmn.overdispersion_test(c)
    n = 3

    def body(r, counts):
        wr = w[rows_of(r, n, rows)]
        return (dirmn.loglik_sum(counts, alpha, weights=wr, derivatives=True),
                dirmn.loglik_sum(counts, np.log(alpha), weights=wr, param="logalpha",
                                 derivatives=True),
                dirmn.loglik_sum(counts, alpha, weights=wr),
                dirmn.overdispersion_test(counts))

    got = run_ranks(World(n), x, body)
    check_ok(got)
    for r, o in enumerate(got):
        s, s_log, value, od = o.value
        for have, ref in ((s, want), (s_log, want_log)):
            assert abs(have.value - ref.value) <= 1e-13 * abs(ref.value), r
            scale = np.max(np.abs(ref.gradient))
            np.testing.assert_allclose(have.gradient, ref.gradient, rtol=1e-13,
                                       atol=1e-13 * scale)
            np.testing.assert_allclose(have.hessian_diag, ref.hessian_diag, rtol=1e-12)
            assert abs(have.hessian_scalar - ref.hessian_scalar) \
                <= 1e-12 * abs(ref.hessian_scalar)
        assert value == s.value
        assert abs(od.lrt_statistic - want_od.lrt_statistic) \
            <= 1e-10 * abs(want_od.lrt_statistic)
        assert abs(od.score_statistic - want_od.score_statistic) \
            <= 1e-12 * abs(want_od.score_statistic)
        assert od.pvalue == pytest.approx(want_od.pvalue, rel=1e-9)
        # Every rank the same bits.
        assert s.value == got[0].value[0].value
        assert np.array_equal(s.gradient, got[0].value[0].gradient)
        assert od.score_statistic == got[0].value[3].score_statistic


def test_a_bad_weight_on_one_rank_fails_every_rank(table):
    rows = table.shape[0]
    n = 3
    parts = [np.ones(rows_of(r, n, rows).stop - rows_of(r, n, rows).start) for r in range(n)]
    parts[1][2] = -1.0
    # What rank 1 would get alone.
    with pytest.raises(dirmn.DirmnError) as alone:
        dirmn.fit(table[rows_of(1, n, rows)], weights=parts[1])
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.fit(table, context=ctx)

    def body(r, counts):
        try:
            dirmn.fit(counts, weights=parts[r])
            failed = None
        except dirmn.DirmnError as exc:
            failed = exc
        # The next collective call works again on every rank.
        return failed, dirmn.fit(counts)

    got = run_ranks(World(n), table, body)
    check_ok(got)
    for r, o in enumerate(got):
        failed, again = o.value
        assert failed is not None, r
        if r == 1:
            assert type(failed) is type(alone.value)
            assert isinstance(failed, dirmn.InvalidParameterError)
            assert failed.row == 2 and failed.argument == alone.value.argument
            assert "weight -1 is negative" in failed.message
        else:
            assert type(failed) is dirmn.CommunicationError, r
            assert failed.status == "DIRMN_ERROR_COMMUNICATION"
            assert "rank 1's part" in failed.message
            assert failed.__cause__ is None
        assert np.array_equal(again.alpha, whole.alpha)


def test_a_callback_that_raises_is_the_errors_cause(table):
    n = 3
    world = World(n)
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.fit(table, context=ctx)

    def body(r, counts):
        world.arm(r)  # the fit's first callback raises, on every rank
        try:
            dirmn.fit(counts)
            failed = None
        except dirmn.DirmnError as exc:
            failed = exc
        # The failure is not carried over to the next call, which works.
        return failed, dirmn.fit(counts), dirmn.loglik_sum(counts, whole.alpha)

    got = run_ranks(world, table, body)
    check_ok(got)
    for r, o in enumerate(got):
        failed, again, value = o.value
        assert type(failed) is dirmn.CommunicationError, (r, failed)
        assert failed.__cause__ is world.raised[r]
        assert isinstance(failed.__cause__, Boom)
        assert "callback returned" in failed.message
        assert np.array_equal(again.alpha, whole.alpha)
        assert np.isfinite(value)


def test_a_callback_that_raises_while_attaching(table):
    n = 2
    world = World(n)
    for r in range(n):
        world.arm(r)
    got = run_ranks(world, table, lambda r, counts: None)
    for r, o in enumerate(got):
        assert o.stage == "attach" and not o.attached
        assert type(o.error) is dirmn.CommunicationError, o.error
        assert o.error.__cause__ is world.raised[r]


def test_ranks_with_other_columns_fail_to_attach(table):
    n = 2
    cols = 10
    x = table[:24, :cols]
    got = run_ranks(World(n), x, lambda r, counts: None,
                    cols_of=lambda r: cols - 2 if r == 1 else cols)
    for o in got:
        assert o.stage == "attach" and not o.attached
        assert type(o.error) is dirmn.DimensionMismatchError, o.error
        assert "rank 1's counts have 8 columns, rank 0's 10" in o.error.message


def clustered(rows=90, cols=20, seed=7):
    """A table of three DM profiles (half, a third and a sixth of the rows,
    shuffled; int64): a mixture of 3 tells them apart, though some rows'
    responsibilities are neither 0 nor 1, and its components' order (by
    decreasing weight) is not a tie."""
    rng = np.random.default_rng(seed)
    profiles = [rng.uniform(0.2, 3.0, cols) * s for s in (1.0, 4.0, 12.0)]
    for j, p in enumerate(profiles):
        p[5 * j:5 * j + 5] *= 2.0
    sizes = [rows // 2, rows // 3, rows - rows // 2 - rows // 3]
    labels = rng.permutation(np.repeat([0, 1, 2], sizes))
    x = [rng.multinomial(int(rng.integers(20, 80)), rng.dirichlet(profiles[j]))
         for j in labels]
    return np.array(x, dtype=np.int64)


@pytest.fixture(scope="module")
def mixture_table():
    return clustered()


# The mixture fits compared over ranks: one k; a range of k (one
# dirmn_mixture_fit_range call) under dmn's objective, so the Laplace
# criterion selects; a list of k (one dirmn_mixture_fit each, k = 3 grown
# from the fit for k = 2).
MIXTURE_FITS = {
    "one k": lambda c, w: dirmn.mixture(c, 3, weights=w),
    "range": lambda c, w: dirmn.mixture(c, range(1, 5), objective="dmn", select="laplace",
                                        weights=w),
    "list": lambda c, w: dirmn.mixture(c, [3, 2], weights=w),
}


def fits_of(result):
    return result.fits if isinstance(result, dirmn.MixtureSelection) else [result]


def check_mixture(m, whole, mine, what):
    """One rank's mixture ``m`` of rows ``mine`` (a slice) of a table
    against ``whole``, one process's fit of the whole table: the criteria to
    1e-9, the parameters to 1e-5 (the M step's Newton fits stop on a
    relative change of 1e-12 in their objective), this rank's rows'
    responsibilities to 1e-5."""
    rows = mine.stop - mine.start
    assert (m.k, m.rows) == (whole.k, rows), what
    assert m.responsibilities.shape == (rows, m.k), what
    for name in ("loglik", "objective", "aic", "bic", "laplace", "nobs"):
        assert getattr(m, name) == pytest.approx(getattr(whole, name), rel=1e-9), (what, name)
    assert m.parameters == whole.parameters and m.converged == whole.converged, what
    np.testing.assert_allclose(m.mixture_weights, whole.mixture_weights, rtol=1e-5,
                               err_msg=what)
    np.testing.assert_allclose(m.alpha, whole.alpha, rtol=1e-5, err_msg=what)
    np.testing.assert_allclose(m.responsibilities, whole.responsibilities[mine], rtol=0,
                               atol=1e-5, err_msg=what)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_mixture_over_ranks_is_the_whole_tables(mixture_table, ranks, weighted):
    x = mixture_table
    rows = x.shape[0]
    w = 0.5 + 0.25 * (np.arange(rows) % 4) if weighted else None
    with dirmn.Context("cpu") as ctx, dirmn.Counts(x, context=ctx) as c:
        whole = {name: f(c, w) for name, f in MIXTURE_FITS.items()}
    # Some rows are shared between components: the responsibilities are a test.
    r3 = whole["one k"].responsibilities
    assert np.sum((r3 > 1e-3) & (r3 < 1 - 1e-3)) >= 10

    def body(r, counts):
        mine = rows_of(r, ranks, rows)
        got = {name: f(counts, None if w is None else w[mine])
               for name, f in MIXTURE_FITS.items()}
        m = got["one k"]
        # The per-row calls stay local: this rank's rows.
        local = (m.assign(counts), m.simulate(seed=5), counts.row_totals())
        for v in got.values():
            v.close()
        return got, local

    out = run_ranks(World(ranks), x, body)
    check_ok(out)
    try:
        for r, o in enumerate(out):
            mine = rows_of(r, ranks, rows)
            got, (assigned, simulated, totals) = o.value
            for name, result in got.items():
                mixtures, wanted = fits_of(result), fits_of(whole[name])
                assert [m.k for m in mixtures] == [m.k for m in wanted], (r, name)
                firsts = fits_of(out[0].value[0][name])
                for m, want, m0 in zip(mixtures, wanted, firsts):
                    check_mixture(m, want, mine, (r, name, m.k))
                    # Every rank holds the same parameters, bit for bit.
                    assert np.array_equal(m.alpha, m0.alpha), (r, name, m.k)
                    assert np.array_equal(m.mixture_weights, m0.mixture_weights)
                    assert (m.loglik, m.bic, m.laplace, m.start, m.iterations) == \
                        (m0.loglik, m0.bic, m0.laplace, m0.start, m0.iterations)
                if isinstance(result, dirmn.MixtureSelection):
                    assert result.k == whole[name].k and result.ks == whole[name].ks
                    np.testing.assert_allclose(result.scores, whole[name].scores, rtol=1e-9)
            assert assigned.shape == (mine.stop - mine.start, 3)
            with dirmn.Context("cpu") as ctx:
                want = whole["one k"].assign(x[mine], context=ctx)
            np.testing.assert_allclose(assigned, want, rtol=0, atol=1e-5)
            assert np.array_equal(simulated.sum(axis=1), totals)
            assert np.array_equal(totals, x[mine].sum(axis=1))
    finally:
        for result in whole.values():
            result.close()


def test_a_bad_mixture_option_on_one_rank_fails_every_rank(mixture_table):
    x = mixture_table
    rows = x.shape[0]
    n = 3
    # What rank 1 would get alone.
    with pytest.raises(dirmn.DirmnError) as alone:
        dirmn.mixture(x[rows_of(1, n, rows)], 2, starts=0)
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.mixture(x, 2, context=ctx)

    def attempt(f):
        try:
            f()
        except dirmn.DirmnError as exc:
            return exc
        return None

    def body(r, counts):
        bad = 0 if r == 1 else None
        one = attempt(lambda: dirmn.mixture(counts, 2, starts=bad))
        several = attempt(lambda: dirmn.mixture(counts, range(1, 4), starts=bad))
        # The next collective call works again on every rank.
        with dirmn.mixture(counts, 2) as again:
            return one, several, again.loglik

    got = run_ranks(World(n), x, body)
    check_ok(got)
    for r, o in enumerate(got):
        one, several, loglik = o.value
        for failed in (one, several):
            assert failed is not None, r
            if r == 1:
                assert type(failed) is type(alone.value)
                assert isinstance(failed, dirmn.InvalidArgumentError)
                assert alone.value.message in failed.message
                assert "starts (0)" in failed.message
            else:
                assert type(failed) is dirmn.CommunicationError, (r, failed)
                assert failed.status == "DIRMN_ERROR_COMMUNICATION"
                assert "rank 1's part of this collective call failed" in failed.message
                assert failed.__cause__ is None
        assert "dirmn_mixture_fit_range" in several.message
        assert loglik == pytest.approx(whole.loglik, rel=1e-9)
    whole.close()


def test_a_progress_that_cancels_on_one_rank_cancels_every_rank(mixture_table):
    x = mixture_table
    n = 3
    calls = [[] for _ in range(n)]
    raised = [None] * n

    class Stop(Exception):
        pass

    def body(r, counts):
        def cancel_on_rank_1(iteration, loglik, change):
            calls[r].append((iteration, loglik))
            return r == 1 and len(calls[r]) == 3

        def raise_on_rank_2(iteration, loglik, change):
            if r == 2 and iteration == 2:
                raised[r] = Stop("rank 2's progress")
                raise raised[r]

        errors = []
        for k, progress in ((3, cancel_on_rank_1), (range(2, 4), raise_on_rank_2)):
            try:
                dirmn.mixture(counts, k, progress=progress)
                errors.append(None)
            except Exception as exc:  # noqa: B902 -- checked on the main thread
                errors.append(exc)
        with dirmn.mixture(counts, 2) as again:  # works again
            return errors, again.k

    got = run_ranks(World(n), x, body)
    check_ok(got)
    for r, o in enumerate(got):
        (cancelled, stopped), k = o.value
        assert type(cancelled) is dirmn.CancelledError, (r, cancelled)
        assert cancelled.status == "DIRMN_ERROR_CANCELLED"
        # The ranks iterate together: each rank's progress saw the same
        # iterations and the whole table's log-likelihood.
        assert [i for i, _ in calls[r]] == [i for i, _ in calls[1]], r
        np.testing.assert_allclose([v for _, v in calls[r]], [v for _, v in calls[1]],
                                   rtol=1e-12)
        if r == 2:
            assert stopped is raised[2]  # re-raised unchanged on its own rank
        else:
            assert type(stopped) is dirmn.CancelledError, (r, stopped)
        assert k == 2
    assert len(calls[1]) == 3


def regression_table(rows, cols, p, seed, mean_precision=False):
    """A regression's table and design (int64 counts, an intercept and p - 1
    normal covariates): log-linear alpha_bv = exp(x_b . beta_v), or the
    mean/precision model with a reference column 0 and a precision that
    grows with the first covariate."""
    rng = np.random.default_rng(seed)
    d = np.column_stack([np.ones(rows)] + [rng.normal(size=rows) for _ in range(p - 1)])
    beta = rng.normal(0.0, 0.4, (p, cols))
    beta[0] += 0.5
    if mean_precision:
        beta[:, 0] = 0.0
        e = np.exp(d @ beta)
        alpha = 12.0 * np.exp(0.5 * d[:, 1:2]) * e / e.sum(axis=1, keepdims=True)
    else:
        alpha = np.exp(d @ beta)
    sizes = rng.integers(30, 90, size=rows)
    y = np.array([rng.multinomial(sizes[b], rng.dirichlet(alpha[b])) for b in range(rows)])
    assert y.sum(axis=0).min() > 0
    return y.astype(np.int64), d


# The regressions compared over ranks: (rows, categories, covariates, the
# mean/precision model, a precision design). "wide" has fewer rows than
# coefficients (30 < 3 x 12), so one process solves its Newton steps in the
# rows' dimension (Woodbury), while over ranks the system is formed whole.
REGRESSIONS = {
    "tall": (150, 5, 3, False, False),
    "wide": (30, 12, 3, False, False),
    "meanprecision": (120, 5, 3, True, False),
    "precision design": (120, 5, 3, True, True),
}


def close_to(got, want, what, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=str(what))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("case", list(REGRESSIONS))
def test_regression_over_ranks_is_the_whole_tables(case, ranks, weighted):
    rows, cols, p, mean_precision, with_z = REGRESSIONS[case]
    y, d = regression_table(rows, cols, p, 11, mean_precision)
    if case == "wide":
        assert rows < p * cols
    # Some rows without weight (they take no part), the others' weights real.
    w = 0.5 * (np.arange(rows) % 4) if weighted else None
    z = d[:, :2] if with_z else None
    kw = {"parametrization": "meanprecision"} if mean_precision else {}
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.regression(y, d, w, precision_design=z, context=ctx, **kw)
        want_predicted = whole.predict(d, precision_design=z)
        whole_cov = whole.cov_params()
    assert whole.converged and whole.hessian_definite

    def body(r, counts):
        mine = rows_of(r, ranks, rows)
        with dirmn.regression(counts, d[mine], None if w is None else w[mine],
                              precision_design=None if z is None else z[mine], **kw) as f:
            fields = {name: getattr(f, name) for name in (
                "params", "bse", "loglik", "aic", "bic", "nobs", "parameters", "rows",
                "iterations", "converged", "hessian_definite", "precision", "log_precision",
                "std_error_log_precision")}
            fields["cov"] = f.cov_params()
            fields["wald"] = [f.wald_test(i) for i in range(p)]
            # The per-row calls stay local: this rank's rows.
            fields["predicted"] = f.predict(d[mine], precision_design=None if z is None
                                            else z[mine])
            fields["simulated"] = f.simulate(seed=3)
            fields["totals"] = counts.row_totals()
            return fields

    out = run_ranks(World(ranks), y, body)
    check_ok(out)
    first = out[0].value
    for r, o in enumerate(out):
        mine = rows_of(r, ranks, rows)
        f = o.value
        what = (case, ranks, r)
        # The sums over ranks: to rounding.
        for name in ("loglik", "aic", "bic"):
            assert abs(f[name] - getattr(whole, name)) <= 1e-12 * abs(getattr(whole, name)), \
                (what, name, f[name], getattr(whole, name))
        assert f["nobs"] == pytest.approx(whole.nobs, rel=1e-14), what
        assert f["parameters"] == whole.parameters, what
        assert f["rows"] == mine.stop - mine.start, what   # this rank's own rows
        assert f["converged"] and f["hessian_definite"], what
        # The Newton solves: to ~1e-7.
        close_to(f["params"], whole.params, what)
        close_to(f["bse"], whole.bse, what)
        close_to(f["cov"], whole_cov, what, atol=1e-9 * np.max(np.abs(whole_cov)))
        for t, t0 in zip(f["wald"], (whole.wald_test(i) for i in range(p))):
            assert t.df == t0.df and t.statistic == pytest.approx(t0.statistic, rel=1e-6)
        if mean_precision:
            close_to(f["log_precision"], whole.log_precision, what)
            close_to(f["std_error_log_precision"], whole.std_error_log_precision, what)
            if with_z:   # each of this rank's rows' own precision
                assert f["precision"].shape == (mine.stop - mine.start,)
                close_to(f["precision"], whole.precision[mine], what, rtol=1e-6)
            else:
                assert f["precision"] == pytest.approx(whole.precision, rel=1e-7)
        else:
            assert f["precision"] is None and f["log_precision"] is None
        # Every rank the same fit, bit for bit.
        for name in ("params", "bse", "cov", "loglik", "iterations"):
            assert np.array_equal(f[name], first[name], equal_nan=True), (what, name)
        if mean_precision:
            assert np.array_equal(f["log_precision"], first["log_precision"]), what
        # predict on this rank's rows: its own fit's alpha, the whole
        # table's rows to the coefficients' accuracy.
        assert f["predicted"].shape == (mine.stop - mine.start, cols)
        close_to(f["predicted"], want_predicted[mine], what, rtol=1e-6, atol=0)
        if not mean_precision:
            close_to(f["predicted"], np.exp(d[mine] @ f["params"]), what, rtol=1e-12, atol=0)
        assert f["simulated"].shape == (mine.stop - mine.start, cols)
        assert np.array_equal(f["simulated"].sum(axis=1), f["totals"])
        assert np.array_equal(f["totals"], y[mine].sum(axis=1))
    whole.close()


@pytest.mark.parametrize("parametrization", ["loglinear", "meanprecision"])
def test_regression_design_rank_is_checked_over_every_ranks_rows(parametrization):
    n = 3
    y, d = regression_table(90, 4, 2, 13)
    rows = y.shape[0]
    # A covariate that is 0 on ranks 0 and 1: each of their designs alone is
    # not of full rank, the whole table's is.
    mark = np.zeros(rows)
    mark[rows_of(2, n, rows)] = 1.0
    d = np.column_stack([d, mark])
    # A covariate that is a combination of the others on every rank.
    dependent = np.column_stack([d[:, :2], d[:, 0] - 2.0 * d[:, 1]])
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.regression(y, d, parametrization=parametrization, context=ctx)
        with pytest.raises(dirmn.InvalidArgumentError) as alone:
            dirmn.regression(y[rows_of(0, n, rows)], d[rows_of(0, n, rows)],
                             parametrization=parametrization, context=ctx)
        assert alone.value.argument == "x column" and alone.value.index == 2
        with pytest.raises(dirmn.InvalidArgumentError) as deficient:
            dirmn.regression(y, dependent, parametrization=parametrization, context=ctx)

    def body(r, counts):
        mine = rows_of(r, n, rows)
        with dirmn.regression(counts, d[mine], parametrization=parametrization) as f:
            fit = f.params, f.bse, f.loglik
        try:
            dirmn.regression(counts, dependent[mine], parametrization=parametrization)
            failed = None
        except dirmn.DirmnError as exc:
            failed = exc
        return fit, failed

    got = run_ranks(World(n), y, body)
    check_ok(got)
    for r, o in enumerate(got):
        (params, bse, loglik), failed = o.value
        close_to(params, whole.params, r)
        close_to(bse, whole.bse, r)
        assert abs(loglik - whole.loglik) <= 1e-12 * abs(whole.loglik), r
        # The same refusal on every rank: the rank is a property of the sums.
        assert type(failed) is dirmn.InvalidArgumentError, (r, failed)
        assert (failed.argument, failed.index) == ("x column", 2)
        assert failed.message == deficient.value.message
    whole.close()


def test_a_wide_regression_over_ranks_forms_its_system_whole():
    # 4 rows x 8001 categories, an intercept: one process solves it in the
    # rows' dimension (4 unknowns); over ranks the Newton system is formed
    # whole, 8001 unknowns, beyond DIRMN_REG_MAX_SYSTEM: refused on every
    # rank before any work is done.
    cols = dirmn._capi.DIRMN_REG_MAX_SYSTEM + 1
    y = np.random.default_rng(23).integers(1, 5, size=(4, cols))
    d = np.ones((4, 1))
    with dirmn.Context("cpu") as ctx, dirmn.regression(y, d, context=ctx) as whole:
        assert whole.converged and whole.parameters == cols

    def body(r, counts):
        try:
            dirmn.regression(counts, d[rows_of(r, 2, 4)])
        except dirmn.DirmnError as exc:
            return exc
        return None

    got = run_ranks(World(2), y, body)
    check_ok(got)
    for r, o in enumerate(got):
        assert type(o.value) is dirmn.InvalidArgumentError, (r, o.value)
        assert "DIRMN_REG_MAX_SYSTEM" in o.value.message


def test_a_bad_design_value_on_one_rank_fails_every_rank():
    n = 3
    y, d = regression_table(90, 4, 3, 17, mean_precision=True)
    rows = y.shape[0]
    mine1 = rows_of(1, n, rows)
    bad = d.copy()
    bad[mine1.start + 4, 2] = np.nan
    z = d[:, :2].copy()
    bad_z = z.copy()
    bad_z[rows_of(2, n, rows).start + 1, 1] = np.inf
    # What the failing rank would get alone.
    with pytest.raises(dirmn.InvalidParameterError) as alone:
        dirmn.regression(y[mine1], bad[mine1])
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.regression(y, d, parametrization="meanprecision", precision_design=z,
                                 context=ctx)

    def attempt(f):
        try:
            f().close()
        except dirmn.DirmnError as exc:
            return exc
        return None

    def body(r, counts):
        mine = rows_of(r, n, rows)
        x_failed = attempt(lambda: dirmn.regression(counts, bad[mine]))
        z_failed = attempt(lambda: dirmn.regression(
            counts, d[mine], parametrization="meanprecision", precision_design=bad_z[mine]))
        # The next collective call works again on every rank.
        with dirmn.regression(counts, d[mine], parametrization="meanprecision",
                              precision_design=z[mine]) as again:
            return x_failed, z_failed, again.loglik, again.params

    got = run_ranks(World(n), y, body)
    check_ok(got)
    for r, o in enumerate(got):
        x_failed, z_failed, loglik, params = o.value
        for failed, on, argument in ((x_failed, 1, "x"), (z_failed, 2, "precision_design")):
            assert failed is not None, (r, argument)
            if r == on:
                assert type(failed) is dirmn.InvalidParameterError, (r, failed)
                assert failed.argument == argument, (r, failed.argument)
                assert "not finite" in failed.message
            else:
                assert type(failed) is dirmn.CommunicationError, (r, failed)
                assert failed.status == "DIRMN_ERROR_COMMUNICATION"
                assert "rank %d's part of this collective call failed" % on in failed.message
                assert failed.__cause__ is None
        # Rank 1's own error is the one it gets alone (its own rows' numbering).
        if r == 1:
            assert (x_failed.row, x_failed.column) == (alone.value.row, alone.value.column) \
                == (4, 2)
            assert x_failed.message == alone.value.message
        if r == 2:
            assert (z_failed.row, z_failed.column) == (1, 1)
        assert abs(loglik - whole.loglik) <= 1e-12 * abs(whole.loglik)
        close_to(params, whole.params, r)
    whole.close()


def test_a_regression_progress_that_cancels_on_one_rank_cancels_every_rank():
    n = 3
    y, d = regression_table(90, 4, 3, 19)
    calls = [[] for _ in range(n)]
    raised = [None] * n
    with dirmn.Context("cpu") as ctx:
        whole = dirmn.regression(y, d, context=ctx)
    assert whole.iterations >= 3

    class Stop(Exception):
        pass

    def body(r, counts):
        mine = rows_of(r, n, y.shape[0])

        def cancel_on_rank_1(iteration, loglik, change):
            calls[r].append((iteration, loglik))
            return r == 1 and iteration == 2

        def raise_on_rank_2(iteration, loglik, change):
            if r == 2 and iteration == 2:
                raised[r] = Stop("rank 2's progress")
                raise raised[r]

        errors = []
        for progress in (cancel_on_rank_1, raise_on_rank_2):
            try:
                dirmn.regression(counts, d[mine], progress=progress).close()
                errors.append(None)
            except Exception as exc:  # noqa: B902 -- checked on the main thread
                errors.append(exc)
        with dirmn.regression(counts, d[mine]) as again:  # works again
            return errors, again.loglik

    got = run_ranks(World(n), y, body)
    check_ok(got)
    for r, o in enumerate(got):
        (cancelled, stopped), loglik = o.value
        assert type(cancelled) is dirmn.CancelledError, (r, cancelled)
        assert cancelled.status == "DIRMN_ERROR_CANCELLED"
        # The ranks step together: each rank's progress saw the same steps
        # and the whole table's log-likelihood.
        assert [i for i, _ in calls[r]] == [1, 2], r
        np.testing.assert_allclose([v for _, v in calls[r]], [v for _, v in calls[1]],
                                   rtol=1e-12)
        if r == 2:
            assert stopped is raised[2]  # re-raised unchanged on its own rank
        else:
            assert type(stopped) is dirmn.CancelledError, (r, stopped)
        assert abs(loglik - whole.loglik) <= 1e-12 * abs(whole.loglik)
    whole.close()


def test_estimators_not_over_ranks_are_refused_and_work_detached(table):
    # Fits, mixtures and regressions are collective (the tests above); the
    # regressions' group tests and the group tests are refused on split
    # counts.
    n = 2
    x = table[:24, :10]
    design = np.column_stack([np.ones(24), np.arange(24) % 2])
    genes = ["g0"] * 5 + ["g1"] * 5

    def refused(f):
        try:
            f()
        except dirmn.NotSupportedError as exc:
            return exc
        return None

    def body(r, counts):
        local = x[rows_of(r, n, 24)]
        d = design[rows_of(r, n, 24)]
        errors = {
            "regression_groups": refused(lambda: dirmn.regression_groups(counts, d, genes)),
            "test_groups": refused(lambda: dirmn.test_groups(
                counts, ["a", "b"] * (local.shape[0] // 2) + ["a"] * (local.shape[0] % 2))),
            "test_proportions": refused(lambda: dirmn.test_proportions(
                counts, np.full(10, 0.1))),
        }
        counts.set_communicator(None)  # detaching is local
        detached = counts.communicator is None
        m = dirmn.mixture(counts, 2)
        k = m.k
        m.close()
        return errors, detached, k, dirmn.fit(counts).alpha

    got = run_ranks(World(n), x, body)
    check_ok(got)
    for r, o in enumerate(got):
        errors, detached, k, alpha = o.value
        for name, exc in errors.items():
            assert exc is not None, (r, name)
            assert "does not sum over ranks" in exc.message, (r, name, exc.message)
            assert "dirmn_reg_fit and the mixture fits do" in exc.message, \
                (r, name, exc.message)
        assert "dirmn_reg_test_groups does not sum" in errors["regression_groups"].message
        assert "dirmn_test_groups does not sum" in errors["test_groups"].message
        assert detached and k == 2
        # Detached, the fit is this rank's rows alone.
        with dirmn.Context("cpu") as ctx:
            assert np.array_equal(alpha, dirmn.fit(x[rows_of(r, n, 24)], context=ctx).alpha)


def test_torch_loglik_refuses_split_counts(table):
    torch = pytest.importorskip("torch")
    import dirmn.torch as dtorch

    comm = dirmn.Communicator(0, 1, lambda buf: None, lambda buf, root: None)
    with dirmn.Counts(table[:5]) as c, comm:
        c.set_communicator(comm)
        with pytest.raises(dirmn.NotSupportedError, match="set_communicator"):
            dtorch.loglik(c, torch.zeros(table.shape[1], requires_grad=True))
        c.set_communicator(None)
        assert dtorch.loglik(c, torch.zeros(table.shape[1])).shape == (5,)


def test_release_comes_once_counts_and_communicator_are_closed(table):
    before = dcomm.registered()
    one = (lambda buf: None, lambda buf, root: None)
    # The communicator closed first: the counts keep it.
    comm = dirmn.Communicator(0, 1, *one)
    c = dirmn.Counts(table)
    c.set_communicator(comm)
    assert dcomm.registered() == before + 1
    comm.close()
    assert dcomm.registered() == before + 1
    assert c.communicator is comm
    f = dirmn.fit(c)  # works on: the library holds the callbacks
    assert np.array_equal(f.alpha, dirmn.fit(table, context=c.context).alpha)
    c.close()
    assert dcomm.registered() == before
    # The counts closed first.
    comm = dirmn.Communicator(0, 1, *one)
    c = dirmn.Counts(table)
    c.set_communicator(comm)
    c.close()
    assert dcomm.registered() == before + 1
    comm.close()
    assert dcomm.registered() == before
    # Two counts on one communicator, one detached, one collected.
    comm = dirmn.Communicator(0, 1, *one)
    c1, c2 = dirmn.Counts(table), dirmn.Counts(table[:7])
    c1.set_communicator(comm)
    c2.set_communicator(comm)
    comm.close()
    c1.set_communicator(None)
    assert c1.communicator is None
    assert dcomm.registered() == before + 1
    del c2
    gc.collect()
    assert dcomm.registered() == before
    c1.close()
    # Without close(): the finalizers release it.
    comm = dirmn.Communicator(0, 1, *one)
    c = dirmn.Counts(table)
    c.set_communicator(comm)
    del comm
    gc.collect()
    assert dcomm.registered() == before + 1  # the counts keep the Python object too
    assert c.communicator.rank == 0
    del c
    gc.collect()
    assert dcomm.registered() == before


def test_the_mpi4py_communicator_calls_its_release_hook_once():
    # The hook from_mpi4py uses to free its duplicate, without MPI.
    calls = []
    comm = dirmn.Communicator(0, 1, lambda buf: None, lambda buf, root: None)
    token = comm._token
    dcomm._registry[token].on_release = lambda: calls.append(token)
    with dirmn.Counts([[1, 2], [3, 4]]) as c:
        c.set_communicator(comm)
        comm.close()
        assert calls == []
    assert calls == [token]


def test_communicator_arguments_and_queries():
    before = dcomm.registered()
    one = (lambda buf: None, lambda buf, root: None)
    with dirmn.Communicator(2, 3, *one) as comm:
        assert (comm.rank, comm.ranks) == (2, 3)
        assert repr(comm) == "<dirmn.Communicator rank 2 of 3>"
    assert comm.closed and repr(comm) == "<dirmn.Communicator (closed)>"
    with pytest.raises(dirmn.ClosedHandleError):
        comm.rank
    with pytest.raises(dirmn.InvalidArgumentError, match=r"callbacks->rank \(3\) is outside"):
        dirmn.Communicator(3, 3, *one)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.Communicator(0, 0, *one)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.Communicator(-1, 2, *one)
    with pytest.raises(dirmn.InvalidArgumentError, match="allreduce must be callable"):
        dirmn.Communicator(0, 1, None, one[1])
    with pytest.raises(dirmn.InvalidArgumentError, match="broadcast must be callable"):
        dirmn.Communicator(0, 1, one[0], 3)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.Communicator(0.5, 1, *one)
    assert dcomm.registered() == before  # nothing kept for a communicator not made
    with dirmn.Counts([[1, 2], [3, 4]]) as c:
        with pytest.raises(dirmn.InvalidArgumentError, match="dirmn.Communicator or None"):
            c.set_communicator("world")
        with pytest.raises(dirmn.ClosedHandleError):
            c.set_communicator(comm)
        assert c.communicator is None
        with dirmn.Communicator(0, 1, *one) as comm1:
            c.set_communicator(comm1)
            assert repr(c) == "<dirmn.Counts 2 x 2 (rank 0 of 1)>"
    assert issubclass(dirmn.CommunicationError, dirmn.DirmnError)
    assert dirmn.errors.STATUS_CLASSES["DIRMN_ERROR_COMMUNICATION"] is dirmn.CommunicationError


def test_from_mpi4py_without_mpi4py(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match="needs mpi4py"):
        dirmn.Communicator.from_mpi4py(object())


def _mpirun_command(script, n):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not on PATH")
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed for %s" % sys.executable)
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip("mpirun --version failed: %s" % err)
    cmd = [mpirun]
    if "Open MPI" in version or "OpenRTE" in version:
        cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + ["-n", str(n), sys.executable, script]


def test_fit_under_mpirun_with_mpi4py():
    cmd = _mpirun_command(os.path.join(HERE, "mpi_fit_script.py"), 3)
    env = dict(os.environ)
    # What scripts/test-python.sh set, and this very package and library.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(dirmn.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["DIRMN_LIBRARY_PATH"] = dirmn.library_path()
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    env.setdefault("PYTHONNOUSERSITE", "1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # mpirun and the ranks it started
        out, err = proc.communicate()
        pytest.fail("mpirun did not finish in 120 s\nstdout:\n%s\nstderr:\n%s" % (out, err))
    assert proc.returncode == 0, "stdout:\n%s\nstderr:\n%s" % (out, err)
    # mpirun forwards the ranks' lines as they come: found wherever they are.
    ok = sorted(re.findall(r"OK rank \d+ of \d+", out))
    assert ok == ["OK rank 0 of 3", "OK rank 1 of 3", "OK rank 2 of 3"], (out, err)
    assert "FAIL" not in out, out
