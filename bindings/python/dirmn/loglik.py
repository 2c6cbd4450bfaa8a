"""Log-likelihoods and their sums and derivatives.

Every function gives the log pmf by default (``full=True``); ``full=False``
gives the kernel, the part that depends on alpha:

    kernel = lgamma(A) - lgamma(N + A) + sum_v [lgamma(n_v + a_v) - lgamma(a_v)]
    loglik = kernel + lgamma(N + 1) - sum_v lgamma(n_v + 1)
"""

import ctypes
from dataclasses import dataclass

import numpy as np

from . import _capi as C
from ._arrays import float64_matrix, float64_vector
from .counts import counts_for
from .errors import DimensionMismatchError, InvalidArgumentError, check, invalid

_PARAMS = {"alpha": C.DIRMN_PARAM_ALPHA, "logalpha": C.DIRMN_PARAM_LOG_ALPHA}


def _param_code(param):
    try:
        return _PARAMS[param]
    except (KeyError, TypeError):
        raise invalid(InvalidArgumentError, "dirmn: param must be 'alpha' or 'logalpha', not "
                      "%r" % (param,), argument="param") from None


def _flags(full):
    if not isinstance(full, (bool, np.bool_)):
        raise invalid(InvalidArgumentError, "dirmn: full must be True or False, not %r"
                      % (full,), argument="full")
    return 0 if full else C.DIRMN_KERNEL


def _ptr(a):
    return None if a is None else a.ctypes.data_as(C._pd)


def loglik(counts, alpha, full=True, param="alpha", rowwise=False, context=None,
           real_valued=False):
    """Per-row Dirichlet-multinomial log-likelihoods.

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix
        The table, rows × V (anything :class:`~dirmn.Counts` accepts).
    alpha : array_like
        One parameter vector (V entries); or K vectors as a K × V array;
        or, with ``rowwise=True``, one vector per row (rows × V).
    full : bool
        True (default): the log pmf; False: the kernel, without the
        multinomial coefficients.
    param : {"alpha", "logalpha"}
        Whether ``alpha`` holds alpha or log alpha.
    rowwise : bool
        Whether ``alpha`` has one vector per row (``dirmn_loglik_rowwise``).
    context : Context, optional
    real_valued : bool
        Accept non-integral counts (for an array ``counts``).

    Returns
    -------
    numpy.ndarray
        Shape (rows,) for one vector or row-wise parameters, (rows, K) for
        K vectors. A row of zeros has log-likelihood 0.

    Raises
    ------
    InvalidParameterError
        An alpha <= 0 or not finite (``vector`` and ``index``; row-wise:
        ``row`` and ``index``).
    DimensionMismatchError
        ``alpha`` of the wrong length or shape.
    InvalidCountsError, InvalidArgumentError
        As :class:`~dirmn.Counts`, and for unknown ``param``.
    """
    code, flags = _param_code(param), _flags(full)
    with counts_for(counts, context, real_valued) as (c, ctx):
        rows, V = c.shape
        if rowwise:
            a, s_row, s_v = float64_matrix(alpha, "alpha")
            if a.shape != (rows, V):
                raise invalid(DimensionMismatchError, "dirmn: row-wise alpha must be %d x %d "
                              "(rows x columns), not %d x %d" % (rows, V, *a.shape),
                              argument="params")
            out = np.empty(rows)
            with c._call(ctx) as (p, h):
                check(C.dirmn_loglik_rowwise(p, h, _ptr(a), s_row, s_v, code, flags, _ptr(out),
                                             1), p)
            return out
        one = np.ndim(alpha) == 1
        if one:
            a = float64_vector(alpha, "alpha", V).reshape(1, V)
            s_k, s_v = V, 1
        else:
            a, s_k, s_v = float64_matrix(alpha, "alpha")
            if a.shape[1] != V:
                raise invalid(DimensionMismatchError, "dirmn: alpha has %d columns but the "
                              "table has %d" % (a.shape[1], V), argument="params")
        K = a.shape[0]
        if K == 0:
            raise invalid(InvalidArgumentError, "dirmn: alpha holds no parameter vector",
                          argument="params")
        out = np.empty((rows, K))
        with c._call(ctx) as (p, h):
            check(C.dirmn_loglik(p, h, K, _ptr(a), s_k, s_v, code, flags, _ptr(out), K, 1), p)
        return out[:, 0] if one else out


