"""dirmn.regression (dirmn_reg_*): numbers against independent references --
the DM log-likelihood in scipy.special.gammaln (tests/refs.py, itself checked
against mpmath), its central differences and scipy.optimize -- never against
dirmn itself; weights, layouts and sparse input; errors with 0-based
positions; the handle's lifecycle.

MGLM's rnaseq data (the C tests' reference) is not available to Python: the
comparison with MGLM's printed digits lives in the C suite only."""

import gc
import math
import warnings

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import digamma

import dirmn
from dirmn import _capi
from refs import fd_hessian, loglik_rows, loglik_rows_np

P, V, ROWS = 3, 4, 60


def simulate(rows=ROWS, seed=20260429):
    """An intercept and two normal covariates; counts from a DM (Dirichlet,
    then multinomial) with alpha_bv = exp(x_b . beta_v)."""
    g = np.random.default_rng(seed)
    X = np.column_stack([np.ones(rows), g.normal(size=rows), g.normal(size=rows)])
    B = np.array([[1.0, 0.5, 0.2, 1.5], [0.3, -0.4, 0.0, 0.2], [-0.2, 0.1, 0.5, 0.0]])
    A = np.exp(X @ B)
    N = g.integers(20, 60, size=rows)
    Y = np.array([g.multinomial(N[b], g.dirichlet(A[b])) for b in range(rows)])
    return Y, X


Y, X = simulate()


def ref_loglik(beta_vec, Y=Y, X=X, w=None):
    """The weighted reference log pmf as a function of vec(beta) (F order)."""
    p = X.shape[1]
    B = np.asarray(beta_vec).reshape(p, -1, order="F")
    rows = loglik_rows_np(Y, np.exp(X @ B))
    return float(rows.sum() if w is None else (w * rows).sum())


def ref_gradient(beta_vec, Y=Y, X=X):
    """The analytic gradient of ref_loglik in vec(beta) (digamma)."""
    p = X.shape[1]
    B = np.asarray(beta_vec).reshape(p, -1, order="F")
    A = np.exp(X @ B)
    N, S = Y.sum(axis=1), A.sum(axis=1)
    d = (digamma(S) - digamma(N + S))[:, None] + digamma(Y + A) - digamma(A)
    return (X.T @ (d * A)).ravel(order="F")


def fd_gradient(f, b, h=1e-5):
    g = np.empty_like(b)
    for k in range(b.size):
        e = np.zeros_like(b)
        e[k] = h
        g[k] = (f(b + e) - f(b - e)) / (2 * h)
    return g


