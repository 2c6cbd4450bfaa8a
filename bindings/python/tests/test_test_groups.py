"""dirmn.test_groups (issue #30): the likelihood-ratio test of one DM for all
rows against one per group, against the package's single-alpha fit of each
row subset (dirmn.fit: another path through the library) and scipy's
chi-square tail; HMP's Xmcupo; HMP's Xoc (against HMP 2.0.1's values and a
scipy fit of the shared-precision null); and dirmn.test_proportions (HMP's
Xsc.onesample) against HMP 2.0.1's values."""

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
import scipy.special
import scipy.stats

import dirmn
from conftest import repo_path

ALPHA = np.array([2.0, 3.0, 1.0, 4.0, 0.5])


def reference(X, labels):
    """statistic, df, loglik_null, loglik_groups from dirmn.fit on row subsets.

    ``labels`` hold None for rows left out; groups whose rows have no
    counts are not groups; P counts the columns with counts in the rows
    tested."""
    keep = np.array([g is not None for g in labels])
    Xk = X[keep]
    lab = [g for g in labels if g is not None]
    groups = []
    for g in dict.fromkeys(lab):
        rows = Xk[np.array([v == g for v in lab])]
        if rows.sum() > 0:
            groups.append(rows)
    null = dirmn.fit(Xk).loglik
    per = sum(dirmn.fit(rows).loglik for rows in groups)
    P = int(np.count_nonzero(Xk.sum(axis=0)))
    return 2.0 * (per - null), (len(groups) - 1) * P, null, per


def table(seed=1):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 80, size=45)
    return dirmn.rvs(ALPHA, sizes, seed=seed)


def test_statistic_is_the_fits_likelihood_ratio():
    X = table(1)
    labels = ["a"] * 15 + ["b"] * 15 + ["c"] * 15
    r = dirmn.test_groups(X, labels)
    stat, df, null, per = reference(X, labels)
    assert isinstance(r, dirmn.TestGroupsResult)
    assert r.groups == 3 and r.categories == 5 and r.converged
    assert r.df == df == 10
    np.testing.assert_allclose(r.loglik_null, null, rtol=1e-9)
    np.testing.assert_allclose(r.loglik_groups, per, rtol=1e-9)
    assert abs(r.statistic - stat) <= 1e-7 * abs(null)
    assert r.statistic >= 0
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(r.statistic, r.df), rtol=1e-10)
    assert r.bootstrap == 0 and r.pvalue_bootstrap == 1.0
    assert r.group == ["a", "b", "c"]
    s, p = r                                    # scipy's unpacking
    assert (s, p) == (r.statistic, r.pvalue)


def test_rows_left_out_and_labels_of_any_kind():
    X = table(2)
    labels = [None if b % 7 == 3 else ("x" if b % 2 else "y") for b in range(45)]
    r = dirmn.test_groups(X, labels)
    stat, df, null, per = reference(X, labels)
    assert r.df == df
    np.testing.assert_allclose(r.loglik_null, null, rtol=1e-9)
    assert abs(r.statistic - stat) <= 1e-7 * abs(null)
    # The same as integer codes with -1, NaN in a float array, pandas-style
    # missing values in an object array.
    codes = np.array([-1 if g is None else (0 if g == "x" else 1) for g in labels])
    floats = np.where(codes < 0, np.nan, codes.astype(np.float64))
    objs = np.array([float("nan") if g is None else g for g in labels], dtype=object)
    for groups in (codes, floats, objs, list(codes)):
        q = dirmn.test_groups(X, groups)
        assert (q.statistic, q.df, q.pvalue) == (r.statistic, r.df, r.pvalue)
    assert dirmn.test_groups(X, codes).group == [1, 0]     # order of first appearance


def test_a_group_without_counts_is_not_counted():
    X = table(3)
    X[40:] = 0
    labels = ["a"] * 20 + ["b"] * 20 + ["c"] * 5
    r = dirmn.test_groups(X, labels)
    stat, df, null, per = reference(X, labels)
    assert r.groups == 2 and r.df == df == 5
    assert abs(r.statistic - stat) <= 1e-7 * abs(null)


