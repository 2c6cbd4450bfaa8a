# Does one composition fit every group of observations? The likelihood-ratio
# test of one Dirichlet-multinomial for all observations against one per
# group (dirmn_test_groups), with an optional parametric bootstrap.

"""
    GroupTest

The result of [`test_groups`](@ref): the likelihood-ratio test of one
Dirichlet-multinomial for every observation against one per group. Fields:

- `statistic::Float64`: `2 (loglik_groups - loglik_null)`, ≥ 0;
- `dof::Float64`: its degrees of freedom, `(groups - 1) categories`;
- `pvalue::Float64`: `P(χ²_dof ≥ statistic)` (also [`pvalue`](@ref)`(t)`);
- `pvalue_bootstrap::Float64`: the parametric bootstrap's p-value,
  `(1 + #{T* ≥ T}) / (1 + bootstrap)`; 1 without a bootstrap;
- `bootstrap::Int`: the bootstrap tables drawn (0 for none);
- `loglik_null::Float64`: the log pmf (multinomial coefficients included)
  of the table at the one DM fitted to every observation;
- `loglik_groups::Float64`: the sum of the groups' log pmfs at their own
  DMs;
- `groups::Int`: the groups with counts (G; a group whose observations
  have no counts is left out);
- `categories::Int`: the categories with counts (P);
- `converged::Bool`: whether every fit of the observed table converged;
- `group::Vector`: the groups' labels, in the order they first appear in
  the `groups` argument (every label given, with or without counts);
- `seed::UInt64`: the bootstrap's seed.

Accessors: [`pvalue`](@ref), [`dof`](@ref).
"""
struct GroupTest{T}
    statistic::Float64
    dof::Float64
    pvalue::Float64
    pvalue_bootstrap::Float64
    bootstrap::Int
    loglik_null::Float64
    loglik_groups::Float64
    groups::Int
    categories::Int
    converged::Bool
    group::Vector{T}
    seed::UInt64
end

"""
    pvalue(t::GroupTest) -> Float64

The χ² p-value of the group test (`t.pvalue`); the bootstrap's is
`t.pvalue_bootstrap`.
"""
pvalue(t::GroupTest) = t.pvalue

"""
    dof(t::GroupTest) -> Float64

The degrees of freedom of the group test's χ² reference (`t.dof`,
`(groups - 1) categories`).
"""
dof(t::GroupTest) = t.dof

