"""dirmn.regression's covariates on the precision (``precision_design``,
``dirmn_reg_fit``'s options.precision_design, ``dirmn_reg_predict_with_precision``):
the mean/precision model alpha_b = exp(z_b . gamma) softmax(x_b beta).

Every number is checked against an independent reference: the DM log pmf
written here in scipy.special.gammaln, maximised by scipy.optimize (BFGS)
and differentiated by central differences; identities of the model (an
intercept-only z is the fit without one, a reparametrised z the same
optimum, integer weights replicated rows); predictions by hand. Errors carry
0-based positions."""

import math
import re
import sys

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import digamma, gammaln

import dirmn
from refs import fd_hessian

ROWS, V = 120, 4
SEED = 20261208
# Softmax coefficients (reference category 0: its column 0) and the log
# precision's: an intercept and the second group's shift, phi ~ 8 and ~ 48.
BETA = np.array([[0.0, 0.4, -0.3, 0.6], [0.0, -0.5, 0.3, 0.2]])
GAMMA = np.array([math.log(8.0), math.log(48.0 / 8.0)])


def simulate(rows=ROWS, seed=SEED):
    """Counts from DM(phi_b softmax(x_b beta), n_b): Dirichlet as normalised
    gamma draws, then multinomial. Two groups of rows (alternating) with
    precisions 8 and 48; an intercept and a normal covariate on the mean."""
    g = np.random.default_rng(seed)
    group = (np.arange(rows) % 2).astype(float)
    X = np.column_stack([np.ones(rows), g.normal(size=rows)])
    Z = np.column_stack([np.ones(rows), group])
    eta = X @ BETA
    pi = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    alpha = np.exp(Z @ GAMMA)[:, None] * pi
    sizes = g.integers(60, 121, size=rows)
    Y = np.empty((rows, V), dtype=np.int64)
    for b in range(rows):
        d = g.gamma(alpha[b])
        Y[b] = g.multinomial(sizes[b], d / d.sum())
    return Y, X, Z


Y, X, Z = simulate()
P = X.shape[1]


# --- the reference -------------------------------------------------------------

def dm_logpmf(Y, A):
    """log DM(y_b | alpha_b, n_b) of each row, multinomial coefficient included."""
    N, S = Y.sum(axis=1), A.sum(axis=1)
    return (gammaln(N + 1) - gammaln(Y + 1).sum(axis=1) + gammaln(S) - gammaln(N + S)
            + (gammaln(Y + A) - gammaln(A)).sum(axis=1))


def unpack(theta, p, q):
    """beta (p x V, reference column 0) and gamma from the free coefficients,
    in cov_params' order: vec(beta[:, 1:]) (covariate fastest), then gamma."""
    B = np.zeros((p, V))
    B[:, 1:] = np.asarray(theta[:p * (V - 1)]).reshape(p, V - 1, order="F")
    return B, np.asarray(theta[p * (V - 1):])


def alpha_of(B, gamma, X, Z):
    eta = X @ B
    eta = eta - eta.max(axis=1, keepdims=True)
    E = np.exp(eta)
    return np.exp(Z @ gamma)[:, None] * E / E.sum(axis=1, keepdims=True)


def ref_loglik(theta, Y=Y, X=X, Z=Z, w=None):
    B, gamma = unpack(theta, X.shape[1], Z.shape[1])
    rows = dm_logpmf(Y, alpha_of(B, gamma, X, Z))
    return float(rows.sum() if w is None else (w * rows).sum())


def ref_gradient(theta, Y=Y, X=X, Z=Z):
    """The analytic gradient of ref_loglik (digamma, through softmax and exp)."""
    B, gamma = unpack(theta, X.shape[1], Z.shape[1])
    A = alpha_of(B, gamma, X, Z)
    N, S = Y.sum(axis=1), A.sum(axis=1)
    d = (digamma(S) - digamma(N + S))[:, None] + digamma(Y + A) - digamma(A)
    pi = A / S[:, None]
    # d alpha_v / d eta_u = alpha_v (delta_vu - pi_u); d alpha_v / d log phi = alpha_v
    g_eta = A * (d - (pi * d).sum(axis=1, keepdims=True))
    g_beta = (X.T @ g_eta)[:, 1:].ravel(order="F")
    g_gamma = Z.T @ (A * d).sum(axis=1)
    return np.concatenate([g_beta, g_gamma])


