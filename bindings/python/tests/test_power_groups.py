"""dirmn.power_groups (issue #30): the power of dirmn.test_groups by
simulation, against the same tables drawn through dirmn.rvs and tested
through dirmn.test_groups (another path through the library: table t of a
call with seed S is drawn with seed derived_key(S, 3, t), the library's
documented stream of a power simulation's table)."""

import inspect
import math

import numpy as np
import pytest

import dirmn
from refs import derived_key, random_bits


def test_splitmix64_reference_values():
    # splitmix64 seeded with 0 (Vigna's reference implementation) starts
    # 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f.
    assert [random_bits(0, i) for i in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                                     0x06C45D188009454F]


ALPHA3 = np.array([[2.0, 3.0, 1.0, 4.0, 0.5],
                   [3.0, 2.0, 1.0, 4.0, 0.5],
                   [2.0, 3.0, 1.5, 3.0, 0.5]])


def replay(alpha, rows_per_group, row_sizes, tables, level, seed):
    """(rejected, mean statistic) from dirmn.rvs + dirmn.test_groups."""
    group = np.repeat(np.arange(len(rows_per_group)), rows_per_group)
    rejected, stats = 0, []
    for t in range(tables):
        X = dirmn.rvs(alpha, row_sizes, component=group, seed=derived_key(seed, 3, t))
        with_counts = {g for g, total in zip(group, X.sum(axis=1)) if total > 0}
        if len(with_counts) < 2:
            stats.append(0.0)                        # not tested, not rejected
            continue
        r = dirmn.test_groups(X, group)
        stats.append(r.statistic)
        rejected += r.pvalue < level
    return rejected, float(np.mean(stats))


@pytest.mark.parametrize("seed", [7, 2**63 + 12345, 2**64 - 1])
def test_power_is_the_share_the_binding_rejects(seed):
    rows = [8, 11, 6]
    sizes = [[40 + 3 * i for i in range(8)], 55, list(range(20, 80, 10))]
    flat = np.concatenate([sizes[0], np.full(11, 55), sizes[2]])
    tables, level = 60, 0.1
    r = dirmn.power_groups(ALPHA3, rows, sizes, tables=tables, level=level, seed=seed)
    rejected, mean_stat = replay(ALPHA3, rows, flat, tables, level, seed)
    assert r.tables == tables and r.level == level
    assert r.rejected == rejected
    assert 0 < rejected < tables                     # neither extreme: a discriminating check
    assert r.power == rejected / tables
    assert abs(r.mean_statistic - mean_stat) <= 1e-9 * max(1.0, abs(mean_stat))


def test_a_group_of_empty_rows_counts_as_not_rejected():
    # Group 1's rows have size 0: no table has two groups with counts.
    r = dirmn.power_groups(ALPHA3[:2], [5, 5], [30, 0], tables=20, seed=1)
    assert r.rejected == 0 and r.power == 0.0 and r.mean_statistic == 0.0
    # Zero rows in one of three groups leaves the other two compared.
    s = dirmn.power_groups(ALPHA3, [10, 0, 12], 50, tables=30, level=0.2, seed=3)
    rejected, mean_stat = replay(ALPHA3, [10, 0, 12], np.full(22, 50), 30, 0.2, 3)
    assert s.rejected == rejected
    assert abs(s.mean_statistic - mean_stat) <= 1e-9 * max(1.0, mean_stat)


def test_equal_alphas_give_the_level():
    a = np.array([ALPHA3[0], ALPHA3[0]])
    r = dirmn.power_groups(a, 25, 60, tables=400, level=0.05, seed=11)
    assert 6 <= r.rejected <= 45
    # The statistic's mean is near its chi-square df, (G - 1) P = 5.
    assert 3.5 < r.mean_statistic < 7.0


def test_very_different_alphas_are_found():
    a = np.array([[10.0, 1.0, 1.0, 3.0], [1.0, 1.0, 10.0, 3.0]])
    r = dirmn.power_groups(a, 15, 50, tables=100, seed=2)
    assert r.power > 0.9
    # More rows, more power: the same alphas at 5 rows a group reject less often.
    a2 = np.array([[2.0, 3.0, 1.0, 4.0], [3.0, 2.0, 1.0, 4.0]])
    small = dirmn.power_groups(a2, 5, 50, tables=200, seed=4)
    large = dirmn.power_groups(a2, 40, 50, tables=200, seed=4)
    assert large.power > small.power + 0.2


def test_std_error_and_result():
    r = dirmn.power_groups(ALPHA3[:2], 20, 60, tables=150, seed=5)
    assert isinstance(r, dirmn.PowerResult)
    assert r.power == r.rejected / 150
    assert r.std_error == pytest.approx(math.sqrt(r.power * (1 - r.power) / 150), rel=1e-12)
    assert 0 < r.power < 1 and r.std_error > 0
    with pytest.raises(AttributeError):
        r.power = 0.5                                # frozen
    assert "power=" in repr(r)


