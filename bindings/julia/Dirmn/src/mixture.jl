# Dirichlet-multinomial mixtures (EM clustering) over dirmn_mixture_*.

"""
    DirMultMixture

A fitted mixture of k Dirichlet-multinomial components, as returned by
[`fit_mixture`](@ref). Its fields:

- `alpha::Matrix{Float64}`: V × k, the parameter vector of component `j` in
  column `j` (the layout [`loglik`](@ref) takes for K parameter vectors).
  Every entry is positive and finite: under `:ml` a category a component
  never sees gets a tiny α (its MLE is the limit α → 0), and a component
  whose data show no overdispersion gets its proportions at a very large
  precision (the multinomial limit);
- `weights::Vector{Float64}`: the mixing weights π (k entries, summing to 1);
- `responsibilities::Matrix{Float64}`: nobs × k, P(component j | observation
  b) for the fitted observations (an observation of all zeros gets π);
- `loglik::Float64`: the mixture log-likelihood of the fitted data, with the
  multinomial coefficients (weighted by the observation weights, if any);
- `objective::Float64`: what EM minimised: `-loglik` under `:ml`, and under
  `:dmn` DirichletMultinomial::dmn's `-loglik - Σ log prior`;
- `aic`, `bic`, `laplace` (`Float64`): the criteria the library reports
  (see [`aic`](@ref), [`bic`](@ref), [`laplace`](@ref) for their scales);
- `iterations::Int`, `converged::Bool`: EM iterations of the best start and
  whether it met the tolerance;
- `k::Int` (components), `nobs::Int` (observations of the fitted table,
  rows of zeros included), `ncategories::Int` (V), `nparams::Int`
  (P = k V + k - 1, see [`dof`](@ref));
- `objective_kind::Symbol`: `:ml` or `:dmn`;
- `start::Int`: which random start (1-based) gave the best objective;
- `obsdim::Int`: the orientation of the fitted data, the default for new
  data in [`posterior`](@ref) and [`assignments`](@ref);
- `context::DirmnContext`: where new data given as arrays are uploaded.

Everything is copied out of the library when the fit returns; the library's
mixture object is kept only to assign new data ([`posterior`](@ref),
[`assignments`](@ref) with data). It is freed by the finalizer or, sooner,
by `close(m)` (idempotent); the fields stay readable after that.

Accessors: [`loglikelihood`](@ref), [`aic`](@ref), [`bic`](@ref),
[`laplace`](@ref), [`nobs`](@ref), [`dof`](@ref), [`ncomponents`](@ref),
[`ncategories`](@ref), [`probs`](@ref), [`components`](@ref),
[`assignments`](@ref), [`posterior`](@ref), [`logpdf`](@ref).
"""
mutable struct DirMultMixture
    ptr::Ptr{Cvoid}
    context::DirmnContext
    alpha::Matrix{Float64}
    weights::Vector{Float64}
    responsibilities::Matrix{Float64}
    loglik::Float64
    objective::Float64
    aic::Float64
    bic::Float64
    laplace::Float64
    iterations::Int
    converged::Bool
    k::Int
    nobs::Int
    ncategories::Int
    nparams::Int
    objective_kind::Symbol
    start::Int
    obsdim::Int
    closing::Threads.Atomic{Bool}   # set by close() before it waits for the lock
end

# Frees the handle; the caller holds the lock of the mixture's context,
# which every call using the handle holds too (see _with).
function _free_mixture(m::DirMultMixture)
    p = m.ptr
    m.ptr = C_NULL
    p == C_NULL || LibDirmn.dirmn_mixture_destroy(p)
    return nothing
end

_finalize_mixture(m::DirMultMixture) =
    m.ptr == C_NULL ? nothing :
    _finalize_under(_free_mixture, m, m.context.lock, _finalize_mixture, true)

"""
    close(m::DirMultMixture)

Frees the library's mixture object now instead of at garbage collection.
Idempotent. Safe while another task or thread assigns data with `m`:
`close` waits for that call to end (it takes the lock of the mixture's
context). From a progress callback of a call on the mixture's context the
library frees it when that call returns. The fitted values (all fields) stay available; assigning new data
([`posterior`](@ref), [`assignments`](@ref) with data) then raises a
[`DirmnError`](@ref) (`DIRMN_ERROR_NULL_POINTER`).
"""
function Base.close(m::DirMultMixture)
    m.closing[] = true   # as close(::DirmnCounts)
    lock(m.context.lock) do
        _free_mixture(m)
    end
    return nothing
