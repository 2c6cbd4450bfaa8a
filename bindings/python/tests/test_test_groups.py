"""dirmn.test_groups (issue #30): the likelihood-ratio test of one DM for all
rows against one per group, against the package's single-alpha fit of each
row subset (dirmn.fit: another path through the library) and scipy's
chi-square tail."""

import numpy as np
import pytest
import scipy.sparse as sp
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
    for bad in ("Xmcupo", "wald", None, 0, ["lrt"]):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.test_groups(X, ["a", "b"] * 22 + ["a"], statistic=bad)
        assert e.value.argument == "statistic"
        assert "'lrt' or 'xmcupo'" in str(e.value)