def test_categories_count_the_columns_with_counts():
    X = table(4)
    X[:, 1] = 0
    labels = ["a"] * 22 + ["b"] * 23
    r = dirmn.test_groups(X, labels)
    stat, df, null, per = reference(X, labels)
    assert r.categories == 4 and r.df == df == 4
    assert abs(r.statistic - stat) <= 1e-7 * abs(null)
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(stat, 4), rtol=1e-6)


def test_inputs_of_every_kind_agree(ctx):
    X = table(5)
    labels = np.repeat(["u", "v", "w"], 15)
    r = dirmn.test_groups(X, labels)

    class AnnDataLike:
        def __init__(self, X):
            self.X = X
            self.obs_names = ["r%d" % i for i in range(X.shape[0])]
            self.var_names = ["c%d" % j for j in range(X.shape[1])]

    with dirmn.Counts(X, context=ctx) as c:
        others = [sp.csr_matrix(X), sp.csc_matrix(X), AnnDataLike(X), c, X.astype(np.float32)]
        for x in others:
            q = dirmn.test_groups(x, labels)
            assert abs(q.statistic - r.statistic) <= 1e-9 * abs(r.loglik_null)
            assert q.df == r.df


def test_clearly_different_groups():
    a = dirmn.rvs([10.0, 1.0, 1.0, 3.0], 60, 20, seed=1)
    b = dirmn.rvs([1.0, 1.0, 10.0, 3.0], 60, 20, seed=2)
    X = np.vstack([a, b])
    r = dirmn.test_groups(X, [0] * 20 + [1] * 20, bootstrap=49, seed=3)
    assert r.pvalue < 1e-12
    assert r.pvalue_bootstrap == pytest.approx(1 / 50)


def test_same_distribution_groups_are_not_rejected():
    X = table(6)
    r = dirmn.test_groups(X, ["a", "b"] * 22 + ["a"])
    assert r.pvalue > 1e-3


def test_bootstrap_pvalue():
    X = table(7)
    labels = ["a"] * 15 + ["b"] * 15 + ["c"] * 15
    B = 39
    r = dirmn.test_groups(X, labels, bootstrap=B, seed=11)
    assert r.bootstrap == B
    assert 1 / (B + 1) <= r.pvalue_bootstrap <= 1
    k = r.pvalue_bootstrap * (B + 1)
    assert abs(k - round(k)) < 1e-9                  # (1 + #{T* >= T}) / (1 + B)
    again = dirmn.test_groups(X, labels, bootstrap=B, seed=11)
    assert again.pvalue_bootstrap == r.pvalue_bootstrap
    # The bootstrap does not change the observed statistic.
    plain = dirmn.test_groups(X, labels)
    assert plain.statistic == r.statistic and plain.pvalue == r.pvalue
    # A Generator gives a seed too, reproducibly.
    g1 = dirmn.test_groups(X, labels, bootstrap=B, seed=np.random.default_rng(1))
    g2 = dirmn.test_groups(X, labels, bootstrap=B, seed=np.random.default_rng(1))
    assert g1.pvalue_bootstrap == g2.pvalue_bootstrap


def test_bootstrap_pvalues_differ_with_the_seed():
    X = table(8)
    labels = ["a"] * 22 + ["b"] * 23
    ps = {dirmn.test_groups(X, labels, bootstrap=39, seed=s).pvalue_bootstrap
          for s in range(6)}
    assert len(ps) > 1


def test_options_reach_the_fits():
    X = table(9)
    labels = ["a"] * 22 + ["b"] * 23
    with pytest.warns(dirmn.ConvergenceWarning):
        r = dirmn.test_groups(X, labels, max_iterations=1)
    assert not r.converged
    loose = dirmn.test_groups(X, labels, tolerance=1e-4)
    assert loose.converged


