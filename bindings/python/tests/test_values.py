"""Values against independent references: mpmath and math.lgamma formulas,
the 50-digit reference file of the C tests, scipy.optimize."""

import math

import numpy as np
import pytest

import dirmn
from conftest import repo_path
from refs import loglik_fast, loglik_row, loglik_rows, relerr

ALPHA = [0.7, 2.5, 1.0, 0.05]


@pytest.mark.parametrize("full", [True, False])
def test_loglik_one_vector(small, ctx, full):
    got = dirmn.loglik(small, ALPHA, full=full, context=ctx)
    assert got.shape == (5,)
    assert relerr(got, loglik_rows(small, ALPHA, full)) < 1e-12


def test_loglik_logalpha_and_k_vectors(small, ctx):
    A = np.array([ALPHA, [1, 1, 1, 1], [10, 0.1, 3, 2]])
    got = dirmn.loglik(small, np.log(A), param="logalpha", context=ctx)
    assert got.shape == (5, 3)
    for j in range(3):
        assert relerr(got[:, j], loglik_rows(small, A[j])) < 1e-12
    # K vectors given as a transposed (Fortran-ordered) view: the same values.
    At = np.asfortranarray(A)
    assert np.array_equal(dirmn.loglik(small, At, context=ctx), dirmn.loglik(small, A,
                                                                           context=ctx))


def test_loglik_rowwise(small, ctx, rng):
    P = rng.uniform(0.1, 5, size=small.shape)
    got = dirmn.loglik(small, P, rowwise=True, full=False, context=ctx)
    want = [loglik_row(x, a, full=False) for x, a in zip(small, P)]
    assert relerr(got, want) < 1e-12


def test_row_of_zeros_and_logpmf(ctx):
    X = np.array([[0, 0, 0], [1, 2, 3]])
    assert dirmn.loglik(X, [1, 1, 1], context=ctx)[0] == 0.0
    assert abs(dirmn.logpmf([1, 2, 3], [1, 1, 1]) - loglik_row([1, 2, 3], [1, 1, 1])) < 1e-13


def test_real_valued_counts(ctx):
    X = np.array([[0.5, 2.25, 3.0], [1.5, 0.0, 7.75]])
    got = dirmn.loglik(X, [0.3, 1.2, 4.0], real_valued=True, context=ctx)
    assert relerr(got, loglik_rows(X, [0.3, 1.2, 4.0])) < 1e-12


