function _param_code(param::Symbol)
    param === :alpha && return LibDirmn.DIRMN_PARAM_ALPHA
    param === :logalpha && return LibDirmn.DIRMN_PARAM_LOG_ALPHA
    throw(ArgumentError("param must be :alpha or :logalpha, not :$param"))
end

# The log pmf is the library's default; DIRMN_KERNEL leaves out the multinomial
# coefficient.
_flags(full::Bool) = full ? UInt32(0) : LibDirmn.DIRMN_KERNEL

_nobs_of(X::AbstractVector, obsdim) = 1
_nobs_of(X::AbstractMatrix, obsdim) = obsdim == 2 ? size(X, 2) : size(X, 1)
_nobs_of(X, obsdim) = 1

_ncat_of(X::AbstractVector, obsdim) = length(X)
_ncat_of(X::AbstractMatrix, obsdim) = obsdim == 2 ? size(X, 1) : size(X, 2)

function _context(context, backend::Symbol, device::Integer)
    context === nothing || return context::DirmnContext
    return default_context(backend, device)
end

# --- the two library calls ---------------------------------------------------

# Per-observation parameters (checked real) in native memory for the
# row-wise entry points: the array and its strides between observations and
# between categories, as the counts' obsdim lays them out.
function _rowwise_params(c::DirmnCounts, P)
    _check_real(P, "A")
    if P isa AbstractVector
        Pn, sv = _native_vector(P, Float64)
        return Pn, max(length(P) * sv, 1), sv
    end
    Pn, s1, s2 = _native_matrix(P, Float64)
    srow, sv = c.obsdim == 2 ? (s2, s1) : (s1, s2)
    return Pn, srow, sv
end

function _call_loglik(c::DirmnCounts, ctx::DirmnContext, k::Int, Pn, sk, sv, param, full,
                      out, out_sk, hint)
    _with(ctx, c.context) do p
        GC.@preserve Pn out begin
            st = LibDirmn.dirmn_loglik(p, _handle(c), Int64(k), Ptr{Cdouble}(pointer(Pn)),
                                       Int64(sk), Int64(sv), _param_code(param), _flags(full),
                                       pointer(out), Int64(1), Int64(out_sk))
        end
        _check(st, p, hint)
    end
    return out
end

# The library locates a parameter by 0-based (vector, index) for
# dirmn_loglik and dirmn_loglik_sum, and (row, index) for the row-wise
# functions, and a whole vector (whose sum overflows) by its vector or row
# alone (dirmn_last_error_location); add the Julia index into the array the
# caller passed.
function _param_hint(c::DirmnCounts, ctx::DirmnContext, P, rowwise::Bool)
    more = function (loc)
        loc === nothing && return nothing
        _argument(loc) == "params" || return nothing
        jj = rowwise ? loc.row : loc.vector
        jj < 0 && return nothing
        j = Int(jj) + 1
        if loc.index < 0
            # A whole vector (its sum overflows): a column or row of P.
            P isa AbstractVector && return nothing
            rowwise && c.obsdim == 1 && return " [A[$j, :] in Julia]"
            return rowwise ? " [A[:, $j] in Julia]" : " [α[:, $j] in Julia]"
        end
        v = Int(loc.index) + 1
        P isa AbstractVector && return " [parameter $v in Julia]"
        rowwise && c.obsdim == 1 && return " [A[$j, $v] in Julia]"
        return rowwise ? " [A[$v, $j] in Julia]" : " [α[$v, $j] in Julia]"
    end
    return _call_hint(c, ctx, more)
end

function _loglik(c::DirmnCounts, ctx::DirmnContext, P::AbstractVector, param, full)
    V = c.ncat
    length(P) == V ||
        _mismatch("the parameter vector has length $(length(P)) but the counts have $V " *
                  "categories")
    Pn, s = _native_vector(_check_real(P, "α"), Float64)
    out = Vector{Float64}(undef, c.nobs)
    _call_loglik(c, ctx, 1, Pn, max(V * s, 1), s, param, full, out, max(c.nobs, 1),
                 _param_hint(c, ctx, P, false))
    return c.vector ? out[1] : out
end

function _loglik(c::DirmnCounts, ctx::DirmnContext, P::AbstractMatrix, param, full)
    V = c.ncat
    size(P, 1) == V ||
        _mismatch("the parameter matrix is $(size(P, 1))×$(size(P, 2)) but must be " *
                  "categories × K = $V × K (one parameter vector per column)")
    K = size(P, 2)
    out = Matrix{Float64}(undef, c.nobs, K)
    if K > 0
        Pn, s1, s2 = _native_matrix(_check_real(P, "α"), Float64)
        _call_loglik(c, ctx, K, Pn, s2, s1, param, full, out, max(c.nobs, 1),
                     _param_hint(c, ctx, P, false))
    end
    return c.vector ? vec(out) : out
end