def test_bad_input_is_named():
    X = table(10)
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        dirmn.test_groups(X, ["a", "b"] * 10)
    assert e.value.argument == "groups"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.test_groups(X, ["a"] * 45)
    assert e.value.argument == "groups"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.test_groups(X, [None] * 45)
    assert e.value.argument == "groups"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.test_groups(X, "ab" * 22 + "a")
    assert e.value.argument == "groups"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.test_groups(X, [["a"]] * 45)            # unhashable labels
    assert e.value.argument == "groups"
    for bad in (-1, 2.5, True):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.test_groups(X, ["a", "b"] * 22 + ["a"], bootstrap=bad)
        assert e.value.argument == "bootstrap"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.test_groups(X, ["a", "b"] * 22 + ["a"], seed=-5)
    assert e.value.argument == "seed"
    # Two groups, but one has no counts: nothing to compare (the library's check).
    Y = X.copy()
    Y[:5] = 0
    with pytest.raises(dirmn.InvalidArgumentError):
        dirmn.test_groups(Y, ["z"] * 5 + ["y"] * 40)
    with pytest.raises(dirmn.InvalidCountsError):
        dirmn.test_groups(-X, ["a", "b"] * 22 + ["a"])


def test_not_collected_as_a_test():
    # Its name starts with "test": pytest must not run it when imported.
    assert dirmn.test_groups.__test__ is False and dirmn.TestGroupsResult.__test__ is False


def hmp(*names):
    """HMP 2.0.1's tables (the repository's tests/data: samples are rows, 21
    taxa) stacked, and each row's table name."""
    tabs = [np.loadtxt(repo_path("tests", "data", "hmp_%s.csv" % n), delimiter=",",
                       skiprows=1, usecols=range(1, 22)).astype(np.int64) for n in names]
    return np.vstack(tabs), [n for n, t in zip(names, tabs) for _ in range(t.shape[0])]


def test_xmcupo_is_hmps_on_saliva_throat_and_tonsils():
    X, g = hmp("saliva", "throat", "tonsils")
    assert X.shape == (70, 21)
    r = dirmn.test_groups(X, g, statistic="xmcupo")
    assert r.statistic_kind == "xmcupo"
    # HMP 2.0.1: Xmcupo.sevsample(list(saliva, throat, tonsils))
    assert r.statistic == pytest.approx(150.443851750275, rel=1e-9, abs=0)
    assert r.df == (3 - 1) * (21 - 1)
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(r.statistic, 40), rtol=1e-9)
    # The log-likelihoods are still the fits'.
    lrt = dirmn.test_groups(X, g)
    assert (r.loglik_null, r.loglik_groups) == (lrt.loglik_null, lrt.loglik_groups)
    st = dirmn.test_groups(*hmp("saliva", "throat"), statistic="xmcupo")
    assert st.statistic == pytest.approx(98.3973853587345, rel=1e-9, abs=0)
    tt = dirmn.test_groups(*hmp("throat", "tonsils"), statistic="xmcupo")
    assert tt.statistic == pytest.approx(3.24781427884673, rel=1e-9, abs=0)
    assert tt.pvalue == pytest.approx(0.99999189153229, rel=1e-9, abs=0)
    assert tt.df == 20
    assert "statistic_kind='xmcupo'" in repr(tt)


def test_likelihood_ratio_is_hmps_xdc_on_saliva_throat_and_tonsils():
    X, g = hmp("saliva", "throat", "tonsils")
    r = dirmn.test_groups(X, g)
    assert r.statistic_kind == "lrt"
    # HMP 2.0.1: Xdc.sevsample(list(saliva, throat, tonsils), est = "mle")
    assert r.statistic == pytest.approx(529.509073461, rel=1e-9, abs=0)
    assert r.df == (3 - 1) * 21
    assert dirmn.test_groups(X, g, statistic="lrt").statistic == r.statistic


