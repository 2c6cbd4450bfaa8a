const _STATUS_NAMES = Dict{Int,Symbol}(
    0 => :DIRMN_SUCCESS,
    1 => :DIRMN_ERROR_NULL_POINTER,
    2 => :DIRMN_ERROR_INVALID_ARGUMENT,
    3 => :DIRMN_ERROR_INVALID_COUNTS,
    4 => :DIRMN_ERROR_INVALID_PARAMETER,
    5 => :DIRMN_ERROR_DIMENSION_MISMATCH,
    6 => :DIRMN_ERROR_WRONG_CONTEXT,
    7 => :DIRMN_ERROR_OUT_OF_MEMORY,
    8 => :DIRMN_ERROR_BACKEND_UNAVAILABLE,
    9 => :DIRMN_ERROR_DEVICE,
    10 => :DIRMN_ERROR_OVERFLOW,
    11 => :DIRMN_ERROR_CANCELLED,
    12 => :DIRMN_ERROR_NOT_SUPPORTED,
    99 => :DIRMN_ERROR_INTERNAL,
)

"""
    DirmnError(status, name, message) <: Exception

A failure reported by libdirmn. `status` is the C `dirmn_status` value,
`name` its C name (e.g. `:DIRMN_ERROR_INVALID_COUNTS`), and `message` the
library's detailed message (`dirmn_last_error`), e.g.
`"dirmn_counts_create_dense: row 17, column 3 (0-based): count -2 is negative"`.
Where the library's rows and columns are those of a Julia matrix the
package adds the matching 1-based Julia index.

A few checks the C ABI cannot make, because it receives parameter arrays
without their lengths, are made in Julia and raise a `DirmnError` with the
status the library uses for that case (`DIRMN_ERROR_DIMENSION_MISMATCH`).

```julia
try
    loglik([1, -2], [1.0, 1.0])
catch e
    e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_COUNTS
end
```
"""
struct DirmnError <: Exception
    status::Int
    name::Symbol
    message::String
end

DirmnError(status::Integer, message::AbstractString) =
    DirmnError(Int(status), get(_STATUS_NAMES, Int(status), :DIRMN_UNKNOWN_STATUS),
               String(message))

function Base.showerror(io::IO, e::DirmnError)
    desc = unsafe_string(LibDirmn.dirmn_status_string(LibDirmn.dirmn_status(e.status)))
    print(io, "DirmnError: ", desc, " (", e.name, " = ", e.status, ")")
    isempty(e.message) || print(io, ": ", e.message)
end

# Reads the message of the call that just failed on `ctxptr`. Callers hold
# the context's lock, so no other call can replace the message in between.
function _last_error(ctxptr::Ptr{Cvoid})
    s = LibDirmn.dirmn_last_error(ctxptr)
    return s == C_NULL ? "" : unsafe_string(s)
end

@inline function _check(status::Integer, ctxptr::Ptr{Cvoid}, hint = nothing)
    status == 0 && return nothing
    _throw_status(status, ctxptr, hint)
end

@noinline function _throw_status(status::Integer, ctxptr::Ptr{Cvoid}, hint)
    msg = _last_error(ctxptr)
    if hint !== nothing
        extra = hint(msg)
        extra === nothing || (msg = string(msg, extra))
    end
    throw(DirmnError(status, msg))
end

# For the checks the C ABI cannot make itself (see DirmnError).
_mismatch(msg::AbstractString) =
    throw(DirmnError(LibDirmn.DIRMN_ERROR_DIMENSION_MISMATCH, msg))
