function _weights(c::DirmnCounts, weights)
    weights === nothing && return nothing
    length(weights) == c.nobs ||
        _mismatch("weights has length $(length(weights)) but the counts have $(c.nobs) observations")
    w, s = _native_vector(_check_real(weights, "weights"), Float64)
    # The library reads weights contiguously.
    return s == 1 ? w : Vector{Float64}(w)
end

_wptr(w) = w === nothing ? Ptr{Cdouble}(C_NULL) : pointer(w)

# --- progress callbacks ------------------------------------------------------

mutable struct _Progress
    f::Any
    err::Any   # the exception the callback threw, if any
end

# Called by the library from the calling thread once per iteration (of a
# fit, or an EM iteration of a mixture); both callbacks have the C type
# dirmn_progress_fn. An exception must not unwind through C: it is kept and
# rethrown after the library has returned (it cancels the call).
function _progress_callback(iteration::Cint, loglik::Cdouble, change::Cdouble,
                            data::Ptr{Cvoid})::Cint
    p = unsafe_pointer_to_objref(data)::_Progress
    try
        r = p.f(Int(iteration) + 1, loglik, change)
        return r === true ? Cint(1) : Cint(0)
    catch e
        p.err = e
        return Cint(1)
    end
end

_progress_pointer() =
    @cfunction(_progress_callback, Cint, (Cint, Cdouble, Cdouble, Ptr{Cvoid}))

# As _oneshot, but the counts object is kept for the whole call of `f` (the
# histograms the library caches on it are only valid while it lives).
_with_counts(f, X::DirmnCounts, obsdim, real_valued, backend, device, context) =
    f(X, context === nothing ? X.context : context)
_with_counts(f, X, obsdim, real_valued, backend, device, context) =
    _oneshot(f, X, obsdim, real_valued, backend, device, context)

"""
    loglik_sum(X, α; obsdim = 2, param = :alpha, weights = nothing, full = true,
               backend = :auto, device = 0, context = nothing, real_valued = false)
        -> (value, gradient, hessian_diag, hessian_scalar)

The weighted sum over observations of the log-likelihood under one parameter
vector `α` (length V), with its gradient and Hessian with respect to `α`, or
to log α with `param = :logalpha` (then `α` holds log α). The Hessian is
`Diagonal(hessian_diag) + hessian_scalar * u * u'` with `u = ones(V)` for
`:alpha` and `u = α` for `:logalpha`, so a Newton step costs O(V).

`weights` (one finite value ≥ 0 per observation) defaults to all ones.
`full = true` (the default) makes `value` the weighted log pmf, multinomial
coefficients included; `full = false` leaves them out (the kernel; the
derivatives are the same either way). `X` is anything
[`DirmnCounts`](@ref) accepts, or a `DirmnCounts`, which is the way to make
repeated calls cheap: the library caches count histograms on it, so each
later call costs O(distinct counts) whatever the number of observations.
"""
function loglik_sum(X, P::AbstractVector; obsdim::Integer = 2, param::Symbol = :alpha,
                    weights = nothing, full::Bool = true, backend::Symbol = :auto,
                    device::Integer = 0, context::Union{Nothing,DirmnContext} = nothing,
                    real_valued::Bool = false)
    code = _param_code(param)
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        V = c.ncat
        length(P) == V ||
            _mismatch("the parameter vector has length $(length(P)) but the counts have $V " *
                      "categories")
        Pn, s = _native_vector(_check_real(P, "α"), Float64)
        w = _weights(c, weights)
        value = Ref{Cdouble}(0)
        grad = Vector{Float64}(undef, V)
        hdiag = Vector{Float64}(undef, V)
        hscal = Ref{Cdouble}(0)
        _with(ctx, c.context) do p
            GC.@preserve Pn w grad hdiag begin
                st = LibDirmn.dirmn_loglik_sum(p, _handle(c), Ptr{Cdouble}(pointer(Pn)), Int64(s), code,
                                               _wptr(w), _flags(full), value, pointer(grad),
                                               pointer(hdiag), hscal)
            end
            _check(st, p, _param_hint(c, ctx, P, false))
        end
        return (value = value[], gradient = grad, hessian_diag = hdiag,
                hessian_scalar = hscal[])
    end