def test_xmcupo_bootstrap_is_reproducible_with_a_seed():
    S, _ = hmp("saliva")
    halves = ["a", "b"] * 12
    B = 39
    r = dirmn.test_groups(S, halves, statistic="xmcupo", bootstrap=B, seed=5)
    assert r.statistic_kind == "xmcupo" and r.bootstrap == B
    assert 1 / (B + 1) <= r.pvalue_bootstrap <= 1
    k = r.pvalue_bootstrap * (B + 1)
    assert abs(k - round(k)) < 1e-9
    again = dirmn.test_groups(S, halves, statistic="xmcupo", bootstrap=B, seed=5)
    assert again.pvalue_bootstrap == r.pvalue_bootstrap
    assert r.statistic == dirmn.test_groups(S, halves, statistic="xmcupo").statistic
    ps = {dirmn.test_groups(S, halves, statistic="xmcupo", bootstrap=19, seed=s).pvalue_bootstrap
          for s in range(1, 7)}
    assert len(ps) > 1
    # Saliva against throat differ by far: no bootstrap table reaches it.
    st = dirmn.test_groups(*hmp("saliva", "throat"), statistic="xmcupo", bootstrap=B, seed=5)
    assert st.pvalue_bootstrap == pytest.approx(1 / (B + 1))


def test_a_bad_statistic_is_named():
    X = table(11)
    for bad in ("Xmcupo", "XOC", "wald", None, 0, 2, ["lrt"]):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.test_groups(X, ["a", "b"] * 22 + ["a"], statistic=bad)
        assert e.value.argument == "statistic"
        assert "'lrt', 'xmcupo' or 'xoc'" in str(e.value)


# --- statistic="xoc": one shared overdispersion against one per group ---------

def shared_precision_loglik(X, labels):
    """The shared-precision null's maximised log pmf by scipy: one DM per
    group, alpha_g = A pi_g with one A for all groups (each pi_g free), by
    BFGS in log A and each group's softmax logits, the DM log pmf written
    out with gammaln (multinomial coefficients included)."""
    groups = [X[np.array([g == h for g in labels])] for h in dict.fromkeys(labels)]
    V = X.shape[1]
    gl, dg = scipy.special.gammaln, scipy.special.digamma

    def negll(t):
        A = np.exp(t[0])
        ll, grad = 0.0, np.zeros_like(t)
        for j, R in enumerate(groups):
            z = t[1 + j * V:1 + (j + 1) * V]
            pi = np.exp(z - z.max())
            pi /= pi.sum()
            a = A * pi
            N = R.sum(axis=1)
            ll += np.sum(gl(N + 1) - gl(R + 1).sum(axis=1) + gl(A) - gl(N + A)) \
                + np.sum(gl(R + a) - gl(a))
            s = np.sum(dg(A) - dg(N + A)) + (dg(R + a) - dg(a)).sum(axis=0)  # d/d alpha_g
            grad[0] += np.sum(s * a)
            grad[1 + j * V:1 + (j + 1) * V] = a * (s - np.sum(s * pi))
        return -ll, -grad

    t0 = np.concatenate([[np.log(10.0)]] + [np.log(R.sum(axis=0) / R.sum()) for R in groups])
    res = scipy.optimize.minimize(negll, t0, jac=True, method="BFGS",
                                  options=dict(gtol=1e-9, maxiter=10000))
    return -res.fun


def xoc_table():
    """Three groups of 20, 25 and 15 rows, different proportions, alpha
    sums 10, 10 and 60 (the third group far less overdispersed), every
    column with counts in every group."""
    rng = np.random.default_rng(3)
    X = np.vstack([dirmn.rvs([4.0, 2.0, 3.0, 1.0], rng.integers(30, 90, 20), seed=1),
                   dirmn.rvs([1.0, 5.0, 2.0, 2.0], rng.integers(30, 90, 25), seed=2),
                   dirmn.rvs([18.0, 18.0, 9.0, 15.0], rng.integers(30, 90, 15), seed=3)])
    return X, ["a"] * 20 + ["b"] * 25 + ["c"] * 15


