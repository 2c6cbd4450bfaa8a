"""Python callbacks under the library's C callbacks, and Ctrl-C.

The library calls back into Python through two ``ctypes.CFUNCTYPE``
trampolines, both on the thread that made the call (``dirmn.h``: the
interrupt and progress callbacks are called from the calling thread):

* the interrupt callback (``dirmn_context_set_interrupt``), installed on the
  computing context for the duration of a call only when something needs
  polling: a SIGINT seen on the main thread, or the context's own
  ``interrupt`` callable (:meth:`dirmn.Context.set_interrupt`);
* the progress callback of ``dirmn_fit_options`` and
  ``dirmn_mixture_options`` (see :func:`progress_function`).

No Python exception crosses the C boundary: a trampoline catches whatever
the Python callable raises, keeps the first exception in the call's
:class:`Pending` record and returns 1 (the header's "stop"), and the call
re-raises it once the library has returned.

Ctrl-C: for the duration of a call made on the main thread while SIGINT has
Python's default handler (``signal.default_int_handler``), a handler that
only sets a flag is installed (and the previous one restored afterwards);
the interrupt trampoline returns 1 once the flag is set, the library
returns DIRMN_ERROR_CANCELLED, and the call raises ``KeyboardInterrupt``.
Calls off the main thread, or while SIGINT has another handler, are left
alone.
"""

import signal
import threading

from . import _capi as C


class Pending:
    """What the callbacks of one call leave for the caller.

    Attributes
    ----------
    error : BaseException or None
        The first exception a Python callable raised (re-raised after the
        call).
    sigint : bool
        Whether this call watches SIGINT (made on the main thread with the
        flag handler installed).
    """

    __slots__ = ("error", "sigint")

    def __init__(self):
        self.error = None
        self.sigint = False

    def fail(self, exc):
        if self.error is None:
            self.error = exc

    def stop_requested(self):
        """Whether the call must stop: an exception kept, or a SIGINT seen."""
        return self.error is not None or (self.sigint and _sigint.hit)


class _SigintState:
    __slots__ = ("hit", "installed")

    def __init__(self):
        self.hit = False        # a SIGINT arrived while the flag handler was installed
        self.installed = False  # the flag handler is installed (main thread only)


_sigint = _SigintState()


def _on_sigint(signum, frame):
    _sigint.hit = True


def sigint_begin():
    """Installs the flag handler if this is the outermost call on the main thread.

    Returns
    -------
    tuple
        ``(installed_here, previous_handler)`` for :func:`sigint_end`;
        ``installed_here`` is None where SIGINT is not watched at all.
    """
    if threading.current_thread() is not threading.main_thread():
        return None, None
    if _sigint.installed:
        return False, None      # a call nested in a callback of an outer call
    try:
        previous = signal.getsignal(signal.SIGINT)
        if previous is not signal.default_int_handler:
            return None, None   # SIG_IGN, SIG_DFL or the user's own handler: left alone
        signal.signal(signal.SIGINT, _on_sigint)
    except (ValueError, OSError):  # e.g. an embedded interpreter without signals
        return None, None
    _sigint.hit = False
    _sigint.installed = True
    return True, previous


def sigint_end(token):
    """Restores the previous handler; returns whether a SIGINT was seen."""
    installed_here, previous = token
    if not installed_here:
        return False
    signal.signal(signal.SIGINT, previous)
    _sigint.installed = False
    hit, _sigint.hit = _sigint.hit, False
    return hit


class InterruptState:
    """A context's interrupt trampoline and the Python state behind it.

    The trampoline refers to this object, not to the context, so that the
    context stays collectable. ``pending`` is set by each call that installs
    the trampoline (under the context's lock).
    """

    def __init__(self):
        self.user = None        # the context's interrupt callable, or None
        self.pending = None     # the Pending of the call in flight
        self.function = C.dirmn_interrupt_fn(self._poll)  # kept alive with the context

    def _poll(self, user_data):
        pending = self.pending
        if pending is None:
            return 0
        if pending.stop_requested():
            return 1
        user = self.user
        if user is None:
            return 0
        try:
            return 1 if user() else 0
        except BaseException as exc:  # noqa: B902 -- must not cross into C
            pending.fail(exc)
            return 1


def progress_function(progress, pending):
    """A ``dirmn_progress_fn`` calling ``progress(iteration, loglik, change)``.

    A true return value, an exception (kept in ``pending``) or a SIGINT seen
    by the call returns 1, which cancels the call.

    Parameters
    ----------
    progress : callable or None
    pending : Pending

    Returns
    -------
    dirmn_progress_fn
        The NULL function pointer for ``progress=None``. The caller keeps it
        alive for the duration of the call.
    """
    if progress is None:
        return C.dirmn_progress_fn()
    if not callable(progress):
        from .errors import InvalidArgumentError, invalid
        raise invalid(InvalidArgumentError, "dirmn: progress must be callable, not %r"
                      % (progress,), argument="progress")

    def trampoline(iteration, loglik, change, user_data):
        if pending.stop_requested():
            return 1
        try:
            stop = progress(iteration, loglik, change)
        except BaseException as exc:  # noqa: B902 -- must not cross into C
            pending.fail(exc)
            return 1
        try:
            stop = bool(stop)
        except BaseException as exc:  # noqa: B902
            pending.fail(exc)
            return 1
        return 1 if stop or pending.stop_requested() else 0

    return C.dirmn_progress_fn(trampoline)
