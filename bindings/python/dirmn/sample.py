"""Random tables and moments of the Dirichlet-multinomial (``dirmn_sample*``,
``dirmn_moments``).

A row of ``size`` counts over V categories is drawn from DM(alpha, size):
proportions from Dirichlet(alpha), then ``size`` multinomial trials. The
library draws exactly at every alpha in [1e-306, 1e306] and size below
2^31; the draws are a function of (seed, row index, alpha, size) alone, the
same on every backend and for any number of threads, so a table of more
rows drawn with the same seed starts with the same rows.
"""

import ctypes
from typing import NamedTuple

import numpy as np

from . import _capi as C
from ._arrays import float64_matrix, float64_vector
from .context import Context, default_context
from .counts import _STORAGE, Counts
from .errors import DimensionMismatchError, InvalidArgumentError, check, invalid
from .loglik import _param_code

_OUTPUTS = ("ndarray", "csr", "counts")
_SIZE_MAX = 2**31 - 1
_SEED_BOUND = 2**64

#: The sampler's range of alpha: a fitted model's alphas are clipped to it
#: before drawing (a column without counts, whose fitted alpha is 0, gets
#: 1e-306: the chance of a count there is below 1e-296 per row).
ALPHA_MIN, ALPHA_MAX = 1e-306, 1e306

_pi64 = ctypes.POINTER(ctypes.c_int64)


def _is_integer(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def seed64(seed, what="seed"):
    """The 64-bit seed the library takes, from ``seed``.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        None: drawn from a fresh ``numpy.random.default_rng()`` (a new table
        each call); an int in [0, 2^64): used as it is; a Generator or
        RandomState (scipy's ``random_state`` convention): one 64-bit
        integer drawn from it (advancing it).
    what : str
        The argument's name, for messages.

    Returns
    -------
    int

    Raises
    ------
    InvalidArgumentError
        Anything else, or an int outside [0, 2^64).
    """
    if seed is None:
        seed = np.random.default_rng()
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, _SEED_BOUND, dtype=np.uint64))
    if isinstance(seed, np.random.RandomState):
        return int(seed.randint(0, _SEED_BOUND, dtype=np.uint64))
    if not _is_integer(seed) or not 0 <= int(seed) < _SEED_BOUND:
        raise invalid(InvalidArgumentError, "dirmn: %s must be None, an integer in [0, 2^64) or "
                      "a numpy.random.Generator, not %r" % (what, seed), argument=what)
    return int(seed)


def _count_arg(v, what, minimum):
    if not _is_integer(v) or int(v) < minimum:
        raise invalid(InvalidArgumentError, "dirmn: %s must be an integer >= %d, not %r"
                      % (what, minimum, v), argument=what)
    return int(v)


def sizes_array(size, what="size"):
    """``size`` (a scalar or a 1-D sequence) as int64 counts in 0 .. 2^31 - 1.

    Integral floats are accepted (row totals come as doubles).

    Returns
    -------
    numpy.ndarray
        0-d for a scalar, else 1-D; int64, C-contiguous.

    Raises
    ------
    InvalidArgumentError
        Not numbers, more than one dimension, or an entry that is negative,
        not an integer or above 2^31 - 1 (``row``: its index, ``value``).
    """
    try:
        a = np.asarray(size)
    except (TypeError, ValueError):
        a = np.asarray(size, dtype=object)
    if a.dtype == np.bool_ or a.dtype.kind not in "iuf":
        raise invalid(InvalidArgumentError, "dirmn: %s must be an integer or a 1-D array of "
                      "integers, not %r" % (what, size), argument=what)
    if a.ndim > 1:
        raise invalid(InvalidArgumentError, "dirmn: %s must be a scalar or 1-dimensional, not of "
                      "shape %s" % (what, a.shape), argument=what)
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        bad = ~np.isfinite(flat) | (flat != np.floor(flat)) | (flat < 0) | (flat > _SIZE_MAX)
    else:
        bad = (flat < 0) | (flat > _SIZE_MAX)
    if np.any(bad):
        i = int(np.argmax(bad))
        v = flat[i].item()
        where = dict(argument=what, value=v)
        if a.ndim == 1:
            where["row"] = i
        raise invalid(InvalidArgumentError, "dirmn: %s%s = %r must be an integer in 0 .. 2^31 - 1"
                      % (what, "[%d]" % i if a.ndim == 1 else "", v), **where)
    return a.astype(np.int64, order="C")   # a copy: C-contiguous, and 0-d stays 0-d


