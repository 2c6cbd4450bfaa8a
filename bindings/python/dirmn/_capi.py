"""One-to-one ctypes layer over ``dirmn.h``.

Every ``DIRMN_API`` function is bound under its C name with its C argument
list (table :data:`FUNCTIONS`), every enum constant and literal ``#define``
is a module constant, and every struct is a :class:`ctypes.Structure` with
the header's field order and types. Handles (``dirmn_context*`` ...) are
opaque ``c_void_p``. Nothing here checks arguments or converts errors: a
call returns the C ``dirmn_status`` as an ``int``. ``tests/test_header.py``
compares all of it with the header file itself.
"""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint, c_uint32, c_uint64, c_void_p)

from ._lib import DirmnLibraryNotFound, load_library

# --- #defines -----------------------------------------------------------------

DIRMN_VERSION_MAJOR = 0
DIRMN_VERSION_MINOR = 3
DIRMN_VERSION_PATCH = 0
DIRMN_VERSION_NUMBER = DIRMN_VERSION_MAJOR * 10000 + DIRMN_VERSION_MINOR * 100 + DIRMN_VERSION_PATCH
DIRMN_COUNTS_REAL_VALUED = 0x1
DIRMN_COUNTS_ONE_BASED = 0x2
DIRMN_STEP_LOGLIK = 0x01
DIRMN_STEP_LOGLIK_ROWWISE = 0x02
DIRMN_STEP_DERIVATIVES_ROWWISE = 0x04
DIRMN_STEP_HISTOGRAMS = 0x08
DIRMN_STEP_MIXTURE_EM = 0x10
DIRMN_STEP_MIXTURE_FITS = 0x20
DIRMN_STEPS_ALL = 0x3F
DIRMN_FULL = 0x1
DIRMN_OUTPUT_DEVICE = 0x2
DIRMN_ASYNC = 0x4
DIRMN_KERNEL = 0x8
DIRMN_PARAMS_DEVICE = 0x10
DIRMN_WEIGHTS_DEVICE = 0x20
DIRMN_REG_MAX_SYSTEM = 8000

# --- enums (all int-sized: the header fixes their underlying type to int) ------

ENUMS = {
    "dirmn_status": {
        "DIRMN_SUCCESS": 0, "DIRMN_ERROR_NULL_POINTER": 1, "DIRMN_ERROR_INVALID_ARGUMENT": 2,
        "DIRMN_ERROR_INVALID_COUNTS": 3, "DIRMN_ERROR_INVALID_PARAMETER": 4,
        "DIRMN_ERROR_DIMENSION_MISMATCH": 5, "DIRMN_ERROR_WRONG_CONTEXT": 6,
        "DIRMN_ERROR_OUT_OF_MEMORY": 7, "DIRMN_ERROR_BACKEND_UNAVAILABLE": 8,
        "DIRMN_ERROR_DEVICE": 9, "DIRMN_ERROR_OVERFLOW": 10, "DIRMN_ERROR_CANCELLED": 11,
        "DIRMN_ERROR_NOT_SUPPORTED": 12, "DIRMN_ERROR_CONTEXT_IN_USE": 13,
        "DIRMN_ERROR_COMMUNICATION": 14, "DIRMN_ERROR_INTERNAL": 99,
    },
    "dirmn_backend": {"DIRMN_BACKEND_AUTO": 0, "DIRMN_BACKEND_CPU": 1, "DIRMN_BACKEND_CUDA": 2},
    "dirmn_precision": {"DIRMN_PRECISION_DOUBLE": 0, "DIRMN_PRECISION_FAST": 1},
    "dirmn_dtype": {"DIRMN_INT32": 0, "DIRMN_INT64": 1, "DIRMN_FLOAT32": 2, "DIRMN_FLOAT64": 3},
    "dirmn_index_type": {"DIRMN_INDEX_INT32": 0, "DIRMN_INDEX_INT64": 1},
    "dirmn_sparse_format": {"DIRMN_CSR": 0, "DIRMN_CSC": 1},
    "dirmn_storage": {"DIRMN_STORAGE_AUTO": 0, "DIRMN_STORAGE_DENSE": 1,
                      "DIRMN_STORAGE_SPARSE": 2},
    "dirmn_param": {"DIRMN_PARAM_ALPHA": 0, "DIRMN_PARAM_LOG_ALPHA": 1},
    "dirmn_mixture_objective": {"DIRMN_MIXTURE_ML": 0, "DIRMN_MIXTURE_DMN": 1},
    "dirmn_mixture_init": {"DIRMN_INIT_KMEANS": 0, "DIRMN_INIT_KMEANSPP": 1,
                           "DIRMN_INIT_SOFT_KMEANS": 2, "DIRMN_INIT_MIXED": 3},
    "dirmn_reg_model": {"DIRMN_REG_LOGLINEAR": 0, "DIRMN_REG_MEAN_PRECISION": 1},
    "dirmn_reg_contrast": {"DIRMN_REG_REFERENCE": 0, "DIRMN_REG_SUM_TO_ZERO": 1},
    "dirmn_group_statistic": {"DIRMN_GROUP_LRT": 0, "DIRMN_GROUP_XMCUPO": 1,
                              "DIRMN_GROUP_XOC": 2},
}
for _members in ENUMS.values():
    globals().update(_members)

