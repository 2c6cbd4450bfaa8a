# Does one composition fit every group of observations? The test of one
# Dirichlet-multinomial for all observations against one per group
# (dirmn_test_groups), by the likelihood ratio or HMP's Xmcupo, or of one
# shared overdispersion (HMP's Xoc), with an optional parametric bootstrap.
# Do the observations share a given composition? HMP's Xsc
# (dirmn_test_proportions). Both tests' power by simulation
# (dirmn_power_groups, dirmn_power_proportions).

# The library's code of the statistic the groups are compared by.
function _group_statistic_code(statistic::Symbol)
    statistic === :lrt && return LibDirmn.DIRMN_GROUP_LRT
    statistic === :xmcupo && return LibDirmn.DIRMN_GROUP_XMCUPO
    statistic === :xoc && return LibDirmn.DIRMN_GROUP_XOC
    throw(ArgumentError("statistic must be :lrt, :xmcupo or :xoc, not :$statistic"))
end

# The test's name in the results' display, and its null hypothesis.
_group_statistic_text(kind::Symbol) =
    kind === :lrt ? "likelihood ratio" : kind === :xoc ? "HMP's Xoc" : "HMP's Xmcupo"
_group_null_text(kind::Symbol) =
    kind === :xoc ? "one shared overdispersion" : "one Dirichlet-multinomial"

"""
    GroupTest

The result of [`test_groups`](@ref): the test of one Dirichlet-multinomial
for every observation against one per group (or, for `:xoc`, of one
shared precision against one per group). Fields:

- `statistic::Float64`: the test statistic, ≥ 0: `2 (loglik_groups -
  loglik_null)` for `statistic_kind = :lrt` and `:xoc` (HMP's Xoc), HMP's
  Xmcupo for `:xmcupo`;
- `statistic_kind::Symbol`: `:lrt`, `:xmcupo` or `:xoc`, the statistic
  asked for;
- `dof::Float64`: its degrees of freedom, `(groups - 1) categories` for
  `:lrt`, `(groups - 1) (categories - 1)` for `:xmcupo`, `groups - 1` for
  `:xoc`;
- `pvalue::Float64`: `P(χ²_dof ≥ statistic)` (also [`pvalue`](@ref)`(t)`);
- `pvalue_bootstrap::Float64`: the parametric bootstrap's p-value,
  `(1 + #{T* ≥ T}) / (1 + bootstrap)`; 1 without a bootstrap;
- `bootstrap::Int`: the bootstrap tables drawn (0 for none);
- `loglik_null::Float64`: the log pmf (multinomial coefficients included)
  of the table at the one DM fitted to every observation; for `:xoc`, at
  the groups' DMs of one shared precision (the null of Xoc);
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
    statistic_kind::Symbol
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

The degrees of freedom of the group test's χ² reference (`t.dof`:
`(groups - 1) categories` for the likelihood ratio, `(groups - 1)
(categories - 1)` for Xmcupo, `groups - 1` for Xoc).
"""
dof(t::GroupTest) = t.dof

