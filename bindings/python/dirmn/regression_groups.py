"""Per-group likelihood-ratio tests (``dirmn_reg_test_groups``): differential usage.

DRIMSeq's workflow as one call of the library: the categories (columns) of a
count table are partitioned into groups (genes and their transcripts); each
group's columns with counts get a Dirichlet-multinomial regression on the
full design and on the null design (its first ``p_null`` columns), and the
two are compared by a likelihood-ratio test; the p-values are adjusted over
the groups tested by Benjamini and Hochberg.
"""

import ctypes
import math
import warnings
from dataclasses import dataclass
from typing import List

import numpy as np

from . import _capi as C
from ._arrays import float64_vector
from ._options import reg_options
from .context import _choice
from .counts import counts_for
from .errors import (ConvergenceWarning, DimensionMismatchError, InvalidArgumentError, check,
                     invalid, status_name)
from .regression import _PARAMETRIZATIONS, _design, _pd


@dataclass(frozen=True)
class GroupTestResult:
    """The per-group likelihood-ratio tests of :func:`regression_groups`.

    One entry per group, in the order of :attr:`group` (the order in which
    the groups first appear in the ``groups`` argument).

    Attributes
    ----------
    group : list
        The groups' labels.
    categories : numpy.ndarray
        int64: each group's columns with counts (under the weights), the
        categories of its regressions.
    loglik_full, loglik_null : numpy.ndarray
        The maximised log pmf (multinomial coefficients included) of the
        group's regression on the full design and on the null design.
    statistic : numpy.ndarray
        The likelihood-ratio statistic ``2 (loglik_full - loglik_null)``.
    df : numpy.ndarray
        Its degrees of freedom: ``(p - p_null)`` times the group's free
        coefficients per covariate (``categories - 1`` for
        "meanprecision", ``categories`` for "loglinear").
    pvalue : numpy.ndarray
        ``P(chi2_df >= statistic)``.
    padjusted : numpy.ndarray
        The Benjamini-Hochberg adjusted p-values over the groups tested
        (R's ``p.adjust(p, method = "BH")``).
    converged : numpy.ndarray
        bool: both fits of the group met the tolerance.
    status : numpy.ndarray
        str: "ok" where the group was tested, else why not: the library's
        status name without ``DIRMN_ERROR_``, lower-cased
        ("invalid_argument" for fewer than two columns with counts, fewer
        rows with counts than covariates or a design not of full rank on
        the group's rows; "overflow" for an alpha beyond the double range).
        Such a group's numbers are NaN, and it is left out of the
        adjustment.
    tested : int
        The groups tested.
    parametrization : str
        "meanprecision" or "loglinear".
    covariates, p_null : int
        The columns of the full design (p) and of the null design.
    hold_precision : bool
        Whether each null fit held its full fit's precision.
    """

    group: List
    categories: np.ndarray
    loglik_full: np.ndarray
    loglik_null: np.ndarray
    statistic: np.ndarray
    df: np.ndarray
    pvalue: np.ndarray
    padjusted: np.ndarray
    converged: np.ndarray
    status: np.ndarray
    tested: int
    parametrization: str
    covariates: int
    p_null: int
    hold_precision: bool

    _COLUMNS = ("group", "categories", "loglik_full", "loglik_null", "statistic", "df",
                "pvalue", "padjusted", "converged", "status")

    def __len__(self):
        return len(self.group)

    def to_frame(self):
        """The table as a ``pandas.DataFrame``, one row per group.

        Columns ``group``, ``categories``, ``loglik_full``, ``loglik_null``,
        ``statistic``, ``df``, ``pvalue``, ``padjusted``, ``converged`` and
        ``status``.

        Raises
        ------
        ImportError
            Without pandas.
        """
        import pandas as pd
        return pd.DataFrame({name: (list(self.group) if name == "group" else
                                    getattr(self, name)) for name in self._COLUMNS})

    def summary(self, n=20):
        """A text table of the first ``n`` groups (all with ``n=None``).

        Returns
        -------
        str
        """
        G = len(self.group)
        shown = G if n is None else min(G, int(n))
        names = [str(g) for g in self.group[:shown]]
        w = max([5] + [len(s) for s in names]) + 2
        out = ["Per-group likelihood-ratio tests (dirmn): %s regression, full design %d "
               "columns, null its first %d%s" % (
                   self.parametrization, self.covariates, self.p_null,
                   " (at the full fit's precision)" if self.hold_precision else ""),
               "%d groups, %d tested; %d with padjusted < 0.05" % (
                   G, self.tested, int(np.sum(self.padjusted[~np.isnan(self.padjusted)]
                                              < 0.05))),
               "%-*s%11s%12s%6s%11s%11s  %s" % (w, "group", "categories", "statistic", "df",
                                                 "pvalue", "padjusted", "status")]
        for i in range(shown):
            st = str(self.status[i])
            if st == "ok" and not self.converged[i]:
                st = "ok (not converged)"
            out.append("%-*s%11d%12.6g%6s%11.4g%11.4g  %s" % (
                w, names[i], self.categories[i], self.statistic[i],
                "nan" if math.isnan(self.df[i]) else "%d" % self.df[i], self.pvalue[i],
                self.padjusted[i], st))
        if shown < G:
            out.append("... %d more groups" % (G - shown))
        return "\n".join(out)

    def __repr__(self):
        return "<dirmn.GroupTestResult %s groups=%d tested=%d p=%d p_null=%d>" % (
            self.parametrization, len(self.group), self.tested, self.covariates, self.p_null)


