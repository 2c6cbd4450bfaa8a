# Many small regressions in one call (dirmn_reg_test_groups): differential
# usage, DRIMSeq's workflow. The columns of a table are partitioned into
# groups (genes and their transcripts); each group gets a full and a null
# regression and their likelihood-ratio test, with Benjamini-Hochberg
# adjusted p-values over the groups tested.

"""
    DirmnGroupTests

The per-group likelihood-ratio tests of [`test_dirmn_groups`](@ref): one
entry per group, in the order of `group` (the groups' labels, in the order
they first appear in the `groups` argument). Fields, vectors of that
length unless said otherwise:

- `group::Vector`: the group's label;
- `categories::Vector{Int}`: the group's columns with counts (under the
  weights), the categories its regressions have;
- `loglik_full`, `loglik_null` (`Vector{Float64}`): the maximised
  log-likelihoods (log pmf with the multinomial coefficients) of the
  group's regression on the full design and on the null design (its first
  `p_null` columns);
- `statistic::Vector{Float64}`: the likelihood-ratio statistic,
  `2 (loglik_full - loglik_null)`;
- `dof::Vector{Float64}`: its degrees of freedom, `(p - p_null)` times the
  group's free coefficients per covariate (`categories - 1` for
  `:meanprecision`, `categories` for `:loglinear`);
- `pvalue::Vector{Float64}`: `P(χ²_dof ≥ statistic)`;
- `padjusted::Vector{Float64}`: the Benjamini-Hochberg adjusted p-value
  over the groups tested (R's `p.adjust(p, method = "BH")`);
- `converged::Vector{Bool}`: whether both fits met the tolerance;
- `status::Vector{Symbol}`: `:ok` where the group was tested, else why not:
  the library's status, as a [`DirmnError`](@ref)'s name without its
  `DIRMN_ERROR_` prefix, lower-cased (`:invalid_argument` for a group of
  fewer than two columns with counts, fewer rows with counts than
  covariates, or a design not of full rank on its rows; `:overflow` for an
  α beyond the double range). Such a group's numbers are `NaN` and it is
  left out of the adjustment;
- `tested::Int`: the number of groups tested;
- `parametrization::Symbol`: `:meanprecision` or `:loglinear`;
- `covariates::Int`, `p_null::Int`: the columns of the full design (p) and
  of the null design;
- `hold_precision::Bool`: whether each null fit held its full fit's
  precision.

[`pvalue`](@ref) and [`dof`](@ref) return the vectors.
"""
struct DirmnGroupTests{T}
    group::Vector{T}
    categories::Vector{Int}
    loglik_full::Vector{Float64}
    loglik_null::Vector{Float64}
    statistic::Vector{Float64}
    dof::Vector{Float64}
    pvalue::Vector{Float64}
    padjusted::Vector{Float64}
    converged::Vector{Bool}
    status::Vector{Symbol}
    tested::Int
    parametrization::Symbol
    covariates::Int
    p_null::Int
    hold_precision::Bool
end

"""
    pvalue(t::DirmnGroupTests) -> Vector{Float64}

The groups' p-values (`t.pvalue`; `NaN` for a group not tested).
"""
pvalue(t::DirmnGroupTests) = t.pvalue

"""
    dof(t::DirmnGroupTests) -> Vector{Float64}

The degrees of freedom of each group's likelihood-ratio test (`t.dof`).
"""
dof(t::DirmnGroupTests) = t.dof

Base.length(t::DirmnGroupTests) = length(t.group)

# The groups' labels in order of first appearance and every category's
# 0-based group code (-1 for `missing` or `nothing`: left out).
function _group_codes(groups::AbstractVector)
    index = Dict{Any,Int}()
    labels = Any[]
    codes = Vector{Int64}(undef, length(groups))
    for (k, g) in enumerate(groups)
        if g === missing || g === nothing
            codes[k] = -1
            continue
        end
        i = get!(index, g) do
            push!(labels, g)
            length(labels) - 1
        end
        codes[k] = i
    end
    isempty(labels) &&
        throw(ArgumentError("groups has no group: every entry is missing or nothing"))
    return [l for l in labels], codes
end

# :ok, or the status's name without DIRMN_ERROR_, lower-cased.
_group_status(code::Integer) =
    code == 0 ? :ok :
    Symbol(lowercase(replace(string(_status_name(code)), r"^DIRMN_(ERROR_)?" => "")))