"""
    test_groups(X, groups; statistic = :lrt, bootstrap = 0, seed = 0, tolerance = nothing,
                max_iterations = nothing, obsdim = 2, backend = :auto, device = 0,
                context = nothing, real_valued = false) -> GroupTest

Does one composition fit every group of observations? The test
(libdirmn's `dirmn_test_groups`) of one Dirichlet-multinomial for all
observations of `X` against one per group, by `statistic` (G the groups
with counts, P the categories with counts):

- `:lrt` (the default): the likelihood ratio (HMP's `Xdc` test, on the
  full likelihood) of a [`fit_dirmn`](@ref) of the whole table against a
  fit of each group's observations, `statistic = 2 (Σ_g loglik_g -
  loglik_0)`, referred to χ² with `(G - 1) P` degrees of freedom;
- `:xmcupo`: HMP's `Xmcupo` (La Rosa et al. 2012), the groups' pooled
  proportions `π_g` against their precision-weighted mean `π_0`,
  `Σ_g Σ_v (π_gv - π_0v)² / (π_0v c_g)`, `c_g = (θ_g (ΣN² - ΣN) + ΣN) /
  (ΣN)²` over group g's totals N with `θ_g` Weir's method-of-moments
  overdispersion, referred to χ² with `(G - 1) (P - 1)` degrees of
  freedom. No fit enters it (the result's log-likelihoods are still the
  fits');
- `:xoc`: HMP's `Xoc` (`Xoc.sevsample`), a test of overdispersion rather
  than composition: do the groups share one overdispersion `θ = 1 / (1 +
  A)`? The likelihood ratio of one DM per group with one shared precision
  `A` (each group's proportions free) against one DM per group,
  `statistic = 2 (loglik_groups - loglik_null)`, referred to χ² with
  `G - 1` degrees of freedom; `loglik_null` is then the shared-precision
  fit's log-likelihood.

With `bootstrap = B > 0` the statistic is also referred to its parametric
bootstrap: B tables drawn from the fitted null with each observation's
observed total (the one DM; for `:xoc` the shared-precision fit, each
observation from its group's DM), each tested by the same statistic
(refitted under both hypotheses for `:lrt` and `:xoc`), `pvalue_bootstrap
= (1 + #{T* ≥ T}) / (1 + B)` (Davison & Hinkley 1997, eq. 4.11). Returns a
[`GroupTest`](@ref).

- `X`: anything [`DirmnCounts`](@ref) accepts (one observation per column
  by default, `obsdim = 1` for one per row), or a `DirmnCounts`;
- `groups`: an `AbstractVector` of labels, one per observation (any
  values: strings, symbols, integers); `missing` or `nothing` leaves the
  observation out;
- `statistic`: `:lrt`, `:xmcupo` or `:xoc` (see above);
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
`max_iterations` < 1 `DIRMN_ERROR_INVALID_ARGUMENT`; a `statistic` other
than `:lrt`, `:xmcupo` or `:xoc` an `ArgumentError`.

```julia
t = test_groups(X, ["a", "a", "b", "b", "b"]; bootstrap = 999, seed = 1)
t.statistic, dof(t), pvalue(t), t.pvalue_bootstrap
test_groups(X, ["a", "a", "b", "b", "b"]; statistic = :xmcupo)
test_groups(X, ["a", "a", "b", "b", "b"]; statistic = :xoc)     # one shared overdispersion?
```
"""
function test_groups(X, groups::AbstractVector; statistic::Symbol = :lrt,
                     bootstrap::Integer = 0, seed::Integer = 0,
                     tolerance::Union{Nothing,Real} = nothing,
                     max_iterations::Union{Nothing,Integer} = nothing, obsdim::Integer = 2,
                     backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    code = _group_statistic_code(statistic)
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
        _test_groups_call(c, ctx, codes, G, Int64(bootstrap), seed0, tolerance, max_iterations,
                          code)
    end
    r.converged != 0 ||
        @warn "test_groups: a fit of the observed table stopped without convergence " *
              "(converged = false); " *
              (statistic === :xmcupo ? "the log-likelihoods are" : "the statistic is") *
              " from its last iterate"
    return GroupTest(r.statistic, statistic, r.df, r.p_value, r.p_value_bootstrap,
                     Int(r.bootstrap),
                     r.loglik_null, r.loglik_groups, Int(r.groups), Int(r.categories),
                     r.converged != 0, labels, seed0)
end

function _test_groups_call(c::DirmnCounts, ctx::DirmnContext, codes::Vector{Int64}, G::Int,
                           bootstrap::Int64, seed::UInt64, tolerance, max_iterations,
                           statistic::LibDirmn.dirmn_group_statistic)
    oref = Ref(LibDirmn.empty_group_test_options())
    LibDirmn.dirmn_group_test_options_init_sized(oref,
                                                 sizeof(LibDirmn.dirmn_group_test_options))
    o = oref[]
    oref[] = LibDirmn.dirmn_group_test_options(o.size, bootstrap, seed,
                                               Float64(_or(tolerance, o.tolerance)),
                                               Cint(_or(max_iterations, o.max_iterations)),
                                               statistic)
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
          t.pvalue, t.bootstrap > 0 ? ", pvalue_bootstrap=$(t.pvalue_bootstrap)" : "",
          ", statistic_kind=:", t.statistic_kind, ")")
end