def test_reproducible_with_a_seed():
    a = ALPHA3[:2]
    r1 = dirmn.power_groups(a, 12, 40, tables=80, seed=9)
    r2 = dirmn.power_groups(a, 12, 40, tables=80, seed=9)
    assert r1 == r2
    others = {dirmn.power_groups(a, 12, 40, tables=80, seed=s).mean_statistic for s in range(4)}
    assert len(others) > 1
    g1 = dirmn.power_groups(a, 12, 40, tables=80, seed=np.random.default_rng(3))
    g2 = dirmn.power_groups(a, 12, 40, tables=80, seed=np.random.default_rng(3))
    assert g1 == g2
    # A longer run starts with the same tables: its first tables are these.
    long = dirmn.power_groups(a, 12, 40, tables=160, seed=9)
    assert long.rejected >= r1.rejected


def test_thread_count_does_not_change_the_result():
    a = ALPHA3
    with dirmn.Context("cpu", threads=1) as one, dirmn.Context("cpu", threads=3) as three:
        r1 = dirmn.power_groups(a, [6, 7, 8], 45, tables=50, seed=13, context=one)
        r3 = dirmn.power_groups(a, [6, 7, 8], 45, tables=50, seed=13, context=three)
    assert r1 == r3


def test_size_is_the_keyword():
    a = ALPHA3[:2]
    assert "size" in inspect.signature(dirmn.power_groups).parameters
    assert "sizes" not in inspect.signature(dirmn.power_groups).parameters
    assert dirmn.power_groups(a, 10, size=30, tables=20, seed=6) \
        == dirmn.power_groups(a, 10, 30, tables=20, seed=6)
    with pytest.raises(TypeError):
        dirmn.power_groups(a, 10, sizes=30, tables=20, seed=6)


def test_xmcupo_equal_alphas_give_the_level():
    a = np.array([ALPHA3[0], ALPHA3[0]])
    r = dirmn.power_groups(a, 25, 60, statistic="xmcupo", tables=400, level=0.05, seed=11)
    assert r.statistic_kind == "xmcupo"
    assert 6 <= r.rejected <= 45
    # Near its chi-square df, (G - 1)(P - 1) = 4, not the likelihood ratio's 5.
    assert 2.8 < r.mean_statistic < 5.2
    lrt = dirmn.power_groups(a, 25, 60, tables=400, level=0.05, seed=11)
    assert lrt.statistic_kind == "lrt" and lrt.mean_statistic != r.mean_statistic
    far = dirmn.power_groups([[10.0, 1.0, 1.0, 3.0], [1.0, 1.0, 10.0, 3.0]], 15, 50,
                             statistic="xmcupo", tables=100, seed=2)
    assert far.power > 0.9
    assert "statistic_kind='xmcupo'" in repr(r)


def test_xmcupo_power_is_the_share_the_binding_rejects():
    rows = [8, 11, 6]
    sizes = [[40 + 3 * i for i in range(8)], 55, list(range(20, 80, 10))]
    flat = np.concatenate([sizes[0], np.full(11, 55), sizes[2]])
    group = np.repeat(np.arange(3), rows)
    seed, tables, level = 7, 60, 0.1
    r = dirmn.power_groups(ALPHA3, rows, sizes, statistic="xmcupo", tables=tables,
                           level=level, seed=seed)
    rejected, stats = 0, []
    for t in range(tables):
        X = dirmn.rvs(ALPHA3, flat, component=group, seed=derived_key(seed, 3, t))
        q = dirmn.test_groups(X, group, statistic="xmcupo")
        stats.append(q.statistic)
        rejected += q.pvalue < level
    assert 0 < rejected < tables                     # neither extreme
    assert r.rejected == rejected
    assert abs(r.mean_statistic - np.mean(stats)) <= 1e-9 * max(1.0, np.mean(stats))
    again = dirmn.power_groups(ALPHA3, rows, sizes, statistic="xmcupo", tables=tables,
                               level=level, seed=seed)
    assert again == r


def test_xoc_equal_precisions_give_the_level():
    # Different proportions, one precision (alpha sums 10.5): Xoc's null
    # holds, the likelihood ratio's does not.
    a = np.array([[2.0, 3.0, 1.0, 4.0, 0.5], [4.0, 1.0, 3.0, 2.0, 0.5]])
    r = dirmn.power_groups(a, 25, 60, statistic="xoc", tables=400, level=0.05, seed=11)
    assert r.statistic_kind == "xoc" and r.tables == 400
    assert 6 <= r.rejected <= 45
    # Near its chi-square df, G - 1 = 1.
    assert 0.6 < r.mean_statistic < 1.5
    lrt = dirmn.power_groups(a, 25, 60, tables=100, seed=11)
    assert lrt.power > 0.9
    # One group six times as precise (same proportions): rejected.
    b = np.array([a[0], 6 * a[0]])
    far = dirmn.power_groups(b, 25, 60, statistic="xoc", tables=100, seed=2)
    assert far.power > 0.9
    assert "statistic_kind='xoc'" in repr(r)