"""
    test_dirmn_groups(Y, X, groups; p_null = 1, parametrization = :meanprecision,
                      hold_precision = false, obsdim = 1, weights = nothing,
                      tolerance = nothing, max_iterations = nothing, backend = :auto,
                      device = 0, context = nothing, real_valued = false) -> DirmnGroupTests

Differential usage of the categories within groups, DRIMSeq's workflow as
one call of the library (`dirmn_reg_test_groups`): the categories (columns)
of the counts `Y` are partitioned into groups by `groups` (one label per
category: genes for their transcripts; `missing` or `nothing` leaves the
category out), and each group gets its own Dirichlet-multinomial
regression ([`fit_dirmn_reg`](@ref)) of its columns with counts on the full
design `X` and on the null design `X[:, 1:p_null]`, and their
likelihood-ratio test: `statistic = 2 (loglik_full - loglik_null)` against
χ² with `(p - p_null)` × (the group's categories - 1) degrees of freedom
(`:meanprecision`; × the categories for `:loglinear`). The p-values are
adjusted over the groups tested by Benjamini and Hochberg. Returns a
[`DirmnGroupTests`](@ref).

The default `parametrization = :meanprecision` is DRIMSeq's model
(proportions a softmax of the linear predictors, one precision per group;
each group's reference category its first column with counts). By default
each fit has its own maximum-likelihood precision; `hold_precision = true`
fits each group's null model at its full fit's precision, as DRIMSeq does
(its precision is estimated once, on the full design), which makes the
statistics no smaller (the log-linear model ignores it). Each group's fits
are those [`fit_dirmn_reg`](@ref) makes of its table of columns with counts
(rows without counts take no part). Groups run on the context's threads;
the results do not depend on their number.

- `Y`: the counts, one observation per row (`obsdim = 2` for a categories ×
  observations table), anything [`fit_dirmn_reg`](@ref) accepts;
- `X`: the full design, rows × p with p ≥ 2, its first `p_null` columns
  the null design (put the columns tested last: `X = [ones(n) condition]`
  with `p_null = 1` tests the condition);
- `groups`: an `AbstractVector` of labels, one per category; the result
  lists the groups in the order they first appear;
- `weights`, `tolerance`, `max_iterations`, `backend`, `device`,
  `context`, `real_valued`: as for [`fit_dirmn_reg`](@ref).

A group that cannot be tested (fewer than two columns with counts, fewer
rows with counts than p, `X` not of full rank on its rows) gets a `status`
saying why and `NaN` results, and the call still succeeds. A tested group
whose fits did not converge gives `converged = false` and a warning.
`groups` of another length than the categories raises a
[`DirmnError`](@ref) `DIRMN_ERROR_DIMENSION_MISMATCH`; an unknown
`parametrization` an `ArgumentError`; `p_null` outside `1:p - 1`, or p < 2,
`DIRMN_ERROR_INVALID_ARGUMENT`; a non-finite entry of `X`
`DIRMN_ERROR_INVALID_PARAMETER`, naming it. Counts attached to a
[`Communicator`](@ref) raise `DIRMN_ERROR_NOT_SUPPORTED`: the groups' tests
do not sum over ranks in this release (each group's
[`fit_dirmn_reg`](@ref) on split counts does).

```julia
# Y: samples × transcripts, gene: each transcript's gene, cond: 0/1 per sample
t = test_dirmn_groups(Y, [ones(n) cond], gene)
t.group[t.padjusted .< 0.05]          # genes whose transcript usage changes
```
"""
function test_dirmn_groups(Y, X::AbstractMatrix, groups::AbstractVector; p_null::Integer = 1,
                           parametrization::Symbol = :meanprecision,
                           hold_precision::Bool = false, obsdim::Integer = 1,
                           weights = nothing, tolerance::Union{Nothing,Real} = nothing,
                           max_iterations::Union{Nothing,Integer} = nothing,
                           backend::Symbol = :auto, device::Integer = 0,
                           context::Union{Nothing,DirmnContext} = nothing,
                           real_valued::Bool = false)
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    model = _reg_model_code(parametrization)
    labels, codes = _group_codes(groups)
    G = length(labels)
    A, s1, s2 = _native_matrix(_check_real(X, "X"), Float64)
    rows, p = size(X)
    r = _with_counts(Y, obsdim, real_valued, backend, device, context) do c, ctx
        length(codes) == c.ncat ||
            _mismatch("groups has length $(length(codes)) but the counts have $(c.ncat) " *
                      "categories (one group label per category)")
        _test_groups(c, ctx, A, s1, s2, rows, p, codes, G, p_null, _weights(c, weights),
                     tolerance, max_iterations, model, hold_precision)
    end
    lf, ln, st, df, pv, pa, status, conv, cats, tested = r
    stat = [_group_status(s) for s in status]
    ok = stat .=== :ok
    bad = count(ok .& (conv .== 0))
    bad == 0 ||
        @warn "test_dirmn_groups: the fits of $bad of the $tested groups tested stopped " *
              "without convergence (converged = false)"
    return DirmnGroupTests(labels, Int.(cats), lf, ln, st, df, pv, pa,
                           Bool[c != 0 for c in conv], stat, Int(tested), parametrization,
                           Int(p), Int(p_null), hold_precision)