function Base.show(io::IO, ::MIME"text/plain", t::GroupTest)
    println(io, "Group test: ", _group_null_text(t.statistic_kind), " for every observation ",
            "against one per group (", _group_statistic_text(t.statistic_kind), ")")
    println(io, "  data        ", _plural(t.groups, "group"), " with counts (of ",
            length(t.group), " labels), ", t.categories,
            t.categories == 1 ? " category" : " categories", " with counts")
    println(io, "  loglik      ", t.statistic_kind === :xoc ? "shared precision " : "one DM ",
            t.loglik_null, "   per group ", t.loglik_groups,
            t.converged ? "" : "   (NOT converged)")
    println(io, "  statistic   ", t.statistic, "   (χ² with ", _count_text(t.dof), " dof)")
    print(io, "  p-value     ", t.pvalue)
    t.bootstrap > 0 &&
        print(io, "\n  bootstrap   p-value ", t.pvalue_bootstrap, " from ", t.bootstrap,
              " tables (seed ", Int128(t.seed), ")")
end

# --- one group against a given composition (dirmn_test_proportions) -----------------

"""
    ProportionTest

The result of [`test_proportions`](@ref): HMP's Xsc test of the
observations' pooled proportions against given ones. Fields:

- `statistic::Float64`: HMP's Xsc, ≥ 0; `Inf` where a category with
  counts has proportion 0;
- `dof::Float64`: its degrees of freedom, `categories - 1`;
- `pvalue::Float64`: `P(χ²_dof ≥ statistic)` (also [`pvalue`](@ref)`(t)`;
  0 where the statistic is `Inf`);
- `theta::Float64`: Weir's method-of-moments overdispersion of the
  observations (0 for one observation);
- `nobs::Int`: the observations with counts (also [`nobs`](@ref)`(t)`);
- `categories::Int`: the categories with a positive proportion.

Accessors: [`pvalue`](@ref), [`dof`](@ref), [`nobs`](@ref).
"""
struct ProportionTest
    statistic::Float64
    dof::Float64
    pvalue::Float64
    theta::Float64
    nobs::Int
    categories::Int
end

"""
    pvalue(t::ProportionTest) -> Float64

The χ² p-value of the proportion test (`t.pvalue`).
"""
pvalue(t::ProportionTest) = t.pvalue

"""
    dof(t::ProportionTest) -> Float64

The degrees of freedom of the proportion test's χ² reference (`t.dof`:
the categories with a positive proportion, less one).
"""
dof(t::ProportionTest) = t.dof

"""
    nobs(t::ProportionTest) -> Int

The observations with counts the proportion test used (`t.nobs`).
"""
nobs(t::ProportionTest) = t.nobs

"""
    test_proportions(X, proportions; obsdim = 2, backend = :auto, device = 0,
                     context = nothing, real_valued = false) -> ProportionTest

Do the observations share a given composition? HMP's `Xsc.onesample` (La
Rosa et al. 2012; libdirmn's `dirmn_test_proportions`): the observations'
pooled proportions `π` (each category's total over the grand total)
against `proportions` (`π₀`), a Wald statistic in the method-of-moments
covariance of `π`, `c (diag(π₀) - π₀ π₀ᵀ)` with `c = (θ (ΣN² - ΣN) + ΣN) /
(ΣN)²` over the observations' totals N and `θ` Weir's method-of-moments
overdispersion of the observations (0 for one observation), taken through
that matrix's Moore-Penrose inverse:

    statistic = Σ_{v: π₀_v > 0} (π_v - π₀_v)² / (π₀_v c),

referred to χ² with (categories with `π₀_v > 0`) - 1 degrees of freedom.
One observation gives Pearson's χ² statistic. No fit enters it. A category
with counts whose proportion is 0 makes the statistic `Inf` and the
p-value 0 (HMP's numerical inverse ignores that category). Observations
without counts are left out (HMP counts them in Weir's θ). Returns a
[`ProportionTest`](@ref).

- `X`: anything [`DirmnCounts`](@ref) accepts (one observation per column
  by default, `obsdim = 1` for one per row), or a `DirmnCounts`;
- `proportions`: an `AbstractVector` of one proportion per category
  (finite, ≥ 0, at least two positive, summing to 1 within 1e-6; they are
  divided by their sum), e.g. another table's pooled proportions; a
  strided view is passed without a copy;
- `backend`, `device`, `context`, `real_valued`: as for [`loglik`](@ref).

`proportions` of another length than the categories raises a
[`DirmnError`](@ref) `DIRMN_ERROR_DIMENSION_MISMATCH`, a negative or
non-finite entry `DIRMN_ERROR_INVALID_PARAMETER` naming it (the
library's 0-based index, and `proportions[i]` in Julia), fewer than two
positive entries, a sum other than 1 or a table without counts
`DIRMN_ERROR_INVALID_ARGUMENT`.

```julia
t = test_proportions(S, vec(sum(T; dims = 2)) ./ sum(T))   # S, T: categories × observations
t.statistic, dof(t), pvalue(t), t.theta
test_proportions(B, fill(1 / size(B, 2), size(B, 2)); obsdim = 1)   # B: samples × taxa
```
"""
function test_proportions(X, proportions::AbstractVector; obsdim::Integer = 2,
                          backend::Symbol = :auto, device::Integer = 0,
                          context::Union{Nothing,DirmnContext} = nothing,
                          real_valued::Bool = false)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    r = _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        # The library reads exactly one proportion per category.
        length(proportions) == c.ncat ||
            _mismatch("test_proportions: proportions has length $(length(proportions)) but " *
                      "the counts have $(c.ncat) categories (one proportion per category)")
        P, s = _native_vector(_check_real(proportions, "proportions"), Float64)
        _test_proportions_call(c, ctx, P, s)
    end
    return ProportionTest(r.statistic, r.df, r.p_value, r.theta, Int(r.rows),
                          Int(r.categories))
