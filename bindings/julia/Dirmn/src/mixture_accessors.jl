# A fitted mixture's accessors, the assignment of new data, and display.

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
    nobs(m::DirMultMixture) -> Float64

The observations that entered the fit, as the library counts them (BIC's
n; `m.nobs`): those with counts and a positive weight, their number, or the
sum of their weights when weights were given. The same rule as a
[`fit_dirmn`](@ref) result's [`nobs`](@ref). (`m.rows` is the number of
observations of the fitted table, all-zero ones included.)
"""
nobs(m::DirMultMixture) = m.nobs

"""
    dof(m::DirMultMixture) -> Int

The number of free parameters as the library counts them for the criteria
(`m.parameters`): under `:ml`, k × (categories with counts) + k - 1, so a
one-component fit agrees with [`fit_dirmn`](@ref)'s [`dof`](@ref); under
`:dmn`, k V + k - 1 (dmn's count: its prior keeps every α estimated).
"""
dof(m::DirMultMixture) = m.parameters

"""
    coef(m::DirMultMixture) -> Matrix{Float64}

The fitted α of every component, V × k, one column per component (a copy
of `m.alpha`), in the library's order (decreasing mixing weight).
StatsBase's name, this package's own function.
"""
coef(m::DirMultMixture) = copy(m.alpha)

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

The mixing weights π (a copy of `m.mixture_weights`), as Distributions.jl's
`probs` of a mixture model.
"""
probs(m::DirMultMixture) = copy(m.mixture_weights)

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
    logpi = log.(m.mixture_weights)
    lse(row) = begin
        t = row .+ logpi
        mx = maximum(t)
        isfinite(mx) ? mx + log(sum(exp.(t .- mx))) : mx
    end
    return L isa AbstractVector ? lse(L) : [lse(view(L, b, :)) for b in 1:size(L, 1)]
end

# --- display -----------------------------------------------------------------
# Numbers print as Base prints them (see fit_stats.jl); tables are padded to
# their widest entry.

function _print_table(io::IO, rows::Vector{Vector{String}})
    widths = [maximum(length(r[j]) for r in rows) for j in 1:length(rows[1])]
    for (i, r) in enumerate(rows)
        i == 1 || print(io, "\n")
        print(io, "  ", rstrip(join((rpad(x, w + 2) for (x, w) in zip(r, widths)))))
    end
end

function Base.show(io::IO, m::DirMultMixture)
    print(io, "DirMultMixture(k=", m.k, ", V=", m.ncategories, ", nobs=", _count_text(m.nobs),
          ", :", m.objective_kind, ", loglik=", m.loglik,
          m.converged ? ", converged" : ", not converged", isopen(m) ? "" : ", closed", ")")
end

function Base.show(io::IO, ::MIME"text/plain", m::DirMultMixture)
    println(io, "DirMultMixture: ", m.k, "-component Dirichlet-multinomial mixture (objective :",
            m.objective_kind, ")")
    println(io, "  data        ", m.rows, " observations × ", m.ncategories, " categories (",
            _count_text(m.nobs), " fitted)")
    println(io, "  loglik      ", m.loglik, "   objective ", m.objective)
    println(io, "  criteria    aic ", m.aic, "   bic ", m.bic, "   laplace ", m.laplace,
            "   (dof ", m.parameters, ")")
    println(io, "  EM          ", m.iterations, " iterations, ",
            m.converged ? "converged" : "NOT converged", " (best start: ", m.start, ")")
    sizes = zeros(Int, m.k)
    for j in assignments(m)
        sizes[j] += 1
    end
    rows = [["component", "weight", "precision", "observations"]]
    for j in 1:m.k
        push!(rows, [string(j), string(m.mixture_weights[j]), string(sum(view(m.alpha, :, j))),
                     string(sizes[j])])
    end
    _print_table(io, rows)
    isopen(m) || print(io, "\n  (closed: new data can no longer be assigned)")
end

function Base.show(io::IO, s::MixtureSelection)
    print(io, "MixtureSelection(ks=", s.ks, ", ", s.criterion, " selects k=", s.k, ")")
end

function Base.show(io::IO, ::MIME"text/plain", s::MixtureSelection)
    println(io, "MixtureSelection: k = ", s.k, " by ", s.criterion, " (smallest is best)")
    rows = [["k", "loglik", "aic", "bic", "laplace", "converged", ""]]
    for (k, m) in zip(s.ks, s.fits)
        push!(rows, [string(k), string(m.loglik), string(m.aic), string(m.bic),
                     string(m.laplace), string(m.converged), m === s.best ? "<-" : ""])
    end
    _print_table(io, rows)
end
