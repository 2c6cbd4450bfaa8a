"""Handles are freed exactly once, by close(), a with block or the finalizer;
create/destroy cycles do not grow the process; a close() racing a call on
another thread neither crashes nor leaks."""

import gc
import threading
import time

import numpy as np
import pytest

import dirmn
from dirmn import _capi


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    pytest.skip("no /proc/self/status")


@pytest.fixture
def destroys(monkeypatch):
    """Counts every destroy the library is asked for, by kind."""
    seen = {"counts": [], "mixture": [], "context": []}
    for kind in seen:
        name = "dirmn_%s_destroy" % kind
        real = getattr(_capi, name)
        monkeypatch.setattr(_capi, name,
                            lambda p, real=real, kind=kind: seen[kind].append(p) or real(p))
    return seen


def test_freed_exactly_once(destroys):
    ctx = dirmn.Context("cpu")
    c = dirmn.Counts([[1, 2], [3, 4]], context=ctx)
    c.close()
    c.close()
    assert c.closed and len(destroys["counts"]) == 1
    with pytest.raises(dirmn.ClosedHandleError):
        dirmn.loglik(c, [1, 1])
    del c
    gc.collect()
    assert len(destroys["counts"]) == 1
    # Without close: the finalizer frees it once.
    c = dirmn.Counts([[1, 2], [3, 4]], context=ctx)
    m = dirmn.mixture(c, 1)
    del c, m
    gc.collect()
    assert len(destroys["counts"]) == 2 and len(destroys["mixture"]) == 1
    with ctx:
        pass
    ctx.close()
    assert len(destroys["context"]) == 1 and ctx.closed
    with pytest.raises(dirmn.ClosedHandleError):
        ctx.threads


def test_counts_outlive_their_context(destroys):
    ctx = dirmn.Context("cpu")
    c = dirmn.Counts([[1, 2], [3, 4]], context=ctx)
    ctx.close()
    with pytest.raises(dirmn.ClosedHandleError):
        dirmn.loglik(c, [1, 1])
    c.close()
    assert len(destroys["counts"]) == 1 and len(destroys["context"]) == 1


def test_create_destroy_cycles_keep_rss_bounded():
    X = np.arange(12, dtype=np.int32).reshape(3, 4)
    with dirmn.Context("cpu", threads=1) as ctx:
        for _ in range(5000):
            dirmn.Counts(X, context=ctx).close()
        gc.collect()
        before = _rss_kib()
        for i in range(100_000):
            c = dirmn.Counts(X, context=ctx)
            if i % 2:
                c.close()           # the other half is freed by the finalizer
        del c
        gc.collect()
        grown = _rss_kib() - before
    assert grown < 4096, "RSS grew by %d KiB over 1e5 create/destroy cycles" % grown


def test_context_cycles_keep_rss_bounded():
    for _ in range(200):
        dirmn.Context("cpu", threads=1).close()
    before = _rss_kib()
    for _ in range(2000):
        with dirmn.Context("cpu", threads=1):
            pass
    assert _rss_kib() - before < 4096


def _race(close_what, rounds=6):
    rng = np.random.default_rng(1)
    X = rng.poisson(3.0, size=(100_000, 40)).astype(np.int32)
    alpha = np.full(40, 0.5)
    outcomes = []
    for _ in range(rounds):
        ctx = dirmn.Context("cpu")
        c = dirmn.Counts(X, context=ctx)
        started = threading.Event()

        def work():
            started.set()
            try:
                for _ in range(20):
                    out = dirmn.loglik(c, alpha)
                    assert np.all(np.isfinite(out))
                outcomes.append("finished")
            except dirmn.ClosedHandleError:
                outcomes.append("closed")

        t = threading.Thread(target=work)
        t.start()
        started.wait()
        time.sleep(0.01)
        (c if close_what == "counts" else ctx).close()
        t.join(60)
        assert not t.is_alive()
        c.close()
        ctx.close()
    return outcomes


@pytest.mark.parametrize("close_what", ["counts", "context"])
def test_close_racing_a_call(close_what, destroys):
    outcomes = _race(close_what)
    assert len(outcomes) == 6 and "closed" in outcomes
    assert len(destroys["counts"]) == 6 and len(destroys["context"]) == 6


def test_race_rounds_do_not_leak():
    _race("counts", rounds=2)
    gc.collect()
    before = _rss_kib()
    _race("counts", rounds=4)
    gc.collect()
    assert _rss_kib() - before < 16 * 1024


def test_threads_share_a_context():
    X = np.random.default_rng(2).poisson(2.0, size=(2000, 10))
    want = dirmn.loglik(X, np.ones(10))
    errors = []

    def work():
        try:
            for _ in range(20):
                assert np.array_equal(dirmn.loglik(X, np.ones(10)), want)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def _collect_while_locked(ctx, obj_name, namespace):
    """Drops ``namespace[obj_name]`` and collects it while another thread
    holds the context's lock; the destroy must then be deferred."""
    from dirmn import _handles
    held, release = threading.Event(), threading.Event()

    def hold():
        with ctx._lock:
            held.set()
            release.wait()

    t = threading.Thread(target=hold)
    t.start()
    held.wait()
    del namespace[obj_name]
    gc.collect()
    assert id(ctx._lock) in _handles._deferred
    release.set()
    t.join()


def test_collected_counts_wait_for_the_context_lock():
    """A Counts collected while another thread holds its context's lock is
    destroyed by the next call on the context, under the lock, not beside
    that thread's calls (which the library would refuse meanwhile)."""
    from dirmn import _handles
    ctx = dirmn.Context("cpu")
    made = {"c": dirmn.Counts(np.ones((3, 2)), context=ctx)}
    _collect_while_locked(ctx, "c", made)
    assert np.isfinite(dirmn.loglik(np.ones((3, 2)), np.ones(2), context=ctx)).all()
    assert id(ctx._lock) not in _handles._deferred
    # A context closed with destroys still deferred runs them first.
    made["c2"] = dirmn.Counts(np.ones((3, 2)), context=ctx)
    _collect_while_locked(ctx, "c2", made)
    ctx.close()
    assert id(ctx._lock) not in _handles._deferred
