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
- `mixture_weights::Vector{Float64}`: the mixing weights π (k entries,
  summing to 1), in decreasing order: the library orders the components by
  decreasing weight, and this package keeps its order (column j of `alpha`,
  of `responsibilities` and label j of [`assignments`](@ref) are the same
  component in every binding). (`m.weights`, the old name, still reads
  them, with a deprecation warning.);
- `responsibilities::Matrix{Float64}`: rows × k, P(component j | observation
  b) for the observations of the fitted table (an observation of all zeros
  gets π); on counts split over a [`Communicator`](@ref), this rank's
  observations';
- `loglik::Float64`: the mixture log-likelihood of the fitted data, with the
  multinomial coefficients (weighted by the observation weights, if any);
- `objective::Float64`: what EM minimised: `-loglik` under `:ml`, and under
  `:dmn` DirichletMultinomial::dmn's `-loglik - Σ log prior`;
- `aic`, `bic`, `laplace` (`Float64`): the criteria the library reports
  (see [`aic`](@ref), [`bic`](@ref), [`laplace`](@ref) for their scales);
- `iterations::Int`, `converged::Bool`: EM iterations of the best start and
  whether it met the tolerance;
- `k::Int` (components), `rows::Int` (observations of the fitted table,
  rows of zeros included; on split counts this rank's), `nobs::Float64`
  (the observations that entered the fit, as the library counts them for
  BIC's n: those with counts and a positive weight, their number or the sum
  of their weights, over the whole table on split counts; see
  [`nobs`](@ref)), `ncategories::Int` (V), `parameters::Int` (the free
  parameters as the library counts them, see [`dof`](@ref); `m.nparams`,
  the old name, still reads it, with a deprecation warning);
- `objective_kind::Symbol`: `:ml` or `:dmn`;
- `start::Int`: which start gave the best objective: 1 .. `starts` the
  random ones; with `grow_from`, `starts + 1` the one grown from it and
  `starts + 2` the k - 1 fit itself (its largest component in two identical
  halves: no start did better);
- `obsdim::Int`: the orientation of the fitted data, the default for new
  data in [`posterior`](@ref) and [`assignments`](@ref);
- `totals::Vector{Float64}`: the fitted table's row totals (every
  observation's, in order; on split counts this rank's), which
  [`simulate`](@ref) draws new tables with;
- `context::DirmnContext`: where new data given as arrays are uploaded.

Everything is copied out of the library when the fit returns; the library's
mixture object is kept only to assign new data ([`posterior`](@ref),
[`assignments`](@ref) with data). It is freed by the finalizer or, sooner,
by `close(m)` (idempotent); the fields stay readable after that.

