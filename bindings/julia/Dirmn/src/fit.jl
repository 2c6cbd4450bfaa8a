# Maximum-likelihood fits of one α (dirmn_fit): the result type, fit_dirmn
# and fit_mle. Accessors and display are in fit_stats.jl.

"""
    DirMultFit

The result of [`fit_dirmn`](@ref): every value the C library's
`dirmn_fit_result` reports, as fields of the same names (C's `observations`
is `nobs`, the package's name for it), and the fit's other output, the
Hessian's diagonal (`dirmn_fit_options`' `hessian_diag`).

- `alpha::Vector{Float64}`: the fitted α (length V); 0 for categories
  without any count (their MLE is the limit α → 0); when `multinomial_limit`
  is true, the multinomial proportions instead;
- `std_error_alpha`, `std_error_log_alpha` (`Vector{Float64}`): standard
  errors of α and of log α, from the inverse observed information; `NaN`
  where there is none (categories without counts, and every category under
  `multinomial_limit`), never a number that looks like a value;
- `loglik_kernel::Float64`: the maximised log-likelihood without the
  multinomial coefficients (the part that depends on α);
  `loglik::Float64`: with them, the log pmf of the data (what
  [`loglikelihood`](@ref) returns; "loglik" means the log pmf throughout
  this package, as in the C library and the R package);
- `gradient_norm::Float64`: max-norm of the gradient with respect to log α
  at the end;
- `precision::Float64`: the sum of α (`Inf` under `multinomial_limit`);
- `iterations::Int`, `converged::Bool`;
- `multinomial_limit::Bool`: the data show no overdispersion, so the
  likelihood grows toward the multinomial limit (sum of α → ∞);
- `zero_columns::Int`: the number of categories without counts;
- `hessian_diag::Vector{Float64}`, `hessian_scalar::Float64`: the Hessian of
  the log-likelihood with respect to α at the fit,
  `Diagonal(hessian_diag) + hessian_scalar * ones(V) * ones(V)'`, as
  [`loglik_sum`](@ref) gives it at `alpha` (0 on the diagonal for
  categories without counts). `NaN` where the library does not compute it:
  under `multinomial_limit`, and when a single category has counts (any α
  is then an MLE);
- `parameters::Int`: the number of fitted α, the categories with counts, as
  the library counts them ([`dof`](@ref));
- `nobs::Float64`: the observations that entered the fit, those with counts
  and a positive weight: their number, or the sum of their weights when
  weights were given, as the library counts them ([`nobs`](@ref), BIC's n).
- `totals::Vector{Float64}`, `obsdim::Int`: the fitted table's row totals
  (every observation's, in order, rows of zeros and of zero weight
  included) and its orientation, which [`simulate`](@ref) draws new tables
  with (outside the C result: the package's own).

Accessors (StatsBase's names, this package's own functions):
[`coef`](@ref), [`stderror`](@ref), [`confint`](@ref), [`vcov`](@ref),
[`informationmatrix`](@ref), [`loglikelihood`](@ref), [`nobs`](@ref),
[`dof`](@ref), [`aic`](@ref), [`bic`](@ref). [`fit_mle`](@ref) turns a
converged fit into a [`DirMult`](@ref).
"""
struct DirMultFit
    alpha::Vector{Float64}
    std_error_alpha::Vector{Float64}
    std_error_log_alpha::Vector{Float64}
    loglik_kernel::Float64
    loglik::Float64
    gradient_norm::Float64
    precision::Float64
    iterations::Int
    converged::Bool
    multinomial_limit::Bool
    zero_columns::Int
    hessian_diag::Vector{Float64}
    hessian_scalar::Float64
    parameters::Int
    nobs::Float64
    totals::Vector{Float64}
    obsdim::Int
end