"""
    test_groups(X, groups; bootstrap = 0, seed = 0, tolerance = nothing,
                max_iterations = nothing, obsdim = 2, backend = :auto, device = 0,
                context = nothing, real_valued = false) -> GroupTest

Does one composition fit every group of observations? The likelihood-ratio
test (libdirmn's `dirmn_test_groups`; HMP's `Xdc` test, on the full
likelihood) of one Dirichlet-multinomial for all observations of `X` (a
[`fit_dirmn`](@ref) of the whole table) against one per group (a fit of
each group's observations): `statistic = 2 (Σ_g loglik_g - loglik_0)`,
referred to χ² with `(G - 1) P` degrees of freedom (G the groups with
counts, P the categories with counts), and, with `bootstrap = B > 0`, to
its parametric bootstrap: B tables drawn from the fitted null DM with each
observation's observed total, each refitted under both hypotheses,
`pvalue_bootstrap = (1 + #{T* ≥ T}) / (1 + B)` (Davison & Hinkley 1997,
eq. 4.11). Returns a [`GroupTest`](@ref).

- `X`: anything [`DirmnCounts`](@ref) accepts (one observation per column
  by default, `obsdim = 1` for one per row), or a `DirmnCounts`;
- `groups`: an `AbstractVector` of labels, one per observation (any
  values: strings, symbols, integers); `missing` or `nothing` leaves the
  observation out;
- `bootstrap`: the bootstrap's tables B (0, the default: the χ² p-value
  alone); they and their fits run on the context's threads, and the result
  does not depend on their number;
- `seed`: the bootstrap tables' seed (an integer in 0 .. 2^64 - 1,
  [`rand`](@ref)'s): the same seed gives the same p-value;
- `tolerance`, `max_iterations`: every fit's, as for [`fit_dirmn`](@ref)
  (the library's defaults, 1e-10 and 1000, where `nothing`);
- `backend`, `device`, `context`, `real_valued`: as for [`loglik`](@ref).

A group whose observations show no overdispersion is fitted at the
multinomial limit. Fits of the observed table that stop without
convergence give `converged = false` and a warning. `groups` of another
length than the observations raises a [`DirmnError`](@ref)
`DIRMN_ERROR_DIMENSION_MISMATCH`, fewer than two labels or fewer than two
groups with counts, a negative `bootstrap`, `tolerance` ≤ 0 or
`max_iterations` < 1 `DIRMN_ERROR_INVALID_ARGUMENT`.

```julia
t = test_groups(X, ["a", "a", "b", "b", "b"]; bootstrap = 999, seed = 1)
t.statistic, dof(t), pvalue(t), t.pvalue_bootstrap
```
"""
function test_groups(X, groups::AbstractVector; bootstrap::Integer = 0, seed::Integer = 0,
                     tolerance::Union{Nothing,Real} = nothing,
                     max_iterations::Union{Nothing,Integer} = nothing, obsdim::Integer = 2,
                     backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    typemin(Int64) <= bootstrap <= typemax(Int64) ||
        throw(ArgumentError("bootstrap = $bootstrap does not fit 64 bits"))
    seed0 = _sample_seed(seed)
    labels, codes = _group_codes(groups)
    G = length(labels)
    r = _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        length(codes) == c.nobs ||
            _mismatch("groups has length $(length(codes)) but the counts have $(c.nobs) " *
                      "observations (one group label per observation)")
        _test_groups_call(c, ctx, codes, G, Int64(bootstrap), seed0, tolerance, max_iterations)
    end
    r.converged != 0 ||
        @warn "test_groups: a fit of the observed table stopped without convergence " *
              "(converged = false); the statistic is from its last iterate"
    return GroupTest(r.statistic, r.df, r.p_value, r.p_value_bootstrap, Int(r.bootstrap),
                     r.loglik_null, r.loglik_groups, Int(r.groups), Int(r.categories),
                     r.converged != 0, labels, seed0)
end

function _test_groups_call(c::DirmnCounts, ctx::DirmnContext, codes::Vector{Int64}, G::Int,
                           bootstrap::Int64, seed::UInt64, tolerance, max_iterations)
    oref = Ref(LibDirmn.empty_group_test_options())
    LibDirmn.dirmn_group_test_options_init_sized(oref,
                                                 sizeof(LibDirmn.dirmn_group_test_options))
    o = oref[]
    oref[] = LibDirmn.dirmn_group_test_options(o.size, bootstrap, seed,
                                               Float64(_or(tolerance, o.tolerance)),
                                               Cint(_or(max_iterations, o.max_iterations)))
    rref = Ref(LibDirmn.empty_group_test_result())
    more = function (loc)
        G < 2 && return " [groups has $G distinct label$(G == 1 ? "" : "s") in Julia: " *
                        "a test needs two groups]"
        return nothing
    end
    GC.@preserve codes begin
        _with(ctx, c.context) do p
            st = LibDirmn.dirmn_test_groups(p, _handle(c), pointer(codes), Int64(G), oref, rref)
            _check(st, p, _call_hint(c, ctx, more))
        end
    end
    return rref[]
end

# --- display -----------------------------------------------------------------------

function Base.show(io::IO, t::GroupTest)
    print(io, "GroupTest(statistic=", t.statistic, ", dof=", _count_text(t.dof), ", pvalue=",
          t.pvalue, t.bootstrap > 0 ? ", pvalue_bootstrap=$(t.pvalue_bootstrap)" : "", ")")
end

function Base.show(io::IO, ::MIME"text/plain", t::GroupTest)
    println(io, "Group test: one Dirichlet-multinomial for every observation against one per ",
            "group (likelihood ratio)")
    println(io, "  data        ", _plural(t.groups, "group"), " with counts (of ",
            length(t.group), " labels), ", t.categories,
            t.categories == 1 ? " category" : " categories", " with counts")
    println(io, "  loglik      one DM ", t.loglik_null, "   per group ", t.loglik_groups,
            t.converged ? "" : "   (NOT converged)")
    println(io, "  statistic   ", t.statistic, "   (χ² with ", _count_text(t.dof), " dof)")
    print(io, "  p-value     ", t.pvalue)
    t.bootstrap > 0 &&
        print(io, "\n  bootstrap   p-value ", t.pvalue_bootstrap, " from ", t.bootstrap,
              " tables (seed ", Int128(t.seed), ")")
end