end

"""
    isopen(m::DirMultMixture) -> Bool

Whether `m` still holds the library's mixture object (it has not been
closed), which assigning new data needs.
"""
Base.isopen(m::DirMultMixture) = m.ptr != C_NULL && !m.closing[]

"""
    MixtureSelection

The result of [`fit_mixture`](@ref) over several numbers of components.
Fields:

- `ks::Vector{Int}`: the numbers of components tried, in the order given;
- `fits::Vector{DirMultMixture}`: the fit for each of `ks`;
- `criterion::Symbol`: `:bic`, `:aic` or `:laplace`, the criterion used;
- `scores::Vector{Float64}`: that criterion for each fit (smaller is better);
- `k::Int`: the selected number of components (the smallest `k` among
  ties);
- `best::DirMultMixture`: its fit (one of `fits`).

`close(s)` closes every fit.
"""
struct MixtureSelection
    ks::Vector{Int}
    fits::Vector{DirMultMixture}
    criterion::Symbol
    scores::Vector{Float64}
    k::Int
    best::DirMultMixture
end

Base.close(s::MixtureSelection) = (foreach(close, s.fits); nothing)

# --- options --------------------------------------------------------------

function _objective_code(objective::Symbol)
    objective === :ml && return LibDirmn.DIRMN_MIXTURE_ML
    objective === :dmn && return LibDirmn.DIRMN_MIXTURE_DMN
    throw(ArgumentError("objective must be :ml or :dmn, not :$objective"))
end

function _init_code(init::Symbol)
    init === :kmeanspp && return LibDirmn.DIRMN_INIT_KMEANSPP
    init === :kmeans && return LibDirmn.DIRMN_INIT_KMEANS
    init === :soft_kmeans && return LibDirmn.DIRMN_INIT_SOFT_KMEANS
    throw(ArgumentError("init must be :kmeanspp, :kmeans or :soft_kmeans, not :$init"))
end

function _cint(x::Integer, name::AbstractString)
    typemin(Cint) <= x <= typemax(Cint) ||
        throw(ArgumentError("$name = $x does not fit a C int"))
    return Cint(x)
end

# What fit_mixture passes to the library, checked on the Julia side only
# where the C ABI cannot see the problem (symbols, integer ranges); values
# the library checks (k, starts, maxiter, tol, weights) are left to it so
# that its status and message reach the caller.
struct _MixtureSettings
    objective::Symbol
    objective_code::Cint
    init_code::Cint
    starts::Cint
    seed::UInt64
    maxiter::Cint
    tol::Float64
end

function _mixture_settings(objective, init, starts, seed, tol, maxiter)
    seed >= 0 || throw(ArgumentError("seed must be a non-negative integer, not $seed"))
    seed <= typemax(UInt64) || throw(ArgumentError("seed = $seed does not fit 64 bits"))
    return _MixtureSettings(objective, _objective_code(objective), _init_code(init),
                            _cint(starts, "starts"), UInt64(seed), _cint(maxiter, "maxiter"),
                            Float64(tol))
end

# --- fitting -----------------------------------------------------------------

function _mixture_info(h::Ptr{Cvoid})
    r = Ref(LibDirmn.empty_mixture_info())
    # dirmn_mixture_get_info takes no context: failures go to the thread's slot.
    _check(LibDirmn.dirmn_mixture_get_info(h, r), C_NULL)
    return r[]
end

# Copies everything out of a freshly fitted handle into a DirMultMixture that
# owns it; the handle is destroyed if copying fails.
function _mixture_from_handle(h::Ptr{Cvoid}, ctx::DirmnContext, objective::Symbol,
                              obsdim::Int)
    local m
    try
        i = _mixture_info(h)
        k, n, V = Int(i.k), Int(i.rows), Int(i.cols)
        alpha = Matrix{Float64}(undef, V, k)
        w = Vector{Float64}(undef, k)
        # Component j, category v to alpha[v, j]: stride_k = V, stride_v = 1.
        _check(LibDirmn.dirmn_mixture_get_params(h, alpha, Int64(V), Int64(1), w), C_NULL)
        R = Matrix{Float64}(undef, n, k)
        _check(LibDirmn.dirmn_mixture_get_responsibilities(h, R, Int64(1), Int64(max(n, 1))),
               C_NULL)
        m = DirMultMixture(h, ctx, alpha, w, R, i.loglik, i.objective, i.aic, i.bic, i.laplace,
                           Int(i.iterations), i.converged != 0, k, n, V, Int(i.parameters),
                           objective, Int(i.start) + 1, obsdim, Threads.Atomic{Bool}(false))
    catch
        LibDirmn.dirmn_mixture_destroy(h)
        rethrow()
    end
    finalizer(_finalize_mixture, m)
    return m
