"""dirmn.power_proportions: the power of dirmn.test_proportions (HMP's Xsc)
by simulation (HMP's MC.Xsc.statistics), against the same tables drawn
through dirmn.rvs and tested through dirmn.test_proportions (another path
through the library: table t of a call with seed S is drawn with seed
derived_key(S, 3, t), the stream dirmn.power_groups draws its tables from)."""

import inspect
import math

import numpy as np
import pytest

import dirmn
from refs import derived_key


PI0 = np.arange(1.0, 9.0) / 36                 # (1..8) / 36, sums to 1


def swapped(v, i=0, j=-1):
    w = np.array(v, dtype=float)
    w[[i, j]] = w[[j, i]]
    return w


def replay(alpha, proportions, sizes, tables, level, seed):
    """(rejected, mean statistic) from dirmn.rvs + dirmn.test_proportions."""
    rejected, stats = 0, []
    for t in range(tables):
        X = dirmn.rvs(alpha, sizes, seed=derived_key(seed, 3, t))
        if X.sum() == 0:
            stats.append(0.0)                        # not tested, not rejected
            continue
        r = dirmn.test_proportions(X, proportions)
        stats.append(r.statistic)
        rejected += r.pvalue < level
    return rejected, float(np.mean(stats))


def test_alpha_proportional_to_the_proportions_gives_the_level():
    r = dirmn.power_proportions(20 * PI0, PI0, 30, 500, tables=400, seed=23)
    assert isinstance(r, dirmn.PowerResult)
    assert r.tables == 400 and r.level == 0.05 and r.statistic_kind == "xsc"
    assert abs(r.power - 0.05) <= 0.04              # the test's size
    assert abs(r.mean_statistic - 7) <= 1           # Xsc's df: 8 categories - 1
    assert r.power == r.rejected / 400
    assert r.std_error == pytest.approx(math.sqrt(r.power * (1 - r.power) / 400), rel=1e-12)


def test_swapped_alphas_are_found():
    r = dirmn.power_proportions(20 * swapped(PI0), PI0, 30, 500, tables=400, seed=23)
    assert r.power > 0.9
    assert r.std_error == pytest.approx(math.sqrt(r.power * (1 - r.power) / 400), abs=1e-15)
    assert r.mean_statistic > 50
    # Fewer, smaller rows: a power strictly between 0 and 1, and its binomial
    # standard error.
    few = dirmn.power_proportions(20 * swapped(PI0), PI0, 2, 20, tables=400, seed=23)
    assert 0 < few.rejected < 400 and few.power < r.power + 1e-12
    assert few.std_error > 0
    assert few.std_error == pytest.approx(math.sqrt(few.power * (1 - few.power) / 400),
                                          rel=1e-12)


# Near the null: a power neither 0 nor 1 over 30 tables, a discriminating check.
NEAR = 20 * swapped(PI0, 2, 4)


@pytest.mark.parametrize("seed", [23, 2**63 + 12345, 2**64 - 1])
def test_power_is_the_share_the_binding_rejects(seed):
    sizes = [40 + 7 * b for b in range(12)]
    tables, level = 30, 0.05
    r = dirmn.power_proportions(NEAR, PI0, 12, sizes, tables=tables, level=level, seed=seed)
    rejected, mean_stat = replay(NEAR, PI0, sizes, tables, level, seed)
    assert r.tables == tables and r.level == level
    assert 0 < rejected < tables                     # neither extreme
    assert r.rejected == rejected
    assert r.power == rejected / tables
    assert abs(r.mean_statistic - mean_stat) <= 1e-9 * max(1.0, abs(mean_stat))


def test_rows_without_counts_and_tables_without_counts():
    # Some rows of size 0: left out of the test, as test_proportions leaves
    # them out (the replay draws and tests the same tables).
    sizes = [0, 60, 0, 45, 80, 0, 50, 70]
    r = dirmn.power_proportions(NEAR, PI0, 8, sizes, tables=30, level=0.2, seed=5)
    rejected, mean_stat = replay(NEAR, PI0, sizes, 30, 0.2, 5)
    assert r.rejected == rejected
    assert abs(r.mean_statistic - mean_stat) <= 1e-9 * max(1.0, mean_stat)
    # Every row of size 0: no table has counts, none is rejected.
    e = dirmn.power_proportions(NEAR, PI0, 5, 0, tables=20, seed=1)
    assert e.rejected == 0 and e.power == 0.0 and e.mean_statistic == 0.0


def test_counts_in_a_column_of_proportion_zero():
    p = np.r_[0.0, PI0[1:] / PI0[1:].sum()]
    # Column 0 drawn with alpha 20/36 in 4 rows of 50: most tables have
    # counts there (statistic inf, rejected).
    r = dirmn.power_proportions(20 * PI0, p, 4, 50, tables=40, seed=1)
    assert r.mean_statistic == math.inf
    assert r.power > 0.5
    # Column 0 drawn with a tiny alpha: never counts there; the test's size.
    q = dirmn.power_proportions(np.r_[1e-300, 20 * PI0[1:]], p, 30, 500, tables=200, seed=1)
    assert math.isfinite(q.mean_statistic) and q.power < 0.15


