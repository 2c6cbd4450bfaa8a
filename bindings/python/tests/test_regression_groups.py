"""dirmn.regression_groups (dirmn_reg_test_groups): per-group likelihood-ratio
tests, DRIMSeq's differential usage workflow, against references computed
here -- each group's full and null fits by dirmn.regression on the group's
own table of columns with counts, the chi-square tail by scipy.stats.chi2.sf,
Benjamini-Hochberg by a direct numpy implementation (statsmodels is not
assumed) -- an untestable group's NaN and status, and bad input."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import dirmn

N = 12
# (gene, transcripts); gene "g3"'s second transcript is empty, "g5" has one
# transcript (untestable); column 3 (0-based) belongs to no gene; the
# condition shifts the usage of "g1" and "g4".
SIZES = [("g1", 3), ("g2", 2), ("g3", 4), ("g4", 5), ("g5", 1), ("g6", 3), ("g7", 2)]


def simulate(seed=1729):
    g = np.random.default_rng(seed)
    groups = []
    for name, k in SIZES:
        groups += [name] * k
        if name == "g1":
            groups.append(None)
    V = len(groups)
    cond = np.arange(N) % 2
    Y = np.zeros((N, V), dtype=np.int64)
    for name, k in SIZES:
        cols = [v for v in range(V) if groups[v] == name]
        for b in range(N):
            base = np.linspace(1.0, 2.0, k) if k > 1 else np.ones(1)
            if name in ("g1", "g4") and cond[b] == 1:
                base = base[::-1] ** 3
            p = g.dirichlet(30 * base / base.sum())
            Y[b, cols] = g.multinomial(g.integers(40, 91), p)
        if name == "g3":
            Y[:, cols[1]] = 0
    Y[:, 3] = g.integers(0, 10, size=N)
    X = np.column_stack([np.ones(N), cond.astype(float)])
    return Y, X, groups


Y, X, GROUPS = simulate()


def bh(p):
    """Benjamini-Hochberg over the non-NaN entries: the step-up minimum of
    m p_(i) / i from the largest p down, capped at 1."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = idx.size
    order = idx[np.argsort(p[idx], kind="mergesort")]
    adj = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(adj[::-1])[::-1])
    return out


def group_columns(name):
    return [v for v in range(Y.shape[1]) if GROUPS[v] == name and Y[:, v].sum() > 0]


