# Dirichlet-multinomial mixtures (fit_mixture and friends) on simulated data
# with known labels, against plain-Julia references: the adjusted Rand index,
# the mixture log-likelihood by log-sum-exp over the BigFloat DM log pmf of
# reference.jl, the criteria from their formulas, and the posterior of new
# observations.

# --- simulation (stdlib Random has no gamma) ----------------------------------

# Gamma(a, 1) by Marsaglia & Tsang (2000); for a < 1 through
# Gamma(a + 1) · U^(1/a).
function mix_rgamma(rng, a::Real)
    a < 1 && return mix_rgamma(rng, a + 1) * rand(rng)^(1 / a)
    d = a - 1 / 3
    c = 1 / sqrt(9d)
    while true
        x = randn(rng)
        v = (1 + c * x)^3
        v <= 0 && continue
        u = rand(rng)
        log(u) < x^2 / 2 + d - d * v + d * log(v) && return d * v
    end
end

function mix_rdirichlet(rng, alpha)
    g = [mix_rgamma(rng, a) for a in alpha]
    return g ./ sum(g)
end

# N categorical draws.
function mix_rmultinomial(rng, N::Integer, p)
    x = zeros(Int, length(p))
    cp = cumsum(p)
    for _ in 1:N
        u = rand(rng) * cp[end]
        v = searchsortedfirst(cp, u)
        x[min(v, length(p))] += 1
    end
    return x
end

# A V × n table of DM draws: observation b from component labels[b] of the
# V × k parameter matrix A, with totals in `totals`.
function mix_simulate(rng, A::AbstractMatrix, labels, totals)
    X = zeros(Int, size(A, 1), length(labels))
    for (b, j) in enumerate(labels)
        X[:, b] = mix_rmultinomial(rng, rand(rng, totals), mix_rdirichlet(rng, A[:, j]))
    end
    return X
end

# Three well-separated components over 24 categories: a common floor of 0.3
# and 6.0 on a block of 8 categories of its own (about 90 % of the mass).
const MIX_V = 24
const MIX_K = 3
const MIX_ALPHA = [0.3 + (div(v - 1, 8) + 1 == j ? 6.0 : 0.0) for v in 1:MIX_V, j in 1:MIX_K]
const MIX_RNG = MersenneTwister(7031)
const MIX_LABELS = vcat(fill(1, 60), fill(2, 50), fill(3, 40))[randperm(MIX_RNG, 150)]
const MIX_X = mix_simulate(MIX_RNG, MIX_ALPHA, MIX_LABELS, 60:200)
const MIX_NEW_LABELS = rand(MIX_RNG, 1:MIX_K, 40)
const MIX_XNEW = mix_simulate(MIX_RNG, MIX_ALPHA, MIX_NEW_LABELS, 60:200)

# Two overlapping components and small totals: responsibilities far from 0
# and 1, and EM needs many iterations.
const MIX_FALPHA = [4.0 1.6; 3.0 2.0; 2.0 3.0; 1.6 4.0; 1.0 1.0; 2.0 2.0]
const MIX_F = mix_simulate(MIX_RNG, MIX_FALPHA, rand(MIX_RNG, 1:2, 200), 2:12)
const MIX_FNEW = mix_simulate(MIX_RNG, MIX_FALPHA, rand(MIX_RNG, 1:2, 30), 2:12)

# --- references ------------------------------------------------------------------

# The adjusted Rand index (Hubert & Arabie 1985) from the contingency table.
function mix_ari(a::AbstractVector, b::AbstractVector)
    length(a) == length(b) || error("mix_ari: lengths differ")
    ua, ub = unique(a), unique(b)
    C = [count(i -> a[i] == x && b[i] == y, eachindex(a)) for x in ua, y in ub]
    npairs(x) = x * (x - 1) / 2
    sij = sum(npairs, C)
    sa = sum(npairs, sum(C; dims = 2))
    sb = sum(npairs, sum(C; dims = 1))
    expected = sa * sb / npairs(length(a))
    top = (sa + sb) / 2
    return top == expected ? 1.0 : (sij - expected) / (top - expected)
end

# log Σ_j π_j p_j(x) for each observation (columns of X), with the BigFloat
# DM log pmf of reference.jl, and the posterior probabilities.
function mix_ref_logpdf(X::AbstractMatrix, alpha::AbstractMatrix, w::AbstractVector)
    L = ref_loglik(X, alpha; full = true)             # nobs × k, Float64 from BigFloat
    out = zeros(size(L, 1))
    post = zeros(size(L))
    for b in 1:size(L, 1)
        t = [big(L[b, j]) + log(big(w[j])) for j in 1:size(L, 2)]
        m = maximum(t)
        s = sum(exp(x - m) for x in t)
        out[b] = Float64(m + log(s))
        post[b, :] = [Float64(exp(x - m) / s) for x in t]
    end
    return out, post