def test_xoc_is_the_likelihood_ratio_of_one_shared_precision():
    X, labels = xoc_table()
    r = dirmn.test_groups(X, labels, statistic="xoc")
    lrt = dirmn.test_groups(X, labels)
    assert isinstance(r, dirmn.TestGroupsResult)
    assert r.statistic_kind == "xoc" and r.converged
    assert r.groups == 3 and r.categories == 4 and r.df == 3 - 1
    assert r.group == ["a", "b", "c"]
    # The alternative is the likelihood ratio's: one DM per group.
    np.testing.assert_allclose(r.loglik_groups, lrt.loglik_groups, rtol=1e-12)
    # The null is the shared-precision fit, between the one DM and the
    # groups' own DMs (it nests the former, is nested in the latter).
    np.testing.assert_allclose(r.loglik_null, shared_precision_loglik(X, labels), rtol=1e-10)
    assert lrt.loglik_null < r.loglik_null < r.loglik_groups
    np.testing.assert_allclose(r.statistic, 2 * (r.loglik_groups - r.loglik_null), rtol=1e-9)
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(r.statistic, 2), rtol=1e-9)
    assert r.pvalue < 0.05                        # alpha sums 10, 10 and 60
    s, p = r
    assert (s, p) == (r.statistic, r.pvalue)
    assert repr(r).startswith("TestGroupsResult(statistic_kind='xoc'") and "df=2" in repr(r)
    # Other inputs, and rows left out, as for the other statistics.
    assert dirmn.test_groups(sp.csr_matrix(X), labels, statistic="xoc").statistic \
        == pytest.approx(r.statistic, rel=1e-9)
    two = [g if g != "c" else None for g in labels]
    q = dirmn.test_groups(X, two, statistic="xoc")
    assert q.groups == 2 and q.df == 1 and q.group == ["a", "b"]
    np.testing.assert_allclose(q.loglik_null, shared_precision_loglik(X[:45], labels[:45]),
                               rtol=1e-10)


def test_xoc_is_hmps_on_saliva_throat_and_tonsils():
    X, g = hmp("saliva", "throat", "tonsils")
    r = dirmn.test_groups(X, g, statistic="xoc")
    assert r.statistic_kind == "xoc"
    # HMP 2.0.1: Xoc.sevsample(list(saliva, throat, tonsils), epsilon = 1e-10)
    assert r.statistic == pytest.approx(107.907114781439, rel=1e-8, abs=0)
    assert r.df == 3 - 1 and r.categories == 21
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(r.statistic, 2), rtol=1e-9)
    lrt = dirmn.test_groups(X, g)
    assert r.loglik_groups == pytest.approx(lrt.loglik_groups, rel=1e-12)
    assert lrt.loglik_null < r.loglik_null < r.loglik_groups
    st = dirmn.test_groups(*hmp("saliva", "throat"), statistic="xoc")
    assert st.statistic == pytest.approx(27.9373973570764, rel=1e-8, abs=0)
    assert st.pvalue == pytest.approx(1.25304413067795e-07, rel=1e-7, abs=0)
    tt = dirmn.test_groups(*hmp("throat", "tonsils"), statistic="xoc")
    assert tt.statistic == pytest.approx(25.5870610596612, rel=1e-8, abs=0)
    assert tt.pvalue == pytest.approx(4.22865448324039e-07, rel=1e-7, abs=0)
    assert tt.df == 1
    assert "statistic_kind='xoc'" in repr(tt)


def test_xoc_bootstrap_is_reproducible_with_a_seed():
    # Throat against tonsils differ in overdispersion by far: no bootstrap
    # table drawn from the shared-precision fit reaches the statistic.
    B = 49
    T, g = hmp("throat", "tonsils")
    r = dirmn.test_groups(T, g, statistic="xoc", bootstrap=B, seed=9)
    assert r.statistic_kind == "xoc" and r.bootstrap == B
    assert r.pvalue_bootstrap == pytest.approx(1 / (B + 1))
    plain = dirmn.test_groups(T, g, statistic="xoc")
    assert (r.statistic, r.pvalue) == (plain.statistic, plain.pvalue)
    # Saliva's first and second halves (chi-square p 0.63): the bootstrap
    # p-value is a multiple of 1 / (B + 1), is reproducible and moves with
    # the seed.
    S, _ = hmp("saliva")
    halves = ["a"] * 12 + ["b"] * 12
    h = dirmn.test_groups(S, halves, statistic="xoc", bootstrap=39, seed=5)
    k = h.pvalue_bootstrap * 40
    assert abs(k - round(k)) < 1e-9 and 0.1 < h.pvalue_bootstrap <= 1
    assert dirmn.test_groups(S, halves, statistic="xoc", bootstrap=39, seed=5) == h
    ps = {dirmn.test_groups(S, halves, statistic="xoc", bootstrap=19, seed=s).pvalue_bootstrap
          for s in range(1, 7)}
    assert len(ps) > 1


