# Issue #25's mixture items: the names of the starts and the default, fits
# over a range of k grown from k - 1 (the ML log-likelihood non-decreasing in
# k, on mite), select = :laplace refused under :ml, the library's component
# order, and one rule for parameters and observations shared with fit_dirmn.
# Uses mixture.jl's simulated tables and helpers.

const MITE = let lines = readlines(joinpath(@__DIR__, "data", "mite.csv"))
    permutedims(hcat([parse.(Int, split(l, ',')[2:end]) for l in lines[2:end]]...))
end

@testset "mixtures: starts, ranges of k, order, counts" begin
    @testset "mite.csv as read" begin
        @test size(MITE) == (70, 35) && sum(MITE) == 9800 && maximum(MITE) == 723
        @test all(sum(MITE; dims = 1) .> 0) && all(sum(MITE; dims = 2) .> 0)
    end

    @testset "init names; the default is :mixed with the library's starts" begin
        for init in (:mixed, :kmeanspp, :kmeans, :soft_kmeans)
            m = fit_mixture(MIX_X, 3; init = init)
            @test mix_ari(assignments(m), MIX_LABELS) >= 0.95
            @test 1 <= m.start <= MIX_STARTS
        end
        d = fit_mixture(MITE, 3; obsdim = 1)
        e = fit_mixture(MITE, 3; obsdim = 1, init = :mixed, starts = MIX_STARTS)
        @test d.alpha == e.alpha && d.loglik == e.loglik && d.start == e.start
        # Enough starts by default for :mixed to run each of its three kinds.
        @test MIX_STARTS >= 3
        err = caught(() -> fit_mixture(MIX_X, 2; init = :soft))
        @test err isa ArgumentError
        for name in (":mixed", ":kmeanspp", ":kmeans", ":soft_kmeans", ":soft")
            @test occursin(name, err.msg)
        end
    end

    @testset "a range of k grows each k from k - 1 (mite, :ml)" begin
        s = fit_mixture(MITE, 1:8; obsdim = 1)
        lls = [f.loglik for f in s.fits]
        # Non-decreasing in k (it fell from k = 7 to 8 before issue #25).
        for k in 2:8
            @test (k, lls[k] >= lls[k - 1] - 1e-9 * abs(lls[k - 1])) == (k, true)
        end
        # Each fit is the one grown from the previous k's, and a mixture grown
        # from another is at least as likely.
        for k in (2, 5, 8)
            g = fit_mixture(MITE, k; obsdim = 1, grow_from = s.fits[k - 1])
            @test g.alpha == s.fits[k].alpha && g.loglik == s.fits[k].loglik
            @test g.loglik >= s.fits[k - 1].loglik - 1e-9 * abs(g.loglik)
        end
        # ks out of order: fitted in increasing k, reported in the order given.
        t = fit_mixture(MITE, [3, 1, 2]; obsdim = 1)
        @test t.ks == [3, 1, 2] && [f.k for f in t.fits] == [3, 1, 2]
        @test t.fits[1].alpha == s.fits[3].alpha && t.fits[3].alpha == s.fits[2].alpha
        # grow_from of another k, or closed, is refused.
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MITE, 4; obsdim = 1,
                                                              grow_from = s.fits[2])
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_mixture(MITE[1:60, :], 3; obsdim = 1,
                                                              grow_from = s.fits[2])
        close(s.fits[2])
        @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_mixture(MITE, 3; obsdim = 1,
                                                          grow_from = s.fits[2])
        close(s)
    end

    @testset "choosing k" begin
        s = fit_mixture(MIX_X, 1:4)
        @test s isa MixtureSelection && s.criterion === :bic
        @test s.ks == [1, 2, 3, 4] && [f.k for f in s.fits] == s.ks
        @test s.k == 3 && s.best === s.fits[3]
        @test s.scores == [bic(f) for f in s.fits]
        @test s.scores[3] == minimum(s.scores)
        @test mix_ari(assignments(s.best), MIX_LABELS) >= 0.95
        @test s.fits[2].alpha == fit_mixture(MIX_X, 2; grow_from = s.fits[1]).alpha
        t = fit_mixture(MIX_X, [4, 2, 3]; select = :aic)
        sc = [aic(f) for f in t.fits]
        @test t.ks == [4, 2, 3] && t.scores == sc && t.k == t.ks[argmin(sc)]
        d = fit_mixture(MIX_X, 1:4; objective = :dmn)
        @test d.k == 3
        dl = fit_mixture(MIX_X, 1:4; objective = :dmn, select = :laplace)
        @test dl.scores == [laplace(f) for f in dl.fits] && dl.k == dl.ks[argmin(dl.scores)]
        close(s)
        @test all(f -> !isopen(f), s.fits)
    end

    @testset "select = :laplace is refused under :ml" begin
        err = caught(() -> fit_mixture(MITE, 1:3; obsdim = 1, select = :laplace))
        @test err isa ArgumentError
        @test occursin("dmn", err.msg) && occursin("MAP", err.msg) &&
              occursin("rewards extra components", err.msg)
        @test caught(() -> fit_mixture(MITE, 1:3; obsdim = 1, select = :laplace,
                                       objective = :ml)) isa ArgumentError
    end

    @testset "components in the library's order: decreasing weight" begin
        for k in 2:5
            m = fit_mixture(MITE, k; obsdim = 1, seed = 3)
            @test issorted(m.mixture_weights; rev = true)
            # Columns of the responsibilities moved with their weights (under
            # :ml, π is the mean responsibility, up to EM's last step).
            @test maximum(abs.(vec(sum(m.responsibilities; dims = 1)) ./ 70 .-
                               m.mixture_weights)) <= 1e-3
            @test probs(m) == m.mixture_weights && coef(m) == m.alpha
        end
    end

    @testset "one rule for parameters and observations: fit_dirmn = fit_mixture(k = 1)" begin
        # mite with an empty category and an all-zero sample appended.
        Y = vcat(hcat(MITE, zeros(Int, 70)), zeros(Int, 1, 36))
        f = fit_dirmn(Y; obsdim = 1)
        m = fit_mixture(Y, 1; obsdim = 1)
        @test dof(f) == dof(m) == 35 && f.parameters == m.parameters == 35
        @test nobs(f) == nobs(m) == 70 && m.rows == 71
        want = sum(ref_loglik(Y, f.alpha; obsdim = 1))
        @test abs(f.loglik - want) <= 1e-10 * abs(want)
        @test abs(aic(f) - (-2want + 2 * 35)) <= 1e-10 * abs(want)
        @test abs(bic(f) - (-2want + 35 * log(70))) <= 1e-10 * abs(want)
        @test abs(aic(m) - aic(f)) <= 1e-8 * abs(aic(f))
        @test abs(bic(m) - bic(f)) <= 1e-8 * abs(bic(f))
        # Weights: n is the sum of the positive weights of samples with counts.
        w = [1.0 + (b % 4) for b in 1:71]
        w[5] = 0
        fw = fit_dirmn(Y; obsdim = 1, weights = w)
        mw = fit_mixture(Y, 1; obsdim = 1, weights = w)
        n = sum(w[1:70])
        @test nobs(fw) == nobs(mw) == n && dof(fw) == dof(mw) == 35
        @test abs(bic(mw) - bic(fw)) <= 1e-8 * abs(bic(fw))
        @test abs(bic(fw) - (-2fw.loglik + 35 * log(n))) <= 1e-12 * abs(bic(fw))
        # Under :dmn the library counts every α (dmn's rule), k V + k - 1.
        md = fit_mixture(Y, 2; obsdim = 1, objective = :dmn)
        @test dof(md) == 2 * 36 + 1 && nobs(md) == 70
    end

    @testset "renamed fields read under their old names, with a warning" begin
        m = fit_mixture(MIX_X, 2)
        @test (@test_logs (:warn, r"`weights` is deprecated, use `mixture_weights`") m.weights) ==
              m.mixture_weights
        @test (@test_logs (:warn, r"`nparams` is deprecated, use `parameters`") m.nparams) ==
              m.parameters
    end
end
