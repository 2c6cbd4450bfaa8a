# Dirichlet-multinomial regression (covariates -> composition) over
# dirmn_reg_*: the result type, fit_dirmn_reg, its accessors, prediction,
# Wald tests and display.

"""
    Dirmn.REG_VCOV_MAX_COEFFICIENTS = 5000

The most free coefficients (`dof(f)`: p V, or p (V - 1) + q for the
mean/precision model) whose covariance a [`DirmnRegression`](@ref) keeps
([`vcov`](@ref)): their number squared doubles, 200 MB at 5000. Above it no matrix
is copied out of the library (`f.covariance` is `nothing` and `vcov(f)`
raises); [`stderror`](@ref), [`confint`](@ref) and [`wald_test`](@ref) are
the library's (`dirmn_reg_get_std_errors`, `dirmn_reg_wald_test`) for any
size. The R and Python packages keep it up to the same size.
"""
const REG_VCOV_MAX_COEFFICIENTS = 5000

"""
    DirmnRegression

A fitted Dirichlet-multinomial regression, as returned by
[`fit_dirmn_reg`](@ref): row `b` with covariates `x_b` (a row of the design
matrix) has the parameter vector `α_bv = exp(x_b ⋅ β_v)`, one column of
coefficients `β_v` per category (`parametrization = :loglinear`: every
category has its own, MGLM's parametrisation, α not normalised), or
`α_b = φ_b softmax(x_b β)` (`:meanprecision`: the proportions a softmax of
the linear predictors, one precision φ = exp(γ) for every row, or
`φ_b = exp(z_b ⋅ γ)` with covariates `z_b` of the precision (a row of the
`precision_design`); DRIMSeq's, betareg's and brms's parametrisation). Its
fields:

- `coefficients::Matrix{Float64}`: β, p × V (covariates × categories), the
  maximum-likelihood estimate (what [`coef`](@ref) returns); mean/precision:
  the reference category's column 0, or with `contrast = :sum` minus the
  sum of the others';
- `std_errors::Matrix{Float64}`: their standard errors, p × V, the square
  roots of the covariance's diagonal as the library gives them, for any
  size ([`stderror`](@ref)); 0 for a reference category's coefficients,
  which are fixed; all `NaN` when `hessian_definite` is false;
- `covariance::Union{Matrix{Float64},Nothing}`: the covariance of the free
  coefficients, the negative inverse Hessian of the log-likelihood at the
  fit, `dof(f)` × `dof(f)` ([`vcov`](@ref)): log-linear, in the order of
  `vec(coefficients)` (covariate fastest: coefficient `(i, v)` is row and
  column `(v - 1) p + i`); mean/precision, `vec` of the coefficients
  without the reference (or implied) category's column, then the log
  precision's coefficients γ last (one, or q with a `precision_design`).
  All `NaN` when `hessian_definite` is false; `nothing`
  above [`Dirmn.REG_VCOV_MAX_COEFFICIENTS`](@ref) (5000) free coefficients,
  where it is not kept;
- `loglik::Float64`: the maximised log-likelihood, the log pmf of the data
  with the multinomial coefficients (weighted by the row weights, if any)
  ([`loglikelihood`](@ref));
- `aic`, `bic` (`Float64`): `-2 loglik + 2 parameters` and
  `-2 loglik + parameters log(nobs)`, as the library reports them;
- `nobs::Float64`: the rows that entered the fit, those with counts and a
  positive weight: their number, or the sum of their weights when weights
  were given (BIC's n, as for [`fit_dirmn`](@ref)) ([`nobs`](@ref));
- `rows::Int` (rows of the fitted table, rows of zeros included),
  `covariates::Int` (p), `ncategories::Int` (V), `parameters::Int` (the
  free coefficients: p V, or p (V - 1) + q for mean/precision, q = 1
  without a `precision_design`; [`dof`](@ref));
- `gradient_norm::Float64`: the max-norm of the gradient in β at the fit;
- `iterations::Int`, `converged::Bool`: Newton steps taken and whether the
  tolerance was met;
- `multinomial_limit::Bool`: mean/precision with one precision: the data
  show no overdispersion, the likelihood rises toward φ → ∞ (the
  multinomial logit model); `converged` is then false;
- `hessian_definite::Bool`: whether the Hessian is negative definite at the
  fit (a strict local maximum); without it there is no covariance, no
  standard error and no Wald test;
- `parametrization::Symbol`: `:loglinear` or `:meanprecision`;
- `contrast::Union{Symbol,Nothing}`: `:reference` or `:sum`
  (mean/precision), `nothing` (log-linear);
- `reference::Union{Int,Nothing}`: the reference (with `contrast = :sum`,
  the implied) category, 1-based (mean/precision), `nothing` (log-linear);
- `precision::Union{Float64,Nothing}`: φ, the sum of every row's α,
  `exp(log_precision)` (mean/precision without a `precision_design`);
  `nothing` (log-linear, or with a `precision_design`: the rows' sums
  differ);
- `log_precision`, `std_error_log_precision`
  (`Union{Float64,Vector{Float64},Nothing}`): γ and its standard errors
  (`NaN` when `hessian_definite` is false): γ = log φ, a `Float64`, without
  a `precision_design`; with one, the q coefficients of its columns
  (log φ_b = `precision_design[b, :] ⋅ γ`), a `Vector`; `nothing`
  (log-linear);
- `context::DirmnContext`: the context the fit ran on.
- `design::Matrix{Float64}`, `precision_design::Union{Matrix{Float64},Nothing}`,
  `totals::Vector{Float64}`, `obsdim::Int`: a copy of the design `X` and
  of the precision's design Z (`nothing` without one), the fitted table's
  row totals (every row's, in order) and its orientation, which
  [`simulate`](@ref) draws new tables with.

A fit of counts split over a [`Communicator`](@ref) (see
[`fit_dirmn_reg`](@ref)) holds the whole table's coefficients, standard
errors, covariance, `loglik`, criteria and `nobs`, and this rank's
`rows`, `design`, `precision_design` and `totals`.

Everything is copied out of the library when the fit returns; the library's
regression object is kept only for [`predict`](@ref) and
[`wald_test`](@ref). It is freed by the finalizer or, sooner, by
`close(f)` (idempotent); the fields stay readable after that.

Accessors (StatsBase's names, this package's own functions): [`coef`](@ref),
[`stderror`](@ref), [`vcov`](@ref), [`confint`](@ref),
[`loglikelihood`](@ref), [`aic`](@ref), [`bic`](@ref), [`nobs`](@ref),
[`dof`](@ref), [`predict`](@ref), and [`wald_test`](@ref),
[`converged`](@ref), [`iterations`](@ref), [`hessian_definite`](@ref),
[`gradient_norm`](@ref), [`ncategories`](@ref).
"""
mutable struct DirmnRegression
    ptr::Ptr{Cvoid}
    context::DirmnContext
    coefficients::Matrix{Float64}
    std_errors::Matrix{Float64}
    covariance::Union{Matrix{Float64},Nothing}
    loglik::Float64
    aic::Float64
    bic::Float64
    nobs::Float64
    rows::Int
    covariates::Int
    ncategories::Int
    parameters::Int
    gradient_norm::Float64
    iterations::Int
    converged::Bool
    multinomial_limit::Bool
    hessian_definite::Bool
    parametrization::Symbol
    contrast::Union{Symbol,Nothing}
    reference::Union{Int,Nothing}
    precision::Union{Float64,Nothing}
    log_precision::Union{Float64,Vector{Float64},Nothing}
    std_error_log_precision::Union{Float64,Vector{Float64},Nothing}
    design::Matrix{Float64}
    precision_design::Union{Matrix{Float64},Nothing}
    totals::Vector{Float64}
    obsdim::Int
    closing::Threads.Atomic{Bool}   # set by close() before it waits for the lock