def test_xoc_options_reach_the_fits():
    X, labels = xoc_table()
    with pytest.warns(dirmn.ConvergenceWarning, match="statistic is"):
        r = dirmn.test_groups(X, labels, statistic="xoc", max_iterations=1)
    assert not r.converged and r.statistic_kind == "xoc"
    exact = dirmn.test_groups(X, labels, statistic="xoc")
    loose = dirmn.test_groups(X, labels, statistic="xoc", tolerance=1e-4)
    assert loose.converged
    assert loose.statistic == pytest.approx(exact.statistic, rel=1e-2)


# --- dirmn.test_proportions: one group's rows against a given composition ------

def pooled(X):
    """A table's pooled proportions: column sums over the grand total."""
    return X.sum(axis=0) / X.sum()


def test_proportions_is_hmps_xsc_on_saliva_throat_and_tonsils():
    S, _ = hmp("saliva")
    T, _ = hmp("throat")
    O, _ = hmp("tonsils")
    # HMP 2.0.1: Xsc.onesample(saliva, colSums(throat) / sum(throat))
    r = dirmn.test_proportions(S, pooled(T))
    assert isinstance(r, dirmn.TestProportionsResult)
    assert r.statistic == pytest.approx(366.142260583136, rel=1e-9, abs=0)
    assert r.df == 20 and r.rows == 24 and r.categories == 21
    assert 0 <= r.pvalue < 1e-60
    np.testing.assert_allclose(r.pvalue, scipy.stats.chi2.sf(r.statistic, 20), rtol=1e-9)
    assert 0 < r.theta < 1
    s, p = r                                    # scipy's unpacking
    assert (s, p) == (r.statistic, r.pvalue)
    # Xsc.onesample(tonsils, colSums(throat) / sum(throat))
    o = dirmn.test_proportions(O, pooled(T))
    assert o.statistic == pytest.approx(5.17206513999273, rel=1e-9, abs=0)
    assert o.pvalue == pytest.approx(0.999639605330565, rel=1e-9, abs=0)
    assert o.df == 20 and o.categories == 21
    # Xsc.onesample(throat, colSums(all three) / sum(all three))
    A, _ = hmp("saliva", "throat", "tonsils")
    t = dirmn.test_proportions(T, pooled(A))
    assert t.statistic == pytest.approx(12.7067487387809, rel=1e-9, abs=0)
    assert t.pvalue == pytest.approx(0.889608634576809, rel=1e-9, abs=0)
    text = repr(t)
    assert text.startswith("TestProportionsResult(") and "statistic=12.7067" in text
    assert "theta=" in text and "categories=21" in text


def test_proportions_inputs_of_every_kind_agree(ctx):
    T, _ = hmp("throat")
    A, _ = hmp("saliva", "throat", "tonsils")
    p = pooled(A)
    r = dirmn.test_proportions(T, p)
    with dirmn.Counts(T, context=ctx) as c:
        for x in (sp.csr_matrix(T), sp.csc_matrix(T), c, T.astype(np.float32),
                  np.asfortranarray(T)):
            assert dirmn.test_proportions(x, p) == r
        assert dirmn.test_proportions(T, p, context=ctx) == r
    assert dirmn.test_proportions(T, list(p)) == r
    assert dirmn.test_proportions(T, proportions=p) == r
    # A strided view is read in place, as is a reversed one (copied); both
    # give the contiguous vector's result.
    M = np.zeros((21, 3))
    M[:, 1] = p
    view = M[:, 1]
    assert not view.flags.c_contiguous
    assert dirmn.test_proportions(T, view) == r
    assert dirmn.test_proportions(T[:, ::-1], p[::-1].copy()) \
        == dirmn.test_proportions(T[:, ::-1], p[::-1])
    np.testing.assert_allclose(dirmn.test_proportions(T[:, ::-1], p[::-1]).statistic,
                               r.statistic, rtol=1e-12)
    # Real-valued counts on request.
    assert np.isfinite(dirmn.test_proportions(T + 0.5, p, real_valued=True).statistic)