def _left_out(label):
    """True for None and NaN-like labels (NaN, pandas' NA and NaT)."""
    if label is None:
        return True
    try:
        return bool(label != label)
    except (TypeError, ValueError):   # pandas.NA: its comparisons are NA
        return True


def _encode_labels(entries, left_out, position):
    """The labels of `entries` in order of first appearance and each entry's
    0-based code, -1 where left_out(label); an unhashable label is named by
    its entry as `position` ("index" for a column, "row" for a row)."""
    index, labels = {}, []
    codes = np.empty(len(entries), dtype=np.int64)
    for k, g in enumerate(entries):
        if left_out(g):
            codes[k] = -1
            continue
        try:
            i = index.get(g)
        except TypeError:
            raise invalid(InvalidArgumentError, "dirmn: groups[%d] = %r is not hashable (a "
                          "label must be)" % (k, g), argument="groups", **{position: k}) from None
        if i is None:
            i = index[g] = len(labels)
            labels.append(g)
        codes[k] = i
    return labels, codes


def _group_codes(groups):
    """The labels in order of first appearance, and each column's 0-based code (-1: out)."""
    if isinstance(groups, (str, bytes)):
        raise invalid(InvalidArgumentError, "dirmn: groups must be a sequence of labels, one "
                      "per column, not a string", argument="groups")
    try:
        entries = list(groups)
    except TypeError:
        raise invalid(InvalidArgumentError, "dirmn: groups must be a sequence of labels, one "
                      "per column, not %r" % (groups,), argument="groups") from None
    labels, codes = _encode_labels(entries, _left_out, "index")
    if not labels:
        raise invalid(InvalidArgumentError, "dirmn: groups has no group: every entry is None "
                      "or NaN", argument="groups")
    return labels, codes


