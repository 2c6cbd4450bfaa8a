"""
    Dirmn.LibDirmn

One-to-one `ccall` wrappers of the C header `dirmn.h`: every `DIRMN_API`
function under its C name and with its C argument list, the enums as `Cint`
aliases with their constants, the options structs as isbits structs with the
C field layout, and the opaque handle types as `Cvoid` (so `dirmn_context**`
is `Ptr{Ptr{dirmn_context}} == Ptr{Ptr{Cvoid}}`).

Nothing here checks arguments or converts errors: a call returns the C
`dirmn_status` as a `Cint`. Use the functions of `Dirmn` itself unless you
need the raw ABI.

The wrappers are generated from the table [`FUNCTIONS`](@ref), which the test
suite compares with the header file.
"""
module LibDirmn

using Libdl

# ---------------------------------------------------------------------------
# Constants and types mirrored from dirmn.h
# ---------------------------------------------------------------------------

# The header this package was written against; only the major part has to
# agree with the loaded library (checked in __init__).
const DIRMN_VERSION_MAJOR = 0
const DIRMN_VERSION_MINOR = 1
const DIRMN_VERSION_PATCH = 0
const DIRMN_VERSION_NUMBER =
    DIRMN_VERSION_MAJOR * 10000 + DIRMN_VERSION_MINOR * 100 + DIRMN_VERSION_PATCH

# C enums are int-sized; plain Cint aliases (rather than @enum) let a caller
# pass any value, which the library must then reject, exactly as from C.
const dirmn_status = Cint
const DIRMN_SUCCESS = dirmn_status(0)
const DIRMN_ERROR_NULL_POINTER = dirmn_status(1)
const DIRMN_ERROR_INVALID_ARGUMENT = dirmn_status(2)
const DIRMN_ERROR_INVALID_COUNTS = dirmn_status(3)
const DIRMN_ERROR_INVALID_PARAMETER = dirmn_status(4)
const DIRMN_ERROR_DIMENSION_MISMATCH = dirmn_status(5)
const DIRMN_ERROR_WRONG_CONTEXT = dirmn_status(6)
const DIRMN_ERROR_OUT_OF_MEMORY = dirmn_status(7)
const DIRMN_ERROR_BACKEND_UNAVAILABLE = dirmn_status(8)
const DIRMN_ERROR_DEVICE = dirmn_status(9)
const DIRMN_ERROR_OVERFLOW = dirmn_status(10)
const DIRMN_ERROR_CANCELLED = dirmn_status(11)
const DIRMN_ERROR_NOT_SUPPORTED = dirmn_status(12)
const DIRMN_ERROR_CONTEXT_IN_USE = dirmn_status(13)
const DIRMN_ERROR_INTERNAL = dirmn_status(99)

const dirmn_backend = Cint
const DIRMN_BACKEND_AUTO = dirmn_backend(0)
const DIRMN_BACKEND_CPU = dirmn_backend(1)
const DIRMN_BACKEND_CUDA = dirmn_backend(2)

const dirmn_precision = Cint
const DIRMN_PRECISION_DOUBLE = dirmn_precision(0)
const DIRMN_PRECISION_FAST = dirmn_precision(1)

const dirmn_dtype = Cint
const DIRMN_INT32 = dirmn_dtype(0)
const DIRMN_INT64 = dirmn_dtype(1)
const DIRMN_FLOAT32 = dirmn_dtype(2)
const DIRMN_FLOAT64 = dirmn_dtype(3)

const dirmn_index_type = Cint
const DIRMN_INDEX_INT32 = dirmn_index_type(0)
const DIRMN_INDEX_INT64 = dirmn_index_type(1)

const dirmn_sparse_format = Cint
const DIRMN_CSR = dirmn_sparse_format(0)
const DIRMN_CSC = dirmn_sparse_format(1)

const dirmn_storage = Cint
const DIRMN_STORAGE_AUTO = dirmn_storage(0)
const DIRMN_STORAGE_DENSE = dirmn_storage(1)
const DIRMN_STORAGE_SPARSE = dirmn_storage(2)

const dirmn_param = Cint
const DIRMN_PARAM_ALPHA = dirmn_param(0)
const DIRMN_PARAM_LOG_ALPHA = dirmn_param(1)

const dirmn_mixture_objective = Cint
const DIRMN_MIXTURE_ML = dirmn_mixture_objective(0)
const DIRMN_MIXTURE_DMN = dirmn_mixture_objective(1)