end

function _test_proportions_call(c::DirmnCounts, ctx::DirmnContext, P, stride::Integer)
    rref = Ref(LibDirmn.empty_proportion_test_result())
    more = function (loc)
        (loc !== nothing && _argument(loc) == "proportions" && loc.index >= 0) ||
            return nothing
        return " [proportions[$(loc.index + 1)] in Julia]"
    end
    GC.@preserve P begin
        _with(ctx, c.context) do p
            st = LibDirmn.dirmn_test_proportions(p, _handle(c), pointer(P), Int64(stride), rref)
            _check(st, p, _call_hint(c, ctx, more))
        end
    end
    return rref[]
end

function Base.show(io::IO, t::ProportionTest)
    print(io, "ProportionTest(statistic=", t.statistic, ", dof=", _count_text(t.dof),
          ", pvalue=", t.pvalue, ", theta=", t.theta, ")")
end

function Base.show(io::IO, ::MIME"text/plain", t::ProportionTest)
    println(io, "Proportion test: the observations' pooled proportions against given ones ",
            "(HMP's Xsc)")
    println(io, "  data        ", _plural(t.nobs, "observation"), " with counts, ",
            t.categories, t.categories == 1 ? " category" : " categories",
            " with a positive proportion")
    println(io, "  theta       ", t.theta, " (Weir's method-of-moments overdispersion)")
    println(io, "  statistic   ", t.statistic, "   (χ² with ", _count_text(t.dof), " dof)")
    print(io, "  p-value     ", t.pvalue)
end

# --- the test's power by simulation (dirmn_power_groups) ------------------------------

"""
    GroupPower

The result of [`power_groups`](@ref) and [`power_proportions`](@ref): the
power of [`test_groups`](@ref)'s or [`test_proportions`](@ref)'s χ² test by
simulation. Fields:

- `power::Float64`: the share of the simulated tables the test rejected at
  `level` (`rejected / tables`);
- `std_error::Float64`: its binomial standard error,
  `sqrt(power (1 - power) / tables)` (also [`stderror`](@ref)`(p)`);
- `tables::Int`: the tables simulated;
- `rejected::Int`: the tables whose χ² p-value was below `level`;
- `mean_statistic::Float64`: the test statistic's mean over the tables
  (for [`power_proportions`](@ref), `Inf` where a table has counts in a
  category whose proportion is 0);
- `statistic_kind::Symbol`: the test's statistic, `:lrt`, `:xmcupo` or
  `:xoc` for [`power_groups`](@ref), `:xsc` (HMP's Xsc) for
  [`power_proportions`](@ref);
- `level::Float64`: the test's level;
- `seed::UInt64`: the simulation's seed.
"""
struct GroupPower
    power::Float64
    std_error::Float64
    tables::Int
    rejected::Int
    mean_statistic::Float64
    statistic_kind::Symbol
    level::Float64
    seed::UInt64
