"""Does one composition fit every group of rows? (``dirmn_test_groups``)

The test of one Dirichlet-multinomial for all rows against one per group of
rows, by the likelihood ratio (HMP's Xdc test, on the full likelihood) or
HMP's Xmcupo statistic, and the test of one shared overdispersion against
one per group (HMP's Xoc), referred to chi-square and, optionally, to its
parametric bootstrap; its power by simulation (``dirmn_power_groups``); and
the test of one group's rows against a given composition (HMP's Xsc,
``dirmn_test_proportions``) with its power by simulation
(``dirmn_power_proportions``).
"""

import ctypes
import numbers
import warnings
from dataclasses import dataclass
from typing import List

import numpy as np

from . import _capi as C
from ._options import c_int_arg, float_arg
from .counts import counts_for
from .errors import (ConvergenceWarning, DimensionMismatchError, InvalidArgumentError, check,
                     invalid)

_pi64 = ctypes.POINTER(ctypes.c_int64)
from ._arrays import float64_matrix, float64_strided_vector
from .loglik import _param_code
from .regression_groups import _encode_labels, _left_out
from .sample import _context, _count_arg, _is_integer, seed64, sizes_array

_STATISTICS = {"lrt": C.DIRMN_GROUP_LRT, "xmcupo": C.DIRMN_GROUP_XMCUPO,
               "xoc": C.DIRMN_GROUP_XOC}


def _statistic_code(statistic):
    """The library's ``dirmn_group_statistic`` for ``statistic``."""
    try:
        return _STATISTICS[statistic]
    except (KeyError, TypeError):
        raise invalid(InvalidArgumentError, "dirmn: statistic must be 'lrt', 'xmcupo' or "
                      "'xoc', not %r" % (statistic,), argument="statistic") from None


@dataclass(frozen=True)
class TestGroupsResult:
    """The result of :func:`test_groups`, in the shape of scipy's tests.

    Unpacks as ``statistic, pvalue`` (as ``scipy.stats`` results do).

    Attributes
    ----------
    statistic : float
        The test statistic, >= 0: ``2 (loglik_groups - loglik_null)`` for
        ``statistic_kind`` ``"lrt"`` and ``"xoc"`` (HMP's Xoc), HMP's
        Xmcupo for ``"xmcupo"``.
    pvalue : float
        ``P(chi2_df >= statistic)``.
    df : float
        ``(groups - 1) categories`` for ``"lrt"``, ``(groups - 1)
        (categories - 1)`` for ``"xmcupo"``, ``groups - 1`` for ``"xoc"``.
    pvalue_bootstrap : float
        The parametric bootstrap's p-value ``(1 + #{T* >= T}) / (1 +
        bootstrap)`` (Davison & Hinkley 1997, eq. 4.11), T* the statistic
        of a table drawn from the fitted null model with each row's
        observed total (the one DM; for ``"xoc"`` each row from its group's
        DM of the shared-precision fit); 1 when ``bootstrap`` is 0.
    bootstrap : int
        The bootstrap tables drawn (B).
    loglik_null : float
        The maximised log pmf under the null (multinomial coefficients
        included): one DM for all the rows; for ``"xoc"``, one DM per
        group of one shared precision (each group's proportions free).
    loglik_groups : float
        The sum of the groups' maximised log pmfs, each group at its own DM.
    groups : int
        G: the groups with counts (groups whose rows have no counts are
        left out).
    categories : int
        P: the columns with counts (in the rows tested).
    converged : bool
        Every fit of the observed table converged.
    group : list
        The labels of the groups, in the order they first appear in the
        ``groups`` argument (code 0, 1, ... as the library numbered them).
    statistic_kind : str
        ``"lrt"``, ``"xmcupo"`` or ``"xoc"``: the statistic asked for.
    """

    __test__ = False   # not a pytest test class, whatever its name

    statistic: float
    pvalue: float
    df: float
    pvalue_bootstrap: float
    bootstrap: int
    loglik_null: float
    loglik_groups: float
    groups: int
    categories: int
    converged: bool
    group: List
    statistic_kind: str = "lrt"

    def __iter__(self):
        return iter((self.statistic, self.pvalue))

    def __repr__(self):
        text = ("TestGroupsResult(statistic_kind=%r, statistic=%.6g, pvalue=%.6g, df=%g, "
                "groups=%d, categories=%d" % (self.statistic_kind, self.statistic, self.pvalue,
                                              self.df, self.groups, self.categories))
        if self.bootstrap:
            text += ", pvalue_bootstrap=%.6g, bootstrap=%d" % (self.pvalue_bootstrap,
                                                               self.bootstrap)
        return text + ", converged=%s)" % self.converged


