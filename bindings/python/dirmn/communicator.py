"""Communicators: one table split by rows over several processes.

A table too large for one process is loaded in parts: each process (a
"rank") makes a :class:`~dirmn.Counts` of its own rows and attaches it to a
:class:`Communicator` (:meth:`Counts.set_communicator
<dirmn.Counts.set_communicator>`). The global table is rank 0's rows, then
rank 1's, and so on. A communicator is two Python callables over whatever
engine the program already runs (MPI through mpi4py,
``torch.distributed``, sockets): a sum over the ranks and a broadcast.
:meth:`Communicator.from_mpi4py` builds them from an mpi4py communicator.

Collective calls: on counts with a communicator, :func:`~dirmn.fit`,
:func:`~dirmn.loglik_sum`, :func:`~dirmn.overdispersion_test`,
:func:`~dirmn.mixture`, :func:`~dirmn.regression` and
:meth:`~dirmn.Counts.set_communicator` itself must be called by every rank,
in the same order, with arguments that agree (the same options; each rank
its own rows' weights, and for a regression its own rows of the design and
of the precision design). Every rank gets the result of the whole table:
for :func:`~dirmn.fit`, alpha, standard errors and iterations bit for bit
the ones one process holding the whole table gets, the log-likelihood to
rounding. A mixture's loglik, AIC and BIC agree with one process's to
rounding (~1e-9 relative), its alpha, mixing weights and Laplace value to
the M step's accuracy (~1e-5 relative), and each rank's
:class:`~dirmn.Mixture` holds those shared parameters and its own rows'
responsibilities. A regression sums its log-likelihood, gradient and Newton
matrix over the ranks each step (the design's rank checked over every
rank's rows): its loglik, AIC and BIC agree with one process's to rounding
(~1e-12 relative), its coefficients, standard errors and covariance to the
Newton solves' accuracy (~1e-7 relative), the same on every rank; each
rank's :class:`~dirmn.RegressionResult` has ``rows`` its own rows. Where
one rank's part fails (a bad weight, option or design value, memory, a
callback), that rank raises its own error and every other rank a
:class:`~dirmn.errors.CommunicationError` naming the first rank that
failed: no rank waits for ever on another's error; a progress callback that
cancels on one rank cancels every rank
(:class:`~dirmn.errors.CancelledError`). The per-row functions
(:func:`~dirmn.loglik`, row totals, copies, :meth:`Mixture.assign
<dirmn.Mixture.assign>`, :meth:`RegressionResult.predict
<dirmn.RegressionResult.predict>`) stay local: each rank's rows, no
communication. :func:`~dirmn.regression_groups` and the group tests
(:func:`~dirmn.test_groups`, :func:`~dirmn.test_proportions`) on such
counts raise :class:`~dirmn.errors.NotSupportedError`.

The library calls the callables through ``ctypes`` trampolines on the
thread that made the dirmn call, over NumPy views of its own buffers (no
copies). No Python exception crosses into C: a trampoline keeps it and
returns non-zero, and the library's error for the call, a
:class:`~dirmn.errors.CommunicationError`, has it as ``__cause__``.

>>> from mpi4py import MPI
>>> comm = dirmn.Communicator.from_mpi4py(MPI.COMM_WORLD)
>>> counts = dirmn.Counts(my_rows)          # this rank's rows
>>> counts.set_communicator(comm)           # collective
>>> f = dirmn.fit(counts)                   # collective: the whole table's fit
>>> r = dirmn.regression(counts, my_design) # collective: my_design this rank's rows
"""

import ctypes
import itertools
import threading
import traceback

import numpy as np

from . import _capi as C
from ._handles import Closable, Handle
from ._options import c_int_arg
from .errors import InvalidArgumentError, check, invalid, note_callback_exception

# What the library's callbacks reach, by the token passed to them as `data`:
# the callables of every communicator the library still holds (its handle or
# a Counts attached to it). The entry goes when the library calls `release`,
# the last time it may call any of them.
_registry = {}
_registry_lock = threading.Lock()
_tokens = itertools.count(1)


class _Callables:
    """One communicator's Python side: what its trampolines call."""

    __slots__ = ("allreduce", "broadcast", "on_release")

    def __init__(self, allreduce, broadcast, on_release=None):
        self.allreduce = allreduce
        self.broadcast = broadcast
        self.on_release = on_release


def _callables(token):
    with _registry_lock:
        return _registry.get(token)


def _failed(exc):
    """Keeps ``exc`` for the call's error and drops the locals of the frames
    it went through: they may hold views of the library's buffers, which are
    freed when the call returns."""
    note_callback_exception(exc)
    traceback.clear_frames(exc.__traceback__)
    return 1