end

"""
    stderror(p::GroupPower) -> Float64

The binomial standard error of the simulated power (`p.std_error`).
"""
stderror(p::GroupPower) = p.std_error

"""
    power_groups(alpha, rows_per_group, size; statistic = :lrt, tables = 1000,
                 level = 0.05, seed = 0, param = :alpha, tolerance = nothing,
                 max_iterations = nothing, backend = :auto, device = 0,
                 context = nothing) -> GroupPower

The power of [`test_groups`](@ref)'s χ² test by simulation (libdirmn's
`dirmn_power_groups`; HMP's `MC.Xdc.statistics` for the full-likelihood
test, `MC.Xmcupo.statistics` for `statistic = :xmcupo`, `MC.Xoc.statistics`
for `statistic = :xoc`): `tables` tables
are drawn, each with `rows_per_group[g]` observations from
DM(`alpha[:, g]`) for every group g, each is tested as `test_groups` tests
a table with `statistic`, and the power is the share with a p-value below
`level`, with its binomial standard error. Equal columns of `alpha` give the test's
size (its actual level). A table in which fewer than two groups have counts
counts as not rejected. Returns a [`GroupPower`](@ref).

- `alpha`: V × k, group g's parameter vector in column g (k ≥ 2; the
  layout of a [`DirMultMixtureModel`](@ref)'s `alpha`), log α with
  `param = :logalpha`;
- `rows_per_group`: the observations of each group, an integer for every
  group or a vector of k;
- `size`: the number of trials of the observations: an integer for every
  observation; a vector of k integers, one per group (every observation of
  group g has `size[g]`); or a vector of k vectors, group g's
  observations' sizes (`rows_per_group[g]` entries each; an integer entry
  stands for all of its group's);
- `statistic`: the test's statistic, as for [`test_groups`](@ref): `:lrt`
  (the default: the likelihood ratio, χ² on `(G - 1) P` degrees of
  freedom), `:xmcupo` (HMP's Xmcupo, χ² on `(G - 1) (P - 1)`) or `:xoc`
  (HMP's Xoc, one shared overdispersion against one per group, χ² on
  `G - 1`; columns of `alpha` with the same sum give its size);
- `tables`: the tables simulated (≥ 1); `level`: the test's level, in
  (0, 1);
- `seed`: an integer in 0 .. 2^64 - 1 ([`rand`](@ref)'s; table t is drawn
  with a seed derived from it), or `nothing` for one from Julia's global
  random number generator: the same seed gives the same result on every
  backend and for any number of threads (the tables run on the context's
  threads, each on one);
- `tolerance`, `max_iterations`: every fit's, as for [`fit_dirmn`](@ref)
  (the library's defaults, 1e-10 and 1000, where `nothing`);
- `backend`, `device`, `context`: as for [`loglik`](@ref).

Fewer than two columns of `alpha`, a negative entry of `rows_per_group` or
fewer than two groups with observations, `tables` < 1, `level` outside
(0, 1), a size outside 0 .. 2^31 - 1 raise a [`DirmnError`](@ref)
`DIRMN_ERROR_INVALID_ARGUMENT` naming the argument (and entry), lengths
that do not match the groups `DIRMN_ERROR_DIMENSION_MISMATCH`, an α out of
the sampler's range [1e-306, 1e306] `DIRMN_ERROR_INVALID_PARAMETER` naming
`alpha[v, g]`; a `statistic` other than `:lrt`, `:xmcupo` or `:xoc` an
`ArgumentError`.

```julia
p = power_groups([2.0 3.0; 3.0 2.0; 1.0 1.0; 4.0 4.0], 30, 100; tables = 500, seed = 1)
p.power, stderror(p)
power_groups([2.0 3.0; 3.0 2.0; 1.0 1.0; 4.0 4.0], 30, 100; statistic = :xmcupo).power
```
"""
function power_groups(alpha::AbstractMatrix, rows_per_group, size; statistic::Symbol = :lrt,
                      tables::Integer = 1000, level::Real = 0.05, seed = 0,
                      param::Symbol = :alpha,
                      tolerance::Union{Nothing,Real} = nothing,
                      max_iterations::Union{Nothing,Integer} = nothing,
                      backend::Symbol = :auto, device::Integer = 0,
                      context::Union{Nothing,DirmnContext} = nothing)
    code = _param_code(param)
    stat = _group_statistic_code(statistic)
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    typemin(Int64) <= tables <= typemax(Int64) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "power_groups: tables = $tables does not fit 64 bits"))
    seed0 = _sample_seed(seed)
    P = Matrix{Float64}(_check_real(alpha, "alpha"))
    V, k = Base.size(P)
    (k >= 2 && V >= 1) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "power_groups: alpha is $V × $k: it needs one column per group, " *
                         "at least 2 groups, and at least one category"))
    rows = _power_rows(rows_per_group, k)
    rowsizes = _power_sizes(size, rows)
    ctx = _context(context, backend, device)
    r = _power_call(ctx, P, code, rows, rowsizes, Int64(tables), Float64(level), seed0,
                    tolerance, max_iterations, stat)
    return GroupPower(r.power, r.std_error, Int(r.tables), Int(r.rejected), r.mean_statistic,
                      statistic, Float64(level), seed0)