def _negative_number(g):
    return isinstance(g, numbers.Real) and not isinstance(g, (bool, np.bool_)) and g < 0


def _row_codes(groups, rows):
    """The labels in order of first appearance, and each row's 0-based code
    (-1: left out: None, NaN or a negative number)."""
    if isinstance(groups, (str, bytes)):
        raise invalid(InvalidArgumentError, "dirmn: groups must be a sequence of labels, one "
                      "per row, not a string", argument="groups")
    if isinstance(groups, np.ndarray) and groups.ndim == 1 and groups.dtype.kind in "iuf":
        a = groups
        out = (a < 0) | (np.isnan(a) if a.dtype.kind == "f" else False)
        keep = ~np.asarray(out, dtype=bool)
        vals, first, inv = np.unique(a[keep], return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(order.shape[0], dtype=np.int64)
        rank[order] = np.arange(order.shape[0])
        codes = np.full(a.shape[0], -1, dtype=np.int64)
        codes[keep] = rank[inv.reshape(-1)]
        labels = [v.item() for v in vals[order]]
    else:
        try:
            entries = list(groups)
        except TypeError:
            raise invalid(InvalidArgumentError, "dirmn: groups must be a sequence of labels, "
                          "one per row, not %r" % (groups,), argument="groups") from None
        labels, codes = _encode_labels(entries, lambda g: _left_out(g) or _negative_number(g),
                                       "row")
    if codes.shape[0] != rows:
        raise invalid(DimensionMismatchError, "dirmn: groups has %d entries but the table has %d "
                      "rows" % (codes.shape[0], rows), argument="groups")
    if len(labels) < 2:
        raise invalid(InvalidArgumentError, "dirmn: groups has %d group%s (after leaving out "
                      "None, NaN and negative codes): the test needs at least 2"
                      % (len(labels), "" if len(labels) == 1 else "s"), argument="groups")
    return labels, codes


def test_groups(x, groups, *, statistic="lrt", bootstrap=0, seed=None, tolerance=None,
                max_iterations=None, context=None, real_valued=False):
    """Tests whether the rows of every group share one DM (``dirmn_test_groups``).

    The test of one Dirichlet-multinomial for all the rows (the null)
    against one for each group's rows, by ``statistic`` (G groups with
    counts, P columns with counts), or, with ``statistic="xoc"``, of one
    shared overdispersion against one per group:

    * ``"lrt"`` (the default): the likelihood ratio of a DM fitted to all
      the rows against one fitted to each group's rows, ``statistic = 2
      (sum_g loglik_g - loglik_0)``, referred to chi-square with ``(G - 1)
      P`` degrees of freedom: HMP's ``Xdc.sevsample`` on the full
      likelihood.
    * ``"xmcupo"``: HMP's ``Xmcupo.sevsample`` (La Rosa et al. 2012), the
      groups' pooled proportions ``pi_g`` against their precision-weighted
      mean ``pi_0``, ``sum_g sum_v (pi_gv - pi_0v)^2 / (pi_0v c_g)``, ``c_g
      = (theta_g (sum N^2 - sum N) + sum N) / (sum N)^2`` over group g's row
      totals N with ``theta_g`` Weir's method-of-moments overdispersion,
      referred to chi-square with ``(G - 1) (P - 1)`` degrees of freedom.
      No fit enters it (the result's log-likelihoods are still the fits').
    * ``"xoc"``: HMP's ``Xoc.sevsample`` (La Rosa et al. 2012), a test of
      the groups' overdispersion rather than their composition: do they
      share one overdispersion ``theta = 1 / (1 + A)``? The likelihood
      ratio of one DM per group with one shared precision ``A`` (each
      group's proportions free) against one DM per group, ``statistic = 2
      (sum_g loglik_g - loglik_0)``, referred to chi-square with ``G - 1``
      degrees of freedom; ``loglik_null`` is then the shared-precision
      fit's.

    With ``bootstrap`` > 0 the statistic is also referred to its parametric
    bootstrap: that many tables drawn from the fitted null with each row's
    observed total (the one DM; for ``"xoc"`` each row from its group's DM
    of the shared-precision fit), each tested by the same statistic
    (refitted under both hypotheses for ``"lrt"`` and ``"xoc"``; the
    chi-square reference is asymptotic, the bootstrap's holds for few rows
    too).

    Parameters
    ----------
    x : Counts or array_like or sparse matrix or AnnData-like or DataFrame-like
        Rows are observations (anything :class:`~dirmn.Counts` accepts).
    groups : array_like
        One label per row (any hashable values: strings, integers,
        categories). None, NaN (and pandas' NA) or a negative number leaves
        the row out. Labels are numbered 0, 1, ... in order of first
        appearance (:attr:`TestGroupsResult.group`).
    statistic : {"lrt", "xmcupo", "xoc"}
        The statistic (see above).
    bootstrap : int
        B, the bootstrap tables (0: the chi-square p-value alone).
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        The bootstrap tables' 64-bit seed, as :func:`~dirmn.rvs` takes it
        (an int: reproducible on every backend and for any thread count;
        None: drawn from ``numpy.random.default_rng()``).
    tolerance, max_iterations : optional
        Every fit's, as :func:`~dirmn.fit` (library defaults 1e-10, 1000).
    context : Context, optional
    real_valued : bool
        Accept non-integral counts (for an array ``x``; the bootstrap then
        needs integral row totals).

    Returns
    -------
    TestGroupsResult
        ``statistic``, ``pvalue``, ``df``, ``pvalue_bootstrap``, ...,
        ``statistic_kind``; unpacks as ``statistic, pvalue``.

    Raises
    ------
    InvalidArgumentError
        ``groups`` not a sequence, or with fewer than two groups; fewer
        than two groups with counts; ``statistic`` not ``"lrt"``,
        ``"xmcupo"`` or ``"xoc"``; ``bootstrap`` negative or not an integer;
        a bad ``seed``, ``tolerance`` or ``max_iterations``.
    DimensionMismatchError
        ``groups`` without one entry per row.
    InvalidCountsError
        As :class:`~dirmn.Counts`.
    NotSupportedError
        Counts wrapped from CUDA device memory, or counts split over a
        :class:`~dirmn.Communicator` (this release tests one process's
        table only: detach it with ``set_communicator(None)`` for this
        rank's rows alone).

    Examples
    --------
    >>> r = dirmn.test_groups(X, ["a"] * 10 + ["b"] * 12, bootstrap=999, seed=1)
    >>> r.statistic, r.pvalue, r.pvalue_bootstrap
    >>> dirmn.test_groups(X, ["a"] * 10 + ["b"] * 12, statistic="xmcupo").df
    >>> dirmn.test_groups(X, ["a"] * 10 + ["b"] * 12, statistic="xoc").pvalue
    """
    code = _statistic_code(statistic)
    if isinstance(bootstrap, (bool, np.bool_)) or not isinstance(bootstrap, (int, np.integer)) \
            or bootstrap < 0:
        raise invalid(InvalidArgumentError, "dirmn: bootstrap must be an integer >= 0, not %r"
                      % (bootstrap,), argument="bootstrap")
    o = C.new(C.dirmn_group_test_options)
    C.dirmn_group_test_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.bootstrap = int(bootstrap)
    o.seed = seed64(seed)
    o.statistic = code
    if tolerance is not None:
        o.tolerance = float_arg(tolerance, "tolerance")
    if max_iterations is not None:
        o.max_iterations = c_int_arg(max_iterations, "max_iterations")
    with counts_for(x, context, real_valued) as (c, ctx):
        labels, codes = _row_codes(groups, c.rows)
        r = C.new(C.dirmn_group_test_result)
        with c._call(ctx) as (p, h):
            check(C.dirmn_test_groups(p, h, codes.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                                      len(labels), ctypes.byref(o), ctypes.byref(r)), p)
    if not r.converged:
        warnings.warn("dirmn.test_groups: a fit of the observed table did not converge in "
                      "max_iterations = %d; the %s from its last iterate"
                      % (o.max_iterations, "statistic is" if statistic != "xmcupo"
                         else "log-likelihoods are"), ConvergenceWarning, stacklevel=2)
    return TestGroupsResult(float(r.statistic), float(r.p_value), float(r.df),
                            float(r.p_value_bootstrap), int(r.bootstrap), float(r.loglik_null),
                            float(r.loglik_groups), int(r.groups), int(r.categories),
                            bool(r.converged), labels, str(statistic))


test_groups.__test__ = False   # not a pytest test, whatever its name


@dataclass(frozen=True)
class TestProportionsResult:
    """The result of :func:`test_proportions`, in the shape of scipy's tests.

    Unpacks as ``statistic, pvalue`` (as ``scipy.stats`` results do).

    Attributes
    ----------
    statistic : float
        HMP's Xsc, >= 0; ``inf`` where a column with counts has proportion
        0.
    pvalue : float
        ``P(chi2_df >= statistic)`` (0 for an infinite statistic).
    df : float
        ``categories - 1``.
    theta : float
        Weir's method-of-moments overdispersion of the rows (0 for one row).
    rows : int
        The rows with counts (rows without counts are left out).
    categories : int
        The columns whose given proportion is positive.
    """

    __test__ = False   # not a pytest test class, whatever its name

    statistic: float
    pvalue: float
    df: float
    theta: float
    rows: int
    categories: int

    def __iter__(self):
        return iter((self.statistic, self.pvalue))

    def __repr__(self):
        return ("TestProportionsResult(statistic=%.6g, pvalue=%.6g, df=%g, theta=%.6g, rows=%d, "
                "categories=%d)" % (self.statistic, self.pvalue, self.df, self.theta, self.rows,
                                    self.categories))


def _proportions_arg(proportions, cols, against="the table has %d columns"):
    """``proportions`` as a float64 vector of ``cols`` entries and its stride in
    elements (the caller's memory where dtype and stride allow); ``against``
    says what gives ``cols``, for the message."""
    v, stride = float64_strided_vector(proportions, "proportions")
    if v.shape[0] != cols:
        raise invalid(DimensionMismatchError, "dirmn: proportions has %d entries but %s"
                      % (v.shape[0], against % cols), argument="proportions")
    return v, stride


def _power_options(tables, level, seed):
    """The options of a power simulation, checked, and the level as a float."""
    tables = _count_arg(tables, "tables", 1)
    lv = float_arg(level, "level")
    if not 0.0 < lv < 1.0:
        raise invalid(InvalidArgumentError, "dirmn: level = %r must be in (0, 1)" % (level,),
                      argument="level", value=lv)
    o = C.new(C.dirmn_power_options)
    C.dirmn_power_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.tables = tables
    o.level = lv
    o.seed = seed64(seed)
    return o, lv


def test_proportions(x, proportions, *, context=None, real_valued=False):
    """Tests whether the rows share a given composition (``dirmn_test_proportions``).

    HMP's ``Xsc.onesample`` (La Rosa et al. 2012, PLoS ONE 7:e52078): the
    rows' pooled proportions ``pi`` (column sums over the grand total)
    against the given ``proportions`` ``pi0``, a Wald statistic in the
    method-of-moments covariance of ``pi``, ``c (diag(pi0) - pi0 pi0^T)``
    with ``c = (theta (sum N^2 - sum N) + sum N) / (sum N)^2`` over the row
    totals N (``theta``: Weir's method-of-moments overdispersion of the
    rows, 0 for one row), taken through that matrix's Moore-Penrose
    inverse::

        statistic = sum over pi0_v > 0 of (pi_v - pi0_v)^2 / (pi0_v c)

    referred to chi-square with ``df = categories - 1`` degrees of freedom
    (``categories``: the columns with ``pi0_v > 0``). A column with counts
    where ``pi0_v = 0`` makes the statistic ``inf`` and the p-value 0 (HMP's
    numerical inverse ignores that column instead). Rows without counts are
    left out (HMP counts them in Weir's theta). No fit enters it.

    Parameters
    ----------
    x : Counts or array_like or sparse matrix or AnnData-like or DataFrame-like
        Rows are observations (anything :class:`~dirmn.Counts` accepts).
    proportions : array_like
        ``pi0``: one entry per column, each finite and >= 0, at least two
        positive, summing to 1 within 1e-6 (they are divided by their sum).
        A strided NumPy float64 view is read in place.
    context : Context, optional
    real_valued : bool
        Accept non-integral counts (for an array ``x``).

    Returns
    -------
    TestProportionsResult
        ``statistic``, ``pvalue``, ``df``, ``theta``, ``rows``,
        ``categories``; unpacks as ``statistic, pvalue``.

    Raises
    ------
    InvalidArgumentError
        ``proportions`` not a 1-D numeric vector, with fewer than two
        positive entries or not summing to 1; no row with counts.
    DimensionMismatchError
        ``proportions`` without one entry per column.
    InvalidParameterError
        A proportion negative or not finite (``index``, ``value``).
    InvalidCountsError
        As :class:`~dirmn.Counts`.
    NotSupportedError
        Counts wrapped from CUDA device memory, or counts split over a
        :class:`~dirmn.Communicator` (this release tests one process's
        table only: detach it with ``set_communicator(None)`` for this
        rank's rows alone).

    Examples
    --------
    >>> pi0 = Y.sum(axis=0) / Y.sum()          # another table's composition
    >>> r = dirmn.test_proportions(X, pi0)
    >>> r.statistic, r.pvalue, r.df, r.theta
    """
    with counts_for(x, context, real_valued) as (c, ctx):
        v, stride = _proportions_arg(proportions, c.cols)
        r = C.new(C.dirmn_proportion_test_result)
        with c._call(ctx) as (p, h):
            check(C.dirmn_test_proportions(p, h, v.ctypes.data_as(C._pd), stride,
                                           ctypes.byref(r)), p)
    return TestProportionsResult(float(r.statistic), float(r.p_value), float(r.df),
                                 float(r.theta), int(r.rows), int(r.categories))


test_proportions.__test__ = False   # not a pytest test, whatever its name


@dataclass(frozen=True)
class PowerResult:
    """The result of :func:`power_groups` and :func:`power_proportions`.

    Attributes
    ----------
    power : float
        The share of the simulated tables whose test rejected at ``level``
        (``rejected / tables``).
    std_error : float
        Its binomial standard error, ``sqrt(power (1 - power) / tables)``.
    tables : int
        The tables simulated.
    rejected : int
        The tables whose chi-square p-value was below ``level``.
    mean_statistic : float
        The test statistic's mean over the tables (:func:`power_proportions`:
        ``inf`` where a table has counts in a column whose proportion is 0).
    level : float
        The test's level.
    statistic_kind : str
        The test's statistic: :func:`power_groups`'s ``"lrt"``, ``"xmcupo"``
        or ``"xoc"``; ``"xsc"`` (HMP's Xsc) for :func:`power_proportions`.
    """

    power: float
    std_error: float
    tables: int
    rejected: int
    mean_statistic: float
    level: float
    statistic_kind: str = "lrt"

    def __repr__(self):
        return ("PowerResult(power=%.6g, std_error=%.3g, tables=%d, rejected=%d, "
                "mean_statistic=%.6g, level=%g, statistic_kind=%r)"
                % (self.power, self.std_error, self.tables, self.rejected,
                   self.mean_statistic, self.level, self.statistic_kind))


def _rows_per_group(rows_per_group, k):
    """``rows_per_group`` (one int for every group, or k ints) as k int64."""
    a = np.asarray(rows_per_group)
    if a.dtype == np.bool_ or a.dtype.kind not in "iu" or a.ndim > 1:
        raise invalid(InvalidArgumentError, "dirmn: rows_per_group must be an integer or a 1-D "
                      "array of integers (one per group), not %r" % (rows_per_group,),
                      argument="rows_per_group")
    if a.ndim == 0:
        a = np.full(k, int(a), dtype=np.int64)
    elif a.shape[0] != k:
        raise invalid(DimensionMismatchError, "dirmn: rows_per_group has %d entries for %d groups "
                      "(rows of alpha)" % (a.shape[0], k), argument="rows_per_group")
    out = np.ascontiguousarray(a, dtype=np.int64)
    for g in range(k):
        if out[g] < 0:
            raise invalid(InvalidArgumentError, "dirmn: rows_per_group[%d] = %d is negative"
                          % (g, out[g]), argument="rows_per_group", index=g,
                          value=int(out[g]))
    if np.count_nonzero(out) < 2:
        raise invalid(InvalidArgumentError, "dirmn: rows_per_group gives rows to %d group%s: "
                      "the test needs at least 2" % (np.count_nonzero(out),
                                                     "" if np.count_nonzero(out) == 1 else "s"),
                      argument="rows_per_group")
    return out


def _row_sizes(size, rows):
    """Every row's size in group order, from one size, one per group, or one
    sequence of sizes per group (``size``: power_groups's argument; ``rows``:
    the rows of each group)."""
    k = rows.shape[0]
    if isinstance(size, (str, bytes)):
        raise invalid(InvalidArgumentError, "dirmn: size must be an integer, k integers or k "
                      "sequences of integers, not a string", argument="size")
    if not hasattr(size, "__iter__") or (isinstance(size, np.ndarray) and size.ndim == 0):
        s = sizes_array(size, "size")
        return np.full(int(rows.sum()), int(s), dtype=np.int64)
    try:
        entries = list(size)
    except TypeError:
        raise invalid(InvalidArgumentError, "dirmn: size must be an integer, k integers or k "
                      "sequences of integers, not %r" % (size,), argument="size") from None
    if len(entries) != k:
        raise invalid(DimensionMismatchError, "dirmn: size has %d entries for %d groups (give "
                      "one size per group, or one sequence of sizes per group)"
                      % (len(entries), k), argument="size")
    parts = []
    for g, e in enumerate(entries):
        try:
            s = np.asarray(e)
        except (TypeError, ValueError):
            s = np.asarray(e, dtype=object)
        if s.dtype == np.bool_ or s.dtype.kind not in "iuf":
            raise invalid(InvalidArgumentError, "dirmn: size[%d] must be an integer or a 1-D "
                          "array of integers, not %r" % (g, e), argument="size", index=g)
        if s.ndim == 0:
            s = np.repeat(s.reshape(1), int(rows[g]))
        elif s.ndim != 1 or s.shape[0] != rows[g]:
            raise invalid(DimensionMismatchError, "dirmn: size[%d] has shape %s for the group's "
                          "%d rows" % (g, s.shape, rows[g]), argument="size", index=g)
        parts.append(s)
    # Checked as one array: a bad size names its row, all groups' rows in order.
    return sizes_array(np.concatenate(parts) if parts else np.zeros(0, np.int64), "size")


def power_groups(alpha, rows_per_group, size, *, statistic="lrt", tables=1000, level=0.05,
                 seed=None, param="alpha", tolerance=None, max_iterations=None, context=None):
    """The power of :func:`test_groups` by simulation (``dirmn_power_groups``).

    ``tables`` tables are drawn, each with ``rows_per_group[g]`` rows from
    DM(``alpha[g]``) for every group g (HMP's ``MC.Xdc.statistics`` for the
    full-likelihood test, ``MC.Xmcupo.statistics`` for ``statistic =
    "xmcupo"``, ``MC.Xoc.statistics`` for ``statistic = "xoc"``); each is
    tested as :func:`test_groups` tests it with
    ``statistic`` (the chi-square p-value), and the power is the share of
    tables with p-value below ``level``. Equal alphas give the test's size
    (its actual level). A table in which fewer than two groups have counts
    counts as not rejected.

    Parameters
    ----------
    alpha : array_like
        k × V: group g's alpha in row g (k >= 2 groups; as :func:`~dirmn.rvs`
        takes k vectors), or log alpha with ``param="logalpha"``.
    rows_per_group : int or array_like of int
        The rows of each group: one number for every group, or k.
    size : int or array_like
        The rows' sizes (counts per row): one for every row; k, one per
        group (every row of group g has ``size[g]``); or k sequences, group
        g's rows' sizes (``rows_per_group[g]`` entries each). Integers in 0
        .. 2^31 - 1.
    statistic : {"lrt", "xmcupo", "xoc"}
        The test's statistic, as :func:`test_groups` takes it: the
        likelihood ratio (chi-square on ``(G - 1) P`` degrees of freedom),
        HMP's Xmcupo (chi-square on ``(G - 1) (P - 1)``) or HMP's Xoc, the
        likelihood ratio of one shared precision against one per group
        (chi-square on ``G - 1``; alphas of equal sums give its size,
        whatever the groups' proportions).
    tables : int
        The tables simulated (>= 1).
    level : float
        The test's level, in (0, 1).
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        As :func:`~dirmn.rvs` takes it: an int is the library's 64-bit seed
        (the same result on every backend and for any thread count; table t
        is drawn by :func:`~dirmn.rvs` with its own seed derived from it).
    param : {"alpha", "logalpha"}
    tolerance, max_iterations : optional
        Every fit's, as :func:`~dirmn.fit` (library defaults 1e-10, 1000).
    context : Context, optional
        Its host threads run the tables, each on one.

    Returns
    -------
    PowerResult
        ``power``, ``std_error``, ``tables``, ``rejected``,
        ``mean_statistic``, ``level``, ``statistic_kind``.

    Raises
    ------
    InvalidArgumentError
        ``alpha`` not k × V with k >= 2; ``rows_per_group`` not integers, a
        negative entry (``index``) or fewer than two groups with rows;
        ``size`` negative, non-integral or too large; ``tables`` < 1;
        ``level`` outside (0, 1); a bad ``statistic``, ``seed``, ``param``,
        ``tolerance`` or ``max_iterations``.
    DimensionMismatchError
        ``rows_per_group`` or ``size`` with neither one nor k entries, or a
        group's sizes without one per row.
    InvalidParameterError
        An alpha outside [1e-306, 1e306] (``vector``: the group, ``index``).

    Examples
    --------
    >>> r = dirmn.power_groups([[2, 3, 1, 4], [3, 2, 1, 4]], 30, 100, tables=200, seed=1)
    >>> r.power, r.std_error
    >>> dirmn.power_groups([[2, 3, 1, 4], [3, 2, 1, 4]], 30, 100, statistic="xmcupo").power
    >>> dirmn.power_groups([[2, 3, 1, 4], [6, 9, 3, 12]], 30, 100, statistic="xoc").power
    """
    code = _param_code(param)
    stat = _statistic_code(statistic)
    ctx = _context(context)
    a = np.asarray(alpha) if not isinstance(alpha, np.ndarray) else alpha
    if a.ndim != 2:
        raise invalid(InvalidArgumentError, "dirmn: alpha must be 2-dimensional (k >= 2 groups' "
                      "vectors in rows), not of shape %s" % (a.shape,), argument="alpha")
    p, s_k, s_v = float64_matrix(a, "alpha")
    k, V = p.shape
    if k < 2 or V < 1:
        raise invalid(InvalidArgumentError, "dirmn: alpha must hold at least 2 groups' vectors "
                      "(rows) of at least one entry, not of shape %s" % (p.shape,),
                      argument="alpha")
    rows = _rows_per_group(rows_per_group, k)
    row_sizes = _row_sizes(size, rows)
    o, lv = _power_options(tables, level, seed)
    o.statistic = stat
    if tolerance is not None:
        o.tolerance = float_arg(tolerance, "tolerance")
    if max_iterations is not None:
        o.max_iterations = c_int_arg(max_iterations, "max_iterations")
    r = C.new(C.dirmn_power_result)
    with ctx._call() as (h,):
        check(C.dirmn_power_groups(h, k, V, p.ctypes.data_as(C._pd), s_k, s_v, code,
                                   rows.ctypes.data_as(_pi64), row_sizes.ctypes.data_as(_pi64),
                                   ctypes.byref(o), ctypes.byref(r)), h)
    return PowerResult(float(r.power), float(r.std_error), int(r.tables), int(r.rejected),
                       float(r.mean_statistic), lv, str(statistic))


_ROWS_MAX = 1 << 40   # the library's bound on power_proportions's rows


def power_proportions(alpha, proportions, rows, size, *, tables=1000, level=0.05, seed=None,
                      param="alpha", context=None):
    """The power of :func:`test_proportions` by simulation (``dirmn_power_proportions``).

    ``tables`` tables of ``rows`` rows are drawn from DM(``alpha``), row b
    of ``size[b]`` counts (HMP's ``MC.Xsc.statistics``); each is tested
    against ``proportions`` as :func:`test_proportions` tests it (HMP's Xsc,
    the chi-square p-value), and the power is the share of tables with
    p-value below ``level``. ``alpha`` proportional to ``proportions``
    gives the test's size (its actual level). A table without counts counts
    as not rejected. No fit enters the test.

    Parameters
    ----------
    alpha : array_like
        The V alphas the rows are drawn from (V >= 2; as :func:`~dirmn.rvs`
        takes one vector), or log alpha with ``param="logalpha"``. A strided
        NumPy float64 view is read in place.
    proportions : array_like
        ``pi0``, as :func:`test_proportions` takes it: one entry per
        category (V), each finite and >= 0, at least two positive, summing
        to 1 within 1e-6. A strided NumPy float64 view is read in place.
    rows : int
        The rows of each table (>= 1).
    size : int or array_like
        The rows' sizes (counts per row): one for every row, or ``rows``,
        row b's in ``size[b]``. Integers in 0 .. 2^31 - 1.
    tables : int
        The tables simulated (>= 1).
    level : float
        The test's level, in (0, 1).
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        As :func:`~dirmn.rvs` takes it: an int is the library's 64-bit seed
        (the same result on every backend and for any thread count; table t
        is drawn by :func:`~dirmn.rvs` with its own seed derived from it, as
        :func:`power_groups` draws).
    param : {"alpha", "logalpha"}
    context : Context, optional
        Its host threads run the tables, each on one.

    Returns
    -------
    PowerResult
        ``power``, ``std_error``, ``tables``, ``rejected``,
        ``mean_statistic`` (Xsc's mean; ``inf`` where a table has counts in
        a column whose proportion is 0), ``level``, ``statistic_kind``
        (``"xsc"``).

    Raises
    ------
    InvalidArgumentError
        ``alpha`` not a vector of at least two entries; ``proportions`` not
        a 1-D numeric vector, with fewer than two positive entries or not
        summing to 1; ``rows`` not an integer in 1 .. 2^40; ``size``
        negative, non-integral or too large (``row``); ``tables`` < 1;
        ``level`` outside (0, 1); a bad ``seed``, ``param`` or ``context``.
    DimensionMismatchError
        ``proportions`` without one entry per alpha, or ``size`` with
        neither one nor ``rows`` entries.
    InvalidParameterError
        An alpha outside [1e-306, 1e306] (``index``); a proportion negative
        or not finite (``index``, ``value``).

    Examples
    --------
    >>> pi0 = np.arange(1.0, 9.0) / 36
    >>> dirmn.power_proportions(20 * pi0, pi0, 30, 500, tables=400, seed=1).power   # ~ level
    >>> a = 20 * pi0[[7, 1, 2, 3, 4, 5, 6, 0]]                 # first and last swapped
    >>> r = dirmn.power_proportions(a, pi0, 30, 500, tables=400, seed=1)
    >>> r.power, r.std_error
    """
    code = _param_code(param)
    ctx = _context(context)
    a, a_stride = float64_strided_vector(alpha, "alpha")
    V = a.shape[0]
    if V < 2:
        raise invalid(InvalidArgumentError, "dirmn: alpha must have at least 2 entries, not %d"
                      % V, argument="alpha")
    v, p_stride = _proportions_arg(proportions, V, "alpha has %d entries")
    if not _is_integer(rows) or not 1 <= int(rows) <= _ROWS_MAX:
        raise invalid(InvalidArgumentError, "dirmn: rows must be an integer in 1 .. 2^40, not %r"
                      % (rows,), argument="rows")
    rows = int(rows)
    if isinstance(size, (str, bytes)):
        raise invalid(InvalidArgumentError, "dirmn: size must be an integer or a 1-D array of "
                      "integers, not a string", argument="size")
    sizes = sizes_array(size, "size")
    if sizes.ndim == 0:
        sizes = np.full(rows, int(sizes), dtype=np.int64)
    elif sizes.shape[0] != rows:
        raise invalid(DimensionMismatchError, "dirmn: size has %d entries for %d rows (give one "
                      "size, or one per row)" % (sizes.shape[0], rows), argument="size")
    o, lv = _power_options(tables, level, seed)
    r = C.new(C.dirmn_power_result)
    with ctx._call() as (h,):
        check(C.dirmn_power_proportions(h, V, a.ctypes.data_as(C._pd), a_stride, code, rows,
                                        sizes.ctypes.data_as(_pi64), v.ctypes.data_as(C._pd),
                                        p_stride, ctypes.byref(o), ctypes.byref(r)), h)
    return PowerResult(float(r.power), float(r.std_error), int(r.tables), int(r.rejected),
                       float(r.mean_statistic), lv, "xsc")