end

function _fit_mixture(c::DirmnCounts, ctx::DirmnContext, k::Integer, s::_MixtureSettings,
                      weights, progress)
    k <= typemax(Cint) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "fit_mixture: k ($k) must be between 1 and the number of " *
                         "observations with counts ($(c.nobs) observations)"))
    kc = Cint(max(k, typemin(Cint)))
    w = _weights(c, weights)
    prog = progress === nothing ? nothing : _Progress(progress, nothing)
    cb = progress === nothing ? C_NULL : _progress_pointer()
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve w prog begin
        oref = Ref(LibDirmn.empty_mixture_options())
        LibDirmn.dirmn_mixture_options_init_sized(oref, sizeof(LibDirmn.dirmn_mixture_options))
        o = oref[]
        oref[] = LibDirmn.dirmn_mixture_options(
            o.size, s.objective_code, s.init_code, s.starts, s.seed, s.maxiter, s.tol, _wptr(w),
            cb, prog === nothing ? C_NULL : pointer_from_objref(prog))
        # The copies out of the new handle are calls on the context too:
        # under its lock, or a task computing on it would see them collide.
        return _with(ctx, c.context) do p
            st = LibDirmn.dirmn_mixture_fit(p, _handle(c), kc, oref, out)
            if st != 0 && prog !== nothing && prog.err !== nothing
                throw(prog.err)
            end
            _check(st, p, _call_hint(c, ctx))
            _mixture_from_handle(out[], ctx, s.objective, c.obsdim)
        end
    end
end

"""
    fit_mixture(X, k::Integer; objective = :ml, init = :kmeanspp, starts = 3,
                seed = 1, tol = 1e-9, maxiter = 1000, weights = nothing,
                obsdim = 2, backend = :auto, device = 0, context = nothing,
                real_valued = false, progress = nothing) -> DirMultMixture

Fits a mixture of `k` Dirichlet-multinomial components to the observations
of `X` by EM (Holmes, Harris & Quince 2012: the clustering of
Bioconductor's DirichletMultinomial::dmn, and of the R package's
`dirmn_mixture`), and returns a [`DirMultMixture`](@ref).

`X` is anything [`DirmnCounts`](@ref) accepts (a dense or sparse matrix,
one observation per column by default; `obsdim = 1` for one per row), or a
prepared `DirmnCounts`. Each EM iteration evaluates the observations × k
log-likelihoods in one pass of the library and refits every component's α
by Newton's method on responsibility-weighted count histograms.
Observations of all zeros and categories without counts are allowed; a
component that loses all its observations is re-seeded.

Keywords:
- `objective`: `:ml` (plain maximum likelihood) or `:dmn` (dmn's MAP fit,
  a Gamma(0.1, 0.1) prior on every α as a density on log α, with dmn's
  scale for the criteria);
- `init`: `:kmeanspp` (k-means++ seeding, then k-means on the observations'
  proportions), `:kmeans` (random observations as seeds) or `:soft_kmeans`
  (dmn's initialisation: soft k-means, stiffness 50, from random labels);
- `starts`: random starts, the one with the best objective is kept;
- `seed`: a non-negative integer; the same seed gives the same fit, on every
  backend;
- `tol`, `maxiter`: EM stops when the objective changes by less than
  `tol × |objective|`, or after `maxiter` iterations per start
  (`converged = false` then, not an error);
- `weights`: one finite weight ≥ 0 per observation (default all 1);
- `progress`: `nothing`, or a function `(iteration, loglik, change)` called
  after every EM iteration of every start (`iteration` counts from 1 within
  a start; `change` is what the library reports as the largest change of a
  responsibility); returning `true` cancels the fit with a
  [`DirmnError`](@ref) `DIRMN_ERROR_CANCELLED`, and an exception it throws
  cancels the fit and is rethrown. It runs inside the library's call, so it
  must not compute with the same context (such calls raise
  `DIRMN_ERROR_CONTEXT_IN_USE`); it may `close` counts, mixtures and the
  context itself, which read as closed at once and are freed when the fit
  returns (the fit itself finishes);
- `backend`, `device`, `context`, `real_valued`: as for [`loglik`](@ref).

Invalid arguments raise a [`DirmnError`](@ref) with the library's status:
`k < 1` or `k` above the number of observations with counts, `starts < 1`,
`maxiter < 1`, `tol ≤ 0` (`DIRMN_ERROR_INVALID_ARGUMENT`); a negative or
non-finite weight (`DIRMN_ERROR_INVALID_PARAMETER`); weights of the wrong
length (`DIRMN_ERROR_DIMENSION_MISMATCH`).

```julia
m = fit_mixture(X, 3)                    # X: categories × observations
assignments(m)                           # cluster of each observation
posterior(m, Xnew)                       # nobs × 3 membership probabilities
bic(m), aic(m), loglikelihood(m)
```

    fit_mixture(X, ks::AbstractVector{<:Integer}; select = :bic, kwargs...)
        -> MixtureSelection

Fits one mixture for each number of components in `ks` (e.g. `1:5`),
uploading `X` once, and selects the `k` with the smallest criterion
`select` (`:bic`, `:aic` or `:laplace`); returns a
[`MixtureSelection`](@ref) with all fits and the selected one.
"""
function fit_mixture(X, k::Integer; objective::Symbol = :ml, init::Symbol = :kmeanspp,
                     starts::Integer = 3, seed::Integer = 1, tol::Real = 1e-9,
                     maxiter::Integer = 1000, weights = nothing, obsdim::Integer = 2,
                     backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false,
                     progress = nothing)
    s = _mixture_settings(objective, init, starts, seed, tol, maxiter)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        _fit_mixture(c, ctx, k, s, weights, progress)
    end
