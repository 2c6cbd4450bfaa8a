# overdispersion_test (issue #25, item 12) against references computed here:
# the likelihood-ratio statistic from the BigFloat DM log pmf of reference.jl
# and the multinomial log pmf at the pooled proportions, the C(α) score
# statistic T and its scaled χ² approximation from their formulas (HMP's
# C.alpha.multinomial: g = tr(M²)/tr(M), df = (V - 1) tr(M)² / tr(M²),
# M = diag(w) - ww', w the rows' shares of the grand total), the χ² tails
# by the series of the incomplete gamma function in BigFloat; and the size at
# 5 % under multinomial simulation. Uses mixture.jl's samplers and
# mixture_select.jl's MITE.

# log(n!) exactly up to BigFloat rounding.
od_logfact(n::Integer) = lpoch_int(BigFloat(1), n)

# The multinomial log pmf of the rows of X (observations in rows) at the
# pooled proportions of the categories with counts.
function od_ref_multinomial(X::AbstractMatrix)
    tot = vec(sum(X; dims = 1))
    N = big(sum(tot))
    ll = zero(BigFloat)
    for i in 1:size(X, 1)
        ll += od_logfact(sum(X[i, :]))
        for j in 1:size(X, 2)
            x = X[i, j]
            x > 0 && (ll += x * log(big(tot[j]) / N) - od_logfact(x))
        end
    end
    return ll
end

# T = Σ_j Σ_i (x_ij - N_i X_j / N)² / X_j over the categories with counts.
function od_ref_score(X::AbstractMatrix)
    tot = vec(sum(X; dims = 1))
    Ni = vec(sum(X; dims = 2))
    N = big(sum(tot))
    return sum(sum((X[i, j] - Ni[i] * tot[j] / N)^2 for i in 1:size(X, 1)) / tot[j]
               for j in 1:size(X, 2) if tot[j] > 0)
end

# HMP's scale g and degrees of freedom, from the rows with counts.
function od_ref_scale_df(X::AbstractMatrix)
    Ni = [big(sum(X[i, :])) for i in 1:size(X, 1) if sum(X[i, :]) > 0]
    w = Ni ./ sum(Ni)
    M = Diagonal(w) - w * w'
    trM, trM2 = tr(M), tr(M * M)
    V = count(>(0), vec(sum(X; dims = 1)))
    return trM2 / trM, (V - 1) * trM^2 / trM2
end

# P(χ²_df ≥ q): 1 - P(df/2, q/2), the regularized lower incomplete gamma by
# its series x^a e^-x / Γ(a + 1) Σ_n x^n / ((a + 1) ... (a + n)).
function od_chisq_upper(df::Real, q::Real)
    q <= 0 && return 1.0
    a, x = big(df) / 2, big(q) / 2
    term = one(BigFloat)
    s = one(BigFloat)
    n = 0
    while term > big"1e-70" * s
        n += 1
        term *= x / (a + n)
        s += term
    end
    return Float64(1 - exp(a * log(x) - x - lgamma_ref(a + 1)) * s)
end

# Multinomial rows with totals drawn from `totals`.
od_multinomial(rng, n, p, totals) =
    permutedims(hcat([mix_rmultinomial(rng, rand(rng, totals), p) for _ in 1:n]...))