def _context(context):
    ctx = context if context is not None else default_context()
    if not isinstance(ctx, Context):
        raise invalid(InvalidArgumentError, "dirmn: context must be a dirmn.Context",
                      argument="context")
    return ctx


def _storage_code(storage):
    if storage not in _STORAGE:
        raise invalid(InvalidArgumentError, "dirmn: storage must be 'auto', 'dense' or "
                      "'sparse', not %r" % (storage,), argument="storage")
    return _STORAGE[storage]


def _output_arg(output):
    if output not in _OUTPUTS:
        raise invalid(InvalidArgumentError, "dirmn: output must be 'ndarray', 'csr' or 'counts', "
                      "not %r" % (output,), argument="output")
    return output


def draw(ctx, params, rows, sizes, *, rowwise=False, param_code=C.DIRMN_PARAM_ALPHA, seed=0,
         component=None, mixture_weights=None, want_component=False,
         storage=C.DIRMN_STORAGE_AUTO, first_row=0):
    """One library draw: a new :class:`Counts` of ``rows`` rows.

    Parameters
    ----------
    ctx : Context
    params : numpy.ndarray
        2-D float64: k × V vectors, or (``rowwise``) rows × V.
    rows : int
    sizes : numpy.ndarray
        int64, 0-d (one size for every row) or ``rows`` entries.
    rowwise : bool
    param_code : int
        ``DIRMN_PARAM_ALPHA`` or ``DIRMN_PARAM_LOG_ALPHA``.
    seed : int
        In [0, 2^64).
    component, mixture_weights : numpy.ndarray, optional
        int64 (rows) and float64 (k), contiguous.
    want_component : bool
        Receive each row's component (k > 1).
    storage : int
        A ``dirmn_storage``.
    first_row : int
        The seed's row index of this draw's first row (>= 0).

    Returns
    -------
    tuple of (Counts, numpy.ndarray or None)
    """
    p, s_k, s_v = float64_matrix(params, "alpha")
    k, V = p.shape
    o = C.new(C.dirmn_sample_options)
    C.dirmn_sample_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.seed = seed
    o.storage = storage
    o.first_row = first_row
    comp_out = None
    if component is not None:
        o.component = component.ctypes.data_as(_pi64)
    if mixture_weights is not None:
        o.mixture_weights = mixture_weights.ctypes.data_as(C._pd)
    if want_component:
        comp_out = np.empty(rows, dtype=np.int64)
        o.component_out = comp_out.ctypes.data_as(_pi64)
    out = ctypes.c_void_p()
    sp = sizes.ctypes.data_as(_pi64)
    s_stride = 0 if sizes.ndim == 0 else 1
    with ctx._call() as (h,):
        if rowwise:
            check(C.dirmn_sample_rowwise(h, ctypes.byref(out), rows, V, p.ctypes.data_as(C._pd),
                                         s_k, s_v, param_code, sp, s_stride, ctypes.byref(o)), h)
        else:
            check(C.dirmn_sample(h, ctypes.byref(out), rows, V, k, p.ctypes.data_as(C._pd), s_k,
                                 s_v, param_code, sp, s_stride, ctypes.byref(o)), h)
        counts = Counts._adopt(out.value, ctx, (rows, V))
    return counts, comp_out


def convert(counts, output):
    """``counts`` as ``output`` asks: the object itself ("counts"), or an int64
    ndarray / a ``scipy.sparse.csr_matrix`` copied out of it (the object is
    closed then)."""
    if output == "counts":
        return counts
    with counts:
        return counts.toarray(np.int64) if output == "ndarray" else counts.tocsr(np.int64)