end

"""
    loglik_rowwise_derivatives(X, A; obsdim = 2, param = :alpha, full = true,
                               backend = :auto, device = 0, context = nothing,
                               real_valued = false)
        -> (loglik, gradient, hessian_diag, hessian_scalar)

Per-observation log-likelihood, gradient and Hessian with one parameter
vector per observation (`A` as for [`loglik_rowwise`](@ref): the size and
orientation of `X`), with respect to α or, with `param = :logalpha`, log α.
`loglik` and `hessian_scalar` have one entry per observation; `gradient` and
`hessian_diag` have the shape of `A`. Observation b's Hessian is
`Diagonal(hessian_diag_b) + hessian_scalar[b] * u * u'` with `u = ones(V)`
(`:alpha`) or `u = α_b` (`:logalpha`): the building block of
Dirichlet-multinomial regression. `full = true` (the default) makes `loglik`
the log pmf, multinomial coefficients included; `full = false` leaves them
out (the derivatives are the same either way).
"""
function loglik_rowwise_derivatives(X, P::AbstractVecOrMat; obsdim::Integer = 2,
                                    param::Symbol = :alpha, full::Bool = true,
                                    backend::Symbol = :auto, device::Integer = 0,
                                    context::Union{Nothing,DirmnContext} = nothing,
                                    real_valued::Bool = false)
    code = _param_code(param)
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        size(P) == size(c) ||
            _mismatch("the parameters are $(join(size(P), "×")) but must have the size of the " *
                      "counts, $(join(size(c), "×")) (one parameter vector per observation)")
        n, V = c.nobs, c.ncat
        _check_real(P, "A")
        if P isa AbstractVector
            Pn, sv = _native_vector(P, Float64)
            srow = max(length(P) * sv, 1)
        else
            Pn, s1, s2 = _native_matrix(P, Float64)
            srow, sv = c.obsdim == 2 ? (s2, s1) : (s1, s2)
        end
        ll = Vector{Float64}(undef, n)
        hs = Vector{Float64}(undef, n)
        # Outputs are requested as observations × categories with a unit row
        # stride, the one layout in which loglik and hessian_scalar (indexed
        # by the row stride too) are contiguous; other orientations are
        # permuted afterwards.
        g = Matrix{Float64}(undef, n, V)
        hd = Matrix{Float64}(undef, n, V)
        _with(ctx, c.context) do p
            GC.@preserve Pn ll hs g hd begin
                st = LibDirmn.dirmn_loglik_rowwise_derivatives(
                    p, _handle(c), Ptr{Cdouble}(pointer(Pn)), Int64(srow), Int64(sv), code,
                    _flags(full), pointer(ll), pointer(g), pointer(hd), pointer(hs), Int64(1),
                    Int64(max(n, 1)))
            end
            _check(st, p, _param_hint(c, ctx, P, true))
        end
        if c.vector
            return (loglik = ll[1], gradient = vec(g), hessian_diag = vec(hd),
                    hessian_scalar = hs[1])
        elseif c.obsdim == 2
            return (loglik = ll, gradient = permutedims(g), hessian_diag = permutedims(hd),
                    hessian_scalar = hs)
        end
        return (loglik = ll, gradient = g, hessian_diag = hd, hessian_scalar = hs)
    end
end

