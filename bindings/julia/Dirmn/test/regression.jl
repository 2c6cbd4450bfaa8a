# Dirichlet-multinomial regression (fit_dirmn_reg, issue #29) against
# references computed here, never against the library itself:
# - the log-likelihood at the fitted coefficients from reference.jl's
#   BigFloat DM log pmf, row by row at log α = x_b ⋅ β;
# - stationarity and the standard errors from central differences of the
#   same log pmf written in Float64 (the kernel: the multinomial
#   coefficients are a constant of β; the two are tied together below):
#   the gradient in vec(β) vanishes, and sqrt(diag(inv(-H))) of the
#   central-difference Hessian is the standard errors, inv(-H) the
#   covariance, in vec(β)'s order;
# - integer weights against replicated rows; prediction against exp.(X β);
#   the Wald statistic against b' S⁻¹ b from the covariance and its p-value
#   against overdispersion.jl's BigFloat χ² tail.
# Uses mixture.jl's samplers, errors.jl's helpers.

# A simulated problem: 60 rows, an intercept and two normal covariates,
# 4 categories, totals 20..40, rows drawn from the DM at α_b = exp(x_b ⋅ β).
const REG_RNG = MersenneTwister(29)
const REG_N, REG_P, REG_V = 60, 3, 4
const REG_BETA = [0.8 1.2 0.3 0.6; 0.5 -0.4 0.2 0.0; -0.3 0.4 0.6 -0.5]
const REG_X = hcat(ones(REG_N), randn(REG_RNG, REG_N), randn(REG_RNG, REG_N))
const REG_Y = let Y = zeros(Int, REG_N, REG_V)
    for b in 1:REG_N
        a = exp.(vec(REG_X[b:b, :] * REG_BETA))
        Y[b, :] = mix_rmultinomial(REG_RNG, rand(REG_RNG, 20:40), mix_rdirichlet(REG_RNG, a))
    end
    Y
end

# The reference log pmf of the rows of Y (rows × V) at β (p × V), each row
# weighted: reference.jl's BigFloat DM log pmf at log α = X[b, :] ⋅ β.
function reg_ref_loglik(Y, X, B; weights = ones(size(Y, 1)))
    s = 0.0
    for b in 1:size(Y, 1)
        weights[b] == 0 && continue
        la = [sum(X[b, i] * B[i, v] for i in 1:size(X, 2)) for v in 1:size(Y, 2)]
        s += weights[b] * ref_loglik(Y[b, :], la; logalpha = true)
    end
    return s
end

# log Γ(a + n) - log Γ(a) = Σ_{k<n} log(a + k), in Float64.
function reg_lpoch(a::Float64, n::Integer)
    s = 0.0
    for k in 0:(n - 1)
        s += log(a + k)
    end
    return s
end

# The same log pmf in Float64 without the multinomial coefficients, as a
# function of θ = vec(β) (covariate fastest), for the central differences.
function reg_kernel(Y, X, θ::AbstractVector)
    n, V = size(Y)
    p = size(X, 2)
    B = reshape(θ, p, V)
    ll = 0.0
    for b in 1:n
        a = [exp(sum(X[b, i] * B[i, v] for i in 1:p)) for v in 1:V]
        ll -= reg_lpoch(sum(a), sum(Y[b, :]))
        for v in 1:V
            ll += reg_lpoch(a[v], Y[b, v])
        end
    end
    return ll
end

# The multinomial coefficients' part, log N_b! - Σ_v log y_bv!, in BigFloat.
reg_logcoef(Y) = Float64(sum(lpoch_int(BigFloat(1), sum(Y[b, :])) -
                             sum(lpoch_int(BigFloat(1), y) for y in Y[b, :])
                             for b in 1:size(Y, 1)))

# Central differences, Richardson-extrapolated from steps h and h/2 (error
# O(h⁴) plus rounding).
function reg_fd_gradient(f, θ, h)
    d(h, i) = (e = zeros(length(θ)); e[i] = h; (f(θ + e) - f(θ - e)) / 2h)
    return [(4 * d(h / 2, i) - d(h, i)) / 3 for i in eachindex(θ)]
end

function reg_fd_hessian(f, θ, h)
    k = length(θ)
    H = zeros(k, k)
    fc = f(θ)
    unit(i) = (e = zeros(k); e[i] = h; e)
    for i in 1:k
        ei = unit(i)
        H[i, i] = (f(θ + 2ei) - 2 * fc + f(θ - 2ei)) / (4h^2)
        for j in (i + 1):k
            ej = unit(j)
            H[i, j] = H[j, i] =
                (f(θ + ei + ej) - f(θ + ei - ej) - f(θ - ei + ej) + f(θ - ei - ej)) / (4h^2)
        end
    end
    return H
