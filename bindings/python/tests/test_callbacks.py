"""Progress callbacks, interrupt callbacks and Ctrl-C (dirmn_progress_fn,
dirmn_context_set_interrupt): values passed, stopping, exceptions carried
across the C boundary, KeyboardInterrupt from a SIGINT."""

import signal
import threading

import numpy as np
import pytest

import dirmn


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(7)
    alphas = rng.gamma(2.0, size=(3, 20))
    return np.vstack([rng.multinomial(150, rng.dirichlet(alphas[i % 3])) for i in range(240)])


class Boom(Exception):
    pass


def split_starts(calls):
    """The progress calls of a mixture, one list per start (iteration restarts at 1)."""
    runs = []
    for c in calls:
        if c[0] == 1:
            runs.append([])
        runs[-1].append(c)
    return runs


def test_mixture_progress_values(table, ctx):
    calls = []
    m = dirmn.mixture(table, 3, starts=2, context=ctx, progress=lambda *a: calls.append(a))
    runs = split_starts(calls)
    assert len(runs) >= 2 and calls[0][0] == 1
    for run in runs:
        its = [c[0] for c in run]
        assert its == list(range(1, len(run) + 1))
        ll = np.array([c[1] for c in run])
        assert np.all(np.isfinite(ll)) and np.all(ll < 0)
        # ML: a generalized EM, no step lowers the likelihood (up to rounding)
        assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1]))
        change = np.array([c[2] for c in run])
        assert np.all((change >= 0) & (change <= 1))
    # the kept start's last call is the result's
    assert any(r[-1][0] == m.iterations and r[-1][1] == pytest.approx(m.loglik, rel=1e-9)
               for r in runs)


def test_fit_progress_values(table, ctx):
    calls = []
    f = dirmn.fit(table, context=ctx, progress=lambda it, ll, ch: calls.append((it, ll, ch)))
    assert [c[0] for c in calls] == list(range(1, f.iterations + 1))
    assert calls[-1][1] == pytest.approx(f.loglik, rel=1e-12)
    change = [c[2] for c in calls]
    assert all(g >= 0 for g in change) and change[-1] < change[0]


def test_progress_keywords():
    import inspect
    for f in (dirmn.fit, dirmn.mixture):
        assert "progress" in inspect.signature(f).parameters


def test_progress_returning_true_stops(table, ctx):
    seen = []

    def stop_at_two(iteration, loglik, change):
        seen.append(iteration)
        return iteration >= 2

    with pytest.raises(dirmn.CancelledError) as e:
        dirmn.mixture(table, 3, starts=1, max_iterations=500, tolerance=1e-300, context=ctx,
                      progress=stop_at_two)
    assert e.value.status == "DIRMN_ERROR_CANCELLED"
    assert seen == [1, 2]          # stopped early: far fewer than max_iterations
    seen.clear()
    with pytest.raises(dirmn.CancelledError):
        dirmn.fit(table, context=ctx, progress=stop_at_two)
    assert seen == [1, 2]
    # a false value (None, 0) goes on to the end
    m = dirmn.mixture(table, 2, starts=1, context=ctx, progress=lambda *a: None)
    assert m.k == 2


@pytest.mark.parametrize("several", [False, True])
def test_progress_exception_propagates(table, ctx, several):
    seen = []

    def bad(iteration, loglik, change):
        seen.append(iteration)
        if iteration == 2:
            raise Boom("from the callback")

    k = range(1, 3) if several else 2
    with pytest.raises(Boom, match="from the callback") as e:
        dirmn.mixture(table, k, starts=1, tolerance=1e-300, context=ctx, progress=bad)
    assert not isinstance(e.value, dirmn.DirmnError)
    assert seen[-1] == 2 and seen.count(2) == 1    # the fit stopped right there
    with pytest.raises(ZeroDivisionError):
        dirmn.fit(table, context=ctx, progress=lambda *a: 1 / 0)
    # the context is still usable
    assert dirmn.mixture(table, 2, starts=1, context=ctx).k == 2