end

# Frees the handle; the caller holds the lock of the regression's context,
# which every call using the handle holds too (see _with).
function _free_reg(f::DirmnRegression)
    p = f.ptr
    f.ptr = C_NULL
    p == C_NULL || LibDirmn.dirmn_reg_destroy(p)
    return nothing
end

_finalize_reg(f::DirmnRegression) =
    f.ptr == C_NULL ? nothing :
    _finalize_under(_free_reg, f, f.context.lock, _finalize_reg, true)

"""
    close(f::DirmnRegression)

Frees the library's regression object now instead of at garbage
collection. Idempotent. Safe while another task or thread predicts with
`f`: `close` waits for that call to end (it takes the lock of the
regression's context). From a progress callback of a call on the
regression's context the library frees it when that call returns. The
fitted values (all fields, and the accessors that read them) stay
available; [`predict`](@ref) and [`wald_test`](@ref) then raise a
[`DirmnError`](@ref) (`DIRMN_ERROR_NULL_POINTER`).
"""
function Base.close(f::DirmnRegression)
    f.closing[] = true   # as close(::DirmnCounts)
    lock(f.context.lock) do
        _free_reg(f)
    end
    return nothing
end

"""
    isopen(f::DirmnRegression) -> Bool

Whether `f` still holds the library's regression object (it has not been
closed), which [`predict`](@ref) and [`wald_test`](@ref) need.
"""
Base.isopen(f::DirmnRegression) = f.ptr != C_NULL && !f.closing[]

# --- error hints ---------------------------------------------------------------

# The library locates a bad design entry by its 0-based (row, column), a
# covariate that is a combination of the ones before it by its 0-based
# column of x ("x column"), a category without counts by its column of the
# table ("column"), an alpha out of range by (row, category); word them as
# the Julia arrays the caller passed (`xname`: "X" or "Xnew"; `obsdim`: the
# orientation of the counts, nothing for none). The precision's design is
# the fit's "precision_design" and predict's "z"; in Julia both are the
# keyword `precision_design`.
function _reg_hint(xname::AbstractString, obsdim)
    return function (loc)
        loc === nothing && return nothing
        arg = _argument(loc)
        if arg in ("x", "precision_design", "z") && loc.row >= 0 && loc.column >= 0
            b, i = Int(loc.row) + 1, Int(loc.column) + 1
            v = _value_text(loc)
            eq = v === nothing ? "" : " = $v"
            arg == "x" && return " [$xname[$b, $i]$eq in Julia: row $b, covariate $i]"
            return " [precision_design[$b, $i]$eq in Julia: row $b, precision covariate $i]"
        elseif arg == "x column" && loc.index >= 0
            i = Int(loc.index) + 1
            return " [$xname[:, $i] in Julia: covariate $i]"
        elseif arg == "precision_design column" && loc.index >= 0
            j = Int(loc.index) + 1
            return " [precision_design[:, $j] in Julia: precision covariate $j]"
        elseif arg == "column" && loc.index >= 0 && obsdim !== nothing
            v = Int(loc.index) + 1
            return obsdim == 1 ? " [Y[:, $v] in Julia: category $v]" :
                                 " [Y[$v, :] in Julia: category $v]"
        elseif arg == "alpha" && loc.row >= 0 && loc.column >= 0
            return " [row $(loc.row + 1), category $(loc.column + 1) in Julia]"
        end
        return nothing
    end
end

_reg_closed_hint(f::DirmnRegression) =
    isopen(f) ? nothing : " [this DirmnRegression was closed]"

# --- fitting -------------------------------------------------------------------

