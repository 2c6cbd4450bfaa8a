# Covariates on the mean/precision model's precision (fit_dirmn_reg's
# precision_design, predict's; dirmn_reg_predict_with_precision):
# α_b = exp(z_b ⋅ γ) softmax(x_b β). Against references written here from
# the model, never against the library itself:
# - the log-likelihood at the fitted (β, γ) from reference.jl's BigFloat DM
#   log pmf;
# - stationarity and the standard errors (and the covariance's order: the
#   free β, then γ) from central differences of the same log pmf in
#   Float64 (regression.jl's difference helpers);
# - the model's invariances: an intercept-only z is the fit without one, a
#   reparametrised z ([1 g] against [1-g g]) the same optimum with γ mapped
#   by hand, integer weights replicated rows;
# - prediction against exp(z ⋅ γ) softmax(x β) computed here, simulation
#   against the DM's variance at each row's own precision.
# Uses regression.jl's and mixture.jl's helpers, errors.jl's.

# Two groups of rows with precisions about 8 and 48, an intercept and a
# normal covariate on the mean, 4 categories, 60 to 120 counts per row.
const PD_RNG = MersenneTwister(2931)
const PD_N, PD_P, PD_V, PD_Q = 120, 2, 4, 2
const PD_BETA = [0.0 0.5 -0.2 0.3; 0.0 -0.4 0.3 0.6]
const PD_GAMMA = [log(8.0), log(48.0) - log(8.0)]
const PD_G = Float64[isodd(b) ? 1.0 : 0.0 for b in 1:PD_N]
const PD_X = hcat(ones(PD_N), randn(PD_RNG, PD_N))
const PD_Z = hcat(ones(PD_N), PD_G)

# exp(z ⋅ γ) softmax(x β): one row's α.
pd_alpha(x, z, B, γ) = exp(dot(z, γ)) .* mp_softmax(vec(permutedims(x) * B))

const PD_Y = let Y = zeros(Int, PD_N, PD_V)
    for b in 1:PD_N
        a = pd_alpha(PD_X[b, :], PD_Z[b, :], PD_BETA, PD_GAMMA)
        Y[b, :] = mix_rmultinomial(PD_RNG, rand(PD_RNG, 60:120), mix_rdirichlet(PD_RNG, a))
    end
    Y
end

# The reference log pmf (BigFloat) of the rows of Y at β, γ, each row weighted.
function pd_ref_loglik(Y, X, Z, B, γ; weights = ones(size(Y, 1)))
    s = 0.0
    for b in 1:size(Y, 1)
        weights[b] == 0 && continue
        η = vec(X[b:b, :] * B)
        m = maximum(η)
        la = dot(Z[b, :], γ) .+ η .- (m + log(sum(exp.(η .- m))))
        s += weights[b] * ref_loglik(Y[b, :], la; logalpha = true)
    end
    return s
end

# The free coefficients of a fit in vcov's order: β without the reference
# category's column (category 1 here), then γ.
pd_theta(f) = [vec(coef(f)[:, 2:end]); f.log_precision]
pd_se(f) = [vec(stderror(f)[:, 2:end]); f.std_error_log_precision]

# The Float64 kernel (the multinomial coefficients left out, a constant) as
# a function of the free coefficients, for central differences.
function pd_kernel(Y, X, Z, θ)
    n, V = size(Y)
    p, q = size(X, 2), size(Z, 2)
    B = hcat(zeros(p), reshape(θ[1:(p * (V - 1))], p, V - 1))
    γ = θ[(p * (V - 1) + 1):end]
    ll = 0.0
    for b in 1:n
        a = pd_alpha(X[b, :], Z[b, :], B, γ)
        ll -= reg_lpoch(sum(a), sum(Y[b, :]))
        for v in 1:V
            ll += reg_lpoch(a[v], Y[b, v])
        end
    end
    return ll
end

pd_fit(Y, X, Z; kw...) = fit_dirmn_reg(Y, X; parametrization = :meanprecision,
                                       precision_design = Z, tolerance = 1e-14, kw...)

