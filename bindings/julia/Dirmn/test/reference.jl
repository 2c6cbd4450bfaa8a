# An independent reference for the Dirichlet-multinomial log-likelihood, in
# BigFloat and plain Julia (no SpecialFunctions, nothing from dirmn).
#
# Integer counts: lpoch(a, n) = lgamma(a + n) - lgamma(a) = Σ_{k<n} log(a + k),
# exact up to the 256-bit rounding of each term. Real-valued counts: lgamma
# itself, by the recurrence up to z >= 60 and the Stirling series there.
# BigFloat values are converted to Float64 before anything prints them (Julia
# 1.5 as packaged by Debian cannot print a BigFloat).

setprecision(BigFloat, 256)

function lpoch_int(a::BigFloat, n::Integer)
    s = zero(BigFloat)
    for k in 0:(n - 1)
        s += log(a + k)
    end
    return s
end

# Bernoulli numbers B_0..B_n by the Akiyama–Tanigawa algorithm (exact).
function bernoulli_numbers(n)
    A = Vector{Rational{BigInt}}(undef, n + 1)
    B = Rational{BigInt}[]
    for m in 0:n
        A[m + 1] = 1 // (m + 1)
        for j in m:-1:1
            A[j] = j * (A[j] - A[j + 1])
        end
        push!(B, A[1])
    end
    return B
end

const BERNOULLI = bernoulli_numbers(40)  # BERNOULLI[k + 1] = B_k

function lgamma_ref(z::BigFloat)
    z > 0 || error("lgamma_ref needs z > 0")
    shift = zero(BigFloat)
    while z < 60
        shift += log(z)
        z += 1
    end
    s = (z - big(0.5)) * log(z) - z + log(2 * BigFloat(pi)) / 2
    zpow = z
    z2 = z * z
    for k in 1:20
        s += BigFloat(BERNOULLI[2k + 1]) / (2k * (2k - 1) * zpow)
        zpow *= z2
    end
    return s - shift
end

lpoch_ref(a::BigFloat, x::Integer) = lpoch_int(a, x)
lpoch_ref(a::BigFloat, x::Real) =
    isinteger(x) ? lpoch_int(a, Int(x)) : lgamma_ref(a + BigFloat(x)) - lgamma_ref(a)

"""
    ref_loglik(x, alpha; full = true, logalpha = false) -> Float64

Log-likelihood of one count vector `x` under `alpha` (or log alpha): the log
pmf, or with `full = false` the kernel without the multinomial coefficients
(the package's defaults and meanings).
"""
function ref_loglik(x::AbstractVector, alpha::AbstractVector; full::Bool = true,
                    logalpha::Bool = false)
    length(x) == length(alpha) || error("reference: length mismatch")
    a = logalpha ? [exp(BigFloat(v)) for v in alpha] : [BigFloat(v) for v in alpha]
    N = sum(BigFloat(v) for v in x)
    all(iszero, x) && return 0.0
    Nx = all(isinteger, x) ? Int(sum(x)) : N
    ll = -lpoch_ref(sum(a), Nx)
    for v in eachindex(x)
        x[v] > 0 && (ll += lpoch_ref(a[v], x[v]))
    end
    if full
        one_ = BigFloat(1)
        ll += lpoch_ref(one_, Nx)
        for v in eachindex(x)
            x[v] > 0 && (ll -= lpoch_ref(one_, x[v]))
        end
    end
    return Float64(ll)
end

# Observations of X as vectors, in the orientation given.
observations(X::AbstractMatrix, obsdim) =
    obsdim == 2 ? [Vector(X[:, b]) for b in 1:size(X, 2)] : [Vector(X[b, :]) for b in 1:size(X, 1)]

ref_loglik(X::AbstractMatrix, alpha::AbstractVector; obsdim = 2, kw...) =
    [ref_loglik(x, alpha; kw...) for x in observations(X, obsdim)]

ref_loglik(X::AbstractMatrix, alpha::AbstractMatrix; obsdim = 2, kw...) =
    [ref_loglik(x, alpha[:, j]; kw...) for x in observations(X, obsdim), j in 1:size(alpha, 2)]

function ref_rowwise(X::AbstractMatrix, A::AbstractMatrix; obsdim = 2, kw...)
    xs = observations(X, obsdim)
    as = observations(A, obsdim)
    return [ref_loglik(xs[b], as[b]; kw...) for b in eachindex(xs)]
end

const RTOL = 1e-10

"""
    relerr(got, want)

Largest |got - want| / max(|want|, 1) over the entries; Inf when the shapes
differ or an entry is not finite, so a NaN can never pass.
"""
function relerr(got, want)
    size(got) == size(want) || return Inf
    e = 0.0
    for (g, w) in zip(got, want)
        isfinite(g) || return Inf
        e = max(e, abs(g - w) / max(abs(w), 1.0))
    end
    return e
end
