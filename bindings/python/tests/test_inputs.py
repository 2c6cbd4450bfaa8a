"""Every input form gives the same table: dtypes, strides (read in place, no
copy), scipy.sparse CSR and CSC, AnnData- and DataFrame-like objects."""

import numpy as np
import pytest

import dirmn
from dirmn import _capi

ALPHA = [0.7, 2.5, 1.0, 0.05, 3.0]


@pytest.fixture
def table(rng):
    X = rng.poisson(2.0, size=(7, 5))
    X[2] = 0
    X[:, 3] = 0
    X[4, 1] = 40
    return X


@pytest.fixture
def spy(monkeypatch):
    """Records the data pointer and strides each dense table is created from."""
    calls = []
    real = _capi.dirmn_counts_create_dense

    def wrapper(ctx, out, rows, cols, dtype, data, rs, cs, opts):
        calls.append(dict(data=data, rows=rows, cols=cols, dtype=dtype, rs=rs, cs=cs))
        return real(ctx, out, rows, cols, dtype, data, rs, cs, opts)

    monkeypatch.setattr(_capi, "dirmn_counts_create_dense", wrapper)
    return calls


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float16", "float32", "float64", "bool"])
def test_dtypes(table, ctx, dtype):
    X = np.minimum(table, 1) if dtype == "bool" else table
    want = dirmn.loglik(X.astype(np.int64), ALPHA, context=ctx)
    assert np.array_equal(dirmn.loglik(X.astype(dtype), ALPHA, context=ctx), want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_no_copy_for_c_and_fortran(table, ctx, spy, dtype, order):
    X = np.array(table, dtype=dtype, order=order)
    got = dirmn.loglik(X, ALPHA, context=ctx)
    assert np.array_equal(got, dirmn.loglik(table, ALPHA, context=ctx))
    call = spy[0]
    assert call["data"] == X.ctypes.data          # the caller's memory itself
    assert (call["rs"], call["cs"]) == (X.strides[0] // X.itemsize, X.strides[1] // X.itemsize)


def test_no_copy_for_strided_views(table, ctx, spy, monkeypatch):
    copies = []
    real = np.ascontiguousarray
    big = np.zeros((21, 17), dtype=np.int64)

    def counting(a, *args, **kw):
        if isinstance(a, np.ndarray) and np.shares_memory(a, big):
            copies.append(a)
        return real(a, *args, **kw)

    monkeypatch.setattr(np, "ascontiguousarray", counting)
    big[::3, 1:16:3] = table
    view = big[::3, 1:16:3]
    assert np.shares_memory(view, big)
    got = dirmn.loglik(view, ALPHA, context=ctx)
    assert spy[0]["data"] == view.ctypes.data and (spy[0]["rs"], spy[0]["cs"]) == (51, 3)
    assert not copies                             # the table was not copied
    monkeypatch.undo()
    assert np.array_equal(got, dirmn.loglik(table, ALPHA, context=ctx))
    # Transposed views of a table are tables too.
    T = np.ascontiguousarray(table.T)
    assert np.array_equal(dirmn.loglik(T.T, ALPHA, context=ctx), got)


def test_negative_strides_are_copied(table, ctx):
    rev = table[::-1, ::-1]
    got = dirmn.loglik(rev, ALPHA[::-1], context=ctx)
    assert np.array_equal(got, dirmn.loglik(np.ascontiguousarray(rev), ALPHA[::-1],
                                            context=ctx))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("index", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float64", "uint8"])
def test_sparse_equals_dense(table, ctx, fmt, index, dtype):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.csr_matrix(table.astype(dtype)).asformat(fmt)
    if fmt != "coo":
        m.indptr = m.indptr.astype(index)
        m.indices = m.indices.astype(index)
    want = dirmn.loglik(table, ALPHA, context=ctx)
    assert np.allclose(dirmn.loglik(m, ALPHA, context=ctx), want, rtol=1e-13, atol=0)
    f1, f2 = dirmn.fit(m, context=ctx), dirmn.fit(table, context=ctx)
    assert np.allclose(f1.alpha, f2.alpha, rtol=1e-10) and abs(f1.loglik - f2.loglik) < 1e-9


def test_sparse_arrays_and_explicit_zeros(table, ctx):
    sp = pytest.importorskip("scipy.sparse")
    if not hasattr(sp, "csr_array"):
        pytest.skip("scipy without sparse arrays")
    m = sp.csr_array(table)
    m.data[0] = 0                                   # an explicit zero is allowed
    dense = m.toarray()
    assert np.array_equal(dirmn.loglik(m, ALPHA, context=ctx),
                          dirmn.loglik(dense, ALPHA, context=ctx))


class AnnDataLike:
    """What the package uses of anndata.AnnData."""

    def __init__(self, X, obs_names, var_names):
        self.X, self.obs_names, self.var_names = X, obs_names, var_names


def test_anndata_like(table, ctx):
    sp = pytest.importorskip("scipy.sparse")
    obs = ["cell%d" % i for i in range(7)]
    var = ["g%d" % j for j in range(5)]
    for X in (table, sp.csr_matrix(table)):
        with dirmn.Counts(AnnDataLike(X, obs, var), context=ctx) as c:
            assert c.row_names == obs and c.column_names == var and c.shape == (7, 5)
            f = dirmn.fit(c)
            assert f.column_names == var
            m = dirmn.mixture(c, 1)
            assert m.row_names == obs and m.column_names == var
    with pytest.raises(dirmn.DimensionMismatchError):
        dirmn.Counts(AnnDataLike(table, obs[:3], var), context=ctx)


def test_counts_object_reuse_and_info(table, ctx):
    with dirmn.Counts(table, context=ctx, storage="sparse") as c:
        info = c.info()
        assert info["storage"] == "sparse" and info["rows"] == 7 and info["cols"] == 5
        assert info["total"] == table.sum() and info["backend"] == "cpu"
        assert np.array_equal(c.row_totals(), table.sum(1))
        a = dirmn.loglik(c, ALPHA)
        assert np.array_equal(a, dirmn.loglik(table, ALPHA, context=ctx))
    assert c.closed


def test_lists_and_one_row(ctx):
    assert dirmn.loglik([[1, 2], [3, 4]], [1, 1], context=ctx).shape == (2,)
    assert dirmn.loglik([1, 2], [1, 1], context=ctx).shape == (1,)
    assert isinstance(dirmn.logpmf([1, 2], [1, 1]), float)