def free(r):
    """A fit's free coefficients in cov_params' order (reference category 0)."""
    return np.append(r.params[:, 1:].ravel(order="F"), r.log_precision)


def fit(Z=Z, Y=Y, X=X, **kw):
    kw.setdefault("tolerance", 1e-14)
    return dirmn.regression(Y, X, parametrization="meanprecision", precision_design=Z, **kw)


@pytest.fixture(scope="module")
def fitted():
    with fit() as r:
        yield r


class _Frame:
    """The DataFrame-like protocol the package reads (pandas is optional)."""

    def __init__(self, values, columns):
        self._v = np.asarray(values)
        self.columns = list(columns)
        self.index = list(range(len(self._v)))

    def to_numpy(self):
        return self._v


# --- the reference's own checks --------------------------------------------------

def test_reference_gradient_is_the_derivative_of_the_reference():
    # The analytic gradient (used to drive BFGS below) against central
    # differences of the log pmf, away from any optimum.
    t = np.concatenate([BETA[:, 1:].ravel(order="F"), GAMMA]) + 0.1
    h = 1e-5
    fd = np.array([(ref_loglik(t + e) - ref_loglik(t - e)) / (2 * h)
                   for e in np.eye(t.size) * h])
    assert np.allclose(ref_gradient(t), fd, rtol=1e-6, atol=1e-6)


# --- the fit -----------------------------------------------------------------------

@pytest.mark.parametrize("extra", [False, True], ids=["z=[1,g]", "z=[1,g,u]"])
def test_is_the_maximum_of_an_independent_optimiser(extra):
    # With extra, a continuous precision covariate without effect (q = 3).
    Zq = Z
    if extra:
        Zq = np.column_stack([Z, np.random.default_rng(SEED + 1).normal(size=ROWS)])
    q = Zq.shape[1]
    with fit(Zq) as r:
        assert r.converged and r.hessian_definite
        theta = free(r)
        # dirmn's log-likelihood is the reference's at dirmn's coefficients
        assert abs(r.llf - ref_loglik(theta, Z=Zq)) <= 1e-10 * abs(r.llf)
        # ... where the reference's gradient vanishes
        assert np.max(np.abs(ref_gradient(theta, Z=Zq))) < 1e-5
        # scipy from a perturbed truth finds no higher maximum, and the same one
        truth = np.concatenate([BETA[:, 1:].ravel(order="F"), GAMMA, np.zeros(q - 2)])
        start = truth + np.random.default_rng(SEED + 2).normal(scale=0.3, size=truth.size)
        res = optimize.minimize(lambda t: -ref_loglik(t, Z=Zq), start,
                                jac=lambda t: -ref_gradient(t, Z=Zq), method="BFGS",
                                options={"gtol": 1e-8, "maxiter": 5000})
        theirs = -res.fun
        assert r.llf >= theirs - 1e-6
        assert abs(r.llf - theirs) <= 1e-6 * abs(theirs)
        assert np.allclose(res.x, theta, atol=1e-4)
        # the standard errors: the reference's central-difference Hessian
        cov = np.linalg.inv(-fd_hessian(lambda t: ref_loglik(t, Z=Zq), theta))
        se = np.sqrt(np.diag(cov))
        assert np.max(np.abs(np.sqrt(np.diag(r.cov_params())) / se - 1)) < 1e-3
        assert np.max(np.abs(r.std_error_log_precision / se[-q:] - 1)) < 1e-3
        assert np.max(np.abs(r.bse[:, 1:].ravel(order="F") / se[:-q] - 1)) < 1e-3
        # the gammas' covariance block too (their correlation is not small)
        cg = r.cov_params()[-q:, -q:]
        assert np.allclose(cg, cov[-q:, -q:], rtol=2e-3, atol=1e-3 * np.max(np.abs(cg)))


