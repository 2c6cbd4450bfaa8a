"""Ownership of the library's handles, shared by Context, Counts, Mixture and
RegressionResult.

A handle is freed exactly once: by ``close()`` or, failing that, by its
``weakref.finalize`` (which itself runs at most once). Calls register as
users of every handle they pass; ``close()`` from another thread marks the
handle closed at once (no new call may start) and waits for the calls in
flight to return before freeing it, so the library never sees a freed
pointer. Calls on one context are serialised by the context's lock: the
library serves one call per context at a time and answers a second one
with DIRMN_ERROR_CONTEXT_IN_USE rather than waiting.
"""

import contextlib
import threading
import weakref

from .errors import ClosedHandleError, invalid


# Destroys a collection could not run under their context's lock, by lock:
# the next call on that context runs them while it holds the lock.
_deferred = {}
_deferred_guard = threading.Lock()


def _destroy(destroy, lock, ptr):
    """A finalizer's destroy: under the context's lock.

    The library takes the context for a destroy as for any call, so another
    thread's call made meanwhile would be refused (CONTEXT_IN_USE). close()
    holds the lock already. A collection may run on a thread that holds
    other locks, so there the lock is not waited for: where another thread
    holds it, the destroy waits for the next call on the context.
    """
    if lock is None:
        destroy(ptr)
        return
    if not lock.acquire(blocking=False):
        with _deferred_guard:
            _deferred.setdefault(id(lock), (lock, []))[1].append((destroy, ptr))
        return
    try:
        destroy(ptr)
    finally:
        lock.release()


def _destroy_context(destroy, lock, ptr):
    """A context's finalizer: the destroys deferred to its lock first (no
    later call will run them), then the context, which the library frees
    once a call in flight on another thread has returned."""
    if lock.acquire(blocking=False):
        try:
            _run_deferred(lock)
        finally:
            lock.release()
    else:
        with _deferred_guard:
            entry = _deferred.pop(id(lock), None)
        for d, p in (entry[1] if entry else ()):
            d(p)
    destroy(ptr)


def _run_deferred(lock):
    """Runs the destroys deferred to ``lock``; the caller holds it."""
    if not _deferred:
        return
    with _deferred_guard:
        entry = _deferred.pop(id(lock), None)
    if entry is not None:
        for destroy, ptr in entry[1]:
            destroy(ptr)


class Handle:
    """A library handle with a use count, freed exactly once.

    Parameters
    ----------
    ptr : int
        The handle's address (non-zero).
    destroy : callable
        The library's destroy function for it.
    kind : str
        What it is, for messages ("context", "counts", "mixture").
    lock : threading.RLock, optional
        The lock of the context the handle belongs to: held while it is
        destroyed, as for every call on that context.
    is_context : bool
        The handle is the context whose lock ``lock`` is.
    """

    __slots__ = ("_ptr", "_users", "_cond", "_finalizer", "_kind", "_lock", "__weakref__")

    def __init__(self, owner, ptr, destroy, kind, lock=None, is_context=False):
        self._ptr = ptr
        self._users = 0
        self._cond = threading.Condition(threading.Lock())
        self._kind = kind
        self._lock = lock
        # The finalizer holds the address, not the owner, so the owner can be
        # collected; calling it (from close) runs destroy at most once.
        self._finalizer = weakref.finalize(owner, _destroy_context if is_context else _destroy,
                                           destroy, lock, ptr)

    @property
    def closed(self):
        """Whether the handle was closed (no new call may use it)."""
        return self._ptr is None

    def acquire(self):
        """Registers a call as a user and returns the address.

        Raises
        ------
        ClosedHandleError
            When the handle was closed.
        """
        with self._cond:
            if self._ptr is None:
                raise invalid(ClosedHandleError,
                              "dirmn: this %s was closed and cannot be used" % self._kind)
            self._users += 1
            return self._ptr

    def release(self):
        """Ends a call's use (see :meth:`acquire`)."""
        with self._cond:
            self._users -= 1
            if self._users == 0:
                self._cond.notify_all()

    def close(self):
        """Frees the handle once no call uses it; idempotent."""
        with self._cond:
            if self._ptr is None:
                return
            self._ptr = None
            while self._users > 0:
                self._cond.wait()
        if self._lock is None:
            self._finalizer()
        else:
            with self._lock:
                self._finalizer()


class Closable:
    """``closed``, ``close()`` and the context-manager protocol of an object
    that owns one library handle in ``self._handle``."""

    __slots__ = ()

    @property
    def closed(self):
        """bool: whether the object was closed (no new call may use it)."""
        return self._handle.closed

    def close(self):
        """Frees the library's object, waiting for a call in flight; idempotent.

        What was read from it before (fitted values, names) stays.
        """
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@contextlib.contextmanager
def calling(contexts, handles, pending=None):
    """Holds ``handles`` in use and ``contexts`` locked for one library call.

    Parameters
    ----------
    contexts : sequence of Context
        The contexts the call computes on or whose objects it reads; their
        locks are taken in a fixed order so that two calls never deadlock.
        The first is the one the call computes on: its interrupt callback
        is installed for the call where needed (see :mod:`dirmn._callbacks`).
    handles : sequence of Handle
        Every handle the call passes (those of the contexts included).
    pending : dirmn._callbacks.Pending, optional
        The record the call's progress callback writes to; a new one when
        omitted.

    Yields
    ------
    list of int
        The addresses of ``handles``, in order.

    Raises
    ------
    BaseException
        After the body: the first exception a Python callback of the call
        raised (it cancelled the call), else ``KeyboardInterrupt`` when a
        SIGINT arrived during the call, else whatever the body raised.
    """
    taken = []
    try:
        ptrs = []
        for h in handles:
            ptrs.append(h.acquire())
            taken.append(h)
        locks = sorted({id(c._lock): c._lock for c in contexts}.items())
        for _, lock in locks:
            lock.acquire()
        try:
            for _, lock in locks:
                _run_deferred(lock)
            with _callbacks_for(contexts[0] if contexts else None, handles, ptrs, pending):
                yield ptrs
        finally:
            for _, lock in reversed(locks):
                lock.release()
    finally:
        for h in taken:
            h.release()


@contextlib.contextmanager
def _callbacks_for(ctx, handles, ptrs, pending):
    """Installs the interrupt trampoline and the SIGINT flag for one call."""
    from . import _callbacks
    from . import _capi as C

    if pending is None:
        pending = _callbacks.Pending()
    state = getattr(ctx, "_interrupt", None)
    ptr = None
    if state is not None and state.pending is None:   # not a call nested in a callback
        ptr = next((p for h, p in zip(handles, ptrs) if h is ctx._handle), None)
    token = (None, None)
    installed = False
    if ptr is not None:
        token = _callbacks.sigint_begin()
        pending.sigint = token[0] is not None
        if pending.sigint or state.user is not None:
            state.pending = pending
            if C.dirmn_context_set_interrupt(ptr, state.function, None) == 0:
                installed = True
            else:
                state.pending = None

    def finish():
        if installed:
            C.dirmn_context_set_interrupt(ptr, C.dirmn_interrupt_fn(), None)
            state.pending = None
        return _callbacks.sigint_end(token)

    try:
        yield
    except BaseException:
        hit = finish()
        if pending.error is not None:
            raise pending.error from None
        if hit:
            raise KeyboardInterrupt from None
        raise
    hit = finish()
    if pending.error is not None:
        raise pending.error from None
    if hit:
        raise KeyboardInterrupt
