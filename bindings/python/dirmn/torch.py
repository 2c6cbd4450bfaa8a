"""A PyTorch layer over dirmn (optional: needs torch).

:func:`loglik` is differentiable in log alpha: the forward pass is
``dirmn_loglik`` and the backward pass the gradient of ``dirmn_loglik_sum``
with the incoming gradient as row weights. The library takes only
non-negative weights, so the gradient is the difference of two weighted
sums: one over the positive and one over the negative parts.

Where ``log_alpha`` is a CUDA tensor and the table is on a CUDA context of
the same device (a tensor's table is, on the default context of a machine
with a GPU), both passes stay on the device: log alpha, the incoming
gradient and the results are passed as device pointers
(``DIRMN_PARAMS_DEVICE``, ``DIRMN_WEIGHTS_DEVICE``, ``DIRMN_OUTPUT_DEVICE``)
and the library's work is ordered on PyTorch's current stream. Elsewhere
they are copied through host memory.

With PyTorch 2.4 or later the two passes are also the custom operators
``torch.ops.dirmn.loglik`` and ``dirmn::loglik_backward`` (with fake
implementations), which :func:`loglik` calls for a :class:`~dirmn.Counts`
while ``torch.compile`` traces it (a Module passes its cached one), so a
compiled model keeps them in its graph. They synchronise with the host, so
CUDA-graph capture (``mode="reduce-overhead"``) cannot hold them.

:class:`DirichletMultinomial` keeps the :class:`~dirmn.Counts` it made for
the last tensor it saw, so a training loop over one fixed table validates
and copies the table once rather than on every step.

>>> import torch, dirmn.torch
>>> model = dirmn.torch.DirichletMultinomial(vocab_size=1000)
>>> nll = -model(counts).sum()          # counts: documents x 1000
>>> nll.backward()
"""

import ctypes
import itertools
import threading
import weakref

import numpy as np
import torch

from . import _capi as C
from .loglik import loglik as _dm_loglik, loglik_sum as _dm_loglik_sum
from .counts import Counts
from .errors import (DimensionMismatchError, InvalidArgumentError, NotSupportedError,
                     check, invalid)


class _CSRArrays:
    """A torch sparse tensor's CSR arrays in the duck-typed form Counts reads.

    Counts recognises sparse input by ``tocsr``/``nnz``/``shape`` and reads
    ``indptr``/``indices``/``data``; this spares converting through scipy.
    COO input is turned into CSR arrays here rather than by
    ``to_sparse_csr``, which warns on every call in torch 1.13.
    """

    format = "csr"

    def __init__(self, t):
        self.shape = tuple(t.shape)
        if t.layout == torch.sparse_csr:
            self.indptr = t.crow_indices().cpu().numpy()
            self.indices = t.col_indices().cpu().numpy()
            self.data = t.values().cpu().numpy()
        else:
            t = t.coalesce()  # sorted by row, then column; no repeats
            rows, self.indices = t.indices().cpu().numpy()
            self.data = t.values().cpu().numpy()
            per_row = np.bincount(rows, minlength=self.shape[0])
            self.indptr = np.concatenate(([0], np.cumsum(per_row)))
        self.nnz = self.data.shape[0]

    def tocsr(self):
        return self


def _no_grad_counts(t):
    if t.requires_grad:
        raise invalid(InvalidArgumentError, "dirmn.torch: counts must not require "
                      "gradients", argument="data")


def _tensor_table(t):
    """What :class:`Counts` takes for a tensor (no copy for dense CPU tensors)."""
    _no_grad_counts(t)
    if t.layout in (torch.sparse_csr, torch.sparse_coo):
        return _CSRArrays(t.detach())
    return t.detach().cpu().numpy()  # a view for CPU tensors, no copy


def _as_counts(counts, context):
    if isinstance(counts, Counts):
        return counts
    if isinstance(counts, torch.Tensor):
        counts = _tensor_table(counts)
    return Counts(counts, context=context, real_valued=True)