const dirmn_mixture_init = Cint
const DIRMN_INIT_KMEANS = dirmn_mixture_init(0)
const DIRMN_INIT_KMEANSPP = dirmn_mixture_init(1)
const DIRMN_INIT_SOFT_KMEANS = dirmn_mixture_init(2)

const DIRMN_COUNTS_REAL_VALUED = UInt32(0x1)
const DIRMN_FULL = UInt32(0x1)
const DIRMN_OUTPUT_DEVICE = UInt32(0x2)
const DIRMN_ASYNC = UInt32(0x4)

# dirmn_counts_info's host_steps and unavailable_steps bits.
const DIRMN_STEP_LOGLIK = UInt32(0x01)
const DIRMN_STEP_LOGLIK_ROWWISE = UInt32(0x02)
const DIRMN_STEP_DERIVATIVES_ROWWISE = UInt32(0x04)
const DIRMN_STEP_HISTOGRAMS = UInt32(0x08)
const DIRMN_STEP_MIXTURE_EM = UInt32(0x10)
const DIRMN_STEP_MIXTURE_FITS = UInt32(0x20)
const DIRMN_STEPS_ALL = UInt32(0x3f)

# Opaque handles are only ever seen through pointers.
const dirmn_context = Cvoid
const dirmn_counts = Cvoid
const dirmn_mixture = Cvoid
# C function pointers (make them with @cfunction).
const dirmn_interrupt_fn = Ptr{Cvoid}
const dirmn_progress_fn = Ptr{Cvoid}

"""
    dirmn_error_location(size, argument, row, column, vector, index, has_value,
                         value, detail, has_integer_value, integer_value)

Mirror of the C struct `dirmn_error_location`: where the last failure was, as
0-based numbers (-1 where a position does not apply). Pass it to
[`dirmn_last_error_location`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_error_location)` (see [`empty_error_location`](@ref)).
`argument` (static storage) and `detail` (valid as `dirmn_last_error`'s
string) are C strings owned by the library: read them with `unsafe_string`
before the next call on the same context. `has_integer_value` is 1 when the
offending value is an integer the caller passed (an Int32 or Int64 count, a
compressed pointer or index entry): `integer_value` then holds it exactly,
and `value` only the nearest double.

The nine-argument form (without `has_integer_value` and `integer_value`, the
fields appended later) sets those two to 0.
"""
struct dirmn_error_location
    size::Csize_t
    argument::Cstring
    row::Int64
    column::Int64
    vector::Int64
    index::Int64
    has_value::Cint
    value::Cdouble
    detail::Cstring
    has_integer_value::Cint
    integer_value::Int64
end

dirmn_error_location(size, argument, row, column, vector, index, has_value, value, detail) =
    dirmn_error_location(size, argument, row, column, vector, index, has_value, value, detail,
                         Cint(0), Int64(0))

"""
    dirmn_counts_options(size, flags, storage)

Mirror of the C struct `dirmn_counts_options` (same field order and types).
Fill one with [`dirmn_counts_options_init_sized`](@ref) (with its size) through a `Ref`, then build
a modified copy; `size` must stay `sizeof(dirmn_counts_options)`.
"""
struct dirmn_counts_options
    size::Csize_t
    flags::UInt32
    storage::dirmn_storage
end

"""
    dirmn_counts_info(size, rows, cols, nnz, max_count, total, flags, storage,
                      value_bits, backend, device, host_steps, unavailable_steps)

Mirror of the C struct `dirmn_counts_info`. Pass it to
[`dirmn_counts_get_info`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_counts_info)` (see [`empty_counts_info`](@ref)).
"""
struct dirmn_counts_info
    size::Csize_t
    rows::Int64
    cols::Int64
    nnz::Int64
    max_count::Cdouble
    total::Cdouble
    flags::UInt32
    storage::dirmn_storage
    value_bits::Cint
    backend::dirmn_backend
    device::Cint
    host_steps::UInt32
    unavailable_steps::UInt32
end