def rvs(alpha, size, n=None, *, seed=None, component=None, mixture_weights=None,
        per_row=False, return_component=False, param="alpha", output="ndarray",
        storage="auto", first_row=0, context=None):
    """Random count tables from the Dirichlet-multinomial (``dirmn_sample``).

    Row b of the table holds ``size[b]`` counts over the V categories, drawn
    from DM(alpha_b, size[b]). Which alpha_b, by the shape of ``alpha``:

    - one vector (shape ``(V,)`` or ``(1, V)``): the same for every row;
    - k vectors (``(k, V)``, k > 1): a mixture; row b's component is
      ``component[b]``, or drawn from ``mixture_weights`` (equal weights
      when neither is given);
    - with ``per_row=True``, one vector per row (``(n, V)``, e.g. a
      regression's predicted alphas: ``dirmn_sample_rowwise``). The keyword
      is what tells these apart from k mixture components: a 2-D ``alpha``
      is never taken as one vector per row by its shape alone.

    Parameters
    ----------
    alpha : array_like
        See above. Every alpha in [1e-306, 1e306] (log alpha with
        ``param="logalpha"``).
    size : int or array_like of int
        The counts of each row (the multinomial's trials): one for every row,
        or one per row (``n`` entries). Integers in 0 .. 2^31 - 1.
    n : int, optional
        Rows to draw. Default: the length of ``size`` when it is an array,
        else of ``component``, else (``per_row``) of ``alpha``'s rows, else
        1; where several of these are given they must agree.
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        An int in [0, 2^64) is the library's 64-bit seed (the same seed, the
        same table, on every backend); a Generator (or RandomState, scipy's
        ``random_state``) gives one 64-bit seed drawn from it; None draws
        one from ``numpy.random.default_rng()``.
    component : array_like of int, optional
        Mixtures: row b's 0-based component in ``component[b]`` (n entries).
    mixture_weights : array_like, optional
        Mixtures, without ``component``: k weights (finite, >= 0, a positive
        sum; normalised).
    per_row : bool
        ``alpha`` holds one vector per row (see above).
    return_component : bool
        Also return each row's component: ``(table, component)`` with
        ``component`` an int64 array of n entries (zeros for one vector).
        Not with ``per_row``.
    param : {"alpha", "logalpha"}
        Whether ``alpha`` holds alpha or log alpha.
    output : {"ndarray", "csr", "counts"}
        The table as an int64 ``numpy.ndarray`` (n × V), a
        ``scipy.sparse.csr_matrix`` of int64 values (needs scipy), or the
        library's :class:`~dirmn.Counts` itself (no copy: pass it to
        :func:`~dirmn.fit`, :func:`~dirmn.loglik` ...; close it when done).
    storage : {"auto", "dense", "sparse"}
        The stored form of the library's table ("auto": sparse for
        mostly-zero tables).
    first_row : int
        The seed's row index of the first row drawn (default 0): row b is
        drawn as row ``first_row + b`` of the table the seed gives (its
        random stream, and its component where drawn from the weights), so
        that blocks of rows drawn apart -- each rank's own rows of a table
        split over a :class:`~dirmn.Communicator` -- make, together, the
        table of one call. ``size``, ``component`` and a per-row ``alpha``
        are this call's rows' own.
    context : Context, optional
        Where to draw; by default :func:`~dirmn.default_context`.

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_matrix or Counts
        Always n × V (a single row is a 1 × V table). With
        ``return_component``, the tuple ``(table, component)``.

    Raises
    ------
    InvalidArgumentError
        ``size`` negative, non-integral or above 2^31 - 1 (``row``: its
        index); ``n`` < 1 or disagreeing with ``size``, ``component`` or a
        per-row ``alpha``; ``component`` or ``mixture_weights`` with one
        vector or per row; a component outside 0 .. k - 1 (``row``) or a bad
        mixture weight (``index``); unknown ``param``, ``output`` or
        ``storage``; a bad ``seed``; ``first_row`` negative or not an
        integer.
    InvalidParameterError
        An alpha outside [1e-306, 1e306], 0 and negative ones included
        (``vector`` and ``index``; per row: ``row`` and ``index``).
    DimensionMismatchError
        ``mixture_weights`` without k entries.

    Examples
    --------
    >>> X = dirmn.rvs([0.5, 1.0, 2.0], size=100, n=10, seed=1)   # 10 x 3
    >>> X, z = dirmn.rvs(np.array([[1, 1, 8], [8, 1, 1]]), 50, 20,
    ...                  mixture_weights=[0.3, 0.7], return_component=True)
    """
    code = _param_code(param)
    output = _output_arg(output)
    storage_code = _storage_code(storage)
    ctx = _context(context)
    a = alpha if isinstance(alpha, np.ndarray) else np.asarray(alpha)
    if a.ndim not in (1, 2):
        raise invalid(InvalidArgumentError, "dirmn: alpha must be 1-dimensional (one vector) or "
                      "2-dimensional (vectors in rows), not of shape %s" % (a.shape,),
                      argument="alpha")
    if a.ndim == 1:
        a = float64_vector(a, "alpha").reshape(1, -1)
    else:
        a, _, _ = float64_matrix(a, "alpha")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise invalid(InvalidArgumentError, "dirmn: alpha has no entries (shape %s)"
                      % (a.shape,), argument="alpha")
    sizes = sizes_array(size)
    k = a.shape[0]
    known = []   # (what, rows) that fix n
    if sizes.ndim == 1:
        known.append(("size", sizes.shape[0]))
    comp = None
    if component is not None:
        if per_row or k == 1:
            raise invalid(InvalidArgumentError, "dirmn: component is for a mixture's k > 1 "
                          "vectors of alpha%s" % (" (not with per_row)" if per_row else ""),
                          argument="component")
        craw = np.asarray(component)
        if craw.ndim != 1 or (craw.size and craw.dtype.kind not in "iu"):
            raise invalid(InvalidArgumentError, "dirmn: component must be a 1-D array of "
                          "integers (0-based components)", argument="component")
        comp = np.ascontiguousarray(craw.astype(np.int64))
        known.append(("component", comp.shape[0]))
    w = None
    if mixture_weights is not None:
        if per_row or k == 1:
            raise invalid(InvalidArgumentError, "dirmn: mixture_weights are for a mixture's "
                          "k > 1 vectors of alpha%s" % (" (not with per_row)" if per_row else ""),
                          argument="mixture_weights")
        if comp is not None:
            raise invalid(InvalidArgumentError, "dirmn: give component or mixture_weights, not "
                          "both", argument="mixture_weights")
        w = float64_vector(mixture_weights, "mixture_weights")
        if w.shape[0] != k:
            raise invalid(DimensionMismatchError, "dirmn: mixture_weights has %d entries for %d "
                          "components" % (w.shape[0], k), argument="mixture_weights")
    if per_row:
        if return_component:
            raise invalid(InvalidArgumentError, "dirmn: return_component is for one vector or "
                          "a mixture, not per_row", argument="return_component")
        known.append(("alpha", k))
    if n is not None:
        n = _count_arg(n, "n", 1)
        known.insert(0, ("n", n))
    for what, m in known:
        if m != known[0][1]:
            raise invalid(InvalidArgumentError, "dirmn: %s gives %d rows but %s gives %d"
                          % (known[0][0], known[0][1], what, m), argument=what)
    rows = known[0][1] if known else 1
    if rows < 1:
        raise invalid(InvalidArgumentError, "dirmn: no rows to draw (%s is empty)"
                      % known[0][0], argument=known[0][0])
    seed = seed64(seed)
    if not _is_integer(first_row) or int(first_row) < 0:
        raise invalid(InvalidArgumentError, "dirmn: first_row must be an integer >= 0, not %r"
                      % (first_row,), argument="first_row")
    mixture = k > 1 and not per_row
    counts, z = draw(ctx, a, rows, sizes, rowwise=per_row, param_code=code, seed=seed,
                     component=comp, mixture_weights=w,
                     want_component=return_component and mixture, storage=storage_code,
                     first_row=int(first_row))
    table = convert(counts, output)
    if not return_component:
        return table
    return table, (z if mixture else np.zeros(rows, dtype=np.int64))