def test_recovers_the_simulated_precisions(fitted):
    # The two groups' precisions (8 and 48) within three standard errors.
    r = fitted
    assert np.all(np.abs(r.log_precision - GAMMA) < 3 * r.std_error_log_precision)


def test_fields_and_counts(fitted):
    r = fitted
    q = 2
    assert r.parametrization == "meanprecision"
    assert r.parameters == r.df_model == P * (V - 1) + q
    assert r.aic == pytest.approx(-2 * r.llf + 2 * r.parameters, rel=1e-12)
    assert r.bic == pytest.approx(-2 * r.llf + r.parameters * math.log(ROWS), rel=1e-12)
    assert isinstance(r.log_precision, np.ndarray) and r.log_precision.shape == (q,)
    assert r.std_error_log_precision.shape == (q,) and np.all(r.std_error_log_precision > 0)
    # each fitted row's own precision, the sum of its alpha
    assert r.precision.shape == (ROWS,)
    assert np.allclose(r.precision, np.exp(Z @ r.log_precision), rtol=1e-14)
    assert np.allclose(r.precision, r.predict(X, precision_design=Z).sum(axis=1), rtol=1e-12)
    assert r.precision_covariate_names == ["z0", "z1"]
    assert r.param_names == ["v1:x0", "v1:x1", "v2:x0", "v2:x1", "v3:x0", "v3:x1",
                             "precision:z0", "precision:z1"]
    # the covariance: the betas' standard errors, then the gammas' last
    cov = r.cov_params()
    assert cov.shape == (r.parameters, r.parameters)
    d = np.sqrt(np.diag(cov))
    assert np.allclose(d[:-q], r.bse[:, 1:].ravel(order="F"), rtol=1e-12)
    assert np.allclose(d[-q:], r.std_error_log_precision, rtol=1e-12)
    # Wald z and two-sided normal p of the gammas
    z = r.zvalues_log_precision
    assert np.allclose(z, r.log_precision / r.std_error_log_precision, rtol=1e-14)
    assert np.allclose(r.pvalues_log_precision, 2 * stats.norm.sf(np.abs(z)), rtol=1e-10,
                       atol=1e-300)
    # the betas' Wald test (V - 1 df) from the covariance's block
    idx = [k * P + 1 for k in range(V - 1)]
    b = free(r)[idx]
    stat = float(b @ np.linalg.solve(cov[np.ix_(idx, idx)], b))
    assert r.wald_test(1).statistic == pytest.approx(stat, rel=1e-8)


def test_without_a_design_the_fields_keep_their_types():
    with dirmn.regression(Y, X, parametrization="meanprecision") as r:
        assert isinstance(r.log_precision, float) and isinstance(r.precision, float)
        assert isinstance(r.std_error_log_precision, float)
        assert isinstance(r.zvalues_log_precision, float)
        assert r.pvalues_log_precision == pytest.approx(
            2 * stats.norm.sf(abs(r.log_precision / r.std_error_log_precision)), rel=1e-10)
        assert r.precision_covariate_names is None
        assert r.param_names[-1] == "precision:const" and len(r.param_names) == r.parameters
    with dirmn.regression(Y, X) as ll:
        assert ll.zvalues_log_precision is ll.pvalues_log_precision is None
        assert ll.param_names == ["v%d:x%d" % (v, i) for v in range(V) for i in range(P)]


def test_summary_shows_the_gammas(fitted):
    s = fitted.summary()
    assert "Precision covariates:" in s and "log(phi)" in s
    lines = s.splitlines()
    for j, name in enumerate(["z0", "z1"]):
        row = [ln for ln in lines if ln.startswith("  %s " % name)]
        assert len(row) == 1
        assert "%.4f" % fitted.log_precision[j] in row[0]
        assert "%.4f" % fitted.std_error_log_precision[j] in row[0]
    assert re.search(r"Parameters:\s+%d\s" % (P * (V - 1) + 2), s)


