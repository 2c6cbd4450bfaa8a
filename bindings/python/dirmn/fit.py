"""Maximum-likelihood fits of alpha, and the test for overdispersion."""

import ctypes
import math
import warnings
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from . import _capi as C
from ._callbacks import Pending, progress_function
from ._arrays import float64_vector
from ._options import fit_options
from .counts import counts_for
from .errors import ConvergenceWarning, InvalidArgumentError, check, invalid
from .sample import ALPHA_MAX, convert, draw, model_alpha, simulate_tables, sizes_array
from .context import default_context


@dataclass(frozen=True)
class FitResult:
    """A maximum-likelihood fit of the Dirichlet-multinomial (see :func:`fit`).

    Attributes
    ----------
    alpha : numpy.ndarray
        V fitted alphas; 0 for columns without counts (their MLE is the limit
        alpha -> 0); under ``multinomial_limit`` the multinomial proportions.
    std_error_alpha, std_error_log_alpha : numpy.ndarray
        Standard errors of alpha and log alpha; NaN where there is none
        (columns without counts, the multinomial limit).
    loglik : float
        The maximised log pmf (multinomial coefficients included).
    loglik_kernel : float
        The same without the coefficients.
    aic, bic : float
        ``-2 loglik + 2 P`` and ``-2 loglik + P log(nobs)``.
    nobs : float
        The rows with counts and a positive weight (with weights, their sum).
    parameters : int
        P: the alphas fitted (columns with counts).
    precision : float
        The sum of alpha (inf under the multinomial limit).
    gradient_norm : float
        The gradient's max-norm in log alpha at the result.
    iterations : int
    converged : bool
    multinomial_limit : bool
        The data show no overdispersion: the likelihood grows toward the
        multinomial (precision -> inf).
    zero_columns : int
        Columns without counts.
    hessian_diag : numpy.ndarray or None
        With ``hessian_scalar``, the Hessian in alpha at the fit,
        ``diag(hessian_diag) + hessian_scalar 11^T`` (None under the
        multinomial limit or with a single column of counts).
    hessian_scalar : float
    column_names : list of str or None

    Notes
    -----
    The fit also keeps the fitted table's row totals, for :meth:`simulate`.
    """

    alpha: np.ndarray
    std_error_alpha: np.ndarray
    std_error_log_alpha: np.ndarray
    loglik: float
    loglik_kernel: float
    aic: float
    bic: float
    nobs: float
    parameters: int
    precision: float
    gradient_norm: float
    iterations: int
    converged: bool
    multinomial_limit: bool
    zero_columns: int
    hessian_diag: Optional[np.ndarray]
    hessian_scalar: float
    column_names: Optional[List[str]]
    _row_totals: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    def simulate(self, n=1, seed=None, output="ndarray", context=None):
        """New tables drawn from the fitted DM (``dirmn_sample``), R's ``simulate``.

        Each table has the fitted table's rows, row b holding row b's
        observed total, drawn from DM(alpha, total). Columns without counts
        (fitted alpha 0) stay empty (alpha 1e-300 is drawn from: a count
        there has a chance below 1e-290). Under ``multinomial_limit`` the
        rows are multinomial with the fitted proportions (drawn as a DM
        whose precision is 1e300).

        Parameters
        ----------
        n : int
            How many tables.
        seed : None, int, numpy.random.Generator or numpy.random.RandomState
            As :func:`~dirmn.rvs`: table t is drawn with the 64-bit seed
            S + t, S the seed given (or drawn), so ``simulate(seed=s)``
            is ``dirmn.rvs(alpha, totals, seed=s)`` (alpha as above: zeros
            as 1e-300, the multinomial limit's scaled to sum 1e300).
        output : {"ndarray", "csr", "counts"}
            As :func:`~dirmn.rvs`.
        context : Context, optional
            Where to draw; by default :func:`~dirmn.default_context`.

        Returns
        -------
        numpy.ndarray or scipy.sparse.csr_matrix or Counts
            One table for ``n=1``; a list of ``n`` tables otherwise.

        Raises
        ------
        InvalidArgumentError
            ``n`` < 1, a bad ``seed`` or ``output``; a fit of real-valued
            counts whose row totals are not integers (argument
            "row_totals"), or a FitResult made without them.
        """
        if self._row_totals is None:
            raise invalid(InvalidArgumentError, "dirmn: this FitResult holds no row totals (it "
                          "was not made by dirmn.fit): nothing to simulate",
                          argument="row_totals")
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if self.multinomial_limit:
            alpha = alpha / alpha.sum() * ALPHA_MAX
        alpha = model_alpha(alpha).reshape(1, -1)
        sizes = sizes_array(self._row_totals, "row_totals")
        ctx = context if context is not None else default_context()

        def one(s, out):
            counts, _ = draw(ctx, alpha, sizes.shape[0], sizes, seed=s)
            return convert(counts, out)

        return simulate_tables(n, seed, output, one)

    def __repr__(self):
        return ("FitResult(loglik=%.6g, precision=%.6g, parameters=%d, nobs=%g, converged=%s)"
                % (self.loglik, self.precision, self.parameters, self.nobs, self.converged))


