"""Dirichlet-multinomial mixtures fitted by EM (``dirmn_mixture_*``)."""

import ctypes
import warnings

import numpy as np

from . import _capi as C
from ._callbacks import Pending, progress_function
from ._arrays import float64_vector
from ._handles import Closable, Handle, calling
from ._options import c_int_arg, float_arg
from .counts import counts_for
from .errors import ConvergenceWarning, InvalidArgumentError, check, invalid
from .sample import convert, draw, model_alpha, simulate_tables, sizes_array

_OBJECTIVES = {"ml": C.DIRMN_MIXTURE_ML, "dmn": C.DIRMN_MIXTURE_DMN}
_INITS = {"mixed": C.DIRMN_INIT_MIXED, "kmeans": C.DIRMN_INIT_KMEANS,
          "kmeanspp": C.DIRMN_INIT_KMEANSPP, "soft_kmeans": C.DIRMN_INIT_SOFT_KMEANS}
_CRITERIA = ("bic", "aic", "laplace")


def _choice(value, table, what):
    if value not in table:
        raise invalid(InvalidArgumentError, "dirmn: %s must be %s, not %r" % (
            what, ", ".join(repr(k) for k in table), value), argument=what)
    return table[value]


class Mixture(Closable):
    """A fitted mixture of k DM components (see :func:`mixture`).

    Components are in the library's order, by decreasing mixing weight.

    Attributes
    ----------
    alpha : numpy.ndarray
        k × V: component j's parameter vector in row j (the layout
        :func:`~dirmn.loglik` takes for K vectors).
    mixture_weights : numpy.ndarray
        The k mixing weights, summing to 1.
    responsibilities : numpy.ndarray
        rows × k: P(component j | row b) for the fitted rows (on counts
        split over a :class:`~dirmn.Communicator`, this rank's rows).
    loglik : float
        The mixture log-likelihood (multinomial coefficients included).
    objective : float
        What EM minimised: -loglik ("ml") or dmn's -loglik - log prior.
    aic, bic, laplace : float
        The library's criteria (smaller is better).
    iterations : int
    converged : bool
    k : int
    rows : int
        The fitted rows (on split counts, this rank's rows).
    nobs : float
    parameters : int
    objective_kind : str
        "ml" or "dmn".
    start : int
        Which start was best (0-based; see ``dirmn_mixture_info.start``).
    row_names, column_names : list of str or None

    Notes
    -----
    Every value is copied out when the fit returns; the library's mixture
    is kept only for :meth:`assign`. ``close()`` frees it (idempotent).
    The fitted table's row totals are kept for :meth:`simulate`.
    """

    def __init__(self, ptr, context, fields):
        self._context = context
        self._handle = Handle(self, ptr, C.dirmn_mixture_destroy, "mixture", context._lock)
        self._row_totals = None
        self.__dict__.update(fields)

    def simulate(self, n=1, seed=None, output="ndarray", return_component=False, context=None):
        """New tables drawn from the fitted mixture (``dirmn_sample``), R's ``simulate``.

        Each table has the fitted table's rows: row b's component is drawn
        from :attr:`mixture_weights`, then its counts from that component's
        DM with row b's observed total. A component's alpha of 0 (a column
        it never saw) is drawn from as 1e-300 (its column stays empty but
        with a chance below 1e-290).

        Parameters
        ----------
        n : int
            How many tables.
        seed : None, int, numpy.random.Generator or numpy.random.RandomState
            As :func:`~dirmn.rvs`; table t is drawn with the 64-bit seed
            S + t (S the seed given or drawn).
        output : {"ndarray", "csr", "counts"}
            As :func:`~dirmn.rvs`.
        return_component : bool
            Each table comes as ``(table, component)``, ``component`` the
            rows' drawn components (int64, 0-based, in this mixture's
            order).
        context : Context, optional
            Where to draw; by default the mixture's own context (the
            mixture is not used: it may be closed).

        Returns
        -------
        numpy.ndarray or scipy.sparse.csr_matrix or Counts or tuple
            One table (or tuple) for ``n=1``; a list of ``n`` otherwise.

        Raises
        ------
        InvalidArgumentError
            ``n`` < 1, a bad ``seed`` or ``output``; real-valued counts
            whose row totals are not integers (argument "row_totals").
        """
        if self._row_totals is None:
            raise invalid(InvalidArgumentError, "dirmn: this Mixture holds no row totals: "
                          "nothing to simulate", argument="row_totals")
        alpha = model_alpha(self.alpha)
        w = np.ascontiguousarray(self.mixture_weights, dtype=np.float64)
        sizes = sizes_array(self._row_totals, "row_totals")
        ctx = context if context is not None else self._context
        rows = sizes.shape[0]

        def one(s, out):
            counts, z = draw(ctx, alpha, rows, sizes, seed=s,
                             mixture_weights=w if self.k > 1 else None,
                             want_component=return_component and self.k > 1)
            table = convert(counts, out)
            if not return_component:
                return table
            return table, (z if z is not None else np.zeros(rows, dtype=np.int64))

        return simulate_tables(n, seed, output, one)

    @property
    def context(self):
        """Context: the context that fitted the mixture."""
        return self._context

    def assign(self, counts, context=None, real_valued=False):
        """Posterior component probabilities of new rows (``dirmn_mixture_assign``).

        Parameters
        ----------
        counts : Counts or array_like or sparse matrix
            Rows with the fitted table's V columns.
        context : Context, optional
        real_valued : bool

        Returns
        -------
        numpy.ndarray
            rows × k.

        Raises
        ------
        DimensionMismatchError
            Another number of columns.
        ClosedHandleError
            After :meth:`close`.
        """
        with counts_for(counts, context if context is not None else self._context,
                        real_valued) as (c, ctx):
            out = np.empty((c.rows, self.k))
            with calling((ctx, c.context, self._context),
                         (ctx._handle, c._handle, self._handle)) as (p, h, m):
                check(C.dirmn_mixture_assign(p, m, h, out.ctypes.data_as(C._pd), self.k, 1), p)
        return out

    predict_proba = assign

    def predict(self, counts, context=None, real_valued=False):
        """The most probable component (0-based) of each new row.

        Returns
        -------
        numpy.ndarray of int64

        Raises
        ------
        DirmnError
            As :meth:`assign`.
        """
        return np.argmax(self.assign(counts, context, real_valued), axis=1)

    def __repr__(self):
        return "<dirmn.Mixture k=%d objective_kind=%r loglik=%.6g bic=%.6g%s>" % (
            self.k, self.objective_kind, self.loglik, self.bic,
            " (closed)" if self.closed else "")