end

# The observations of each group, k of them: checked here, as the library
# checks them, to name them in Julia's terms.
function _power_rows(rows_per_group, k::Int)
    rows = if rows_per_group isa Integer
        fill(rows_per_group, k)
    elseif rows_per_group isa AbstractVector
        length(rows_per_group) == k ||
            _mismatch("power_groups: rows_per_group has length $(length(rows_per_group)) " *
                      "but alpha has $k groups (columns)")
        rows_per_group
    else
        throw(ArgumentError("rows_per_group must be an integer or a vector of $k integers, " *
                            "not a $(typeof(rows_per_group))"))
    end
    out = Vector{Int64}(undef, k)
    for (g, n) in enumerate(rows)
        (n isa Real && isinteger(n) && 0 <= n <= 2.0^40) ||
            throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                             "power_groups: rows_per_group[$g] = $n is not an integer in " *
                             "0 .. 2^40 (a number of observations)"))
        out[g] = Int64(n)
    end
    with = count(>(0), out)
    with >= 2 ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "power_groups: rows_per_group gives observations to $with " *
                         "group$(with == 1 ? "" : "s"): the test needs at least 2"))
    return out
end

# Every observation's size, the groups' observations in order (`size`:
# power_groups's argument).
function _power_sizes(size, rows::Vector{Int64})
    k = length(rows)
    size isa Real && return fill(Int64(_power_size(size, "size")), Int(sum(rows)))
    size isa AbstractVector ||
        throw(ArgumentError("size must be an integer, a vector of $k integers or of $k " *
                            "vectors, not a $(typeof(size))"))
    length(size) == k ||
        _mismatch("power_groups: size has length $(length(size)) but alpha has $k groups " *
                  "(columns): give one size per group, or one vector of sizes per group")
    out = Int64[]
    for (g, s) in enumerate(size)
        if s isa Real
            append!(out, fill(Int64(_power_size(s, "size[$g]")), rows[g]))
        elseif s isa AbstractVector
            length(s) == rows[g] ||
                _mismatch("power_groups: size[$g] has length $(length(s)) but group $g has " *
                          "$(rows[g]) observations")
            for (i, v) in enumerate(s)
                push!(out, _power_size(v, "size[$g][$i]"))
            end
        else
            throw(ArgumentError("size[$g] must be an integer or a vector of $(rows[g]) " *
                                "integers, not a $(typeof(s))"))
        end
    end
    return out
end

function _power_size(v, name::AbstractString, fn::AbstractString = "power_groups")
    (v isa Real && isinteger(v) && 0 <= v <= typemax(Int32)) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "$fn: $name = $v is not an integer in 0 .. 2^31 - 1 (a " *
                         "number of trials)"))
    return Int64(v)
end