"""
    fit_dirmn(X; obsdim = 2, weights = nothing, start = nothing,
              tolerance = 1e-10, max_iterations = 1000, progress = nothing,
              backend = :auto, device = 0, context = nothing, real_valued = false)
        -> DirMultFit

Maximum-likelihood α for the observations of `X` (anything
[`DirmnCounts`](@ref) accepts, or a `DirmnCounts`), by the library's
safeguarded Newton iteration on log α, with O(V) Sherman–Morrison steps on
count histograms (each iteration costs O(distinct counts), not
O(observations × categories)). Returns a [`DirMultFit`](@ref) holding every
value the library reports: `alpha`, `std_error_alpha`,
`std_error_log_alpha`, `loglik_kernel`, `loglik` (the log pmf),
`gradient_norm`, `precision`, `iterations`, `converged`,
`multinomial_limit`, `zero_columns`, the Hessian at the fit, `hessian_diag`
and `hessian_scalar` (see [`informationmatrix`](@ref) and [`vcov`](@ref)),
`parameters` and `nobs`.

`weights` are per-observation weights (finite, ≥ 0), `start` a starting α
(default: the method of moments). `tolerance` is relative: the fit stops
when the predicted gain of a Newton step falls below `tolerance × |loglik|`.
Stopping at `max_iterations` without convergence is not an error: it gives
`converged = false` and a warning (`@warn`). The defaults shown are the
library's. (`tolerance` and `max_iterations` are the names of every dirmn
binding and of [`fit_mixture`](@ref); the old `tol` and `maxiter` are still
accepted, with a deprecation warning.) Observations of all zeros contribute
nothing; categories without counts get α = 0 and are counted in
`zero_columns`; data without overdispersion are reported through
`multinomial_limit`. A table without any count, or invalid weights, start,
`tolerance` or `max_iterations`, raise a [`DirmnError`](@ref).

`progress` is `nothing` or a function `(iteration, loglik, gradient_norm)`
called after every Newton iteration (`iteration` from 1, the last call's
equal to the result's `iterations`; `loglik` the log pmf at the new α, on
the scale of the result's `loglik`; `gradient_norm` the max-norm of the
gradient with respect to log α; not called when the data show no
overdispersion, which needs no iteration). Returning `true` cancels the fit
with a [`DirmnError`](@ref) `DIRMN_ERROR_CANCELLED`; an exception it throws
cancels the fit and is rethrown. It runs inside the library's call: it must
not compute with the same context (that raises
`DIRMN_ERROR_CONTEXT_IN_USE`), but may `close` the counts, mixtures or the
context, which read as closed at once and are freed when the fit returns
(the fit itself finishes).

Collective on a `DirmnCounts` with a [`Communicator`](@ref) (see
[`set_communicator!`](@ref)): every rank calls it, with the same options
and its own observations' `weights`, and gets the whole table's fit (α,
standard errors and iterations bit for bit those of one process holding the
whole table; `totals` are this rank's observations'). A rank whose part
fails raises its own error, the others `DIRMN_ERROR_COMMUNICATION`.

For clustering into several Dirichlet-multinomial components see
[`fit_mixture`](@ref); for a test of the Dirichlet-multinomial against the
multinomial, [`overdispersion_test`](@ref).
"""
function fit_dirmn(X; obsdim::Integer = 2, weights = nothing, start = nothing,
                   tolerance::Union{Nothing,Real} = nothing,
                   max_iterations::Union{Nothing,Integer} = nothing, progress = nothing,
                   backend::Symbol = :auto, device::Integer = 0,
                   context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false,
                   tol::Union{Nothing,Real} = nothing,
                   maxiter::Union{Nothing,Integer} = nothing)
    tolerance = _renamed(tolerance, tol, :tolerance, :tol, :fit_dirmn)
    max_iterations = _renamed(max_iterations, maxiter, :max_iterations, :maxiter, :fit_dirmn)
    f, maxit = _fit_dirmn(X, obsdim, weights, start, tolerance, max_iterations, progress,
                          backend, device, context, real_valued)
    f.converged ||
        @warn "fit_dirmn: stopped without convergence after $(f.iterations) iterations " *
              "(max_iterations = $maxit, gradient norm $(f.gradient_norm)); the result is " *
              "the last iterate (converged = false)"
    return f
end

