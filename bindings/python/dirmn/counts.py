"""Count tables held by the library (``dirmn_counts``)."""

import contextlib
import ctypes

import numpy as np

from . import _capi as C
from ._arrays import count_values, dense_table
from ._handles import Closable, Handle, calling
from .communicator import Communicator
from .context import Context, default_context
from .errors import DimensionMismatchError, InvalidArgumentError, check, invalid

_STORAGE = {"auto": C.DIRMN_STORAGE_AUTO, "dense": C.DIRMN_STORAGE_DENSE,
            "sparse": C.DIRMN_STORAGE_SPARSE}
_STORAGE_NAMES = {v: k for k, v in _STORAGE.items()}
_COPY_DTYPES = {np.dtype(np.int32): C.DIRMN_INT32, np.dtype(np.int64): C.DIRMN_INT64,
                np.dtype(np.float32): C.DIRMN_FLOAT32, np.dtype(np.float64): C.DIRMN_FLOAT64}


def _is_sparse(x):
    # Duck-typed so that scipy is needed only by those who pass its matrices.
    return hasattr(x, "tocsr") and hasattr(x, "nnz") and hasattr(x, "shape")


def _is_anndata(x):
    return hasattr(x, "X") and hasattr(x, "obs_names") and hasattr(x, "var_names")


def _is_frame(x):
    return hasattr(x, "to_numpy") and hasattr(x, "index") and hasattr(x, "columns")


def _index_arrays(indptr, indices):
    """ptr and indices of one integer type the library reads, and its code."""
    p, i = np.asarray(indptr), np.asarray(indices)
    if p.dtype == np.int32 and i.dtype == np.int32:
        code = C.DIRMN_INDEX_INT32
    else:
        p, i, code = p.astype(np.int64, copy=False), i.astype(np.int64, copy=False), \
            C.DIRMN_INDEX_INT64
    return np.ascontiguousarray(p), np.ascontiguousarray(i), code