def _tensor_key(t):
    """What must be unchanged for a Counts made from ``t`` to still hold ``t``.

    ``_version`` is bumped by every in-place operation through torch
    (views and a sparse tensor's ``values()`` share their base's counter);
    the data pointers catch ``.set_()`` and storage swaps, which need not.
    """
    if t.layout == torch.strided:
        ptrs = (t.data_ptr(),)
        strides = tuple(t.stride())
    elif t.layout == torch.sparse_csr:
        ptrs = (t.crow_indices().data_ptr(), t.col_indices().data_ptr(),
                t.values().data_ptr())
        strides = ()
    else:  # COO: coalescing copies anyway; key on what identifies its arrays
        ptrs = (t._indices().data_ptr(), t._values().data_ptr())
        strides = ()
    return (t.layout, t.device, ptrs, tuple(t.shape), strides, t.dtype, t._version)


# A context's backend and device, which never change: asked of the library
# once per context rather than twice per forward pass.
_placement = weakref.WeakKeyDictionary()


def _on_device(counts, log_alpha):
    """Whether both passes can stay on ``log_alpha``'s CUDA device.

    The library cannot see how long a device array is, so the length is
    checked here, with the host path's message (a K x V log alpha takes the
    host path).
    """
    if not log_alpha.is_cuda or log_alpha.dim() != 1:
        return False
    ctx = counts.context
    where = _placement.get(ctx)
    if where is None:
        where = _placement[ctx] = (ctx.backend, ctx.device)
    if where != ("cuda", log_alpha.device.index):
        return False
    V = counts.shape[1]
    if log_alpha.shape[0] != V:
        raise invalid(DimensionMismatchError, "dirmn: alpha has %d entries but the table has %d "
                      "columns" % (log_alpha.shape[0], V), argument="alpha")
    return True


def _dptr(t):
    return ctypes.cast(ctypes.c_void_p(t.data_ptr()), C._pd)


class _TorchStream:
    """Orders a context's work on PyTorch's current stream for one call.

    Handle 0 is PyTorch's legacy default stream; the library's own stream
    does not wait for that one, so it is named by its CUDA handle,
    cudaStreamLegacy (1). The context's previous stream is set again after
    the call, so it never keeps a stream PyTorch may free.
    """

    def __init__(self, p, device):
        self.p = p
        self.handle = torch.cuda.current_stream(device).cuda_stream or 1
        self.previous = ctypes.c_void_p()

    def __enter__(self):
        check(C.dirmn_context_get_stream(self.p, ctypes.byref(self.previous)), self.p)
        check(C.dirmn_context_set_stream(self.p, ctypes.c_void_p(self.handle)), self.p)

    def __exit__(self, *exc):
        status = C.dirmn_context_set_stream(self.p, self.previous)
        if exc[0] is None:
            check(status, self.p)


def _device_loglik(counts, a, full):
    """Per-row values at log alpha ``a`` (float64, CUDA) as a new CUDA tensor."""
    rows, V = counts.shape
    out = torch.empty(rows, dtype=torch.float64, device=a.device)
    flags = (0 if full else C.DIRMN_KERNEL) | C.DIRMN_PARAMS_DEVICE | C.DIRMN_OUTPUT_DEVICE
    with counts._call() as (p, h), _TorchStream(p, a.device):
        check(C.dirmn_loglik(p, h, 1, _dptr(a), V, 1, C.DIRMN_PARAM_LOG_ALPHA, flags,
                             _dptr(out), 1, 1), p)
    return out


def _device_sum_gradient(counts, a, w, out):
    """The gradient of sum_b w_b loglik_b in log alpha into ``out`` (w >= 0,
    or None for all 1), every array on ``a``'s device."""
    flags = C.DIRMN_KERNEL | C.DIRMN_PARAMS_DEVICE | C.DIRMN_OUTPUT_DEVICE
    if w is not None:
        flags |= C.DIRMN_WEIGHTS_DEVICE
    with counts._call() as (p, h), _TorchStream(p, a.device):
        check(C.dirmn_loglik_sum(p, h, _dptr(a), 1, C.DIRMN_PARAM_LOG_ALPHA,
                                 None if w is None else _dptr(w), flags, None, _dptr(out), None,
                                 None), p)
    return out