@testset "regression: covariates on the precision" begin
    f = pd_fit(PD_Y, PD_X, PD_Z)
    B, γ = coef(f), f.log_precision
    θ = pd_theta(f)
    k = PD_P * (PD_V - 1) + PD_Q

    @testset "the fit, its fields and the reference log pmf" begin
        @test converged(f) && hessian_definite(f)
        @test γ isa Vector{Float64} && length(γ) == PD_Q
        @test f.std_error_log_precision isa Vector{Float64} &&
              length(f.std_error_log_precision) == PD_Q && all(f.std_error_log_precision .> 0)
        # The rows' precisions differ: there is no one φ.
        @test f.precision === nothing
        @test f.precision_design == PD_Z && f.precision_design !== PD_Z
        @test dof(f) == f.parameters == k == length(θ) && size(vcov(f)) == (k, k)
        @test nobs(f) == PD_N && all(B[:, 1] .== 0)
        ref = pd_ref_loglik(PD_Y, PD_X, PD_Z, B, γ)
        @test abs(loglikelihood(f) - ref) <= 1e-10 * abs(ref)
        @test abs(aic(f) - (-2ref + 2k)) <= 1e-10 * abs(ref)
        @test abs(bic(f) - (-2ref + k * log(PD_N))) <= 1e-10 * abs(ref)
        # The Float64 kernel of the differences is the same function.
        @test abs(pd_kernel(PD_Y, PD_X, PD_Z, θ) + reg_logcoef(PD_Y) - ref) <= 1e-10 * abs(ref)
        # The simulation's precisions, roughly: 8 and 48 told apart.
        @test all(abs.(γ .- PD_GAMMA) .< 4 .* f.std_error_log_precision)
        @test γ[2] / f.std_error_log_precision[2] > 4
        # Without a design the log precision stays one number.
        f0 = fit_dirmn_reg(PD_Y, PD_X; parametrization = :meanprecision)
        @test f0.log_precision isa Float64 && f0.std_error_log_precision isa Float64
        @test f0.precision_design === nothing && f0.precision == exp(f0.log_precision)
        @test dof(f0) == k - 1
        close(f0)
    end

    @testset "stationary, with the finite-difference Hessian's standard errors" begin
        ll = t -> pd_kernel(PD_Y, PD_X, PD_Z, t)
        g = reg_fd_gradient(ll, θ, 1e-3)
        @test maximum(abs.(g)) <= 1e-6 * abs(loglikelihood(f))
        H = reg_fd_hessian(ll, θ, 1e-4)
        @test isposdef(Symmetric(-H))
        C = inv(-H)
        se = pd_se(f)
        @test maximum(abs.(sqrt.(diag(C)) ./ se .- 1)) <= 1e-3
        # The covariance in the documented order, γ last.
        @test reg_rel(vcov(f), C) <= 1e-3
        @test sqrt.(diag(vcov(f))) ≈ se rtol = 1e-12
        # ... and a maximum: moving any free coefficient by 0.1 SE lowers it.
        for j in eachindex(θ), d in (-0.1, 0.1)
            t = copy(θ); t[j] += d * se[j]
            @test ll(t) < ll(θ)
        end
        # The Wald test of the mean's covariate, over its V - 1 free coefficients.
        idx = [(v - 1) * PD_P + 2 for v in 1:(PD_V - 1)]
        t = wald_test(f, 2)
        @test t.dof == PD_V - 1
        @test abs(t.statistic - dot(θ[idx], C[idx, idx] \ θ[idx])) <= 1e-3 * t.statistic
    end

    @testset "an intercept-only design is the fit without one" begin
        f1 = pd_fit(PD_Y, PD_X, ones(PD_N, 1))
        f0 = fit_dirmn_reg(PD_Y, PD_X; parametrization = :meanprecision, tolerance = 1e-14)
        @test abs(loglikelihood(f1) - loglikelihood(f0)) <= 1e-10 * abs(loglikelihood(f0))
        @test maximum(abs.(coef(f1) .- coef(f0))) <= 1e-7
        @test f1.log_precision isa Vector && length(f1.log_precision) == 1
        @test abs(f1.log_precision[1] - f0.log_precision) <= 1e-7
        @test abs(f1.std_error_log_precision[1] / f0.std_error_log_precision - 1) <= 1e-6
        @test dof(f1) == dof(f0) && f1.precision === nothing
        @test reg_rel(vcov(f1), vcov(f0)) <= 1e-6
        @test reg_rel(predict(f1, PD_X; precision_design = ones(PD_N, 1)),
                      predict(f0, PD_X)) <= 1e-7
        close(f1); close(f0)
    end

    @testset "[1 g] and [1-g g] are one model" begin
        f2 = pd_fit(PD_Y, PD_X, hcat(1 .- PD_G, PD_G))
        @test abs(loglikelihood(f2) - loglikelihood(f)) <= 1e-10 * abs(loglikelihood(f))
        @test maximum(abs.(coef(f2) .- B)) <= 1e-7
        # log φ is γ₁ in group 0 and γ₁ + γ₂ in group 1 under [1 g]; γ'₁ and
        # γ'₂ under [1-g g].
        γ2 = f2.log_precision
        @test abs(γ2[1] - γ[1]) <= 1e-7 && abs(γ2[2] - (γ[1] + γ[2])) <= 1e-7
        # Var(γ₁ + γ₂) from the first fit's covariance.
        C = vcov(f)
        v12 = C[k - 1, k - 1] + C[k, k] + 2 * C[k - 1, k]
        @test abs(f2.std_error_log_precision[2] / sqrt(v12) - 1) <= 1e-5
        @test abs(f2.std_error_log_precision[1] / f.std_error_log_precision[1] - 1) <= 1e-5
        close(f2)
    end

    @testset "the design as any real matrix" begin
        for Z in (Int.(PD_Z), permutedims(PD_Z)', view(hcat(PD_Z, zeros(PD_N)), :, 1:2))
            r = pd_fit(PD_Y, PD_X, Z)
            @test coef(r) == B && r.log_precision == γ
            close(r)
        end
    end

    @testset "integer weights are replicated rows" begin
        w = [(b * 7) % 4 for b in 1:PD_N]               # 0 .. 3, some rows left out
        idx = vcat([fill(b, w[b]) for b in 1:PD_N]...)
        fw = pd_fit(PD_Y, PD_X, PD_Z; weights = w)
        fr = pd_fit(PD_Y[idx, :], PD_X[idx, :], PD_Z[idx, :])
        @test maximum(abs.(coef(fw) .- coef(fr))) <= 1e-8
        @test maximum(abs.(fw.log_precision .- fr.log_precision)) <= 1e-8
        @test abs(loglikelihood(fw) - loglikelihood(fr)) <= 1e-10 * abs(loglikelihood(fr))
        @test reg_rel(pd_se(fw), pd_se(fr)) <= 1e-7
        @test nobs(fw) == nobs(fr) == sum(w)
        ref = pd_ref_loglik(PD_Y, PD_X, PD_Z, coef(fw), fw.log_precision; weights = w)
        @test abs(loglikelihood(fw) - ref) <= 1e-10 * abs(ref)
        close(fw); close(fr)
    end

    @testset "predict" begin
        Xnew = [1.0 0.5; 1.0 -2.0; 1.0 0.0]
        Znew = [1.0 0.0; 1.0 1.0; 1.0 0.3]
        want = vcat([permutedims(pd_alpha(Xnew[b, :], Znew[b, :], B, γ)) for b in 1:3]...)
        A = predict(f, Xnew; precision_design = Znew)
        @test size(A) == (3, PD_V) && reg_rel(A, want) <= 1e-12
        @test maximum(abs.(sum(A; dims = 2) .- exp.(Znew * γ))) <= 1e-12 * maximum(exp.(Znew * γ))
        @test reg_rel(predict(f, Xnew; precision_design = Znew, type = :proportion),
                      want ./ sum(want; dims = 2)) <= 1e-12
        @test predict(f, Xnew; precision_design = permutedims(Znew)') == A
        @test predict(f, Xnew[1:2, :]; precision_design = Int.(Znew[1:2, :])) == A[1:2, :]
        @test size(predict(f, zeros(0, 2); precision_design = zeros(0, 2))) == (0, PD_V)
        # The training rows: each sums to its own precision.
        At = predict(f, PD_X; precision_design = PD_Z)
        @test maximum(abs.(vec(sum(At; dims = 2)) .- exp.(PD_Z * γ))) <= 1e-12 * exp(sum(γ))
    end

    @testset "simulate draws each row at its own precision" begin
        # Each row's count of a category over many tables: its DM variance
        # N p (1 - p) (N + φ_b) / (1 + φ_b) is some 4 times larger at φ ≈ 8
        # than at φ ≈ 48, so the standardised squares average 1 in both
        # groups only with each row's own φ_b.
        S = simulate(f; nsim = 200, seed = 17)
        @test all(T -> size(T) == (PD_N, PD_V) && vec(sum(T; dims = 2)) == f.totals, S)
        @test f.totals == vec(sum(PD_Y; dims = 2))
        for grp in (0.0, 1.0)
            r2 = Float64[]
            for b in findall(==(grp), PD_G), v in 1:PD_V
                a = pd_alpha(PD_X[b, :], PD_Z[b, :], B, γ)
                φ, pv, N = sum(a), a[v] / sum(a), f.totals[b]
                m, var = N * pv, N * pv * (1 - pv) * (N + φ) / (1 + φ)
                append!(r2, [(T[b, v] - m)^2 / var for T in S])
            end
            @test abs(sum(r2) / length(r2) - 1) <= 0.1
        end
        @test simulate(f; nsim = 1, seed = 17)[1] == S[1]
    end

    @testset "errors" begin
        # Only the mean/precision model has a precision.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(PD_Y, PD_X;
                                                                     precision_design = PD_Z)
        @test occursin("precision_design is given to a log-linear fit", msg(e))
        # A non-finite entry names its row and column, 1-based.
        for bad in (NaN, -Inf)
            Zb = copy(PD_Z)
            Zb[7, 2] = bad
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER pd_fit(PD_Y, PD_X, Zb)
            @test occursin("[precision_design[7, 2] = $bad in Julia: row 7, precision covariate 2]",
                           msg(e))
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER predict(
                f, PD_X[5:8, :]; precision_design = Zb[5:8, :])
            @test occursin("[precision_design[3, 2] = $bad in Julia: row 3, precision covariate 2]",
                           msg(e))
        end
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER pd_fit(PD_Y[1:2, :], PD_X[1:2, :],
                                                               Any[1.0 missing; 1.0 0.0])
        @test occursin("precision_design[1, 2] is missing", msg(e))
        # Not of full column rank: column 3 is column 1 minus column 2.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT pd_fit(PD_Y, PD_X,
                                                              hcat(PD_Z, 1 .- PD_G))
        @test occursin("not of full column rank", msg(e))
        @test occursin("[precision_design[:, 3] in Julia: precision covariate 3]", msg(e))
        # ... over the rows with counts: group 1 left out by its weights
        # leaves [1 g] constant.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT pd_fit(PD_Y, PD_X, PD_Z;
                                                              weights = 1 .- PD_G)
        @test occursin("precision covariate 2]", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT pd_fit(PD_Y, PD_X, zeros(PD_N, 0))
        @test occursin("precision_design has no columns", msg(e))
        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH pd_fit(PD_Y, PD_X, PD_Z[2:end, :])
        @test occursin("precision_design has 119 rows; X has 120", msg(e))
        # Prediction needs the new rows' design exactly where the fit had one.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT predict(f, PD_X[1:2, :])
        @test occursin("predict(f, Xnew; precision_design = Znew)", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT predict(f, PD_X[1:2, :];
                                                               precision_design = ones(2, 3))
        @test occursin("precision_design has 3 columns; the fit's has 2", msg(e))
        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH predict(f, PD_X[1:2, :];
                                                                 precision_design = PD_Z[1:3, :])
        @test occursin("precision_design has 3 rows; Xnew has 2", msg(e))
        f0 = fit_dirmn_reg(PD_Y, PD_X; parametrization = :meanprecision)
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT predict(f0, PD_X[1:2, :];
                                                               precision_design = ones(2, 1))
        @test occursin("the fit has no precision_design", msg(e))
        close(f0)
        l = fit_dirmn_reg(PD_Y, PD_X)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT predict(l, PD_X[1:2, :];
                                                           precision_design = ones(2, 1))
        close(l)
    end

    @testset "display" begin
        t = sprint(show, MIME("text/plain"), f)
        for x in (γ[1], γ[2], f.std_error_log_precision[2], B[2, 3])
            @test (x, occursin(string(x), t)) == (x, true)
        end
        @test occursin("exp(z_b ⋅ gamma)", t) && occursin("2 precision covariates", t)
        # The header lines, the coefficients' table, then γ's.
        @test length(split(t, '\n')) == 5 + 2 + 1 + PD_P * (PD_V - 1) + 1 + PD_Q
        @test occursin("q=2", sprint(show, f))
    end

    @testset "a closed fit keeps its values" begin
        close(f)
        @test f.log_precision == γ && f.precision_design == PD_Z
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER predict(f, PD_X; precision_design = PD_Z)
        @test occursin("DirmnRegression was closed", msg(e))
    end

    @testset "a table without overdispersion is the multinomial limit" begin
        # Each row's shares rounded: less spread than any multinomial, so the
        # likelihood rises toward φ → ∞ and no finite γ is the MLE.
        rng = MersenneTwister(2932)
        n = 150
        X = hcat(ones(n), randn(rng, n))
        Y = zeros(Int, n, 3)
        for b in 1:n
            e = exp.([0.0, 0.4 * X[b, 2], 0.2 - 0.3 * X[b, 2]])
            c2, c3 = round(Int, 90 * e[2] / sum(e)), round(Int, 90 * e[3] / sum(e))
            Y[b, :] = [90 - c2 - c3, c2, c3]
        end
        g = @test_logs (:warn, r"no overdispersion") fit_dirmn_reg(Y, X; parametrization = :meanprecision)
        @test g.multinomial_limit && !converged(g)
        # Its log-likelihood is the multinomial's at its proportions (BigFloat).
        ref = sum(1:n) do b
            π = mp_softmax(vec(permutedims(X[b, :]) * coef(g)))
            Float64(log(factorial(big(sum(Y[b, :])))) +
                    sum(big(Y[b, v]) * log(big(π[v])) - log(factorial(big(Y[b, v]))) for v in 1:3))
        end
        @test abs(loglikelihood(g) - ref) < 1e-4
        @test !f.multinomial_limit
        close(g)
    end
end
