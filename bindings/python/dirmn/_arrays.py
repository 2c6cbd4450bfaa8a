"""Turning caller arrays into what the C API takes, without copies where possible.

The library reads int32, int64, float32 and float64 tables with any positive
strides in elements, so NumPy arrays of those types in C or Fortran order
(or sliced views of them) pass as they are. Other dtypes are converted (a
copy, the narrowest type the library reads that holds them exactly), and
layouts the strides cannot express (negative, zero or misaligned strides)
are copied to C order.
"""

import numpy as np

from . import _capi as C
from .errors import InvalidArgumentError, InvalidCountsError, invalid

_DTYPES = {np.dtype(np.int32): C.DIRMN_INT32, np.dtype(np.int64): C.DIRMN_INT64,
           np.dtype(np.float32): C.DIRMN_FLOAT32, np.dtype(np.float64): C.DIRMN_FLOAT64}

# Converted losslessly to a type the library reads.
_WIDEN = {np.dtype(np.int8): np.int32, np.dtype(np.int16): np.int32,
          np.dtype(np.uint8): np.int32, np.dtype(np.uint16): np.int32,
          np.dtype(np.uint32): np.int64, np.dtype(np.bool_): np.int32,
          np.dtype(np.float16): np.float32}

_INT64_MAX = np.iinfo(np.int64).max


def _uint64_as_int64(a, what):
    """A uint64 array viewed as int64, after checking no value passes int64."""
    big = a > _INT64_MAX
    if np.any(big):
        pos = np.argwhere(big)[0]
        where = dict(argument=what, value=int(a[tuple(pos)]))
        if a.ndim == 2:
            where.update(row=int(pos[0]), column=int(pos[1]))
            text = "row %d, column %d (0-based)" % (pos[0], pos[1])
        else:
            where.update(index=int(pos[0]))
            text = "entry %d (0-based)" % pos[0]
        raise invalid(InvalidCountsError, "dirmn: %s: count %d is too large (counts must be "
                      "below 2^53)" % (text, where["value"]), **where)
    return a.view(np.int64)


def count_values(a, what="data"):
    """``a`` with a dtype the library reads, and that dtype's code.

    Parameters
    ----------
    a : numpy.ndarray
    what : str
        The argument's name, for messages.

    Returns
    -------
    tuple of (numpy.ndarray, int)

    Raises
    ------
    InvalidArgumentError
        For dtypes that are not numbers (complex, object, strings, dates).
    InvalidCountsError
        For uint64 values beyond int64.
    """
    dt = a.dtype
    if dt in _DTYPES:
        return a, _DTYPES[dt]
    if dt == np.dtype(np.uint64):
        return _uint64_as_int64(a, what), C.DIRMN_INT64
    if dt in _WIDEN:
        b = a.astype(_WIDEN[dt])
        return b, _DTYPES[b.dtype]
    raise invalid(InvalidArgumentError,
                  "dirmn: counts of dtype %s are not supported: give integers or floats" % dt,
                  argument=what)


def element_strides(a):
    """``a``'s strides in elements, or None where they cannot be given so.

    A dimension of extent 1 gets stride 1 (the library ignores it); strides
    must otherwise be positive multiples of the item size.

    Parameters
    ----------
    a : numpy.ndarray

    Returns
    -------
    tuple of int or None
    """
    if a.size == 0:
        return (1,) * a.ndim  # nothing is read; the library refuses empty tables itself
    out = []
    for extent, s in zip(a.shape, a.strides):
        if extent <= 1:
            out.append(1)
        elif s <= 0 or s % a.itemsize:
            return None
        else:
            out.append(s // a.itemsize)
    return tuple(out)


def dense_table(data):
    """A 2-D count table as ``(array, dtype code, row stride, col stride)``.

    One-dimensional input is one row. The array is the caller's own memory
    where its dtype and strides allow (nothing is copied then).

    Parameters
    ----------
    data : array_like

    Returns
    -------
    tuple

    Raises
    ------
    InvalidArgumentError
        For input that is not 1- or 2-dimensional, or not numeric.
    """
    a = np.asarray(data)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise invalid(InvalidArgumentError, "dirmn: counts must be a 1- or 2-dimensional "
                      "array, not %d-dimensional" % a.ndim, argument="data")
    a, code = count_values(a)
    strides = element_strides(a)
    if strides is None:
        a = np.ascontiguousarray(a)
        strides = element_strides(a)
    return a, code, strides[0], strides[1]


def _float64_of(x, what, ndim, convert, kind):
    """``convert(x, dtype=float64)`` of ``ndim`` dimensions, or the error
    that names ``what`` (as ``kind`` of numbers, or by its shape)."""
    try:
        a = convert(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid(InvalidArgumentError, "dirmn: %s must be %s of numbers" % (what, kind),
                      argument=what) from None
    if a.ndim != ndim:
        raise invalid(InvalidArgumentError, "dirmn: %s must be %d-dimensional, not of shape %s"
                      % (what, ndim, a.shape), argument=what)
    return a


def float64_vector(x, what, length=None):
    """A parameter or weight vector as contiguous float64 (a copy only if needed).

    Parameters
    ----------
    x : array_like
    what : str
        The argument's name, for messages.
    length : int, optional
        The length required.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InvalidArgumentError
        Not a 1-D numeric vector.
    DimensionMismatchError
        Of the wrong length.
    """
    from .errors import DimensionMismatchError
    v = _float64_of(x, what, 1, np.ascontiguousarray, "a vector")
    if length is not None and v.shape[0] != length:
        raise invalid(DimensionMismatchError, "dirmn: %s has %d entries but the table has %d "
                      "%s" % (what, v.shape[0], length,
                              "rows" if what == "weights" else "columns"), argument=what)
    return v


def _float64_strided(x, what, ndim, noun):
    """An ndim-D float64 array and its strides in elements: the caller's
    memory where dtype and strides allow, else a contiguous copy."""
    a = _float64_of(x, what, ndim, np.asarray, noun)
    s = element_strides(a)
    if s is None:
        a = np.ascontiguousarray(a)
        s = element_strides(a)
    return a, s


def float64_strided_vector(x, what):
    """A 1-D float64 vector and its stride in elements: the caller's memory
    where dtype and stride allow, else a contiguous copy.

    Raises
    ------
    InvalidArgumentError
        Not a 1-D numeric vector.
    """
    v, s = _float64_strided(x, what, 1, "a vector")
    return v, s[0]


def float64_matrix(x, what):
    """A 2-D float64 array with its strides in elements (a copy only if needed).

    Returns
    -------
    tuple of (numpy.ndarray, int, int)

    Raises
    ------
    InvalidArgumentError
        Not a 2-D numeric array.
    """
    m, s = _float64_strided(x, what, 2, "an array")
    return m, s[0], s[1]
