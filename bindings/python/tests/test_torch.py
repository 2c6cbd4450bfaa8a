"""The PyTorch layer against plain torch formulas, and its gradient by gradcheck."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dirmn.torch as dt  # noqa: E402


def torch_kernel(X, log_alpha, full=False):
    a = log_alpha.exp()
    X = X.to(a.dtype)
    N, A = X.sum(1), a.sum()
    out = torch.lgamma(A) - torch.lgamma(N + A) + (torch.lgamma(X + a) - torch.lgamma(a)).sum(1)
    if full:
        out = out + torch.lgamma(N + 1) - torch.lgamma(X + 1).sum(1)
    return torch.where(N > 0, out, torch.zeros_like(out))


@pytest.fixture
def X():
    g = np.random.default_rng(7)
    x = g.poisson(1.5, size=(12, 6))
    x[3] = 0
    return torch.from_numpy(x)


@pytest.mark.parametrize("full", [False, True])
def test_forward_matches_torch(X, full):
    la = torch.linspace(-1, 1.5, 6, dtype=torch.float64)
    got = dt.loglik(X, la, full=full)
    assert torch.allclose(got, torch_kernel(X, la, full), rtol=1e-12, atol=1e-12)


def test_gradcheck(X):
    la = torch.linspace(-1, 1.5, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: dt.loglik(X, a), (la,), eps=1e-6, atol=1e-6)
    # Mixed-sign incoming gradients, against autograd through the torch formula.
    w = torch.randn(12, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    g1, = torch.autograd.grad((dt.loglik(X, la) * w).sum(), la)
    g2, = torch.autograd.grad((torch_kernel(X, la) * w).sum(), la)
    assert torch.allclose(g1, g2, rtol=1e-10, atol=1e-10)


def test_module_trains(X):
    m = dt.DirichletMultinomial(6)
    assert m.log_alpha.dtype == torch.float32 and torch.all(m.log_alpha == 0)
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    first = None
    for _ in range(50):
        opt.zero_grad()
        nll = -m(X).sum()
        nll.backward()
        opt.step()
        first = first if first is not None else nll.item()
    assert nll.item() < first
    out = m(X.float())
    assert out.dtype == torch.float32 and out.shape == (12,)