function _loglik_rowwise(c::DirmnCounts, ctx::DirmnContext, P::AbstractVecOrMat, param, full)
    size(P) == size(c) ||
        _mismatch("the parameters are $(join(size(P), "×")) but must have the size of the " *
                  "counts, $(join(size(c), "×")) (one parameter vector per observation)")
    Pn, srow, sv = _rowwise_params(c, P)
    out = Vector{Float64}(undef, c.nobs)
    _with(ctx, c.context) do p
        GC.@preserve Pn out begin
            st = LibDirmn.dirmn_loglik_rowwise(p, _handle(c), Ptr{Cdouble}(pointer(Pn)), Int64(srow),
                                               Int64(sv), _param_code(param), _flags(full),
                                               pointer(out), Int64(1))
        end
        _check(st, p, _param_hint(c, ctx, P, true))
    end
    return c.vector ? out[1] : out
end

# Uploads X for one evaluation and frees it at once rather than leaving the
# copy (possibly device memory) to the garbage collector.
function _oneshot(f, X, obsdim, real_valued, backend, device, context)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    ctx = _context(context, backend, device)
    c = _counts(ctx, X, Int(obsdim), _options(real_valued, :auto))
    try
        return f(c, ctx)
    finally
        close(c)
    end
end

# --- public API ----------------------------------------------------------------