# Copies everything out of a freshly fitted handle into a DirmnRegression
# that owns it; the handle is destroyed if copying fails. The getters take no
# context: their failures go to the thread's slot. The covariance only up to
# REG_VCOV_MAX_COEFFICIENTS coefficients (nothing above); the standard
# errors for any size.
function _reg_from_handle(h::Ptr{Cvoid}, ctx::DirmnContext, design::Matrix{Float64},
                          Z::Union{Matrix{Float64},Nothing}, tot::Vector{Float64}, obsdim::Int)
    local f
    try
        r = Ref(LibDirmn.empty_reg_info())
        _check(LibDirmn.dirmn_reg_get_info(h, r), C_NULL)
        i = r[]
        p, V = Int(i.covariates), Int(i.categories)
        P = Int(i.parameters)
        # Covariate i, category v to B[i, v]: stride_covariate 1, stride_category p.
        B = Matrix{Float64}(undef, p, V)
        _check(LibDirmn.dirmn_reg_get_coef(h, B, Int64(1), Int64(max(p, 1))), C_NULL)
        definite = i.hessian_definite != 0
        keep = P <= REG_VCOV_MAX_COEFFICIENTS
        if definite
            SE = Matrix{Float64}(undef, p, V)
            _check(LibDirmn.dirmn_reg_get_std_errors(h, SE, Int64(1), Int64(max(p, 1))), C_NULL)
            if keep
                # Row-major out[r ld + c] read column-major is the transpose.
                Ct = Matrix{Float64}(undef, P, P)
                _check(LibDirmn.dirmn_reg_get_vcov(h, Ct, Int64(max(P, 1))), C_NULL)
                C = permutedims(Ct)
            else
                C = nothing
            end
        else
            SE = fill(NaN, p, V)
            C = keep ? fill(NaN, P, P) : nothing
        end
        if i.model == LibDirmn.DIRMN_REG_MEAN_PRECISION
            q = max(Int(i.precision_covariates), 1)
            g, gse = Vector{Float64}(undef, q), Vector{Float64}(undef, q)
            _check(LibDirmn.dirmn_reg_get_precision(h, g, gse), C_NULL)
            model = :meanprecision
            contrast = i.contrast == LibDirmn.DIRMN_REG_SUM_TO_ZERO ? :sum : :reference
            reference = Int(i.reference) + 1
            if Z === nothing
                lp, slp = g[1], definite ? gse[1] : NaN
                phi = exp(lp)
            else
                # The rows' precisions differ: no one φ to report.
                lp, slp = g, definite ? gse : fill(NaN, q)
                phi = nothing
            end
        else
            model = :loglinear
            contrast = reference = phi = lp = slp = nothing
        end
        f = DirmnRegression(h, ctx, B, SE, C, i.loglik, i.aic, i.bic, i.observations,
                            Int(i.rows), p, V, P, i.gradient_norm,
                            Int(i.iterations), i.converged != 0, i.multinomial_limit != 0,
                            definite, model, contrast,
                            reference, phi, lp, slp, design, Z, tot, obsdim,
                            Threads.Atomic{Bool}(false))
    catch
        LibDirmn.dirmn_reg_destroy(h)
        rethrow()
    end
    finalizer(_finalize_reg, f)
    return f
end