# --- identities of the model -------------------------------------------------------

def test_intercept_only_z_is_the_fit_without_one():
    with fit(np.ones((ROWS, 1))) as a, \
            dirmn.regression(Y, X, parametrization="meanprecision", tolerance=1e-14) as b:
        assert abs(a.llf - b.llf) <= 1e-10 * abs(b.llf)
        assert np.allclose(a.params, b.params, rtol=0, atol=1e-7)
        assert a.log_precision.shape == (1,)
        assert abs(a.log_precision[0] - b.log_precision) <= 1e-7
        assert a.std_error_log_precision[0] == pytest.approx(b.std_error_log_precision,
                                                             rel=1e-6)
        assert a.parameters == b.parameters == P * (V - 1) + 1
        assert a.aic == pytest.approx(b.aic, rel=1e-10)
        assert np.allclose(a.bse, b.bse, rtol=1e-6)
        assert np.allclose(a.predict(X[:7], precision_design=np.ones((7, 1))),
                           b.predict(X[:7]), rtol=1e-7)


def test_reparametrised_z_is_the_same_optimum(fitted):
    # [1, g] and [1 - g, g] span the same space: gamma'_0 = gamma_0 (group 0's
    # log precision) and gamma'_1 = gamma_0 + gamma_1 (group 1's).
    g = Z[:, 1]
    with fit(np.column_stack([1 - g, g])) as r:
        assert abs(r.llf - fitted.llf) <= 1e-10 * abs(fitted.llf)
        g0, g1 = fitted.log_precision
        assert r.log_precision[0] == pytest.approx(g0, abs=1e-7)
        assert r.log_precision[1] == pytest.approx(g0 + g1, abs=1e-7)
        assert np.allclose(r.params, fitted.params, atol=1e-7)
        # var(gamma_0 + gamma_1) from the first fit's covariance
        c = fitted.cov_params()[-2:, -2:]
        assert r.std_error_log_precision[1] == pytest.approx(math.sqrt(c.sum()), rel=1e-6)


def test_sum_contrast_is_the_same_fit(fitted):
    with fit(contrast="sum", reference=2) as r:
        assert abs(r.llf - fitted.llf) <= 1e-10 * abs(fitted.llf)
        assert np.allclose(r.log_precision, fitted.log_precision, atol=1e-7)
        assert np.allclose(r.std_error_log_precision, fitted.std_error_log_precision,
                           rtol=1e-6)
        assert r.param_names[:2] == ["v0:x0", "v0:x1"] and r.param_names[-1] == "precision:z1"


def test_integer_weights_are_replicated_rows():
    w = np.random.default_rng(SEED + 3).integers(0, 4, size=ROWS)
    rep = np.repeat(np.arange(ROWS), w)
    with fit(weights=w.astype(float)) as a, fit(Z[rep], Y=Y[rep], X=X[rep]) as b:
        assert a.nobs == b.nobs == w.sum()
        assert abs(a.llf - b.llf) <= 1e-10 * abs(b.llf)
        assert np.allclose(a.params, b.params, rtol=0, atol=1e-7)
        assert np.allclose(a.log_precision, b.log_precision, rtol=0, atol=1e-7)
        assert np.allclose(a.std_error_log_precision, b.std_error_log_precision, rtol=1e-6)
        # the weighted reference at the weighted fit
        assert abs(a.llf - ref_loglik(free(a), w=w)) <= 1e-10 * abs(a.llf)


# --- prediction and simulation -----------------------------------------------------

