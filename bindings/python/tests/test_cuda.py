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