def criteria(loglik, parameters, nobs):
    """AIC and BIC by the library's one rule (P parameters, n observations).

    Returns
    -------
    tuple of (float, float)
    """
    aic = -2.0 * loglik + 2.0 * parameters
    bic = -2.0 * loglik + parameters * math.log(nobs) if nobs > 0 else math.nan
    return aic, bic


def fit(counts, weights=None, start=None, tolerance=None, max_iterations=None, context=None,
        real_valued=False, progress=None):
    """Maximum-likelihood alpha of the Dirichlet-multinomial for a table.

    Newton's method on log alpha (``dirmn_fit``), from the method of moments
    or ``start``.

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix
        Rows are observations.
    weights : array_like, optional
        One finite weight >= 0 per row.
    start : array_like, optional
        V positive starting alphas.
    tolerance : float, optional
        Stop when a Newton step's predicted gain is below ``tolerance x
        |loglik|`` (library default 1e-10).
    max_iterations : int, optional
        Library default 1000. Stopping there gives ``converged=False`` and a
        :class:`~dirmn.errors.ConvergenceWarning`, not an error.
    context : Context, optional
    real_valued : bool
    progress : callable, optional
        ``progress(iteration, loglik, change)``, called on the calling thread
        after each Newton iteration (``dirmn_progress_fn``): ``iteration`` =
        1, 2, ... (the last call's is the result's ``iterations``; a start
        that went nowhere is followed by the method of moments' start, whose
        iterations count on), ``loglik`` the log pmf after it and ``change``
        the gradient's max-norm in log alpha. A true return value stops the
        fit: it raises :class:`~dirmn.errors.CancelledError` (the library
        leaves no result). An exception it raises stops the fit too and is
        re-raised, unchanged.

    Returns
    -------
    FitResult

    Raises
    ------
    InvalidArgumentError
        Bad options, or a table without counts.
    InvalidParameterError
        A bad weight (``row``) or start value (``index``).
    DimensionMismatchError
        ``weights`` or ``start`` of the wrong length.
    CancelledError
        ``progress`` returned a true value, or the context's interrupt did.
    KeyboardInterrupt
        Ctrl-C during the fit (see :class:`~dirmn.Context`).
    CommunicationError
        On counts split over a :class:`~dirmn.Communicator`: a callback
        failed (its exception is the ``__cause__``), or another rank's part
        of the call failed (the message names the first rank that did).

    Notes
    -----
    On a :class:`~dirmn.Counts` split by rows over a
    :class:`~dirmn.Communicator` (:meth:`~dirmn.Counts.set_communicator`)
    the call is collective: every rank makes it, in the same order, with
    the same options and its own rows' ``weights``, and every rank gets the
    whole table's fit. A rank whose own part fails (a negative weight, say)
    raises its own error; the others raise CommunicationError.
    ``start`` must agree too. The result's ``alpha``, standard errors and
    ``iterations`` are bit for bit those of one process holding the whole
    table, ``loglik`` equal to rounding (its multinomial coefficients are
    summed per rank, then over ranks); :meth:`FitResult.simulate` draws
    this rank's rows.
    """
    with counts_for(counts, context, real_valued) as (c, ctx):
        rows, V = c.shape
        w = None if weights is None else float64_vector(weights, "weights", rows)
        s = None if start is None else float64_vector(start, "start", V)
        hd = np.full(V, np.nan)
        opts = fit_options(tolerance, max_iterations, w, s, hd)
        pending = Pending()
        trampoline = progress_function(progress, pending)   # alive for the call
        opts.progress = trampoline
        alpha, se, sel = np.empty(V), np.empty(V), np.empty(V)
        r = C.new(C.dirmn_fit_result)
        r.alpha = alpha.ctypes.data_as(C._pd)
        r.std_error_alpha = se.ctypes.data_as(C._pd)
        r.std_error_log_alpha = sel.ctypes.data_as(C._pd)
        with c._call(ctx, pending) as (p, h):
            check(C.dirmn_fit(p, h, ctypes.byref(opts), ctypes.byref(r)), p)
        del trampoline
        names = c.column_names
        totals = c.row_totals()
    limit = bool(r.multinomial_limit)
    # The library reports 0 where there is no standard error.
    no_se = (alpha == 0) | (sel == 0) | limit
    se[no_se] = np.nan
    sel[no_se] = np.nan
    if not r.converged:
        warnings.warn("dirmn.fit: no convergence in %d iterations (gradient norm %.3g); the "
                      "result is the last iterate: increase max_iterations"
                      % (r.iterations, r.gradient_norm), ConvergenceWarning, stacklevel=2)
    aic, bic = criteria(r.loglik, r.parameters, r.observations)
    return FitResult(alpha, se, sel, r.loglik, r.loglik_kernel, aic, bic, r.observations,
                     int(r.parameters), r.precision, r.gradient_norm, int(r.iterations),
                     bool(r.converged), limit, int(r.zero_columns),
                     None if np.isnan(hd).all() else hd, r.hessian_scalar, names, totals)


