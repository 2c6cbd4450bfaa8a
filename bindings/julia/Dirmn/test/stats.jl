# Issue #25, item 11 and the renamed keywords: a fit's statistics under
# StatsBase's names (confint on the log scale), display at full precision,
# a warning where a fit stops at max_iterations, and the old keyword names
# accepted with a deprecation warning. Uses fit.jl's BCI, mixture.jl's
# simulated tables and mixture_select.jl's MITE.

# Standard normal quantiles as R's qnorm gives them (15 significant digits).
const QNORM = ((0.975, 1.959963984540054), (0.995, 2.575829303548901),
               (0.9, 1.281551565544601), (0.6, 0.2533471031357997))

@testset "fit statistics, display, warnings, renamed keywords" begin
    @testset "coef, stderror, vcov, confint of a fit" begin
        r = fit_dirmn(BCI; obsdim = 1)
        @test coef(r) == r.alpha && coef(r) !== r.alpha
        @test isequal(stderror(r), r.std_error_alpha) && stderror(r) !== r.std_error_alpha
        @test relerr(sqrt.(diag(vcov(r))), stderror(r)) <= 1e-6
        for (q, z) in QNORM
            @test abs(Dirmn._normal_upper_quantile(1 - q) - z) <= 1e-14 * z
        end
        for (level, z) in ((0.95, QNORM[1][2]), (0.99, QNORM[2][2]))
            ci = confint(r; level = level)
            @test size(ci) == (225, 2)
            sl = r.std_error_log_alpha
            @test relerr(ci[:, 1], exp.(log.(r.alpha) .- z .* sl)) <= 1e-13
            @test relerr(ci[:, 2], exp.(log.(r.alpha) .+ z .* sl)) <= 1e-13
            @test all(0 .< ci[:, 1] .< r.alpha .< ci[:, 2])
        end
        @test confint(r) == confint(r; level = 0.95)
        # The Wald interval on the α scale goes below 0 on this table; the
        # log-scale one cannot.
        @test any(r.alpha .- QNORM[1][2] .* r.std_error_alpha .< 0)
        @test caught(() -> confint(r; level = 1.5)) isa ArgumentError
        # No standard error, no interval: a category without counts.
        Z = hcat(BCI[1:20, 1:30], zeros(Int, 20))
        rz = fit_dirmn(Z; obsdim = 1)
        cz = confint(rz)
        @test all(isnan, cz[end, :]) && all(isfinite, cz[1:end-1, :][rz.alpha[1:end-1] .> 0, :])
        @test isnan(stderror(rz)[end]) && coef(rz)[end] == 0
    end

    @testset "display at full precision" begin
        f = fit_dirmn(MITE; obsdim = 1)
        t = sprint(show, MIME("text/plain"), f)
        @test occursin(string(f.loglik), t) && occursin(string(aic(f)), t) &&
              occursin(string(bic(f)), t) && occursin("70 observations", t)
        m = fit_mixture(MITE, 3; obsdim = 1)
        # More digits than a rounding to 6 would keep.
        @test length(replace(string(m.loglik), r"[-.]" => "")) > 6
        @test occursin("loglik=$(m.loglik)", sprint(show, m))
        t = sprint(show, MIME("text/plain"), m)
        for x in (m.loglik, m.objective, m.aic, m.bic, m.laplace, m.mixture_weights[1])
            @test (x, occursin(string(x), t)) == (x, true)
        end
        @test length(split(t, '\n')) == 6 + 3
        s = fit_mixture(MITE, 1:3; obsdim = 1)
        t = sprint(show, MIME("text/plain"), s)
        for f in s.fits
            @test occursin(string(f.loglik), t) && occursin(string(f.bic), t)
        end
        @test count("<-", t) == 1
    end

    @testset "stopping at max_iterations warns" begin
        r = @test_logs (:warn, r"fit_dirmn: stopped without convergence after 1 iterations \(max_iterations = 1,") fit_dirmn(
            BCI; obsdim = 1, max_iterations = 1)
        @test !r.converged && r.iterations == 1
        @test_logs fit_dirmn(BCI; obsdim = 1)                 # converges: no warning
        m = @test_logs (:warn, r"fit_mixture: EM stopped without convergence for k = 2") fit_mixture(
            MITE, 2; obsdim = 1, max_iterations = 1, starts = 1)
        @test !m.converged
        @test_logs fit_mixture(MIX_X, 3)
        s = @test_logs (:warn, r"k = 2") (:warn, r"k = 3") fit_mixture(
            MITE, 2:3; obsdim = 1, max_iterations = 1, starts = 1)
        @test !any(f -> f.converged, s.fits)
        # fit_mle raises instead.
        e = caught(() -> fit_mle(DirMult, permutedims(BCI); max_iterations = 1))
        @test e isa ErrorException && occursin("max_iterations = 1", e.msg)
    end

    @testset "tol and maxiter: the old names, with a deprecation warning" begin
        ref = fit_dirmn(BCI; obsdim = 1, tolerance = 1e-6, max_iterations = 50)
        r = @test_logs (:warn, r"`tol` is deprecated, use `tolerance`") fit_dirmn(
            BCI; obsdim = 1, tol = 1e-6, max_iterations = 50)
        @test r.alpha == ref.alpha
        r = @test_logs (:warn, r"`maxiter` is deprecated, use `max_iterations`") fit_dirmn(
            BCI; obsdim = 1, tolerance = 1e-6, maxiter = 50)
        @test r.alpha == ref.alpha
        @test caught(() -> fit_dirmn(BCI; obsdim = 1, tol = 1e-6, tolerance = 1e-6)) isa
              ArgumentError
        m0 = fit_mixture(MIX_X, 2; tolerance = 1e-6, max_iterations = 500)
        m = @test_logs (:warn, r"`tol` is deprecated") (:warn, r"`maxiter` is deprecated") fit_mixture(
            MIX_X, 2; tol = 1e-6, maxiter = 500)
        @test m.alpha == m0.alpha
        s = @test_logs (:warn, r"`maxiter` is deprecated") fit_mixture(MIX_X, 1:2; maxiter = 500)
        @test s.fits[2].loglik >= s.fits[1].loglik
        @test caught(() -> fit_mixture(MIX_X, 2; maxiter = 5, max_iterations = 5)) isa ArgumentError
        d = @test_logs (:warn, r"`tol` is deprecated") fit_mle(DirMult, permutedims(BCI); tol = 1e-8)
        @test relerr(d.alpha, fit_dirmn(BCI; obsdim = 1).alpha) <= 1e-6
    end
end