function _power_call(ctx::DirmnContext, P::Matrix{Float64}, code, rows::Vector{Int64},
                     sizes::Vector{Int64}, tables::Int64, level::Float64, seed::UInt64,
                     tolerance, max_iterations, statistic::LibDirmn.dirmn_group_statistic)
    V, k = Base.size(P)
    oref = Ref(LibDirmn.empty_power_options())
    LibDirmn.dirmn_power_options_init_sized(oref, sizeof(LibDirmn.dirmn_power_options))
    o = oref[]
    oref[] = LibDirmn.dirmn_power_options(o.size, tables, level, seed,
                                          Float64(_or(tolerance, o.tolerance)),
                                          Cint(_or(max_iterations, o.max_iterations)),
                                          statistic)
    rref = Ref(LibDirmn.empty_power_result())
    # rows_per_group and size were checked in Julia; alpha is the library's to check.
    hint = function (loc)
        (loc !== nothing && _argument(loc) == "params" && loc.vector >= 0 &&
         loc.index >= 0) || return nothing
        g, v = loc.vector + 1, loc.index + 1
        return " [alpha[$v, $g] in Julia: group $g, category $v]"
    end
    GC.@preserve P rows sizes begin
        _with(ctx) do p
            st = LibDirmn.dirmn_power_groups(p, Int64(k), Int64(V), pointer(P), Int64(V),
                                             Int64(1), code, pointer(rows), pointer(sizes),
                                             oref, rref)
            _check(st, p, hint)
        end
    end
    return rref[]
end

function Base.show(io::IO, p::GroupPower)
    print(io, "GroupPower(power=", p.power, ", std_error=", p.std_error, ", tables=", p.tables,
          ", level=", p.level, ", statistic_kind=:", p.statistic_kind, ")")
end

function Base.show(io::IO, ::MIME"text/plain", p::GroupPower)
    if p.statistic_kind === :xsc
        println(io, "Power of the proportion test (the observations' pooled proportions ",
                "against given ones, HMP's Xsc) by simulation")
    else
        println(io, "Power of the group test (", _group_null_text(p.statistic_kind),
                " against one per group, ", _group_statistic_text(p.statistic_kind),
                ") by simulation")
    end
    println(io, "  power       ", p.power, " ± ", p.std_error, " (standard error)")
    println(io, "  rejected    ", p.rejected, " of ", _plural(p.tables, "table"), " at level ",
            p.level, " (seed ", Int128(p.seed), ")")
    print(io, "  statistic   mean ", p.mean_statistic)
end

# --- the proportion test's power by simulation (dirmn_power_proportions) ----------------

