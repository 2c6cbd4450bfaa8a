"""The PyTorch layer against plain torch formulas, and its gradient by gradcheck."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dirmn  # noqa: E402
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


@pytest.mark.parametrize("loss", ["sum", "mean", "neg_scaled"])
def test_constant_incoming_gradient(X, loss):
    """A sum or mean over rows sends one value to every row (the unweighted
    histograms times it): the same gradient as autograd through the formula."""
    la = torch.linspace(-1, 1.5, 6, dtype=torch.float64, requires_grad=True)
    reduce = {"sum": lambda y: y.sum(), "mean": lambda y: y.mean(),
              "neg_scaled": lambda y: -2.5 * y.sum()}[loss]
    g1, = torch.autograd.grad(reduce(dt.loglik(X, la)), la)
    g2, = torch.autograd.grad(reduce(torch_kernel(X, la)), la)
    assert torch.allclose(g1, g2, rtol=1e-12, atol=1e-12)
    # A zero incoming gradient gives zero.
    g0, = torch.autograd.grad((dt.loglik(X, la) * 0.0).sum(), la)
    assert torch.all(g0 == 0)


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


# --- the module's Counts cache -------------------------------------------------

def _module(V=6):
    m = dt.DirichletMultinomial(V, dtype=torch.float64)
    with torch.no_grad():
        m.log_alpha.copy_(torch.linspace(-1, 1.5, V, dtype=torch.float64))
    return m


def test_cache_reused_for_unchanged_tensor(X):
    m = _module()
    c = m.prepare(X)
    assert m.prepare(X) is c
    first = m(X)
    assert m.prepare(X) is c  # forward neither rebuilt nor dropped it
    second = m(X)
    assert torch.equal(first, second)
    assert torch.allclose(second, torch_kernel(X, m.log_alpha.detach()), rtol=1e-12, atol=1e-12)
    # A backward through a cached Counts gives the same gradient as a fresh one.
    g1, = torch.autograd.grad(m(X).sum(), m.log_alpha)
    g2, = torch.autograd.grad(dt.loglik(X, m.log_alpha).sum(), m.log_alpha)
    assert torch.allclose(g1, g2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("edit", ["setitem", "view_mul_", "add_", "copy_"])
def test_cache_invalidated_by_in_place_edit(X, edit):
    m = _module()
    Xf = X.to(torch.float32)
    before = m(Xf).detach()
    c = m.prepare(Xf)
    if edit == "setitem":
        Xf[0, 0] = 9
    elif edit == "view_mul_":
        Xf[:, 2].mul_(3)  # through a view: the base's version counter moves too
    elif edit == "add_":
        Xf.add_(1)
    else:
        Xf.copy_(torch.flip(Xf, [0]))
    after = m(Xf).detach()
    assert m.prepare(Xf) is not c
    want = torch_kernel(Xf, m.log_alpha.detach())
    assert torch.allclose(after, want, rtol=1e-12, atol=1e-12)
    assert not torch.allclose(after, before)


def test_cache_keyed_by_identity_and_layout(X):
    m = _module()
    c = m.prepare(X)
    assert m.prepare(X.clone()) is not c           # equal values, another tensor
    Xt = X.t().contiguous().t()                     # same values, Fortran strides
    out = m(Xt).detach()
    assert torch.allclose(out, torch_kernel(X, m.log_alpha.detach()), rtol=1e-12, atol=1e-12)
    d = m.prepare(Xt)
    assert m.prepare(Xt) is d and d is not c
    m.clear_cache()
    assert m.prepare(Xt) is not d


def test_prebuilt_counts_passed_through(X, ctx):
    m = _module()
    c = dirmn.Counts(X.numpy(), context=ctx)
    assert m.prepare(c) is c
    assert torch.allclose(m(c), torch_kernel(X, m.log_alpha.detach()), rtol=1e-12, atol=1e-12)
    assert m._cache is None  # a Counts the caller manages is not cached
    c.close()
    with pytest.raises(dirmn.ClosedHandleError):
        m(c)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
def test_sparse_tensors_cached_and_invalidated(X):
    m = _module()
    S = X.to(torch.float64).to_sparse_csr()
    want = torch_kernel(X, m.log_alpha.detach())
    assert torch.allclose(m(S), want, rtol=1e-12, atol=1e-12)
    assert torch.allclose(m(X.to_sparse()), want, rtol=1e-12, atol=1e-12)   # COO
    # Uncoalesced COO with a repeated cell: the repeats add up, as torch defines.
    i = torch.tensor([[0, 0, 1], [2, 2, 0]])
    coo = torch.sparse_coo_tensor(i, torch.tensor([1.0, 2.0, 4.0]), (2, 6))
    dense = coo.to_dense()
    assert torch.allclose(dt.loglik(coo, m.log_alpha), torch_kernel(dense, m.log_alpha),
                          rtol=1e-12, atol=1e-12)
    c = m.prepare(S)
    assert m.prepare(S) is c
    S.values().mul_(2)  # shares S's version counter
    assert m.prepare(S) is not c
    assert torch.allclose(m(S), torch_kernel(2 * X, m.log_alpha.detach()), rtol=1e-12,
                          atol=1e-12)


def test_uncacheable_inputs_still_correct(X):
    import copy
    m = _module()
    with torch.inference_mode():
        Xi = X.clone()
    assert m.prepare(Xi) is not m.prepare(Xi)  # no version counter: never cached
    assert torch.allclose(m(Xi), torch_kernel(X, m.log_alpha.detach()), rtol=1e-12, atol=1e-12)
    m(X)
    m2 = copy.deepcopy(m)
    assert m2._cache is None and m._cache is not None
    assert torch.equal(m2(X), m(X))
    with pytest.raises(dirmn.InvalidArgumentError):
        m(X.double().requires_grad_())


def test_custom_ops_registered_where_torch_has_them():
    has_api = hasattr(torch, "library") and hasattr(torch.library, "custom_op")
    assert dt._CUSTOM_OP_ERROR is None
    assert dt._HAS_CUSTOM_OP == has_api


@pytest.mark.skipif(not dt._HAS_CUSTOM_OP, reason="torch.library.custom_op needs PyTorch >= 2.4")
def test_custom_op_registration_and_compile(X):
    """dirmn::loglik and its backward pass torch.library's checks (schema,
    fake tensors, autograd); a graph holding the operator compiles whole
    (fullgraph), and a Module's training step compiles, with the eager
    results."""
    c = dirmn.Counts(X.numpy())
    la = torch.linspace(-1, 1.5, 6, dtype=torch.float64, requires_grad=True)
    key = dt._key_of(c)
    for full in (False, True):
        torch.library.opcheck(torch.ops.dirmn.loglik.default, (la, key, full))

    def step(a):
        return -torch.ops.dirmn.loglik(a, key, False).sum()
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    g_eager, = torch.autograd.grad(step(la), la)
    value = compiled(la)
    g_comp, = torch.autograd.grad(value, la)
    assert torch.allclose(value, step(la), rtol=1e-14, atol=0)
    assert torch.allclose(g_comp, g_eager, rtol=1e-14, atol=0)

    m = dt.DirichletMultinomial(6, dtype=torch.float64)
    Xf = X.double()
    train = torch.compile(lambda: -m(Xf).sum(), backend="aot_eager")
    loss = train()
    loss.backward()
    g_mod = m.log_alpha.grad.clone()
    m.log_alpha.grad = None
    (-m(Xf).sum()).backward()
    assert torch.allclose(g_mod, m.log_alpha.grad, rtol=1e-14, atol=0)

    # A table that is gone is named, not crashed on.
    gone = dirmn.Counts(X.numpy())
    gone_key = dt._key_of(gone)
    del gone
    import gc
    gc.collect()
    with pytest.raises(dirmn.InvalidArgumentError, match="table of this graph was freed"):
        torch.ops.dirmn.loglik(la.detach(), gone_key, False)