Accessors: [`loglikelihood`](@ref), [`aic`](@ref), [`bic`](@ref),
[`laplace`](@ref), [`nobs`](@ref), [`dof`](@ref), [`coef`](@ref), [`ncomponents`](@ref),
[`ncategories`](@ref), [`probs`](@ref), [`components`](@ref),
[`assignments`](@ref), [`posterior`](@ref), [`logpdf`](@ref).
"""
mutable struct DirMultMixture
    ptr::Ptr{Cvoid}
    context::DirmnContext
    alpha::Matrix{Float64}
    mixture_weights::Vector{Float64}
    responsibilities::Matrix{Float64}
    loglik::Float64
    objective::Float64
    aic::Float64
    bic::Float64
    laplace::Float64
    iterations::Int
    converged::Bool
    k::Int
    rows::Int
    nobs::Float64
    ncategories::Int
    parameters::Int
    objective_kind::Symbol
    start::Int
    obsdim::Int
    totals::Vector{Float64}
    closing::Threads.Atomic{Bool}   # set by close() before it waits for the lock
end

# The names before the one vocabulary (bindings/names.tsv), still readable.
const _MIXTURE_OLD_FIELDS = (weights = :mixture_weights, nparams = :parameters)

function Base.getproperty(m::DirMultMixture, name::Symbol)
    if name === :weights || name === :nparams
        new = _MIXTURE_OLD_FIELDS[name]
        Base.depwarn("DirMultMixture: the field `$name` is deprecated, use `$new` (the " *
                     "name in every dirmn binding)", :getproperty; force = true)
        return getfield(m, new)
    end
    return getfield(m, name)
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
- `criterion::Symbol`: `:bic`, `:aic` or `:laplace` (only under
  `objective = :dmn`), the criterion used;
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

# The starts, as the README lists them.
const _INITS = (mixed = LibDirmn.DIRMN_INIT_MIXED, kmeanspp = LibDirmn.DIRMN_INIT_KMEANSPP,
                kmeans = LibDirmn.DIRMN_INIT_KMEANS,
                soft_kmeans = LibDirmn.DIRMN_INIT_SOFT_KMEANS)

function _init_code(init::Symbol)
    haskey(_INITS, init) && return _INITS[init]
    throw(ArgumentError("init must be " * join(string.(":", keys(_INITS)), ", ", " or ") *
                        ", not :$init"))
end

# What fit_mixture passes to the library, checked on the Julia side only
# where the C ABI cannot see the problem (symbols, integer ranges); values
# the library checks (k, starts, max_iterations, tolerance, m_step_iterations,
# weights) are left to it so that its status and message reach the caller.
# `nothing`: the library's default.
struct _MixtureSettings
    objective::Symbol
    objective_code::Cint
    init_code::Cint
    starts::Union{Nothing,Cint}
    seed::UInt64
    max_iterations::Union{Nothing,Cint}
    tolerance::Union{Nothing,Float64}
    m_step_iterations::Union{Nothing,Cint}
end

function _mixture_settings(objective, init, starts, seed, tolerance, max_iterations,
                           m_step_iterations)
    seed >= 0 || throw(ArgumentError("seed must be a non-negative integer, not $seed"))
    seed <= typemax(UInt64) || throw(ArgumentError("seed = $seed does not fit 64 bits"))
    return _MixtureSettings(objective, _objective_code(objective), _init_code(init),
                            starts === nothing ? nothing : _cint(starts, "starts"), UInt64(seed),
                            max_iterations === nothing ? nothing :
                            _cint(max_iterations, "max_iterations"),
                            tolerance === nothing ? nothing : Float64(tolerance),
                            m_step_iterations === nothing ? nothing :
                            _cint(m_step_iterations, "m_step_iterations"))
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
                              obsdim::Int, tot::Vector{Float64})
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
        # Components in the library's order (decreasing weight).
        m = DirMultMixture(h, ctx, alpha, w, R, i.loglik, i.objective, i.aic, i.bic, i.laplace,
                           Int(i.iterations), i.converged != 0, k, n, i.observations, V,
                           Int(i.parameters), objective, Int(i.start) + 1, obsdim, tot,
                           Threads.Atomic{Bool}(false))
    catch
        LibDirmn.dirmn_mixture_destroy(h)
        rethrow()
    end
    finalizer(_finalize_mixture, m)
    return m
end

# One fit; `grow_from` (a DirMultMixture with k - 1 components on the same
# table, or nothing) adds a start grown from it. Returns the mixture and the
# iteration limit it ran under.
function _fit_mixture(c::DirmnCounts, ctx::DirmnContext, k::Integer, s::_MixtureSettings,
                      weights, progress, grow_from)
    k <= typemax(Cint) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "fit_mixture: k ($k) must be between 1 and the number of " *
                         "observations with counts ($(c.nobs) observations)"))
    kc = Cint(max(k, typemin(Cint)))
    w = _weights(c, weights)
    tot = _totals_before(c)
    prog = progress === nothing ? nothing : _Progress(progress, nothing)
    cb = progress === nothing ? C_NULL : _progress_pointer()
    out = Ref{Ptr{Cvoid}}(C_NULL)
    # The contexts whose locks the call takes: the counts' and, for a
    # mixture to grow from, its own (its handle is read during the call).
    owners = grow_from === nothing ? (c.context,) : (c.context, grow_from.context)
    GC.@preserve w prog grow_from begin
        oref = Ref(LibDirmn.empty_mixture_options())
        LibDirmn.dirmn_mixture_options_init_sized(oref, sizeof(LibDirmn.dirmn_mixture_options))
        o = oref[]
        maxit = _or(s.max_iterations, o.max_iterations)
        # The copies out of the new handle are calls on the context too:
        # under its lock, or a task computing on it would see them collide.
        m = _with(ctx, owners...) do p
            gf = grow_from === nothing ? Ptr{Cvoid}(C_NULL) : _handle(grow_from)
            if grow_from !== nothing && gf == C_NULL
                throw(DirmnError(LibDirmn.DIRMN_ERROR_NULL_POINTER,
                                 "fit_mixture: grow_from is a closed DirMultMixture"))
            end
            oref[] = LibDirmn.dirmn_mixture_options(
                o.size, s.objective_code, s.init_code, _or(s.starts, o.starts), s.seed, maxit,
                _or(s.tolerance, o.tolerance), _wptr(w), cb,
                prog === nothing ? C_NULL : pointer_from_objref(prog), gf,
                _or(s.m_step_iterations, o.m_step_iterations))
            st = LibDirmn.dirmn_mixture_fit(p, _handle(c), kc, oref, out)
            if st != 0 && prog !== nothing && prog.err !== nothing
                throw(prog.err)
            end
            _check(st, p, _call_hint(c, ctx))
            _mixture_from_handle(out[], ctx, s.objective, c.obsdim, tot)
        end
        return m, Int(maxit)
    end
end

function _warn_unconverged(m::DirMultMixture, maxit::Integer)
    m.converged ||
        @warn "fit_mixture: EM stopped without convergence for k = $(m.k) after " *
              "$(m.iterations) iterations of the best start (max_iterations = $maxit); the " *
              "result is the last iterate (converged = false)"
    return m
end

"""
    fit_mixture(X, k::Integer; objective = :ml, init = :mixed, starts = 6,
                seed = 1, tolerance = 1e-9, max_iterations = 1000, m_step_iterations = 4,
                weights = nothing, grow_from = nothing, obsdim = 2, backend = :auto,
                device = 0, context = nothing, real_valued = false, progress = nothing)
        -> DirMultMixture