"""
    power_proportions(alpha, proportions, rows, size; tables = 1000, level = 0.05,
                      seed = 0, param = :alpha, backend = :auto, device = 0,
                      context = nothing) -> GroupPower

The power of [`test_proportions`](@ref)'s χ² test by simulation (libdirmn's
`dirmn_power_proportions`; HMP's `MC.Xsc.statistics`): `tables` tables are
drawn, each of `rows` observations from DM(`alpha`), observation b with
`size[b]` trials, each is tested against `proportions` as
`test_proportions` tests a table (HMP's Xsc), and the power is the share
with a p-value below `level`, with its binomial standard error. `alpha`
proportional to `proportions` gives the test's size (its actual level). A
table without counts counts as not rejected. No fit enters the test.
Returns a [`GroupPower`](@ref) with `statistic_kind = :xsc`; its
`mean_statistic` is `Inf` where a table has counts in a category whose
proportion is 0.

- `alpha`: the V parameters of the DM the tables are drawn from (V ≥ 2),
  log α with `param = :logalpha`;
- `proportions`: the composition tested against, as for
  [`test_proportions`](@ref): one per category (V of them; finite, ≥ 0, at
  least two positive, summing to 1 within 1e-6); a strided view is passed
  without a copy;
- `rows`: the observations of each table (an integer in 1 .. 2^40);
- `size`: the number of trials of the observations: an integer for every
  observation, or a vector of `rows` integers, one per observation;
- `tables`: the tables simulated (≥ 1); `level`: the test's level, in
  (0, 1);
- `seed`: an integer in 0 .. 2^64 - 1 ([`rand`](@ref)'s; table t is drawn
  with a seed derived from it, as [`power_groups`](@ref) draws its tables),
  or `nothing` for one from Julia's global random number generator: the
  same seed gives the same result for any number of threads (the tables
  run on the context's threads, each on one);
- `backend`, `device`, `context`: as for [`loglik`](@ref).

`alpha` and `proportions` of different lengths raise a
[`DirmnError`](@ref) `DIRMN_ERROR_DIMENSION_MISMATCH`; fewer than two
categories, `rows` outside 1 .. 2^40, a size outside 0 .. 2^31 - 1, `size`
of another length than `rows`, `tables` < 1, `level` outside (0, 1), fewer
than two positive proportions or proportions not summing to 1
`DIRMN_ERROR_INVALID_ARGUMENT` naming the argument (and entry); a negative
or non-finite proportion `DIRMN_ERROR_INVALID_PARAMETER` naming
`proportions[i]`, an α out of the sampler's range [1e-306, 1e306]
`DIRMN_ERROR_INVALID_PARAMETER` naming `alpha[v]`.

```julia
pi0 = collect(1.0:8.0) ./ 36
power_proportions(20 .* pi0, pi0, 30, 500; tables = 400, seed = 1).power   # the size, ≈ 0.05
p = power_proportions(20 .* reverse(pi0), pi0, 30, 500; tables = 400, seed = 1)
p.power, stderror(p)
```
"""
function power_proportions(alpha::AbstractVector, proportions::AbstractVector, rows, size;
                           tables::Integer = 1000, level::Real = 0.05, seed = 0,
                           param::Symbol = :alpha, backend::Symbol = :auto, device::Integer = 0,
                           context::Union{Nothing,DirmnContext} = nothing)
    fn = "power_proportions"
    code = _param_code(param)
    typemin(Int64) <= tables <= typemax(Int64) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "$fn: tables = $tables does not fit 64 bits"))
    seed0 = _sample_seed(seed)
    A = Vector{Float64}(_check_real(alpha, "alpha"))
    V = length(A)
    length(proportions) == V ||
        _mismatch("$fn: proportions has length $(length(proportions)) but alpha has $V " *
                  "categories (one proportion per category)")
    V >= 2 ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "$fn: alpha and proportions have $V categor$(V == 1 ? "y" : "ies"): " *
                         "the test needs at least 2"))
    (rows isa Real && isinteger(rows) && 1 <= rows <= 2.0^40) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "$fn: rows = $rows is not an integer in 1 .. 2^40 (the observations " *
                         "of each table)"))
    n = Int(rows)
    sizes = if size isa Real
        fill(_power_size(size, "size", fn), n)
    elseif size isa AbstractVector
        length(size) == n ||
            _mismatch("$fn: size has length $(length(size)) but each table has $n " *
                      "observations (rows): give one size, or one per observation")
        Int64[_power_size(v, "size[$i]", fn) for (i, v) in enumerate(size)]
    else
        throw(ArgumentError("size must be an integer or a vector of $n integers, not a " *
                            "$(typeof(size))"))
    end
    P, ps = _native_vector(_check_real(proportions, "proportions"), Float64)
    ctx = _context(context, backend, device)
    r = _power_proportions_call(ctx, A, code, sizes, P, ps, Int64(tables), Float64(level), seed0)
    return GroupPower(r.power, r.std_error, Int(r.tables), Int(r.rejected), r.mean_statistic,
                      :xsc, Float64(level), seed0)
end

function _power_proportions_call(ctx::DirmnContext, A::Vector{Float64}, code,
                                 sizes::Vector{Int64}, P, pstride::Integer, tables::Int64,
                                 level::Float64, seed::UInt64)
    oref = Ref(LibDirmn.empty_power_options())
    LibDirmn.dirmn_power_options_init_sized(oref, sizeof(LibDirmn.dirmn_power_options))
    o = oref[]
    oref[] = LibDirmn.dirmn_power_options(o.size, tables, level, seed, o.tolerance,
                                          o.max_iterations, o.statistic)
    rref = Ref(LibDirmn.empty_power_result())
    # rows and size were checked in Julia; alpha and proportions are the
    # library's to check.
    hint = function (loc)
        (loc !== nothing && loc.index >= 0) || return nothing
        arg = _argument(loc)
        arg == "params" && return " [alpha[$(loc.index + 1)] in Julia]"
        arg == "proportions" && return " [proportions[$(loc.index + 1)] in Julia]"
        return nothing
    end
    GC.@preserve A sizes P begin
        _with(ctx) do p
            st = LibDirmn.dirmn_power_proportions(p, Int64(length(A)), pointer(A), Int64(1),
                                                  code, Int64(length(sizes)), pointer(sizes),
                                                  pointer(P), Int64(pstride), oref, rref)
            _check(st, p, hint)
        end
    end
    return rref[]
end