class MixtureSelection:
    """Mixtures for several k and the one a criterion selects.

    Attributes
    ----------
    ks : list of int
    fits : list of Mixture
        In the order of ``ks``.
    select : str
        The criterion: "bic", "aic" or "laplace".
    scores : numpy.ndarray
        That criterion per fit.
    k : int
        The selected k (the smallest among ties).
    best : Mixture
    criteria : dict of numpy.ndarray
        A table (``pandas.DataFrame(s.criteria)``): k, loglik, objective,
        aic, bic, laplace, parameters, iterations, converged.
    """

    def __init__(self, ks, fits, select):
        self.ks, self.fits, self.select = list(ks), list(fits), select
        self.scores = np.array([getattr(m, select) for m in fits])
        i = int(np.argmin(self.scores))
        self.k, self.best = self.ks[i], self.fits[i]
        cols = ("loglik", "objective", "aic", "bic", "laplace", "parameters", "iterations",
                "converged")
        self.criteria = {"k": np.array(self.ks)}
        for name in cols:
            self.criteria[name] = np.array([getattr(m, name) for m in fits])

    def __getitem__(self, k):
        return self.fits[self.ks.index(k)]

    def close(self):
        """Closes every fit."""
        for m in self.fits:
            m.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<dirmn.MixtureSelection ks=%s select=%r k=%d>" % (self.ks, self.select, self.k)


def _read(ptr):
    """Every value of a fitted mixture, copied out (under its context's lock)."""
    i = C.new(C.dirmn_mixture_info)
    check(C.dirmn_mixture_get_info(ptr, ctypes.byref(i)), None)
    k, rows, V = i.k, i.rows, i.cols
    alpha, w, resp = np.empty((k, V)), np.empty(k), np.empty((rows, k))
    check(C.dirmn_mixture_get_params(ptr, alpha.ctypes.data_as(C._pd), V, 1,
                                     w.ctypes.data_as(C._pd)), None)
    check(C.dirmn_mixture_get_responsibilities(ptr, resp.ctypes.data_as(C._pd), k, 1), None)
    return dict(alpha=alpha, mixture_weights=w, responsibilities=resp, loglik=i.loglik,
                objective=i.objective, aic=i.aic, bic=i.bic, laplace=i.laplace,
                iterations=int(i.iterations), converged=bool(i.converged), k=int(k),
                rows=int(rows), nobs=i.observations, parameters=int(i.parameters),
                start=int(i.start))


