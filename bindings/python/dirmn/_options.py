"""Options structs filled field by field from keyword arguments."""

import ctypes

import numpy as np

from . import _capi as C
from .errors import InvalidArgumentError, invalid

_INT_MAX = 2**31 - 1


def c_int_arg(value, what):
    """``value`` as a C int, or an InvalidArgumentError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(InvalidArgumentError, "dirmn: %s must be an integer, not %r"
                      % (what, value), argument=what)
    if not -_INT_MAX - 1 <= int(value) <= _INT_MAX:
        raise invalid(InvalidArgumentError, "dirmn: %s = %d does not fit a C int"
                      % (what, value), argument=what)
    return int(value)


def float_arg(value, what):
    """``value`` as a float, or an InvalidArgumentError naming ``what``."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise invalid(InvalidArgumentError, "dirmn: %s must be a number, not %r"
                      % (what, value), argument=what) from None


def fit_options(tolerance=None, max_iterations=None, weights=None, start=None,
                hessian_diag=None):
    """A ``dirmn_fit_options`` with the library's defaults and the given fields.

    Arrays must be contiguous float64 and kept alive by the caller for the
    call.

    Returns
    -------
    dirmn_fit_options
    """
    o = C.new(C.dirmn_fit_options)
    C.dirmn_fit_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    if tolerance is not None:
        o.tolerance = float_arg(tolerance, "tolerance")
    if max_iterations is not None:
        o.max_iterations = c_int_arg(max_iterations, "max_iterations")
    for name, arr in (("weights", weights), ("start", start), ("hessian_diag", hessian_diag)):
        if arr is not None:
            setattr(o, name, arr.ctypes.data_as(C._pd))
    return o


def reg_options(tolerance=None, max_iterations=None, weights=None, model=None, contrast=None,
                reference=None, hold_precision=None, precision_design=None):
    """A ``dirmn_reg_options`` with the library's defaults and the given fields.

    ``weights`` must be contiguous float64 and kept alive by the caller for
    the call; the progress callback is set by the caller. ``model``,
    ``contrast`` (the C enums' values) and ``reference`` (0-based) are
    checked by the caller; ``hold_precision`` (``dirmn_reg_test_groups``) is
    a bool. ``precision_design`` is ``(z, row stride, col stride)``: a 2-D
    float64 array (kept alive by the caller; its rows checked by the
    caller against the design's, which the library takes for both) and
    its strides in elements.

    Returns
    -------
    dirmn_reg_options
    """
    o = C.new(C.dirmn_reg_options)
    C.dirmn_reg_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    if tolerance is not None:
        o.tolerance = float_arg(tolerance, "tolerance")
    if max_iterations is not None:
        o.max_iterations = c_int_arg(max_iterations, "max_iterations")
    if weights is not None:
        o.weights = weights.ctypes.data_as(C._pd)
    if model is not None:
        o.model = model
    if contrast is not None:
        o.contrast = contrast
    if reference is not None:
        o.reference = reference
    if hold_precision is not None:
        o.hold_precision = 1 if hold_precision else 0
    if precision_design is not None:
        z, rs, cs = precision_design
        o.precision_design = z.ctypes.data_as(C._pd)
        o.precision_covariates = z.shape[1]
        o.precision_stride_row, o.precision_stride_col = rs, cs
    return o