Fits a mixture of `k` Dirichlet-multinomial components to the observations
of `X` by EM (Holmes, Harris & Quince 2012: the clustering of
Bioconductor's DirichletMultinomial::dmn, and of the R package's
`dirmn_mixture`), and returns a [`DirMultMixture`](@ref), its components
ordered by decreasing mixing weight (the library's order).

`X` is anything [`DirmnCounts`](@ref) accepts (a dense or sparse matrix,
one observation per column by default; `obsdim = 1` for one per row), or a
prepared `DirmnCounts`. Each EM iteration evaluates the observations × k
log-likelihoods in one pass of the library and refits every component's α
by Newton's method on responsibility-weighted count histograms.
Observations of all zeros and categories without counts are allowed; a
component that loses all its observations is re-seeded.

Keywords (the defaults shown for `starts`, `tolerance`, `max_iterations` and
`m_step_iterations` are the library's, which `nothing` also selects):
- `objective`: `:ml` (plain maximum likelihood) or `:dmn` (dmn's MAP fit,
  a Gamma(0.1, 0.1) prior on every α as a density on log α, with dmn's
  scale for the criteria);
- `init`, how each start begins:
  - `:mixed` (the default, the library's): the starts take turns, start
    s (counting from 0) using soft k-means when s % 3 == 0, k-means++ when
    1, k-means when 2, so the default includes dmn's own start;
  - `:kmeanspp`: k-means++ seeding, then k-means on the observations'
    proportions;
  - `:kmeans`: k-means from random observations as centres;
  - `:soft_kmeans`: dmn's initialisation, soft k-means (stiffness 50) on
    the proportions from random labels, EM starting from its soft
    responsibilities;
- `starts`: random starts, the one with the best objective is kept;
- `seed`: a non-negative integer; the same seed gives the same fit, on every
  backend;
- `tolerance`, `max_iterations`: EM stops when the objective changes by less
  than `tolerance × |objective|`, or after `max_iterations` iterations per
  start: then `converged = false` and a warning (`@warn`), not an error
  (the old names `tol` and `maxiter` are still accepted, with a deprecation
  warning);
- `m_step_iterations`: the Newton steps each component takes per M step
  once it has a warm start (from the previous M step): a generalized EM,
  no step lowering the likelihood, that stops on `tolerance` only after an
  M step whose fits all converged (or one with the full budget of 200), at
  a stationary point as the classical EM does (from the same start the two
  may reach different local optima); 200 or more fits every M step to
  convergence;
- `weights`: one finite weight ≥ 0 per observation (default all 1);
- `grow_from`: `nothing`, or a `DirMultMixture` with `k - 1` components
  fitted to the same table (the same rows and categories; on split counts,
  each rank's own fit of the same split table): one more start is grown
  from it (a component split in two), so that under `:ml` the
  log-likelihood is at least `grow_from`'s. Fitting a range of k does this
  itself;
- `progress`: `nothing`, or a function `(iteration, loglik, change)` called
  after every EM iteration of every start (`iteration` counts from 1 within
  a start; `loglik` the log pmf; `change` is what the library reports as
  the largest change of a responsibility); returning `true` cancels the fit
  with a [`DirmnError`](@ref) `DIRMN_ERROR_CANCELLED`, and an exception it
  throws cancels the fit and is rethrown. It runs inside the library's
  call, so it must not compute with the same context (such calls raise
  `DIRMN_ERROR_CONTEXT_IN_USE`); it may `close` counts, mixtures and the
  context itself, which read as closed at once and are freed when the fit
  returns (the fit itself finishes);
- `backend`, `device`, `context`, `real_valued`: as for [`loglik`](@ref).

Collective on a `DirmnCounts` with a [`Communicator`](@ref) (see
[`set_communicator!`](@ref)), for one k and for a range of k: every rank
calls it with the same options and its own observations' `weights`, and
gets the whole table's mixture. The starts are the whole table's, and every
EM iteration sums over the ranks, so `loglik`, `aic` and `bic` agree with
those of one process holding the whole table to rounding, and α, the
mixing weights and `laplace` to the M step's accuracy (~1e-6
relative; not bit for bit). Each rank's `DirMultMixture` has the shared α
and weights, and its own observations' `responsibilities`, `rows` and
`totals` (`nobs` counts the whole table's); `k` is checked against the
whole table's observations. A rank whose part fails (a bad weight or
option) raises its own error, the others `DIRMN_ERROR_COMMUNICATION`; a
`progress` that cancels or throws on one rank cancels every rank
(`DIRMN_ERROR_CANCELLED`, the throwing rank rethrowing its exception).

Invalid arguments raise a [`DirmnError`](@ref) with the library's status:
`k < 1` or `k` above the number of observations with counts, `starts < 1`,
`max_iterations < 1`, `m_step_iterations < 1`, `tolerance ≤ 0`, a
`grow_from` of another k or table (`DIRMN_ERROR_INVALID_ARGUMENT`); a
negative or non-finite weight (`DIRMN_ERROR_INVALID_PARAMETER`); weights of
the wrong length (`DIRMN_ERROR_DIMENSION_MISMATCH`). An unknown `objective`
or `init` raises an `ArgumentError` listing the names.

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
`select`; returns a [`MixtureSelection`](@ref) with all fits (in the order
of `ks`) and the selected one. The fits are made in increasing k, each k
also starting from the fit for k - 1 where `ks` holds it (as `grow_from`),
so under `:ml` the log-likelihood does not decrease with k. `select` is
`:bic` or `:aic`, or under `objective = :dmn` also `:laplace`: the Laplace
criterion belongs to dmn's MAP objective, whose prior keeps it a proper
approximation of the evidence; under `:ml` it has no prior and rewards
extra components, so `select = :laplace` with `:ml` raises an
`ArgumentError`.
"""
function fit_mixture(X, k::Integer; objective::Symbol = :ml, init::Symbol = :mixed,
                     starts::Union{Nothing,Integer} = nothing, seed::Integer = 1,
                     tolerance::Union{Nothing,Real} = nothing,
                     max_iterations::Union{Nothing,Integer} = nothing,
                     m_step_iterations::Union{Nothing,Integer} = nothing, weights = nothing,
                     grow_from::Union{Nothing,DirMultMixture} = nothing, obsdim::Integer = 2,
                     backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false,
                     progress = nothing, tol::Union{Nothing,Real} = nothing,
                     maxiter::Union{Nothing,Integer} = nothing)
    tolerance = _renamed(tolerance, tol, :tolerance, :tol, :fit_mixture)
    max_iterations = _renamed(max_iterations, maxiter, :max_iterations, :maxiter, :fit_mixture)
    s = _mixture_settings(objective, init, starts, seed, tolerance, max_iterations,
                          m_step_iterations)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    m, maxit = _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        _fit_mixture(c, ctx, k, s, weights, progress, grow_from)
    end
    return _warn_unconverged(m, maxit)
end

const _CRITERIA = (:bic, :aic, :laplace)

function fit_mixture(X, ks::AbstractVector{<:Integer}; select::Symbol = :bic,
                     objective::Symbol = :ml, init::Symbol = :mixed,
                     starts::Union{Nothing,Integer} = nothing, seed::Integer = 1,
                     tolerance::Union{Nothing,Real} = nothing,
                     max_iterations::Union{Nothing,Integer} = nothing,
                     m_step_iterations::Union{Nothing,Integer} = nothing, weights = nothing,
                     obsdim::Integer = 2, backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false,
                     progress = nothing, tol::Union{Nothing,Real} = nothing,
                     maxiter::Union{Nothing,Integer} = nothing)
    select in _CRITERIA ||
        throw(ArgumentError("select must be :bic, :aic or :laplace, not :$select"))
    if select === :laplace && objective === :ml
        throw(ArgumentError("select = :laplace needs objective = :dmn: the Laplace criterion " *
                            "belongs to dmn's MAP objective (its prior keeps it an " *
                            "approximation of the evidence); under :ml there is no prior and " *
                            "it rewards extra components. Use select = :bic or :aic with :ml, " *
                            "or objective = :dmn"))
    end
    isempty(ks) && throw(ArgumentError("no numbers of components given"))
    tolerance = _renamed(tolerance, tol, :tolerance, :tol, :fit_mixture)
    max_iterations = _renamed(max_iterations, maxiter, :max_iterations, :maxiter, :fit_mixture)
    s = _mixture_settings(objective, init, starts, seed, tolerance, max_iterations,
                          m_step_iterations)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    kv = collect(Int, ks)
    fits = Vector{DirMultMixture}(undef, length(kv))
    maxits = zeros(Int, length(kv))
    _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        # In increasing k, each grown from the fit for k - 1 where there is one.
        byk = Dict{Int,DirMultMixture}()
        for i in sortperm(kv)
            fits[i], maxits[i] = _fit_mixture(c, ctx, kv[i], s, weights, progress,
                                              get(byk, kv[i] - 1, nothing))
            haskey(byk, kv[i]) || (byk[kv[i]] = fits[i])
        end
    end
    foreach(_warn_unconverged, fits, maxits)
    scores = Float64[getfield(m, select) for m in fits]
    i = argmin(scores)
    return MixtureSelection(kv, fits, select, scores, fits[i].k, fits[i])
end