"""
    loglik(X, α; obsdim = 2, param = :alpha, full = true,
           backend = :auto, device = 0, context = nothing, real_valued = false)

Dirichlet-multinomial log-likelihood of each observation of `X` (see
[`DirmnCounts`](@ref) for the accepted inputs and `obsdim`) under the
parameter `α`:

- `α` a vector of length V (the number of categories): one value per
  observation, a `Vector{Float64}` (a `Float64` when `X` is a single
  observation, a vector);
- `α` a V × K matrix, one parameter vector per COLUMN (whatever `obsdim`):
  the nobs × K matrix of every observation under every vector, as a
  mixture's E step needs (a length-K vector for a single observation).

For one parameter vector per observation use [`loglik_rowwise`](@ref).

`param = :logalpha` takes log α instead of α. `full = true` (the default)
gives the log pmf, multinomial coefficients included (as [`logpdf`](@ref));
`full = false` gives the kernel, leaving out the multinomial coefficient
`lgamma(N + 1) - Σ_v lgamma(n_v + 1)`, which does not depend on α. An
observation of all zeros has log-likelihood 0 either way.

`X` may also be a [`DirmnCounts`](@ref), prepared once; it is then evaluated
on its own context (`obsdim`, `backend`, `device` and `real_valued` are
ignored; passing another `context` raises `DIRMN_ERROR_WRONG_CONTEXT`).
Otherwise `X` is uploaded to `context` (default: `default_context(backend,
device)`) for this call only.

Invalid counts or parameters raise a [`DirmnError`](@ref).

```julia
X = [1 0; 2 3; 0 4]                  # 3 categories × 2 observations
loglik(X, [0.5, 1.0, 2.0])           # 2 values: the log pmf of each
loglik(X, [0.5, 1.0, 2.0]; full = false)  # the kernel (no multinomial coefficient)
loglik(X', [0.5, 1.0, 2.0]; obsdim = 1)  # the same, observations as rows
loglik(X, [0.5 1; 1 1; 2 1])         # 2 × 2: observations × vectors
```
"""
function loglik(X, P::AbstractVecOrMat; obsdim::Integer = 2, param::Symbol = :alpha,
                full::Bool = true, backend::Symbol = :auto, device::Integer = 0,
                context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    _param_code(param)
    if X isa AbstractMatrix && _nobs_of(X, obsdim) == 0
        # The library has no empty tables; an empty selection of observations
        # still has a well-defined (empty) answer.
        V = _ncat_of(X, obsdim)
        size(P, 1) == V ||
            _mismatch("the parameters have $(size(P, 1)) categories but the counts have $V")
        return P isa AbstractVector ? Float64[] : Matrix{Float64}(undef, 0, size(P, 2))
    end
    return _oneshot(X, obsdim, real_valued, backend, device, context) do c, ctx
        _loglik(c, ctx, P, param, full)
    end
end

function loglik(c::DirmnCounts, P::AbstractVecOrMat; param::Symbol = :alpha,
                full::Bool = true, context::DirmnContext = c.context, kwargs...)
    return _loglik(c, context, P, param, full)
end

"""
    loglik_rowwise(X, A; obsdim = 2, param = :alpha, full = true,
                   backend = :auto, device = 0, context = nothing,
                   real_valued = false) -> Vector{Float64}

Log-likelihood of each observation of `X` under its own parameter vector
(the building block of Dirichlet-multinomial regression; C's
`dirmn_loglik_rowwise`). `A` has the size and orientation of `X`: with
`obsdim = 2` observation `b` is `X[:, b]` and its parameters `A[:, b]`;
with `obsdim = 1`, `X[b, :]` and `A[b, :]`. For a [`DirmnCounts`](@ref),
`A` has `size(c)` and the orientation `c` was made with. (A V × K matrix
given to [`loglik`](@ref) is K parameter vectors for every observation
instead.) `full = true` (the default) gives the log pmf, `full = false` the
kernel without the multinomial coefficients. Other keywords as for
[`loglik`](@ref).
"""
function loglik_rowwise(X, P::AbstractVecOrMat; obsdim::Integer = 2, param::Symbol = :alpha,
                        full::Bool = true, backend::Symbol = :auto, device::Integer = 0,
                        context::Union{Nothing,DirmnContext} = nothing,
                        real_valued::Bool = false)
    _param_code(param)
    if X isa AbstractMatrix && _nobs_of(X, obsdim) == 0
        size(P) == size(X) ||
            _mismatch("the parameters are $(join(size(P), "×")) but must have the size of " *
                      "the counts, $(join(size(X), "×"))")
        return Float64[]
    end
    return _oneshot(X, obsdim, real_valued, backend, device, context) do c, ctx
        _loglik_rowwise(c, ctx, P, param, full)
    end
end

function loglik_rowwise(c::DirmnCounts, P::AbstractVecOrMat; param::Symbol = :alpha,
                        full::Bool = true, context::DirmnContext = c.context, kwargs...)
    return _loglik_rowwise(c, context, P, param, full)
end

"""
    DirMult(α::AbstractVector)
    DirMult(α::AbstractVector, size::Integer)

The Dirichlet-multinomial distribution with parameter vector `α` (all
positive) over count vectors. Without `size`, over count vectors of any
total: the total N of an observation is taken from the observation, so one
`DirMult` serves observations of different sizes (unlike Distributions.jl's
`DirichletMultinomial(n, α)`, whose N is fixed). With `size` (the number of
trials N, an integer ≥ 0), `DirMult(α, size)` is DM(α, N) itself, which
[`rand`](@ref) draws from and whose moments [`mean`](@ref), [`var`](@ref)
and [`cov`](@ref) give. `α` is copied as `Float64` (an entry that is
missing or not a real number raises a [`DirmnError`](@ref) naming it);
its values, and `size`, are checked by the library when the distribution
is used.

Fields: `alpha::Vector{Float64}`, `size::Union{Nothing,Int}` (`nothing`
without a size). Use with [`logpdf`](@ref), [`loglikelihood`](@ref),
[`rand`](@ref), [`mean`](@ref), [`var`](@ref), [`cov`](@ref).
"""
struct DirMult
    alpha::Vector{Float64}
    size::Union{Nothing,Int}
    DirMult(alpha::AbstractVector{<:Real}, size::Union{Nothing,Integer} = nothing) =
        new(Vector{Float64}(alpha), size === nothing ? nothing : Int(size))
end

# α of another element type (Any, Union{Missing,Float64}) when every entry
# is a real number; else a DirmnError naming the first that is not.
DirMult(alpha::AbstractVector, size::Union{Nothing,Integer} = nothing) =
    DirMult(Vector{Float64}(_check_real(alpha, "α")), size)

Base.length(d::DirMult) = length(d.alpha)
Base.show(io::IO, d::DirMult) =
    print(io, "DirMult(alpha=", d.alpha, d.size === nothing ? "" : ", size=$(d.size)", ")")

"""
    logpdf(d::DirMult, x::AbstractVector; full = true, kwargs...) -> Float64
    logpdf(d::DirMult, X::AbstractMatrix; obsdim = 2, full = true, kwargs...) -> Vector{Float64}
    logpdf(d::DirMult, c::DirmnCounts; full = true) -> Vector{Float64}

Log probability mass of a count vector, or of each observation of a table
(columns by default, as in Distributions.jl; `obsdim = 1` for rows), under
`d`: with `full = true` (the default) the log pmf, multinomial coefficient
included; `full = false` gives the kernel without it, as for
[`loglik`](@ref). Other keywords (`backend`, `device`, `context`,
`real_valued`) as for [`loglik`](@ref).

Named like Distributions.jl's `logpdf`, but this is `Dirmn.logpdf`, not an
extension of Distributions' function (the package depends on nothing outside
the standard library); qualify it as `Dirmn.logpdf` when both are loaded.
"""
logpdf(d::DirMult, x; full::Bool = true, kwargs...) = loglik(x, d.alpha; full = full, kwargs...)

"""
    loglikelihood(d::DirMult, X; obsdim = 2, kwargs...) -> Float64

The sum of [`logpdf`](@ref) over the observations of `X` (a vector is one
observation), as Distributions.jl's `loglikelihood`: the log pmf of the
data, multinomial coefficients included (unless `full = false`).
"""
loglikelihood(d::DirMult, X; kwargs...) = sum(logpdf(d, X; kwargs...))