"""
    DirMultFit

The result of [`fit_dirmn`](@ref): every value the C library's
`dirmn_fit_result` reports, as fields of the same names, the fit's other
output, the Hessian's diagonal (`dirmn_fit_options`' `hessian_diag`), and
the number of observations fitted.

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
- `nobs::Int`: the observations that entered the fit, those with counts
  (and a positive weight, when weights were given), as [`nobs`](@ref).

[`informationmatrix`](@ref) and [`vcov`](@ref) build the observed
information and the covariance matrix of α from the Hessian; [`aic`](@ref),
[`bic`](@ref), [`dof`](@ref) and [`nobs`](@ref) compare fits.
[`fit_mle`](@ref) turns a converged fit into a [`DirMult`](@ref).
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
    nobs::Int
end

"""
    loglikelihood(f::DirMultFit) -> Float64

The maximised log-likelihood of a [`fit_dirmn`](@ref) result, with the
multinomial coefficients (`f.loglik`: the log pmf of the data, on the same
scale as Distributions.jl's `loglikelihood` and a mixture's
[`loglikelihood`](@ref)).
"""
loglikelihood(f::DirMultFit) = f.loglik

"""
    dof(f::DirMultFit) -> Int

The number of fitted parameters: one α per category with counts
(`length(f.alpha) - f.zero_columns`), one fewer under `multinomial_limit`,
whose proportions sum to 1 (as the R package's `logLik()` counts `df`).
"""
dof(f::DirMultFit) = length(f.alpha) - f.zero_columns - (f.multinomial_limit ? 1 : 0)

"""
    nobs(f::DirMultFit) -> Int

The number of observations that entered the fit: those with counts (and a
positive weight, when weights were given), as R's `nobs()` of a
`dirmn_fit`.
"""
nobs(f::DirMultFit) = f.nobs

"""
    aic(f::DirMultFit) -> Float64

Akaike's criterion, `-2 f.loglik + 2 dof(f)` (the log pmf, multinomial
coefficients included, so fits of the same data compare; R's `AIC()` of a
`dirmn_fit` gives the same). Smaller is better.
"""
aic(f::DirMultFit) = -2 * f.loglik + 2 * dof(f)

"""
    bic(f::DirMultFit) -> Float64