def _status_text(code):
    if code == C.DIRMN_SUCCESS:
        return "ok"
    name = status_name(int(code))
    for prefix in ("DIRMN_ERROR_", "DIRMN_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name.lower()


def regression_groups(counts, design, groups, p_null=1, weights=None, *,
                      parametrization="meanprecision", hold_precision=False, tolerance=None,
                      max_iterations=None, context=None, real_valued=False):
    """Per-group likelihood-ratio tests of a full against a null regression.

    Differential usage of the categories within groups, DRIMSeq's workflow as
    one call of the library (``dirmn_reg_test_groups``): ``groups`` gives
    each column of ``counts`` a group (a transcript its gene; None or NaN
    leaves the column out), and each group's columns with counts get a
    Dirichlet-multinomial regression (:func:`~dirmn.regression`) on the
    full ``design`` and on the null design ``design[:, :p_null]``, and their
    likelihood-ratio test: ``statistic = 2 (loglik_full - loglik_null)``
    against chi-square with ``(p - p_null)`` times (the group's categories
    - 1) degrees of freedom ("meanprecision"; times the categories for
    "loglinear"). The p-values are adjusted over the groups tested by
    Benjamini and Hochberg.

    The default "meanprecision" is DRIMSeq's model (the proportions a
    softmax of the linear predictors, one precision per group; each group's
    reference category its first column with counts). By default each fit
    has its own maximum-likelihood precision; ``hold_precision=True`` fits
    each group's null model at its full fit's precision, as DRIMSeq does
    (its precision is estimated once, on the full design), which makes the
    statistics no smaller (the log-linear model ignores it). The fits are
    those :func:`~dirmn.regression` makes of the group's table of columns
    with counts; groups run on the context's threads, and the results do not
    depend on their number.

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix or AnnData-like or DataFrame-like
        Rows are observations (samples), columns the categories (anything
        :class:`~dirmn.Counts` accepts).
    design : array_like or DataFrame-like
        rows × p, p >= 2: the full design, its first ``p_null`` columns the
        null design (put the columns tested last).
    groups : sequence of hashable
        One label per column of ``counts``; None or NaN (or pandas' NA)
        leaves the column out. The result lists the groups in the order
        they first appear.
    p_null : int
        The columns of the null design, 1 .. p - 1 (default 1: an
        intercept).
    weights : array_like, optional
        One finite frequency weight >= 0 per row.
    parametrization : {"meanprecision", "loglinear"}
    hold_precision : bool
        Mean/precision: fit each null model at its full fit's precision
        (DRIMSeq's test) instead of its own.
    tolerance, max_iterations : optional
        Of each fit, as :func:`~dirmn.regression`'s.
    context : Context, optional
    real_valued : bool

    Returns
    -------
    GroupTestResult
        Per group: ``group``, ``categories``, ``loglik_full``,
        ``loglik_null``, ``statistic``, ``df``, ``pvalue``, ``padjusted``,
        ``converged``, ``status``; and ``tested``. ``to_frame()`` makes a
        pandas DataFrame of it.

    Raises
    ------
    DimensionMismatchError
        ``groups`` with another length than the columns; ``design`` or
        ``weights`` with another number of rows than the table.
    InvalidArgumentError
        An unknown ``parametrization``; ``groups`` without any group, or
        with a label that is not hashable; p < 2, or ``p_null`` outside 1
        .. p - 1.
    InvalidParameterError
        A design entry that is not finite (``row``, ``column``), or a bad
        weight.
    NotSupportedError
        A :class:`~dirmn.Counts` split over a :class:`~dirmn.Communicator`
        (this release tests groups on one process's table only, though
        :func:`~dirmn.regression` itself is collective on such counts:
        detach it with ``set_communicator(None)`` for this rank's rows
        alone).

    A group that cannot be tested (fewer than two columns with counts,
    fewer rows with counts than p, a design not of full rank on its rows)
    gets its ``status`` and NaN results, and the call succeeds. Tested
    groups whose fits did not converge give ``converged=False`` and a
    :class:`~dirmn.errors.ConvergenceWarning`.
    """
    model = _choice(parametrization, _PARAMETRIZATIONS, "parametrization")
    if isinstance(p_null, (bool, np.bool_)) or not isinstance(p_null, (int, np.integer)):
        raise invalid(InvalidArgumentError, "dirmn: p_null must be an integer (the columns of "
                      "the null design), not %r" % (p_null,), argument="p_null")
    labels, codes = _group_codes(groups)
    G = len(labels)
    x, rs, cs, _ = _design(design)
    rows_x, p = x.shape
    with counts_for(counts, context, real_valued) as (c, ctx):
        if len(codes) != c.cols:
            raise invalid(DimensionMismatchError, "dirmn: groups has %d entries but the table "
                          "has %d columns (one group label per column)" % (len(codes), c.cols),
                          argument="groups")
        w = None if weights is None else float64_vector(weights, "weights", c.rows)
        opts = reg_options(tolerance, max_iterations, w, model, C.DIRMN_REG_REFERENCE, 0,
                           hold_precision)
        out = {name: np.empty(G) for name in ("loglik_full", "loglik_null", "statistic", "df",
                                               "p_value", "p_adjusted")}
        status = np.empty(G, dtype=np.int32)
        converged = np.empty(G, dtype=np.int32)
        categories = np.empty(G, dtype=np.int64)
        res = C.new(C.dirmn_reg_groups_result)
        for name, a in out.items():
            setattr(res, name, _pd(a))
        res.status = status.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        res.converged = converged.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        res.categories = categories.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        with c._call(ctx) as (ptr, h):
            check(C.dirmn_reg_test_groups(
                ptr, h, codes.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), G, _pd(x),
                rows_x, p, rs, cs, int(p_null), ctypes.byref(opts), ctypes.byref(res)), ptr)
        tested = int(res.tested)
    text = np.array([_status_text(s) for s in status])
    result = GroupTestResult(
        group=labels, categories=categories, loglik_full=out["loglik_full"],
        loglik_null=out["loglik_null"], statistic=out["statistic"], df=out["df"],
        pvalue=out["p_value"], padjusted=out["p_adjusted"], converged=converged != 0,
        status=text, tested=tested, parametrization=parametrization, covariates=int(p),
        p_null=int(p_null), hold_precision=bool(hold_precision))
    bad = int(np.sum((text == "ok") & ~result.converged))
    if bad:
        warnings.warn("dirmn.regression_groups: the fits of %d of the %d groups tested stopped "
                      "without convergence (converged=False)" % (bad, tested),
                      ConvergenceWarning, stacklevel=2)
    return result