def _unavailable(token, what):
    return _failed(RuntimeError(
        "dirmn: the library called the %s callback of a communicator whose Python side was "
        "released (token %r)" % (what, token)))


def _host_only(device, what):
    return _failed(NotImplementedError(
        "dirmn: the %s callback was given memory of CUDA device %d; this package's "
        "communicators take host memory only" % (what, device)))


def _view(pointer, count, dtype):
    """The library's buffer of ``count`` values as a 1-D array of ``dtype``,
    without a copy. The view keeps NumPy's own type (int64 is C long here,
    not the long long a ctypes view would carry), so buffer consumers such
    as mpi4py read its format."""
    if not count:
        return np.empty(0, dtype)
    return np.ctypeslib.as_array(pointer, shape=(count,)).view(dtype)


def _allreduce(token, values, count, device, dtype, what):
    cb = _callables(token)
    if cb is None:
        return _unavailable(token, what)
    if device != 0:
        return _host_only(device, what)
    buf = None
    try:
        buf = _view(values, count, dtype)
        cb.allreduce(buf)
        return 0
    except BaseException as exc:  # noqa: B902 -- must not cross into C
        return _failed(exc)
    finally:
        buf = None  # the library's buffer: no reference may outlive the call


def _on_allreduce_int64(token, values, count, device):
    return _allreduce(token, values, count, device, np.int64, "allreduce_int64")


def _on_allreduce_double(token, values, count, device):
    return _allreduce(token, values, count, device, np.float64, "allreduce_double")


def _on_broadcast(token, buffer, nbytes, root, device):
    cb = _callables(token)
    if cb is None:
        return _unavailable(token, "broadcast")
    if device != 0:
        return _host_only(device, "broadcast")
    buf = None
    try:
        buf = _view(ctypes.cast(buffer, ctypes.POINTER(ctypes.c_uint8)), nbytes, np.uint8)
        cb.broadcast(buf, root)
        return 0
    except BaseException as exc:  # noqa: B902 -- must not cross into C
        return _failed(exc)
    finally:
        buf = None


def _on_release(token):
    # May run on any thread (that of the last destroy, a garbage collection
    # included) and late in the interpreter's shutdown: nothing may escape.
    try:
        with _registry_lock:
            cb = _registry.pop(token, None)
        if cb is not None and cb.on_release is not None:
            cb.on_release()
    except BaseException:  # noqa: B902 -- must not cross into C
        pass


# One set of trampolines serves every communicator (the token tells them
# apart), alive as long as this module: the library may call `release` from
# a destroy made anywhere, and a trampoline must never be freed while it
# runs, as a per-communicator one dropped by its own `release` would be.
_ALLREDUCE_INT64 = C.dirmn_allreduce_int64_fn(_on_allreduce_int64)
_ALLREDUCE_DOUBLE = C.dirmn_allreduce_double_fn(_on_allreduce_double)
_BROADCAST = C.dirmn_broadcast_fn(_on_broadcast)
_RELEASE = C.communicator_release_fn(_on_release)


def registered():
    """How many communicators the library still holds the Python side of.

    An entry is made by :class:`Communicator` and dropped when the library
    releases it: once the communicator and every :class:`~dirmn.Counts`
    attached to it are closed (or collected).

    Returns
    -------
    int
    """
    with _registry_lock:
        return len(_registry)


def _callable_arg(f, what):
    if not callable(f):
        raise invalid(InvalidArgumentError, "dirmn: %s must be callable, not %r" % (what, f),
                      argument=what)
    return f