class Counts(Closable):
    """A count table validated and stored by the library, for repeated use.

    Rows are observations (samples, documents), columns categories (taxa,
    words). Making one validates the table once; pass it to
    :func:`~dirmn.loglik`, :func:`~dirmn.fit`, :func:`~dirmn.mixture` ...
    instead of an array to skip that work on every call.

    Parameters
    ----------
    data : array_like, scipy.sparse matrix, AnnData-like or DataFrame-like
        A NumPy array of any integer or float dtype and any strides (int32,
        int64, float32 and float64 in C or Fortran order, or views of them,
        are read in place, not copied); a 1-D array is one row. A
        ``scipy.sparse`` CSR or CSC matrix or array (int32 or int64
        indices) is passed as it is; other sparse formats are converted to
        CSR. An object with ``.X``, ``.obs_names`` and ``.var_names`` (an
        ``anndata.AnnData``) gives its ``X`` and names; one with
        ``to_numpy``, ``index`` and ``columns`` (a ``pandas.DataFrame``) its
        values and names.
    context : Context, optional
        Where the table is stored; by default :func:`default_context`.
    real_valued : bool
        Accept non-integral non-negative counts.
    storage : {"auto", "dense", "sparse"}
        The library's stored form.
    row_names, column_names : sequence of str, optional
        Names kept with the table (override those ``data`` carries).

    Raises
    ------
    InvalidCountsError
        A count is negative, NaN, infinite, non-integral (without
        ``real_valued``) or too large; ``row`` and ``column`` say where.
    InvalidArgumentError
        Empty or non-numeric input, malformed sparse structure (``index``
        says which entry of ``argument`` "ptr" or "indices").
    DimensionMismatchError
        Names or sparse arrays of the wrong length.
    """

    def __init__(self, data, context=None, real_valued=False, storage="auto",
                 row_names=None, column_names=None):
        ctx = context if context is not None else default_context()
        if not isinstance(ctx, Context):
            raise invalid(InvalidArgumentError, "dirmn: context must be a dirmn.Context",
                          argument="context")
        if storage not in _STORAGE:
            raise invalid(InvalidArgumentError, "dirmn: storage must be 'auto', 'dense' or "
                          "'sparse', not %r" % (storage,), argument="storage")
        names = (None, None)
        if _is_anndata(data):
            names = (list(map(str, data.obs_names)), list(map(str, data.var_names)))
            data = data.X
        elif _is_frame(data):
            names = (list(map(str, data.index)), list(map(str, data.columns)))
            data = data.to_numpy()
        opts = C.new(C.dirmn_counts_options)
        C.dirmn_counts_options_init_sized(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.flags = C.DIRMN_COUNTS_REAL_VALUED if real_valued else 0
        opts.storage = _STORAGE[storage]
        out = ctypes.c_void_p()
        if _is_sparse(data):
            shape = self._create_sparse(ctx, data, opts, out)
        else:
            shape = self._create_dense(ctx, data, opts, out)
        self._context = ctx
        self._handle = Handle(self, out.value, C.dirmn_counts_destroy, "counts", ctx._lock)
        self._communicator = None
        self.shape = shape
        try:
            self.row_names = self._names(row_names if row_names is not None else names[0],
                                         shape[0], "row_names")
            self.column_names = self._names(
                column_names if column_names is not None else names[1], shape[1],
                "column_names")
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _names(names, n, what):
        if names is None:
            return None
        names = list(names)
        if len(names) != n:
            raise invalid(DimensionMismatchError, "dirmn: %s has %d entries for %d" % (
                what, len(names), n), argument=what)
        return names

    @staticmethod
    def _create_dense(ctx, data, opts, out):
        a, code, rs, cs = dense_table(data)
        rows, cols = a.shape
        with ctx._call() as (p,):
            check(C.dirmn_counts_create_dense(p, ctypes.byref(out), rows, cols, code,
                                              a.ctypes.data, rs, cs, ctypes.byref(opts)), p)
        return (int(rows), int(cols))

    @staticmethod
    def _create_sparse(ctx, m, opts, out):
        fmt = getattr(m, "format", None)
        if fmt not in ("csr", "csc"):
            m = m.tocsr()
            fmt = "csr"
        rows, cols = (int(d) for d in m.shape)
        ptr, idx, index_code = _index_arrays(m.indptr, m.indices)
        values, value_code = count_values(np.ascontiguousarray(m.data), "values")
        major = rows if fmt == "csr" else cols
        if ptr.shape[0] != major + 1:
            raise invalid(DimensionMismatchError, "dirmn: a %s matrix of shape %s needs %d "
                          "indptr entries, not %d" % (fmt.upper(), m.shape, major + 1,
                                                      ptr.shape[0]), argument="ptr")
        if values.shape[0] != idx.shape[0]:
            raise invalid(DimensionMismatchError, "dirmn: %d values for %d indices" % (
                values.shape[0], idx.shape[0]), argument="values")
        form = C.DIRMN_CSR if fmt == "csr" else C.DIRMN_CSC
        with ctx._call() as (p,):
            check(C.dirmn_counts_create_sparse(
                p, ctypes.byref(out), form, rows, cols, idx.shape[0], index_code,
                ptr.ctypes.data, idx.ctypes.data if idx.size else None, value_code,
                values.ctypes.data if values.size else None, ctypes.byref(opts)), p)
        return (rows, cols)

    # --- lifetime -------------------------------------------------------------

    @property
    def context(self):
        """Context: the context that made the table."""
        return self._context

    def _call(self, ctx=None, pending=None):
        """Holds this table and ``ctx`` (default: its own context) for a call."""
        ctx = ctx if ctx is not None else self._context
        return calling((ctx, self._context), (ctx._handle, self._handle), pending)

    # --- a table split by rows over ranks --------------------------------------

    @property
    def communicator(self):
        """Communicator or None: the communicator these rows are attached to
        (see :meth:`set_communicator`)."""
        return self._communicator

    def set_communicator(self, communicator):
        """Makes this table one rank's rows of a table split over ranks
        (``dirmn_counts_set_communicator``); None detaches it.

        Collective: every rank calls it with its own counts (the global
        table is rank 0's rows, then rank 1's, and so on); the ranks' tables
        must have the same columns. Detaching (None) is local. The cached
        count histograms are forgotten either way.

        Once attached, these calls are collective, called by every rank in
        the same order with arguments that agree (each rank passes its own
        rows' weights), and give every rank the whole table's result:
        :func:`~dirmn.fit` (alpha, standard errors and iterations bit for bit
        those of one process holding the whole table; the fit's
        :meth:`~dirmn.FitResult.simulate` draws this rank's rows),
        :func:`~dirmn.loglik_sum`, :func:`~dirmn.overdispersion_test`,
        :func:`~dirmn.mixture` (the criteria to ~1e-9 relative of one
        process's, alpha and the mixing weights to ~1e-5; each rank's
        :class:`~dirmn.Mixture` holds its own rows' responsibilities) and
        :func:`~dirmn.regression` (each rank passes its own rows of the
        design and precision design; the log-likelihood and BIC to ~1e-12
        relative of one process's, the coefficients and standard errors to
        ~1e-7; the result's ``rows`` are this rank's). The per-row
        functions (:func:`~dirmn.loglik`, :meth:`row_totals`, copies,
        :meth:`Mixture.assign <dirmn.Mixture.assign>`,
        :meth:`RegressionResult.predict <dirmn.RegressionResult.predict>`)
        stay local. :func:`~dirmn.regression_groups`,
        :func:`~dirmn.test_groups`, :func:`~dirmn.test_proportions` and
        :func:`dirmn.torch.loglik` raise
        :class:`~dirmn.errors.NotSupportedError` on attached counts: detach
        them first for this rank's rows alone.

        The table keeps the communicator alive (the library keeps its
        callables; this object keeps the :class:`~dirmn.Communicator`) until
        it is detached or the table is closed.

        Parameters
        ----------
        communicator : Communicator or None

        Raises
        ------
        DimensionMismatchError
            The ranks' column counts differ (on every rank; the message
            names the first rank that differs from rank 0).
        CommunicationError
            A callback failed (its exception is the ``__cause__``), or
            another rank's part failed.
        InvalidArgumentError
            ``communicator`` is neither a Communicator nor None.
        ClosedHandleError
            This table, its context or the communicator was closed.
        """
        if communicator is None:
            with self._call() as (p, h):
                check(C.dirmn_counts_set_communicator(p, h, None), p)
            self._communicator = None
            return
        if not isinstance(communicator, Communicator):
            raise invalid(InvalidArgumentError, "dirmn: communicator must be a "
                          "dirmn.Communicator or None, not %r" % (communicator,),
                          argument="communicator")
        ctx = self._context
        rank_of = (communicator.rank, communicator.ranks)
        with calling((ctx,), (ctx._handle, self._handle, communicator._handle)) as (p, h, m):
            check(C.dirmn_counts_set_communicator(p, h, m), p)
        self._communicator, self._rank_of = communicator, rank_of

    # --- queries ----------------------------------------------------------------

    @property
    def rows(self):
        """int: observations."""
        return self.shape[0]

    @property
    def cols(self):
        """int: categories (V)."""
        return self.shape[1]

    def info(self):
        """What the library stored.

        Returns
        -------
        dict
            ``rows``, ``cols``, ``nnz``, ``max_count``, ``total``,
            ``real_valued``, ``storage`` ("dense" or "sparse"), ``value_bits``,
            ``backend``, ``device``.

        Raises
        ------
        ClosedHandleError
        """
        i = C.new(C.dirmn_counts_info)
        with self._call() as (p, h):
            check(C.dirmn_counts_get_info(h, ctypes.byref(i)), None)
        return dict(rows=i.rows, cols=i.cols, nnz=i.nnz, max_count=i.max_count,
                    total=i.total, real_valued=bool(i.flags & C.DIRMN_COUNTS_REAL_VALUED),
                    storage=_STORAGE_NAMES.get(i.storage, "unknown"),
                    value_bits=i.value_bits,
                    backend={C.DIRMN_BACKEND_CPU: "cpu", C.DIRMN_BACKEND_CUDA: "cuda"}.get(
                        i.backend, "unknown"), device=i.device)

    def row_totals(self):
        """The total count N of every row.

        Returns
        -------
        numpy.ndarray of float64, shape (rows,)
        """
        out = np.empty(self.rows)
        with self._call() as (p, h):
            check(C.dirmn_counts_row_totals(p, h, out.ctypes.data_as(C._pd)), p)
        return out

    # --- copies out ------------------------------------------------------------

    def _value_dtype(self, dtype):
        """The NumPy dtype and the library's code for copied-out counts."""
        if dtype is None:
            real = bool(self.info()["real_valued"])
            dtype = np.float64 if real else np.int64
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt not in _COPY_DTYPES:
            raise invalid(InvalidArgumentError, "dirmn: dtype must be int32, int64, float32 or "
                          "float64, not %r" % (dtype,), argument="dtype")
        return dt, _COPY_DTYPES[dt]

    def toarray(self, dtype=None):
        """The table as a dense NumPy array (``dirmn_counts_copy_dense``).

        Parameters
        ----------
        dtype : {None, int64, int32, float64, float32}
            None: int64 for integer counts, float64 for real-valued ones.
            Integer dtypes need integer counts within their range; float32
            rounds each count to the nearest float.

        Returns
        -------
        numpy.ndarray
            rows × cols, C order, every cell written.

        Raises
        ------
        InvalidArgumentError
            An unknown dtype, or an integer one for real-valued counts.
        NumericOverflowError
            A count beyond int32's range (``row``, ``column``, ``value``).
        NotSupportedError
            Counts wrapped from CUDA device memory (there is no host copy).
        ClosedHandleError
        """
        dt, code = self._value_dtype(dtype)
        out = np.empty(self.shape, dtype=dt)
        with self._call() as (p, h):
            check(C.dirmn_counts_copy_dense(p, h, code, out.ctypes.data, self.cols, 1), p)
        return out

    def _compressed(self, form, dtype):
        import scipy.sparse as sp

        dt, code = self._value_dtype(dtype)
        nnz = int(self.info()["nnz"])
        small = max(nnz, self.rows, self.cols) < 2**31
        it = np.int32 if small else np.int64
        major = self.rows if form == C.DIRMN_CSR else self.cols
        ptr = np.empty(major + 1, dtype=it)
        idx, vals = np.empty(nnz, dtype=it), np.empty(nnz, dtype=dt)
        with self._call() as (p, h):
            check(C.dirmn_counts_copy_sparse(
                p, h, form, C.DIRMN_INDEX_INT32 if small else C.DIRMN_INDEX_INT64,
                ptr.ctypes.data, idx.ctypes.data if nnz else None, code,
                vals.ctypes.data if nnz else None), p)
        make = sp.csr_matrix if form == C.DIRMN_CSR else sp.csc_matrix
        return make((vals, idx, ptr), shape=self.shape)

    def tocsr(self, dtype=None):
        """The table's nonzero cells as a ``scipy.sparse.csr_matrix``
        (``dirmn_counts_copy_sparse``; needs scipy).

        Indices are int32 where the table and its nonzeros fit (else int64),
        sorted within each row; ``dtype`` as :meth:`toarray`.

        Returns
        -------
        scipy.sparse.csr_matrix

        Raises
        ------
        DirmnError
            As :meth:`toarray`.
        """
        return self._compressed(C.DIRMN_CSR, dtype)

    def tocsc(self, dtype=None):
        """The same as :meth:`tocsr` in compressed-column form
        (``scipy.sparse.csc_matrix``, R's dgCMatrix layout).

        Returns
        -------
        scipy.sparse.csc_matrix
        """
        return self._compressed(C.DIRMN_CSC, dtype)

    @classmethod
    def _adopt(cls, ptr, context, shape):
        """A Counts owning ``ptr``, a table the library made on ``context``
        (a sampled one), without names."""
        self = cls.__new__(cls)
        self._context = context
        self._handle = Handle(self, ptr, C.dirmn_counts_destroy, "counts", context._lock)
        self._communicator = None
        self.shape = (int(shape[0]), int(shape[1]))
        self.row_names = self.column_names = None
        return self

    def __repr__(self):
        state = " (closed)" if self.closed else ""
        if self._communicator is not None:
            state += " (rank %d of %d)" % self._rank_of
        return "<dirmn.Counts %d x %d%s>" % (self.rows, self.cols, state)


@contextlib.contextmanager
def counts_for(data, context=None, real_valued=False):
    """``data`` as a :class:`Counts`, closed on exit if made here.

    Parameters
    ----------
    data : Counts or anything :class:`Counts` accepts
    context : Context, optional
        For new tables; a given Counts computes on ``context`` when given,
        else on its own.
    real_valued : bool

    Yields
    ------
    tuple of (Counts, Context)
    """
    if isinstance(data, Counts):
        yield data, (context if context is not None else data.context)
        return
    c = Counts(data, context=context, real_valued=real_valued)
    try:
        yield c, c.context
    finally:
        c.close()
