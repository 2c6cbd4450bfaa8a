# What the fits share: row weights, progress callbacks, the counts kept for a
# whole call, and the keywords of the one vocabulary (bindings/names.tsv).

function _weights(c::DirmnCounts, weights)
    weights === nothing && return nothing
    length(weights) == c.nobs ||
        _mismatch("weights has length $(length(weights)) but the counts have $(c.nobs) observations")
    w, s = _native_vector(_check_real(weights, "weights"), Float64)
    # The library reads weights contiguously.
    return s == 1 ? w : Vector{Float64}(w)
end

_wptr(w) = w === nothing ? Ptr{Cdouble}(C_NULL) : pointer(w)

# --- progress callbacks ------------------------------------------------------

mutable struct _Progress
    f::Any
    err::Any   # the exception the callback threw, if any
end

# Called by the library from the calling thread once after each iteration
# (of a fit, or an EM iteration of a mixture), with the log pmf; both
# callbacks have the C type
# dirmn_progress_fn. An exception must not unwind through C: it is kept and
# rethrown after the library has returned (it cancels the call).
function _progress_callback(iteration::Cint, loglik::Cdouble, change::Cdouble,
                            data::Ptr{Cvoid})::Cint
    p = unsafe_pointer_to_objref(data)::_Progress
    try
        # The library counts iterations from 1 (after each iteration).
        r = p.f(Int(iteration), loglik, change)
        return r === true ? Cint(1) : Cint(0)
    catch e
        p.err = e
        return Cint(1)
    end
end

_progress_pointer() =
    @cfunction(_progress_callback, Cint, (Cint, Cdouble, Cdouble, Ptr{Cvoid}))

# As _oneshot, but the counts object is kept for the whole call of `f` (the
# histograms the library caches on it are only valid while it lives).
_with_counts(f, X::DirmnCounts, obsdim, real_valued, backend, device, context) =
    f(X, context === nothing ? X.context : context)
_with_counts(f, X, obsdim, real_valued, backend, device, context) =
    _oneshot(f, X, obsdim, real_valued, backend, device, context)

function _cint(x::Integer, name::AbstractString)
    typemin(Cint) <= x <= typemax(Cint) ||
        throw(ArgumentError("$name = $x does not fit a C int"))
    return Cint(x)
end

# A keyword renamed for the one vocabulary (bindings/names.tsv): the old name
# is still accepted, with a deprecation warning shown whatever --depwarn says
# (a name carried over from another binding or an older version should be
# seen, not silently taken); giving both is an error.
function _renamed(new, old, newname::Symbol, oldname::Symbol, fn::Symbol)
    old === nothing && return new
    new === nothing ||
        throw(ArgumentError("$fn: give `$newname` or its old name `$oldname`, not both"))
    Base.depwarn("$fn: the keyword `$oldname` is deprecated, use `$newname` (the name in " *
                 "every dirmn binding)", fn; force = true)
    return old
end

# The library's defaults where a keyword is left at `nothing`.
_or(x, default) = x === nothing ? default : x