def test_reproducible_and_thread_count_free():
    r1 = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=80, seed=9)
    assert dirmn.power_proportions(NEAR, PI0, 10, 60, tables=80, seed=9) == r1
    others = {dirmn.power_proportions(NEAR, PI0, 10, 60, tables=80, seed=s).mean_statistic
              for s in range(4)}
    assert len(others) > 1
    g1 = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=80, seed=np.random.default_rng(3))
    g2 = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=80, seed=np.random.default_rng(3))
    assert g1 == g2
    # A longer run starts with the same tables.
    assert dirmn.power_proportions(NEAR, PI0, 10, 60, tables=160, seed=9).rejected \
        >= r1.rejected
    with dirmn.Context("cpu", threads=1) as one, dirmn.Context("cpu", threads=2) as two:
        a = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=50, seed=13, context=one)
        b = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=50, seed=13, context=two)
    assert a == b


def test_forms_of_the_arguments_agree():
    base = dirmn.power_proportions(NEAR, PI0, 10, 60, tables=40, seed=6)
    for sizes in ([60] * 10, np.full(10, 60), 60.0, np.int32(60), np.full(10, 60.0)):
        assert dirmn.power_proportions(NEAR, PI0, 10, sizes, tables=40, seed=6) == base
    assert dirmn.power_proportions(list(NEAR), list(PI0), np.int64(10), 60, tables=40,
                                   seed=6) == base
    assert dirmn.power_proportions(NEAR, proportions=PI0, rows=10, size=60, tables=40,
                                   seed=6) == base
    # Strided views are read in place.
    M = np.zeros((8, 3))
    M[:, 0], M[:, 2] = NEAR, PI0
    assert not M[:, 0].flags.c_contiguous
    assert dirmn.power_proportions(M[:, 0], M[:, 2], 10, 60, tables=40, seed=6) == base
    logs = dirmn.power_proportions(np.log(NEAR), PI0, 10, 60, tables=40, seed=6,
                                   param="logalpha")
    assert logs.rejected == base.rejected
    assert logs.mean_statistic == pytest.approx(base.mean_statistic, rel=1e-9)
    # The keywords are power_groups's; rows and proportions as named here.
    params = inspect.signature(dirmn.power_proportions).parameters
    assert list(params)[:4] == ["alpha", "proportions", "rows", "size"]
    for name in ("tables", "level", "seed", "param", "context"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert name in inspect.signature(dirmn.power_groups).parameters
    with pytest.raises(TypeError):
        dirmn.power_proportions(NEAR, PI0, 10, sizes=60)
    assert "statistic_kind='xsc'" in repr(base)


def test_bad_input_is_named():
    def error(cls, *args, **kwargs):
        kwargs.setdefault("tables", 5)
        with pytest.raises(cls) as e:
            dirmn.power_proportions(*args, **kwargs)
        assert type(e.value) is cls
        return e.value

    a = 20 * PI0
    bad = PI0.copy()
    bad[1] = -0.1
    e = error(dirmn.InvalidParameterError, a, bad, 10, 60)
    assert (e.argument, e.index, e.value) == ("proportions", 1, -0.1)
    assert "negative" in str(e)
    bad[1] = np.nan
    assert error(dirmn.InvalidParameterError, a, bad, 10, 60).index == 1
    assert "sum" in str(error(dirmn.InvalidArgumentError, a, 1.1 * PI0, 10, 60))
    one = np.zeros(8)
    one[3] = 1.0
    error(dirmn.InvalidArgumentError, a, one, 10, 60)          # one positive entry
    for wrong in (PI0[:7] / PI0[:7].sum(), np.r_[PI0, 0.0]):
        e = error(dirmn.DimensionMismatchError, a, wrong, 10, 60)
        assert e.argument == "proportions" and "alpha has 8 entries" in str(e)
    for junk in ([PI0], "abc", None):
        assert error(dirmn.InvalidArgumentError, a, junk, 10, 60).argument == "proportions"
    for alpha in ([[1.0, 2.0], [3.0, 4.0]], [1.0], 5.0, "abc"):
        assert error(dirmn.InvalidArgumentError, alpha, PI0, 10, 60).argument == "alpha"
    e = error(dirmn.InvalidParameterError, np.r_[a[:5], 0.0, a[6:]], PI0, 10, 60)
    assert e.index == 5
    e = error(dirmn.InvalidParameterError, np.r_[a[:2], -1.0, a[3:]], PI0, 10, 60)
    assert e.index == 2
    for tables in (0, -3, 2.0, True):
        assert error(dirmn.InvalidArgumentError, a, PI0, 10, 60, tables=tables).argument \
            == "tables"
    for level in (0.0, 1.0, -0.1, 1.5, float("nan")):
        assert error(dirmn.InvalidArgumentError, a, PI0, 10, 60, level=level).argument \
            == "level"
    for rows in (0, -1, 2.0, True, 2**40 + 1, [10]):
        assert error(dirmn.InvalidArgumentError, a, PI0, rows, 60).argument == "rows"
    e = error(dirmn.InvalidArgumentError, a, PI0, 3, [30, -4, 5])
    assert (e.argument, e.row) == ("size", 1)
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, 2**31).argument == "size"
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, 2.5).argument == "size"
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, "30").argument == "size"
    assert error(dirmn.DimensionMismatchError, a, PI0, 3, [30, 30]).argument == "size"
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, 30, seed=-1).argument == "seed"
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, 30, param="log").argument == "param"
    assert error(dirmn.InvalidArgumentError, a, PI0, 3, 30, context=1).argument == "context"