"""
    dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress,
                      progress_data, flags, hessian_diag)

Mirror of the C struct `dirmn_fit_options`. Fill one with
[`dirmn_fit_options_init_sized`](@ref) (with its size) through a `Ref`. The pointers it holds
(`weights`, `start`, and the output `hessian_diag`, V doubles or `C_NULL`)
must stay valid, e.g. under `GC.@preserve`, for the whole
[`dirmn_fit`](@ref) call.

The seven-argument form (without `flags` and `hessian_diag`, the fields
appended later) sets those two to 0 and `C_NULL`, their defaults.
"""
struct dirmn_fit_options
    size::Csize_t
    tolerance::Cdouble
    max_iterations::Cint
    weights::Ptr{Cdouble}
    start::Ptr{Cdouble}
    progress::dirmn_progress_fn
    progress_data::Ptr{Cvoid}
    flags::UInt32
    hessian_diag::Ptr{Cdouble}
end

dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress, progress_data) =
    dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress, progress_data,
                      UInt32(0), C_NULL)

"""
    dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel,
                     loglik, gradient_norm, precision, iterations,
                     converged, multinomial_limit, zero_columns, hessian_scalar)

Mirror of the C struct `dirmn_fit_result`: `size` is set by the caller,
`alpha` (and optionally the standard-error arrays) point to caller-owned
arrays of V doubles; the rest is written by [`dirmn_fit`](@ref)
(`hessian_scalar` only when the options ask for `hessian_diag`).

The twelve-argument form (without `hessian_scalar`, the field appended
later) sets it to 0.
"""
struct dirmn_fit_result
    size::Csize_t
    alpha::Ptr{Cdouble}
    std_error_alpha::Ptr{Cdouble}
    std_error_log_alpha::Ptr{Cdouble}
    loglik_kernel::Cdouble
    loglik::Cdouble
    gradient_norm::Cdouble
    precision::Cdouble
    iterations::Cint
    converged::Cint
    multinomial_limit::Cint
    zero_columns::Int64
    hessian_scalar::Cdouble
end

dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel, loglik,
                 gradient_norm, precision, iterations, converged, multinomial_limit,
                 zero_columns) =
    dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel, loglik,
                     gradient_norm, precision, iterations, converged, multinomial_limit,
                     zero_columns, 0.0)

"""
    dirmn_mixture_options(size, objective, init, starts, seed, max_iterations,
                          tolerance, weights, progress, progress_data)

Mirror of the C struct `dirmn_mixture_options`. Fill one with
[`dirmn_mixture_options_init_sized`](@ref) (with its size) through a `Ref` (see
[`empty_mixture_options`](@ref)), then build a modified copy. The pointers it
holds (`weights`, `progress_data`) must stay valid, e.g. under
`GC.@preserve`, for the whole [`dirmn_mixture_fit`](@ref) call. `progress` is
a `dirmn_progress_fn` made with `@cfunction`; it receives (EM iteration,
log-likelihood, change, `progress_data`) and cancels the fit by returning a
non-zero `Cint`.
"""
struct dirmn_mixture_options
    size::Csize_t
    objective::dirmn_mixture_objective
    init::dirmn_mixture_init
    starts::Cint
    seed::UInt64
    max_iterations::Cint
    tolerance::Cdouble
    weights::Ptr{Cdouble}
    progress::dirmn_progress_fn
    progress_data::Ptr{Cvoid}
end

"""
    dirmn_mixture_info(size, k, rows, cols, parameters, loglik, objective, aic,
                       bic, laplace, iterations, converged, start)

Mirror of the C struct `dirmn_mixture_info`. Pass it to
[`dirmn_mixture_get_info`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_mixture_info)` (see [`empty_mixture_info`](@ref)).
"""
struct dirmn_mixture_info
    size::Csize_t
    k::Cint
    rows::Int64
    cols::Int64
    parameters::Int64
    loglik::Cdouble
    objective::Cdouble
    aic::Cdouble
    bic::Cdouble
    laplace::Cdouble
    iterations::Cint
    converged::Cint
    start::Cint
end

"""
    empty_counts_options() -> dirmn_counts_options

A zeroed options struct with only `size` set, ready for
[`dirmn_counts_options_init_sized`](@ref).
"""
empty_counts_options() =
    dirmn_counts_options(Csize_t(sizeof(dirmn_counts_options)), UInt32(0), DIRMN_STORAGE_AUTO)

"""
    empty_counts_info() -> dirmn_counts_info

A zeroed info struct with `size` set, as [`dirmn_counts_get_info`](@ref)
requires.
"""
empty_counts_info() = dirmn_counts_info(Csize_t(sizeof(dirmn_counts_info)), 0, 0, 0, 0.0, 0.0,
                                        UInt32(0), DIRMN_STORAGE_AUTO, Cint(0),
                                        DIRMN_BACKEND_AUTO, Cint(0), UInt32(0), UInt32(0))

