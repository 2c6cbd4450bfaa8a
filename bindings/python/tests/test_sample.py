"""dirmn.rvs, dirmn.moments, the fitted models' simulate and Counts' copies out
(issue #30), against independent references: the Dirichlet-multinomial's
closed-form moments written out in NumPy, its exact pmf from
scipy.special.gammaln summed over every outcome, scipy.stats'
chi-square goodness of fit, and scipy.sparse's own conversions."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats
from scipy.special import gammaln

import dirmn


# --- references ------------------------------------------------------------------


def dm_moments(alpha, size):
    """Mean, variance and covariance of DM(alpha, size), written out."""
    a = np.asarray(alpha, dtype=np.float64)
    A = a.sum()
    p = a / A
    f = size * (size + A) / (1.0 + A)
    mean = size * p
    var = f * p * (1.0 - p)
    cov = -f * np.outer(p, p)
    np.fill_diagonal(cov, var)
    return mean, var, cov


def compositions(size, V):
    """Every vector of V non-negative integers summing to size."""
    for cuts in itertools.combinations(range(size + V - 1), V - 1):
        prev, out = -1, []
        for c in cuts:
            out.append(c - prev - 1)
            prev = c
        out.append(size + V - 2 - prev)
        yield tuple(out)


def dm_pmf(x, alpha):
    """The exact DM pmf of the rows of x, from gammaln."""
    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    N, A = x.sum(axis=1), a.sum()
    lp = (gammaln(N + 1) - gammaln(x + 1).sum(axis=1) + gammaln(A) - gammaln(N + A)
          + (gammaln(x + a) - gammaln(a)).sum(axis=1))
    return np.exp(lp)


def within(got, want, se, k=6.0):
    """|got - want| <= k standard errors, entrywise."""
    got, want, se = (np.asarray(v, dtype=np.float64) for v in (got, want, se))
    return bool(np.all(np.abs(got - want) <= k * se))


ALPHA = np.array([0.5, 2.0, 1.0, 3.5])


# --- moments ---------------------------------------------------------------------


@pytest.mark.parametrize("alpha,size", [
    (ALPHA, 30), ([1.0, 1.0], 0), ([0.01, 250.0, 3.0], 7.5), ([1e-8, 1e-6, 2e-7], 1000),
    ([1e6, 3e6, 5e5, 1.0], 12), ([4.0], 9),
])
def test_moments_match_the_closed_form(alpha, size):
    m = dirmn.moments(alpha, size)
    mean, var, cov = dm_moments(alpha, size)
    assert isinstance(m, dirmn.Moments)
    np.testing.assert_allclose(m.mean, mean, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(m.variance, var, rtol=1e-10, atol=1e-12 * max(1.0, size))
    np.testing.assert_allclose(m.covariance, cov, rtol=1e-10, atol=1e-12 * max(1.0, size))
    assert m.covariance.shape == (len(alpha), len(alpha))


def test_moments_logalpha_is_alpha():
    m = dirmn.moments(np.log(ALPHA), 17, param="logalpha")
    mean, var, cov = dm_moments(ALPHA, 17)
    np.testing.assert_allclose(m.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(m.covariance, cov, rtol=1e-12)


def test_moments_are_the_exact_pmf_moments():
    # Summed over all 56 outcomes of DM([0.7, 1.5, 0.3, 2.2], 5), no formula used.
    alpha, size = np.array([0.7, 1.5, 0.3, 2.2]), 5
    X = np.array(list(compositions(size, 4)), dtype=np.float64)
    p = dm_pmf(X, alpha)
    assert abs(p.sum() - 1.0) < 1e-12
    mean = p @ X
    cov = (X - mean).T @ ((X - mean) * p[:, None])
    m = dirmn.moments(alpha, size)
    np.testing.assert_allclose(m.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(m.covariance, cov, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(m.variance, np.diag(cov), rtol=1e-10)


@pytest.mark.skipif(not hasattr(scipy.stats, "dirichlet_multinomial"),
                    reason="scipy.stats.dirichlet_multinomial needs scipy >= 1.11")
def test_moments_match_scipy():
    d = scipy.stats.dirichlet_multinomial(ALPHA, 23)
    m = dirmn.moments(ALPHA, 23)
    np.testing.assert_allclose(m.mean, d.mean(), rtol=1e-12)
    np.testing.assert_allclose(m.variance, d.var(), rtol=1e-12)
    np.testing.assert_allclose(m.covariance, d.cov(), rtol=1e-12, atol=1e-14)


def test_moments_bad_input():
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.moments(ALPHA, -1)
    assert e.value.argument == "size"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.moments(ALPHA, float("nan"))
    assert e.value.argument == "size"
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.moments([1.0, 0.0, 2.0], 4)
    assert e.value.index == 1
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.moments([1.0, 2.0, -3.0], 4)
    assert e.value.index == 2
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.moments(ALPHA, 4, param="log")
    assert e.value.argument == "param"


# --- rvs: totals, seeds, shapes ---------------------------------------------------


def test_rows_sum_to_size():
    X = dirmn.rvs(ALPHA, 37, 200, seed=1)
    assert X.dtype == np.int64 and X.shape == (200, 4)
    assert np.all(X >= 0) and np.all(X.sum(axis=1) == 37)
    sizes = np.array([0, 1, 5, 1000, 2**31 - 1, 3])
    Y = dirmn.rvs(ALPHA, sizes, seed=2)
    assert Y.shape == (6, 4)
    assert np.array_equal(Y.sum(axis=1), sizes)
    # Integral floats (row totals come as doubles) are sizes too.
    Z = dirmn.rvs(ALPHA, sizes.astype(np.float64), seed=2)
    assert np.array_equal(Z, Y)


def test_one_row_by_default():
    X = dirmn.rvs(ALPHA, 10, seed=3)
    assert X.shape == (1, 4) and X.sum() == 10


def test_same_seed_same_table_different_seeds_differ():
    a = dirmn.rvs(ALPHA, 50, 100, seed=123)
    b = dirmn.rvs(ALPHA, 50, 100, seed=123)
    c = dirmn.rvs(ALPHA, 50, 100, seed=124)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # The largest 64-bit seed is a seed.
    top = dirmn.rvs(ALPHA, 50, 100, seed=2**64 - 1)
    assert np.array_equal(top, dirmn.rvs(ALPHA, 50, 100, seed=np.uint64(2**64 - 1)))
    assert not np.array_equal(top, a)


def test_generator_seed_and_none():
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    a = dirmn.rvs(ALPHA, 50, 100, seed=g1)
    assert np.array_equal(a, dirmn.rvs(ALPHA, 50, 100, seed=g2))
    # The generator advanced: its next table differs.
    assert not np.array_equal(a, dirmn.rvs(ALPHA, 50, 100, seed=g1))
    r1, r2 = np.random.RandomState(5), np.random.RandomState(5)
    assert np.array_equal(dirmn.rvs(ALPHA, 50, 20, seed=r1), dirmn.rvs(ALPHA, 50, 20, seed=r2))
    # seed=None: a fresh seed each call (two equal 100-row tables are ~impossible).
    assert not np.array_equal(dirmn.rvs(ALPHA, 50, 100), dirmn.rvs(ALPHA, 50, 100))


def test_rows_are_a_function_of_seed_row_alpha_size():
    # A longer table with the same seed starts with the same rows.
    long = dirmn.rvs(ALPHA, 10, 60, seed=9)
    assert np.array_equal(long[:25], dirmn.rvs(ALPHA, 10, 25, seed=9))
    # Per-row alphas: row b is what the shared alpha_b gives in row b.
    rng = np.random.default_rng(1)
    R = rng.uniform(0.1, 3.0, size=(6, 5))
    sizes = np.array([3, 0, 7, 100, 5, 12])
    T = dirmn.rvs(R, sizes, per_row=True, seed=5)
    assert np.array_equal(T.sum(axis=1), sizes)
    for b in range(6):
        assert np.array_equal(T[b], dirmn.rvs(R[b], sizes, seed=5)[b])


def test_first_row_blocks_make_the_table_of_one_call():
    # Blocks of rows drawn apart (as the ranks of a split table draw their
    # own) join into the table one call draws, components included.
    A = np.array([[0.5, 2.0, 0.1, 4.0, 1.0], [3.0, 0.2, 0.2, 0.2, 6.0], [1.0] * 5])
    sizes = np.tile([4, 900, 30], 20)
    whole, z = dirmn.rvs(A, sizes, seed=17, mixture_weights=[1, 2, 3], return_component=True)
    parts, zs = [], []
    for lo, hi in [(0, 1), (1, 33), (33, 60)]:
        X, zb = dirmn.rvs(A, sizes[lo:hi], seed=17, mixture_weights=[1, 2, 3],
                          return_component=True, first_row=lo)
        parts.append(X)
        zs.append(zb)
    assert np.array_equal(np.vstack(parts), whole)
    assert np.array_equal(np.concatenate(zs), z)
    with pytest.raises(dirmn.InvalidArgumentError, match="first_row"):
        dirmn.rvs(ALPHA, 10, 2, seed=1, first_row=-1)
    with pytest.raises(dirmn.InvalidArgumentError, match="first_row"):
        dirmn.rvs(ALPHA, 10, 2, seed=1, first_row=2**63 - 1)


def test_outputs_agree():
    X = dirmn.rvs(ALPHA, 25, 40, seed=31)
    S = dirmn.rvs(ALPHA, 25, 40, seed=31, output="csr")
    assert isinstance(S, sp.csr_matrix) and S.shape == (40, 4)
    assert S.dtype == np.int64
    assert np.array_equal(S.toarray(), X)
    assert S.has_sorted_indices and S.nnz == np.count_nonzero(X)
    with dirmn.rvs(ALPHA, 25, 40, seed=31, output="counts") as c:
        assert isinstance(c, dirmn.Counts) and c.shape == (40, 4)
        assert np.array_equal(c.toarray(), X)
        assert np.array_equal(c.row_totals(), np.full(40, 25.0))
        # The Counts is usable as a table: its fit is the array's.
        np.testing.assert_allclose(dirmn.fit(c).alpha, dirmn.fit(X).alpha, rtol=1e-12)
    with dirmn.rvs(np.ones(300), 5, 10, seed=4, output="counts", storage="sparse") as c:
        assert c.info()["storage"] == "sparse"
        assert np.array_equal(c.toarray(), dirmn.rvs(np.ones(300), 5, 10, seed=4))


def test_context_argument(ctx):
    X = dirmn.rvs(ALPHA, 25, 40, seed=31, context=ctx)
    assert np.array_equal(X, dirmn.rvs(ALPHA, 25, 40, seed=31))
    with dirmn.rvs(ALPHA, 25, 4, seed=31, context=ctx, output="counts") as c:
        assert c.context is ctx


def test_extreme_alphas():
    X = dirmn.rvs(np.full(6, 1e-300), 40, 300, seed=8)
    assert not np.any(np.isnan(X.astype(np.float64)))
    assert np.all(X.sum(axis=1) == 40)
    # Each row puts all its counts in one category, and every category is hit.
    assert np.all(np.count_nonzero(X, axis=1) == 1)
    assert set(np.argmax(X, axis=1)) == set(range(6))
    # A huge alpha beside tiny ones takes every count.
    Y = dirmn.rvs([1e-300, 1.0, 1e300], 1000, 50, seed=8)
    assert np.all(Y[:, 2] == 1000)
    Z = dirmn.rvs(np.log([1e-300, 1e-300]), 7, 30, seed=2, param="logalpha")
    assert np.all(np.count_nonzero(Z, axis=1) == 1) and np.all(Z.sum(axis=1) == 7)


# --- rvs: the distribution ----------------------------------------------------------


def _moment_checks(X, alpha, size):
    n = X.shape[0]
    mean, var, cov = dm_moments(alpha, size)
    Xf = X.astype(np.float64)
    m = Xf.mean(axis=0)
    assert within(m, mean, np.sqrt(var / n)), (m, mean)
    d = Xf - m
    s2 = (d ** 2).sum(axis=0) / (n - 1)
    m4 = (d ** 4).mean(axis=0)
    assert within(s2, var, np.sqrt((m4 - s2 ** 2) / n)), (s2, var)
    # One covariance, its standard error from the products' spread.
    prod = d[:, 0] * d[:, 1]
    c01 = prod.sum() / (n - 1)
    assert within(c01, cov[0, 1], prod.std() / np.sqrt(n)), (c01, cov[0, 1])


@pytest.mark.parametrize("alpha,size", [
    (ALPHA, 30),                                   # gamma + binomials
    (np.array([0.2, 0.05, 0.3, 0.1, 0.6]), 500),   # small alphas, large size
    (np.linspace(0.5, 3.0, 60), 4),                # few balls over many categories (urn)
    (np.array([40.0, 20.0, 300.0]), 2000),          # nearly multinomial
])
def test_sample_moments_within_monte_carlo_error(alpha, size):
    X = dirmn.rvs(alpha, size, 20000, seed=77)
    assert np.all(X.sum(axis=1) == size)
    _moment_checks(X, alpha, size)


def _chisquare(X, alpha, size):
    """The goodness-of-fit p-value of rows X against the exact pmf, outcomes
    with expected counts below 5 pooled."""
    outcomes = list(compositions(size, len(alpha)))
    pmf = dm_pmf(np.array(outcomes), alpha)
    assert abs(pmf.sum() - 1.0) < 1e-10
    index = {o: i for i, o in enumerate(outcomes)}
    obs = np.zeros(len(outcomes))
    for row in map(tuple, X):
        obs[index[row]] += 1
    exp = pmf * X.shape[0]
    small = exp < 5
    o = np.append(obs[~small], obs[small].sum())
    e = np.append(exp[~small], exp[small].sum())
    if e[-1] == 0:
        o, e = o[:-1], e[:-1]
    e *= o.sum() / e.sum()
    return scipy.stats.chisquare(o, e).pvalue


@pytest.mark.parametrize("alpha,size", [
    ([0.7, 1.5, 0.3], 6),
    ([0.05, 2.0, 0.5, 8.0], 5),
    (np.linspace(0.2, 2.0, 10), 3),     # size small against the categories
    ([30.0, 10.0, 60.0], 8),
])
def test_rows_follow_the_exact_pmf(alpha, size):
    X = dirmn.rvs(alpha, size, 30000, seed=2024)
    assert _chisquare(X, alpha, size) > 1e-4


def test_rows_follow_the_exact_pmf_per_row():
    # Two alternating per-row alphas: each half against its own pmf.
    a0, a1 = np.array([0.4, 1.0, 2.5]), np.array([3.0, 0.2, 0.2])
    R = np.tile(np.vstack([a0, a1]), (15000, 1))
    X = dirmn.rvs(R, 5, per_row=True, seed=6)
    assert _chisquare(X[0::2], a0, 5) > 1e-4
    assert _chisquare(X[1::2], a1, 5) > 1e-4


def test_a_wrong_pmf_is_rejected():
    # The goodness-of-fit check has power: a table of another alpha fails it.
    X = dirmn.rvs([0.7, 1.5, 0.3], 6, 30000, seed=2024)
    assert _chisquare(X, [0.9, 1.5, 0.3], 6) < 1e-6


# --- rvs: mixtures ---------------------------------------------------------------


MIX = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 1.0, 1.0, 0.5], [0.3, 0.3, 9.0, 1.0]])


def test_given_components_are_followed():
    comp = np.array([0, 2, 1, 1, 0, 2, 2, 1])
    T, z = dirmn.rvs(MIX, 20, component=comp, seed=11, return_component=True)
    assert np.array_equal(z, comp)
    assert np.all(T.sum(axis=1) == 20)
    # Row b is what component comp[b]'s alpha alone draws in row b.
    for b in range(len(comp)):
        assert np.array_equal(T[b], dirmn.rvs(MIX[comp[b]], 20, n=len(comp), seed=11)[b])


def test_component_rows_have_their_components_moments():
    comp = np.repeat([0, 1, 2], 8000)
    T = dirmn.rvs(MIX, 40, component=comp, seed=12)
    for j in range(3):
        _moment_checks(T[comp == j], MIX[j], 40)


def test_drawn_components_follow_the_weights():
    w = np.array([0.2, 0.5, 0.3])
    T, z = dirmn.rvs(MIX, 25, 30000, mixture_weights=w * 10, seed=13, return_component=True)
    assert z.dtype == np.int64 and set(np.unique(z)) <= {0, 1, 2}
    freq = np.bincount(z, minlength=3) / z.size
    assert within(freq, w, np.sqrt(w * (1 - w) / z.size))
    for j in range(3):
        _moment_checks(T[z == j], MIX[j], 25)
    # Drawn components then rows: the same table as drawing with them given.
    assert np.array_equal(T, dirmn.rvs(MIX, 25, component=z, seed=13))


def test_equal_weights_by_default():
    _, z = dirmn.rvs(MIX, 5, 30000, seed=14, return_component=True)
    freq = np.bincount(z, minlength=3) / z.size
    assert within(freq, np.full(3, 1 / 3), np.sqrt(2 / 9 / z.size))


def test_one_vector_components_are_zero():
    T, z = dirmn.rvs(ALPHA, 5, 7, seed=1, return_component=True)
    assert T.shape == (7, 4) and np.array_equal(z, np.zeros(7, dtype=np.int64))
    # A 1 x V alpha is one vector.
    assert np.array_equal(dirmn.rvs(ALPHA.reshape(1, -1), 5, 7, seed=1), T)


# --- rvs: errors -------------------------------------------------------------------


@pytest.mark.parametrize("size,row", [(-1, None), ([3, -2, 1], 1), (2.5, None), ([1, np.nan], 1),
                                      (2**31, None)])
def test_bad_size(size, row):
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(ALPHA, size, seed=1)
    assert e.value.argument == "size" and e.value.row == row


def test_bad_alpha_names_vector_and_index():
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.rvs([1.0, 0.0, 2.0], 5, 3, seed=1)
    assert (e.value.vector, e.value.index) == (0, 1)
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.rvs([[1.0, 1.0], [2.0, -1.0]], 5, 3, seed=1)
    assert (e.value.vector, e.value.index) == (1, 1)
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.rvs([1.0, np.nan], 5, 3, seed=1)
    assert e.value.index == 1
    with pytest.raises(dirmn.InvalidParameterError) as e:
        dirmn.rvs([[1.0, 1.0], [2.0, 1.0], [1.0, 0.0]], 5, per_row=True, seed=1)
    assert (e.value.row, e.value.index) == (2, 1)


def test_bad_arguments_are_named():
    cases = [
        (dict(n=0), "n"),
        (dict(n=3, size=[1, 2]), "size"),
        (dict(component=[0, 1]), "component"),                     # one vector
        (dict(mixture_weights=[1.0]), "mixture_weights"),
        (dict(output="dense"), "output"),
        (dict(storage="csr"), "storage"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(param="log"), "param"),
        (dict(per_row=True, return_component=True), "return_component"),
    ]
    for kwargs, arg in cases:
        kw = dict(seed=1)
        kw.update(kwargs)
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            dirmn.rvs(ALPHA, kw.pop("size", 5), **kw)
        assert e.value.argument == arg, kwargs


def test_bad_mixture_arguments():
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(MIX, 5, component=[0, 3, 1], seed=1)
    assert e.value.row == 1
    with pytest.raises(dirmn.DimensionMismatchError) as e:
        dirmn.rvs(MIX, 5, 4, mixture_weights=[1.0, 2.0], seed=1)
    assert e.value.argument == "mixture_weights"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(MIX, 5, 4, mixture_weights=[1.0, -2.0, 1.0], seed=1)
    assert e.value.index == 1
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(MIX, 5, component=[0, 1], mixture_weights=[1, 1, 1], seed=1)
    assert e.value.argument == "mixture_weights"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(MIX, 5, 4, component=[0, 1], seed=1)     # n disagrees
    assert e.value.argument == "component"
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        dirmn.rvs(MIX, 5, 4, per_row=True, seed=1)          # 3 rows of alpha, n = 4
    assert e.value.argument == "alpha"


# --- Counts' copies out ---------------------------------------------------------------


X0 = np.array([[3, 0, 4, 1], [2, 5, 1, 0], [0, 0, 0, 0], [0, 1, 2, 6], [7, 0, 0, 0]])


@pytest.mark.parametrize("make", [
    lambda: dirmn.Counts(X0),
    lambda: dirmn.Counts(X0, storage="sparse"),
    lambda: dirmn.Counts(sp.csr_matrix(X0)),
    lambda: dirmn.Counts(sp.csc_matrix(X0.astype(np.float32))),
    lambda: dirmn.Counts(np.asfortranarray(X0.astype(np.int32))),
])
def test_counts_copy_out(make):
    with make() as c:
        A = c.toarray()
        assert A.dtype == np.int64 and np.array_equal(A, X0)
        assert np.array_equal(c.toarray(np.float32), X0.astype(np.float32))
        assert np.array_equal(c.toarray("int32"), X0)
        R, K = c.tocsr(), c.tocsc()
        assert isinstance(R, sp.csr_matrix) and isinstance(K, sp.csc_matrix)
        ref_r, ref_c = sp.csr_matrix(X0), sp.csc_matrix(X0)
        for got, ref in ((R, ref_r), (K, ref_c)):
            assert got.shape == X0.shape and got.dtype == np.int64
            assert np.array_equal(got.indptr, ref.indptr)
            assert np.array_equal(got.indices, ref.indices)
            assert np.array_equal(got.data, ref.data)
        assert R.indices.dtype == np.int32
        assert np.array_equal(c.tocsr(np.float64).data, ref_r.data.astype(np.float64))


def test_counts_copy_out_real_valued():
    Y = np.array([[0.5, 0.0, 2.25], [1.0, 3.5, 0.0]])
    with dirmn.Counts(Y, real_valued=True) as c:
        A = c.toarray()
        assert A.dtype == np.float64 and np.array_equal(A, Y)
        assert np.array_equal(c.tocsr().toarray(), Y)
        with pytest.raises(dirmn.InvalidArgumentError):
            c.toarray(np.int64)


def test_counts_copy_out_errors():
    with dirmn.Counts(X0) as c:
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            c.toarray(np.complex128)
        assert e.value.argument == "dtype"
    with dirmn.Counts(np.array([[2**40, 1]])) as c:
        with pytest.raises(dirmn.NumericOverflowError) as e:
            c.toarray(np.int32)
        assert (e.value.row, e.value.column) == (0, 0)
        assert c.toarray()[0, 0] == 2**40
    c = dirmn.Counts(X0)
    c.close()
    with pytest.raises(dirmn.ClosedHandleError):
        c.toarray()


def test_counts_copy_out_of_all_zero_table():
    with dirmn.Counts(np.zeros((3, 4), dtype=np.int64), storage="sparse") as c:
        assert np.array_equal(c.toarray(), np.zeros((3, 4)))
        R = c.tocsr()
        assert R.nnz == 0 and np.array_equal(R.indptr, np.zeros(4))


# --- simulate ---------------------------------------------------------------------------


def _table(seed=3, rows=60):
    rng = np.random.default_rng(seed)
    totals = rng.integers(5, 80, size=rows)
    return dirmn.rvs([2.0, 3.0, 1.0, 4.0, 0.5], totals, seed=seed), totals


def test_fit_simulate():
    X, totals = _table()
    f = dirmn.fit(X)
    Y = f.simulate(seed=5)
    assert Y.shape == X.shape and Y.dtype == np.int64
    assert np.array_equal(Y.sum(axis=1), totals)
    assert np.array_equal(Y, f.simulate(seed=5))
    assert not np.array_equal(Y, f.simulate(seed=6))
    assert np.array_equal(Y, dirmn.rvs(f.alpha, totals, seed=5))
    several = f.simulate(3, seed=5)
    assert isinstance(several, list) and len(several) == 3
    assert np.array_equal(several[0], Y)
    assert np.array_equal(several[1], f.simulate(seed=6))
    assert all(np.array_equal(t.sum(axis=1), totals) for t in several)
    S = f.simulate(seed=5, output="csr")
    assert isinstance(S, sp.csr_matrix) and np.array_equal(S.toarray(), Y)
    with f.simulate(seed=5, output="counts") as c:
        assert np.array_equal(c.toarray(), Y)


def test_fit_simulate_distribution():
    # 4000 rows of 50: the simulated moments are the fitted DM's.
    X = dirmn.rvs([2.0, 3.0, 1.0, 4.0], 50, 4000, seed=21)
    f = dirmn.fit(X)
    _moment_checks(f.simulate(seed=22), f.alpha, 50)


def test_fit_simulate_keeps_empty_columns_empty():
    X, totals = _table(4)
    X = np.insert(X, 2, 0, axis=1)
    f = dirmn.fit(X)
    assert f.alpha[2] == 0
    Y = f.simulate(4, seed=1)
    assert all(np.all(t[:, 2] == 0) and np.array_equal(t.sum(axis=1), totals) for t in Y)


def test_fit_simulate_at_the_multinomial_limit():
    p = np.array([0.2, 0.3, 0.5])
    M = np.random.default_rng(0).multinomial(40, p, size=400)
    f = dirmn.fit(M)
    assert f.multinomial_limit
    Y = f.simulate(seed=3, n=10)
    Y = np.vstack(Y).astype(np.float64)
    n = Y.shape[0]
    pf = f.alpha / f.alpha.sum()
    var = 40 * pf * (1 - pf)                      # multinomial, not DM(pf, 40)
    d = Y - Y.mean(axis=0)
    s2 = (d ** 2).sum(axis=0) / (n - 1)
    m4 = (d ** 4).mean(axis=0)
    assert within(Y.mean(axis=0), 40 * pf, np.sqrt(var / n))
    assert within(s2, var, np.sqrt((m4 - s2 ** 2) / n))


def test_fit_simulate_needs_integral_totals():
    f = dirmn.fit(np.array([[1.5, 2.0], [3.0, 1.0], [0.5, 4.0]]), real_valued=True)
    with pytest.raises(dirmn.InvalidArgumentError) as e:
        f.simulate(seed=1)
    assert e.value.argument == "row_totals" and e.value.row == 0
    g = dirmn.fit(_table()[0])
    for bad in (dict(n=0), dict(seed=-3), dict(output="list")):
        with pytest.raises(dirmn.InvalidArgumentError) as e:
            g.simulate(**bad)
        assert e.value.argument == next(iter(bad))


def test_mixture_simulate():
    comp = np.repeat([0, 1], 150)
    A = np.array([[20.0, 2.0, 1.0, 8.0], [1.0, 9.0, 12.0, 0.5]])
    sizes = np.random.default_rng(2).integers(20, 60, size=300)
    X = dirmn.rvs(A, sizes, component=comp, seed=31)
    with dirmn.mixture(X, 2, seed=1) as m:
        T, z = m.simulate(seed=8, return_component=True)
        assert np.array_equal(T.sum(axis=1), sizes)
        assert set(np.unique(z)) <= {0, 1}
        # Drawn from the fitted weights, then the components' alphas.
        assert np.array_equal(T, dirmn.rvs(m.alpha, sizes, component=z, seed=8))
        assert np.array_equal(T, m.simulate(seed=8))
        big = m.simulate(n=20, seed=9, return_component=True)
        zs = np.concatenate([zz for _, zz in big])
        freq = np.bincount(zs, minlength=2) / zs.size
        w = m.mixture_weights
        assert within(freq, w, np.sqrt(w * (1 - w) / zs.size))
    # The values were copied out: a closed mixture still simulates.
    assert np.array_equal(m.simulate(seed=8), T)


def test_mixture_selection_members_simulate():
    X, totals = _table(5, 80)
    with dirmn.mixture(X, range(1, 3)) as s:
        for m in s.fits:
            t = m.simulate(seed=1)
            assert np.array_equal(t.sum(axis=1), totals)


def test_regression_simulate():
    rng = np.random.default_rng(40)
    rows = 200
    x = rng.normal(size=rows)
    D = np.column_stack([np.ones(rows), x])
    beta = np.array([[0.5, 1.0, 1.5], [1.0, -0.5, 0.0]])
    alpha = np.exp(D @ beta)
    sizes = rng.integers(30, 90, size=rows)
    X = dirmn.rvs(alpha, sizes, per_row=True, seed=41)
    with dirmn.regression(X, D) as r:
        Y = r.simulate(seed=3)
        assert np.array_equal(Y.sum(axis=1), sizes)
        ahat = r.predict(D)
        assert np.array_equal(Y, dirmn.rvs(ahat, sizes, per_row=True, seed=3))
        # Averaged over 300 tables, each row's counts are its own DM's mean.
        T = np.stack(r.simulate(300, seed=4)).astype(np.float64)
    n = T.shape[0]
    p = ahat / ahat.sum(axis=1, keepdims=True)
    A = ahat.sum(axis=1, keepdims=True)
    N = sizes[:, None].astype(np.float64)
    var = N * p * (1 - p) * (N + A) / (1 + A)
    assert within(T.mean(axis=0), N * p, np.sqrt(var / n), k=6.0)
    with pytest.raises(dirmn.ClosedHandleError):
        r.simulate(seed=1)


def test_regression_simulate_meanprecision():
    X, totals = _table(6, 120)
    D = np.column_stack([np.ones(120), np.linspace(-1, 1, 120)])
    with dirmn.regression(X, D, parametrization="meanprecision") as r:
        Y = r.simulate(seed=2)
        assert np.array_equal(Y.sum(axis=1), totals)
        assert np.array_equal(Y, dirmn.rvs(r.predict(D), totals, per_row=True, seed=2))