dirmn_status = dirmn_backend = dirmn_precision = dirmn_dtype = c_int
dirmn_index_type = dirmn_sparse_format = dirmn_storage = dirmn_param = c_int
dirmn_mixture_objective = dirmn_mixture_init = c_int
dirmn_reg_model = dirmn_reg_contrast = dirmn_group_statistic = c_int

# --- function pointer types ----------------------------------------------------

dirmn_interrupt_fn = CFUNCTYPE(c_int, c_void_p)
dirmn_progress_fn = CFUNCTYPE(c_int, c_int, c_double, c_double, c_void_p)
dirmn_allreduce_int64_fn = CFUNCTYPE(c_int, c_void_p, POINTER(c_int64), c_size_t, c_int)
dirmn_allreduce_double_fn = CFUNCTYPE(c_int, c_void_p, POINTER(c_double), c_size_t, c_int)
dirmn_broadcast_fn = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_int, c_int)
#: ``void (*release)(void* data)`` of dirmn_communicator_callbacks (the
#: header declares it in the struct, without a typedef of its own).
communicator_release_fn = CFUNCTYPE(None, c_void_p)

# --- structs -------------------------------------------------------------------

_pd = POINTER(c_double)


class dirmn_error_location(Structure):
    _fields_ = [("size", c_size_t), ("argument", c_char_p), ("row", c_int64),
                ("column", c_int64), ("vector", c_int64), ("index", c_int64),
                ("has_value", c_int), ("value", c_double), ("detail", c_char_p),
                ("has_integer_value", c_int), ("integer_value", c_int64)]


class dirmn_counts_options(Structure):
    _fields_ = [("size", c_size_t), ("flags", c_uint32), ("storage", dirmn_storage)]


class dirmn_communicator_callbacks(Structure):
    _fields_ = [("size", c_size_t), ("rank", c_int), ("ranks", c_int),
                ("allreduce_int64", dirmn_allreduce_int64_fn),
                ("allreduce_double", dirmn_allreduce_double_fn),
                ("broadcast", dirmn_broadcast_fn), ("data", c_void_p),
                ("release", communicator_release_fn)]


class dirmn_counts_info(Structure):
    _fields_ = [("size", c_size_t), ("rows", c_int64), ("cols", c_int64), ("nnz", c_int64),
                ("max_count", c_double), ("total", c_double), ("flags", c_uint32),
                ("storage", dirmn_storage), ("value_bits", c_int), ("backend", dirmn_backend),
                ("device", c_int), ("host_steps", c_uint32), ("unavailable_steps", c_uint32)]


class dirmn_fit_options(Structure):
    _fields_ = [("size", c_size_t), ("tolerance", c_double), ("max_iterations", c_int),
                ("weights", _pd), ("start", _pd), ("progress", dirmn_progress_fn),
                ("progress_data", c_void_p), ("flags", c_uint32), ("hessian_diag", _pd)]


class dirmn_fit_result(Structure):
    _fields_ = [("size", c_size_t), ("alpha", _pd), ("std_error_alpha", _pd),
                ("std_error_log_alpha", _pd), ("loglik_kernel", c_double),
                ("loglik", c_double), ("gradient_norm", c_double), ("precision", c_double),
                ("iterations", c_int), ("converged", c_int), ("multinomial_limit", c_int),
                ("zero_columns", c_int64), ("hessian_scalar", c_double),
                ("parameters", c_int64), ("observations", c_double)]


