"""Contexts: where computations run (CPU or a CUDA device)."""

import ctypes
import threading

from . import _capi as C
from ._callbacks import InterruptState
from ._handles import Closable, Handle, calling
from .errors import InvalidArgumentError, check, invalid

_BACKENDS = {"auto": C.DIRMN_BACKEND_AUTO, "cpu": C.DIRMN_BACKEND_CPU,
             "cuda": C.DIRMN_BACKEND_CUDA}
_BACKEND_NAMES = {C.DIRMN_BACKEND_CPU: "cpu", C.DIRMN_BACKEND_CUDA: "cuda"}
_PRECISIONS = {"double": C.DIRMN_PRECISION_DOUBLE, "fast": C.DIRMN_PRECISION_FAST}


def _choice(value, table, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise invalid(InvalidArgumentError, "dirmn: %s must be %s, not %r" % (
            what, " or ".join(repr(k) for k in table), value), argument=what) from None


def cuda_device_count():
    """The number of usable CUDA devices.

    Returns
    -------
    int
        0 where the library was built without CUDA, or the driver or devices
        are missing.
    """
    n = ctypes.c_int(0)
    C.dirmn_cuda_device_count(ctypes.byref(n))
    return n.value


def backend_compiled(backend):
    """Whether ``backend`` ("auto", "cpu" or "cuda") was compiled into libdirmn.

    Returns
    -------
    bool

    Raises
    ------
    InvalidArgumentError
        For an unknown backend name.
    """
    return bool(C.dirmn_backend_compiled(_choice(backend, _BACKENDS, "backend")))


class Context(Closable):
    """Where dirmn computes: the CPU, or one CUDA device.

    A context serves one call at a time; this class serialises the calls of
    several Python threads on it with a lock (ctypes releases the GIL during
    a call, so calls on *different* contexts run in parallel).

    Parameters
    ----------
    backend : {"cpu", "cuda", "auto"}
        "auto" takes CUDA device ``device`` where one exists, else the CPU.
    device : int
        The CUDA device index (ignored on the CPU).
    threads : int, optional
        Host threads for CPU work; ``None`` or 0: all cores.
    precision : {"double", "fast"}
        "fast" lets the CUDA backend compute in float32 (the CPU always
        computes in double).
    interrupt : callable, optional
        ``interrupt()`` is polled during long computations on this context
        (``dirmn_context_set_interrupt``), on the thread that made the call;
        a true return value cancels the call, which then raises
        :class:`~dirmn.errors.CancelledError`. An exception it raises also
        cancels the call and is re-raised by it, unchanged. It must not
        compute on this context (only queries are served meanwhile). See
        :meth:`set_interrupt`.

    Raises
    ------
    BackendUnavailableError
        CUDA asked for without CUDA compiled in or without such a device.
    InvalidArgumentError
        Unknown backend or precision, negative device or threads.

    Notes
    -----
    Ctrl-C: a call made on the main thread while SIGINT has Python's default
    handler installs a handler that only sets a flag for the duration of the
    call; the library polls it and stops, and the call raises
    ``KeyboardInterrupt``. The context stays usable.

    ``close()`` (or leaving a ``with`` block) frees the context; objects
    it made stay valid for their own ``close()``, but computing with them
    raises :class:`~dirmn.errors.ClosedHandleError`.
    """

    def __init__(self, backend="cpu", device=0, threads=None, precision="double",
                 interrupt=None):
        code = _choice(backend, _BACKENDS, "backend")
        if not isinstance(device, int) or device < 0:
            raise invalid(InvalidArgumentError,
                          "dirmn: device must be a non-negative integer, not %r" % (device,),
                          argument="device")
        ptr = ctypes.c_void_p()
        check(C.dirmn_context_create(ctypes.byref(ptr), code, device), None)
        # Re-entrant: a progress or interrupt callback of a call on this context
        # may query it (the library serves queries and refuses anything else
        # with DIRMN_ERROR_CONTEXT_IN_USE) instead of deadlocking here.
        self._lock = threading.RLock()
        self._interrupt = InterruptState()
        if interrupt is not None:
            self.set_interrupt(interrupt)
        self._handle = Handle(self, ptr.value, C.dirmn_context_destroy, "context", self._lock,
                              is_context=True)
        if threads is not None:
            self.threads = threads
        if precision != "double":
            self.precision = precision
        else:
            self._precision = "double"

    @property
    def interrupt(self):
        """callable or None: the context's interrupt callable (see :meth:`set_interrupt`)."""
        return self._interrupt.user

    def set_interrupt(self, interrupt):
        """Sets (or, with None, removes) the callable polled during long calls.

        Parameters
        ----------
        interrupt : callable or None
            Called with no arguments from the thread that made the call, each
            time the library polls its interrupt callback; a true return
            value stops the computation, which leaves its outputs untouched
            and raises :class:`~dirmn.errors.CancelledError`. An exception
            raised by it stops the computation too and is re-raised by the
            call with its own type (it never reaches the C library).

        Raises
        ------
        InvalidArgumentError
            ``interrupt`` is neither callable nor None.
        """
        if interrupt is not None and not callable(interrupt):
            raise invalid(InvalidArgumentError, "dirmn: interrupt must be callable or None, "
                          "not %r" % (interrupt,), argument="interrupt")
        self._interrupt.user = interrupt

    def _call(self, *handles):
        return calling((self,), (self._handle,) + handles)

    @property
    def backend(self):
        """str: "cpu" or "cuda" (never "auto": what the context resolved to)."""
        b, d = ctypes.c_int(), ctypes.c_int()
        with self._call() as (p,):
            check(C.dirmn_context_backend(p, ctypes.byref(b), ctypes.byref(d)), p)
        return _BACKEND_NAMES.get(b.value, "unknown")

    @property
    def device(self):
        """int: the CUDA device index (0 on the CPU)."""
        d = ctypes.c_int()
        with self._call() as (p,):
            check(C.dirmn_context_backend(p, None, ctypes.byref(d)), p)
        return d.value

    @property
    def threads(self):
        """int: the host threads in use (settable; 0 means all cores)."""
        n = ctypes.c_int()
        with self._call() as (p,):
            check(C.dirmn_context_get_threads(p, ctypes.byref(n)), p)
        return n.value

    @threads.setter
    def threads(self, n):
        if not isinstance(n, int) or isinstance(n, bool):
            raise invalid(InvalidArgumentError,
                          "dirmn: threads must be an integer, not %r" % (n,), argument="threads")
        if n > 2**31 - 1:
            raise invalid(InvalidArgumentError, "dirmn: threads = %d is too large" % n,
                          argument="threads")
        with self._call() as (p,):
            check(C.dirmn_context_set_threads(p, n), p)

    @property
    def precision(self):
        """str: "double" or "fast" (settable)."""
        return self._precision

    @precision.setter
    def precision(self, value):
        code = _choice(value, _PRECISIONS, "precision")
        with self._call() as (p,):
            check(C.dirmn_context_set_precision(p, code), p)
        self._precision = value

    def synchronize(self):
        """Waits for the context's queued device work (a no-op on the CPU).

        Raises
        ------
        DeviceError
        """
        with self._call() as (p,):
            check(C.dirmn_context_synchronize(p), p)

    def __repr__(self):
        if self.closed:
            return "<dirmn.Context (closed)>"
        return "<dirmn.Context backend=%r device=%d threads=%d>" % (
            self.backend, self.device, self.threads)


_default = None
_default_lock = threading.Lock()


def default_context():
    """The context the functions use when none is given.

    Created on first use with backend "auto" (CUDA where a device exists,
    else the CPU) and shared by all threads (its calls are serialised).

    Returns
    -------
    Context
    """
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Context("auto")
        return _default