"""
    fit_dirmn_reg(Y, X; parametrization = :loglinear, contrast = :reference,
                  reference = 1, precision_design = nothing, obsdim = 1,
                  weights = nothing, tolerance = 1e-10, max_iterations = 200,
                  progress = nothing, backend = :auto, device = 0,
                  context = nothing, real_valued = false)
        -> DirmnRegression

Dirichlet-multinomial regression of the counts `Y` on the design matrix `X`
by maximum likelihood. With `parametrization = :loglinear` (the default),
row `b` of the table, with covariates `X[b, :]`, has the parameter vector

    α_bv = exp(X[b, :] ⋅ β[:, v])    (v = 1 .. V)

with β a p × V matrix of coefficients, one column per category, all
identified (α is not normalised: the parametrisation of R's MGLM,
`MGLMreg(..., dist = "DM")`). With `parametrization = :meanprecision` (that
of DRIMSeq and brms) row `b`'s expected proportions are a softmax of the
linear predictors and its precision (the sum of α) is one `φ = exp(γ)` for
every row:

    α_bv = φ exp(X[b, :] ⋅ β[:, v]) / Σ_u exp(X[b, :] ⋅ β[:, u])

Each covariate's row of β is then free up to a constant, fixed by
`contrast`: `:reference` (the default), the `reference` category's
coefficients are 0; `:sum`, each covariate's coefficients sum to 0 (the
`reference` category's are minus the sum of the others'). Both give the
same fit, likelihood and Wald tests; the coefficients differ by each
covariate's mean. `reference` is the category's 1-based index (default
1); `contrast` and `reference` are not used by the log-linear model. The
mean/precision model has p (V - 1) + 1 free coefficients, with an
intercept alone it is the shared-α fit ([`fit_dirmn`](@ref)), as the
log-linear model is.

With `precision_design = Z` (mean/precision only) the precision has
covariates of its own, as betareg's and brms's precision formulas give
it: row `b`'s precision is `φ_b = exp(Z[b, :] ⋅ γ)`,

    α_bv = exp(Z[b, :] ⋅ γ) exp(X[b, :] ⋅ β[:, v]) / Σ_u exp(X[b, :] ⋅ β[:, u])

with `Z` rows × q (any real matrix, read as `X` is; add a column of ones
for an intercept: `Z = ones(n, 1)` is the model without it), of full
column rank over the rows with counts. The fit then has p (V - 1) + q
free coefficients; `f.log_precision` and `f.std_error_log_precision` are
the q-vectors γ and their standard errors, `f.precision` is `nothing`
(the rows' precisions differ), and [`predict`](@ref) needs the new rows'
`precision_design` too.

Returns a [`DirmnRegression`](@ref) with the coefficients, their standard
errors and covariance (kept up to [`Dirmn.REG_VCOV_MAX_COEFFICIENTS`](@ref),
5000 free coefficients), the precision (mean/precision), the
log-likelihood and the criteria.

- `Y`: the counts, **one observation per row** (rows × categories, as `X`;
  `obsdim = 2` for a categories × rows table): a dense matrix of any integer
  or real element type, a `SparseMatrixCSC`, anything [`DirmnCounts`](@ref)
  accepts, or a prepared `DirmnCounts` (whose own orientation counts; one
  attached to a [`Communicator`](@ref) makes the fit collective, below);
- `X`: the design, rows × p, any real element type (converted to
  `Float64`; a strided `Float64` matrix is read in place). Add a column of
  ones for an intercept, as R's `model.matrix` does: nothing is added. It
  must be of full column rank over the rows with counts (and a positive
  weight).

The fit is Newton's method in the free coefficients from the shared-α fit
([`fit_dirmn`](@ref)) regressed on the design, each step safeguarded
(Levenberg damping where the Hessian is not negative definite, step halving
until the log-likelihood rises). Each step is solved in the smaller of the
number of coefficients p V and the rows with counts (Woodbury's identity
on the Hessian's low-rank part where the rows are fewer), so many
categories over few rows fit; a fit is refused only where both are above
`LibDirmn.DIRMN_REG_MAX_SYSTEM` (8000) (over a [`Communicator`](@ref),
where the coefficients are: the ranks form the system in them). Above
5000 coefficients the covariance matrix is not kept ([`vcov`](@ref)
raises); the standard errors and Wald tests are there for any size.

Keywords (the defaults shown are the library's, which `nothing` also
selects):
- `precision_design`: `nothing` (one precision for every row), or the
  rows × q matrix Z of the precision's covariates (see above);
- `weights`: one finite weight ≥ 0 per row, frequencies (a weight of 2 is
  the row twice);
- `tolerance`: the fit stops when the predicted gain of a Newton step is
  below `tolerance × |loglik|`;
- `max_iterations`: the most Newton steps; stopping there is not an error:
  it gives `converged = false` and a warning (`@warn`);
- `progress`: `nothing`, or a function `(iteration, loglik, gradient_norm)`
  called after every Newton step (`iteration` from 1; `loglik` the log pmf;
  `gradient_norm` the max-norm of the gradient in β); returning `true`
  cancels the fit with a [`DirmnError`](@ref) `DIRMN_ERROR_CANCELLED`, an
  exception it throws cancels it and is rethrown. It runs inside the
  library's call: it must not compute with the same context (that raises
  `DIRMN_ERROR_CONTEXT_IN_USE`), but may `close` the counts, mixtures,
  regressions or the context, which read as closed at once and are freed
  when the fit returns (the fit itself finishes);
- `backend`, `device`, `context`, `real_valued`: as for [`fit_dirmn`](@ref).

A fit whose Hessian is not negative definite at the end (no strict local
maximum) warns and has `hessian_definite = false`: its standard errors and
covariance are `NaN` and [`wald_test`](@ref) raises
`DIRMN_ERROR_NOT_SUPPORTED`.

Collective on a `DirmnCounts` with a [`Communicator`](@ref) (see
[`set_communicator!`](@ref)): every rank calls it with the same options
and **its own observations' rows** of `X` (and of `precision_design`, and
their `weights`), in the order of its counts, and gets the whole table's
fit. The design's rank is checked over every rank's rows (a covariate
constant on one rank's rows is no collinearity), and each Newton step sums
the log-likelihood, gradient and Newton matrix over the ranks (the matrix
formed whole and broadcast by each rank each step: its traffic grows with
the square of the number of coefficients, and the log-linear model's is
refused above `DIRMN_REG_MAX_SYSTEM` coefficients, however few the rows).
`loglik`, `aic` and `bic` agree with those of one process holding the
whole table to rounding, the coefficients, `log_precision` and standard
errors to the Newton solves' accuracy (~1e-7 relative; every rank holds
the same bits);
`rows`, `totals`, `design` and `precision_design` are this rank's, `nobs`
the whole table's. [`predict`](@ref), [`wald_test`](@ref) and
[`simulate`](@ref) on the result are local (no communication; `simulate`
draws this rank's observations). A rank whose part fails (a non-finite
design value, a bad weight, `X` with other rows than its counts) raises
its own error, the others `DIRMN_ERROR_COMMUNICATION` ("rank 1's part of
this collective call failed"); a `progress` that cancels or throws on one
rank cancels every rank (`DIRMN_ERROR_CANCELLED`, the throwing rank
rethrowing its exception).

An unknown `parametrization` or `contrast`, or a `reference` outside
`1:V`, raises an `ArgumentError` naming it. Invalid input raises a
[`DirmnError`](@ref) with the library's status, its
positions also worded in Julia's 1-based terms: a design that is not of
full column rank (`DIRMN_ERROR_INVALID_ARGUMENT`, naming the first
covariate that is a combination of those before it, e.g.
`[X[:, 3] in Julia: covariate 3]`), a category without counts
(`DIRMN_ERROR_INVALID_ARGUMENT`, naming it), fewer rows with counts than
covariates, both p V and the rows with counts above
`DIRMN_REG_MAX_SYSTEM` (`DIRMN_ERROR_INVALID_ARGUMENT`); a
non-finite entry of `X` (`DIRMN_ERROR_INVALID_PARAMETER`, naming its row and
column, `[X[5, 2] = NaN in Julia: row 5, covariate 2]`) or weight; `X` with
another number of rows than `Y`, or weights of the wrong length
(`DIRMN_ERROR_DIMENSION_MISMATCH`). A `precision_design` is checked as `X`
is: a non-finite entry (`[precision_design[5, 2] = NaN in Julia: row 5,
precision covariate 2]`), a column that is a combination of the ones
before it (`[precision_design[:, 3] in Julia: precision covariate 3]`),
no column, or a `precision_design` given to a log-linear fit raise a
[`DirmnError`](@ref) (`DIRMN_ERROR_INVALID_PARAMETER`,
`DIRMN_ERROR_INVALID_ARGUMENT`), other rows than `X`'s
`DIRMN_ERROR_DIMENSION_MISMATCH`.

```julia
n = 100
X = [ones(n) randn(n)]                   # intercept and one covariate
f = fit_dirmn_reg(Y, X)                  # Y: n × V counts
coef(f), stderror(f)                     # p × V
wald_test(f, 2)                          # does the covariate matter at all?
predict(f, [1.0 0.5]; type = :proportion)
m = fit_dirmn_reg(Y, X; parametrization = :meanprecision)
m.precision, m.log_precision, m.std_error_log_precision
g = rand(0:1, n)                         # the precision differs between two groups
z = fit_dirmn_reg(Y, X; parametrization = :meanprecision, precision_design = [ones(n) g])
z.log_precision, z.std_error_log_precision   # γ: 2-vectors
predict(z, [1.0 0.5]; precision_design = [1.0 1.0])
```
"""
function fit_dirmn_reg(Y, X::AbstractMatrix; parametrization::Symbol = :loglinear,
                       contrast::Symbol = :reference, reference::Integer = 1,
                       precision_design::Union{Nothing,AbstractMatrix} = nothing,
                       obsdim::Integer = 1, weights = nothing,
                       tolerance::Union{Nothing,Real} = nothing,
                       max_iterations::Union{Nothing,Integer} = nothing, progress = nothing,
                       backend::Symbol = :auto, device::Integer = 0,
                       context::Union{Nothing,DirmnContext} = nothing,
                       real_valued::Bool = false)
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    model = _reg_model_code(parametrization)
    contrast_code = _reg_contrast_code(contrast)
    f, maxit = _with_counts(Y, obsdim, real_valued, backend, device, context) do c, ctx
        V = c.ncat
        1 <= reference <= V ||
            throw(ArgumentError("reference must be a category in 1:$V (the table has $V), " *
                                "not $reference"))
        settings = (model, contrast_code, Int64(reference - 1))
        _fit_reg(c, ctx, X, precision_design, weights, tolerance, max_iterations, progress,
                 settings)
    end
    f.multinomial_limit &&
        @warn "fit_dirmn_reg: the table shows no overdispersion: the likelihood rises toward " *
              "the multinomial limit (precision -> Inf), which the coefficients approach " *
              "(multinomial_limit = true, converged = false)"
    f.converged || f.multinomial_limit ||
        @warn "fit_dirmn_reg: stopped without convergence after $(f.iterations) Newton steps " *
              "(max_iterations = $maxit, gradient norm $(f.gradient_norm)); the result is the " *
              "last iterate (converged = false)"
    f.hessian_definite ||
        @warn "fit_dirmn_reg: the Hessian is not negative definite at the fit (no strict " *
              "local maximum): no covariance, standard errors or Wald tests " *
              "(hessian_definite = false)"
    return f
