"""The CUDA backend, where a device exists (skipped otherwise)."""

import numpy as np
import pytest

import dirmn

pytestmark = pytest.mark.skipif(
    not dirmn.backend_compiled("cuda") or dirmn.cuda_device_count() == 0,
    reason="no CUDA backend or no CUDA device")


def test_cuda_agrees_with_cpu():
    X = np.random.default_rng(5).poisson(3.0, size=(500, 20))
    alpha = np.linspace(0.1, 3, 20)
    with dirmn.Context("cuda") as g, dirmn.Context("cpu") as c:
        assert g.backend == "cuda"
        assert np.allclose(dirmn.loglik(X, alpha, context=g), dirmn.loglik(X, alpha, context=c),
                           rtol=1e-9)
        assert np.allclose(dirmn.fit(X, context=g).alpha, dirmn.fit(X, context=c).alpha,
                           rtol=1e-8)


def _cuda_torch():
    """dirmn.torch where PyTorch has CUDA (the case is skipped otherwise)."""
    global torch
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    import dirmn.torch as dt
    return dt


@pytest.mark.parametrize("sparse", [False, True])
def test_torch_layer_stays_on_the_device(sparse):
    """Forward and backward on CUDA tensors: the device-pointer calls give
    what the host path gives for the same table and parameters."""
    dt = _cuda_torch()
    rng = np.random.default_rng(8)
    X = rng.poisson(2.0, size=(400, 30)) * (rng.random((400, 30)) < 0.4)
    la = torch.tensor(rng.normal(size=30), dtype=torch.float64)
    g_out = torch.tensor(rng.normal(size=400), dtype=torch.float64)  # both signs
    with dirmn.Context("cuda") as gctx, dirmn.Context("cpu") as cctx:
        Xt = torch.tensor(X, dtype=torch.float32)
        if sparse:
            Xt = Xt.to_sparse_csr()
        dev = dirmn.Counts(dt._tensor_table(Xt), context=gctx, real_valued=True)
        host = dirmn.Counts(X, context=cctx)
        a_dev = la.cuda().requires_grad_()
        a_host = la.clone().requires_grad_()
        y_dev = dt.loglik(dev, a_dev, full=True)
        y_host = dt.loglik(host, a_host, full=True)
        assert y_dev.is_cuda
        assert torch.allclose(y_dev.cpu(), y_host, rtol=1e-12, atol=1e-9)
        (y_dev * g_out.cuda()).sum().backward()
        (y_host * g_out).sum().backward()
        assert a_dev.grad.is_cuda
        assert torch.allclose(a_dev.grad.cpu(), a_host.grad, rtol=1e-10, atol=1e-9)


def test_torch_module_on_cuda_gradcheck_and_errors():
    dt = _cuda_torch()
    # The library cannot see a device array's length: the layer checks it.
    with dirmn.Context("cuda") as g:
        c = dirmn.Counts(np.ones((4, 3)), context=g)
        with pytest.raises(dirmn.DimensionMismatchError):
            dt.loglik(c, torch.zeros(2, dtype=torch.float64, device="cuda"))
    rng = np.random.default_rng(9)
    X = torch.tensor(rng.poisson(1.5, size=(60, 8)), dtype=torch.float64, device="cuda")
    with dirmn.Context("cuda") as gctx:
        m = dt.DirichletMultinomial(8, dtype=torch.float64, context=gctx).cuda()
        c = m.prepare(X)
        assert c.context.backend == "cuda"
        la = torch.tensor(rng.normal(size=8), dtype=torch.float64, device="cuda",
                          requires_grad=True)
        assert torch.autograd.gradcheck(lambda a: dt.loglik(c, a), (la,), eps=1e-6, atol=1e-5)
        # A non-finite log alpha on the device is named as on the host.
        bad = la.detach().clone()
        bad[3] = float("nan")
        with pytest.raises(dirmn.InvalidParameterError) as e:
            dt.loglik(c, bad)
        assert e.value.index == 3
        # The training step runs on the device, on a side stream too.
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            loss = -m(X).sum()
            loss.backward()
        torch.cuda.synchronize()
        assert m.log_alpha.grad.is_cuda and torch.isfinite(m.log_alpha.grad).all()


def test_regression_on_cuda_agrees_with_cpu():
    """dirmn.regression on a CUDA context (the device's per-row derivatives)
    reaches the CPU's maximum."""
    rng = np.random.default_rng(12)
    n, V = 300, 6
    D = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, size=n)])
    B = rng.normal(scale=0.4, size=(3, V))
    A = np.exp(D @ B)
    Y = np.array([rng.multinomial(40, rng.dirichlet(a)) for a in A])
    with dirmn.Context("cuda") as g, dirmn.Context("cpu") as c:
        rg = dirmn.regression(Y, D, tolerance=1e-14, context=g)
        rc = dirmn.regression(Y, D, tolerance=1e-14, context=c)
        assert rg.converged and rc.converged
        assert abs(rg.llf - rc.llf) <= 1e-10 * abs(rc.llf)
        assert np.allclose(rg.params, rc.params, rtol=1e-7, atol=1e-8)
        assert np.allclose(rg.bse, rc.bse, rtol=1e-7)
        assert np.allclose(rg.predict(D[:5]), rc.predict(D[:5]), rtol=1e-7)