class dirmn_mixture_options(Structure):
    _fields_ = [("size", c_size_t), ("objective", dirmn_mixture_objective),
                ("init", dirmn_mixture_init), ("starts", c_int), ("seed", c_uint64),
                ("max_iterations", c_int), ("tolerance", c_double), ("weights", _pd),
                ("progress", dirmn_progress_fn), ("progress_data", c_void_p),
                ("grow_from", c_void_p), ("m_step_iterations", c_int)]


class dirmn_mixture_info(Structure):
    _fields_ = [("size", c_size_t), ("k", c_int), ("rows", c_int64), ("cols", c_int64),
                ("parameters", c_int64), ("loglik", c_double), ("objective", c_double),
                ("aic", c_double), ("bic", c_double), ("laplace", c_double),
                ("iterations", c_int), ("converged", c_int), ("start", c_int),
                ("observations", c_double)]


class dirmn_overdispersion_result(Structure):
    _fields_ = [("size", c_size_t), ("lrt_statistic", c_double), ("lrt_p_value", c_double),
                ("score_statistic", c_double), ("score_df", c_double),
                ("score_scale", c_double), ("score_p_value", c_double),
                ("loglik_dm", c_double), ("loglik_multinomial", c_double),
                ("precision", c_double), ("categories", c_int64),
                ("observations", c_double), ("converged", c_int)]


class dirmn_reg_options(Structure):
    _fields_ = [("size", c_size_t), ("tolerance", c_double), ("max_iterations", c_int),
                ("weights", _pd), ("progress", dirmn_progress_fn), ("progress_data", c_void_p),
                ("model", dirmn_reg_model), ("contrast", dirmn_reg_contrast),
                ("reference", c_int64), ("log_precision", c_double),
                ("hold_precision", c_int), ("precision_design", _pd),
                ("precision_covariates", c_int64), ("precision_stride_row", c_int64),
                ("precision_stride_col", c_int64)]


class dirmn_reg_info(Structure):
    _fields_ = [("size", c_size_t), ("rows", c_int64), ("covariates", c_int64),
                ("categories", c_int64), ("parameters", c_int64), ("loglik", c_double),
                ("aic", c_double), ("bic", c_double), ("observations", c_double),
                ("gradient_norm", c_double), ("iterations", c_int), ("converged", c_int),
                ("hessian_definite", c_int), ("model", dirmn_reg_model),
                ("contrast", dirmn_reg_contrast), ("reference", c_int64),
                ("precision_covariates", c_int64), ("multinomial_limit", c_int)]


class dirmn_reg_groups_result(Structure):
    _fields_ = [("size", c_size_t), ("loglik_full", _pd), ("loglik_null", _pd),
                ("statistic", _pd), ("df", _pd), ("p_value", _pd), ("p_adjusted", _pd),
                ("status", POINTER(c_int32)), ("converged", POINTER(c_int32)),
                ("categories", POINTER(c_int64)), ("tested", c_int64)]


class dirmn_sample_options(Structure):
    _fields_ = [("size", c_size_t), ("seed", c_uint64), ("component", POINTER(c_int64)),
                ("mixture_weights", _pd), ("component_out", POINTER(c_int64)),
                ("storage", dirmn_storage), ("first_row", c_int64)]


class dirmn_group_test_options(Structure):
    _fields_ = [("size", c_size_t), ("bootstrap", c_int64), ("seed", c_uint64),
                ("tolerance", c_double), ("max_iterations", c_int),
                ("statistic", dirmn_group_statistic)]


class dirmn_group_test_result(Structure):
    _fields_ = [("size", c_size_t), ("statistic", c_double), ("df", c_double),
                ("p_value", c_double), ("p_value_bootstrap", c_double),
                ("bootstrap", c_int64), ("loglik_null", c_double),
                ("loglik_groups", c_double), ("groups", c_int64), ("categories", c_int64),
                ("converged", c_int)]


class dirmn_proportion_test_result(Structure):
    _fields_ = [("size", c_size_t), ("statistic", c_double), ("df", c_double),
                ("p_value", c_double), ("theta", c_double), ("rows", c_int64),
                ("categories", c_int64)]