def _device_gradient(counts, a, g):
    """sum_b g_b d loglik_b / d log alpha, every array on ``a``'s device.

    The usual loss, a sum or mean over rows, sends the same gradient to
    every row: then the gradient is that constant times the unweighted one,
    whose histograms the table keeps, and no weights cross to the host.
    """
    grad = torch.empty_like(a)
    first = g[:1]
    positive, negative, same = torch.stack(
        ((g > 0).any(), (g < 0).any(), (g == first).all())).tolist()
    if g.numel() == 0 or not (positive or negative):
        return grad.zero_()
    if same:
        return _device_sum_gradient(counts, a, None, grad).mul_(first)
    grad.zero_()
    part = torch.empty_like(a)
    if positive:
        grad.add_(_device_sum_gradient(counts, a, (g.clamp(min=0) if negative else g).contiguous(),
                                       part))
    if negative:
        grad.sub_(_device_sum_gradient(counts, a, (-g).clamp(min=0).contiguous(), part))
    return grad


def _values(counts, log_alpha, full):
    """The forward pass: per-row values, of ``log_alpha``'s dtype and device."""
    if _on_device(counts, log_alpha):
        a = log_alpha.detach().to(torch.float64).contiguous()
        return _device_loglik(counts, a, full).to(log_alpha.dtype)
    a = log_alpha.detach().to(torch.float64).cpu().numpy()
    out = _dm_loglik(counts, a, full=full, param="logalpha")
    return torch.from_numpy(out).to(dtype=log_alpha.dtype, device=log_alpha.device)


def _gradient(counts, log_alpha, grad_out):
    """The backward pass: sum_b grad_out_b d loglik_b / d log alpha."""
    if _on_device(counts, log_alpha):
        a = log_alpha.detach().to(torch.float64).contiguous()
        g = grad_out.detach().to(torch.float64).contiguous()
        return _device_gradient(counts, a, g).to(grad_out.dtype)
    a = log_alpha.detach().to(torch.float64).cpu().numpy()
    g = grad_out.detach().to(torch.float64).cpu().numpy()
    if g.size and np.all(g == g[0]):  # a sum or mean: see _device_gradient
        s = _dm_loglik_sum(counts, a, param="logalpha", full=False, derivatives=True)
        grad = g[0] * s.gradient
    else:
        grad = np.zeros_like(a)
        for sign, w in ((1.0, np.clip(g, 0, None)), (-1.0, np.clip(-g, 0, None))):
            if np.any(w > 0):
                s = _dm_loglik_sum(counts, a, weights=w, param="logalpha", full=False,
                                   derivatives=True)
                grad += sign * s.gradient
    return torch.from_numpy(grad).to(dtype=grad_out.dtype, device=grad_out.device)


class _Loglik(torch.autograd.Function):
    @staticmethod
    def forward(fctx, log_alpha, counts, full):
        fctx.counts = counts
        fctx.save_for_backward(log_alpha)
        return _values(counts, log_alpha, full)

    @staticmethod
    def backward(fctx, grad_out):
        log_alpha, = fctx.saved_tensors
        return _gradient(fctx.counts, log_alpha, grad_out), None, None


# PyTorch >= 2.4: the same two passes as custom operators, dirmn::loglik and
# its backward, with fake implementations, so that torch.compile traces a
# model that calls them as one graph instead of breaking it at a Python
# function it cannot see into. An operator's arguments are tensors and
# plain values, so the table travels as an integer key into a registry
# that holds it weakly (the caller's Counts or the Module's cache keeps it).
# Eager calls keep the autograd Function: the operators serve what
# torch.compile traces. Where registering them fails (an API this code
# does not know), _CUSTOM_OP_ERROR says why and compiled code breaks its
# graph at the Function as before.
# Keys are strings: an int argument of a custom operator is a SymInt, which
# torch.compile may make symbolic (and then not a dictionary key).
_tables = weakref.WeakValueDictionary()  # key -> Counts
_keys = weakref.WeakKeyDictionary()      # Counts -> key
_key_numbers = itertools.count(1)
_key_lock = threading.Lock()
_CUSTOM_OP_ERROR = None