end

# Σ_v [0.1 log α - 0.1 α + 0.1 log 0.1 - lgamma(0.1)] over every α: dmn's
# Gamma(0.1, 0.1) prior as a density on log α.
function mix_ref_logprior(alpha::AbstractMatrix)
    s, r = big"0.1", big"0.1"
    c = s * log(r) - lgamma_ref(s)
    return Float64(sum(s * log(big(a)) - r * big(a) + c for a in alpha))
end

# log det of minus the Hessian in log α of Σ_b z_b loglik_b(α) (+ the dmn
# prior), diagonal plus rank one: Σ log(-h_v) + log(1 + c Σ α_v² / h_v).
function mix_ref_logdet(xs, alpha::AbstractVector, z::AbstractVector; prior::Bool)
    a = [big(v) for v in alpha]
    A = sum(a)
    V = length(a)
    g = zeros(BigFloat, V)
    d = zeros(BigFloat, V)
    c = zero(BigFloat)
    for (b, x) in enumerate(xs)
        N = Int(sum(x))
        N == 0 && continue
        zb = big(z[b])
        s1N = sum(1 / (A + i) for i in 0:(N - 1))
        c += zb * sum(1 / (A + i)^2 for i in 0:(N - 1))
        for v in 1:V
            n = Int(x[v])
            g[v] += zb * ((n > 0 ? sum(1 / (a[v] + i) for i in 0:(n - 1)) : big(0)) - s1N)
            d[v] -= zb * (n > 0 ? sum(1 / (a[v] + i)^2 for i in 0:(n - 1)) : big(0))
        end
    end
    h = a .^ 2 .* d .+ a .* g .- (prior ? big"0.1" .* a : zero(a))
    return Float64(sum(log(-hv) for hv in h) + log(1 + c * sum(a .^ 2 ./ h)))
end