# The fit itself; returns it with the iteration limit it ran under.
function _fit_dirmn(X, obsdim, weights, start, tolerance, max_iterations, progress, backend,
                    device, context, real_valued)
    max_iterations === nothing || (max_iterations = _cint(max_iterations, "max_iterations"))
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        V = c.ncat
        w = _weights(c, weights)
        tot = _totals_before(c)
        st0 = nothing
        if start !== nothing
            length(start) == V ||
                _mismatch("start has length $(length(start)) but the counts have $V categories")
            st0 = Vector{Float64}(_check_real(start, "start"))
        end
        alpha = Vector{Float64}(undef, V)
        se = Vector{Float64}(undef, V)
        selog = Vector{Float64}(undef, V)
        # Left as NaN where the library does not write the Hessian.
        hdiag = fill(NaN, V)
        prog = progress === nothing ? nothing : _Progress(progress, nothing)
        local res, maxit
        GC.@preserve w st0 alpha se selog hdiag prog begin
            oref = Ref(LibDirmn.dirmn_fit_options(Csize_t(sizeof(LibDirmn.dirmn_fit_options)),
                                                  0.0, Cint(0), C_NULL, C_NULL, C_NULL, C_NULL,
                                                  UInt32(0), C_NULL))
            LibDirmn.dirmn_fit_options_init_sized(oref, sizeof(LibDirmn.dirmn_fit_options))
            o = oref[]
            maxit = Int(_or(max_iterations, o.max_iterations))
            # The default flags: the callback is given the log pmf, the
            # scale of the result.
            oref[] = LibDirmn.dirmn_fit_options(
                o.size, Float64(_or(tolerance, o.tolerance)), Cint(maxit), _wptr(w),
                st0 === nothing ? Ptr{Cdouble}(C_NULL) : pointer(st0),
                prog === nothing ? C_NULL : _progress_pointer(),
                prog === nothing ? C_NULL : pointer_from_objref(prog), o.flags, pointer(hdiag))
            rref = Ref(LibDirmn.dirmn_fit_result(Csize_t(sizeof(LibDirmn.dirmn_fit_result)),
                                                 pointer(alpha), pointer(se), pointer(selog),
                                                 0.0, 0.0, 0.0, 0.0, Cint(0), Cint(0), Cint(0),
                                                 Int64(0), NaN, Int64(-1), NaN))
            _with(ctx, c.context) do p
                status = LibDirmn.dirmn_fit(p, _handle(c), oref, rref)
                if status != 0 && prog !== nothing && prog.err !== nothing
                    throw(prog.err)
                end
                _check(status, p, _call_hint(c, ctx))
            end
            res = rref[]
        end
        # The library writes 0 where there is no standard error (R's rule:
        # unfitted categories, a zero from the library, the multinomial limit).
        for v in 1:V
            if alpha[v] == 0 || selog[v] == 0 || res.multinomial_limit != 0
                se[v] = NaN
                selog[v] = NaN
            end
        end
        f = DirMultFit(alpha, se, selog, res.loglik_kernel, res.loglik, res.gradient_norm,
                       res.precision, Int(res.iterations), res.converged != 0,
                       res.multinomial_limit != 0, Int(res.zero_columns), hdiag,
                       res.hessian_scalar, Int(res.parameters), res.observations, tot,
                       c.obsdim)
        return f, maxit
    end
end

"""
    fit_mle(DirMult, X; obsdim = 2, weights = nothing, kwargs...) -> DirMult

The maximum-likelihood [`DirMult`](@ref) for the observations of `X`, as
Distributions.jl's `fit_mle` (columns are observations unless
`obsdim = 1`). Keywords as for [`fit_dirmn`](@ref), which also returns
standard errors and convergence details. Throws an `ErrorException` when the
data show no overdispersion (the maximum is the multinomial limit, which no
finite α attains) or the fit did not converge; categories without counts get
α = 0. Collective on counts with a [`Communicator`](@ref), as `fit_dirmn`.
"""
function fit_mle(::Type{DirMult}, X; obsdim::Integer = 2, weights = nothing, start = nothing,
                 tolerance::Union{Nothing,Real} = nothing,
                 max_iterations::Union{Nothing,Integer} = nothing, progress = nothing,
                 backend::Symbol = :auto, device::Integer = 0,
                 context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false,
                 tol::Union{Nothing,Real} = nothing,
                 maxiter::Union{Nothing,Integer} = nothing)
    tolerance = _renamed(tolerance, tol, :tolerance, :tol, :fit_mle)
    max_iterations = _renamed(max_iterations, maxiter, :max_iterations, :maxiter, :fit_mle)
    r, maxit = _fit_dirmn(X, obsdim, weights, start, tolerance, max_iterations, progress,
                          backend, device, context, real_valued)
    r.multinomial_limit &&
        error("fit_mle: the data show no overdispersion; the likelihood grows toward the " *
              "multinomial limit (sum of alpha -> Inf). Use fit_dirmn for the proportions.")
    r.converged ||
        error("fit_mle: no convergence after $(r.iterations) iterations (max_iterations = " *
              "$maxit, gradient norm $(r.gradient_norm)); see fit_dirmn")
    return DirMult(r.alpha)
end