@dataclass(frozen=True)
class OverdispersionTestResult:
    """The test of the multinomial against the DM (see :func:`overdispersion_test`).

    Attributes
    ----------
    method : str
        "lrt" or "score": which test ``statistic``, ``df`` and ``pvalue`` are.
    statistic, df, pvalue : float
    lrt_statistic, lrt_p_value : float
        2 (loglik DM - loglik multinomial) and its boundary-null p-value
        P(chi2_1 >= statistic) / 2.
    score_statistic, score_df, score_scale, score_p_value : float
        Kim & Margolin's C(alpha) statistic and its scaled chi-square.
    loglik_dm, loglik_multinomial : float
    precision : float
        The fitted sum of alpha (inf at the multinomial limit).
    categories : int
        Columns with counts.
    nobs : float
    converged : bool
        Whether the DM fit converged.
    """

    method: str
    statistic: float
    df: float
    pvalue: float
    lrt_statistic: float
    lrt_p_value: float
    score_statistic: float
    score_df: float
    score_scale: float
    score_p_value: float
    loglik_dm: float
    loglik_multinomial: float
    precision: float
    categories: int
    nobs: float
    converged: bool


def overdispersion_test(counts, method="lrt", weights=None, tolerance=None,
                        max_iterations=None, context=None, real_valued=False):
    """Tests the multinomial (null) against the Dirichlet-multinomial.

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix
    method : {"lrt", "score"}
        The likelihood-ratio test (boundary null 1/2 chi2_0 + 1/2 chi2_1) or
        the C(alpha) score test; both are computed, ``method`` picks which
        fills ``statistic``, ``df`` and ``pvalue``.
    weights : array_like, optional
        Frequency weights, one per row.
    tolerance, max_iterations : optional
        Of the DM fit, as :func:`fit`.
    context : Context, optional
    real_valued : bool

    Returns
    -------
    OverdispersionTestResult

    Raises
    ------
    InvalidArgumentError
        Unknown ``method``, bad options, a table without counts.
    InvalidParameterError
        A bad weight.
    CommunicationError
        On counts split over a :class:`~dirmn.Communicator`: a callback
        failed (its exception is the ``__cause__``), or another rank's part
        of the call failed (the message names the first rank that did).

    Notes
    -----
    On a :class:`~dirmn.Counts` split by rows over a
    :class:`~dirmn.Communicator` (:meth:`~dirmn.Counts.set_communicator`)
    the call is collective: every rank makes it, in the same order, with
    the same options and its own rows' ``weights``, and every rank gets the
    whole table's test. A rank whose own part fails (a negative weight, say)
    raises its own error; the others raise CommunicationError.
    """
    if method not in ("lrt", "score"):
        raise invalid(InvalidArgumentError, "dirmn: method must be 'lrt' or 'score', not %r"
                      % (method,), argument="method")
    with counts_for(counts, context, real_valued) as (c, ctx):
        w = None if weights is None else float64_vector(weights, "weights", c.rows)
        opts = fit_options(tolerance, max_iterations, w)
        r = C.new(C.dirmn_overdispersion_result)
        with c._call(ctx) as (p, h):
            check(C.dirmn_overdispersion_test(p, h, ctypes.byref(opts), ctypes.byref(r)), p)
    if not r.converged:
        warnings.warn("dirmn.overdispersion_test: the DM fit did not converge; the likelihood-"
                      "ratio statistic is from its last iterate", ConvergenceWarning,
                      stacklevel=2)
    lrt = method == "lrt"
    return OverdispersionTestResult(
        method, r.lrt_statistic if lrt else r.score_statistic, 1.0 if lrt else r.score_df,
        r.lrt_p_value if lrt else r.score_p_value, r.lrt_statistic, r.lrt_p_value,
        r.score_statistic, r.score_df, r.score_scale, r.score_p_value, r.loglik_dm,
        r.loglik_multinomial, r.precision, int(r.categories), r.observations,
        bool(r.converged))