end

# Largest |got - want| relative to the largest |want|.
reg_rel(got, want) = size(got) == size(want) && all(isfinite, got) ?
    maximum(abs.(got .- want)) / maximum(abs.(want)) : Inf

@testset "regression" begin
    f = fit_dirmn_reg(REG_Y, REG_X)
    B = coef(f)
    θ = vec(B)

    @testset "the fit against the reference log pmf" begin
        @test f isa DirmnRegression && converged(f) && hessian_definite(f)
        @test size(B) == (REG_P, REG_V) && size(stderror(f)) == (REG_P, REG_V)
        @test size(vcov(f)) == (REG_P * REG_V, REG_P * REG_V)
        @test f.rows == REG_N && f.covariates == REG_P && ncategories(f) == REG_V
        @test dof(f) == REG_P * REG_V && nobs(f) == REG_N
        @test iterations(f) == f.iterations >= 1 && gradient_norm(f) == f.gradient_norm
        ref = reg_ref_loglik(REG_Y, REG_X, B)
        @test abs(loglikelihood(f) - ref) <= 1e-10 * abs(ref)
        @test abs(aic(f) - (-2ref + 2 * 12)) <= 1e-10 * abs(ref)
        @test abs(bic(f) - (-2ref + 12 * log(60))) <= 1e-10 * abs(ref)
        # The Float64 kernel used for the differences is the same function.
        @test abs(reg_kernel(REG_Y, REG_X, θ) + reg_logcoef(REG_Y) - ref) <= 1e-10 * abs(ref)
        # The coefficients recover the simulation's roughly (60 rows).
        @test maximum(abs.(B .- REG_BETA) ./ stderror(f)) < 4

        ll = t -> reg_kernel(REG_Y, REG_X, t)
        H = reg_fd_hessian(ll, θ, 1e-4)
        se = vec(stderror(f))
        # Stationary. The fit stops when the predicted gain of a Newton step,
        # g' (-H)⁻¹ g / 2, is below tolerance × |loglik| (1e-10 by default):
        # so it is by the central-difference gradient and Hessian, the step
        # left is below a thousandth of a standard error, and the gradient's
        # max-norm is the one reported.
        g = reg_fd_gradient(ll, θ, 1e-3)
        @test dot(g, -H \ g) / 2 <= 1e-10 * abs(loglikelihood(f))
        @test maximum(abs.((H \ g) ./ se)) <= 1e-3
        @test abs(gradient_norm(f) - maximum(abs.(g))) <= 1e-3 * gradient_norm(f) + 1e-7
        # With a tolerance at rounding level the gradient vanishes against
        # the curvature's scale (a step of one standard error changes it by
        # about sqrt(-H_kk)).
        ft = fit_dirmn_reg(REG_Y, REG_X; tolerance = 1e-15)
        gt = reg_fd_gradient(ll, vec(coef(ft)), 1e-3)
        @test maximum(abs.(gt)) <= 1e-6 * maximum(sqrt.(-diag(H)))
        @test reg_rel(coef(ft), B) <= 1e-4
        close(ft)
        # ... and a maximum: moving any coefficient by 0.1 SE lowers it.
        for k in eachindex(θ), d in (-0.1, 0.1)
            t = copy(θ); t[k] += d * se[k]
            @test ll(t) < ll(θ)
        end
        # Standard errors and covariance from the central-difference Hessian.
        @test isposdef(Symmetric(-H))
        C = inv(-H)
        @test maximum(abs.(sqrt.(diag(C)) ./ se .- 1)) <= 1e-4
        @test reg_rel(vcov(f), C) <= 1e-4
        @test vcov(f) == f.covariance && vcov(f) !== f.covariance && issymmetric(vcov(f))
        @test sqrt.(diag(vcov(f))) ≈ vec(stderror(f)) rtol = 1e-14
        @test coef(f) == f.coefficients && coef(f) !== f.coefficients
        # Wald intervals in vec(β)'s order.
        ci = confint(f)
        z = 1.959963984540054
        @test size(ci) == (12, 2)
        @test reg_rel(ci[:, 1], θ .- z .* se) <= 1e-13 && reg_rel(ci[:, 2], θ .+ z .* se) <= 1e-13
    end

    @testset "the same fit from other inputs" begin
        for (Y, kw) in ((Int32.(REG_Y), ()), (Float64.(REG_Y), ()), (sparse(REG_Y), ()),
                        (permutedims(REG_Y), (obsdim = 2,)), (DirmnCounts(REG_Y; obsdim = 1), ()),
                        (DirmnCounts(permutedims(REG_Y)), ()))
            r = fit_dirmn_reg(Y, REG_X; kw...)
            @test reg_rel(coef(r), B) <= 1e-10
            @test abs(loglikelihood(r) - loglikelihood(f)) <= 1e-10 * abs(loglikelihood(f))
            Y isa DirmnCounts && close(Y)
            close(r)
        end
        # The design as integers, as a transpose, as a view.
        Xi = hcat(ones(Int, 60), rand(MersenneTwister(3), -3:3, 60))
        r1 = fit_dirmn_reg(REG_Y, Xi)
        r2 = fit_dirmn_reg(REG_Y, permutedims(Float64.(Xi))')
        r3 = fit_dirmn_reg(REG_Y, view(hcat(Float64.(Xi), zeros(60)), :, 1:2))
        @test coef(r2) == coef(r1) && coef(r3) == coef(r1)
        @test reg_rel(loglikelihood(r1), reg_ref_loglik(REG_Y, Xi, coef(r1))) <= 1e-10
    end

    @testset "integer weights are replicated rows" begin
        w = [(b * 7) % 4 for b in 1:REG_N]            # 0 .. 3, some rows left out
        idx = vcat([fill(b, w[b]) for b in 1:REG_N]...)
        fw = fit_dirmn_reg(REG_Y, REG_X; weights = w)
        fr = fit_dirmn_reg(REG_Y[idx, :], REG_X[idx, :])
        @test reg_rel(coef(fw), coef(fr)) <= 1e-8
        @test abs(loglikelihood(fw) - loglikelihood(fr)) <= 1e-8 * abs(loglikelihood(fr))
        @test reg_rel(stderror(fw), stderror(fr)) <= 1e-8
        @test nobs(fw) == nobs(fr) == sum(w)
        @test abs(bic(fw) - bic(fr)) <= 1e-8 * abs(bic(fr))
        ref = reg_ref_loglik(REG_Y, REG_X, coef(fw); weights = w)
        @test abs(loglikelihood(fw) - ref) <= 1e-10 * abs(ref)
        # Fractional weights are frequencies too: halving all of them halves
        # the log-likelihood and leaves the coefficients.
        fh = fit_dirmn_reg(REG_Y, REG_X; weights = w ./ 2)
        @test reg_rel(coef(fh), coef(fw)) <= 1e-8
        @test abs(2 * loglikelihood(fh) - loglikelihood(fw)) <= 1e-10 * abs(loglikelihood(fw))
    end

    @testset "predict and wald_test" begin
        A = predict(f, REG_X)
        @test size(A) == (REG_N, REG_V)
        @test reg_rel(A, exp.(REG_X * B)) <= 1e-13
        P = predict(f, REG_X; type = :proportion)
        @test maximum(abs.(sum(P; dims = 2) .- 1)) <= 1e-14
        @test reg_rel(P, A ./ sum(A; dims = 2)) <= 1e-14
        Xnew = [1.0 0.5 -1.0; 1.0 -2.0 0.25]
        @test reg_rel(predict(f, Xnew), exp.(Xnew * B)) <= 1e-13
        @test reg_rel(predict(f, permutedims(Xnew)'), exp.(Xnew * B)) <= 1e-13
        @test size(predict(f, zeros(0, 3))) == (0, REG_V)
        @test caught(() -> predict(f, Xnew; type = :link)) isa ArgumentError

        C = vcov(f)
        for i in 1:REG_P
            t = wald_test(f, i)
            idx = [(v - 1) * REG_P + i for v in 1:REG_V]
            b = B[i, :]
            stat = dot(b, C[idx, idx] \ b)
            @test t isa WaldTest && t.covariate == i
            @test abs(t.statistic - stat) <= 1e-8 * stat
            @test dof(t) == REG_V == t.dof
            want = od_chisq_upper(REG_V, t.statistic)
            @test abs(pvalue(t) - want) <= 1e-9 * want + 1e-300
        end
        # The covariates matter (the simulation's effects are strong).
        @test all(t -> pvalue(t) < 1e-3, wald_test(f))
        @test [t.statistic for t in wald_test(f)] == [wald_test(f, i).statistic for i in 1:3]
        for bad in (0, 4)
            e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT wald_test(f, bad)
            @test occursin("covariate $bad is outside 1:3", msg(e))
        end
        # A covariate without effect: a large p-value, typically.
        Xn = hcat(REG_X, randn(MersenneTwister(5), REG_N))
        fn = fit_dirmn_reg(REG_Y, Xn)
        tn = wald_test(fn, 4)
        @test tn.pvalue > 0.01 && tn.dof == 4
        @test abs(tn.pvalue - od_chisq_upper(4, tn.statistic)) <= 1e-12
        close(fn)
    end

    @testset "errors" begin
        # A design that is not of full column rank: column 4 repeats column 2.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(REG_Y, hcat(REG_X, REG_X[:, 2]))
        @test occursin("full column rank", msg(e))
        @test occursin("X[:, 4] in Julia: covariate 4", msg(e))
        # ... or a combination of the ones before it.
        Xc = hcat(REG_X[:, 1:2], 2 .* REG_X[:, 2] .- 3, REG_X[:, 3])
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(REG_Y, Xc)
        @test occursin("covariate 3]", msg(e))
        # A non-finite covariate names its row and column.
        for bad in (NaN, Inf)
            Xb = copy(REG_X)
            Xb[5, 2] = bad
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn_reg(REG_Y, Xb)
            @test occursin("X[5, 2] = $bad in Julia: row 5, covariate 2", msg(e))
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER predict(f, Xb[4:6, :])
            @test occursin("Xnew[2, 2] = $bad in Julia: row 2, covariate 2", msg(e))
        end
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn_reg(REG_Y, Any[1.0 missing; 1.0 2.0])
        @test occursin("X[1, 2] is missing", msg(e))
        # Rows of X other than Y's.
        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH fit_dirmn_reg(REG_Y, REG_X[1:59, :])
        @test occursin("59", msg(e)) && occursin("60", msg(e))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH fit_dirmn_reg(REG_Y, REG_X; weights = ones(59))
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn_reg(REG_Y, REG_X;
                                                                      weights = [-1.0; ones(59)])
        @test occursin("weights[1] in Julia", msg(e))
        # A category without counts has no finite coefficients.
        Yz = hcat(REG_Y[:, 1:2], zeros(Int, REG_N), REG_Y[:, 3:4])
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(Yz, REG_X)
        @test occursin("Y[:, 3] in Julia: category 3", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(permutedims(Yz), REG_X; obsdim = 2)
        @test occursin("Y[3, :] in Julia: category 3", msg(e))
        # No covariate; more covariates than rows with counts (751 × 4
        # coefficients on 60 rows: solved in the rows' dimension, so not too
        # large, but without a maximum).
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(REG_Y, zeros(REG_N, 0))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(REG_Y, randn(MersenneTwister(1), REG_N, 751))
        @test occursin("751 covariates need at least as many rows with counts", msg(e))
        @test !occursin("DIRMN_REG_MAX_SYSTEM", msg(e))
        # A Newton system beyond the library's DIRMN_REG_MAX_SYSTEM unknowns:
        # 8001 coefficients (an intercept, 8001 categories) and 8001 rows
        # with counts, one count per row on the diagonal; refused at once.
        @test Dirmn.LibDirmn.DIRMN_REG_MAX_SYSTEM == 8000
        nbig = Dirmn.LibDirmn.DIRMN_REG_MAX_SYSTEM + 1
        Ybig = sparse(1:nbig, 1:nbig, ones(Int, nbig))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn_reg(Ybig, ones(nbig, 1))
        @test occursin("8001 coefficients and 8001 rows with counts", msg(e))
        @test occursin("DIRMN_REG_MAX_SYSTEM", msg(e))
        # predict with another number of covariates.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT predict(f, REG_X[:, 1:2])
        @test caught(() -> fit_dirmn_reg(REG_Y, REG_X; obsdim = 3)) isa ArgumentError
    end

    @testset "a wide fit keeps no covariance" begin
        # 40 rows × 2600 categories × 2 covariates = 5200 coefficients,
        # above REG_VCOV_MAX_COEFFICIENTS: solved in the rows' dimension
        # (Woodbury); standard errors and Wald tests from the library, no
        # covariance matrix.
        @test Dirmn.REG_VCOV_MAX_COEFFICIENTS == 5000
        rng = MersenneTwister(7)
        n, nv = 40, 2600
        Xw = hcat(ones(n), randn(rng, n))
        Bw = 0.3 .* randn(rng, 2, nv)
        Yw = zeros(Int, n, nv)
        for b in 1:n
            Yw[b, :] = mix_rmultinomial(rng, 3 * nv, mix_rdirichlet(rng, exp.(vec(Xw[b:b, :] * Bw))))
        end
        @test minimum(sum(Yw; dims = 1)) > 0
        w = fit_dirmn_reg(Yw, Xw)
        @test converged(w) && hessian_definite(w)
        @test size(coef(w)) == size(stderror(w)) == (2, nv) && dof(w) == 2 * nv
        @test w.covariance === nothing
        se = stderror(w)
        @test all(isfinite, se) && all(se .> 0)
        # The simulated coefficients, to within a few standard errors.
        @test sum(abs.(coef(w) .- Bw) ./ se) / length(se) < 2
        for t in wald_test(w)
            @test t.dof == nv && t.statistic > 0 && 0 <= pvalue(t) <= 1
        end
        e = @dirmn_error :DIRMN_ERROR_NOT_SUPPORTED vcov(w)
        @test occursin("the covariance of the 5200 coefficients is not kept above 5000 coefficients",
                       msg(e))
        @test occursin("standard errors", msg(e)) && occursin("wald_test", msg(e))
        ci = confint(w)
        @test size(ci) == (2 * nv, 2) && ci[:, 2] .- ci[:, 1] ≈ 2 * 1.959963984540054 .* vec(se)
        @test length(split(sprint(show, MIME("text/plain"), w), '\n')) == 5 + 1 + 40 + 1
        @test size(predict(w, Xw[1:3, :])) == (3, nv)
        close(w)
        # At 5000 coefficients the matrix is kept, its diagonal the standard errors.
        w5 = fit_dirmn_reg(Yw[:, 1:2500], Xw)
        @test dof(w5) == Dirmn.REG_VCOV_MAX_COEFFICIENTS && size(vcov(w5)) == (5000, 5000)
        @test sqrt.(diag(vcov(w5))) ≈ vec(stderror(w5)) rtol = 1e-12
        close(w5)
    end

    @testset "progress, max_iterations, display" begin
        calls = Tuple{Int,Float64,Float64}[]
        r = fit_dirmn_reg(REG_Y, REG_X; progress = (i, ll, g) -> push!(calls, (i, ll, g)))
        @test coef(r) == B
        # Once after each Newton step, counted from 1, with the log pmf (not
        # decreasing) and the gradient's max-norm. (The library's last
        # step, taken once the tolerance is met, may go unreported: its
        # gain is within the tolerance.)
        k = length(calls)
        @test k >= 1 && [c[1] for c in calls] == 1:k && iterations(r) - 1 <= k <= iterations(r)
        @test issorted([c[2] for c in calls]) && calls[end][2] <= loglikelihood(r)
        @test loglikelihood(r) - calls[end][2] <= 1e-10 * abs(loglikelihood(r))
        @test abs(calls[1][2]) > abs(loglikelihood(r))
        @test all(c -> isfinite(c[3]) && c[3] >= 0, calls)
        k == iterations(r) && @test calls[end][3] == gradient_norm(r)
        n = Ref(0)
        @dirmn_error :DIRMN_ERROR_CANCELLED fit_dirmn_reg(REG_Y, REG_X;
                                                         progress = (i, ll, g) -> (n[] += 1; n[] >= 2))
        @test n[] == 2
        e = caught(() -> fit_dirmn_reg(REG_Y, REG_X; progress = (i, ll, g) -> error("stop here")))
        @test e isa ErrorException && e.msg == "stop here"
        r1 = @test_logs (:warn, r"fit_dirmn_reg: stopped without convergence after 1 Newton steps \(max_iterations = 1,") fit_dirmn_reg(
            REG_Y, REG_X; max_iterations = 1)
        @test !converged(r1) && iterations(r1) == 1
        @test_logs fit_dirmn_reg(REG_Y, REG_X)        # converges: no warning
        # A looser tolerance stops no later.
        @test iterations(fit_dirmn_reg(REG_Y, REG_X; tolerance = 1e-4)) <= iterations(f)

        t = sprint(show, MIME("text/plain"), f)
        for x in (f.loglik, f.aic, f.bic, B[2, 3], stderror(f)[3, 4])
            @test (x, occursin(string(x), t)) == (x, true)
        end
        @test length(split(t, '\n')) == 5 + 1 + 12
        @test occursin("loglik=$(f.loglik)", sprint(show, f))
        tw = sprint(show, MIME("text/plain"), wald_test(f, 2))
        @test occursin(string(wald_test(f, 2).statistic), tw)
    end

    @testset "handles" begin
        ctx = DirmnContext(:cpu)
        r = fit_dirmn_reg(REG_Y, REG_X; context = ctx)
        @test r.context === ctx && isopen(r)
        @test coef(r) == B
        close(r); close(r)
        @test !isopen(r) && r.ptr == C_NULL
        # The copied values stay; the library's object is gone.
        @test coef(r) == B && loglikelihood(r) == loglikelihood(f) && vcov(r) == vcov(f)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER predict(r, REG_X)
        @test occursin("DirmnRegression was closed", msg(e))
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER wald_test(r, 1)
        @test occursin("DirmnRegression was closed", msg(e))
        @test occursin("closed", sprint(show, r))
        Dirmn._finalize_reg(r)                   # no double free
        # A regression outlives its context for prediction.
        r2 = fit_dirmn_reg(REG_Y, REG_X; context = ctx)
        close(ctx)
        @test predict(r2, REG_X) == predict(f, REG_X)
        close(r2)
        # Unreferenced fits are finalized.
        for _ in 1:20
            fit_dirmn_reg(REG_Y, REG_X; context = DirmnContext(:cpu))
        end
        GC.gc(); GC.gc()
        # close() from a progress callback of a call on the regression's context.
        ctx = DirmnContext(:cpu)
        r3 = fit_dirmn_reg(REG_Y, REG_X; context = ctx)
        inside = Any[]
        r4 = fit_dirmn_reg(REG_Y, REG_X; context = ctx, progress = function (i, ll, g)
            i == 1 && (close(r3); push!(inside, isopen(r3)))
            nothing
        end)
        @test inside == [false] && r3.ptr == C_NULL && coef(r4) == B
        close(r4)
        # ... and of the counts and the context the fit runs on: it finishes,
        # the context is freed when it returns, the regression predicts on.
        c = DirmnCounts(REG_Y; obsdim = 1, context = ctx)
        r5 = fit_dirmn_reg(c, REG_X; progress = (i, ll, g) -> (i == 1 && (close(c); close(ctx)); nothing))
        @test coef(r5) == B && !isopen(c) && !isopen(ctx) && ctx.deferred == C_NULL
        @test predict(r5, REG_X) == predict(f, REG_X)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_dirmn_reg(c, REG_X)
        close(r5)
    end
end

# The mean/precision parametrisation (parametrization = :meanprecision):
# α_b = φ softmax(x_b β), one precision φ = exp(γ) for every row; the free
# coefficients are vec(β) without the reference (or implied) category's
# column, then γ. References written here from the model: the BigFloat log
# pmf of reference.jl, its Float64 kernel for central differences.
const MP_RNG = MersenneTwister(1207)
const MP_N, MP_P, MP_V = 60, 2, 4
const MP_BETA = [0.0 0.4 -0.3 0.6; 0.0 -0.5 0.3 0.2]
const MP_PHI = 15.0
const MP_X = hcat(ones(MP_N), randn(MP_RNG, MP_N))
mp_softmax(η) = (e = exp.(η .- maximum(η)); e ./ sum(e))
const MP_Y = let Y = zeros(Int, MP_N, MP_V)
    for b in 1:MP_N
        a = MP_PHI .* mp_softmax(vec(MP_X[b:b, :] * MP_BETA))
        Y[b, :] = mix_rmultinomial(MP_RNG, rand(MP_RNG, 20:60), mix_rdirichlet(MP_RNG, a))
    end
    Y
end

# β (p × V) from the free coefficients θ (γ last, not used here).
function mp_beta(θ, p, V; ref = 1, sum_to_zero = false)
    free = reshape(θ[1:(end - 1)], p, V - 1)
    B = zeros(eltype(θ), p, V)
    B[:, setdiff(1:V, ref)] = free
    sum_to_zero && (B[:, ref] = -vec(sum(free; dims = 2)))
    return B
end

# The free coefficients of a fit, in vcov's order.
mp_theta(f) = [vec(coef(f)[:, setdiff(1:ncategories(f), f.reference)]); f.log_precision]

# The reference log pmf (BigFloat, reference.jl) of the rows of Y at β, γ.
function mp_ref_loglik(Y, X, B, γ)
    s = 0.0
    for b in 1:size(Y, 1)
        η = vec(X[b:b, :] * B)
        m = maximum(η)
        la = γ .+ η .- (m + log(sum(exp.(η .- m))))
        s += ref_loglik(Y[b, :], la; logalpha = true)
    end
    return s
end

# The Float64 kernel (without the multinomial coefficients, a constant) as
# a function of the free coefficients θ, for central differences.
function mp_kernel(Y, X, θ; kw...)
    n, V = size(Y)
    B = mp_beta(θ, size(X, 2), V; kw...)
    φ = exp(θ[end])
    ll = 0.0
    for b in 1:n
        a = φ .* mp_softmax(vec(X[b:b, :] * B))
        ll -= reg_lpoch(sum(a), sum(Y[b, :]))
        for v in 1:V
            ll += reg_lpoch(a[v], Y[b, v])
        end
    end
    return ll
end

@testset "regression: mean/precision" begin
    f = fit_dirmn_reg(MP_Y, MP_X; parametrization = :meanprecision, tolerance = 1e-14)
    B = coef(f)
    θ = mp_theta(f)
    k = MP_P * (MP_V - 1) + 1

    @testset "the fit, its fields and the reference log pmf" begin
        @test converged(f) && hessian_definite(f)
        @test f.parametrization === :meanprecision && f.contrast === :reference && f.reference == 1
        @test dof(f) == f.parameters == k && length(θ) == k
        @test size(B) == size(stderror(f)) == (MP_P, MP_V)
        @test all(B[:, 1] .== 0) && all(stderror(f)[:, 1] .== 0) && all(stderror(f)[:, 2:end] .> 0)
        @test f.precision == exp(f.log_precision) && f.std_error_log_precision > 0
        ref = mp_ref_loglik(MP_Y, MP_X, B, f.log_precision)
        @test abs(loglikelihood(f) - ref) <= 1e-10 * abs(ref)
        @test abs(aic(f) - (-2ref + 2k)) <= 1e-10 * abs(ref)
        @test abs(bic(f) - (-2ref + k * log(MP_N))) <= 1e-10 * abs(ref)
        @test abs(mp_kernel(MP_Y, MP_X, θ) + reg_logcoef(MP_Y) - ref) <= 1e-10 * abs(ref)
        # the simulation's values, roughly
        @test abs(f.log_precision - log(MP_PHI)) < 4 * f.std_error_log_precision
        @test maximum(abs.(B[:, 2:end] .- MP_BETA[:, 2:end]) ./ stderror(f)[:, 2:end]) < 4
        # A log-linear fit has none of it.
        l = fit_dirmn_reg(MP_Y, MP_X)
        @test l.parametrization === :loglinear && dof(l) == MP_P * MP_V
        @test l.contrast === l.reference === l.precision === nothing
        @test l.log_precision === l.std_error_log_precision === nothing
        close(l)
    end

    @testset "stationary, with the finite-difference Hessian's standard errors" begin
        ll = t -> mp_kernel(MP_Y, MP_X, t)
        H = reg_fd_hessian(ll, θ, 1e-4)
        g = reg_fd_gradient(ll, θ, 1e-3)
        # The gradient vanishes against the curvature's scale, and the
        # Newton step left is a tiny fraction of a standard error.
        @test maximum(abs.(g)) <= 1e-6 * maximum(sqrt.(-diag(H)))
        @test isposdef(Symmetric(-H))
        C = inv(-H)
        se = [vec(stderror(f)[:, 2:end]); f.std_error_log_precision]
        @test maximum(abs.((H \ g) ./ se)) <= 1e-3
        @test maximum(abs.(sqrt.(diag(C)) ./ se .- 1)) <= 1e-3
        @test size(vcov(f)) == (k, k) && reg_rel(vcov(f), C) <= 1e-3
        @test sqrt.(diag(vcov(f))) ≈ se rtol = 1e-12
        # ... and a maximum: moving any free coefficient by 0.1 SE lowers it.
        for j in eachindex(θ), d in (-0.1, 0.1)
            t = copy(θ); t[j] += d * se[j]
            @test ll(t) < ll(θ)
        end
        # The Wald test of the covariate over its V - 1 free coefficients.
        idx = [(v - 1) * MP_P + 2 for v in 1:(MP_V - 1)]
        b = θ[idx]
        t = wald_test(f, 2)
        @test t.dof == MP_V - 1
        @test abs(t.statistic - dot(b, C[idx, idx] \ b)) <= 1e-3 * t.statistic
        @test abs(pvalue(t) - od_chisq_upper(MP_V - 1, t.statistic)) <= 1e-9 * pvalue(t) + 1e-300
    end

    @testset "an intercept alone is the shared-alpha fit" begin
        d = fit_dirmn(MP_Y; obsdim = 1, tolerance = 1e-14)
        f1 = fit_dirmn_reg(MP_Y, ones(MP_N, 1); parametrization = :meanprecision, tolerance = 1e-14)
        @test abs(loglikelihood(f1) - loglikelihood(d)) <= 1e-10 * abs(loglikelihood(d))
        @test dof(f1) == MP_V
        A = predict(f1, ones(2, 1))
        @test maximum(abs.(A[1, :] ./ coef(d) .- 1)) <= 1e-6
        @test abs(f1.precision / d.precision - 1) <= 1e-6
        close(f1)
    end

    @testset "summing to zero is the same fit" begin
        z = fit_dirmn_reg(MP_Y, MP_X; parametrization = :meanprecision, contrast = :sum,
                          reference = 4, tolerance = 1e-14)
        @test z.contrast === :sum && z.reference == 4 && dof(z) == k
        @test abs(loglikelihood(z) - loglikelihood(f)) <= 1e-10 * abs(loglikelihood(f))
        @test maximum(abs.(sum(coef(z); dims = 2))) <= 1e-12
        @test maximum(abs.(coef(z) .- (B .- sum(B; dims = 2) ./ MP_V))) <= 1e-7
        for i in 1:MP_P
            a, c = wald_test(f, i), wald_test(z, i)
            @test abs(a.statistic - c.statistic) <= 1e-7 * a.statistic && a.dof == c.dof == MP_V - 1
        end
        @test abs(z.log_precision - f.log_precision) <= 1e-8
        @test reg_rel(predict(z, MP_X), predict(f, MP_X)) <= 1e-8
        # The implied category's standard error, from the covariance of the sum.
        C = vcov(z)
        for i in 1:MP_P
            idx = [(v - 1) * MP_P + i for v in 1:(MP_V - 1)]
            @test stderror(z)[i, 4] ≈ sqrt(sum(C[idx, idx])) rtol = 1e-10
        end
        @test occursin("sum to zero (category 4 implied)", sprint(show, MIME("text/plain"), z))
        close(z)
        # Another reference category: the same fit, its column 0.
        r3 = fit_dirmn_reg(MP_Y, MP_X; parametrization = :meanprecision, reference = 3,
                           tolerance = 1e-14)
        @test all(coef(r3)[:, 3] .== 0) && reg_rel(coef(r3), B .- B[:, 3]) <= 1e-7
        @test abs(loglikelihood(r3) - loglikelihood(f)) <= 1e-10 * abs(loglikelihood(f))
        close(r3)
    end

    @testset "predict, the likelihood-ratio test, display" begin
        A = predict(f, MP_X)
        want = vcat([permutedims(f.precision .* mp_softmax(vec(MP_X[b:b, :] * B))) for b in 1:MP_N]...)
        @test reg_rel(A, want) <= 1e-12
        @test maximum(abs.(sum(A; dims = 2) .- f.precision)) <= 1e-12 * f.precision
        @test reg_rel(predict(f, MP_X; type = :proportion), A ./ f.precision) <= 1e-12
        # An intercept alone against two groups: V - 1 more free coefficients.
        X2 = hcat(ones(MP_N), [iseven(b) ? 1.0 : 0.0 for b in 1:MP_N])
        f0 = fit_dirmn_reg(MP_Y, X2[:, 1:1]; parametrization = :meanprecision)
        f2 = fit_dirmn_reg(MP_Y, X2; parametrization = :meanprecision)
        df = dof(f2) - dof(f0)
        lr = 2 * (loglikelihood(f2) - loglikelihood(f0))
        @test df == MP_V - 1 == wald_test(f2, 2).dof
        @test lr >= -1e-8 && 0 <= od_chisq_upper(df, max(lr, 0.0)) <= 1
        close(f0); close(f2)
        t = sprint(show, MIME("text/plain"), f)
        @test occursin("mean/precision", t) && occursin(string(f.precision), t)
        @test occursin(string(f.std_error_log_precision), t)
        @test occursin("reference category 1 (its coefficients 0)", t)
        @test length(split(t, '\n')) == 5 + 2 + 1 + MP_P * (MP_V - 1)
        @test occursin("meanprecision", sprint(show, f))
    end

    @testset "bad values name the keyword" begin
        for (kw, what) in (((parametrization = :mean_precision,), "parametrization"),
                           ((parametrization = :meanprecision, contrast = :helmert), "contrast"),
                           ((parametrization = :meanprecision, reference = 5), "reference"),
                           ((parametrization = :meanprecision, reference = 0), "reference"))
            e = caught(() -> fit_dirmn_reg(MP_Y, MP_X; kw...))
            @test e isa ArgumentError && startswith(e.msg, what)
            @test occursin(string(last(kw)), e.msg)
        end
    end
    close(f)
end