end

function _reg_model_code(parametrization::Symbol)
    parametrization === :loglinear && return LibDirmn.DIRMN_REG_LOGLINEAR
    parametrization === :meanprecision && return LibDirmn.DIRMN_REG_MEAN_PRECISION
    throw(ArgumentError("parametrization must be :loglinear or :meanprecision, " *
                        "not :$parametrization"))
end

function _reg_contrast_code(contrast::Symbol)
    contrast === :reference && return LibDirmn.DIRMN_REG_REFERENCE
    contrast === :sum && return LibDirmn.DIRMN_REG_SUM_TO_ZERO
    throw(ArgumentError("contrast must be :reference or :sum, not :$contrast"))
end

# `settings`: the model's and the contrast's C codes and the 0-based reference.
function _fit_reg(c::DirmnCounts, ctx::DirmnContext, X::AbstractMatrix, Z, weights, tolerance,
                  max_iterations, progress, settings)
    # The fit keeps a copy of the designs (for simulate), which is also what
    # the library reads.
    A = Matrix{Float64}(undef, size(X))
    copyto!(A, _check_real(X, "X"))
    rows, p = size(X)
    if Z === nothing
        Zc = nothing
    else
        # The library takes one row count for both designs: it cannot see this.
        size(Z, 1) == rows ||
            _mismatch("fit_dirmn_reg: precision_design has $(size(Z, 1)) rows; X has $rows")
        Zc = Matrix{Float64}(undef, size(Z))
        copyto!(Zc, _check_real(Z, "precision_design"))
    end
    return _fit_reg(c, ctx, A, 1, max(rows, 1), rows, p, Zc, _weights(c, weights), tolerance,
                    max_iterations, progress, settings)
end

# The design in native memory (A, element (b, i) at (b - 1) s1 + (i - 1) s2):
# a function barrier, so that what is preserved and pointed to has a
# concrete type (Julia 1.5's code generation asserts on a Union there).
# Zc: the precision's design, rows × q column-major, or nothing.
function _fit_reg(c::DirmnCounts, ctx::DirmnContext, A, s1, s2, rows, p, Zc, w, tolerance,
                  max_iterations, progress, settings)
    prog = progress === nothing ? nothing : _Progress(progress, nothing)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    tot = _totals_before(c)
    cells = _reg_hint("X", c.vector ? nothing : c.obsdim)
    # The library counts the precision's covariates in a field Julia fills
    # from the matrix: say which.
    noz = Zc !== nothing && size(Zc, 2) == 0
    more = function (loc)
        h = cells(loc)
        return h === nothing && noz ? " [in Julia: precision_design has no columns]" : h
    end
    hint = _call_hint(c, ctx, more)
    GC.@preserve A Zc w prog begin
        oref = Ref(LibDirmn.empty_reg_options())
        LibDirmn.dirmn_reg_options_init_sized(oref, sizeof(LibDirmn.dirmn_reg_options))
        o = oref[]
        maxit = Int(_or(max_iterations, o.max_iterations))
        zptr, q = Zc === nothing ? (Ptr{Cdouble}(C_NULL), o.precision_covariates) :
                                   (pointer(Zc), Int64(size(Zc, 2)))
        oref[] = LibDirmn.dirmn_reg_options(
            o.size, Float64(_or(tolerance, o.tolerance)), Cint(maxit), _wptr(w),
            prog === nothing ? C_NULL : _progress_pointer(),
            prog === nothing ? C_NULL : pointer_from_objref(prog), settings[1], settings[2],
            settings[3], o.log_precision, o.hold_precision, zptr, q, Int64(1),
            Int64(max(rows, 1)))
        # The copies out of the new handle are calls on the context too:
        # under its lock (see _fit_mixture).
        f = _with(ctx, c.context) do ptr
            st = LibDirmn.dirmn_reg_fit(ptr, _handle(c), Ptr{Cdouble}(pointer(A)), Int64(rows),
                                        Int64(p), Int64(s1), Int64(s2), oref, out)
            if st != 0 && prog !== nothing && prog.err !== nothing
                throw(prog.err)
            end
            _check(st, ptr, hint)
            _reg_from_handle(out[], ctx, A, Zc, tot, c.obsdim)
        end
        return f, maxit
    end
end

# --- accessors -----------------------------------------------------------------

"""
    coef(f::DirmnRegression) -> Matrix{Float64}

The fitted coefficients β, p × V (covariates × categories; a copy of
`f.coefficients`): `α_bv = exp(x_b ⋅ coef(f)[:, v])` (log-linear), or
`α_b = f.precision * softmax(x_b ⋅ coef(f))` (mean/precision, the
reference category's column 0; with a `precision_design` z,
`exp(z_b ⋅ f.log_precision)` for `f.precision`). The precision's
coefficients are `f.log_precision`. StatsBase's name, this package's own
function.
"""
coef(f::DirmnRegression) = copy(f.coefficients)