def logpmf(x, alpha, context=None):
    """The log pmf, in the manner of ``scipy.stats.dirichlet_multinomial``.

    Parameters
    ----------
    x : array_like
        One count vector, or rows of them.
    alpha : array_like
        The parameter vector.
    context : Context, optional

    Returns
    -------
    float or numpy.ndarray
        A float for one vector, else one value per row.

    Raises
    ------
    DirmnError
        As :func:`loglik`.
    """
    out = loglik(x, alpha, context=context, real_valued=True)
    return float(out[0]) if np.ndim(x) == 1 else out


@dataclass(frozen=True)
class LoglikSum:
    """The weighted sum over rows of the log-likelihood and its derivatives.

    Attributes
    ----------
    value : float
        The sum of the log pmf (or the kernel, with ``full=False``).
    gradient : numpy.ndarray
        V entries, with respect to alpha or log alpha as asked.
    hessian_diag : numpy.ndarray
        V entries: the Hessian is ``diag(hessian_diag) + hessian_scalar u u^T``
        with u = 1 (alpha) or u = alpha (log alpha).
    hessian_scalar : float
    param : str
        "alpha" or "logalpha".
    alpha : numpy.ndarray
        The parameters in alpha (for u).
    """

    value: float
    gradient: np.ndarray
    hessian_diag: np.ndarray
    hessian_scalar: float
    param: str
    alpha: np.ndarray

    def hessian(self):
        """The dense V × V Hessian.

        Returns
        -------
        numpy.ndarray
        """
        u = np.ones_like(self.hessian_diag) if self.param == "alpha" else self.alpha
        return np.diag(self.hessian_diag) + self.hessian_scalar * np.outer(u, u)


def loglik_sum(counts, alpha, weights=None, full=True, param="alpha", derivatives=False,
               context=None, real_valued=False):
    """The weighted sum of the log-likelihood over rows, with its derivatives.

    Computed from count histograms, cached on a :class:`~dirmn.Counts` while
    the weights are unchanged, so repeated calls cost O(distinct counts).

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix
    alpha : array_like
        One parameter vector (V entries), alpha or log alpha (``param``).
    weights : array_like, optional
        One finite weight >= 0 per row (default all 1).
    full : bool
        True: the log pmf; False: the kernel (the derivatives are the same).
    param : {"alpha", "logalpha"}
        The parameterisation of ``alpha`` and of the derivatives.
    derivatives : bool
        Also compute the gradient and Hessian.
    context : Context, optional
    real_valued : bool

    Returns
    -------
    float or LoglikSum
        The value alone, or with ``derivatives=True`` a :class:`LoglikSum`.

    Raises
    ------
    InvalidParameterError
        A bad alpha or weight (``index`` or ``row``).
    DimensionMismatchError
        ``alpha`` or ``weights`` of the wrong length.
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
    whole table's sums. A rank whose own part fails (a negative weight, say)
    raises its own error; the others raise CommunicationError.
    ``alpha`` must agree too. The value, gradient and Hessian are the
    sums over every rank's rows, equal on every rank.
    """
    code, flags = _param_code(param), _flags(full)
    with counts_for(counts, context, real_valued) as (c, ctx):
        rows, V = c.shape
        a = float64_vector(alpha, "alpha", V)
        w = None if weights is None else float64_vector(weights, "weights", rows)
        value = ctypes.c_double()
        g = hd = None
        hs = ctypes.c_double()
        if derivatives:
            g, hd = np.empty(V), np.empty(V)
        with c._call(ctx) as (p, h):
            check(C.dirmn_loglik_sum(p, h, _ptr(a), 1, code, _ptr(w), flags,
                                     ctypes.byref(value), _ptr(g), _ptr(hd),
                                     ctypes.byref(hs) if derivatives else None), p)
    if not derivatives:
        return value.value
    return LoglikSum(value.value, g, hd, hs.value, param,
                     np.exp(a) if param == "logalpha" else a)