def _key_of(counts):
    with _key_lock:
        key = _keys.get(counts)
        if key is None:
            key = "t%d" % next(_key_numbers)
            _keys[counts] = key
            _tables[key] = counts
        return key


def _table(key):
    counts = _tables.get(key)
    if counts is None:
        raise invalid(InvalidArgumentError, "dirmn.torch: the table of this graph was "
                      "freed; keep its Counts (or the Module) alive", argument="counts")
    return counts


def _register_custom_ops():
    @torch.library.custom_op("dirmn::loglik", mutates_args=())
    def loglik_op(log_alpha: torch.Tensor, table: str, full: bool) -> torch.Tensor:
        return _values(_table(table), log_alpha, full)

    @loglik_op.register_fake
    def _(log_alpha, table, full):
        return log_alpha.new_empty((_table(table).shape[0],))

    @torch.library.custom_op("dirmn::loglik_backward", mutates_args=())
    def loglik_backward_op(log_alpha: torch.Tensor, table: str,
                           grad_out: torch.Tensor) -> torch.Tensor:
        return _gradient(_table(table), log_alpha, grad_out)

    @loglik_backward_op.register_fake
    def _(log_alpha, table, grad_out):
        return torch.empty_like(log_alpha, dtype=grad_out.dtype)

    # torch.library passes these by keyword: (ctx, inputs, output).
    def setup(ctx, inputs, output):
        log_alpha, table, _ = inputs
        ctx.table = table
        # Held until the backward pass: a table made for one call (a tensor
        # passed to loglik) has no other owner.
        ctx.counts = _tables.get(table)
        ctx.save_for_backward(log_alpha)

    def backward(ctx, grad_out):
        log_alpha, = ctx.saved_tensors
        return loglik_backward_op(log_alpha, ctx.table, grad_out), None, None

    loglik_op.register_autograd(backward, setup_context=setup)
    return loglik_op


_loglik_op = None
if hasattr(torch, "library") and hasattr(torch.library, "custom_op"):
    try:
        _loglik_op = _register_custom_ops()
    except Exception as e:  # pragma: no cover - depends on the installed torch
        _CUSTOM_OP_ERROR = e
_HAS_CUSTOM_OP = _loglik_op is not None