def _wrap(ptrs, ctx, c, objective):
    """Mixture objects owning ``ptrs``; every handle is freed if copying fails."""
    out = []
    try:
        for n, ptr in enumerate(ptrs):
            fields = _read(ptr)
            fields.update(objective_kind=objective, row_names=c.row_names,
                          column_names=c.column_names)
            out.append(Mixture(ptr, ctx, fields))
    except BaseException:
        for m in out:
            m.close()
        for ptr in ptrs[len(out):]:
            C.dirmn_mixture_destroy(ptr)
        raise
    return out


def _options(objective, init, starts, seed, tolerance, max_iterations, m_step_iterations, w):
    o = C.new(C.dirmn_mixture_options)
    C.dirmn_mixture_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.objective = _choice(objective, _OBJECTIVES, "objective")
    o.init = _choice(init, _INITS, "init")
    if starts is not None:
        o.starts = c_int_arg(starts, "starts")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= int(seed) < 2**64:
        raise invalid(InvalidArgumentError, "dirmn: seed must be an integer in [0, 2^64), not "
                      "%r" % (seed,), argument="seed")
    o.seed = int(seed)
    if tolerance is not None:
        o.tolerance = float_arg(tolerance, "tolerance")
    if max_iterations is not None:
        o.max_iterations = c_int_arg(max_iterations, "max_iterations")
    if m_step_iterations is not None:
        o.m_step_iterations = c_int_arg(m_step_iterations, "m_step_iterations")
    if w is not None:
        o.weights = w.ctypes.data_as(C._pd)
    return o


def _fit_one(c, ctx, k, o, grow_from, objective, progress=None):
    out = ctypes.c_void_p()
    pending = Pending()
    trampoline = progress_function(progress, pending)   # alive for the call
    o.progress = trampoline
    contexts, handles = [ctx, c.context], [ctx._handle, c._handle]
    if grow_from is not None:
        contexts.append(grow_from.context)
        handles.append(grow_from._handle)
    with calling(contexts, handles, pending) as ptrs:
        p, h = ptrs[0], ptrs[1]
        o.grow_from = ptrs[2] if grow_from is not None else None
        check(C.dirmn_mixture_fit(p, h, c_int_arg(k, "k"), ctypes.byref(o), ctypes.byref(out)),
              p)
        return _wrap([out.value], ctx, c, objective)[0]


def _fit_range(c, ctx, k_min, k_max, o, objective, progress=None):
    n = k_max - k_min + 1
    out = (ctypes.c_void_p * max(n, 1))()
    pending = Pending()
    trampoline = progress_function(progress, pending)   # alive for the call
    o.progress = trampoline
    with c._call(ctx, pending) as (p, h):
        check(C.dirmn_mixture_fit_range(p, h, c_int_arg(k_min, "k"), c_int_arg(k_max, "k"),
                                        ctypes.byref(o), out), p)
        return _wrap([out[i] for i in range(n)], ctx, c, objective)


def _warn(fits, o):
    bad = [m.k for m in fits if not m.converged]
    if bad:
        warnings.warn("dirmn.mixture: EM did not converge in max_iterations = %d for k = %s; "
                      "the result is the last iterate" % (o.max_iterations,
                                                          ", ".join(map(str, bad))),
                      ConvergenceWarning, stacklevel=3)


