# Values of every input form against the BigFloat reference.

# A categories × observations table with what real tables have: mostly zeros,
# small counts, a few large ones, an all-zero observation.
function make_counts(rng, V, n)
    X = zeros(Int, V, n)
    for i in eachindex(X)
        r = rand(rng)
        X[i] = r < 0.5 ? 0 : r < 0.9 ? rand(rng, 1:6) : rand(rng, 7:400)
    end
    X[:, 3] .= 0
    X[1, 5] = 1000  # a count far above the rest
    return X
end

const RNG = MersenneTwister(20240611)
const V = 6
const NOBS = 9
const X = make_counts(RNG, V, NOBS)                     # V × n: observations in columns
# Small, moderate and very large α: each takes another path in the library.
const ALPHA = [0.05, 0.7, 1.0, 3.25, 480.0, 2.5e4]
const ALPHAS = hcat(ALPHA, [1.5, 1.5, 1.5, 1.5, 1.5, 1.5], [2e-3, 9.0, 0.4, 1e3, 30.0, 0.25])
const AROW = [0.1 + 0.37 * ((v * 7 + b * 3) % 11) + (b == 4 ? 900.0 : 0.0) for v in 1:V, b in 1:NOBS]

# The log pmf (what loglik and friends return by default, full = true) and
# the kernel without the multinomial coefficients (full = false).
const REF = ref_loglik(X, ALPHA)
const REF_KERNEL = ref_loglik(X, ALPHA; full = false)
const REF_K = ref_loglik(X, ALPHAS)
const REF_K_KERNEL = ref_loglik(X, ALPHAS; full = false)
const REF_ROW = ref_rowwise(X, AROW)
const REF_ROW_KERNEL = ref_rowwise(X, AROW; full = false)

