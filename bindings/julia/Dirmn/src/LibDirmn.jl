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

include("libdirmn_types.jl")

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
    (:dirmn_communicator_create, dirmn_status,
     (Ptr{Ptr{dirmn_communicator}}, Ptr{dirmn_communicator_callbacks})),
    (:dirmn_communicator_destroy, Cvoid, (Ptr{dirmn_communicator},)),
    (:dirmn_communicator_get_rank, dirmn_status, (Ptr{dirmn_communicator}, Ptr{Cint}, Ptr{Cint})),
    (:dirmn_counts_set_communicator, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{dirmn_communicator})),
    (:dirmn_counts_get_info, dirmn_status, (Ptr{dirmn_counts}, Ptr{dirmn_counts_info})),
    (:dirmn_counts_row_totals, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble})),
    (:dirmn_counts_copy_dense, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, dirmn_dtype, Ptr{Cvoid}, Int64, Int64)),
    (:dirmn_counts_copy_sparse, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, dirmn_sparse_format, dirmn_index_type, Ptr{Cvoid},
      Ptr{Cvoid}, dirmn_dtype, Ptr{Cvoid})),
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
    (:dirmn_overdispersion_test, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{dirmn_fit_options},
      Ptr{dirmn_overdispersion_result})),
    (:dirmn_reg_options_init_sized, Cvoid, (Ptr{dirmn_reg_options}, Csize_t)),
    (:dirmn_reg_fit, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64, Int64, Int64, Int64,
      Ptr{dirmn_reg_options}, Ptr{Ptr{dirmn_reg}})),
    (:dirmn_reg_destroy, Cvoid, (Ptr{dirmn_reg},)),
    (:dirmn_reg_get_info, dirmn_status, (Ptr{dirmn_reg}, Ptr{dirmn_reg_info})),
    (:dirmn_reg_get_coef, dirmn_status, (Ptr{dirmn_reg}, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_reg_get_std_errors, dirmn_status, (Ptr{dirmn_reg}, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_reg_get_vcov, dirmn_status, (Ptr{dirmn_reg}, Ptr{Cdouble}, Int64)),
    (:dirmn_reg_wald_test, dirmn_status,
     (Ptr{dirmn_reg}, Int64, Ptr{Cdouble}, Ptr{Cdouble}, Ptr{Cdouble})),
    (:dirmn_reg_get_precision, dirmn_status, (Ptr{dirmn_reg}, Ptr{Cdouble}, Ptr{Cdouble})),
    (:dirmn_reg_predict, dirmn_status,
     (Ptr{dirmn_reg}, Ptr{Cdouble}, Int64, Int64, Int64, Int64, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_reg_predict_with_precision, dirmn_status,
     (Ptr{dirmn_reg}, Ptr{Cdouble}, Int64, Int64, Int64, Int64, Ptr{Cdouble}, Int64, Int64,
      Int64, Ptr{Cdouble}, Int64, Int64)),
    (:dirmn_reg_test_groups, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Int64}, Int64, Ptr{Cdouble}, Int64, Int64,
      Int64, Int64, Int64, Ptr{dirmn_reg_options}, Ptr{dirmn_reg_groups_result})),
    (:dirmn_sample_options_init_sized, Cvoid, (Ptr{dirmn_sample_options}, Csize_t)),
    (:dirmn_sample, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, Int64, Int64, Int64, Ptr{Cdouble}, Int64,
      Int64, dirmn_param, Ptr{Int64}, Int64, Ptr{dirmn_sample_options})),
    (:dirmn_sample_rowwise, dirmn_status,
     (Ptr{dirmn_context}, Ptr{Ptr{dirmn_counts}}, Int64, Int64, Ptr{Cdouble}, Int64, Int64,
      dirmn_param, Ptr{Int64}, Int64, Ptr{dirmn_sample_options})),
    (:dirmn_moments, dirmn_status,
     (Ptr{dirmn_context}, Int64, Ptr{Cdouble}, Int64, dirmn_param, Cdouble, Ptr{Cdouble},
      Ptr{Cdouble}, Ptr{Cdouble}, Int64)),
    (:dirmn_group_test_options_init_sized, Cvoid, (Ptr{dirmn_group_test_options}, Csize_t)),
    (:dirmn_test_groups, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Int64}, Int64, Ptr{dirmn_group_test_options},
      Ptr{dirmn_group_test_result})),
    (:dirmn_test_proportions, dirmn_status,
     (Ptr{dirmn_context}, Ptr{dirmn_counts}, Ptr{Cdouble}, Int64,
      Ptr{dirmn_proportion_test_result})),
    (:dirmn_power_options_init_sized, Cvoid, (Ptr{dirmn_power_options}, Csize_t)),
    (:dirmn_power_groups, dirmn_status,
     (Ptr{dirmn_context}, Int64, Int64, Ptr{Cdouble}, Int64, Int64, dirmn_param, Ptr{Int64},
      Ptr{Int64}, Ptr{dirmn_power_options}, Ptr{dirmn_power_result})),
    (:dirmn_power_proportions, dirmn_status,
     (Ptr{dirmn_context}, Int64, Ptr{Cdouble}, Int64, dirmn_param, Int64, Ptr{Int64},
      Ptr{Cdouble}, Int64, Ptr{dirmn_power_options}, Ptr{dirmn_power_result})),
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
    dirmn_reg_options_init(options::Ref{dirmn_reg_options})

The header's macro `dirmn_reg_options_init(options)`, which is no exported
function of the library: [`dirmn_reg_options_init_sized`](@ref) with
`sizeof(dirmn_reg_options)`.
"""
dirmn_reg_options_init(options::Ref{dirmn_reg_options}) =
    dirmn_reg_options_init_sized(options, Csize_t(sizeof(dirmn_reg_options)))

"""
    dirmn_sample_options_init(options::Ref{dirmn_sample_options})

The header's macro `dirmn_sample_options_init(options)`, which is no
exported function of the library: [`dirmn_sample_options_init_sized`](@ref)
with `sizeof(dirmn_sample_options)`.
"""
dirmn_sample_options_init(options::Ref{dirmn_sample_options}) =
    dirmn_sample_options_init_sized(options, Csize_t(sizeof(dirmn_sample_options)))

"""
    dirmn_group_test_options_init(options::Ref{dirmn_group_test_options})

The header's macro `dirmn_group_test_options_init(options)`, which is no
exported function of the library:
[`dirmn_group_test_options_init_sized`](@ref) with
`sizeof(dirmn_group_test_options)`.
"""
dirmn_group_test_options_init(options::Ref{dirmn_group_test_options}) =
    dirmn_group_test_options_init_sized(options, Csize_t(sizeof(dirmn_group_test_options)))

"""
    dirmn_power_options_init(options::Ref{dirmn_power_options})

The header's macro `dirmn_power_options_init(options)`, which is no exported
function of the library: [`dirmn_power_options_init_sized`](@ref) with
`sizeof(dirmn_power_options)`.
"""
dirmn_power_options_init(options::Ref{dirmn_power_options}) =
    dirmn_power_options_init_sized(options, Csize_t(sizeof(dirmn_power_options)))

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