"""
    stderror(f::DirmnRegression) -> Matrix{Float64}

The standard errors of the coefficients, p × V as [`coef`](@ref) (a copy of
`f.std_errors`): the square roots of the covariance's diagonal, as the
library gives them (`dirmn_reg_get_std_errors`) for any number of
coefficients, also where [`vcov`](@ref) is not kept; 0 for a reference
category's coefficients (mean/precision), which are fixed. All `NaN` where
the fit has no covariance (`hessian_definite` false). The log precision's
(its coefficients' with a `precision_design`) are
`f.std_error_log_precision`.
"""
stderror(f::DirmnRegression) = copy(f.std_errors)

"""
    vcov(f::DirmnRegression) -> Matrix{Float64}

The asymptotic covariance of the free coefficients, the negative inverse of
the Hessian of the log-likelihood at the fit, `dof(f)` × `dof(f)`.
Log-linear: in the order of `vec(coef(f))` (covariate fastest: coefficient
`(i, v)` is index `(v - 1) p + i`). Mean/precision: `vec(coef(f))` without
the reference (or, with `contrast = :sum`, the implied) category's column,
then the log precision last, or with a `precision_design` its q
coefficients γ in the order of its columns:
`[vec(coef(f)[:, setdiff(1:V, f.reference)]); f.log_precision]`. A copy of
`f.covariance`; all `NaN` where the fit has no covariance
(`hessian_definite` false).

The matrix is kept only up to [`Dirmn.REG_VCOV_MAX_COEFFICIENTS`](@ref)
(5000) free coefficients; above that `vcov` raises a [`DirmnError`](@ref)
`DIRMN_ERROR_NOT_SUPPORTED` ([`stderror`](@ref), [`confint`](@ref) and
[`wald_test`](@ref) do not need it).
"""
function vcov(f::DirmnRegression)
    C = f.covariance
    if C === nothing
        P = f.parameters
        throw(DirmnError(LibDirmn.DIRMN_ERROR_NOT_SUPPORTED,
                         "vcov: the covariance of the $P coefficients is not kept above " *
                         "$REG_VCOV_MAX_COEFFICIENTS coefficients (Dirmn.REG_VCOV_MAX_COEFFICIENTS: " *
                         "it would be $P × $P Float64, $(round(8e-9 * P^2; sigdigits = 3)) GB); " *
                         "the standard errors (stderror, confint) and Wald tests (wald_test) " *
                         "are available"))
    end
    return copy(C)
end

"""
    confint(f::DirmnRegression; level = 0.95) -> Matrix{Float64}

Wald confidence intervals for the coefficients, `coef ± z se` with `z` the
standard normal quantile at `(1 + level) / 2`: a pV × 2 matrix, one row per
coefficient in the order of `vec(coef(f))` (the order of [`vcov`](@ref);
`reshape(ci[:, 1], p, V)` gives the lower bounds as a p × V matrix),
columns lower and upper bound (`NaN` without standard errors; a
reference category's fixed coefficients give `[0, 0]`).
"""
function confint(f::DirmnRegression; level::Real = 0.95)
    0 < level < 1 || throw(ArgumentError("level must be in (0, 1), not $level"))
    z = _normal_upper_quantile((1 - level) / 2)
    b, s = vec(f.coefficients), vec(f.std_errors)
    return hcat(b .- z .* s, b .+ z .* s)
end

"""
    loglikelihood(f::DirmnRegression) -> Float64

The maximised log-likelihood (`f.loglik`): the log pmf of the data with the
multinomial coefficients, weighted by the row weights if any.
"""
loglikelihood(f::DirmnRegression) = f.loglik

"""
    aic(f::DirmnRegression) -> Float64

Akaike's criterion `-2 loglik + 2 dof(f)`, as the library reports it.
"""
aic(f::DirmnRegression) = f.aic

"""
    bic(f::DirmnRegression) -> Float64

The Bayesian information criterion `-2 loglik + dof(f) log(nobs(f))`, as
the library reports it.
"""
bic(f::DirmnRegression) = f.bic

"""
    nobs(f::DirmnRegression) -> Float64

The rows that entered the fit (`f.nobs`): those with counts and a positive
weight, their number, or the sum of their weights when weights were given.
"""
nobs(f::DirmnRegression) = f.nobs

"""
    dof(f::DirmnRegression) -> Int

The number of free coefficients (`f.parameters`): p V (log-linear), or
p (V - 1) + q (mean/precision: the coefficients of V - 1 categories and
the log precision's q, 1 without a `precision_design`). AIC, BIC and
likelihood-ratio tests count these.
"""
dof(f::DirmnRegression) = f.parameters

"""
    ncategories(f::DirmnRegression) -> Int

The number of categories V.
"""
ncategories(f::DirmnRegression) = f.ncategories

"""
    converged(f) -> Bool

Whether the fit met its tolerance (`f.converged`), for a
[`DirmnRegression`](@ref), [`DirMultFit`](@ref) or
[`DirMultMixture`](@ref).
"""
converged(f::Union{DirmnRegression,DirMultFit,DirMultMixture}) = f.converged

"""
    iterations(f) -> Int

The iterations the fit took (`f.iterations`): Newton steps of a
[`DirmnRegression`](@ref) or [`DirMultFit`](@ref), EM iterations of a
[`DirMultMixture`](@ref)'s best start.
"""
iterations(f::Union{DirmnRegression,DirMultFit,DirMultMixture}) = f.iterations

"""
    gradient_norm(f) -> Float64

The max-norm of the gradient at the fit (`f.gradient_norm`): in β for a
[`DirmnRegression`](@ref), in log α for a [`DirMultFit`](@ref).
"""
gradient_norm(f::Union{DirmnRegression,DirMultFit}) = f.gradient_norm

"""
    hessian_definite(f::DirmnRegression) -> Bool

Whether the Hessian of the log-likelihood is negative definite at the fit
(`f.hessian_definite`): a strict local maximum, with a covariance, standard
errors and Wald tests.
"""
hessian_definite(f::DirmnRegression) = f.hessian_definite

# --- prediction ------------------------------------------------------------------