"""
    empty_error_location() -> dirmn_error_location

A location struct with `size` set, null strings and every position -1, as
[`dirmn_last_error_location`](@ref) requires.
"""
empty_error_location() =
    dirmn_error_location(Csize_t(sizeof(dirmn_error_location)), Cstring(C_NULL), -1, -1, -1, -1,
                         Cint(0), 0.0, Cstring(C_NULL), Cint(0), Int64(0))

"""
    empty_mixture_options() -> dirmn_mixture_options

A zeroed options struct with only `size` set, ready for
[`dirmn_mixture_options_init`](@ref).
"""
empty_mixture_options() =
    dirmn_mixture_options(Csize_t(sizeof(dirmn_mixture_options)), DIRMN_MIXTURE_ML,
                          DIRMN_INIT_KMEANS, Cint(0), UInt64(0), Cint(0), 0.0, C_NULL, C_NULL,
                          C_NULL)

"""
    empty_mixture_info() -> dirmn_mixture_info

A zeroed info struct with `size` set, as [`dirmn_mixture_get_info`](@ref)
requires.
"""
empty_mixture_info() =
    dirmn_mixture_info(Csize_t(sizeof(dirmn_mixture_info)), Cint(0), 0, 0, 0, 0.0, 0.0, 0.0,
                       0.0, 0.0, Cint(0), Cint(0), Cint(0))

# ---------------------------------------------------------------------------
# The function table
# ---------------------------------------------------------------------------

"""
    FUNCTIONS

`(name, return type, (argument types...))` for every function of `dirmn.h`,
in header order. The wrappers below are generated from it and the test suite
checks it against the header file, so a change to the header that is not
mirrored here fails the tests instead of corrupting a call.
"""
const FUNCTIONS = (
    (:dirmn_version_number, Cuint, ()),
    (:dirmn_version_string, Cstring, ()),
    (:dirmn_status_string, Cstring, (dirmn_status,)),
    (:dirmn_status_name, Cstring, (dirmn_status,)),
    (:dirmn_backend_compiled, Cint, (dirmn_backend,)),
    (:dirmn_cuda_device_count, dirmn_status, (Ptr{Cint},)),
    (:dirmn_last_error, Cstring, (Ptr{dirmn_context},)),
    (:dirmn_last_error_location, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_error_location})),
    (:dirmn_context_create, dirmn_status, (Ptr{Ptr{dirmn_context}}, dirmn_backend, Cint)),
    (:dirmn_context_destroy, Cvoid, (Ptr{dirmn_context},)),
    (:dirmn_context_backend, dirmn_status, (Ptr{dirmn_context}, Ptr{dirmn_backend}, Ptr{Cint})),
    (:dirmn_context_set_threads, dirmn_status, (Ptr{dirmn_context}, Cint)),
    (:dirmn_context_get_threads, dirmn_status, (Ptr{dirmn_context}, Ptr{Cint})),
    (:dirmn_context_set_precision, dirmn_status, (Ptr{dirmn_context}, dirmn_precision)),
    (:dirmn_context_set_interrupt, dirmn_status,
     (Ptr{dirmn_context}, dirmn_interrupt_fn, Ptr{Cvoid})),
    (:dirmn_context_set_stream, dirmn_status, (Ptr{dirmn_context}, Ptr{Cvoid})),
    (:dirmn_context_get_stream, dirmn_status, (Ptr{dirmn_context}, Ptr{Ptr{Cvoid}})),
    (:dirmn_context_synchronize, dirmn_status, (Ptr{dirmn_context},)),
    (:dirmn_counts_options_init_sized, Cvoid, (Ptr{dirmn_counts_options}, Csize_t)),
    (:dirmn_counts_options_init, Cvoid, (Ptr{dirmn_counts_options},)),
    (:dirmn_counts_create_dense, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, Int64, Int64, dirmn_dtype, Ptr{Cvoid},
      Int64, Int64, Ptr{dirmn_counts_options})),
    (:dirmn_counts_create_sparse, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, dirmn_sparse_format, Int64, Int64, Int64,
      dirmn_index_type, Ptr{Cvoid}, Ptr{Cvoid}, dirmn_dtype, Ptr{Cvoid},
      Ptr{dirmn_counts_options})),
    (:dirmn_counts_wrap_device, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, Int64, Int64, dirmn_dtype, Ptr{Cvoid},
      Int64, Int64, Ptr{dirmn_counts_options})),
    (:dirmn_counts_wrap_device_sparse, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, Int64, Int64, Int64, dirmn_index_type,
      Ptr{Cvoid}, Ptr{Cvoid}, dirmn_dtype, Ptr{Cvoid}, Ptr{dirmn_counts_options})),
    (:dirmn_counts_destroy, Cvoid, (Ptr{dirmn_counts},)),
    (:dirmn_counts_get_info, dirmn_status, (Ptr{dirmn_counts}, Ptr{dirmn_counts_info})),
    (:dirmn_counts_row_totals, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble})),
    (:dirmn_loglik, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Int64, Ptr{Cdouble}, Int64, Int64, dirmn_param,
      UInt32, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_loglik_rowwise, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64, Int64, dirmn_param, UInt32,
      Ptr{Cdouble}, Int64)),
    (:dirmn_loglik_sum, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64, dirmn_param, Ptr{Cdouble},
      UInt32, Ptr{Cdouble}, Ptr{Cdouble}, Ptr{Cdouble}, Ptr{Cdouble})),
    (:dirmn_loglik_rowwise_derivatives, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64, Int64, dirmn_param, UInt32,
      Ptr{Cdouble}, Ptr{Cdouble}, Ptr{Cdouble}, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_fit_options_init_sized, Cvoid, (Ptr{dirmn_fit_options}, Csize_t)),
    (:dirmn_fit_options_init, Cvoid, (Ptr{dirmn_fit_options},)),
    (:dirmn_fit, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{dirmn_fit_options}, Ptr{dirmn_fit_result})),
    (:dirmn_mixture_options_init_sized, Cvoid, (Ptr{dirmn_mixture_options}, Csize_t)),
    (:dirmn_mixture_options_init, Cvoid, (Ptr{dirmn_mixture_options},)),
    (:dirmn_mixture_fit, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Cint, Ptr{dirmn_mixture_options},
      Ptr{Ptr{dirmn_mixture}})),
    (:dirmn_mixture_fit_range, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Cint, Cint, Ptr{dirmn_mixture_options},
      Ptr{Ptr{dirmn_mixture}})),
    (:dirmn_mixture_destroy, Cvoid, (Ptr{dirmn_mixture},)),
    (:dirmn_mixture_get_info, dirmn_status, (Ptr{dirmn_mixture}, Ptr{dirmn_mixture_info})),
    (:dirmn_mixture_get_params, dirmn_status,
     (Ptr{dirmn_mixture}, Ptr{Cdouble}, Int64, Int64, Ptr{Cdouble})),
    (:dirmn_mixture_get_responsibilities, dirmn_status,
     (Ptr{dirmn_mixture}, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_mixture_assign, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_mixture}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64, Int64)),
)