class dirmn_power_options(Structure):
    _fields_ = [("size", c_size_t), ("tables", c_int64), ("level", c_double),
                ("seed", c_uint64), ("tolerance", c_double), ("max_iterations", c_int),
                ("statistic", dirmn_group_statistic)]


class dirmn_power_result(Structure):
    _fields_ = [("size", c_size_t), ("power", c_double), ("std_error", c_double),
                ("tables", c_int64), ("rejected", c_int64), ("mean_statistic", c_double)]


STRUCTS = (dirmn_error_location, dirmn_counts_options, dirmn_communicator_callbacks,
           dirmn_counts_info, dirmn_fit_options, dirmn_fit_result, dirmn_mixture_options,
           dirmn_mixture_info, dirmn_overdispersion_result, dirmn_reg_options, dirmn_reg_info,
           dirmn_reg_groups_result, dirmn_sample_options, dirmn_group_test_options,
           dirmn_group_test_result, dirmn_proportion_test_result, dirmn_power_options,
           dirmn_power_result)


def new(struct):
    """A zeroed instance of ``struct`` with its ``size`` field set.

    Parameters
    ----------
    struct : type
        One of :data:`STRUCTS`.

    Returns
    -------
    ctypes.Structure
    """
    s = struct()
    s.size = ctypes.sizeof(struct)
    return s


# --- the function table --------------------------------------------------------

_handle = c_void_p           # dirmn_context*, dirmn_counts*, dirmn_mixture*, dirmn_reg*,
                             # dirmn_communicator* (opaque)
_phandle = POINTER(c_void_p)  # dirmn_context** ...
_i64 = c_int64

