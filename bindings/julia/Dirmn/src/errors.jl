# The C name of a status, from the library (dirmn_status_name). Values the
# library does not know keep this package's spelling :DIRMN_UNKNOWN_STATUS
# (the library's own is "DIRMN_STATUS_UNKNOWN").
function _status_name(status::Integer)
    # Beyond Cint a value cannot be a dirmn_status at all; do not let the
    # conversion throw InexactError while an error is being reported.
    typemin(Cint) <= status <= typemax(Cint) || return :DIRMN_UNKNOWN_STATUS
    s = LibDirmn.dirmn_status_name(LibDirmn.dirmn_status(status))
    s == C_NULL && return :DIRMN_UNKNOWN_STATUS
    name = unsafe_string(s)
    return name == "DIRMN_STATUS_UNKNOWN" ? :DIRMN_UNKNOWN_STATUS : Symbol(name)
end

"""
    DirmnError(status, name, message) <: Exception

A failure reported by libdirmn. `status` is the C `dirmn_status` value,
`name` its C name as the library gives it (`dirmn_status_name`, e.g.
`:DIRMN_ERROR_INVALID_COUNTS`; `:DIRMN_UNKNOWN_STATUS` for a value the
library does not know), and `message` the library's detailed message
(`dirmn_last_error`), e.g.
`"dirmn_counts_create_dense: row 17, column 3 (0-based): count -2 is negative"`.
Where the failure has a position (`dirmn_last_error_location`: the library's
0-based row, column, parameter vector or index, as numbers) the package adds
the matching 1-based index into the Julia array that was passed, and for a
count its value (an integer exactly, from the location's `integer_value`),
e.g. `" [X[3, 2] = -2 in Julia: observation 2, category 3]"`.

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
    DirmnError(Int(status), _status_name(status), String(message))

function Base.showerror(io::IO, e::DirmnError)
    desc = typemin(Cint) <= e.status <= typemax(Cint) ?
           unsafe_string(LibDirmn.dirmn_status_string(LibDirmn.dirmn_status(e.status))) :
           "unknown status"
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

# The position of the call that just failed on `ctxptr`, as the library
# records it (dirmn_last_error_location), or nothing when it cannot say.
# Read, like the message, while the caller holds the context's lock.
function _last_error_location(ctxptr::Ptr{Cvoid})
    r = Ref(LibDirmn.empty_error_location())
    LibDirmn.dirmn_last_error_location(ctxptr, r) == 0 || return nothing
    return r[]
end

# The argument a location names ("data", "params", "weights", ...; "" for
# none).
_argument(loc::LibDirmn.dirmn_error_location) =
    loc.argument == C_NULL ? "" : unsafe_string(loc.argument)

# The offending value of the last failure as its location holds it, or
# nothing where it holds none: the caller's integer exactly where the library
# has one (has_integer_value; as a double, the Int64 count 2^53 + 1 would read
# 9007199254740992 and typemax(Int64) 9.223372036854776e18), else the double.
function _value_text(loc)
    loc === nothing && return nothing
    loc.has_integer_value != 0 && return string(loc.integer_value)
    loc.has_value != 0 && return string(loc.value)
    return nothing
end

# A message that replaces the library's (where its positions, 0-based in C's
# terms, are worded afresh in Julia's), rather than text appended to it.
struct _Reworded
    message::String
end

# Text appended to the message, and the exception that caused the failure
# (one a Communicator's callback threw inside the call): the DirmnError is
# thrown while handling it, so that the exception stack
# (Base.catch_stack()) holds both and an uncaught error prints the cause.
struct _CausedBy
    text::String
    cause::Any
end

# `hint`, when given, maps the failure's location (a dirmn_error_location, or
# nothing) to text appended to the message, to a _Reworded message, to a
# _CausedBy, or to nothing.
@noinline function _throw_status(status::Integer, ctxptr::Ptr{Cvoid}, hint)
    msg = _last_error(ctxptr)
    cause = nothing
    if hint !== nothing
        extra = hint(_last_error_location(ctxptr))
        if extra isa _Reworded
            msg = extra.message
        elseif extra isa _CausedBy
            msg = string(msg, extra.text)
            cause = extra.cause
        elseif extra !== nothing
            msg = string(msg, extra)
        end
    end
    err = DirmnError(status, msg)
    cause === nothing && throw(err)
    try
        throw(cause)
    catch
        throw(err)
    end
end

# For the checks the C ABI cannot make itself (see DirmnError).
_mismatch(msg::AbstractString) =
    throw(DirmnError(LibDirmn.DIRMN_ERROR_DIMENSION_MISMATCH, msg))
