# The test of the Dirichlet-multinomial against the multinomial
# (dirmn_overdispersion_test): the likelihood-ratio test with its boundary
# null and Kim & Margolin's C(α) score test.

const _OVERDISPERSION_METHODS = (:lrt, :score)

"""
    OverdispersionTest

The result of [`overdispersion_test`](@ref). The test of the method asked
for:

- `method::Symbol`: `:lrt` or `:score`;
- `statistic::Float64`: its statistic;
- `dof::Float64`: the degrees of freedom of its reference distribution
  (`:lrt`: 1, of the χ²₁ part of the boundary null ½χ²₀ + ½χ²₁; `:score`:
  those of the scaled χ² approximation);
- `pvalue::Float64` (also [`pvalue`](@ref)`(t)`).

Everything the library reports, both tests included:

- `lrt_statistic`: 2 (loglik of the DM fit − loglik of the multinomial),
  ≥ 0; `lrt_p_value`: ½ P(χ²₁ ≥ statistic), 1 at 0;
- `score_statistic`: Kim & Margolin's (1992) C(α) statistic T (HMP's
  `C.alpha.multinomial`); `score_df`, `score_scale` (g): its
  approximation P(χ²_df ≥ T / g); `score_p_value`;
- `loglik_dm`, `loglik_multinomial`: the log pmf at the DM fit and at the
  pooled multinomial proportions;
- `precision`: the fitted sum of α (`Inf` at the multinomial limit);
- `categories::Int`: the categories with counts (empty ones are left out);
- `nobs::Float64`: the observations with counts and a positive weight (their
  number, or the sum of their weights), as a fit's [`nobs`](@ref);
- `converged::Bool`: whether the DM fit converged.

Accessors: [`pvalue`](@ref), [`dof`](@ref), [`nobs`](@ref).
"""
struct OverdispersionTest
    method::Symbol
    statistic::Float64
    dof::Float64
    pvalue::Float64
    lrt_statistic::Float64
    lrt_p_value::Float64
    score_statistic::Float64
    score_df::Float64
    score_scale::Float64
    score_p_value::Float64
    loglik_dm::Float64
    loglik_multinomial::Float64
    precision::Float64
    categories::Int
    nobs::Float64
    converged::Bool
end

"""
    pvalue(t::OverdispersionTest) -> Float64

The p-value of the test (`t.pvalue`), as HypothesisTests.jl's `pvalue`
(this package's own function).
"""
pvalue(t::OverdispersionTest) = t.pvalue

"""
    dof(t::OverdispersionTest) -> Float64

The degrees of freedom of the test's reference distribution (`t.dof`).
"""
dof(t::OverdispersionTest) = t.dof

"""
    nobs(t::OverdispersionTest) -> Float64

The observations the test used (`t.nobs`), counted as for a fit.
"""
nobs(t::OverdispersionTest) = t.nobs