end

const _CRITERIA = (:bic, :aic, :laplace)

function fit_mixture(X, ks::AbstractVector{<:Integer}; select::Symbol = :bic,
                     objective::Symbol = :ml, init::Symbol = :kmeanspp, starts::Integer = 3,
                     seed::Integer = 1, tol::Real = 1e-9, maxiter::Integer = 1000,
                     weights = nothing, obsdim::Integer = 2, backend::Symbol = :auto,
                     device::Integer = 0, context::Union{Nothing,DirmnContext} = nothing,
                     real_valued::Bool = false, progress = nothing)
    select in _CRITERIA ||
        throw(ArgumentError("select must be :bic, :aic or :laplace, not :$select"))
    isempty(ks) && throw(ArgumentError("no numbers of components given"))
    s = _mixture_settings(objective, init, starts, seed, tol, maxiter)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    fits = _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        DirMultMixture[_fit_mixture(c, ctx, k, s, weights, progress) for k in ks]
    end
    scores = Float64[getfield(m, select) for m in fits]
    i = argmin(scores)
    return MixtureSelection(collect(Int, ks), fits, select, scores, fits[i].k, fits[i])
end

# --- accessors -----------------------------------------------------------------

"""
    loglikelihood(m::DirMultMixture) -> Float64

The mixture log-likelihood of the fitted data, `Σ_b w_b log Σ_j π_j p_j(x_b)`
with the full Dirichlet-multinomial pmf `p_j` (multinomial coefficients
included) and the observation weights `w_b` (1 without weights). Under
`objective = :dmn` this is still the plain log-likelihood; the prior enters
`m.objective`.

    loglikelihood(m::DirMultMixture, X; obsdim = m.obsdim, kwargs...) -> Float64

The same for the observations of new data `X` (unweighted): the sum of
[`logpdf`](@ref)`(m, X)`.
"""
loglikelihood(m::DirMultMixture) = m.loglik
loglikelihood(m::DirMultMixture, X; kwargs...) = sum(logpdf(m, X; kwargs...))

"""
    aic(m::DirMultMixture) -> Float64

Akaike's criterion as the library reports it. Under `objective = :ml` on
R's scale, `-2 loglik + 2P`; under `:dmn` on DirichletMultinomial::dmn's
scale, `objective + P` (P = [`dof`](@ref)`(m)`). Smaller is better.
"""
aic(m::DirMultMixture) = m.aic