@pytest.mark.parametrize("parametrization", ["meanprecision", "loglinear"])
def test_each_group_against_its_own_fits(parametrization):
    t = dirmn.regression_groups(Y, X, GROUPS, parametrization=parametrization)
    assert isinstance(t, dirmn.GroupTestResult)
    assert t.group == [name for name, _ in SIZES] and len(t) == len(SIZES)
    assert t.tested == len(SIZES) - 1
    assert (t.parametrization, t.covariates, t.p_null) == (parametrization, 2, 1)
    for g, (name, _) in enumerate(SIZES):
        cols = group_columns(name)
        assert t.categories[g] == len(cols)
        if name == "g5":
            assert t.status[g] == "invalid_argument"
            assert math.isnan(t.pvalue[g]) and math.isnan(t.padjusted[g])
            assert math.isnan(t.statistic[g]) and math.isnan(t.loglik_full[g])
            assert not t.converged[g]
            continue
        assert t.status[g] == "ok" and t.converged[g]
        full = dirmn.regression(Y[:, cols], X, parametrization=parametrization)
        null = dirmn.regression(Y[:, cols], X[:, :1], parametrization=parametrization)
        assert abs(t.loglik_full[g] - full.loglik) <= 1e-10 * abs(full.loglik)
        assert abs(t.loglik_null[g] - null.loglik) <= 1e-10 * abs(null.loglik)
        assert abs(t.statistic[g] - 2 * (full.loglik - null.loglik)) <= 1e-9 * abs(full.loglik)
        k = len(cols)
        assert t.df[g] == (k - 1 if parametrization == "meanprecision" else k)
        assert t.df[g] == full.parameters - null.parameters
        want = stats.chi2.sf(t.statistic[g], t.df[g])
        assert abs(t.pvalue[g] - want) <= 1e-10 * want + 1e-300
        full.close()
        null.close()
    want = bh(t.pvalue)
    assert np.array_equal(np.isnan(t.padjusted), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(t.padjusted[ok], want[ok], rtol=1e-14)
    if parametrization == "meanprecision":
        # the genes whose usage changes with the condition are found
        assert t.padjusted[0] < 0.05 and t.padjusted[3] < 0.05


def test_bh_reference_against_a_hand_computed_case():
    p = np.array([0.01, np.nan, 0.04, 0.03, 0.2])
    # m = 4: sorted 0.01, 0.03, 0.04, 0.2 -> 0.04, 0.04*4/3... step-up min
    np.testing.assert_allclose(bh(p), [0.04, np.nan, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2],
                               rtol=1e-15)


def test_labels_layouts_weights_and_display():
    t = dirmn.regression_groups(Y, X, GROUPS)
    # NaN leaves a column out as None does; integer labels; a numpy array
    lab = np.array([np.nan if g is None else float(g[1:]) for g in GROUPS])
    u = dirmn.regression_groups(Y, X, lab)
    assert u.group == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    np.testing.assert_array_equal(u.pvalue, t.pvalue)
    assert list(u.status) == list(t.status)
    # a design in Fortran order, a sparse table and a prepared Counts
    import scipy.sparse as sp
    v = dirmn.regression_groups(sp.csr_matrix(Y), np.asfortranarray(X), GROUPS)
    np.testing.assert_array_equal(v.loglik_full, t.loglik_full)
    with dirmn.Counts(Y) as c:
        np.testing.assert_array_equal(dirmn.regression_groups(c, X, GROUPS).statistic,
                                      t.statistic)
    # integer weights are repeated rows
    w = np.where(np.arange(N) < 3, 2.0, 1.0)
    tw = dirmn.regression_groups(Y, X, GROUPS, weights=w)
    rep = np.concatenate([np.arange(3), np.arange(N)])
    tr = dirmn.regression_groups(Y[rep], X[rep], GROUPS)
    ok = tw.status == "ok"
    np.testing.assert_allclose(tw.loglik_full[ok], tr.loglik_full[ok], rtol=1e-8)
    s = t.summary()
    assert "7 groups, 6 tested" in s and "invalid_argument" in s
    assert "groups=7 tested=6" in repr(t)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            t.to_frame()
    else:
        f = t.to_frame()
        assert list(f.columns) == list(t._COLUMNS) and len(f) == 7


def test_hold_precision_fits_the_null_at_the_full_fits_precision():
    t = dirmn.regression_groups(Y, X, GROUPS)
    h = dirmn.regression_groups(Y, X, GROUPS, hold_precision=True)
    assert h.hold_precision and not t.hold_precision
    ok = t.status == "ok"
    assert list(h.status) == list(t.status)
    np.testing.assert_array_equal(h.df[ok], t.df[ok])
    np.testing.assert_allclose(h.loglik_full[ok], t.loglik_full[ok], rtol=1e-10)
    # a constrained null fit: its loglik no larger, the statistic no smaller
    assert np.all(h.loglik_null[ok] <= t.loglik_null[ok] + 1e-9 * np.abs(t.loglik_null[ok]))
    assert np.all(h.statistic[ok] >= t.statistic[ok] - 1e-9 * np.abs(t.loglik_full[ok]))
    np.testing.assert_allclose(h.pvalue[ok], stats.chi2.sf(h.statistic[ok], h.df[ok]),
                               rtol=1e-10, atol=1e-300)
    assert "at the full fit's precision" in h.summary()
    # the log-linear model has no precision to hold
    a = dirmn.regression_groups(Y, X, GROUPS, parametrization="loglinear")
    b = dirmn.regression_groups(Y, X, GROUPS, parametrization="loglinear", hold_precision=True)
    np.testing.assert_array_equal(a.statistic, b.statistic)


def test_bad_input():
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        dirmn.regression_groups(Y, X, GROUPS[:-1])
    assert "groups has %d entries" % (len(GROUPS) - 1) in str(e.value)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, GROUPS, p_null=2)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X[:, :1], GROUPS)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, GROUPS, p_null=1.0)
    with pytest.raises(dirmn.DimensionMismatchError):
        dirmn.regression_groups(Y, X[:-1], GROUPS)
    Xn = X.copy()
    Xn[4, 1] = np.nan
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.regression_groups(Y, Xn, GROUPS)
    assert (e.value.row, e.value.column) == (4, 1)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, GROUPS, parametrization="dm")
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, [None] * len(GROUPS))
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, [[1]] * len(GROUPS))
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression_groups(Y, X, "g1")


def test_non_convergence_warns():
    with pytest.warns(dirmn.ConvergenceWarning, match="stopped without convergence"):
        t = dirmn.regression_groups(Y, X, GROUPS, max_iterations=1)
    assert not t.converged.all()