def test_predict_is_exp_z_gamma_times_softmax(fitted):
    r = fitted
    g = np.random.default_rng(SEED + 4)
    Xn = np.column_stack([np.ones(9), g.normal(size=9)])
    Zn = np.column_stack([np.ones(9), g.uniform(-1, 2, size=9)])
    E = np.exp(Xn @ r.params)
    want = np.exp(Zn @ r.log_precision)[:, None] * E / E.sum(axis=1, keepdims=True)
    assert np.allclose(r.predict(Xn, precision_design=Zn), want, rtol=1e-12, atol=0)
    assert np.allclose(r.predict(Xn, kind="proportion", precision_design=Zn),
                       E / E.sum(axis=1, keepdims=True), rtol=1e-12, atol=0)
    # a Fortran-ordered, strided and integer z are the same z
    wide = np.asfortranarray(np.column_stack([Zn[:, 0], np.zeros(9), Zn[:, 1]]))
    assert np.array_equal(r.predict(Xn, precision_design=wide[:, ::2]),
                          r.predict(Xn, precision_design=Zn))
    Zi = np.column_stack([np.ones(9, dtype=np.int32), np.arange(9, dtype=np.int32) % 3])
    E2 = np.exp(Zi @ r.log_precision)[:, None] * E / E.sum(axis=1, keepdims=True)
    assert np.allclose(r.predict(Xn, precision_design=Zi), E2, rtol=1e-12)


def test_predict_needs_the_z_of_a_fit_with_one(fitted):
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        fitted.predict(X[:3])
    assert e.value.argument == "precision_design" and "precision_design" in e.value.message
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        fitted.predict(X[:3], precision_design=Z[:4])
    assert e.value.argument == "precision_design"
    with pytest.raises(dirmn.InvalidArgumentError) as e:   # q other than the fit's
        fitted.predict(X[:3], precision_design=np.ones((3, 3)))
    assert "3 covariates" in e.value.message
    bad = Z[:5].copy()
    bad[3, 1] = np.inf
    with pytest.raises(dirmn.InvalidParameterError) as e:
        fitted.predict(X[:5], precision_design=bad)
    assert (e.value.row, e.value.column) == (3, 1)
    # ... and a fit without one takes none
    with dirmn.regression(Y, X, parametrization="meanprecision") as r, \
            dirmn.regression(Y, X) as ll:
        for f in (r, ll):
            with pytest.raises(dirmn.InvalidArgumentError) as e:
                f.predict(X[:3], precision_design=np.ones((3, 1)))
            assert e.value.argument == "precision_design"


def test_simulate_uses_the_training_z(fitted):
    totals = Y.sum(axis=1)
    got = fitted.simulate(seed=7)
    want = dirmn.rvs(fitted.predict(X, precision_design=Z), totals, per_row=True, seed=7)
    assert np.array_equal(got, want)
    assert np.array_equal(got.sum(axis=1), totals)


# --- input: layouts, dtypes, frames ------------------------------------------------

def test_layouts_and_dtypes_give_the_same_fit(fitted):
    wide = np.zeros((2 * ROWS, 5))
    wide[::2, 1], wide[::2, 3] = Z[:, 0], Z[:, 1]
    strided = wide[::2, 1::2][:, :2]               # both strides above 1
    assert strided.strides == (2 * 5 * 8, 2 * 8) and np.array_equal(strided, Z)
    for z in (np.asfortranarray(Z), strided, Z.astype(np.int64), Z.astype(np.float32),
              Z.astype(bool), Z.tolist()):
        with fit(z) as r:
            assert abs(r.llf - fitted.llf) <= 1e-12 * abs(fitted.llf)
            assert np.allclose(r.log_precision, fitted.log_precision, rtol=1e-10)
            assert np.allclose(r.params, fitted.params, rtol=1e-10, atol=1e-12)


def test_float64_z_is_read_in_place():
    # What the library is given is the caller's memory (no copy), in either order.
    wide = np.asfortranarray(np.column_stack([Z, Z]))
    for z in (np.asfortranarray(Z), Z, wide[:, 1:3], Z[::-1][::-1]):
        got, rs, cs, _ = sys.modules["dirmn.regression"]._precision_design(z, ROWS)
        assert got.ctypes.data == z.ctypes.data
        assert (rs * 8, cs * 8) == z.strides