# ---------------------------------------------------------------------------
# Loading the library
# ---------------------------------------------------------------------------

const _handle = Ref{Ptr{Cvoid}}(C_NULL)
const _path = Ref{String}("")

# The library's location is only known at run time, and ccall's
# (symbol, library) form wants a constant library on Julia 1.5; calling
# through a function pointer looked up with dlsym works on every version.
# One Ref per function holds that pointer; __init__ fills them, so nothing
# stale from precompilation survives.
const _fptrs = [Ref{Ptr{Cvoid}}(C_NULL) for _ in FUNCTIONS]

@noinline function _unresolved(name::Symbol)
    if _handle[] == C_NULL
        error("Dirmn: libdirmn is not loaded, so $name cannot be called")
    end
    error("Dirmn: $name is not exported by the loaded libdirmn ($(_path[])); " *
          "it is older than the header this package was written for")
end

for (i, (name, ret, args)) in enumerate(FUNCTIONS)
    fref = _fptrs[i]
    argnames = [Symbol("arg", i) for i in 1:length(args)]
    signature = string(name, "(", join(string.(args), ", "), ")::", ret)
    doc = "    $signature\n\nDirect `ccall` of the C function `$name` of `dirmn.h`."
    @eval begin
        @doc $doc function $name($(argnames...))
            fptr = $fref[]
            fptr == C_NULL && _unresolved($(QuoteNode(name)))
            ccall(fptr, $ret, ($(args...),), $(argnames...))
        end
    end
end