"""
    overdispersion_test(X; method = :lrt, weights = nothing, obsdim = 2,
                        tolerance = nothing, max_iterations = nothing,
                        backend = :auto, device = 0, context = nothing,
                        real_valued = false) -> OverdispersionTest

Is the multinomial enough? Tests the null hypothesis that the observations
of `X` (anything [`DirmnCounts`](@ref) accepts, or a `DirmnCounts`) are
multinomial with common proportions against the Dirichlet-multinomial
alternative (overdispersion), in one call of the library:

- `method = :lrt`: the likelihood-ratio test, `statistic = 2 (loglik of
  the DM fit - loglik of the multinomial at the pooled proportions)`. The
  null lies on the boundary of the DM (precision → ∞), so the statistic's
  null distribution is the 50:50 mixture of χ²₀ and χ²₁: the p-value is
  ½ P(χ²₁ ≥ statistic), and 1 when the statistic is 0 (the DM fit is the
  multinomial limit);
- `method = :score`: Tarone's C(α) score test in Kim & Margolin's (1992)
  form (HMP's `C.alpha.multinomial`), `statistic = T = Σ_j Σ_i (x_ij -
  N_i X_j / N)² / X_j` (N_i the total of observation i, X_j that of
  category j, N the grand total), with its scaled χ² approximation
  P(χ²_dof ≥ T / `score_scale`). It needs no DM fit.

The result holds both tests whichever `method` is asked (see
[`OverdispersionTest`](@ref)); `method` decides `statistic`, `dof` and
`pvalue`. Categories without counts are left out (they carry no
information; `categories` counts the others). `weights` are frequency
weights (finite, ≥ 0: an observation of weight 2 counts as two);
`tolerance` and `max_iterations` (defaults: the library's) are those of
the DM fit of the likelihood-ratio test, as for [`fit_dirmn`](@ref); a fit
that stops without convergence gives `converged = false` and a warning.
Invalid input raises a [`DirmnError`](@ref), a `method` other than `:lrt`
and `:score` an `ArgumentError`.

Collective on a `DirmnCounts` with a [`Communicator`](@ref): every rank
calls it with the same options and its own observations' `weights`, and
gets the whole table's test.

```julia
t = overdispersion_test(B; obsdim = 1)   # B: samples × taxa
pvalue(t), t.statistic
overdispersion_test(B; obsdim = 1, method = :score)
```
"""
function overdispersion_test(X; method::Symbol = :lrt, weights = nothing, obsdim::Integer = 2,
                             tolerance::Union{Nothing,Real} = nothing,
                             max_iterations::Union{Nothing,Integer} = nothing,
                             backend::Symbol = :auto, device::Integer = 0,
                             context::Union{Nothing,DirmnContext} = nothing,
                             real_valued::Bool = false)
    method in _OVERDISPERSION_METHODS ||
        throw(ArgumentError("method must be :lrt or :score, not :$method"))
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    t, maxit = _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        w = _weights(c, weights)
        rref = Ref(LibDirmn.empty_overdispersion_result())
        local maxit
        GC.@preserve w begin
            oref = Ref(LibDirmn.dirmn_fit_options(Csize_t(sizeof(LibDirmn.dirmn_fit_options)),
                                                  0.0, Cint(0), C_NULL, C_NULL, C_NULL, C_NULL,
                                                  UInt32(0), C_NULL))
            LibDirmn.dirmn_fit_options_init_sized(oref, sizeof(LibDirmn.dirmn_fit_options))
            o = oref[]
            maxit = Int(_or(max_iterations, o.max_iterations))
            oref[] = LibDirmn.dirmn_fit_options(o.size, Float64(_or(tolerance, o.tolerance)),
                                                Cint(maxit), _wptr(w), C_NULL, C_NULL, C_NULL,
                                                o.flags, C_NULL)
            _with(ctx, c.context) do p
                _check(LibDirmn.dirmn_overdispersion_test(p, _handle(c), oref, rref), p,
                       _call_hint(c, ctx))
            end
        end
        r = rref[]
        lrt = method === :lrt
        t = OverdispersionTest(method, lrt ? r.lrt_statistic : r.score_statistic,
                               lrt ? 1.0 : r.score_df, lrt ? r.lrt_p_value : r.score_p_value,
                               r.lrt_statistic, r.lrt_p_value, r.score_statistic, r.score_df,
                               r.score_scale, r.score_p_value, r.loglik_dm,
                               r.loglik_multinomial, r.precision, Int(r.categories),
                               r.observations, r.converged != 0)
        return t, maxit
    end
    t.converged ||
        @warn "overdispersion_test: the Dirichlet-multinomial fit stopped without convergence " *
              "(max_iterations = $maxit); the likelihood-ratio statistic is from its last iterate"
    return t
end

function Base.show(io::IO, t::OverdispersionTest)
    print(io, "OverdispersionTest(:", t.method, ", statistic=", t.statistic, ", dof=", t.dof,
          ", pvalue=", t.pvalue, ")")
end

function Base.show(io::IO, ::MIME"text/plain", t::OverdispersionTest)
    if t.method === :lrt
        println(io, "Overdispersion test: likelihood ratio, Dirichlet-multinomial against ",
                "the multinomial")
        println(io, "  null distribution  ½χ²₀ + ½χ²₁ (the multinomial is the boundary of the DM)")
    else
        println(io, "Overdispersion test: C(α) score (Kim & Margolin 1992), Dirichlet-",
                "multinomial against the multinomial")
        println(io, "  null distribution  ", t.score_scale, " × χ²(", t.score_df, ")")
    end
    println(io, "  statistic          ", t.statistic)
    println(io, "  p-value            ", t.pvalue)
    println(io, "  data               ", _plural(t.nobs, "observation"), ", ", t.categories,
            t.categories == 1 ? " category" : " categories", " with counts")
    print(io, "  loglik             DM ", t.loglik_dm, " (precision ", t.precision,
          t.converged ? "" : ", NOT converged", "), multinomial ", t.loglik_multinomial)
end