def test_progress_must_be_callable(table, ctx):
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.mixture(table, 2, context=ctx, progress=3)


def test_interrupt_callable_cancels(table):
    with dirmn.Context("cpu") as c:
        counts = dirmn.Counts(table, context=c)
        polls = []
        c.set_interrupt(lambda: polls.append(1) or True)
        assert c.interrupt is not None
        with pytest.raises(dirmn.CancelledError) as e:
            dirmn.mixture(counts, 2, starts=1)
        assert e.value.status == "DIRMN_ERROR_CANCELLED" and polls
        c.set_interrupt(None)
        assert dirmn.mixture(counts, 2, starts=1).k == 2
        counts.close()


def test_interrupt_exception_propagates(table):
    state = {"n": 0}

    def interrupt():
        state["n"] += 1
        if state["n"] > 1:
            raise Boom("interrupt")
        return False

    counts = dirmn.Counts(table, context=dirmn.Context("cpu"))
    counts.context.set_interrupt(interrupt)
    with pytest.raises(Boom, match="interrupt"):
        dirmn.mixture(counts, 3, starts=2, tolerance=1e-300)
    counts.context.set_interrupt(None)
    assert dirmn.fit(counts).converged


def test_interrupt_keyword_and_validation(table):
    with dirmn.Context("cpu", interrupt=lambda: 1) as c:
        with pytest.raises(dirmn.CancelledError):
            dirmn.mixture(table, 2, context=c)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.Context("cpu", interrupt="no")


def test_sigint_raises_keyboard_interrupt(table, ctx):
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT)
    seen = []

    during = []

    def ctrl_c(iteration, loglik, change):
        seen.append(iteration)
        during.append(signal.getsignal(signal.SIGINT))
        if iteration == 2:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        dirmn.mixture(table, 3, starts=3, tolerance=1e-300, max_iterations=200, context=ctx,
                      progress=ctrl_c)
    assert seen == [1, 2]                          # cancelled at once, not at the end
    assert signal.getsignal(signal.SIGINT) is before  # the handler was restored
    assert during and all(h is not before for h in during)  # a flag handler meanwhile
    # the context serves the next call
    m = dirmn.mixture(table, 2, starts=1, context=ctx)
    assert m.k == 2 and np.isfinite(m.loglik)


def test_sigint_cancels_fit_range(table, ctx):
    seen = []

    def ctrl_c(iteration, loglik, change):
        seen.append(iteration)
        if len(seen) == 3:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        dirmn.mixture(table, range(1, 4), starts=2, context=ctx, progress=ctrl_c)
    assert len(seen) == 3
    assert dirmn.fit(table, context=ctx).converged


def test_progress_may_query_its_context(table, ctx):
    threads = []
    dirmn.mixture(table, 2, starts=1, context=ctx,
                  progress=lambda *a: threads.append(ctx.threads))
    assert threads and all(t >= 1 for t in threads)


def test_off_main_thread_no_handler(table):
    handlers, errors = [], []

    def work():
        try:
            with dirmn.Context("cpu") as c:
                dirmn.mixture(table, 2, starts=1, context=c,
                              progress=lambda *a: handlers.append(signal.getsignal(
                                  signal.SIGINT)))
        except BaseException as e:  # noqa: B902
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors and handlers
    assert all(h is signal.default_int_handler for h in handlers)


def test_sigint_seen_by_interrupt_poll(table):
    # SIGINT delivered while the library polls the interrupt (no progress callback)
    with dirmn.Context("cpu") as c:
        counts = dirmn.Counts(table, context=c)
        polls = []

        def poll():
            polls.append(1)
            if len(polls) == 1:
                signal.raise_signal(signal.SIGINT)
            return False

        c.set_interrupt(poll)
        with pytest.raises(KeyboardInterrupt):
            dirmn.mixture(counts, 3, starts=4)
        c.set_interrupt(None)
        assert dirmn.mixture(counts, 2, starts=1).k == 2
        counts.close()