def test_xoc_power_is_the_share_the_binding_rejects():
    rows = [8, 11, 6]
    sizes = [[40 + 3 * i for i in range(8)], 55, list(range(20, 80, 10))]
    flat = np.concatenate([sizes[0], np.full(11, 55), sizes[2]])
    group = np.repeat(np.arange(3), rows)
    alpha = ALPHA3 * np.array([[1.0], [2.5], [0.6]])    # three precisions
    seed, tables, level = 7, 60, 0.1
    r = dirmn.power_groups(alpha, rows, sizes, statistic="xoc", tables=tables, level=level,
                           seed=seed)
    rejected, stats = 0, []
    for t in range(tables):
        X = dirmn.rvs(alpha, flat, component=group, seed=derived_key(seed, 3, t))
        q = dirmn.test_groups(X, group, statistic="xoc")
        assert q.df == 2
        stats.append(q.statistic)
        rejected += q.pvalue < level
    assert 0 < rejected < tables                     # neither extreme
    assert r.rejected == rejected
    assert abs(r.mean_statistic - np.mean(stats)) <= 1e-9 * max(1.0, np.mean(stats))
    assert dirmn.power_groups(alpha, rows, sizes, statistic="xoc", tables=tables, level=level,
                              seed=seed) == r


def test_forms_of_rows_and_sizes_agree():
    a = ALPHA3[:2]
    base = dirmn.power_groups(a, [10, 10], [[30] * 10, [30] * 10], tables=40, seed=6)
    for rows, sizes in ((10, 30), ([10, 10], 30), (10, [30, 30]), (10, np.full((2, 10), 30)),
                        (np.array([10, 10]), [np.full(10, 30), 30.0])):
        assert dirmn.power_groups(a, rows, sizes, tables=40, seed=6) == base
    logs = dirmn.power_groups(np.log(a), 10, 30, tables=40, seed=6, param="logalpha")
    assert logs.rejected == base.rejected
    assert logs.mean_statistic == pytest.approx(base.mean_statistic, rel=1e-9)


def test_options_reach_the_fits():
    a = ALPHA3[:2]
    exact = dirmn.power_groups(a, 15, 50, tables=30, seed=8)
    one = dirmn.power_groups(a, 15, 50, tables=30, seed=8, max_iterations=1)
    assert one.mean_statistic != exact.mean_statistic
    loose = dirmn.power_groups(a, 15, 50, tables=30, seed=8, tolerance=1e-3)
    assert loose.mean_statistic == pytest.approx(exact.mean_statistic, rel=1e-2)


def test_bad_input_is_named():
    a = ALPHA3[:2]

    def argument(cls, *args, **kwargs):
        with pytest.raises(cls) as e:
            dirmn.power_groups(*args, **kwargs)
        return e.value

    assert argument(dirmn.InvalidArgumentError, a[:1], 10, 30).argument == "alpha"
    assert argument(dirmn.InvalidArgumentError, a[0], 10, 30).argument == "alpha"
    e = argument(dirmn.InvalidArgumentError, a, [10, -1], 30)
    assert (e.argument, e.index, e.value) == ("rows_per_group", 1, -1)
    assert argument(dirmn.InvalidArgumentError, a, [10, 0], 30).argument == "rows_per_group"
    assert argument(dirmn.InvalidArgumentError, a, 2.5, 30).argument == "rows_per_group"
    assert argument(dirmn.DimensionMismatchError, a, [1, 2, 3], 30).argument \
        == "rows_per_group"
    for level in (0.0, 1.0, -0.1, 1.5, float("nan")):
        assert argument(dirmn.InvalidArgumentError, a, 10, 30, level=level).argument == "level"
    for tables in (0, -3, 2.0, True):
        assert argument(dirmn.InvalidArgumentError, a, 10, 30, tables=tables).argument \
            == "tables"
    e = argument(dirmn.InvalidArgumentError, a, [3, 2], [30, [5, -4]])
    assert (e.argument, e.row) == ("size", 4)
    assert argument(dirmn.InvalidArgumentError, a, 3, 2**31).argument == "size"
    assert argument(dirmn.DimensionMismatchError, a, 3, [30, 30, 30]).argument == "size"
    assert argument(dirmn.DimensionMismatchError, a, 3, [30, [1, 2]]).argument == "size"
    for bad in ("Xmcupo", "Xoc", "wald", None, 1, 2):
        e = argument(dirmn.InvalidArgumentError, a, 3, 30, statistic=bad)
        assert e.argument == "statistic" and "'lrt', 'xmcupo' or 'xoc'" in str(e)
    e = argument(dirmn.InvalidParameterError, [[1.0, 1.0], [2.0, 0.0]], 3, 30)
    assert (e.vector, e.index) == (1, 1)
    e = argument(dirmn.InvalidParameterError, [[1.0, -1.0], [2.0, 1.0]], 3, 30)
    assert (e.vector, e.index) == (0, 1)
    assert argument(dirmn.InvalidArgumentError, a, 3, 30, seed=-1).argument == "seed"
    assert argument(dirmn.InvalidArgumentError, a, 3, 30, param="log").argument == "param"