def test_proportions_zero_where_the_rows_have_counts_is_infinite():
    S, _ = hmp("saliva")
    T, _ = hmp("throat")
    p = pooled(T)
    j = int(np.argmax(S.sum(axis=0)))
    p[j] = 0.0
    p /= p.sum()
    r = dirmn.test_proportions(S, p)
    assert r.statistic == np.inf and r.pvalue == 0.0
    assert r.categories == 20 and r.df == 19
    # A zero proportion where the rows have no counts drops the column:
    # the test of the table without that column.
    S0 = S.copy()
    S0[:, j] = 0
    q = dirmn.test_proportions(S0, p)
    keep = np.arange(21) != j
    d = dirmn.test_proportions(S0[:, keep], p[keep])
    assert np.isfinite(q.statistic) and q.categories == 20 and q.df == 19
    np.testing.assert_allclose(q.statistic, d.statistic, rtol=1e-12)
    np.testing.assert_allclose(q.theta, d.theta, rtol=1e-12)


def test_proportions_of_one_row_and_rows_without_counts():
    S, _ = hmp("saliva")
    p = pooled(S)
    one = dirmn.test_proportions(S[:1], p)
    assert one.rows == 1 and one.theta == 0.0
    # The multinomial Wald statistic: sum (pi - pi0)^2 / pi0 * N.
    pi = S[0] / S[0].sum()
    np.testing.assert_allclose(one.statistic, S[0].sum() * np.sum((pi - p) ** 2 / p),
                               rtol=1e-10)
    Z = np.vstack([S, np.zeros((2, 21), dtype=S.dtype)])
    z = dirmn.test_proportions(Z, p)
    assert z.rows == 24 and z == dirmn.test_proportions(S, p)


def test_proportions_bad_input_is_named():
    S, _ = hmp("saliva")
    p = pooled(S)
    bad = p.copy()
    bad[1] = -0.1
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.test_proportions(S, bad)
    assert "index 1" in str(e.value) and "negative" in str(e.value)
    assert e.value.index == 1 and e.value.value == -0.1
    assert e.value.argument == "proportions"
    bad[1] = np.nan
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.test_proportions(S, bad)
    assert e.value.index == 1
    with pytest.raises(dirmn.InvalidArgumentError) as e:      # not summing to 1
        dirmn.test_proportions(S, 1.1 * p)
    assert "sum" in str(e.value)
    assert type(e.value) is dirmn.InvalidArgumentError
    one = np.zeros(21)
    one[3] = 1.0
    with pytest.raises(dirmn.InvalidArgumentError):           # one positive entry
        dirmn.test_proportions(S, one)
    for wrong in (p[:20], np.r_[p, 0.0], [0.5, 0.5]):         # checked before the call
        with pytest.raises(dirmn.DimensionMismatchError) as e:
            dirmn.test_proportions(S, wrong)
        assert e.value.argument == "proportions"
        assert "21 columns" in str(e.value)
    for junk in ([p], "abc", None, [["a"] * 21][0]):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.test_proportions(S, junk)
        assert e.value.argument == "proportions"
    with pytest.raises(dirmn.InvalidArgumentError):           # no row with counts
        dirmn.test_proportions(np.zeros((3, 21)), p)
    with pytest.raises(dirmn.InvalidCountsError):
        dirmn.test_proportions(-S, p)


def test_proportions_not_collected_as_a_test():
    assert dirmn.test_proportions.__test__ is False
    assert dirmn.TestProportionsResult.__test__ is False