# digamma and trigamma in BigFloat: the recurrence up to x >= 40, then the
# asymptotic series with the Bernoulli numbers B_2 .. B_20 (the next term is
# below 1e-30 there).
const MIX_BERNOULLI = [1 // 6, -1 // 30, 1 // 42, -1 // 30, 5 // 66, -691 // 2730, 7 // 6,
                       -3617 // 510, 43867 // 798, -174611 // 330]
function mix_digamma(x::BigFloat)
    s = zero(BigFloat)
    while x < 40
        s -= 1 / x
        x += 1
    end
    t = log(x) - 1 / (2x)
    for (k, b) in enumerate(MIX_BERNOULLI)
        t -= BigFloat(b) / (2k * x^(2k))
    end
    return s + t
end
function mix_trigamma(x::BigFloat)
    s = zero(BigFloat)
    while x < 40
        s += 1 / x^2
        x += 1
    end
    t = 1 / x + 1 / (2x^2)
    for (k, b) in enumerate(MIX_BERNOULLI)
        t += BigFloat(b) / x^(2k + 1)
    end
    return s + t
end

# DirichletMultinomial::dmn's log-determinant term of its Laplace value for
# component j, with the dense V x V Hessian in BigFloat (no determinant
# lemma): dmn's hessian() in src/dirichlet_fit_main.c sums digamma and
# trigamma of alpha_v + n_bv over the rows unweighted by the
# responsibilities (every row with z_b n_bv != 0 adds psi(alpha_v + n_bv),
# every other row psi(alpha_v)), the row-total sums weighted; its main
# routine adds 2 log N - log W_j for all components but one, of which the
# library reports the mean over the choice, (k - 1)/k per component.
function mix_ref_logdet_dmn(xs, alpha::AbstractVector, z::AbstractVector, k::Int)
    a = [big(v) for v in alpha]
    A = sum(a)
    V = length(a)
    N = big(length(xs))
    W = sum(big, z)
    T1 = zero(BigFloat)
    T2 = zero(BigFloat)
    S1 = zeros(BigFloat, V)
    S2 = zeros(BigFloat, V)
    psiA, psi1A = mix_digamma(A), mix_trigamma(A)
    psia, psi1a = mix_digamma.(a), mix_trigamma.(a)
    for (b, x) in enumerate(xs)
        zb = big(z[b])
        Nb = sum(x)
        T1 += zb * (mix_digamma(A + Nb) - psiA)
        T2 += zb * (mix_trigamma(A + Nb) - psi1A)
        zb > 0 || continue
        for v in 1:V
            x[v] > 0 || continue
            S1[v] += mix_digamma(a[v] + x[v]) - psia[v]
            S2[v] += mix_trigamma(a[v] + x[v]) - psi1a[v]
        end
    end
    d = [a[v] * (T1 - (N - W) * psia[v] - S1[v] + big"0.1") - a[v]^2 * ((N - W) * psi1a[v] + S2[v])
         for v in 1:V]
    H = Diagonal(d) + T2 * a * a'
    return Float64(logabsdet(Matrix(H))[1] + (k - 1) / big(k) * (2 * log(N) - log(W)))
end

mix_relerr(got, want) = abs(got - want) / max(abs(want), 1.0)

# The library's default number of starts (dirmn_mixture_options_init).
const MIX_STARTS = let r = Ref(Dirmn.LibDirmn.empty_mixture_options())
    Dirmn.LibDirmn.dirmn_mixture_options_init_sized(r, sizeof(Dirmn.LibDirmn.dirmn_mixture_options))
    Int(r[].starts)
end

@testset "mixtures" begin
    @testset "test helpers" begin
        # The references are only useful if they are right.
        @test mix_ari([0, 0, 1, 1], [0, 0, 1, 2]) ≈ 4 / 7 atol = 1e-12    # sklearn's example
        @test mix_ari([1, 1, 2, 2, 3], [5, 5, 9, 9, 7]) == 1.0
        @test abs(mix_ari(repeat(1:3, 200), repeat(1:2, 300))) < 0.01
        rng = MersenneTwister(1)
        for a in (0.3, 2.5)
            g = [mix_rgamma(rng, a) for _ in 1:40000]
            @test abs(sum(g) / length(g) - a) < 6 * sqrt(a / length(g))
            @test abs(sum((g .- a) .^ 2) / length(g) - a) < 0.12 * a
        end
        @test sum(MIX_X[:, 1]) in 60:200
        @test all(sum(MIX_X; dims = 1) .>= 60)
    end

    @testset "raw ABI" begin
        L = Dirmn.LibDirmn
        # The symbol dirmn_mixture_options_init fills the struct as the first
        # release had it (up to progress_data); _init_sized the whole.
        r = Ref(L.dirmn_mixture_options(0, 7, 7, 0, 0, 0, 0.0, C_NULL, C_NULL, C_NULL))
        L.dirmn_mixture_options_init(r)
        @test r[].size == fieldoffset(L.dirmn_mixture_options, 11)
        r = Ref(L.dirmn_mixture_options(0, 7, 7, 0, 0, 0, 0.0, C_NULL, C_NULL, C_NULL))
        L.dirmn_mixture_options_init_sized(r, sizeof(L.dirmn_mixture_options))
        o = r[]
        @test o.size == sizeof(L.dirmn_mixture_options)
        @test o.objective == L.DIRMN_MIXTURE_ML && o.init == L.DIRMN_INIT_MIXED
        @test o.starts >= 3 && o.seed == 1 && o.max_iterations == 1000 && o.tolerance == 1e-9
        @test o.weights == C_NULL && o.progress == C_NULL && o.grow_from == C_NULL
        @test o.m_step_iterations == 4
        # The forms without the appended fields set them to their defaults.
        o10 = L.dirmn_mixture_options(0, 7, 7, 0, 0, 0, 0.0, C_NULL, C_NULL, C_NULL)
        o11 = L.dirmn_mixture_options(0, 7, 7, 0, 0, 0, 0.0, C_NULL, C_NULL, C_NULL, C_NULL)
        @test o10.grow_from == C_NULL && o10.m_step_iterations == 4
        @test o11 == o10
        @test L.empty_mixture_options().m_step_iterations == 0
        m = fit_mixture(MIX_X, 2; starts = 1)
        info = Ref(L.empty_mixture_info())
        @test L.dirmn_mixture_get_info(m.ptr, info) == 0
        @test info[].k == 2 && info[].rows == 150 && info[].cols == MIX_V
        @test info[].parameters == 2 * MIX_V + 1 && info[].loglik == m.loglik
        @test info[].start == 0 && m.start == 1
        small = Ref(L.dirmn_mixture_info(4, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0))
        @test L.dirmn_mixture_get_info(m.ptr, small) == L.DIRMN_ERROR_INVALID_ARGUMENT
        a = zeros(MIX_V, 2)
        @test L.dirmn_mixture_get_params(m.ptr, a, 1, 1, C_NULL) == L.DIRMN_ERROR_INVALID_ARGUMENT
        # Row-major (k × V) through the other strides: the same numbers.
        at = zeros(2, MIX_V)
        @test L.dirmn_mixture_get_params(m.ptr, at, 1, 2, C_NULL) == 0
        @test at == permutedims(m.alpha)
        close(m)
    end

    @testset "three components, objective = $(obj)" for obj in (:ml, :dmn)
        m = fit_mixture(MIX_X, 3; objective = obj)
        n, V, k = 150, MIX_V, 3
        P = k * V + k - 1
        @test m.k == k == ncomponents(m) && nobs(m) == n && ncategories(m) == V
        @test dof(m) == P && m.objective_kind === obj
        @test size(m.alpha) == (V, k) && size(m.responsibilities) == (n, k)
        @test m.converged && 1 <= m.iterations <= 1000 && 1 <= m.start <= MIX_STARTS
        @test all(m.alpha .> 0) && all(isfinite, m.alpha)
        @test abs(sum(m.mixture_weights) - 1) <= 1e-12 && all(m.mixture_weights .> 0)
        @test maximum(abs.(sum(m.responsibilities; dims = 2) .- 1)) <= 1e-12
        @test mix_ari(assignments(m), MIX_LABELS) >= 0.95
        # Component sizes and parameters recover the truth (matched by labels).
        lab = assignments(m)
        perm = [argmax([count(b -> MIX_LABELS[b] == t && lab[b] == j, 1:n) for j in 1:k])
                for t in 1:k]
        @test sort(perm) == 1:k
        @test maximum(abs.(m.mixture_weights[perm] .- [60, 50, 40] ./ n)) <= 0.02
        for t in 1:k
            a = m.alpha[:, perm[t]]
            @test sum(a[8t-7:8t]) / sum(a) > 0.8   # its block carries the mass
        end

        # The log-likelihood, recomputed from the fitted α and π.
        want, post = mix_ref_logpdf(MIX_X, m.alpha, m.mixture_weights)
        @test mix_relerr(m.loglik, sum(want)) <= 1e-9
        @test maximum(abs.(m.responsibilities .- post)) <= 1e-9
        @test mix_relerr(loglikelihood(m), sum(want)) <= 1e-9
        @test maximum(abs.(logpdf(m, MIX_X) .- want)) <= 1e-9 * maximum(abs.(want))
        @test mix_relerr(loglikelihood(m, MIX_X), sum(want)) <= 1e-9

        # Criteria: R's scale under :ml, dmn's under :dmn.
        if obj === :ml
            @test m.objective == -m.loglik
            @test mix_relerr(aic(m), -2 * m.loglik + 2P) <= 1e-12
            @test mix_relerr(bic(m), -2 * m.loglik + P * log(n)) <= 1e-12
        else
            @test mix_relerr(m.objective, -m.loglik - mix_ref_logprior(m.alpha)) <= 1e-9
            @test mix_relerr(aic(m), m.objective + P) <= 1e-12
            @test mix_relerr(bic(m), m.objective + P / 2 * log(n)) <= 1e-12
        end
        # Laplace from the BigFloat Hessians at the fitted responsibilities
        # (the library's come from the last M step, equal at convergence).
        xs = observations(MIX_X, 2)
        # Under :dmn, dmn's own Laplace value (see mix_ref_logdet_dmn).
        ld = obj === :ml ?
             sum(mix_ref_logdet(xs, m.alpha[:, j], m.responsibilities[:, j]; prior = false) for j in 1:k) :
             sum(mix_ref_logdet_dmn(xs, m.alpha[:, j], m.responsibilities[:, j], k) for j in 1:k)
        lap = m.objective + ld / 2 - P / 2 * log(2pi)
        @test mix_relerr(laplace(m), obj === :ml ? 2lap : lap) <= 1e-6

        # The same fit from other layouts of the same table.
        for (Y, od) in ((permutedims(MIX_X), 1), (sparse(MIX_X), 2), (Float64.(MIX_X), 2))
            m2 = fit_mixture(Y, 3; objective = obj, obsdim = od)
            @test maximum(abs.(m2.alpha .- m.alpha) ./ m.alpha) <= 1e-8
            @test abs(m2.loglik - m.loglik) <= 1e-9 * abs(m.loglik)
            @test m2.obsdim == od
        end

        # Components and weights as distributions.
        comps = components(m)
        @test length(comps) == k && comps[2].alpha == m.alpha[:, 2]
        @test probs(m) == m.mixture_weights && probs(m) !== m.mixture_weights
        close(m)
    end

    @testset "overlapping components, objective = $(obj)" for obj in (:ml, :dmn)
        m = fit_mixture(MIX_F, 2; objective = obj, tolerance = 1e-12)
        @test m.converged && m.iterations > 10
        R = m.responsibilities
        @test count(maximum(R; dims = 2) .< 0.9) > 50          # really fuzzy
        want, post = mix_ref_logpdf(MIX_F, m.alpha, m.mixture_weights)
        @test mix_relerr(m.loglik, sum(want)) <= 1e-9
        @test maximum(abs.(R .- post)) <= 1e-9
        P = 2 * 6 + 1
        obj === :dmn &&
            @test mix_relerr(m.objective, -m.loglik - mix_ref_logprior(m.alpha)) <= 1e-9
        xs = observations(MIX_F, 2)
        ld = obj === :ml ? sum(mix_ref_logdet(xs, m.alpha[:, j], R[:, j]; prior = false) for j in 1:2) :
             sum(mix_ref_logdet_dmn(xs, m.alpha[:, j], R[:, j], 2) for j in 1:2)
        lap = m.objective + ld / 2 - P / 2 * log(2pi)
        @test mix_relerr(laplace(m), obj === :ml ? 2lap : lap) <= 1e-6
        _, pnew = mix_ref_logpdf(MIX_FNEW, m.alpha, m.mixture_weights)
        @test maximum(abs.(posterior(m, MIX_FNEW) .- pnew)) <= 1e-9
        # The fit is a local maximum of the objective: moving α or π away
        # from it makes the reference objective worse.
        refobj(a, w) = -sum(mix_ref_logpdf(MIX_F, a, w)[1]) -
                       (obj === :dmn ? mix_ref_logprior(a) : 0.0)
        base = refobj(m.alpha, m.mixture_weights)
        @test mix_relerr(base, m.objective) <= 1e-9
        for f in (0.97, 1.03)
            @test refobj(m.alpha .* f, m.mixture_weights) > base
            a = copy(m.alpha)
            a[1, 1] *= f
            @test refobj(a, m.mixture_weights) > base
            w = [m.mixture_weights[1] * f, 1 - m.mixture_weights[1] * f]
            @test refobj(m.alpha, w) > base
        end
    end

    @testset "reproducibility and starts" begin
        a = fit_mixture(MIX_X, 3; seed = 11)
        b = fit_mixture(MIX_X, 3; seed = 11)
        @test a.alpha == b.alpha && a.mixture_weights == b.mixture_weights
        @test a.responsibilities == b.responsibilities && a.loglik == b.loglik
        # starts = 1 runs the first of the default starts of the same seed, so
        # keeping the best of them can only improve on it.
        one = fit_mixture(MIX_X, 3; seed = 11, starts = 1)
        @test one.start == 1
        @test a.objective <= one.objective + 1e-9 * abs(one.objective)
        a.start == 1 && @test a.alpha == one.alpha
        # k-means seeding instead of k-means++; another seed.
        for (init, seed) in ((:kmeans, 1), (:kmeanspp, 12345), (:soft_kmeans, 2))
            m = fit_mixture(MIX_X, 3; init = init, seed = seed)
            @test mix_ari(assignments(m), MIX_LABELS) >= 0.95
        end
        # A prepared table gives the same fit as the array.
        c = DirmnCounts(MIX_X)
        mc = fit_mixture(c, 3; seed = 11)
        @test mc.alpha == a.alpha && mc.loglik == a.loglik
        close(c)
    end

    @testset "k = 1 is the maximum-likelihood fit" begin
        m = fit_mixture(MIX_X, 1)
        f = fit_dirmn(MIX_X)
        @test m.mixture_weights == [1.0] && all(m.responsibilities .== 1)
        @test maximum(abs.(m.alpha[:, 1] .- f.alpha) ./ f.alpha) <= 1e-6
        @test mix_relerr(m.loglik, f.loglik) <= 1e-9
        @test loglikelihood(f) == f.loglik
    end

    @testset "weights" begin
        w = [1.0 + (b % 3) for b in 1:150]
        m = fit_mixture(MIX_X, 3; weights = w)
        want, _ = mix_ref_logpdf(MIX_X, m.alpha, m.mixture_weights)
        @test mix_relerr(m.loglik, sum(w .* want)) <= 1e-9
        @test mix_relerr(bic(m), -2 * m.loglik + dof(m) * log(sum(w))) <= 1e-12
        @test mix_ari(assignments(m), MIX_LABELS) >= 0.95
        # All-one weights are no weights.
        m1 = fit_mixture(MIX_X, 3; weights = ones(150))
        m0 = fit_mixture(MIX_X, 3)
        @test maximum(abs.(m1.alpha .- m0.alpha) ./ m0.alpha) <= 1e-12
        # A zero weight removes an observation from the fit: its
        # responsibilities are still computed.
        wz = ones(150)
        wz[1:5] .= 0
        mz = fit_mixture(MIX_X, 3; weights = wz)
        wantz, postz = mix_ref_logpdf(MIX_X, mz.alpha, mz.mixture_weights)
        @test mix_relerr(mz.loglik, sum(wz .* wantz)) <= 1e-9
        @test maximum(abs.(mz.responsibilities .- postz)) <= 1e-9
    end

    @testset "rows and columns of zeros, objective = $(obj)" for obj in (:ml, :dmn)
        Z = zeros(Int, MIX_V + 1, 154)
        Z[1:12, 1:75] = MIX_X[1:12, 1:75]
        Z[14:end, 1:75] = MIX_X[13:end, 1:75]       # category 13 is never counted
        Z[1:12, 80:end] = MIX_X[1:12, 76:end]
        Z[14:end, 80:end] = MIX_X[13:end, 76:end]   # observations 76..79 are all zeros
        labels = vcat(MIX_LABELS[1:75], fill(0, 4), MIX_LABELS[76:end])
        m = fit_mixture(Z, 3; objective = obj)
        @test all(isfinite, m.alpha) && all(m.alpha .> 0)
        @test all(isfinite, m.responsibilities)
        @test all(isfinite, (m.loglik, m.objective, m.aic, m.bic, m.laplace))
        # The library's counts: the four rows of zeros are no observations;
        # under :ml the empty category is not fitted, under :dmn (dmn's
        # count) every α is.
        @test m.rows == 154 && nobs(m) == 150
        @test dof(m) == (obj === :ml ? 3 * MIX_V + 2 : 3 * (MIX_V + 1) + 2)
        # An observation of zeros has likelihood 1 under every component.
        for b in 76:79
            @test maximum(abs.(m.responsibilities[b, :] .- m.mixture_weights)) <= 1e-12
        end
        keep = labels .!= 0
        @test mix_ari(assignments(m)[keep], labels[keep]) >= 0.95
        obj === :ml && @test maximum(m.alpha[13, :]) <= 1e-6   # MLE limit α → 0
        want, _ = mix_ref_logpdf(Z, m.alpha, m.mixture_weights)
        @test mix_relerr(m.loglik, sum(want)) <= 1e-9
        P = posterior(m, Z[:, 74:80])
        @test all(isfinite, P) && maximum(abs.(P .- m.responsibilities[74:80, :])) <= 1e-9
        close(m)
    end

    @testset "new data" begin
        m = fit_mixture(MIX_X, 3)
        P = posterior(m, MIX_XNEW)
        @test size(P) == (40, 3)
        @test maximum(abs.(sum(P; dims = 2) .- 1)) <= 1e-12
        _, want = mix_ref_logpdf(MIX_XNEW, m.alpha, m.mixture_weights)
        @test maximum(abs.(P .- want)) <= 1e-9
        lab = assignments(m, MIX_XNEW)
        @test lab == [argmax(P[b, :]) for b in 1:40]
        @test mix_ari(lab, MIX_NEW_LABELS) >= 0.95
        # Training data again: the fitted responsibilities.
        @test maximum(abs.(posterior(m, MIX_X) .- m.responsibilities)) <= 1e-9
        @test assignments(m) == [argmax(m.responsibilities[b, :]) for b in 1:150]
        # Other forms of the same data.
        @test maximum(abs.(posterior(m, permutedims(MIX_XNEW); obsdim = 1) .- P)) <= 1e-12
        @test maximum(abs.(posterior(m, sparse(MIX_XNEW)) .- P)) <= 1e-12
        c = DirmnCounts(MIX_XNEW)
        @test maximum(abs.(posterior(m, c) .- P)) <= 1e-12
        close(c)
        p1 = posterior(m, MIX_XNEW[:, 7])
        @test p1 isa Vector{Float64} && maximum(abs.(p1 .- P[7, :])) <= 1e-12
        @test assignments(m, MIX_XNEW[:, 7]) == lab[7]
        @test size(posterior(m, zeros(Int, MIX_V, 0))) == (0, 3)
        ref, _ = mix_ref_logpdf(MIX_XNEW, m.alpha, m.mixture_weights)
        @test maximum(abs.(logpdf(m, MIX_XNEW) .- ref)) <= 1e-9 * maximum(abs.(ref))
        @test abs(logpdf(m, MIX_XNEW[:, 3]) - ref[3]) <= 1e-9 * abs(ref[3])
        @test mix_relerr(loglikelihood(m, MIX_XNEW), sum(ref)) <= 1e-9
        # A mixture fitted with observations in rows takes new data in rows.
        mr = fit_mixture(permutedims(MIX_X), 3; obsdim = 1)
        @test maximum(abs.(posterior(mr, permutedims(MIX_XNEW)) .- P)) <= 1e-8

        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH posterior(m, MIX_XNEW[1:end-1, :])
        @test occursin("columns", msg(e))
        close(m)
        close(m)                                   # idempotent
        @test !isopen(m) && size(m.alpha) == (MIX_V, 3)   # values stay
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER posterior(m, MIX_XNEW)
        @test occursin("closed", msg(e))
        @test assignments(m) == [argmax(m.responsibilities[b, :]) for b in 1:150]
    end

    @testset "progress callback" begin
        calls = Tuple{Int,Float64,Float64}[]
        m = fit_mixture(MIX_F, 2; starts = 1, progress = (i, ll, ch) -> push!(calls, (i, ll, ch)))
        @test m.iterations > 10
        @test length(calls) == m.iterations
        @test [c[1] for c in calls] == 1:m.iterations
        @test calls[end][2] == m.loglik
        @test all(c -> isfinite(c[3]), calls)
        # EM under maximum likelihood never lowers the log-likelihood.
        lls = [c[2] for c in calls]
        @test all(diff(lls) .>= -1e-9 * abs(m.loglik))
        n = Ref(0)
        e = @dirmn_error :DIRMN_ERROR_CANCELLED fit_mixture(MIX_X, 3;
                                                            progress = (i, ll, ch) -> (n[] += 1; n[] >= 2))
        @test n[] == 2
        e = caught(() -> fit_mixture(MIX_X, 3; progress = (i, ll, ch) -> throw(ArgumentError("stop here"))))
        @test e isa ArgumentError && e.msg == "stop here"
        # Anything but `true` continues.
        m2 = fit_mixture(MIX_F, 2; starts = 1, progress = (i, ll, ch) -> nothing)
        @test m2.alpha == m.alpha
        # Every start reports its iterations.
        calls3 = Int[]
        m3 = fit_mixture(MIX_F, 2; starts = 3, progress = (i, ll, ch) -> push!(calls3, i))
        @test count(==(1), calls3) == 3 && length(calls3) >= m3.iterations
    end

    @testset "errors" begin
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, 0)
        @test occursin("k (0)", msg(e))
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, -2)
        small = MIX_X[:, 1:5]
        small[:, 2] .= 0                            # 4 observations with counts
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(small, 5)
        @test occursin("(4)", msg(e))
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(small, 6)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, Int64(2)^40)
        @test fit_mixture(small, 4).k == 4          # the largest k allowed
        w = ones(150)
        w[17] = -1
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_mixture(MIX_X, 2; weights = w)
        @test occursin("16", msg(e))                # 0-based row
        w[17] = NaN
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_mixture(MIX_X, 2; weights = w)
        w[17] = Inf
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_mixture(MIX_X, 2; weights = w)
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH fit_mixture(MIX_X, 2; weights = ones(149))
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, 2; tolerance = 0)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, 2; tolerance = NaN)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, 2; starts = 0)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, 2; max_iterations = 0)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(zeros(Int, 4, 0), 1)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(zeros(Int, 4, 6), 1)
        @dirmn_error :DIRMN_ERROR_INVALID_COUNTS fit_mixture([1 2; -1 3], 1)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MIX_X, [2, 200])
        @test caught(() -> fit_mixture(MIX_X, 2; objective = :map)) isa ArgumentError
        @test caught(() -> fit_mixture(MIX_X, 2; init = :random)) isa ArgumentError
        @test caught(() -> fit_mixture(MIX_X, 2; seed = -1)) isa ArgumentError
        @test caught(() -> fit_mixture(MIX_X, 2; obsdim = 3)) isa ArgumentError
        @test caught(() -> fit_mixture(MIX_X, 1:3; select = :icl)) isa ArgumentError
        @test caught(() -> fit_mixture(MIX_X, Int[])) isa ArgumentError
        # Not converging within max_iterations is reported with a warning, not raised.
        m = @test_logs (:warn, r"without convergence for k = 3 after 1 iterations") fit_mixture(
            MIX_X, 3; max_iterations = 1, starts = 1)
        @test !m.converged && m.iterations == 1
        # Counts closed or on another context.
        c = DirmnCounts(MIX_X)
        close(c)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_mixture(c, 2)
        c = DirmnCounts(MIX_X; context = DirmnContext(:cpu))
        @dirmn_error :DIRMN_ERROR_WRONG_CONTEXT fit_mixture(c, 2; context = DirmnContext(:cpu))
        m = fit_mixture(MIX_X, 2)
        @dirmn_error :DIRMN_ERROR_WRONG_CONTEXT posterior(m, c; context = DirmnContext(:cpu))
        # A DirmnCounts on another context is assigned on its own context.
        @test maximum(abs.(posterior(m, c) .- m.responsibilities)) <= 1e-9
        close(c)
    end

    @testset "m_step_iterations" begin
        # Two well-separated components: the default (a few Newton steps per
        # M step, a generalized EM) and 200 (every M step fitted to
        # convergence, the classical EM) reach the same optimum.
        rng = MersenneTwister(702)
        labels = vcat(fill(1, 50), fill(2, 30))[randperm(rng, 80)]
        X2 = mix_simulate(rng, MIX_ALPHA[1:16, 1:2], labels, 100:150)
        for obj in (:ml, :dmn)
            md = fit_mixture(X2, 2; objective = obj, starts = 2)
            m4 = fit_mixture(X2, 2; objective = obj, starts = 2, m_step_iterations = 4)
            mc = fit_mixture(X2, 2; objective = obj, starts = 2, m_step_iterations = 200)
            @test md.converged && mc.converged
            @test m4.alpha == md.alpha && m4.loglik == md.loglik   # 4 is the default
            @test mix_relerr(md.loglik, mc.loglik) <= 1e-8
            @test mix_relerr(md.objective, mc.objective) <= 1e-8
            @test mix_ari(assignments(md), labels) >= 0.95
        end
        # One step per M step, and a range of k, take it too.
        @test fit_mixture(X2, 2; starts = 2, m_step_iterations = 1).converged
        sel = fit_mixture(X2, 1:3; starts = 2, m_step_iterations = 200)
        sd = fit_mixture(X2, 1:3; starts = 2)
        @test mix_relerr(sel.fits[2].loglik, sd.fits[2].loglik) <= 1e-8
        # Below 1 is the library's error, naming the keyword.
        for bad in (0, -3)
            e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(X2, 2;
                                                                       m_step_iterations = bad)
            @test occursin("m_step_iterations ($bad) must be >= 1", msg(e))
            e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(X2, 1:2;
                                                                       m_step_iterations = bad)
            @test occursin("m_step_iterations", msg(e))
        end
        @test caught(() -> fit_mixture(X2, 2; m_step_iterations = Int64(2)^40)) isa ArgumentError
    end

    @testset "display" begin
        m = fit_mixture(MIX_X, 3)
        s = sprint(show, m)
        @test occursin("DirMultMixture(k=3, V=$(MIX_V), nobs=150, :ml", s)
        t = sprint(show, MIME("text/plain"), m)
        @test occursin("3-component", t) && occursin("bic", t) && occursin("converged", t)
        @test length(split(t, '\n')) == 6 + 3
        sel = fit_mixture(MIX_X, 2:3)
        @test occursin("selects k=3", sprint(show, sel))
        t = sprint(show, MIME("text/plain"), sel)
        @test occursin("k = 3 by bic", t) && count("<-", t) == 1
        f = fit_dirmn(MIX_X)
        @test f isa DirMultFit && occursin("DirMultFit(V=$(MIX_V)", sprint(show, f))
        @test occursin("converged", sprint(show, MIME("text/plain"), f))
        close(m)
        @test occursin("closed", sprint(show, m))
    end

    @testset "finalizers" begin
        for i in 1:30
            @test_logs (:warn, r"without convergence") fit_mixture(MIX_X, 2; starts = 1,
                                                                   max_iterations = 1)
        end
        GC.gc(); GC.gc()
        m = fit_mixture(MIX_X, 3)
        @test mix_ari(assignments(m, MIX_XNEW), MIX_NEW_LABELS) >= 0.95
    end

    @testset "CUDA" begin
        if !(:cuda in backends())
            @test_skip "no CUDA device (or libdirmn built without CUDA): mixtures on the GPU"
        else
            mc = fit_mixture(MIX_X, 3; backend = :cuda, seed = 5)
            mh = fit_mixture(MIX_X, 3; backend = :cpu, seed = 5)
            @test mc.context.backend === :cuda
            @test maximum(abs.(mc.alpha .- mh.alpha) ./ mh.alpha) <= 1e-6
            @test mix_relerr(mc.loglik, mh.loglik) <= 1e-9
            want, post = mix_ref_logpdf(MIX_X, mc.alpha, mc.mixture_weights)
            @test mix_relerr(mc.loglik, sum(want)) <= 1e-9
            @test mix_ari(assignments(mc, MIX_XNEW), MIX_NEW_LABELS) >= 0.95
            c = DirmnCounts(MIX_XNEW; backend = :cuda)
            @test maximum(abs.(posterior(mh, c) .- posterior(mh, MIX_XNEW))) <= 1e-9
            close(c)
        end
    end
end