const _LIBNAMES = Sys.isapple() ? ("libdirmn.0.dylib", "libdirmn.dylib") :
                  Sys.iswindows() ? ("dirmn.dll", "libdirmn.dll") :
                  ("libdirmn.so.0", "libdirmn.so")

# Where `cmake --install` puts the library by default; find_library also
# searches the dynamic loader's own path (LD_LIBRARY_PATH, ld.so.cache).
const _INSTALL_DIRS = ("/usr/local/lib", "/usr/local/lib64",
                       "/usr/local/lib/x86_64-linux-gnu", "/usr/lib",
                       "/usr/lib64", "/usr/lib/x86_64-linux-gnu")

"""
    find_library() -> String

The path of the libdirmn to load: `ENV["DIRMN_LIBRARY_PATH"]` (the library
file itself, or a directory holding it, also looking in its `lib/` and
`lib/x86_64-linux-gnu/` subdirectories so an install prefix works too), else
the dynamic loader's search path and the standard install locations. Throws
an error saying what was tried when nothing is found.
"""
function find_library()
    env = get(ENV, "DIRMN_LIBRARY_PATH", "")
    if !isempty(env)
        isfile(env) && return env
        if isdir(env)
            for sub in ("", "lib", "lib64", joinpath("lib", "x86_64-linux-gnu")),
                name in _LIBNAMES
                p = joinpath(env, sub, name)
                isfile(p) && return p
            end
        end
        error("Dirmn: DIRMN_LIBRARY_PATH=$env is neither libdirmn itself nor a " *
              "directory containing $(join(_LIBNAMES, " or "))")
    end
    found = Libdl.find_library(collect(_LIBNAMES), collect(_INSTALL_DIRS))
    isempty(found) || return found
    for dir in _INSTALL_DIRS, name in _LIBNAMES
        p = joinpath(dir, name)
        isfile(p) && return p
    end
    error("Dirmn: cannot find libdirmn (searched the loader path and " *
          "$(join(_INSTALL_DIRS, ", "))). Install dirmn, or set DIRMN_LIBRARY_PATH " *
          "to the library file or its directory.")
end

# C_NULL for a symbol the library lacks (dlsym gives `nothing` then).
function _dlsym(handle, name::Symbol)
    p = Libdl.dlsym(handle, name; throw_error = false)
    return p === nothing ? C_NULL : Ptr{Cvoid}(p)
end

"""
    load_library(path = find_library()) -> String

Opens libdirmn, resolves every function of [`FUNCTIONS`](@ref) and checks
that the library's major version matches the header's. Called by the
module's `__init__`; call it again only to switch libraries in a session.
"""
function load_library(path::AbstractString = find_library())
    # Throws with dlerror's text (missing dependency, wrong ELF class, ...).
    handle = Libdl.dlopen(path)
    # Resolve and check before touching the wrappers' pointers, so a library
    # that is rejected leaves the one already loaded (if any) in use.
    ptrs = Ptr{Cvoid}[_dlsym(handle, name) for (name, _, _) in FUNCTIONS]
    if ptrs[1] == C_NULL  # dirmn_version_number
        error("Dirmn: $path does not export dirmn_version_number: it is not libdirmn")
    end
    v = Int(ccall(ptrs[1], Cuint, ()))
    if v ÷ 10000 != DIRMN_VERSION_MAJOR
        error("Dirmn: $path is libdirmn $(v ÷ 10000).$((v ÷ 100) % 100).$(v % 100), " *
              "but this package needs major version $DIRMN_VERSION_MAJOR " *
              "(written for $DIRMN_VERSION_MAJOR.$DIRMN_VERSION_MINOR.$DIRMN_VERSION_PATCH). " *
              "Install a matching libdirmn or point DIRMN_LIBRARY_PATH at one.")
    end
    for (r, p) in zip(_fptrs, ptrs)
        r[] = p
    end
    _handle[] = handle
    _path[] = String(path)
    return _path[]
end

"""
    symbol_pointer(name::Symbol) -> Ptr{Cvoid}

The address the wrapper `name` calls (`C_NULL` when the loaded library lacks
it or `name` is not in [`FUNCTIONS`](@ref)).
"""
function symbol_pointer(name::Symbol)
    i = findfirst(f -> f[1] === name, FUNCTIONS)
    return i === nothing ? C_NULL : _fptrs[i][]
end

"""
    library_path() -> String

Path of the loaded libdirmn ("" if none is loaded).
"""
library_path() = _path[]

function __init__()
    load_library()
end

end # module LibDirmn