def _compiling():
    """Whether torch.compile is tracing the caller."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling()
    dynamo = getattr(torch, "_dynamo", None)
    return bool(dynamo is not None and getattr(dynamo, "is_compiling", lambda: False)())


def loglik(counts, log_alpha, full=False, context=None):
    """Per-row DM log-likelihood, differentiable in ``log_alpha``.

    Parameters
    ----------
    counts : torch.Tensor or numpy.ndarray or dirmn.Counts
        rows × V counts (no gradient flows to them); a tensor may be dense
        or sparse (CSR or COO). Converted on every call: use a
        :class:`DirichletMultinomial` or a prebuilt Counts to do it once.
    log_alpha : torch.Tensor
        V log-parameters.
    full : bool
        False (default): the kernel ``lgamma(A) - lgamma(N + A) + sum_v
        [lgamma(n_v + a_v) - lgamma(a_v)]``; True: the log pmf.
    context : dirmn.Context, optional

    Returns
    -------
    torch.Tensor
        rows values, of ``log_alpha``'s dtype.

    Raises
    ------
    DirmnError
        As :func:`dirmn.loglik` (bad counts, non-finite log alpha ...).
    NotSupportedError
        A :class:`~dirmn.Counts` split over a :class:`~dirmn.Communicator`:
        its rows' values are local but the backward pass would sum the
        gradient over every rank; detach it (``set_communicator(None)``)
        and reduce the gradients yourself.
    """
    if isinstance(counts, Counts) and counts.communicator is not None:
        raise invalid(NotSupportedError, "dirmn.torch.loglik: the counts are one rank's rows "
                      "of a table split over a communicator; detach them "
                      "(set_communicator(None)) to differentiate this rank's rows",
                      argument="counts")
    # The operators reach a table through the registry only, so they serve a
    # Counts the caller (or a Module's cache) keeps: a compiled backward has
    # nothing else to hold a table made here for one call, and each new table
    # would also be a new key to recompile for.
    if _HAS_CUSTOM_OP and isinstance(counts, Counts) and _compiling():
        return _loglik_op(log_alpha, _key_of(counts), bool(full))
    return _Loglik.apply(log_alpha, _as_counts(counts, context), bool(full))


class DirichletMultinomial(torch.nn.Module):
    """A DM over ``vocab_size`` categories with a learnable ``log_alpha``.

    :meth:`forward` caches the :class:`~dirmn.Counts` made from the last
    tensor passed, keyed by the tensor's identity, data pointer(s), shape,
    strides, dtype and ``_version``: calling it again with the same
    unchanged tensor reuses the library's copy, and any in-place edit made
    through torch makes a new one. Writes that bypass torch (through a
    NumPy view of the tensor, say) are not seen: call :meth:`clear_cache`
    after them, or pass a :class:`~dirmn.Counts` you manage yourself.

    Parameters
    ----------
    vocab_size : int
        V.
    full : bool
        Whether :meth:`forward` includes the multinomial coefficients.
    dtype : torch.dtype
        Of ``log_alpha`` (zeros: alpha = 1) and of the output.
    context : dirmn.Context, optional
    """

    def __init__(self, vocab_size, full=False, dtype=torch.float32, context=None):
        super().__init__()
        self.log_alpha = torch.nn.Parameter(torch.zeros(int(vocab_size), dtype=dtype))
        self.full = full
        self.context = context
        self._cache = None  # (weakref to the tensor, key, context, Counts)

    def prepare(self, counts):
        """The :class:`~dirmn.Counts` that :meth:`forward` would use for ``counts``.

        A given Counts is returned as it is; a tensor's Counts comes from the
        cache when the tensor is unchanged since it was made, and replaces
        the cached one otherwise. Other inputs (arrays, sparse matrices) are
        converted afresh on every call, having no version to check.

        Parameters
        ----------
        counts : torch.Tensor or dirmn.Counts or anything Counts accepts
            rows × V; a tensor may be dense or sparse (CSR or COO).

        Returns
        -------
        dirmn.Counts

        Raises
        ------
        DirmnError
            As :class:`~dirmn.Counts`; InvalidArgumentError for counts that
            require gradients.
        """
        # Inference-mode tensors keep no version counter, so nothing could
        # tell that they changed.
        if not isinstance(counts, torch.Tensor) or counts.is_inference():
            return _as_counts(counts, self.context)
        _no_grad_counts(counts)
        key = _tensor_key(counts)
        hit = self._cache
        # The weak reference, not id(), tells it is the same tensor: an id can
        # be reused by a new tensor once the old one is gone.
        if hit is not None and hit[0]() is counts and hit[1] == key \
                and hit[2] is self.context and not hit[3].closed:
            return hit[3]
        c = _as_counts(counts, self.context)
        # The old Counts is left to the garbage collector, not closed: a graph
        # built by an earlier forward may still need it for its backward.
        self._cache = (weakref.ref(counts), key, self.context, c)
        return c

    def clear_cache(self):
        """Forgets the cached Counts (the next forward rebuilds it)."""
        self._cache = None

    def __getstate__(self):
        # A Counts holds a library handle, which cannot be copied or pickled.
        state = super().__getstate__() if hasattr(super(), "__getstate__") \
            else self.__dict__
        state = dict(state)
        state["_cache"] = None
        return state

    def forward(self, counts):
        """Per-row log-likelihood of ``counts`` (rows × V).

        Parameters
        ----------
        counts : torch.Tensor or dirmn.Counts or numpy.ndarray or sparse matrix
            A tensor's Counts is cached (see the class notes).

        Returns
        -------
        torch.Tensor
            rows values.

        Raises
        ------
        DirmnError
            As :func:`loglik`.
        """
        return loglik(self.prepare(counts), self.log_alpha, self.full, self.context)
