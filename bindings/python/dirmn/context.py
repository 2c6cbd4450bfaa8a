"""Contexts: where computations run (CPU or a CUDA device)."""

import ctypes
import threading

from . import _capi as C
from ._handles import Handle, calling
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


class Context:
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

    Raises
    ------
    BackendUnavailableError
        CUDA asked for without CUDA compiled in or without such a device.
    InvalidArgumentError
        Unknown backend or precision, negative device or threads.

    Notes
    -----
    ``close()`` (or leaving a ``with`` block) frees the context; objects
    it made stay valid for their own ``close()``, but computing with them
    raises :class:`~dirmn.errors.ClosedHandleError`.
    """

    def __init__(self, backend="cpu", device=0, threads=None, precision="double"):
        code = _choice(backend, _BACKENDS, "backend")
        if not isinstance(device, int) or device < 0:
            raise invalid(InvalidArgumentError,
                          "dirmn: device must be a non-negative integer, not %r" % (device,),
                          argument="device")
        ptr = ctypes.c_void_p()
        check(C.dirmn_context_create(ctypes.byref(ptr), code, device), None)
        self._lock = threading.Lock()
        self._handle = Handle(self, ptr.value, C.dirmn_context_destroy, "context")
        if threads is not None:
            self.threads = threads
        if precision != "double":
            self.precision = precision
        else:
            self._precision = "double"

    def _call(self, *handles):
        return calling((self,), (self._handle,) + handles)

    @property
    def closed(self):
        """bool: whether the context was closed."""
        return self._handle.closed

    def close(self):
        """Frees the context (waiting for a call in flight); idempotent."""
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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
