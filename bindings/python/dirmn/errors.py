"""Exceptions raised for libdirmn's statuses.

Every failure of the library becomes a :class:`DirmnError` subclass chosen by
the status family; the classes of bad input also derive from
:class:`ValueError` (and out-of-memory from :class:`MemoryError`), so generic
handlers keep working. Positions come from ``dirmn_last_error_location``,
which is 0-based like Python, so they are passed on unchanged.
"""

import ctypes
import threading

from . import _capi as C

# The exception a communicator's Python callback raised on this thread (the
# thread that made the dirmn call, on which the library runs the callbacks)
# since the last library call was checked: the cause of the error that call
# returns. See note_callback_exception.
_callback_exceptions = threading.local()


class DirmnError(Exception):
    """A failure reported by libdirmn (or found by this package first).

    Attributes
    ----------
    status : str
        The status's C name, e.g. ``"DIRMN_ERROR_INVALID_COUNTS"``.
    code : int
        The ``dirmn_status`` value.
    message : str
        The library's detailed message (``dirmn_last_error``), e.g.
        ``"dirmn_counts_create_dense: row 1, column 2 (0-based): count -2 is
        negative"``.
    argument : str or None
        The argument at fault (``"data"``, ``"params"``, ``"weights"`` ...).
    row, column, vector, index : int or None
        The 0-based position of the failure: a table's cell (row, column), a
        parameter (vector and index for :func:`dirmn.loglik`, row and index
        for per-row parameters), an entry of a sparse array or of ``start``
        (index). ``None`` where it does not apply.
    value : int or float or None
        The offending value (an integer exactly where the caller passed one).
    """

    def __init__(self, message, status="DIRMN_ERROR_INTERNAL", code=None, argument=None,
                 row=None, column=None, vector=None, index=None, value=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = C.ENUMS["dirmn_status"].get(status, -1) if code is None else code
        self.argument = argument
        self.row, self.column, self.vector, self.index = row, column, vector, index
        self.value = value

    def __str__(self):
        return "%s (%s)" % (self.message, self.status)


class InvalidArgumentError(DirmnError, ValueError):
    """A size, stride, flag, option or enum is invalid (also a NULL pointer)."""


class ClosedHandleError(InvalidArgumentError):
    """A context, counts object or mixture was used after ``close()``."""


class DimensionMismatchError(InvalidArgumentError):
    """The sizes of the arguments do not agree."""


class WrongContextError(InvalidArgumentError):
    """An object made by one context was used with another."""


class InvalidCountsError(DirmnError, ValueError):
    """A count is negative, NaN, infinite, non-integral or too large."""


class InvalidParameterError(DirmnError, ValueError):
    """An alpha (or log alpha), a weight or a start value is invalid."""


class NumericOverflowError(DirmnError, OverflowError):
    """A size, an array's extent or a weighted sum overflows."""


class OutOfMemoryError(DirmnError, MemoryError):
    """A host or device allocation failed."""


class BackendError(DirmnError):
    """The backend cannot serve the request (base of the next three)."""


class BackendUnavailableError(BackendError):
    """The backend is not compiled in, or there is no such device."""


class DeviceError(BackendError):
    """The CUDA runtime reported an error."""


class NotSupportedError(BackendError):
    """A valid request that this backend or object cannot serve."""


class CancelledError(DirmnError):
    """The computation was cancelled (interrupt or progress callback)."""


class ContextInUseError(DirmnError):
    """Another call is using the context."""


class CommunicationError(DirmnError):
    """A collective call over a :class:`~dirmn.Communicator` failed.

    Either a callback of this rank's communicator failed (its Python
    exception, when it raised one, is the error's ``__cause__``), or another
    rank's part of the call failed: the message then names the first rank
    that failed ("rank 1's part of this collective call failed"), which
    itself raised its own error.
    """


class InternalError(DirmnError):
    """A bug in dirmn (please report it), or a status this package does not know."""


STATUS_CLASSES = {
    "DIRMN_ERROR_NULL_POINTER": InvalidArgumentError,
    "DIRMN_ERROR_INVALID_ARGUMENT": InvalidArgumentError,
    "DIRMN_ERROR_INVALID_COUNTS": InvalidCountsError,
    "DIRMN_ERROR_INVALID_PARAMETER": InvalidParameterError,
    "DIRMN_ERROR_DIMENSION_MISMATCH": DimensionMismatchError,
    "DIRMN_ERROR_WRONG_CONTEXT": WrongContextError,
    "DIRMN_ERROR_OUT_OF_MEMORY": OutOfMemoryError,
    "DIRMN_ERROR_BACKEND_UNAVAILABLE": BackendUnavailableError,
    "DIRMN_ERROR_DEVICE": DeviceError,
    "DIRMN_ERROR_OVERFLOW": NumericOverflowError,
    "DIRMN_ERROR_CANCELLED": CancelledError,
    "DIRMN_ERROR_NOT_SUPPORTED": NotSupportedError,
    "DIRMN_ERROR_CONTEXT_IN_USE": ContextInUseError,
    "DIRMN_ERROR_COMMUNICATION": CommunicationError,
    "DIRMN_ERROR_INTERNAL": InternalError,
}


def status_name(code):
    """The C name of a status value, as the library spells it.

    Parameters
    ----------
    code : int

    Returns
    -------
    str
    """
    name = C.dirmn_status_name(code)
    return name.decode() if name else "DIRMN_STATUS_UNKNOWN"


def _none_if_negative(v):
    return None if v < 0 else int(v)


def error_from_status(code, ctx_ptr):
    """The exception for a failed call, with its message and location.

    Must be called on the thread that made the call and, for a context's
    message, while the caller still holds that context (so no other call
    replaces the message in between).

    Parameters
    ----------
    code : int
        The non-zero ``dirmn_status`` the call returned.
    ctx_ptr : int or None
        The context whose message to read; ``None`` for this thread's slot
        (failures before a context existed, and functions without one).

    Returns
    -------
    DirmnError
        An instance of the class :data:`STATUS_CLASSES` gives the status.
    """
    name = status_name(code)
    if name == "DIRMN_ERROR_CONTEXT_IN_USE":
        ctx_ptr = None  # the context's message belongs to the call in flight
    raw = C.dirmn_last_error(ctx_ptr)
    message = raw.decode("utf-8", "replace") if raw else ""
    if not message:
        message = C.dirmn_status_string(code).decode()
    loc = C.new(C.dirmn_error_location)
    fields = {}
    if C.dirmn_last_error_location(ctx_ptr, ctypes.byref(loc)) == 0:
        if loc.has_integer_value:
            value = int(loc.integer_value)
        elif loc.has_value:
            value = float(loc.value)
        else:
            value = None
        fields = dict(argument=(loc.argument.decode() if loc.argument else None) or None,
                      row=_none_if_negative(loc.row), column=_none_if_negative(loc.column),
                      vector=_none_if_negative(loc.vector),
                      index=_none_if_negative(loc.index), value=value)
    cls = STATUS_CLASSES.get(name, InternalError)
    err = cls(message, status=name, code=code, **fields)
    cause = take_callback_exception()
    if cause is not None:
        err.__cause__ = cause
    return err


def check(code, ctx_ptr=None):
    """Raises the :class:`DirmnError` for ``code`` unless it is success.

    Parameters
    ----------
    code : int
        A ``dirmn_status``.
    ctx_ptr : int or None
        See :func:`error_from_status`.

    Raises
    ------
    DirmnError
        The subclass of the status family, when ``code`` is not 0.
    """
    if code != 0:
        raise error_from_status(code, ctx_ptr)
    if getattr(_callback_exceptions, "exc", None) is not None:
        _callback_exceptions.exc = None  # not this call's: it succeeded


def note_callback_exception(exc):
    """Keeps what a communicator callback raised, for the call's error.

    The callback returns non-zero instead of letting it cross into C; the
    library then fails the call (DIRMN_ERROR_COMMUNICATION), and the error
    :func:`check` raises for it on this thread gets ``exc`` as its
    ``__cause__``. The first exception since the last checked call is kept.

    Parameters
    ----------
    exc : BaseException
    """
    if getattr(_callback_exceptions, "exc", None) is None:
        _callback_exceptions.exc = exc


def take_callback_exception():
    """The exception :func:`note_callback_exception` kept on this thread
    (then forgotten), or None."""
    exc = getattr(_callback_exceptions, "exc", None)
    if exc is not None:
        _callback_exceptions.exc = None
    return exc


def invalid(cls, message, **where):
    """An error this package detects itself, worded like the library's.

    Parameters
    ----------
    cls : type
        The :class:`DirmnError` subclass.
    message : str
    **where
        ``argument``, ``row``, ``column``, ``vector``, ``index``, ``value``.

    Returns
    -------
    DirmnError
    """
    status = {InvalidArgumentError: "DIRMN_ERROR_INVALID_ARGUMENT",
              ClosedHandleError: "DIRMN_ERROR_NULL_POINTER",
              DimensionMismatchError: "DIRMN_ERROR_DIMENSION_MISMATCH",
              InvalidCountsError: "DIRMN_ERROR_INVALID_COUNTS",
              InvalidParameterError: "DIRMN_ERROR_INVALID_PARAMETER",
              NumericOverflowError: "DIRMN_ERROR_OVERFLOW",
              WrongContextError: "DIRMN_ERROR_WRONG_CONTEXT",
              NotSupportedError: "DIRMN_ERROR_NOT_SUPPORTED"}[cls]
    return cls(message, status=status, **where)


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped at ``max_iterations`` without converging."""