#: ``(name, restype, argtypes)`` of every function of ``dirmn.h``, in header order.
FUNCTIONS = (
    ("dirmn_version_number", c_uint, ()),
    ("dirmn_version_string", c_char_p, ()),
    ("dirmn_status_string", c_char_p, (dirmn_status,)),
    ("dirmn_status_name", c_char_p, (dirmn_status,)),
    ("dirmn_backend_compiled", c_int, (dirmn_backend,)),
    ("dirmn_cuda_device_count", dirmn_status, (POINTER(c_int),)),
    ("dirmn_last_error", c_char_p, (_handle,)),
    ("dirmn_last_error_location", dirmn_status, (_handle, POINTER(dirmn_error_location))),
    ("dirmn_context_create", dirmn_status, (_phandle, dirmn_backend, c_int)),
    ("dirmn_context_destroy", None, (_handle,)),
    ("dirmn_context_backend", dirmn_status, (_handle, POINTER(dirmn_backend), POINTER(c_int))),
    ("dirmn_context_set_threads", dirmn_status, (_handle, c_int)),
    ("dirmn_context_get_threads", dirmn_status, (_handle, POINTER(c_int))),
    ("dirmn_context_set_precision", dirmn_status, (_handle, dirmn_precision)),
    ("dirmn_context_set_interrupt", dirmn_status, (_handle, dirmn_interrupt_fn, c_void_p)),
    ("dirmn_context_set_stream", dirmn_status, (_handle, c_void_p)),
    ("dirmn_context_get_stream", dirmn_status, (_handle, POINTER(c_void_p))),
    ("dirmn_context_synchronize", dirmn_status, (_handle,)),
    ("dirmn_counts_options_init_sized", None, (POINTER(dirmn_counts_options), c_size_t)),
    ("dirmn_counts_options_init", None, (POINTER(dirmn_counts_options),)),
    ("dirmn_counts_create_dense", dirmn_status,
     (_handle, _phandle, _i64, _i64, dirmn_dtype, c_void_p, _i64, _i64,
      POINTER(dirmn_counts_options))),
    ("dirmn_counts_create_sparse", dirmn_status,
     (_handle, _phandle, dirmn_sparse_format, _i64, _i64, _i64, dirmn_index_type, c_void_p,
      c_void_p, dirmn_dtype, c_void_p, POINTER(dirmn_counts_options))),
    ("dirmn_counts_wrap_device", dirmn_status,
     (_handle, _phandle, _i64, _i64, dirmn_dtype, c_void_p, _i64, _i64,
      POINTER(dirmn_counts_options))),
    ("dirmn_counts_wrap_device_sparse", dirmn_status,
     (_handle, _phandle, _i64, _i64, _i64, dirmn_index_type, c_void_p, c_void_p, dirmn_dtype,
      c_void_p, POINTER(dirmn_counts_options))),
    ("dirmn_counts_destroy", None, (_handle,)),
    ("dirmn_communicator_create", dirmn_status,
     (_phandle, POINTER(dirmn_communicator_callbacks))),
    ("dirmn_communicator_destroy", None, (_handle,)),
    ("dirmn_communicator_get_rank", dirmn_status, (_handle, POINTER(c_int), POINTER(c_int))),
    ("dirmn_counts_set_communicator", dirmn_status, (_handle, _handle, _handle)),
    ("dirmn_counts_get_info", dirmn_status, (_handle, POINTER(dirmn_counts_info))),
    ("dirmn_counts_row_totals", dirmn_status, (_handle, _handle, _pd)),
    ("dirmn_counts_copy_dense", dirmn_status,
     (_handle, _handle, dirmn_dtype, c_void_p, _i64, _i64)),
    ("dirmn_counts_copy_sparse", dirmn_status,
     (_handle, _handle, dirmn_sparse_format, dirmn_index_type, c_void_p, c_void_p, dirmn_dtype,
      c_void_p)),
    ("dirmn_loglik", dirmn_status,
     (_handle, _handle, _i64, _pd, _i64, _i64, dirmn_param, c_uint32, _pd, _i64, _i64)),
    ("dirmn_loglik_rowwise", dirmn_status,
     (_handle, _handle, _pd, _i64, _i64, dirmn_param, c_uint32, _pd, _i64)),
    ("dirmn_loglik_sum", dirmn_status,
     (_handle, _handle, _pd, _i64, dirmn_param, _pd, c_uint32, _pd, _pd, _pd, _pd)),
    ("dirmn_loglik_rowwise_derivatives", dirmn_status,
     (_handle, _handle, _pd, _i64, _i64, dirmn_param, c_uint32, _pd, _pd, _pd, _pd, _i64,
      _i64)),
    ("dirmn_fit_options_init_sized", None, (POINTER(dirmn_fit_options), c_size_t)),
    ("dirmn_fit_options_init", None, (POINTER(dirmn_fit_options),)),
    ("dirmn_fit", dirmn_status,
     (_handle, _handle, POINTER(dirmn_fit_options), POINTER(dirmn_fit_result))),
    ("dirmn_mixture_options_init_sized", None, (POINTER(dirmn_mixture_options), c_size_t)),
    ("dirmn_mixture_options_init", None, (POINTER(dirmn_mixture_options),)),
    ("dirmn_mixture_fit", dirmn_status,
     (_handle, _handle, c_int, POINTER(dirmn_mixture_options), _phandle)),
    ("dirmn_mixture_fit_range", dirmn_status,
     (_handle, _handle, c_int, c_int, POINTER(dirmn_mixture_options), _phandle)),
    ("dirmn_mixture_destroy", None, (_handle,)),
    ("dirmn_mixture_get_info", dirmn_status, (_handle, POINTER(dirmn_mixture_info))),
    ("dirmn_mixture_get_params", dirmn_status, (_handle, _pd, _i64, _i64, _pd)),
    ("dirmn_mixture_get_responsibilities", dirmn_status, (_handle, _pd, _i64, _i64)),
    ("dirmn_mixture_assign", dirmn_status, (_handle, _handle, _handle, _pd, _i64, _i64)),
    ("dirmn_overdispersion_test", dirmn_status,
     (_handle, _handle, POINTER(dirmn_fit_options), POINTER(dirmn_overdispersion_result))),
    ("dirmn_reg_options_init_sized", None, (POINTER(dirmn_reg_options), c_size_t)),
    ("dirmn_reg_fit", dirmn_status,
     (_handle, _handle, _pd, _i64, _i64, _i64, _i64, POINTER(dirmn_reg_options), _phandle)),
    ("dirmn_reg_destroy", None, (_handle,)),
    ("dirmn_reg_get_info", dirmn_status, (_handle, POINTER(dirmn_reg_info))),
    ("dirmn_reg_get_coef", dirmn_status, (_handle, _pd, _i64, _i64)),
    ("dirmn_reg_get_std_errors", dirmn_status, (_handle, _pd, _i64, _i64)),
    ("dirmn_reg_get_vcov", dirmn_status, (_handle, _pd, _i64)),
    ("dirmn_reg_wald_test", dirmn_status, (_handle, _i64, _pd, _pd, _pd)),
    ("dirmn_reg_get_precision", dirmn_status, (_handle, _pd, _pd)),
    ("dirmn_reg_predict", dirmn_status,
     (_handle, _pd, _i64, _i64, _i64, _i64, _pd, _i64, _i64)),
    ("dirmn_reg_predict_with_precision", dirmn_status,
     (_handle, _pd, _i64, _i64, _i64, _i64, _pd, _i64, _i64, _i64, _pd, _i64, _i64)),
    ("dirmn_reg_test_groups", dirmn_status,
     (_handle, _handle, POINTER(c_int64), _i64, _pd, _i64, _i64, _i64, _i64, _i64,
      POINTER(dirmn_reg_options), POINTER(dirmn_reg_groups_result))),
    ("dirmn_sample_options_init_sized", None, (POINTER(dirmn_sample_options), c_size_t)),
    ("dirmn_sample", dirmn_status,
     (_handle, _phandle, _i64, _i64, _i64, _pd, _i64, _i64, dirmn_param, POINTER(c_int64),
      _i64, POINTER(dirmn_sample_options))),
    ("dirmn_sample_rowwise", dirmn_status,
     (_handle, _phandle, _i64, _i64, _pd, _i64, _i64, dirmn_param, POINTER(c_int64), _i64,
      POINTER(dirmn_sample_options))),
    ("dirmn_moments", dirmn_status,
     (_handle, _i64, _pd, _i64, dirmn_param, c_double, _pd, _pd, _pd, _i64)),
    ("dirmn_group_test_options_init_sized", None,
     (POINTER(dirmn_group_test_options), c_size_t)),
    ("dirmn_test_groups", dirmn_status,
     (_handle, _handle, POINTER(c_int64), _i64, POINTER(dirmn_group_test_options),
      POINTER(dirmn_group_test_result))),
    ("dirmn_test_proportions", dirmn_status,
     (_handle, _handle, _pd, _i64, POINTER(dirmn_proportion_test_result))),
    ("dirmn_power_options_init_sized", None, (POINTER(dirmn_power_options), c_size_t)),
    ("dirmn_power_groups", dirmn_status,
     (_handle, _i64, _i64, _pd, _i64, _i64, dirmn_param, POINTER(c_int64), POINTER(c_int64),
      POINTER(dirmn_power_options), POINTER(dirmn_power_result))),
    ("dirmn_power_proportions", dirmn_status,
     (_handle, _i64, _pd, _i64, dirmn_param, _i64, POINTER(c_int64), _pd, _i64,
      POINTER(dirmn_power_options), POINTER(dirmn_power_result))),
)