@testset "values" begin
    @testset "reference self-checks" begin
        # The reference is only useful if it is right: known values.
        @test BERNOULLI[3] == 1 // 6 && BERNOULLI[5] == -1 // 30
        @test abs(Float64(lgamma_ref(big(5.0))) - log(24.0)) < 1e-15
        @test abs(Float64(lgamma_ref(big(0.5))) - 0.5 * log(pi)) < 1e-15
        @test abs(Float64(lgamma_ref(big(3.7)) - lgamma_ref(big(0.7))) -
                  Float64(lpoch_int(big(0.7), 3))) < 1e-15
        # One observation of a single count: P = α_v / A.
        @test abs(ref_loglik([0, 1], [1.0, 3.0]; full = true) - log(0.75)) < 1e-15
        @test REF[3] == 0.0
    end

    @testset "dense $(T), obsdim=$(obsdim)" for T in (Int32, Int64, Float32, Float64), obsdim in (1, 2)
        Y = obsdim == 2 ? T.(X) : permutedims(T.(X))
        @test relerr(loglik(Y, ALPHA; obsdim = obsdim), REF) <= RTOL
        @test relerr(loglik(Y, ALPHA; obsdim = obsdim, full = false), REF_KERNEL) <= RTOL
        @test relerr(loglik(Y, ALPHAS; obsdim = obsdim), REF_K) <= RTOL
        @test relerr(loglik(Y, ALPHAS; obsdim = obsdim, full = false), REF_K_KERNEL) <= RTOL
        A = obsdim == 2 ? AROW : permutedims(AROW)
        @test relerr(loglik_rowwise(Y, A; obsdim = obsdim), REF_ROW) <= RTOL
        @test relerr(loglik_rowwise(Y, A; obsdim = obsdim, full = false), REF_ROW_KERNEL) <= RTOL
    end

    @testset "converted element types" begin
        @test relerr(loglik(UInt16.(X), ALPHA), REF) <= RTOL
        @test relerr(loglik(Int8.(min.(X, 100)), ALPHA), ref_loglik(min.(X, 100), ALPHA)) <= RTOL
        @test relerr(loglik(Rational{Int}.(X), ALPHA), REF) <= RTOL
        @test relerr(loglik(X, Float32.(ALPHA)), ref_loglik(X, Float64.(Float32.(ALPHA)))) <= RTOL
        B = X .> 0
        @test relerr(loglik(B, ALPHA), ref_loglik(Int.(B), ALPHA)) <= RTOL
    end

    @testset "strided views and transposes, no copy" begin
        W = hcat(X, X .+ 1)                      # V × 2n
        sel = view(W, :, 1:2:2NOBS)              # every other observation
        @test relerr(loglik(sel, ALPHA), ref_loglik(Matrix(sel), ALPHA)) <= RTOL
        rows = view(W, 2:2:V, :)                 # a subset of categories
        @test relerr(loglik(rows, ALPHA[2:2:V]), ref_loglik(Matrix(rows), ALPHA[2:2:V])) <= RTOL
        @test relerr(loglik(transpose(X), ALPHA; obsdim = 1), REF) <= RTOL
        @test relerr(loglik(permutedims(X)', ALPHA), REF) <= RTOL
        @test relerr(loglik(X, permutedims(ALPHAS)'), REF_K) <= RTOL
        # Columns 2, 4, 6 of [ALPHAS ALPHAS] are columns 2, 1, 3 of ALPHAS.
        @test relerr(loglik(X, view(hcat(ALPHAS, ALPHAS), :, 2:2:6)), REF_K[:, [2, 1, 3]]) <= RTOL
        @test relerr(loglik_rowwise(X, permutedims(AROW)'), REF_ROW) <= RTOL
        Z = zeros(Int, V, NOBS, 2)
        Z[:, :, 2] = X
        @test relerr(loglik(view(Z, :, :, 2), ALPHA), REF) <= RTOL
        # A reversed view has a negative stride, which the library rejects:
        # the package must copy instead of failing.
        @test relerr(loglik(view(X, :, NOBS:-1:1), ALPHA), reverse(REF)) <= RTOL
    end

    @testset "sparse, obsdim=$(obsdim), $(Tv), $(Ti)" for obsdim in (1, 2),
                                                         Tv in (Int64, Float64, Int32),
                                                         Ti in (Int64, Int32, Int16)
        Y = obsdim == 2 ? X : permutedims(X)
        S = SparseMatrixCSC{Tv,Ti}(sparse(Tv.(Y)))
        @test relerr(loglik(S, ALPHA; obsdim = obsdim), REF) <= RTOL
        @test relerr(loglik(S, ALPHAS; obsdim = obsdim, full = false), REF_K_KERNEL) <= RTOL
        A = obsdim == 2 ? AROW : permutedims(AROW)
        @test relerr(loglik_rowwise(S, A; obsdim = obsdim), REF_ROW) <= RTOL
        c = DirmnCounts(S; obsdim = obsdim)
        @test nnz(c) == count(!iszero, X)
        @test size(c) == size(Y)
        close(c)
    end

    @testset "sparse special cases" begin
        S = sparse(X)
        @test relerr(loglik(transpose(S), ALPHA; obsdim = 1), REF) <= RTOL
        @test relerr(loglik(S', ALPHA; obsdim = 1), REF) <= RTOL
        # An explicitly stored zero is dropped, not an error.
        S0 = copy(S)
        S0.nzval[1] = 0
        Xd = Matrix(S0)
        @test nnz(S0) == nnz(S)
        @test relerr(loglik(S0, ALPHA), ref_loglik(Xd, ALPHA)) <= RTOL
        # Spare capacity beyond nnz in rowval/nzval must not be read.
        Sx = SparseMatrixCSC(S.m, S.n, copy(S.colptr), vcat(S.rowval, [1, 1]), vcat(S.nzval, [-5, -5]))
        @test relerr(loglik(Sx, ALPHA), REF) <= RTOL
        # Int64 and Int32 indices are read in place, counting from 1; the
        # caller's arrays stay as they were.
        cp, rv = copy(S.colptr), copy(S.rowval)
        c = DirmnCounts(S)
        @test S.colptr == cp && S.rowval == rv
        @test relerr(loglik(c, ALPHA), REF) <= RTOL
        close(c)
        # An all-zero sparse table.
        E = spzeros(Int, V, 4)
        @test loglik(E, ALPHA) == zeros(4)
    end

    @testset "single observation" begin
        x = X[:, 1]
        @test loglik(x, ALPHA) isa Float64
        @test abs(loglik(x, ALPHA) - REF[1]) <= RTOL * max(1, abs(REF[1]))
        @test abs(loglik(Float32.(x), ALPHA; full = false) - REF_KERNEL[1]) <= RTOL * max(1, abs(REF_KERNEL[1]))
        @test relerr(loglik(x, ALPHAS), REF_K[1, :]) <= RTOL
        @test abs(loglik(view(vcat(x', x'), 2, :), ALPHA) - REF[1]) <= RTOL * abs(REF[1])
        @test abs(loglik(sparsevec(x), ALPHA) - REF[1]) <= RTOL * abs(REF[1])
        @test abs(loglik_rowwise(x, AROW[:, 1]) - REF_ROW[1]) <= RTOL * abs(REF_ROW[1])
        @test loglik(zeros(Int, V), ALPHA) == 0.0
    end

    @testset "log alpha" begin
        la = log.(ALPHA)
        @test relerr(loglik(X, la; param = :logalpha), ref_loglik(X, la; logalpha = true)) <= RTOL
        @test relerr(loglik(X, log.(ALPHAS); param = :logalpha, full = true),
                     ref_loglik(X, log.(ALPHAS); logalpha = true, full = true)) <= RTOL
        @test relerr(loglik_rowwise(X, log.(AROW); param = :logalpha),
                     ref_rowwise(X, log.(AROW); logalpha = true)) <= RTOL
    end

    @testset "full vs not differ by the multinomial coefficient" begin
        coef = [Float64(lpoch_int(big(1.0), sum(x)) - sum(lpoch_int(big(1.0), v) for v in x))
                for x in observations(X, 2)]
        @test relerr(loglik(X, ALPHA; full = true) .- loglik(X, ALPHA; full = false), coef) <= 1e-9
        @test any(coef .!= 0)
    end

    @testset "full = true is the default everywhere (the log pmf)" begin
        # Against the reference, not against the other setting, so that a
        # default of false fails here.
        @test relerr(loglik(X, ALPHA), ref_loglik(X, ALPHA; full = true)) <= RTOL
        @test relerr(loglik(X, ALPHAS), ref_loglik(X, ALPHAS; full = true)) <= RTOL
        @test relerr(loglik_rowwise(X, AROW), ref_rowwise(X, AROW; full = true)) <= RTOL
        @test relerr(loglik_rowwise_derivatives(X, AROW).loglik,
                     ref_rowwise(X, AROW; full = true)) <= RTOL
        want = sum(ref_loglik(X, ALPHA; full = true))
        @test abs(loglik_sum(X, ALPHA).value - want) <= RTOL * abs(want)
        @test relerr(logpdf(DirMult(ALPHA), X), ref_loglik(X, ALPHA; full = true)) <= RTOL
        @test relerr(logpdf(DirMult(ALPHA), X; full = false),
                     ref_loglik(X, ALPHA; full = false)) <= RTOL
        c = DirmnCounts(X)
        @test relerr(loglik(c, ALPHA), ref_loglik(X, ALPHA; full = true)) <= RTOL
        @test relerr(loglik_rowwise(c, AROW), ref_rowwise(X, AROW; full = true)) <= RTOL
        @test abs(loglik_sum(c, ALPHA).value - want) <= RTOL * abs(want)
        close(c)
        # Every doc string says which it computes.
        for f in (loglik, loglik_rowwise, loglik_sum, loglik_rowwise_derivatives, logpdf)
            d = string(Base.Docs.doc(f))
            @test occursin("full = true", d) && occursin("multinomial coefficient", d)
        end
    end

    @testset "prepared counts" begin
        c = DirmnCounts(X)
        @test size(c) == size(X)
        @test Dirmn.nobs(c) == NOBS && Dirmn.ncategories(c) == V
        @test nnz(c) == count(!iszero, X)
        @test totals(c) == vec(sum(X; dims = 1))
        inf = Dirmn.info(c)
        @test inf.rows == NOBS && inf.cols == V && inf.max_count == maximum(X)
        @test inf.total == sum(X) && inf.backend === :cpu && !inf.real_valued
        s = sprint(show, c)
        @test occursin("DirmnCounts($(V)×$(NOBS)", s) && occursin("nnz=$(count(!iszero, X))", s)
        # Repeated evaluation with new parameters reuses the upload.
        for j in 1:3
            @test relerr(loglik(c, ALPHAS[:, j]), REF_K[:, j]) <= RTOL
        end
        @test relerr(loglik(c, ALPHAS; full = false), REF_K_KERNEL) <= RTOL
        @test relerr(loglik_rowwise(c, AROW), REF_ROW) <= RTOL
        @test relerr(loglik(c, log.(ALPHA); param = :logalpha), REF) <= RTOL
        d = DirMult(ALPHA)
        @test relerr(logpdf(d, c), REF) <= RTOL
        close(c)

        c1 = DirmnCounts(permutedims(X); obsdim = 1, storage = :sparse)
        @test size(c1) == (NOBS, V)
        @test Dirmn.info(c1).storage === :sparse
        @test relerr(loglik(c1, ALPHA), REF) <= RTOL
        @test relerr(loglik_rowwise(c1, permutedims(AROW)), REF_ROW) <= RTOL
        close(c1)

        c2 = DirmnCounts(X; storage = :dense, context = DirmnContext(:cpu))
        @test Dirmn.info(c2).storage === :dense
        @test relerr(loglik(c2, ALPHA; full = false), REF_KERNEL) <= RTOL
        close(c2)

        cv = DirmnCounts(X[:, 2])
        @test size(cv) == (V,)
        @test abs(loglik(cv, ALPHA) - REF[2]) <= RTOL * max(1, abs(REF[2]))
        close(cv)
    end

    @testset "real-valued counts" begin
        Xr = X .+ 0.25 .* (X .> 0) .* ((1:V) .% 3)     # some fractional counts
        Xr[2, 1] = 0.5
        @test any(!isinteger, Xr)
        want = ref_loglik(Xr, ALPHA)
        @test relerr(loglik(Xr, ALPHA; real_valued = true), want) <= RTOL
        @test relerr(loglik(Xr, ALPHA; real_valued = true, full = true),
                     ref_loglik(Xr, ALPHA; full = true)) <= RTOL
        c = DirmnCounts(sparse(Xr); real_valued = true)
        @test Dirmn.info(c).real_valued
        @test relerr(loglik(c, ALPHA), want) <= RTOL
        close(c)
        # Integral counts flagged real-valued give the integer answer.
        @test relerr(loglik(Float64.(X), ALPHA; real_valued = true), REF) <= RTOL
    end

    @testset "DirMult, logpdf, loglikelihood" begin
        d = DirMult(ALPHA)
        @test length(d) == V
        @test relerr(logpdf(d, X), REF) <= RTOL
        @test relerr(logpdf(d, permutedims(X); obsdim = 1), REF) <= RTOL
        @test abs(logpdf(d, X[:, 2]) - REF[2]) <= RTOL * abs(REF[2])
        @test abs(loglikelihood(d, X) - sum(REF)) <= RTOL * abs(sum(REF))
        @test abs(loglikelihood(d, X[:, 2]) - REF[2]) <= RTOL * abs(REF[2])
        # A pmf over all count vectors of total 3 in 3 categories sums to 1.
        d3 = DirMult([0.4, 1.3, 2.0])
        vs = [[a, b, 3 - a - b] for a in 0:3 for b in 0:(3 - a)]
        @test abs(sum(exp(logpdf(d3, v)) for v in vs) - 1) < 1e-13
        @test DirMult([1, 2]).alpha == [1.0, 2.0]
    end

    @testset "empty observation sets" begin
        @test loglik(zeros(Int, V, 0), ALPHA) == Float64[]
        @test size(loglik(zeros(Int, 0, V), ALPHAS; obsdim = 1)) == (0, 3)
        @test loglik_rowwise(zeros(Int, V, 0), zeros(V, 0)) == Float64[]
        @test size(loglik(X, zeros(V, 0))) == (NOBS, 0)
    end

    @testset "contexts and threads" begin
        ctx = DirmnContext(:cpu)
        @test ctx.backend === :cpu && ctx.device == 0
        @test occursin("DirmnContext(:cpu", sprint(show, ctx))
        Dirmn.set_threads!(ctx, 1)
        @test Dirmn.get_threads(ctx) == 1
        @test relerr(loglik(X, ALPHA; context = ctx), REF) <= RTOL
        Dirmn.set_threads!(ctx, 0)
        @test Dirmn.get_threads(ctx) >= 1
        Dirmn.set_precision!(ctx, :fast)   # the CPU computes in double anyway
        @test relerr(loglik(X, ALPHA; context = ctx), REF) <= RTOL
        Dirmn.synchronize(ctx)
        close(ctx)
        @test default_context() === default_context()
        # Tasks sharing the default context: the lock serialises them.
        results = Vector{Vector{Float64}}(undef, 8)
        @sync for t in 1:8
            @async results[t] = loglik(X, ALPHAS[:, 1 + t % 3])
        end
        @test all(relerr(results[t], REF_K[:, 1 + t % 3]) <= RTOL for t in 1:8)
    end

    @testset "BCI (vegan): 50 plots × 225 species" begin
        path = joinpath(@__DIR__, "data", "bci.csv")
        lines = readlines(path)
        B = permutedims(hcat([parse.(Int, split(l, ',')[2:end]) for l in lines[2:end]]...))
        @test size(B) == (50, 225)
        @test maximum(B) == 247
        a = [0.05 + 0.01 * ((7 * v) % 97) for v in 1:225]
        want = ref_loglik(B, a; obsdim = 1)
        want_full = ref_loglik(B, a; obsdim = 1, full = true)
        @test relerr(loglik(B, a; obsdim = 1), want) <= RTOL
        @test relerr(logpdf(DirMult(a), B; obsdim = 1), want_full) <= RTOL
        @test relerr(loglik(sparse(B), a; obsdim = 1), want) <= RTOL
        @test relerr(loglik(permutedims(B), a), want) <= RTOL
        c = DirmnCounts(B; obsdim = 1)
        @test totals(c) == vec(sum(B; dims = 2))
        @test nnz(c) == count(!iszero, B)
        @test relerr(loglik(c, [a 2a]), hcat(want, ref_loglik(B, 2a; obsdim = 1))) <= RTOL
        close(c)
    end
end

@testset "where the steps run (info)" begin
    L = Dirmn.LibDirmn
    # The names cover every DIRMN_STEP_* bit of the header.
    @test reduce(|, first.(Dirmn._STEPS)) == L.DIRMN_STEPS_ALL
    @test Dirmn._steps(L.DIRMN_STEPS_ALL) == last.(collect(Dirmn._STEPS))
    @test Dirmn._steps(L.DIRMN_STEP_HISTOGRAMS | L.DIRMN_STEP_LOGLIK) == [:loglik, :histograms]
    for storage in (:dense, :sparse)
        c = DirmnCounts(X; context = DirmnContext(:cpu), storage = storage)
        i = Dirmn.info(c)
        # On a CPU context everything runs on the host.
        @test i.host_steps == [:loglik, :loglik_rowwise, :derivatives_rowwise, :histograms,
                               :mixture_em, :mixture_fits]
        @test isempty(i.unavailable_steps)
        close(c)
    end
end