def rel(got, want):
    """Largest |got - want| relative to the largest |want|."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.fixture(scope="module")
def fitted():
    with dirmn.Context("cpu") as ctx:
        r = dirmn.regression(Y, X, tolerance=1e-14, context=ctx)
        yield r
        r.close()


# --- 1. the fit against the reference likelihood ------------------------------

def test_reference_is_the_dm_log_pmf():
    A = np.exp(X[:5] @ np.full((P, V), 0.3))
    assert np.allclose(loglik_rows_np(Y[:5], A), [loglik_rows([y], a)[0] for y, a in zip(Y[:5], A)],
                       rtol=1e-13, atol=0)
    Z = np.zeros((1, V))
    assert loglik_rows_np(Z, np.ones(V))[0] == 0.0


def test_shapes_and_counts(fitted):
    r = fitted
    assert r.params.shape == r.bse.shape == (P, V)
    assert r.cov_params().shape == (P * V, P * V)
    assert r.df_model == r.parameters == P * V and r.nobs == ROWS and r.rows == ROWS
    assert r.converged and r.hessian_definite and r.iterations >= 1
    assert r.covariate_names == ["x0", "x1", "x2"] and r.category_names == ["v0", "v1", "v2",
                                                                             "v3"]


def test_llf_is_the_reference_at_params(fitted):
    r = fitted
    want = ref_loglik(r.params.ravel(order="F"))
    assert r.llf == r.loglik
    assert abs(r.llf - want) <= 1e-10 * abs(want)
    k, n = P * V, ROWS
    assert abs(r.aic - (-2 * want + 2 * k)) <= 1e-10 * abs(r.aic)
    assert abs(r.bic - (-2 * want + k * math.log(n))) <= 1e-10 * abs(r.bic)


def test_gradient_vanishes_at_params(fitted):
    b = fitted.params.ravel(order="F")
    g = fd_gradient(ref_loglik, b)
    assert np.max(np.abs(g)) < 1e-5
    assert np.max(np.abs(ref_gradient(b))) < 1e-6
    # The check has teeth: a step of 1e-3 away gives a gradient of order 1e-2.
    assert np.max(np.abs(fd_gradient(ref_loglik, b + 1e-3))) > 1e-3
    assert fitted.gradient_norm < 1e-6


def test_std_errors_from_finite_difference_hessian(fitted):
    r = fitted
    H = fd_hessian(ref_loglik, r.params.ravel(order="F"))
    cov = np.linalg.inv(-H)
    se = np.sqrt(np.diag(cov)).reshape(V, P).T          # vec order back to p x V
    assert np.max(np.abs(r.bse / se - 1)) < 1e-4
    assert rel(r.cov_params(), cov) < 1e-4
    # cov_params is in vec(params) order: its diagonal is bse, column-major.
    assert np.allclose(np.sqrt(np.diag(r.cov_params())), r.bse.ravel(order="F"), rtol=1e-14)
    assert np.allclose(r.zvalues, r.params / se, rtol=1e-4)
    assert r.tvalues is not None and np.array_equal(r.tvalues, r.zvalues)
    assert np.allclose(r.pvalues, 2 * stats.norm.sf(np.abs(r.params / se)), rtol=1e-3)


@pytest.mark.parametrize("start", ["zeros", "perturbed"])
def test_independent_optimiser_reaches_the_same_maximum(fitted, start):
    b = fitted.params.ravel(order="F")
    x0 = np.zeros(P * V) if start == "zeros" else b + 0.2 * np.random.default_rng(3).normal(
        size=P * V)
    res = optimize.minimize(lambda t: -ref_loglik(t), x0, jac=lambda t: -ref_gradient(t),
                            method="BFGS", options={"gtol": 1e-7, "maxiter": 2000})
    theirs = -res.fun
    # dirmn's maximum is as high as scipy's (to 1e-8 relative), or higher.
    assert fitted.llf >= theirs - 1e-8 * abs(theirs)
    assert abs(fitted.llf - theirs) <= 1e-8 * abs(theirs)
    assert np.allclose(res.x, b, atol=1e-3)


def test_default_tolerance_is_close_to_the_maximum(fitted):
    r = dirmn.regression(Y, X)
    assert r.converged and abs(r.llf - fitted.llf) <= 1e-10 * abs(fitted.llf)
    assert np.allclose(r.params, fitted.params, atol=1e-3)
    r.close()


# --- 3. weights, sparse input, layouts ----------------------------------------

def test_integer_weights_equal_replicated_rows(fitted):
    w = np.random.default_rng(11).integers(0, 4, size=ROWS)
    rw = dirmn.regression(Y, X, weights=w, tolerance=1e-14)
    rr = dirmn.regression(np.repeat(Y, w, axis=0), np.repeat(X, w, axis=0), tolerance=1e-14)
    assert rw.nobs == rr.nobs == w.sum() and rw.rows == ROWS
    assert rel(rw.params, rr.params) < 1e-8
    assert abs(rw.llf - rr.llf) <= 1e-8 * abs(rr.llf)
    assert rel(rw.bse, rr.bse) < 1e-8
    # and both are the weighted reference's
    want = ref_loglik(rw.params.ravel(order="F"), w=w)
    assert abs(rw.llf - want) <= 1e-10 * abs(want)
    assert rel(rw.params, fitted.params) > 1e-3        # the weights did change the fit


def test_sparse_csr_counts_equal_dense(fitted):
    sp = pytest.importorskip("scipy.sparse")
    r = dirmn.regression(sp.csr_matrix(Y), X, tolerance=1e-14)
    assert rel(r.params, fitted.params) < 1e-10 and rel(r.bse, fitted.bse) < 1e-10
    assert abs(r.llf - fitted.llf) <= 1e-12 * abs(fitted.llf)
    r = dirmn.regression(sp.csc_matrix(Y.astype(np.float32)), X, tolerance=1e-14)
    assert rel(r.params, fitted.params) < 1e-10


@pytest.mark.parametrize("layout", ["fortran", "strided", "int", "counts_f"])
def test_layouts(fitted, layout):
    Yl, Xl = Y, X
    if layout == "fortran":
        Xl = np.asfortranarray(X)
    elif layout == "strided":
        big = np.zeros((2 * ROWS, 2 * P))
        big[::2, ::2] = X
        Xl = big[::2, ::2]
        assert not Xl.flags.c_contiguous and not Xl.flags.f_contiguous
    elif layout == "int":
        Yl = Y.astype(np.uint16)
        Xl = np.round(X * 100).astype(np.int64) / 100.0   # rounded design, own fit below
    else:
        Yl = np.asfortranarray(Y.astype(np.int32))[:, :]
    r = dirmn.regression(Yl, Xl, tolerance=1e-14)
    want = ref_loglik(r.params.ravel(order="F"), Y=np.asarray(Yl), X=np.asarray(Xl))
    assert abs(r.llf - want) <= 1e-10 * abs(want)
    if layout != "int":
        assert rel(r.params, fitted.params) < 1e-10


def test_counts_object_and_names():
    names = ["a", "b", "c", "d"]
    with dirmn.Counts(Y, column_names=names) as c:
        r = dirmn.regression(c, X, covariate_names=["const", "u", "w"])
    assert r.category_names == names and r.covariate_names == ["const", "u", "w"]
    assert r.wald_test("u") == r.wald_test(1)
    s = r.summary()
    assert "category c" in s and "  u " in s and "Wald test" in s
    with pytest.raises(dirmn.DimensionMismatchError):
        dirmn.regression(Y, X, covariate_names=["only", "two"])


class _Frame:
    """The DataFrame-like protocol the package reads (pandas is optional)."""

    def __init__(self, values, columns, index=None):
        self._v = np.asarray(values)
        self.columns = list(columns)
        self.index = list(range(len(self._v))) if index is None else list(index)

    def to_numpy(self):
        return self._v


class _AnnData:
    def __init__(self, X, obs_names, var_names):
        self.X, self.obs_names, self.var_names = X, obs_names, var_names


def test_frame_design_and_anndata_counts(fitted):
    sp = pytest.importorskip("scipy.sparse")
    ad = _AnnData(sp.csr_matrix(Y), ["s%d" % i for i in range(ROWS)], ["A", "B", "C", "D"])
    r = dirmn.regression(ad, _Frame(X, ["Intercept", "age", "dose"]), tolerance=1e-14)
    assert r.covariate_names == ["Intercept", "age", "dose"]
    assert r.category_names == ["A", "B", "C", "D"]
    assert rel(r.params, fitted.params) < 1e-10
    # predict matches a frame's columns by name, whatever their order
    shuffled = _Frame(X[:5, ::-1], ["dose", "age", "Intercept"])
    assert np.allclose(r.predict(shuffled), np.exp(X[:5] @ r.params), rtol=1e-12)
    with pytest.raises(dirmn.InvalidArgumentError):
        r.predict(_Frame(X[:5, :2], ["Intercept", "age"]))


def test_pandas_frames(fitted):
    pd = pytest.importorskip("pandas")
    r = dirmn.regression(pd.DataFrame(Y, columns=list("ABCD")),
                         pd.DataFrame(X, columns=["c", "x", "z"]), tolerance=1e-14)
    assert rel(r.params, fitted.params) < 1e-10
    df = r.params_frame()
    assert list(df.index) == ["c", "x", "z"] and list(df.columns) == list("ABCD")
    assert np.array_equal(df.to_numpy(), r.params)


# --- 4. predict and the Wald test ----------------------------------------------

def test_predict(fitted):
    r = fitted
    alpha = r.predict(X)
    assert np.allclose(alpha, np.exp(X @ r.params), rtol=1e-13, atol=0)
    prop = r.predict(X, kind="proportion")
    assert np.allclose(prop.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert np.allclose(prop, alpha / alpha.sum(axis=1, keepdims=True), rtol=1e-14)
    new = np.array([[1.0, 2.0, -1.0], [1.0, 0.0, 0.0]])
    assert np.allclose(r.predict(np.asfortranarray(new)), np.exp(new @ r.params), rtol=1e-13)
    assert r.predict(np.empty((0, P))).shape == (0, V)
    with pytest.raises(dirmn.InvalidArgumentError):
        r.predict(X, kind="mean")
    with pytest.raises(dirmn.InvalidArgumentError):
        r.predict(X[:, :2])
    bad = X[:4].copy()
    bad[2, 1] = np.inf
    with pytest.raises(dirmn.InvalidParameterError) as e:
        r.predict(bad)
    assert (e.value.row, e.value.column) == (2, 1)


def test_wald_test_against_cov_params(fitted):
    r = fitted
    cov = r.cov_params()
    for i in range(P):
        idx = [v * P + i for v in range(V)]
        b = r.params[i]
        stat = float(b @ np.linalg.solve(cov[np.ix_(idx, idx)], b))
        t = r.wald_test(i)
        assert abs(t.statistic - stat) <= 1e-10 * stat and t.df == V
        assert math.isclose(t.pvalue, stats.chi2.sf(stat, V), rel_tol=1e-8, abs_tol=1e-300)
        s, df, p = r.wald_test(r.covariate_names[i])        # unpacks
        assert (s, df, p) == tuple(t)
    for bad in (-1, P, 1.0, True, "nope"):
        with pytest.raises(dirmn.InvalidArgumentError):
            r.wald_test(bad)


def test_summary_and_repr(fitted):
    s = fitted.summary()
    assert isinstance(s, str) and s.count("category v") == V
    for v in range(V):
        assert "category v%d" % v in s
    assert "P>|z|" in s and "Wald test" in s and ("%.6g" % fitted.llf) in s
    assert "%.4f" % fitted.params[1, 2] in s
    assert "RegressionResult" in repr(fitted) and "covariates=3" in repr(fitted)


# --- 5. errors ------------------------------------------------------------------

def test_rank_deficient_design_names_the_covariate():
    Xd = np.column_stack([X, X[:, 1]])                   # covariate 3 repeats covariate 1
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.regression(Y, Xd)
    assert type(e.value) is dirmn.InvalidArgumentError
    assert e.value.status == "DIRMN_ERROR_INVALID_ARGUMENT"
    assert (e.value.argument, e.value.index, e.value.row) == ("x column", 3, None)
    assert "index 3 (0-based)" in e.value.message


def test_nan_in_design_names_row_and_column():
    Xn = X.copy()
    Xn[7, 2] = np.nan
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.regression(Y, np.asfortranarray(Xn))
    assert e.value.status == "DIRMN_ERROR_INVALID_PARAMETER"
    assert (e.value.row, e.value.column, e.value.argument) == (7, 2, "x")


def test_row_mismatch():
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        dirmn.regression(Y, X[:-1])
    assert e.value.status == "DIRMN_ERROR_DIMENSION_MISMATCH"
    with pytest.raises(dirmn.DimensionMismatchError):
        dirmn.regression(Y, X, weights=np.ones(ROWS + 1))


def test_other_bad_input():
    Yz = Y.copy()
    Yz[:, 2] = 0                                         # a category without counts
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.regression(Yz, X)
    assert (e.value.argument, e.value.index) == ("column", 2)
    w = np.ones(ROWS)
    w[4] = -1.0
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.regression(Y, X, weights=w)
    assert e.value.row == 4
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression(Y, X[:, 0])                     # not 2-D
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression(Y, X, tolerance=-1.0)
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.regression(Y, X, max_iterations=1.5)


def test_newton_system_beyond_max_system_is_refused():
    # One count per row on the diagonal, an intercept only: 8001 coefficients
    # and 8001 rows with counts, so the system is beyond 8000 unknowns in
    # either form. Refused before any work is done.
    sp = pytest.importorskip("scipy.sparse")
    n = _capi.DIRMN_REG_MAX_SYSTEM + 1
    assert n == 8001
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.regression(sp.identity(n, dtype=np.int64, format="csr"), np.ones((n, 1)))
    assert e.value.status == "DIRMN_ERROR_INVALID_ARGUMENT"
    assert "DIRMN_REG_MAX_SYSTEM" in e.value.message and "8001 coefficients" in e.value.message
    # Fewer rows than coefficients are solved in the rows' dimension: 751
    # covariates on 60 rows is refused for too few rows, not for its size.
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.regression(Y, np.random.default_rng(1).normal(size=(ROWS, 751)))
    assert "rows with counts" in e.value.message
    assert "DIRMN_REG_MAX_SYSTEM" not in e.value.message


def test_wide_fit_keeps_no_covariance():
    # 40 rows x 2600 categories x 2 covariates = 5200 coefficients, above
    # REG_VCOV_MAX_COEFFICIENTS: solved through Woodbury in the rows'
    # dimension; the standard errors and Wald tests come from the library,
    # the covariance matrix is not kept.
    from dirmn.regression import REG_VCOV_MAX_COEFFICIENTS
    assert REG_VCOV_MAX_COEFFICIENTS == 5000
    g = np.random.default_rng(7)
    n, nv = 40, 2600
    Xw = np.column_stack([np.ones(n), g.normal(size=n)])
    Bw = np.vstack([g.normal(0, 0.3, nv), g.normal(0, 0.3, nv)])
    Aw = np.exp(Xw @ Bw)
    Yw = np.array([g.multinomial(3 * nv, g.dirichlet(Aw[b])) for b in range(n)])
    assert Yw.sum(axis=0).min() > 0
    r = dirmn.regression(Yw, Xw)
    assert r.converged and r.hessian_definite
    assert r.params.shape == r.bse.shape == (2, nv) and r.parameters == 2 * nv
    assert np.all(np.isfinite(r.bse)) and np.all(r.bse > 0)
    assert np.all(np.isfinite(r.pvalues)) and r.zvalues.shape == (2, nv)
    # The simulated coefficients are recovered to within a few standard errors.
    assert np.mean(np.abs(r.params - Bw) / r.bse) < 2
    for i in range(2):
        t = r.wald_test(i)
        assert t.df == nv and t.statistic > 0 and 0 <= t.pvalue <= 1
    with pytest.raises(dirmn.NotSupportedError) as e:
        r.cov_params()
    assert e.value.status == "DIRMN_ERROR_NOT_SUPPORTED"
    assert "covariance of the 5200 coefficients is not kept above 5000" in e.value.message
    assert "standard errors" in e.value.message and "Wald" in e.value.message
    assert "Wald test" in r.summary()
    assert r.predict(Xw[:3]).shape == (3, nv)
    r.close()
    # At 5000 coefficients the matrix is kept, and bse is its diagonal.
    r = dirmn.regression(Yw[:, :2500], Xw)
    assert r.parameters == REG_VCOV_MAX_COEFFICIENTS
    cov = r.cov_params()
    assert cov.shape == (5000, 5000)
    assert np.allclose(np.sqrt(np.diag(cov)), r.bse.ravel(order="F"), rtol=1e-12)
    r.close()


# --- convergence, progress, lifecycle ------------------------------------------

def test_no_convergence_warns():
    with pytest.warns(dirmn.ConvergenceWarning):
        r = dirmn.regression(Y, X, max_iterations=1)
    assert not r.converged and r.iterations == 1


def test_progress_and_cancel():
    seen = []
    r = dirmn.regression(Y, X, progress=lambda i, ll, g: seen.append((i, ll, g)))
    assert [s[0] for s in seen] == list(range(1, r.iterations + 1))
    assert seen[-1][1] == pytest.approx(r.llf, rel=1e-12)
    assert all(b[1] >= a[1] for a, b in zip(seen, seen[1:]))   # safeguarded: never falls
    with pytest.raises(dirmn.CancelledError):
        dirmn.regression(Y, X, progress=lambda i, ll, g: True)

    class Boom(Exception):
        pass

    def fail(i, ll, g):
        raise Boom()

    with pytest.raises(Boom):
        dirmn.regression(Y, X, progress=fail)


def test_handle_freed_once(monkeypatch):
    freed = []
    real = _capi.dirmn_reg_destroy
    monkeypatch.setattr(_capi, "dirmn_reg_destroy", lambda p: freed.append(p) or real(p))
    with dirmn.regression(Y, X) as r:
        params = r.params.copy()
    r.close()
    assert r.closed and len(freed) == 1 and "(closed)" in repr(r)
    assert np.array_equal(r.params, params) and r.wald_test(0).df == V   # values stay
    with pytest.raises(dirmn.ClosedHandleError):
        r.predict(X)
    r = dirmn.regression(Y, X)                           # freed by collection
    del r
    gc.collect()
    assert len(freed) == 2
    ctx = dirmn.Context("cpu")
    r = dirmn.regression(Y, X, context=ctx)
    ctx.close()
    assert np.allclose(r.predict(X[:2]), np.exp(X[:2] @ r.params), rtol=1e-13)
    r.close()
    assert len(freed) == 3


def test_no_warning_on_a_good_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dirmn.regression(Y, X).close()


# --- 6. the mean/precision parametrisation ---------------------------------------
#
# alpha_b = phi softmax(x_b beta), one precision phi = exp(gamma) for every
# row; the free coefficients are vec(beta) without the reference (or
# implied) category's column, then gamma. The reference below is written
# from the model in scipy.special.gammaln (refs.loglik_rows_np).

MP_P, MP_V, MP_ROWS = 2, 4, 60


def simulate_mp(rows=MP_ROWS, seed=20261207, phi=15.0):
    """An intercept and a normal covariate; proportions softmax(x beta), precision phi."""
    g = np.random.default_rng(seed)
    Xm = np.column_stack([np.ones(rows), g.normal(size=rows)])
    B = np.array([[0.0, 0.4, -0.3, 0.6], [0.0, -0.5, 0.3, 0.2]])
    E = np.exp(Xm @ B)
    A = phi * E / E.sum(axis=1, keepdims=True)
    N = g.integers(20, 60, size=rows)
    Ym = np.array([g.multinomial(N[b], g.dirichlet(A[b])) for b in range(rows)])
    return Ym, Xm


YM, XM = simulate_mp()


def mp_beta(theta, p, V, ref=0, sum_to_zero=False):
    """p × V beta from the free coefficients (gamma, last, left out)."""
    free = np.asarray(theta[:-1]).reshape(p, V - 1, order="F")
    B = np.insert(free, ref, 0.0, axis=1)
    if sum_to_zero:
        B[:, ref] = -free.sum(axis=1)
    return B


def mp_loglik(theta, Y=YM, X=XM, ref=0, sum_to_zero=False):
    """The reference log pmf of the mean/precision model at its free coefficients."""
    B = mp_beta(theta, X.shape[1], Y.shape[1], ref, sum_to_zero)
    eta = X @ B
    eta -= eta.max(axis=1, keepdims=True)
    E = np.exp(eta)
    A = np.exp(theta[-1]) * E / E.sum(axis=1, keepdims=True)
    return float(loglik_rows_np(Y, A).sum())


def mp_free(r):
    """A fit's free coefficients in cov_params' order."""
    return np.append(np.delete(r.params, r.reference, axis=1).ravel(order="F"),
                     r.log_precision)


@pytest.fixture(scope="module")
def mp_fitted():
    with dirmn.Context("cpu") as ctx:
        r = dirmn.regression(YM, XM, parametrization="meanprecision", tolerance=1e-14,
                             context=ctx)
        yield r
        r.close()


def test_mp_fields(mp_fitted):
    r = mp_fitted
    assert r.parametrization == "meanprecision" and r.contrast == "reference"
    assert r.reference == 0
    assert r.converged and r.hessian_definite
    assert r.parameters == r.df_model == MP_P * (MP_V - 1) + 1
    assert r.params.shape == r.bse.shape == (MP_P, MP_V)
    assert np.all(r.params[:, 0] == 0) and np.all(r.bse[:, 0] == 0)
    assert np.all(r.bse[:, 1:] > 0)
    assert r.precision == pytest.approx(math.exp(r.log_precision), rel=1e-15)
    assert r.std_error_log_precision > 0
    assert r.cov_params().shape == (r.parameters, r.parameters)
    # The covariance's diagonal: bse of the free columns, then gamma's.
    d = np.sqrt(np.diag(r.cov_params()))
    assert np.allclose(d[:-1], r.bse[:, 1:].ravel(order="F"), rtol=1e-12)
    assert d[-1] == pytest.approx(r.std_error_log_precision, rel=1e-12)
    # The reference column's z and p are NaN (fixed), without a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z, pv = r.zvalues, r.pvalues
    assert np.all(np.isnan(z[:, 0])) and np.all(np.isfinite(z[:, 1:]))
    assert np.all(np.isnan(pv[:, 0])) and np.all((pv[:, 1:] >= 0) & (pv[:, 1:] <= 1))
    s = r.summary()
    assert "meanprecision" in s and "log(phi)" in s and "the reference" in s
    assert "%.4f" % r.log_precision in s
    assert "meanprecision" in repr(r)
    # A log-linear fit has none of it.
    with dirmn.regression(YM, XM) as ll:
        assert ll.parametrization == "loglinear"
        assert ll.contrast is ll.reference is ll.precision is None
        assert ll.log_precision is ll.std_error_log_precision is None
        assert ll.parameters == MP_P * MP_V


def test_mp_intercept_only_is_the_shared_alpha_fit():
    f = dirmn.fit(YM, tolerance=1e-14)
    with dirmn.regression(YM, np.ones((MP_ROWS, 1)), parametrization="meanprecision",
                          tolerance=1e-14) as r:
        assert abs(r.llf - f.loglik) <= 1e-10 * abs(f.loglik)
        assert r.parameters == MP_V and r.nobs == f.nobs
        alpha = r.predict(np.ones((3, 1)))
        assert np.allclose(alpha, f.alpha[None, :], rtol=1e-6, atol=0)
        assert r.precision == pytest.approx(f.precision, rel=1e-6)
        # the proportions are the softmax of the intercepts
        e = np.exp(r.params[0])
        assert np.allclose(alpha[0] / r.precision, e / e.sum(), rtol=1e-12)


def test_mp_sum_to_zero_is_the_same_fit(mp_fitted):
    r = mp_fitted
    with dirmn.regression(YM, XM, parametrization="meanprecision", contrast="sum",
                          reference=3, tolerance=1e-14) as z:
        assert (z.contrast, z.reference) == ("sum", 3)
        assert abs(z.llf - r.llf) <= 1e-10 * abs(r.llf)
        assert z.parameters == r.parameters
        assert np.allclose(z.params.sum(axis=1), 0, atol=1e-12)
        # betas differing by the per-covariate mean
        assert np.allclose(z.params, r.params - r.params.mean(axis=1, keepdims=True),
                           atol=1e-7)
        for i in range(MP_P):
            a, b = r.wald_test(i), z.wald_test(i)
            assert abs(a.statistic - b.statistic) <= 1e-7 * abs(a.statistic)
            assert a.df == b.df == MP_V - 1
        assert z.log_precision == pytest.approx(r.log_precision, rel=1e-9)
        assert np.allclose(z.predict(XM[:5]), r.predict(XM[:5]), rtol=1e-8)
        # The implied category's standard error: from the covariance of the sum.
        cov = z.cov_params()
        for i in range(MP_P):
            idx = [k * MP_P + i for k in range(MP_V - 1)]
            assert z.bse[i, 3] == pytest.approx(math.sqrt(cov[np.ix_(idx, idx)].sum()),
                                                rel=1e-10)
        assert "(implied)" in z.summary()
    # A reference given by name
    names = ["a", "b", "c", "d"]
    with dirmn.regression(dirmn.Counts(YM, column_names=names), XM,
                          parametrization="meanprecision", reference="c",
                          tolerance=1e-14) as n:
        assert n.reference == 2 and np.all(n.params[:, 2] == 0)
        assert abs(n.llf - r.llf) <= 1e-10 * abs(r.llf)


def test_mp_is_the_maximum_of_an_independent_optimiser(mp_fitted):
    r = mp_fitted
    theta = mp_free(r)
    assert abs(r.llf - mp_loglik(theta)) <= 1e-10 * abs(r.llf)
    assert abs(r.aic - (-2 * r.llf + 2 * r.parameters)) <= 1e-10 * abs(r.aic)
    res = optimize.minimize(lambda t: -mp_loglik(t), np.zeros(theta.size), method="BFGS",
                            options={"gtol": 1e-7, "maxiter": 2000})
    theirs = -res.fun
    assert r.llf >= theirs - 1e-6
    assert np.allclose(res.x, theta, atol=1e-3)
    # the covariance is the inverse of the reference's finite-difference Hessian
    cov = np.linalg.inv(-fd_hessian(mp_loglik, theta))
    assert np.max(np.abs(np.sqrt(np.diag(r.cov_params())) / np.sqrt(np.diag(cov)) - 1)) < 1e-3
    # the Wald test of covariate 1, over its V - 1 free betas
    idx = [k * MP_P + 1 for k in range(MP_V - 1)]
    b = theta[idx]
    stat = float(b @ np.linalg.solve(cov[np.ix_(idx, idx)], b))
    t = r.wald_test(1)
    assert t.df == MP_V - 1 and t.statistic == pytest.approx(stat, rel=1e-3)
    assert t.pvalue == pytest.approx(stats.chi2.sf(t.statistic, MP_V - 1), rel=1e-8)


def test_mp_predict(mp_fitted):
    r = mp_fitted
    eta = XM @ r.params
    E = np.exp(eta)
    want = r.precision * E / E.sum(axis=1, keepdims=True)
    assert np.allclose(r.predict(XM), want, rtol=1e-12)
    assert np.allclose(r.predict(XM).sum(axis=1), r.precision, rtol=1e-12)
    assert np.allclose(r.predict(XM, kind="proportion"), want / r.precision, rtol=1e-12)


def test_mp_likelihood_ratio_of_two_groups():
    # An intercept alone against two groups: V - 1 more free coefficients.
    group = (np.arange(MP_ROWS) % 2).astype(float)
    X2 = np.column_stack([np.ones(MP_ROWS), group])
    with dirmn.regression(YM, X2[:, :1], parametrization="meanprecision") as r0, \
            dirmn.regression(YM, X2, parametrization="meanprecision") as r1:
        df = r1.parameters - r0.parameters
        assert df == MP_V - 1
        lr = 2 * (r1.llf - r0.llf)
        assert lr >= -1e-8
        assert 0 <= stats.chi2.sf(lr, df) <= 1
        assert r1.wald_test(1).df == df


def test_mp_bad_options():
    for kw, arg in ((dict(parametrization="mean_precision"), "parametrization"),
                    (dict(parametrization=None), "parametrization"),
                    (dict(parametrization="meanprecision", contrast="helmert"), "contrast"),
                    (dict(parametrization="meanprecision", reference=MP_V), "reference"),
                    (dict(parametrization="meanprecision", reference=-1), "reference"),
                    (dict(parametrization="meanprecision", reference="nope"), "reference"),
                    (dict(parametrization="meanprecision", reference=1.0), "reference")):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.regression(YM, XM, **kw)
        assert e.value.argument == arg
        assert repr(list(kw.values())[-1]) in e.value.message or "= %s" % list(
            kw.values())[-1] in e.value.message


def test_mp_covariance_limit_counts_the_free_coefficients(monkeypatch):
    # The kept covariance's limit is on the free coefficients (7 for the
    # mean/precision model here, 8 for the log-linear one), read at each fit.
    import sys
    monkeypatch.setattr(sys.modules["dirmn.regression"], "REG_VCOV_MAX_COEFFICIENTS",
                        MP_P * (MP_V - 1) + 1)
    with dirmn.regression(YM, XM, parametrization="meanprecision") as m, \
            dirmn.regression(YM, XM) as ll:
        assert m.cov_params().shape == (7, 7)
        with pytest.raises(dirmn.NotSupportedError) as e:
            ll.cov_params()
        assert "covariance of the 8 coefficients is not kept above 7" in e.value.message
        assert np.all(np.isfinite(ll.bse)) and ll.wald_test(1).df == MP_V
