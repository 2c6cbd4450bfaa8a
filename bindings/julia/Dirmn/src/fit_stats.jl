# A DirMultFit's statistics under StatsBase's names (defined here: StatsBase
# is not a dependency), and its display.

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

The number of fitted parameters as the library counts them
(`f.parameters`: one α per category with counts), the same rule as a
one-component mixture's [`dof`](@ref), so `fit_dirmn` and
`fit_mixture(X, 1)` agree on it, on [`nobs`](@ref), [`aic`](@ref) and
[`bic`](@ref).
"""
dof(f::DirMultFit) = f.parameters

"""
    nobs(f::DirMultFit) -> Float64

The observations that entered the fit as the library counts them
(`f.nobs`): those with counts and a positive weight, their number, or the
sum of their weights when weights were given.
"""
nobs(f::DirMultFit) = f.nobs

"""
    aic(f::DirMultFit) -> Float64

Akaike's criterion, `-2 loglikelihood(f) + 2 dof(f)` (the log pmf,
multinomial coefficients included, so fits of the same data compare; a
one-component ML mixture gives the same). Smaller is better.
"""
aic(f::DirMultFit) = -2 * f.loglik + 2 * dof(f)

"""
    bic(f::DirMultFit) -> Float64

The Bayesian information criterion, `-2 loglikelihood(f) + dof(f) log(nobs(f))`.
Smaller is better.
"""
bic(f::DirMultFit) = -2 * f.loglik + dof(f) * log(nobs(f))

"""
    coef(f::DirMultFit) -> Vector{Float64}

The fitted α (a copy of `f.alpha`; 0 for categories without counts, the
proportions under `multinomial_limit`). StatsBase's name, this package's
own function.
"""
coef(f::DirMultFit) = copy(f.alpha)

"""
    stderror(f::DirMultFit) -> Vector{Float64}

The standard errors of α (a copy of `f.std_error_alpha`; `NaN` where the
fit has none). StatsBase's name, this package's own function.
"""
stderror(f::DirMultFit) = copy(f.std_error_alpha)

"""
    confint(f::DirMultFit; level = 0.95) -> Matrix{Float64}

Wald confidence intervals for α on the log scale, one row per category,
columns lower and upper bound: `exp(log α ± z se)` with `se =
f.std_error_log_alpha` and `z` the standard normal quantile at
`(1 + level) / 2`. Both bounds are positive (a Wald interval on the α scale
can go below 0). `NaN` where there is no standard error (categories without
counts, the multinomial limit). StatsBase's name, this package's own
function.
"""
function confint(f::DirMultFit; level::Real = 0.95)
    0 < level < 1 || throw(ArgumentError("level must be in (0, 1), not $level"))
    z = _normal_upper_quantile((1 - level) / 2)
    V = length(f.alpha)
    ci = Matrix{Float64}(undef, V, 2)
    for v in 1:V
        s = f.std_error_log_alpha[v]
        a = f.alpha[v]
        ci[v, 1] = isfinite(s) && a > 0 ? exp(log(a) - z * s) : NaN
        ci[v, 2] = isfinite(s) && a > 0 ? exp(log(a) + z * s) : NaN
    end
    return ci
end

# The standard normal distribution without SpecialFunctions. Below 1, the
# central part Φ(x) - 1/2 = φ(x) Σ x^(2n+1) / (2n+1)!! (positive terms, no
# cancellation); from 1 on, the upper tail Q(x) = 1 - Φ(x) by the continued
# fraction of the Mills ratio, evaluated by Lentz's method (to 2e-15
# relative there; the series' rounding, some 3 eps of Φ - 1/2, would cost
# the quantile at 0.995 1e-14).
# φ(x), with x² split into its rounded value and the rounding error (fma), so
# that exp's argument carries no error of x² (a relative error of x²/2 · eps
# otherwise, 1e-14 in the quantile at 0.995).
function _normal_density(x::Float64)
    x2 = x * x
    return exp(-x2 / 2) * (1 - fma(x, x, -x2) / 2) / sqrt(2pi)
end

function _normal_central(x::Float64)
    term = x
    s = x
    n = 0
    while term > 1e-17 * s
        n += 1
        term *= x * x / (2n + 1)
        s += term
    end
    return _normal_density(x) * s
end

function _normal_tail_cf(x::Float64)
    # Q(x) = φ(x) / (x + 1/(x + 2/(x + 3/(x + ...)))).
    tiny = 1e-300
    f = x
    C = x
    D = 0.0
    for k in 1:500
        D = x + k * D
        D = D == 0 ? tiny : D
        C = x + k / C
        C = C == 0 ? tiny : C
        D = 1 / D
        delta = C * D
        f *= delta
        abs(delta - 1) < 1e-16 && break
    end
    return _normal_density(x) / f
end

# z >= 0 with Q(z) = p, for 0 < p < 1/2: Newton's method (Q' = -φ) from the
# rational start of Abramowitz & Stegun 26.2.23, on Φ(z) - 1/2 = 1/2 - p
# below 1 and on Q(z) = p from 1 on, each without cancellation.
function _normal_upper_quantile(p::Float64)
    0 < p < 0.5 || throw(ArgumentError("_normal_upper_quantile: p = $p is outside (0, 1/2)"))
    t = sqrt(-2 * log(p))
    z = t - (2.515517 + 0.802853t + 0.010328t^2) / (1 + 1.432788t + 0.189269t^2 + 0.001308t^3)
    z = max(z, 0.0)
    for _ in 1:100
        r = z < 1 ? (0.5 - p) - _normal_central(z) : _normal_tail_cf(z) - p
        step = r / _normal_density(z)
        z += step
        abs(step) <= 2eps(max(z, 1e-300)) && break
    end
    return z
end
_normal_upper_quantile(p::Real) = _normal_upper_quantile(Float64(p))

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
one). Its diagonal is `stderror(f) .^ 2`. The rows and columns of
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

# --- display -------------------------------------------------------------------
# Numbers print as Base prints them (every digit that tells the value apart):
# -623064.32, not -623064.0.

# A count that may be a sum of weights: an integer prints without ".0".
_count_text(x::Real) = isinteger(x) && abs(x) < 2.0^53 ? string(Int(x)) : string(x)

_plural(x::Real, word) = string(_count_text(x), " ", word, x == 1 ? "" : "s")

function Base.show(io::IO, f::DirMultFit)
    print(io, "DirMultFit(V=", length(f.alpha), ", loglik=", f.loglik,
          ", precision=", f.precision, f.converged ? ", converged" : ", not converged",
          f.multinomial_limit ? ", multinomial limit" : "", ")")
end

function Base.show(io::IO, ::MIME"text/plain", f::DirMultFit)
    V = length(f.alpha)
    println(io, "DirMultFit: Dirichlet-multinomial maximum-likelihood fit, ",
            V == 1 ? "1 category" : "$V categories", ", ",
            _plural(f.nobs, "observation"))
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