"""
    predict(f::DirmnRegression, Xnew::AbstractMatrix; type = :alpha,
            precision_design = nothing) -> Matrix{Float64}

The fitted model at new covariates: `Xnew` is rows × p (the design's
columns, the intercept column included); the result is rows × V.
`type = :alpha` gives α (`α_bv = exp(Xnew[b, :] ⋅ β[:, v])`, or
`φ softmax(Xnew[b, :] ⋅ β)_v` for mean/precision), `type = :proportion`
the expected composition `α_bv / Σ_v α_bv` (each row sums to 1). A fit
with a `precision_design` needs the new rows' too, `precision_design =
Znew` (rows × q, the columns of the fit's): their precisions are
`φ_b = exp(Znew[b, :] ⋅ f.log_precision)`. Computed by the library
(`dirmn_reg_predict`; with `precision_design`,
`dirmn_reg_predict_with_precision`): a non-finite entry of `Xnew` or
`Znew` raises a [`DirmnError`](@ref) `DIRMN_ERROR_INVALID_PARAMETER` naming
its row and column; another number of columns than the fit's (of `Xnew`
or `Znew`), no `precision_design` for a fit with one, or one for a fit
without, `DIRMN_ERROR_INVALID_ARGUMENT`; an α beyond the double range (or
0) `DIRMN_ERROR_OVERFLOW`; `Znew` with other rows than `Xnew`
`DIRMN_ERROR_DIMENSION_MISMATCH`; a closed `f` `DIRMN_ERROR_NULL_POINTER`.
StatsBase's name, this package's own function.
"""
function predict(f::DirmnRegression, Xnew::AbstractMatrix; type::Symbol = :alpha,
                 precision_design::Union{Nothing,AbstractMatrix} = nothing)
    type === :alpha || type === :proportion ||
        throw(ArgumentError("type must be :alpha or :proportion, not :$type"))
    A, s1, s2 = _native_matrix(_check_real(Xnew, "Xnew"), Float64)
    n, p = size(Xnew)
    Znew = precision_design
    if Znew === nothing
        out = _predict(f, A, s1, s2, n, p, nothing, 0, 0, 0)
    else
        size(Znew, 1) == n ||
            _mismatch("predict: precision_design has $(size(Znew, 1)) rows; Xnew has $n")
        Z, z1, z2 = _native_matrix(_check_real(Znew, "precision_design"), Float64)
        out = _predict(f, A, s1, s2, n, p, Z, z1, z2, size(Znew, 2))
    end
    if type === :proportion
        for b in 1:n
            s = sum(view(out, b, :))
            for v in 1:f.ncategories
                out[b, v] /= s
            end
        end
    end
    return out
end

# The new designs in native memory, behind a function barrier (see
# _fit_reg): Z (z1, z2, q) the precision's, or nothing.
function _predict(f::DirmnRegression, A, s1, s2, n, p, Z, z1, z2, q)
    V = f.ncategories
    out = Matrix{Float64}(undef, n, V)
    hint = _reg_hint("Xnew", nothing)
    # Without a position the library's complaint is about which function
    # was called for the fit; say it in terms of predict's keyword.
    usage = if f.precision_design !== nothing && Z === nothing
        " [in Julia: the fit has a precision_design of $(size(f.precision_design, 2)) " *
        "columns; give the new rows' as predict(f, Xnew; precision_design = Znew)]"
    elseif f.precision_design === nothing && Z !== nothing
        " [in Julia: the fit has no precision_design; predict without one]"
    elseif Z !== nothing && q != size(f.precision_design, 2)
        " [in Julia: precision_design has $q columns; the fit's has " *
        "$(size(f.precision_design, 2))]"
    else
        nothing
    end
    h = function (loc)
        pos = hint(loc)
        pos === nothing && isopen(f) && return usage
        return _join_hints(_reg_closed_hint(f), pos)
    end
    GC.@preserve A Z out begin
        # Row b, category v to out[b, v]: stride_row 1, stride_category n.
        _with(f.context) do _
            st = if Z === nothing
                LibDirmn.dirmn_reg_predict(_handle(f), Ptr{Cdouble}(pointer(A)), Int64(n),
                                           Int64(p), Int64(s1), Int64(s2), pointer(out),
                                           Int64(1), Int64(max(n, 1)))
            else
                LibDirmn.dirmn_reg_predict_with_precision(
                    _handle(f), Ptr{Cdouble}(pointer(A)), Int64(n), Int64(p), Int64(s1),
                    Int64(s2), Ptr{Cdouble}(pointer(Z)), Int64(q), Int64(z1), Int64(z2),
                    pointer(out), Int64(1), Int64(max(n, 1)))
            end
            _check(st, C_NULL, h)
        end
    end
    return out
end

_join_hints(a, b) = a === nothing ? b : b === nothing ? a : string(a, b)

# --- Wald tests ------------------------------------------------------------------

"""
    WaldTest

The Wald test that one covariate has no effect on any category, from
[`wald_test`](@ref): `covariate` (1-based), `statistic` (`b' S⁻¹ b`, with `b`
the covariate's free coefficients and `S` their covariance), `dof` (their
number, V, or V - 1 for mean/precision: the degrees of freedom of its χ²
reference distribution) and `pvalue`
(`P(χ²_dof ≥ statistic)`). [`pvalue`](@ref) and [`dof`](@ref) read them.
"""
struct WaldTest
    covariate::Int
    statistic::Float64
    dof::Float64
    pvalue::Float64
end

pvalue(t::WaldTest) = t.pvalue
dof(t::WaldTest) = t.dof