end

# The design in native memory (a function barrier, as _fit_reg's).
function _test_groups(c::DirmnCounts, ctx::DirmnContext, A, s1, s2, rows, p,
                      codes::Vector{Int64}, G::Int, p_null, w, tolerance, max_iterations, model,
                      hold::Bool)
    lf, ln, st, df, pv, pa = (Vector{Float64}(undef, G) for _ in 1:6)
    status, conv = Vector{Int32}(undef, G), Vector{Int32}(undef, G)
    cats = Vector{Int64}(undef, G)
    hint = _call_hint(c, ctx, _reg_hint("X", c.vector ? nothing : c.obsdim))
    GC.@preserve A w codes lf ln st df pv pa status conv cats begin
        oref = Ref(LibDirmn.empty_reg_options())
        LibDirmn.dirmn_reg_options_init_sized(oref, sizeof(LibDirmn.dirmn_reg_options))
        o = oref[]
        oref[] = LibDirmn.dirmn_reg_options(
            o.size, Float64(_or(tolerance, o.tolerance)),
            Cint(_or(max_iterations, o.max_iterations)), _wptr(w), C_NULL, C_NULL, model,
            LibDirmn.DIRMN_REG_REFERENCE, Int64(0), o.log_precision, Cint(hold))
        rref = Ref(LibDirmn.dirmn_reg_groups_result(
            Csize_t(sizeof(LibDirmn.dirmn_reg_groups_result)), pointer(lf), pointer(ln),
            pointer(st), pointer(df), pointer(pv), pointer(pa), pointer(status),
            pointer(conv), pointer(cats), Int64(0)))
        _with(ctx, c.context) do ptr
            st_ = LibDirmn.dirmn_reg_test_groups(ptr, _handle(c), pointer(codes), Int64(G),
                                                 Ptr{Cdouble}(pointer(A)), Int64(rows),
                                                 Int64(p), Int64(s1), Int64(s2),
                                                 Int64(p_null), oref, rref)
            _check(st_, ptr, hint)
        end
        return lf, ln, st, df, pv, pa, status, conv, cats, rref[].tested
    end
end

# --- display -----------------------------------------------------------------------

function Base.show(io::IO, t::DirmnGroupTests)
    print(io, "DirmnGroupTests(", t.parametrization, ", groups=", length(t.group), ", tested=",
          t.tested, ", p=", t.covariates, ", p_null=", t.p_null, ")")
end

# The table prints at most this many groups.
const _GROUPS_SHOW_ROWS = 20

function Base.show(io::IO, ::MIME"text/plain", t::DirmnGroupTests)
    G = length(t.group)
    println(io, "DirmnGroupTests: per-group likelihood-ratio tests, ",
            t.parametrization === :meanprecision ? "mean/precision" : "log-linear",
            " regression, full design ", t.covariates, " columns, null its first ", t.p_null,
            t.hold_precision ? " (at the full fit's precision)" : "")
    untested = G - t.tested
    print(io, "  ", _plural(G, "group"), ", ", t.tested, " tested",
          untested == 0 ? "" : ", $untested not (status)",
          "; ", count(x -> x < 0.05, filter(!isnan, t.padjusted)),
          " with padjusted < 0.05")
    G == 0 && return
    println(io)
    rows = [["group", "categories", "statistic", "dof", "pvalue", "padjusted", "status"]]
    for g in 1:min(G, _GROUPS_SHOW_ROWS)
        push!(rows, [string(t.group[g]), string(t.categories[g]),
                     string(round(t.statistic[g]; sigdigits = 6)), _count_text(t.dof[g]),
                     string(round(t.pvalue[g]; sigdigits = 4)),
                     string(round(t.padjusted[g]; sigdigits = 4)),
                     t.status[g] === :ok ? (t.converged[g] ? "ok" : "ok (not converged)") :
                                          string(t.status[g])])
    end
    _print_table(io, rows)
    G > _GROUPS_SHOW_ROWS && print(io, "\n  … ", G - _GROUPS_SHOW_ROWS, " more groups")
end