def test_frame_names_the_gammas(fitted):
    frame = _Frame(Z, ["const", "group"])
    with fit(frame) as r:
        assert r.precision_covariate_names == ["const", "group"]
        assert r.param_names[-2:] == ["precision:const", "precision:group"]
        assert abs(r.llf - fitted.llf) <= 1e-12 * abs(fitted.llf)
        assert "  group " in r.summary()
        # predict matches the new frame's columns by name, whatever their order
        new = _Frame(Z[:6, ::-1], ["group", "const"])
        assert np.allclose(r.predict(X[:6], precision_design=new),
                           fitted.predict(X[:6], precision_design=Z[:6]), rtol=1e-10)
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            r.predict(X[:6], precision_design=_Frame(Z[:6, :1], ["const"]))
        assert e.value.argument == "precision_design" and "'group'" in e.value.message


def test_pandas_frame(fitted):
    pd = pytest.importorskip("pandas")
    with fit(pd.DataFrame({"const": Z[:, 0], "group": Z[:, 1].astype(int)})) as r:
        assert r.param_names[-2:] == ["precision:const", "precision:group"]
        assert np.allclose(r.log_precision, fitted.log_precision, rtol=1e-10)


# --- errors ------------------------------------------------------------------------

def test_loglinear_takes_no_precision_design():
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.regression(Y, X, precision_design=Z)
    assert e.value.argument == "precision_design" and "log-linear" in e.value.message


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_z_names_row_and_column(value):
    bad = Z.copy()
    bad[17, 1] = value
    with pytest.raises(dirmn.InvalidParameterError) as e:
        fit(bad)
    assert (e.value.row, e.value.column) == (17, 1)
    assert e.value.argument == "precision_design"
    assert "row 17, column 1 (0-based)" in e.value.message


def test_rank_deficient_z_names_the_column():
    # the third column is twice the second: a combination of the ones before it
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        fit(np.column_stack([Z, 2 * Z[:, 1]]))
    assert e.value.argument == "precision_design column" and e.value.index == 2
    # a column constant over the rows with counts is the intercept again
    w = np.where(Z[:, 1] == 1, 0.0, 1.0)
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        fit(weights=w)
    assert e.value.argument == "precision_design column" and e.value.index == 1


def test_bad_shapes():
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        fit(Z[:-1])
    assert e.value.argument == "precision_design"
    for z in (Z[:, 0], np.ones((ROWS, 0))):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            fit(z)
        assert e.value.argument == "precision_design"


def test_a_table_without_overdispersion_is_the_multinomial_limit(fitted):
    # Each row's shares rounded: less spread than any multinomial, so the
    # likelihood rises toward phi -> inf and no finite gamma is the MLE.
    rng = np.random.default_rng(20261209)
    n = 150
    x = rng.standard_normal(n)
    Xn = np.column_stack([np.ones(n), x])
    e = np.exp(np.column_stack([np.zeros(n), 0.4 * x, 0.2 - 0.3 * x]))
    c = np.rint(90 * e[:, 1:] / e.sum(axis=1, keepdims=True)).astype(np.int64)
    Yn = np.column_stack([90 - c.sum(axis=1), c])
    with pytest.warns(dirmn.ConvergenceWarning, match="no overdispersion"):
        r = dirmn.regression(Yn, Xn, parametrization="meanprecision")
    with r:
        assert r.multinomial_limit and not r.converged
        # Its log-likelihood is the multinomial's at its proportions.
        eta = Xn @ r.params
        logp = eta - np.log(np.exp(eta).sum(axis=1, keepdims=True))
        mult = (gammaln(Yn.sum(axis=1) + 1) + (Yn * logp - gammaln(Yn + 1)).sum(axis=1)).sum()
        assert abs(r.llf - mult) < 1e-4
    assert not fitted.multinomial_limit