class Moments(NamedTuple):
    """The moments of DM(alpha, size) (see :func:`moments`).

    Attributes
    ----------
    mean : numpy.ndarray
        V entries: ``size p`` (p = alpha / sum(alpha)).
    variance : numpy.ndarray
        V entries: ``size p (1 - p) (size + A) / (1 + A)`` (A = sum(alpha)).
    covariance : numpy.ndarray
        V × V: ``-size p_u p_v (size + A) / (1 + A)`` off the diagonal,
        ``variance`` on it.
    """

    mean: np.ndarray
    variance: np.ndarray
    covariance: np.ndarray


def moments(alpha, size, param="alpha", context=None):
    """Mean, variance and covariance of DM(alpha, size) (``dirmn_moments``).

    Julia's ``mean``, ``var`` and ``cov`` of a ``DirichletMultinomial``, and
    scipy's ``dirichlet_multinomial(alpha, n).mean()``, ``.var()``,
    ``.cov()``, in one call.

    Parameters
    ----------
    alpha : array_like
        One parameter vector (V entries), alpha or (``param="logalpha"``)
        log alpha.
    size : float
        The counts per row, any finite value >= 0 (the formulas are
        polynomials in it).
    param : {"alpha", "logalpha"}
    context : Context, optional

    Returns
    -------
    Moments
        ``(mean, variance, covariance)``.

    Raises
    ------
    InvalidArgumentError
        ``size`` negative or not finite; unknown ``param``; an empty alpha.
    InvalidParameterError
        An alpha that is not positive and finite (``index``).
    """
    code = _param_code(param)
    ctx = _context(context)
    a = float64_vector(alpha, "alpha")
    V = a.shape[0]
    if V == 0:
        raise invalid(InvalidArgumentError, "dirmn: alpha has no entries", argument="alpha")
    try:
        s = float(size)
    except (TypeError, ValueError):
        raise invalid(InvalidArgumentError, "dirmn: size must be a number, not %r" % (size,),
                      argument="size") from None
    if not np.isfinite(s) or s < 0:
        raise invalid(InvalidArgumentError, "dirmn: size = %r must be finite and >= 0" % (s,),
                      argument="size", value=s)
    mean, var, cov = np.empty(V), np.empty(V), np.empty((V, V))
    with ctx._call() as (h,):
        check(C.dirmn_moments(h, V, a.ctypes.data_as(C._pd), 1, code, s,
                              mean.ctypes.data_as(C._pd), var.ctypes.data_as(C._pd),
                              cov.ctypes.data_as(C._pd), V), h)
    return Moments(mean, var, cov)


def simulate_tables(n, seed, output, draw_one):
    """``n`` tables of a fitted model: table t drawn by ``draw_one(seed_t)``
    with seed_t = (S + t) mod 2^64, S the 64-bit seed ``seed`` gives.

    Returns one table for ``n == 1``, else a list of ``n``.
    """
    n = _count_arg(n, "n", 1)
    output = _output_arg(output)
    s = seed64(seed)
    tables = []
    try:
        for t in range(n):
            tables.append(draw_one((s + t) % _SEED_BOUND, output))
    except BaseException:
        for tab in tables:
            if isinstance(tab, Counts):
                tab.close()
        raise
    return tables[0] if n == 1 else tables


def model_alpha(alpha):
    """Fitted alphas clipped to the sampler's range (see :data:`ALPHA_MIN`)."""
    return np.clip(np.asarray(alpha, dtype=np.float64), ALPHA_MIN, ALPHA_MAX)