class _Missing:
    """Stands in for a function the loaded library does not export."""

    def __init__(self, name, path):
        self.name, self.path = name, path

    def __call__(self, *args):
        raise RuntimeError("dirmn: %s is not exported by %s: it is older than the header "
                           "this package was written for" % (self.name, self.path))


def _bind(lib, path):
    table = {}
    for name, restype, argtypes in FUNCTIONS:
        try:
            f = getattr(lib, name)
        except AttributeError:
            table[name] = _Missing(name, path)
            continue
        f.restype = restype
        f.argtypes = list(argtypes)
        table[name] = f
    return table


_lib, library_path = load_library()
_functions = _bind(_lib, library_path)
globals().update(_functions)

if isinstance(_functions["dirmn_version_number"], _Missing):
    raise DirmnLibraryNotFound("dirmn: %s does not export dirmn_version_number: it is not "
                               "libdirmn" % library_path)
_v = int(_functions["dirmn_version_number"]())
if _v // 10000 != DIRMN_VERSION_MAJOR:
    raise DirmnLibraryNotFound(
        "dirmn: %s is libdirmn %d.%d.%d, but this package needs major version %d; install "
        "a matching libdirmn or point DIRMN_LIBRARY_PATH at one"
        % (library_path, _v // 10000, _v // 100 % 100, _v % 100, DIRMN_VERSION_MAJOR))


def function(name):
    """The bound C function ``name`` (a ctypes function pointer).

    Parameters
    ----------
    name : str
        A name of :data:`FUNCTIONS`.

    Returns
    -------
    ctypes function or a placeholder raising ``RuntimeError`` when called
    """
    return _functions[name]