def _reference_cases():
    cases, cur = [], None
    with open(repo_path("tests", "data", "reference_loglik.txt")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "case":
                cur = dict(label=w[4], real=w[3] == "real", rows=[], want=[], scale=[])
            elif w[0] == "alpha":
                cur["alpha"] = [float(v) for v in w[1:]]
            elif w[0] == "row":
                bar = w.index("|")
                cur["rows"].append([float(v) for v in w[1:bar]])
                cur["want"].append((float(w[bar + 1]), float(w[bar + 2])))
                cur["scale"].append((float(w[bar + 4]), float(w[bar + 5])))
            elif w[0] == "end":
                cases.append(cur)
    return cases


def test_reference_file(ctx):
    cases = _reference_cases()
    assert len(cases) > 20
    worst = 0.0
    for case in cases:
        X = np.array(case["rows"])
        for full, col in ((False, 0), (True, 1)):
            got = dirmn.loglik(X, case["alpha"], full=full, real_valued=case["real"],
                               context=ctx)
            for g, want, scale in zip(got, case["want"], case["scale"]):
                # Relative to the value or, where terms cancel, to their size.
                err = abs(g - want[col]) / max(abs(want[col]), 1.0, 1e-3 * scale[col])
                worst = max(worst, err)
                assert err < 1e-10, (case["label"], full, g, want[col])
    assert worst < 1e-10


def test_loglik_sum_and_derivatives(small, ctx, rng):
    w = rng.uniform(0, 3, size=5)
    a = np.array(ALPHA)
    want = sum(wi * v for wi, v in zip(w, loglik_rows(small, a)))
    assert abs(dirmn.loglik_sum(small, a, weights=w, context=ctx) - want) < 1e-11 * abs(want)
    s = dirmn.loglik_sum(small, a, weights=w, derivatives=True, context=ctx)
    # Central differences of the reference, in alpha and in log alpha.
    f = lambda al: sum(wi * v for wi, v in zip(w, loglik_rows(small, al)))  # noqa: E731
    h = 1e-6
    for v in range(4):
        e = np.zeros(4)
        e[v] = h * a[v]
        g = (f(a + e) - f(a - e)) / (2 * e[v])
        assert abs(s.gradient[v] - g) < 1e-6 * max(1, abs(g))
    # The Hessian: differences of the analytic gradient.
    H = s.hessian()
    for v in range(4):
        e = np.zeros(4)
        e[v] = 1e-5 * a[v]
        gp = dirmn.loglik_sum(small, a + e, weights=w, derivatives=True).gradient
        gm = dirmn.loglik_sum(small, a - e, weights=w, derivatives=True).gradient
        assert np.allclose(H[:, v], (gp - gm) / (2 * e[v]), rtol=1e-5, atol=1e-6)
    slog = dirmn.loglik_sum(small, np.log(a), weights=w, param="logalpha", derivatives=True)
    assert np.allclose(slog.gradient, s.gradient * a, rtol=1e-12)
    kern = dirmn.loglik_sum(small, a, weights=w, full=False, context=ctx)
    assert abs(kern - sum(wi * v for wi, v in zip(w, loglik_rows(small, a, False)))) < 1e-10


def test_fit_against_scipy_optimize(ctx):
    scipy_opt = pytest.importorskip("scipy.optimize")
    X = np.array([[3, 0, 4, 1], [2, 5, 1, 0], [0, 1, 2, 6], [1, 1, 1, 1], [4, 2, 0, 3],
                  [9, 0, 0, 1], [0, 0, 8, 2], [2, 2, 2, 2]])
    res = scipy_opt.minimize(lambda t: -loglik_fast(X, np.exp(t)), np.zeros(4),
                             method="Nelder-Mead",
                             options=dict(xatol=1e-10, fatol=1e-13, maxiter=20000,
                                          maxfev=40000))
    f = dirmn.fit(X, context=ctx)
    assert f.converged and not f.multinomial_limit
    assert f.loglik >= -res.fun - 1e-9            # at least as high as scipy's optimum
    assert abs(f.loglik - (-res.fun)) < 1e-6
    assert np.allclose(f.alpha, np.exp(res.x), rtol=1e-3)
    assert abs(f.loglik - loglik_fast(X, f.alpha)) < 1e-10
    assert abs(f.loglik_kernel - loglik_fast(X, f.alpha, full=False)) < 1e-10
    assert f.parameters == 4 and f.nobs == 8
    assert math.isclose(f.aic, -2 * f.loglik + 8) and math.isclose(f.bic,
                                                                   -2 * f.loglik + 4 * math.log(8))
    assert math.isclose(f.precision, f.alpha.sum())
    # Standard errors from the inverse of the negative Hessian of the reference.
    eps = 1e-4
    H = np.zeros((4, 4))
    for i in range(4):
        for j in range(4):
            ei, ej = np.eye(4)[i] * eps * f.alpha[i], np.eye(4)[j] * eps * f.alpha[j]
            H[i, j] = (loglik_fast(X, f.alpha + ei + ej) - loglik_fast(X, f.alpha + ei - ej)
                       - loglik_fast(X, f.alpha - ei + ej)
                       + loglik_fast(X, f.alpha - ei - ej)) / (4 * ei[i] * ej[j])
    se = np.sqrt(np.diag(np.linalg.inv(-H)))
    assert np.allclose(f.std_error_alpha, se, rtol=1e-3)
    assert np.allclose(f.std_error_log_alpha, se / f.alpha, rtol=1e-3)


def test_fit_zero_column_weights_and_start(ctx):
    X = np.array([[3, 0, 4], [2, 0, 1], [0, 0, 2], [5, 0, 1]])
    f = dirmn.fit(X, context=ctx)
    assert f.alpha[1] == 0 and f.zero_columns == 1 and f.parameters == 2
    assert np.isnan(f.std_error_alpha[1])
    # Integer weights are the rows repeated.
    w = np.array([2, 1, 0, 3])
    rep = np.repeat(X, w, axis=0)
    fw, fr = dirmn.fit(X, weights=w, context=ctx), dirmn.fit(rep, context=ctx)
    assert np.allclose(fw.alpha, fr.alpha, rtol=1e-8) and abs(fw.loglik - fr.loglik) < 1e-8
    assert fw.nobs == 6
    fs = dirmn.fit(X, start=[1.0, 1.0, 1.0], context=ctx)
    assert np.allclose(fs.alpha, f.alpha, rtol=1e-6)


def test_overdispersion(ctx, rng):
    X = np.array([[3, 0, 4, 1], [2, 5, 1, 0], [0, 1, 2, 6], [1, 1, 1, 1], [4, 2, 0, 3]])
    t = dirmn.overdispersion_test(X, context=ctx)
    p = X.sum(0) / X.sum()
    multinomial = sum(math.lgamma(r.sum() + 1) - sum(math.lgamma(n + 1) for n in r)
                      + sum(n * math.log(q) for n, q in zip(r, p) if n) for r in X)
    assert abs(t.loglik_multinomial - multinomial) < 1e-10
    assert abs(t.loglik_dm - dirmn.fit(X).loglik) < 1e-9
    assert abs(t.statistic - 2 * (t.loglik_dm - t.loglik_multinomial)) < 1e-9
    stats = pytest.importorskip("scipy.stats")
    assert abs(t.pvalue - stats.chi2.sf(t.statistic, 1) / 2) < 1e-12
    s = dirmn.overdispersion_test(X, method="score", context=ctx)
    # Kim & Margolin's T, computed here.
    Xj, N = X.sum(0), X.sum(1)
    T = sum(((X[b, j] - N[b] * Xj[j] / X.sum()) ** 2 / Xj[j]) for b in range(5)
            for j in range(4))
    assert abs(s.statistic - T) < 1e-10 and s.method == "score"
    assert abs(s.pvalue - stats.chi2.sf(T / s.score_scale, s.score_df)) < 1e-10
    # Multinomial data: no overdispersion found.
    M = rng.multinomial(50, [0.2, 0.3, 0.5], size=200)
    assert dirmn.overdispersion_test(M, context=ctx).pvalue > 0.001


def test_mixture_separates_clusters(ctx, rng):
    a = rng.multinomial(40, [0.8, 0.1, 0.05, 0.05], size=30)
    b = rng.multinomial(40, [0.05, 0.05, 0.1, 0.8], size=20)
    X = np.vstack([a, b])
    m = dirmn.mixture(X, 2, context=ctx)
    assert m.k == 2 and m.alpha.shape == (2, 4) and m.responsibilities.shape == (50, 2)
    assert np.isclose(m.mixture_weights.sum(), 1) and m.mixture_weights[0] >= m.mixture_weights[1]
    labels = m.predict(X)
    assert len(set(labels[:30])) == 1 and len(set(labels[30:])) == 1 and labels[0] != labels[30]
    assert np.allclose(m.assign(X), m.responsibilities, atol=1e-8)
    # The mixture log-likelihood, from the components with the reference formula.
    comp = np.array([[loglik_row(x, m.alpha[j]) for j in range(2)] for x in X])
    ll = np.log(np.exp(comp) @ m.mixture_weights).sum()
    assert abs(m.loglik - ll) < 1e-8 * abs(ll)
    assert math.isclose(m.bic, -2 * m.loglik + m.parameters * math.log(m.nobs))
    assert m.objective_kind == "ml" and m.converged
    m.close()
    with pytest.raises(dirmn.ClosedHandleError):
        m.assign(X)
    assert m.loglik == ll or abs(m.loglik - ll) < 1e-6   # the values stay


def test_mixture_range_selection(ctx, rng):
    a = rng.multinomial(40, [0.8, 0.1, 0.1], size=25)
    b = rng.multinomial(40, [0.1, 0.1, 0.8], size=25)
    X = np.vstack([a, b])
    s = dirmn.mixture(X, range(1, 4), context=ctx, seed=3)
    assert s.ks == [1, 2, 3] and s.k == 2 and s.best is s[2]
    assert list(s.criteria["k"]) == [1, 2, 3]
    assert np.all(np.diff(s.criteria["loglik"]) >= -1e-9)  # grown from k - 1
    one = dirmn.mixture(X, 2, context=ctx, seed=3, grow_from=s[1])
    assert abs(one.loglik - s[2].loglik) < 1e-9
    d = dirmn.mixture(X, [2, 1], objective="dmn", select="laplace", context=ctx)
    assert d.ks == [2, 1] and d.select == "laplace" and d[1].objective_kind == "dmn"
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.mixture(X, [1, 2], select="laplace")
    s.close()
    d.close()