The Bayesian information criterion, `-2 f.loglik + dof(f) log(nobs(f))`
(R's `BIC()` of a `dirmn_fit`). Smaller is better.
"""
bic(f::DirMultFit) = -2 * f.loglik + dof(f) * log(f.nobs)

"""
    informationmatrix(f::DirMultFit) -> Matrix{Float64}

The observed information of a [`fit_dirmn`](@ref) result: minus the
Hessian of the log-likelihood with respect to α at the fit,
`-(Diagonal(f.hessian_diag) + f.hessian_scalar * ones(V) * ones(V)')`, a
V × V matrix (all `NaN` where the fit has no Hessian: see
[`DirMultFit`](@ref)). Named after StatsBase's `informationmatrix`, but
this is the observed, not the expected, information, and this package's
own function.
"""
function informationmatrix(f::DirMultFit)
    V = length(f.alpha)
    M = fill(-f.hessian_scalar, V, V)
    for v in 1:V
        M[v, v] -= f.hessian_diag[v]
    end
    return M
end

"""
    vcov(f::DirMultFit) -> Matrix{Float64}

The asymptotic covariance matrix of the fitted α: the inverse of
[`informationmatrix`](@ref)`(f)` over the categories with counts, computed
in O(V²) by the Sherman–Morrison formula (the Hessian is diagonal plus rank
one). Its diagonal is `f.std_error_alpha .^ 2`. The rows and columns of
categories without counts are `NaN`, as their standard errors (they were not
fitted); the matrix is all `NaN` where the fit has no Hessian (see
[`DirMultFit`](@ref)). Named after StatsBase's `vcov`, but this package's
own function.
"""
function vcov(f::DirMultFit)
    V = length(f.alpha)
    isnan(f.hessian_scalar) && return fill(NaN, V, V)
    # -H = -(D + s 11'), so (-H)⁻¹ = -(D⁻¹ - s D⁻¹11'D⁻¹ / (1 + s 1'D⁻¹1)),
    # over the categories with counts (those with alpha > 0).
    fitted = [f.alpha[v] > 0 for v in 1:V]
    u = [fitted[v] ? 1 / f.hessian_diag[v] : 0.0 for v in 1:V]
    c = f.hessian_scalar / (1 + f.hessian_scalar * sum(u))
    C = Matrix{Float64}(undef, V, V)
    for j in 1:V
        C[j, j] = fitted[j] ? c * u[j] * u[j] - u[j] : NaN
        for i in (j + 1):V
            C[i, j] = C[j, i] = fitted[i] && fitted[j] ? c * u[i] * u[j] : NaN
        end
    end
    return C
end

function Base.show(io::IO, f::DirMultFit)
    print(io, "DirMultFit(V=", length(f.alpha), ", loglik=", f.loglik,
          ", precision=", f.precision, f.converged ? ", converged" : ", not converged",
          f.multinomial_limit ? ", multinomial limit" : "", ")")
end

function Base.show(io::IO, ::MIME"text/plain", f::DirMultFit)
    V = length(f.alpha)
    println(io, "DirMultFit: Dirichlet-multinomial maximum-likelihood fit, ", V,
            V == 1 ? " category" : " categories", ", ", f.nobs,
            f.nobs == 1 ? " observation" : " observations")
    println(io, "  loglik      ", f.loglik, " (log pmf; kernel without the multinomial ",
            "coefficients: loglik_kernel = ", f.loglik_kernel, ")")
    println(io, "  dof         ", dof(f), "   aic ", aic(f), "   bic ", bic(f))
    println(io, "  precision   ", f.precision, " (sum of alpha)")
    println(io, "  iterations  ", f.iterations, f.converged ? ", converged" : ", NOT converged",
            " (gradient norm ", f.gradient_norm, ")")
    f.multinomial_limit &&
        println(io, "  no overdispersion: multinomial limit; alpha holds the proportions")
    f.zero_columns > 0 &&
        println(io, "  ", f.zero_columns, " categories without counts (alpha = 0, std. error NaN)")
    n = min(V, 6)
    print(io, "  alpha       [", join(string.(f.alpha[1:n]), ", "), V > n ? ", …]" : "]")
end

"""
    fit_dirmn(X; obsdim = 2, weights = nothing, start = nothing,
              tol = 1e-10, maxiter = 1000, progress = nothing,
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
and `nobs`.

`weights` are per-observation weights (finite, ≥ 0), `start` a starting α
(default: the method of moments). `tol` is relative: the fit stops when the
predicted gain of a Newton step falls below `tol × |loglik|`. Not
converging within `maxiter` iterations is reported by `converged = false`,
not an error. (`tol` and `maxiter` are the names [`fit_mixture`](@ref)
uses too; the library's defaults are shown.) Observations of all zeros
contribute nothing; categories without counts get α = 0 and are counted in
`zero_columns`; data without overdispersion are reported through
`multinomial_limit`. A table without any count, or invalid weights, start,
`tol` or `maxiter`, raise a [`DirmnError`](@ref).

`progress` is `nothing` or a function `(iteration, loglik, gradient_norm)`
called before every Newton iteration (`iteration` from 1; `loglik` the log
pmf at the current α, on the scale of the result's `loglik`;
`gradient_norm` the max-norm of the gradient with respect to log α; not
called when the data show no overdispersion, which needs no iteration).
Returning `true` cancels the fit with a [`DirmnError`](@ref)
`DIRMN_ERROR_CANCELLED`; an exception it throws cancels the fit and is
rethrown. It runs inside the library's call: it must not compute with the
same context (that raises `DIRMN_ERROR_CONTEXT_IN_USE`), but may `close`
the counts, mixtures or the context, which read as closed at once and are
freed when the fit returns (the fit itself finishes).

For clustering into several Dirichlet-multinomial components see
[`fit_mixture`](@ref).
"""
function fit_dirmn(X; obsdim::Integer = 2, weights = nothing, start = nothing,
                   tol::Union{Nothing,Real} = nothing,
                   maxiter::Union{Nothing,Integer} = nothing, progress = nothing,
                   backend::Symbol = :auto, device::Integer = 0,
                   context::Union{Nothing,DirmnContext} = nothing, real_valued::Bool = false)
    maxiter === nothing || maxiter isa Cint || (maxiter = _cint(maxiter, "maxiter"))
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        V = c.ncat
        w = _weights(c, weights)
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
        tot = Vector{Float64}(undef, c.nobs)
        prog = progress === nothing ? nothing : _Progress(progress, nothing)
        local res
        GC.@preserve w st0 alpha se selog hdiag prog begin
            oref = Ref(LibDirmn.dirmn_fit_options(Csize_t(sizeof(LibDirmn.dirmn_fit_options)),
                                                  0.0, Cint(0), C_NULL, C_NULL, C_NULL, C_NULL,
                                                  UInt32(0), C_NULL))
            LibDirmn.dirmn_fit_options_init_sized(oref, sizeof(LibDirmn.dirmn_fit_options))
            o = oref[]
            oref[] = LibDirmn.dirmn_fit_options(
                o.size, tol === nothing ? o.tolerance : Float64(tol),
                maxiter === nothing ? o.max_iterations : Cint(maxiter),
                _wptr(w), st0 === nothing ? Ptr{Cdouble}(C_NULL) : pointer(st0),
                prog === nothing ? C_NULL : _progress_pointer(),
                prog === nothing ? C_NULL : pointer_from_objref(prog),
                # The callback is given the log pmf, the scale of the result.
                prog === nothing ? o.flags : o.flags | LibDirmn.DIRMN_FULL, pointer(hdiag))
            rref = Ref(LibDirmn.dirmn_fit_result(Csize_t(sizeof(LibDirmn.dirmn_fit_result)),
                                                 pointer(alpha), pointer(se), pointer(selog),
                                                 0.0, 0.0, 0.0, 0.0, Cint(0), Cint(0), Cint(0),
                                                 Int64(0), NaN))
            _with(ctx, c.context) do p
                # The observations that enter the fit, for nobs and bic;
                # asked first, as the progress callback may close `c`.
                _check(LibDirmn.dirmn_counts_row_totals(p, _handle(c), tot), p,
                       _call_hint(c, ctx))
                status = LibDirmn.dirmn_fit(p, _handle(c), oref, rref)
                if status != 0 && prog !== nothing && prog.err !== nothing
                    throw(prog.err)
                end
                _check(status, p, _call_hint(c, ctx))
            end
            res = rref[]
        end
        used = w === nothing ? count(>(0), tot) : count(b -> tot[b] > 0 && w[b] > 0, 1:c.nobs)
        # The library writes 0 where there is no standard error (R's rule:
        # unfitted categories, a zero from the library, the multinomial limit).
        for v in 1:V
            if alpha[v] == 0 || selog[v] == 0 || res.multinomial_limit != 0
                se[v] = NaN
                selog[v] = NaN
            end
        end
        return DirMultFit(alpha, se, selog, res.loglik_kernel, res.loglik, res.gradient_norm,
                          res.precision, Int(res.iterations), res.converged != 0,
                          res.multinomial_limit != 0, Int(res.zero_columns), hdiag,
                          res.hessian_scalar, used)
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
α = 0.
"""
function fit_mle(::Type{DirMult}, X; kwargs...)
    r = fit_dirmn(X; kwargs...)
    r.multinomial_limit &&
        error("fit_mle: the data show no overdispersion; the likelihood grows toward the " *
              "multinomial limit (sum of alpha -> Inf). Use fit_dirmn for the proportions.")
    r.converged ||
        error("fit_mle: no convergence after $(r.iterations) iterations (gradient norm " *
              "$(r.gradient_norm)); see fit_dirmn")
    return DirMult(r.alpha)
end