"""
    wald_test(f::DirmnRegression, covariate::Integer) -> WaldTest
    wald_test(f::DirmnRegression) -> Vector{WaldTest}

The Wald test that covariate `covariate` (1-based, a column of the design)
has no effect on any category, `β[covariate, v] = 0` for every `v`:
statistic `b' S⁻¹ b` with `b = coef(f)[covariate, :]` and `S` its V × V
block of [`vcov`](@ref), against χ² with V degrees of freedom
(mean/precision: `b` the covariate's V - 1 free coefficients, V - 1
degrees of freedom, the same test under either contrast) (computed by
the library, `dirmn_reg_wald_test`, from its own form of the covariance:
for any number of coefficients, also where `vcov` is not kept). Without a
covariate, the test of each covariate in turn. Raises a [`DirmnError`](@ref):
`DIRMN_ERROR_INVALID_ARGUMENT` for a covariate outside `1:p`,
`DIRMN_ERROR_NOT_SUPPORTED` where the fit has no covariance
(`hessian_definite` false), `DIRMN_ERROR_NULL_POINTER` once `f` is closed.
"""
function wald_test(f::DirmnRegression, covariate::Integer)
    p = f.covariates
    inside = 1 <= covariate <= p
    stat, df, pv = Ref(0.0), Ref(0.0), Ref(0.0)
    hint = function (loc)
        inside || return _Reworded("wald_test: covariate $covariate is outside 1:$p (the " *
                                   "design's columns)")
        return _reg_closed_hint(f)
    end
    _with(f.context) do _
        st = LibDirmn.dirmn_reg_wald_test(_handle(f), inside ? Int64(covariate - 1) : Int64(-1),
                                          stat, df, pv)
        _check(st, C_NULL, hint)
    end
    return WaldTest(Int(covariate), stat[], df[], pv[])
end

wald_test(f::DirmnRegression) = [wald_test(f, i) for i in 1:f.covariates]

# --- display -----------------------------------------------------------------------

function Base.show(io::IO, t::WaldTest)
    print(io, "WaldTest(covariate=", t.covariate, ", statistic=", t.statistic, ", dof=",
          _count_text(t.dof), ", pvalue=", t.pvalue, ")")
end

function Base.show(io::IO, ::MIME"text/plain", t::WaldTest)
    println(io, "Wald test: covariate ", t.covariate, " has no effect on any category")
    println(io, "  statistic  ", t.statistic, "   (χ² with ", _count_text(t.dof), " dof)")
    print(io, "  p-value    ", t.pvalue)
end

function Base.show(io::IO, f::DirmnRegression)
    print(io, "DirmnRegression(", f.parametrization === :loglinear ? "" : "meanprecision, ",
          "p=", f.covariates,
          f.precision_design === nothing ? "" : ", q=$(size(f.precision_design, 2))",
          ", V=", f.ncategories, ", nobs=",
          _count_text(f.nobs), ", loglik=", f.loglik,
          f.converged ? ", converged" : ", not converged",
          f.hessian_definite ? "" : ", no covariance", isopen(f) ? "" : ", closed", ")")
end

# The two-sided normal p-value 2 Q(|z|) (fit_stats.jl's normal tail).
function _normal_two_sided(z::Float64)
    isfinite(z) || return isnan(z) ? NaN : 0.0
    a = abs(z)
    return a < 1 ? 1 - 2 * _normal_central(a) : 2 * _normal_tail_cf(a)
end

# The coefficient table (estimate, standard error, z, two-sided p) prints at
# most this many rows.
const _REG_SHOW_ROWS = 40

function Base.show(io::IO, ::MIME"text/plain", f::DirmnRegression)
    p, V = f.covariates, f.ncategories
    mp = f.parametrization === :meanprecision
    Z = f.precision_design
    println(io, "DirmnRegression: Dirichlet-multinomial regression, ",
            !mp ? "alpha_bv = exp(x_b ⋅ beta_v)" :
            Z === nothing ? "alpha_b = phi softmax(x_b ⋅ beta) (mean/precision)" :
            "alpha_b = exp(z_b ⋅ gamma) softmax(x_b ⋅ beta) (mean/precision)")
    println(io, "  data        ", f.rows, " rows × ", V, V == 1 ? " category" : " categories",
            " (", _count_text(f.nobs), " fitted), ", p, p == 1 ? " covariate" : " covariates")
    println(io, "  loglik      ", f.loglik, " (log pmf)")
    println(io, "  criteria    aic ", f.aic, "   bic ", f.bic, "   (dof ", f.parameters, ")")
    println(io, "  Newton      ", f.iterations, " iterations, ",
            f.converged ? "converged" : "NOT converged", " (gradient norm ", f.gradient_norm,
            ")", f.hessian_definite ? "" : "; Hessian not negative definite: no covariance")
    fixed = mp && f.contrast === :reference ? f.reference : 0
    if mp && Z === nothing
        println(io, "  precision   phi ", f.precision, "   log phi ", f.log_precision,
                " (std. error ", f.std_error_log_precision, ")")
    elseif mp
        q = size(Z, 2)
        println(io, "  precision   log phi_b = z_b ⋅ gamma, ", q,
                q == 1 ? " precision covariate" : " precision covariates",
                " (precision_design; gamma in the last table)")
    end
    if mp
        println(io, "  contrast    ", f.contrast === :sum ?
                "sum to zero (category $(f.reference) implied)" :
                "reference category $(f.reference) (its coefficients 0)")
    end
    rows = [["category", "covariate", "estimate", "std. error", "z", "Pr(>|z|)"]]
    shown = 0
    for v in 1:V, i in 1:p
        v == fixed && continue
        shown += 1
        shown > _REG_SHOW_ROWS && break
        b, s = f.coefficients[i, v], f.std_errors[i, v]
        z = b / s
        push!(rows, [string(v), string(i), string(b), string(s), string(z),
                     string(_normal_two_sided(z))])
    end
    _print_table(io, rows)
    nrows = fixed == 0 ? p * V : p * (V - 1)
    nrows > _REG_SHOW_ROWS &&
        print(io, "\n  … ", nrows - _REG_SHOW_ROWS, " more coefficients (coef(f), stderror(f))")
    if mp && Z !== nothing
        # The precision's coefficients in a table of their own: they are no
        # category's.
        g, gs = f.log_precision, f.std_error_log_precision
        grows = [["precision covariate", "gamma", "std. error", "z", "Pr(>|z|)"]]
        for j in 1:min(length(g), _REG_SHOW_ROWS)
            z = g[j] / gs[j]
            push!(grows, [string(j), string(g[j]), string(gs[j]), string(z),
                          string(_normal_two_sided(z))])
        end
        print(io, "\n")
        _print_table(io, grows)
        length(g) > _REG_SHOW_ROWS &&
            print(io, "\n  … ", length(g) - _REG_SHOW_ROWS,
                  " more precision coefficients (f.log_precision, f.std_error_log_precision)")
    end
    isopen(f) || print(io, "\n  (closed: predict and wald_test are no longer available)")
end