def mixture(counts, k, objective="ml", init="mixed", starts=None, seed=1, tolerance=None,
            max_iterations=None, m_step_iterations=None, weights=None, grow_from=None,
            select="bic", context=None, real_valued=False, progress=None):
    """Fits a mixture of k Dirichlet-multinomials by EM (dmn's clustering).

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix
        Rows are observations.
    k : int or range or iterable of int
        Components. Several values fit one mixture each (a ``range`` of step
        1 in one ``dirmn_mixture_fit_range`` call; each k also grown from the
        fit for k - 1, so under "ml" the log-likelihood does not decrease in
        k) and return a :class:`MixtureSelection`.
    objective : {"ml", "dmn"}
        Plain maximum likelihood, or dmn's MAP fit (Gamma(0.1, 0.1) prior).
    init : {"mixed", "kmeans", "kmeanspp", "soft_kmeans"}
    starts : int, optional
        Random starts (library default 6); the best objective is kept.
    seed : int
        Reproducible on every backend.
    tolerance, max_iterations, m_step_iterations : optional
        EM's stopping rule and generalized-EM Newton steps (library
        defaults 1e-9, 1000, 4). Stopping at ``max_iterations`` gives
        ``converged=False`` and a :class:`~dirmn.errors.ConvergenceWarning`.
    weights : array_like, optional
        One finite weight >= 0 per row.
    grow_from : Mixture, optional
        A fit of k - 1 components to the same table: extra starts grown
        from it (one k only).
    select : {"bic", "aic", "laplace"}
        The criterion for several k ("laplace" needs ``objective="dmn"``).
    context : Context, optional
    real_valued : bool
    progress : callable, optional
        ``progress(iteration, loglik, change)``, called on the calling thread
        after each EM iteration (``dirmn_progress_fn``): ``iteration`` = 1,
        2, ..., counting from 1 again for each start (and each k),
        ``loglik`` the mixture's log pmf after it and ``change`` the largest
        change of a responsibility. A true return value stops the fit: it
        raises :class:`~dirmn.errors.CancelledError` (the library leaves no
        mixture). An exception it raises stops the fit too and is re-raised,
        unchanged.

    Returns
    -------
    Mixture or MixtureSelection

    Raises
    ------
    InvalidArgumentError
        k < 1 or above the rows with counts, bad options or names.
    InvalidParameterError
        A bad weight (``row``).
    DimensionMismatchError
        ``weights`` of the wrong length.
    CancelledError
        ``progress`` returned a true value, or the context's interrupt did
        (on split counts: on any rank).
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
    the call is collective (``dirmn_mixture_fit``, and
    ``dirmn_mixture_fit_range`` for a ``range``): every rank makes it, in
    the same order, with the same ``k`` and options and its own rows'
    ``weights`` (a ``grow_from`` fitted the same way), and every rank gets
    the whole table's mixture. The starts are the whole table's (the rows
    the initialisations sample are drawn over every rank's rows), and each
    EM iteration sums its histograms and E step over the ranks in rank
    order. ``loglik``, ``objective``, ``aic`` and ``bic`` agree with one
    process holding the whole table to rounding (~1e-9 relative),
    ``alpha``, ``mixture_weights`` and ``laplace`` (whose log-determinant
    follows alpha) to the M step's accuracy
    (~1e-5 relative: its Newton fits stop on a relative change of 1e-12 in
    their objective), so the parameters are not bit for bit a single
    process's; every rank gets the same ones. Each rank's :class:`Mixture`
    holds those shared parameters and its own rows' ``responsibilities``
    (``rows`` is this rank's rows); :meth:`Mixture.assign` and
    :meth:`Mixture.simulate` are local (this rank's rows, no
    communication). A rank whose own part fails (a bad option or weight)
    raises its own error and the others raise CommunicationError; a
    ``progress`` that cancels on one rank (a true value, or an exception,
    which is re-raised on that rank) cancels every rank: the others raise
    CancelledError.
    """
    several = not isinstance(k, (int, np.integer))
    if several:
        ks = list(k)
        if not ks:
            raise invalid(InvalidArgumentError, "dirmn: no numbers of components given",
                          argument="k")
        if select not in _CRITERIA:
            raise invalid(InvalidArgumentError, "dirmn: select must be 'bic', 'aic' or "
                          "'laplace', not %r" % (select,), argument="select")
        if select == "laplace" and objective != "dmn":
            raise invalid(InvalidArgumentError, "dirmn: select='laplace' needs "
                          "objective='dmn': without dmn's prior the Laplace criterion "
                          "rewards extra components", argument="select")
        if grow_from is not None:
            raise invalid(InvalidArgumentError, "dirmn: grow_from is for a single k",
                          argument="grow_from")
    with counts_for(counts, context, real_valued) as (c, ctx):
        w = None if weights is None else float64_vector(weights, "weights", c.rows)
        o = _options(objective, init, starts, seed, tolerance, max_iterations,
                     m_step_iterations, w)
        totals = c.row_totals()
        if not several:
            m = _fit_one(c, ctx, k, o, grow_from, objective, progress)
            m._row_totals = totals
            _warn([m], o)
            return m
        if isinstance(k, range) and k.step == 1:
            fits = _fit_range(c, ctx, k.start, k.stop - 1, o, objective, progress)
        else:
            byk, fits = {}, [None] * len(ks)
            try:
                for i in sorted(range(len(ks)), key=lambda i: ks[i]):
                    fits[i] = byk.get(ks[i]) or _fit_one(c, ctx, ks[i], o,
                                                         byk.get(ks[i] - 1), objective,
                                                         progress)
                    byk[ks[i]] = fits[i]
            except BaseException:
                for m in byk.values():
                    m.close()
                raise
    for m in fits:
        m._row_totals = totals
    _warn(fits, o)
    return MixtureSelection(ks, fits, select)
