"""Bad input raises the right DirmnError subclass, with the library's message
and 0-based positions, and never prints."""

import numpy as np
import pytest

import dirmn
from dirmn.errors import STATUS_CLASSES, DirmnError


def test_hierarchy():
    assert issubclass(dirmn.InvalidCountsError, ValueError)
    assert issubclass(dirmn.InvalidParameterError, ValueError)
    assert issubclass(dirmn.DimensionMismatchError, dirmn.InvalidArgumentError)
    assert issubclass(dirmn.OutOfMemoryError, MemoryError)
    assert issubclass(dirmn.DeviceError, dirmn.BackendError)
    assert issubclass(dirmn.DirmnLibraryNotFound, ImportError)
    from dirmn import _capi
    for name in _capi.ENUMS["dirmn_status"]:
        if name != "DIRMN_SUCCESS":
            assert issubclass(STATUS_CLASSES[name], DirmnError), name


def _raises(cls, f, *a, **k):
    with pytest.raises(cls) as info:
        f(*a, **k)
    e = info.value
    assert type(e) is cls and e.message and e.status.startswith("DIRMN_ERROR_")
    return e


@pytest.mark.parametrize("order", ["C", "F"])
def test_negative_count_position(ctx, order, capsys):
    X = np.array([[1, 2, 3], [4, 5, -2], [7, 8, 9]], order=order)
    e = _raises(dirmn.InvalidCountsError, dirmn.loglik, X, [1, 1, 1], context=ctx)
    assert (e.row, e.column, e.value, e.argument) == (1, 2, -2, "data")
    assert e.status == "DIRMN_ERROR_INVALID_COUNTS" and "row 1, column 2" in e.message
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("bad,row,col", [(np.nan, 0, 1), (np.inf, 2, 0), (0.5, 1, 1)])
def test_bad_float_counts(ctx, bad, row, col):
    X = np.ones((3, 2))
    X[row, col] = bad
    e = _raises(dirmn.InvalidCountsError, dirmn.fit, X, context=ctx)
    assert (e.row, e.column) == (row, col)


def test_sparse_bad_count_and_structure(ctx):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.csc_matrix(np.array([[1, 0, 3], [0, 5, 0]]))
    m.data[2] = -7                                   # column 2, row 0
    e = _raises(dirmn.InvalidCountsError, dirmn.Counts, m, context=ctx)
    assert (e.row, e.column, e.value) == (0, 2, -7)
    m = sp.csr_matrix(np.array([[1, 0, 3], [0, 5, 0]]))
    m.indices[1] = 7                                 # a column out of range
    e = _raises(dirmn.InvalidArgumentError, dirmn.Counts, m, context=ctx)
    assert e.argument == "indices" and e.index == 1 and e.row == 0


def test_uint64_too_large(ctx):
    X = np.array([[1, 2], [3, 2**63 + 5]], dtype=np.uint64)
    e = _raises(dirmn.InvalidCountsError, dirmn.Counts, X, context=ctx)
    assert (e.row, e.column, e.value) == (1, 1, 2**63 + 5)


@pytest.mark.parametrize("alpha,index", [([1, -1, 1], 1), ([1, 1, np.nan], 2), ([0, 1, 1], 0),
                                         ([np.inf, 1, 1], 0)])
def test_bad_alpha(ctx, alpha, index):
    e = _raises(dirmn.InvalidParameterError, dirmn.loglik, [[1, 2, 3]], alpha, context=ctx)
    assert (e.vector, e.index, e.row, e.column) == (0, index, None, None)


def test_bad_alpha_k_and_rowwise(ctx):
    A = np.ones((3, 2))
    A[2, 1] = -3
    e = _raises(dirmn.InvalidParameterError, dirmn.loglik, [[1, 2]], A, context=ctx)
    assert (e.vector, e.index) == (2, 1)
    e = _raises(dirmn.InvalidParameterError, dirmn.loglik, np.ones((3, 2)), A, rowwise=True,
                context=ctx)
    assert (e.row, e.index) == (2, 1)


def test_shapes(ctx):
    _raises(dirmn.DimensionMismatchError, dirmn.loglik, [[1, 2, 3]], [1, 1], context=ctx)
    _raises(dirmn.DimensionMismatchError, dirmn.loglik, [[1, 2, 3]], np.ones((2, 2)),
            context=ctx)
    _raises(dirmn.DimensionMismatchError, dirmn.loglik, [[1, 2, 3]], np.ones((2, 3)),
            rowwise=True, context=ctx)
    _raises(dirmn.DimensionMismatchError, dirmn.fit, [[1, 2, 3], [1, 1, 1]], weights=[1],
            context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.loglik, np.ones((2, 2, 2)), [1, 1], context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.Counts, np.zeros((0, 3)), context=ctx)


def test_wrong_dtype(ctx):
    e = _raises(dirmn.InvalidArgumentError, dirmn.Counts, np.array([["a", "b"]]), context=ctx)
    assert "dtype" in e.message
    _raises(dirmn.InvalidArgumentError, dirmn.Counts, np.ones((2, 2), dtype=complex),
            context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.loglik, [[1, 2]], ["x", "y"], context=ctx)


def test_weights_start_options(ctx):
    X = [[1, 2, 3], [3, 2, 1], [0, 4, 1]]
    e = _raises(dirmn.InvalidParameterError, dirmn.fit, X, weights=[1, -1, 1], context=ctx)
    assert e.row == 1 and e.argument == "weights"
    e = _raises(dirmn.InvalidParameterError, dirmn.fit, X, start=[1, 0, 1], context=ctx)
    assert e.index == 1 and e.argument == "start"
    _raises(dirmn.InvalidArgumentError, dirmn.fit, X, max_iterations=-1, context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.fit, X, max_iterations=2**40, context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.fit, np.zeros((2, 2)), context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.mixture, X, 0, context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.mixture, X, 4, context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.mixture, X, 1, init="bogus", context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.mixture, X, 1, seed=-1, context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.loglik, X, [1, 1, 1], param="log", context=ctx)
    _raises(dirmn.InvalidArgumentError, dirmn.overdispersion_test, X, method="x", context=ctx)
    m = dirmn.mixture(X, 1, context=ctx)
    _raises(dirmn.DimensionMismatchError, m.assign, [[1, 2]])


def test_backends_and_context_errors():
    _raises(dirmn.InvalidArgumentError, dirmn.Context, "tpu")
    _raises(dirmn.InvalidArgumentError, dirmn.Context, "cpu", device=-1)
    if dirmn.cuda_device_count() == 0:
        e = _raises(dirmn.BackendUnavailableError, dirmn.Context, "cuda")
        assert e.status == "DIRMN_ERROR_BACKEND_UNAVAILABLE"
    with dirmn.Context("cpu", threads=1) as c:
        assert c.threads == 1 and c.backend == "cpu" and c.device == 0
        _raises(dirmn.InvalidArgumentError, setattr, c, "threads", -1)
        _raises(dirmn.InvalidArgumentError, setattr, c, "precision", "half")


def test_wrong_context():
    with dirmn.Context("cpu") as a, dirmn.Context("cpu") as b:
        c = dirmn.Counts([[1, 2]], context=a)
        e = _raises(dirmn.WrongContextError, dirmn.loglik, c, [1, 1], context=b)
        assert e.status == "DIRMN_ERROR_WRONG_CONTEXT"
        c.close()