class Communicator(Closable):
    """This process's place among the ranks that share a table split by rows.

    Parameters
    ----------
    rank : int
        This process's rank, ``0 <= rank < ranks``.
    ranks : int
        The number of ranks (>= 1).
    allreduce : callable
        ``allreduce(buf)`` sums the 1-D NumPy array ``buf`` (int64 or
        float64) over the ranks, in place on every rank, as
        ``MPI_Allreduce`` with ``MPI_SUM`` does. Every rank must add the
        ranks' values in the same order, so that every rank gets the same
        bits.
    broadcast : callable
        ``broadcast(buf, root)`` copies rank ``root``'s 1-D uint8 array into
        the other ranks' ``buf``, in place (``MPI_Bcast``).

    Raises
    ------
    InvalidArgumentError
        ``rank`` outside ``[0, ranks)``, ``ranks`` < 1, a callable that is
        not.

    Notes
    -----
    The callables run on the thread that made the dirmn call, over views of
    the library's buffers valid only during the callback (keep no reference
    to ``buf``). They must not compute with dirmn on the same context. A
    callable that fails (raises) must fail on every rank, as MPI's
    collectives do: a rank whose callable succeeded carries on and waits for
    the others at the next one. Its exception does not cross into the
    library: the call raises :class:`~dirmn.errors.CommunicationError` with
    the exception as ``__cause__``.

    The library keeps the callables (not this object) until the
    communicator and every :class:`~dirmn.Counts` attached to it are closed
    or collected; so ``close()`` may come first. ``close()`` (or leaving a
    ``with`` block) frees the handle: counts attached to it keep working.

    Arguments this package refuses before it calls the library (weights of
    the wrong length, an unknown option) raise on that rank alone and leave
    the other ranks waiting in the collective call, as a Python exception
    raised before an MPI collective on one rank does.

    Examples
    --------
    >>> comm = dirmn.Communicator(rank, ranks, allreduce, broadcast)
    >>> with dirmn.Counts(rows_of_this_rank) as counts:
    ...     counts.set_communicator(comm)
    ...     f = dirmn.fit(counts)
    """

    def __init__(self, rank, ranks, allreduce, broadcast):
        self._init(rank, ranks, _Callables(_callable_arg(allreduce, "allreduce"),
                                           _callable_arg(broadcast, "broadcast")))

    def _init(self, rank, ranks, callables):
        rank, ranks = c_int_arg(rank, "rank"), c_int_arg(ranks, "ranks")
        token = next(_tokens)
        with _registry_lock:
            _registry[token] = callables
        cb = C.new(C.dirmn_communicator_callbacks)
        cb.rank, cb.ranks = rank, ranks
        cb.allreduce_int64 = _ALLREDUCE_INT64
        cb.allreduce_double = _ALLREDUCE_DOUBLE
        cb.broadcast = _BROADCAST
        cb.data = token
        cb.release = _RELEASE
        out = ctypes.c_void_p()
        code = C.dirmn_communicator_create(ctypes.byref(out), ctypes.byref(cb))
        if code != 0:
            # No communicator was made: `release` will never come.
            with _registry_lock:
                _registry.pop(token, None)
            check(code, None)
        self._token = token
        self._handle = Handle(self, out.value, C.dirmn_communicator_destroy, "communicator")

    @classmethod
    def from_mpi4py(cls, comm):
        """A communicator over an mpi4py communicator's processes.

        The communicator is duplicated (``comm.Dup()``), so that dirmn's
        messages never match the caller's; its sums are
        ``Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)``, its broadcasts
        ``Bcast(buf, root=root)``. The duplicate is freed when the library
        releases the communicator (unless MPI was finalized by then).

        Parameters
        ----------
        comm : mpi4py.MPI.Comm
            An intracommunicator, e.g. ``MPI.COMM_WORLD``. Duplicating it is
            collective: every process of ``comm`` must call this.

        Returns
        -------
        Communicator
            With ``comm``'s rank and size.

        Raises
        ------
        ImportError
            mpi4py is not installed.
        InvalidArgumentError
            ``comm`` is not an mpi4py communicator.
        """
        try:
            from mpi4py import MPI
        except ImportError as err:
            raise ImportError("dirmn: Communicator.from_mpi4py needs mpi4py (pip install "
                              "mpi4py, or your distribution's python3-mpi4py)") from err
        if not isinstance(comm, MPI.Comm):
            raise invalid(InvalidArgumentError, "dirmn: comm must be an mpi4py communicator "
                          "(mpi4py.MPI.Comm), not %r" % (comm,), argument="comm")
        dup = comm.Dup()
        try:
            def allreduce(buf):
                dup.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)

            def broadcast(buf, root):
                dup.Bcast(buf, root=root)

            def free():
                if not MPI.Is_finalized() and dup != MPI.COMM_NULL:
                    dup.Free()

            self = cls.__new__(cls)
            self._init(dup.Get_rank(), dup.Get_size(), _Callables(allreduce, broadcast, free))
            return self
        except BaseException:
            if not MPI.Is_finalized():
                dup.Free()
            raise

    def _rank_and_ranks(self):
        rank, ranks = ctypes.c_int(), ctypes.c_int()
        p = self._handle.acquire()
        try:
            check(C.dirmn_communicator_get_rank(p, ctypes.byref(rank), ctypes.byref(ranks)),
                  None)
        finally:
            self._handle.release()
        return rank.value, ranks.value

    @property
    def rank(self):
        """int: this process's rank (``dirmn_communicator_get_rank``)."""
        return self._rank_and_ranks()[0]

    @property
    def ranks(self):
        """int: the number of ranks."""
        return self._rank_and_ranks()[1]

    def __repr__(self):
        if self.closed:
            return "<dirmn.Communicator (closed)>"
        return "<dirmn.Communicator rank %d of %d>" % self._rank_and_ranks()