"""
    bic(m::DirMultMixture) -> Float64

The Bayesian information criterion as the library reports it. Under
`objective = :ml`, `-2 loglik + P log n`; under `:dmn` on dmn's scale,
`objective + P/2 log n`, where P = [`dof`](@ref)`(m)` and n is the number
of fitted observations (the sum of the observation weights when weights were
given). Smaller is better.
"""
bic(m::DirMultMixture) = m.bic

"""
    laplace(m::DirMultMixture) -> Float64

The Laplace approximation to the model evidence, as dmn reports it:
`objective + ½ log det H - P/2 log 2π`, with H the Hessian of the objective
in log α (block diagonal over components); under `objective = :ml` on the
`-2 log` scale (twice that). Smaller is better. Under `:ml` there is no
prior, so this is not an approximation of a proper evidence and tends to
favour more components; choose k by it under `:dmn` (as dmn does), by
[`bic`](@ref) under `:ml`.
"""
laplace(m::DirMultMixture) = m.laplace

"""
    nobs(m::DirMultMixture) -> Int

Number of observations of the fitted table (observations of all zeros
included).
"""
nobs(m::DirMultMixture) = m.nobs

"""
    dof(m::DirMultMixture) -> Int

Number of free parameters, P = k V + k - 1 (k α vectors of length V and
k - 1 free mixing weights), as the criteria count them.
"""
dof(m::DirMultMixture) = m.nparams

"""
    ncomponents(m::DirMultMixture) -> Int

The number of components k.
"""
ncomponents(m::DirMultMixture) = m.k

"""
    ncategories(m::DirMultMixture) -> Int

The number of categories V (the length of each component's α).
"""
ncategories(m::DirMultMixture) = m.ncategories

"""
    probs(m::DirMultMixture) -> Vector{Float64}

The mixing weights π (a copy of `m.weights`), as Distributions.jl's `probs`
of a mixture model.
"""
probs(m::DirMultMixture) = copy(m.weights)

"""
    components(m::DirMultMixture) -> Vector{DirMult}

The k fitted components as [`DirMult`](@ref) distributions.
"""
components(m::DirMultMixture) = [DirMult(m.alpha[:, j]) for j in 1:m.k]

_rowargmax(R::AbstractMatrix) = [argmax(view(R, b, :)) for b in 1:size(R, 1)]

"""
    assignments(m::DirMultMixture) -> Vector{Int}
    assignments(m::DirMultMixture, X; obsdim = m.obsdim, kwargs...)

The hard clustering, as Clustering.jl's `assignments`: for each fitted
observation the component (1..k) of largest responsibility; with data `X`,
the component of largest [`posterior`](@ref) probability for each of its
observations (an `Int` when `X` is a single observation, a vector).
"""
assignments(m::DirMultMixture) = _rowargmax(m.responsibilities)
function assignments(m::DirMultMixture, X; kwargs...)
    P = posterior(m, X; kwargs...)
    return P isa AbstractVector ? argmax(P) : _rowargmax(P)
end

_mixture_hint(m::DirMultMixture, c::DirmnCounts, ctx::DirmnContext) =
    _call_hint(c, ctx, loc -> isopen(m) ? nothing : " [this DirMultMixture was closed]")

function _posterior(m::DirMultMixture, c::DirmnCounts, ctx::DirmnContext)
    n, k = c.nobs, m.k
    out = Matrix{Float64}(undef, n, k)
    _with(ctx, c.context, m.context) do p
        st = LibDirmn.dirmn_mixture_assign(p, _handle(m), _handle(c), out, Int64(1), Int64(max(n, 1)))
        _check(st, p, _mixture_hint(m, c, ctx))
    end
    return c.vector ? vec(out) : out
end

# The context new data go to: a DirmnCounts computes on its own context,
# arrays are uploaded to the mixture's.
_new_data_context(m::DirMultMixture, X, context) =
    context !== nothing ? context : X isa DirmnCounts ? X.context : m.context

