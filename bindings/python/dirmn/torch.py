"""A PyTorch layer over dirmn's CPU computations (optional: needs torch).

:func:`loglik` is differentiable in log alpha: the forward pass is
``dirmn_loglik`` and the backward pass the gradient of ``dirmn_loglik_sum``
with the incoming gradient as row weights. The library takes only
non-negative weights, so the gradient is the difference of two weighted
sums: one over the positive and one over the negative parts.

>>> import torch, dirmn.torch
>>> model = dirmn.torch.DirichletMultinomial(vocab_size=1000)
>>> nll = -model(counts).sum()          # counts: documents x 1000
>>> nll.backward()
"""

import numpy as np
import torch

from .loglik import loglik as _dm_loglik, loglik_sum as _dm_loglik_sum
from .counts import Counts
from .errors import InvalidArgumentError, invalid


def _as_counts(counts, context):
    if isinstance(counts, Counts):
        return counts
    if isinstance(counts, torch.Tensor):
        if counts.requires_grad:
            raise invalid(InvalidArgumentError, "dirmn.torch: counts must not require "
                          "gradients", argument="data")
        counts = counts.detach().cpu().numpy()  # a view for CPU tensors, no copy
    return Counts(counts, context=context, real_valued=True)


class _Loglik(torch.autograd.Function):
    @staticmethod
    def forward(fctx, log_alpha, counts, full):
        a = log_alpha.detach().to(torch.float64).cpu().numpy()
        out = _dm_loglik(counts, a, full=full, param="logalpha")
        fctx.counts, fctx.a = counts, a
        return torch.from_numpy(out).to(dtype=log_alpha.dtype, device=log_alpha.device)

    @staticmethod
    def backward(fctx, grad_out):
        g = grad_out.detach().to(torch.float64).cpu().numpy()
        grad = np.zeros_like(fctx.a)
        for sign, w in ((1.0, np.clip(g, 0, None)), (-1.0, np.clip(-g, 0, None))):
            if np.any(w > 0):
                s = _dm_loglik_sum(fctx.counts, fctx.a, weights=w, param="logalpha",
                                       full=False, derivatives=True)
                grad += sign * s.gradient
        return torch.from_numpy(grad).to(dtype=grad_out.dtype, device=grad_out.device), \
            None, None


def loglik(counts, log_alpha, full=False, context=None):
    """Per-row DM log-likelihood, differentiable in ``log_alpha``.

    Parameters
    ----------
    counts : torch.Tensor or numpy.ndarray or dirmn.Counts
        rows × V counts (no gradient flows to them).
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
    """
    return _Loglik.apply(log_alpha, _as_counts(counts, context), bool(full))


class DirichletMultinomial(torch.nn.Module):
    """A DM over ``vocab_size`` categories with a learnable ``log_alpha``.

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

    def forward(self, counts):
        """Per-row log-likelihood of ``counts`` (rows × V).

        Returns
        -------
        torch.Tensor
            rows values.

        Raises
        ------
        DirmnError
            As :func:`loglik`.
        """
        return loglik(counts, self.log_alpha, self.full, self.context)