@testset "overdispersion_test" begin
    @testset "the references" begin
        @test abs(od_chisq_upper(1, 3.841458820694124) - 0.05) <= 1e-13   # R: qchisq(0.95, 1)
        @test abs(od_chisq_upper(2, 3.0) - exp(-1.5)) <= 1e-15             # χ²₂'s tail is exp(-q/2)
        @test abs(od_chisq_upper(6, 4.0) - exp(-2.0) * (1 + 2 + 2)) <= 1e-15
        @test Float64(od_logfact(5)) ≈ log(120)
    end

    @testset "LRT and score on mite, against the references" begin
        f = fit_dirmn(MITE; obsdim = 1)
        t = overdispersion_test(MITE; obsdim = 1)
        @test t isa OverdispersionTest && t.method === :lrt
        dm = sum(ref_loglik(MITE, f.alpha; obsdim = 1))
        mn = Float64(od_ref_multinomial(MITE))
        @test abs(t.loglik_dm - dm) <= 1e-10 * abs(dm)
        @test abs(t.loglik_multinomial - mn) <= 1e-12 * abs(mn)
        @test abs(t.statistic - 2 * (dm - mn)) <= 1e-9 * abs(dm)
        @test t.statistic == t.lrt_statistic && t.dof == 1 && pvalue(t) == t.lrt_p_value
        @test t.categories == 35 && nobs(t) == 70 && t.converged
        @test abs(t.precision - f.precision) <= 1e-8 * f.precision
        @test 0 <= pvalue(t) < 1e-100                               # mite is overdispersed
        s = overdispersion_test(MITE; obsdim = 1, method = :score)
        T = Float64(od_ref_score(MITE))
        @test s.method === :score && abs(s.statistic - T) <= 1e-12 * T
        @test s.statistic == s.score_statistic == t.score_statistic
        g, df = od_ref_scale_df(MITE)
        @test abs(s.score_scale - Float64(g)) <= 1e-12 * Float64(g)
        @test abs(s.dof - Float64(df)) <= 1e-12 * Float64(df) && dof(s) == s.score_df
        # The same test from the other orientation, sparse, or prepared.
        @test overdispersion_test(permutedims(MITE)).lrt_statistic ≈ t.lrt_statistic rtol = 1e-10
        @test overdispersion_test(sparse(MITE); obsdim = 1).score_statistic ≈ T rtol = 1e-12
        c = DirmnCounts(MITE; obsdim = 1)
        @test overdispersion_test(c; method = :score).statistic ≈ T rtol = 1e-12
        close(c)
    end

    # Mild overdispersion: p-values away from 0 and 1, checked by the tails.
    rng = MersenneTwister(2501)
    p = [0.4, 0.3, 0.2, 0.1]
    Xm = permutedims(hcat([mix_rmultinomial(rng, rand(rng, 30:80),
                                            mix_rdirichlet(rng, 150 .* p)) for _ in 1:40]...))

    @testset "p-values: the boundary null and the scaled χ²" begin
        t = overdispersion_test(Xm; obsdim = 1)
        s = overdispersion_test(Xm; obsdim = 1, method = :score)
        @test t.statistic > 0 && 1e-8 < pvalue(t) < 0.9
        @test abs(pvalue(t) - 0.5 * od_chisq_upper(1, t.statistic)) <= 1e-10 * pvalue(t)
        @test abs(pvalue(s) - od_chisq_upper(s.dof, s.statistic / s.score_scale)) <=
              1e-10 * pvalue(s)
        @test 1e-8 < pvalue(s) < 0.9
        # Frequency weights are repeated rows.
        w = [1 + (i % 3) for i in 1:40]
        R = vcat([repeat(Xm[i:i, :], w[i]) for i in 1:40]...)
        tw = overdispersion_test(Xm; obsdim = 1, weights = Float64.(w))
        tr_ = overdispersion_test(R; obsdim = 1)
        @test isapprox(tw.lrt_statistic, tr_.lrt_statistic; rtol = 1e-7, atol = 1e-6)
        @test tw.score_statistic ≈ tr_.score_statistic rtol = 1e-10
        @test nobs(tw) == sum(w) == nobs(tr_)
        # At the multinomial limit the statistic is 0 and the p-value 1.
        M = repeat([3 2 5], 20)
        m0 = overdispersion_test(M; obsdim = 1)
        @test m0.statistic == 0 && pvalue(m0) == 1 && isinf(m0.precision)
    end

    @testset "empty taxa are left out" begin
        Y = hcat(MITE[:, 1:10], zeros(Int, 70), MITE[:, 11:end], zeros(Int, 70, 2))
        for method in (:lrt, :score)
            a = overdispersion_test(MITE; obsdim = 1, method = method)
            b = overdispersion_test(Y; obsdim = 1, method = method)
            @test b.categories == 35 && all(isfinite, (b.statistic, b.dof, b.pvalue))
            @test b.statistic ≈ a.statistic rtol = 1e-10
            @test b.dof ≈ a.dof rtol = 1e-12
        end
        # An all-zero row is no observation.
        Z = vcat(Xm, zeros(Int, 1, 4))
        @test nobs(overdispersion_test(Z; obsdim = 1)) == 40
        @test overdispersion_test(Z; obsdim = 1, method = :score).statistic ≈
              overdispersion_test(Xm; obsdim = 1, method = :score).statistic rtol = 1e-12
    end

    @testset "size at 5 % under the multinomial" begin
        rng = MersenneTwister(77)
        reps = 400
        lrt_rej = 0
        score_rej = 0
        for _ in 1:reps
            X = od_multinomial(rng, 25, [0.35, 0.3, 0.2, 0.15], 20:60)
            t = overdispersion_test(X; obsdim = 1)
            lrt_rej += t.lrt_p_value < 0.05
            score_rej += t.score_p_value < 0.05
        end
        se = sqrt(0.05 * 0.95 / reps)
        @test abs(lrt_rej / reps - 0.05) <= 3se
        @test abs(score_rej / reps - 0.05) <= 3se
    end

    @testset "display, errors, warnings" begin
        t = overdispersion_test(Xm; obsdim = 1)
        s = sprint(show, MIME("text/plain"), t)
        @test occursin(string(t.statistic), s) && occursin(string(t.pvalue), s) &&
              occursin("½χ²₀ + ½χ²₁", s) && occursin("40 observations", s)
        @test occursin("OverdispersionTest(:lrt, statistic=$(t.statistic)", sprint(show, t))
        u = overdispersion_test(Xm; obsdim = 1, method = :score)
        @test occursin(string(u.score_scale), sprint(show, MIME("text/plain"), u))
        @test caught(() -> overdispersion_test(Xm; method = :wald)) isa ArgumentError
        @test caught(() -> overdispersion_test(Xm; obsdim = 3)) isa ArgumentError
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH overdispersion_test(Xm; obsdim = 1,
                                                                         weights = ones(3))
        w = ones(40)
        w[7] = -1
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER overdispersion_test(Xm; obsdim = 1, weights = w)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT overdispersion_test(zeros(Int, 5, 4))
        @dirmn_error :DIRMN_ERROR_INVALID_COUNTS overdispersion_test([1 -2; 3 4])
        r = @test_logs (:warn, r"overdispersion_test: .* without convergence") overdispersion_test(
            MITE; obsdim = 1, max_iterations = 1)
        @test !r.converged
    end
end