"""
    posterior(m::DirMultMixture, X; obsdim = m.obsdim, context = nothing,
              real_valued = false) -> Matrix{Float64}

Membership probabilities of new observations: an nobs × k matrix whose row
`b` is P(component j | observation b) under the fitted α and π (a length-k
vector when `X` is a single observation, a vector). `X` is anything
[`DirmnCounts`](@ref) accepts, in the orientation `obsdim` (by default that
of the fitted data), uploaded to the mixture's context; or a `DirmnCounts`,
evaluated on its own context. It must have the fitted number of categories
(else `DIRMN_ERROR_DIMENSION_MISMATCH`). For the fitted observations
themselves, `m.responsibilities` holds the same.
"""
function posterior(m::DirMultMixture, X; obsdim::Integer = m.obsdim,
                   context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    if X isa AbstractMatrix && _nobs_of(X, obsdim) == 0
        V = _ncat_of(X, obsdim)
        V == m.ncategories ||
            _mismatch("the data have $V categories, the mixture was fitted to $(m.ncategories)")
        return Matrix{Float64}(undef, 0, m.k)
    end
    ctx = _new_data_context(m, X, context)
    return _with_counts(X, obsdim, real_valued, :auto, 0, ctx) do c, cctx
        _posterior(m, c, cctx)
    end
end

"""
    logpdf(m::DirMultMixture, X; obsdim = m.obsdim, context = nothing,
           real_valued = false)

The mixture log pmf `log Σ_j π_j p_j(x)` of each observation of `X` (a
`Float64` for a single observation, a vector), with the full
Dirichlet-multinomial pmf `p_j` of component j. `X` as for
[`posterior`](@ref).
"""
function logpdf(m::DirMultMixture, X; obsdim::Integer = m.obsdim,
                context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    ctx = _new_data_context(m, X, context)
    L = X isa DirmnCounts ? loglik(X, m.alpha; full = true, context = ctx) :
        loglik(X, m.alpha; full = true, obsdim = obsdim, context = ctx,
               real_valued = real_valued)
    logpi = log.(m.weights)
    lse(row) = begin
        t = row .+ logpi
        mx = maximum(t)
        isfinite(mx) ? mx + log(sum(exp.(t .- mx))) : mx
    end
    return L isa AbstractVector ? lse(L) : [lse(view(L, b, :)) for b in 1:size(L, 1)]
end

# --- display -----------------------------------------------------------------

_fmt(x::Real) = string(round(x; sigdigits = 6))

function Base.show(io::IO, m::DirMultMixture)
    print(io, "DirMultMixture(k=", m.k, ", V=", m.ncategories, ", nobs=", m.nobs, ", :",
          m.objective_kind, ", loglik=", _fmt(m.loglik),
          m.converged ? ", converged" : ", not converged", isopen(m) ? "" : ", closed", ")")
end

function Base.show(io::IO, ::MIME"text/plain", m::DirMultMixture)
    println(io, "DirMultMixture: ", m.k, "-component Dirichlet-multinomial mixture (objective :",
            m.objective_kind, ")")
    println(io, "  data        ", m.nobs, " observations × ", m.ncategories, " categories")
    println(io, "  loglik      ", _fmt(m.loglik), "   objective ", _fmt(m.objective))
    println(io, "  criteria    aic ", _fmt(m.aic), "   bic ", _fmt(m.bic), "   laplace ",
            _fmt(m.laplace), "   (P = ", m.nparams, ")")
    println(io, "  EM          ", m.iterations, " iterations, ",
            m.converged ? "converged" : "NOT converged", " (best start: ", m.start, ")")
    sizes = zeros(Int, m.k)
    for j in assignments(m)
        sizes[j] += 1
    end
    print(io, "  component   weight      precision   observations")
    for j in 1:m.k
        print(io, "\n  ", rpad(j, 12), rpad(_fmt(m.weights[j]), 12),
              rpad(_fmt(sum(view(m.alpha, :, j))), 12), sizes[j])
    end
    isopen(m) || print(io, "\n  (closed: new data can no longer be assigned)")
end

function Base.show(io::IO, s::MixtureSelection)
    print(io, "MixtureSelection(ks=", s.ks, ", ", s.criterion, " selects k=", s.k, ")")
end

function Base.show(io::IO, ::MIME"text/plain", s::MixtureSelection)
    println(io, "MixtureSelection: k = ", s.k, " by ", s.criterion, " (smallest is best)")
    print(io, "  k     loglik        aic           bic           laplace       converged")
    for (k, m) in zip(s.ks, s.fits)
        print(io, "\n  ", rpad(k, 6), rpad(_fmt(m.loglik), 14), rpad(_fmt(m.aic), 14),
              rpad(_fmt(m.bic), 14), rpad(_fmt(m.laplace), 14), m.converged,
              m === s.best ? "   <-" : "")
    end
end
