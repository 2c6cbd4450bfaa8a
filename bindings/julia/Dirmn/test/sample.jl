# Sampling and moments (issue #30: rand over dirmn_sample and
# dirmn_sample_rowwise, mean/var/cov over dirmn_moments, simulate, and
# Matrix/sparse of a DirmnCounts over dirmn_counts_copy_*), against
# references computed here:
# - the DM pmf written out as sums of logarithms (no gamma function:
#   log Γ(a + n) - log Γ(a) = Σ_{i<n} log(a + i)), summed to 1 over every
#   outcome, and the moments enumerated from it;
# - the closed-form moments, N p_v, N p_v (1 - p_v) (N + A) / (1 + A) and
#   -N p_u p_v (N + A) / (1 + A);
# - draws: totals, reproducibility, sample means and variances within 6
#   standard errors of the formulas, a χ² goodness of fit against the exact
#   pmf (p-value from overdispersion.jl's od_chisq_upper; the same statistic
#   rejects a wrong pmf), and the limits of the sampler's α range.

# log n!
sm_lfact(n::Integer) = n <= 1 ? 0.0 : sum(log, 2:n)
# log Γ(a + n) - log Γ(a) for an integer n ≥ 0.
sm_lrise(a::Real, n::Integer) = n == 0 ? 0.0 : sum(i -> log(a + i), 0:(n - 1))

# The DM log pmf of the count vector x under α (its total is x's).
function sm_logpmf(x::AbstractVector{<:Integer}, alpha::AbstractVector{<:Real})
    N = sum(x)
    A = sum(alpha)
    s = sm_lfact(N) - sm_lrise(A, N)
    for v in eachindex(x)
        s += sm_lrise(alpha[v], x[v]) - sm_lfact(x[v])
    end
    return s
end

# Every count vector of V categories summing to N.
function sm_outcomes(V::Int, N::Int)
    V == 1 && return [[N]]
    out = Vector{Int}[]
    for k in 0:N, rest in sm_outcomes(V - 1, N - k)
        push!(out, vcat(k, rest))
    end
    return out
end

# The closed-form moments of DM(α, N).
function sm_moments(alpha, N)
    A = sum(alpha)
    p = alpha ./ A
    f = N * (N + A) / (1 + A)
    m = N .* p
    C = -f .* (p * p')
    for v in eachindex(p)
        C[v, v] = f * p[v] * (1 - p[v])
    end
    return m, diag(C), C
end

# The χ² goodness-of-fit statistic of the columns of X (draws of total N)
# against the pmf `logpmf` over every outcome, and its degrees of freedom.
function sm_gof(X::AbstractMatrix, N::Int, logpmf)
    V, n = size(X)
    seen = Dict{Vector{Int},Int}()
    for b in 1:n
        k = X[:, b]
        seen[k] = get(seen, k, 0) + 1
    end
    outcomes = sm_outcomes(V, N)
    stat = 0.0
    for x in outcomes
        e = n * exp(logpmf(x))
        o = get(seen, x, 0)
        stat += (o - e)^2 / e
    end
    # Every draw is an outcome of total N.
    @assert sum(values(seen)) == n && all(sum(k) == N for k in keys(seen))
    return stat, length(outcomes) - 1
end

const SM_ALPHA = [0.5, 1.0, 2.0, 0.25]
const SM_N = 30

@testset "sampling and moments" begin
    @testset "the references" begin
        # The pmf sums to 1 and its moments are the closed forms.
        for (alpha, N) in ((SM_ALPHA, 6), ([3.0, 0.2, 1.5], 9), ([1e3, 2e3], 5))
            xs = sm_outcomes(length(alpha), N)
            @test length(xs) == binomial(N + length(alpha) - 1, length(alpha) - 1)
            p = [exp(sm_logpmf(x, alpha)) for x in xs]
            @test abs(sum(p) - 1) <= 1e-12
            m = sum(p .* xs)
            C = sum(p[i] .* ((xs[i] .- m) * (xs[i] .- m)') for i in eachindex(xs))
            mr, vr, Cr = sm_moments(alpha, N)
            @test isapprox(m, mr; rtol = 1e-12)
            @test isapprox(C, Cr; rtol = 1e-10, atol = 1e-12)
        end
        # The pmf at a known value: DM([1, 1], 2) is uniform on 3 outcomes.
        @test exp(sm_logpmf([1, 1], [1.0, 1.0])) ≈ 1 / 3
    end

    @testset "mean, var, cov" begin
        for (alpha, N) in ((SM_ALPHA, SM_N), ([1e-3, 5.0, 1e4], 1000), ([2.0], 7),
                           ([0.3, 0.3], 0))
            d = DirMult(alpha, N)
            m, v, C = sm_moments(alpha, N)
            @test isapprox(mean(d), m; rtol = 1e-13)
            @test isapprox(var(d), v; rtol = 1e-12, atol = 1e-300)
            @test isapprox(cov(d), C; rtol = 1e-12, atol = 1e-300)
            @test issymmetric(cov(d))
            @test diag(cov(d)) == var(d)
        end
        @test mean(DirMult([1.0, 3.0], 8)) == [2.0, 6.0]
        # A size is needed; bad α is the library's error, named in Julia.
        @test caught(() -> mean(DirMult([1.0, 2.0]))) isa ArgumentError
        e = caught(() -> var(DirMult([1.0, -2.0], 3)))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("d.alpha[2]", e.message)
        e = caught(() -> cov(DirMult([1.0, 2.0], -1)))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("size", e.message)
        # Statistics' generics, exported.
        @test Dirmn.mean === Statistics.mean && Dirmn.cov === Statistics.cov
    end

    @testset "rand(::DirMult, n): totals, shapes, reproducibility" begin
        d = DirMult(SM_ALPHA, SM_N)
        X = rand(d, 200; seed = 11)
        @test X isa Matrix{Int} && size(X) == (4, 200)
        @test all(==(SM_N), sum(X; dims = 1))
        @test all(>=(0), X)
        @test rand(d, 200; seed = 11) == X                       # same seed, same table
        @test rand(d, 200; seed = 12) != X                       # another seed, another
        @test rand(d, 50; seed = 11) == X[:, 1:50]               # draw b does not depend on n
        @test rand(d, 200; seed = 11, obsdim = 1) == permutedims(X)
        S = rand(d, 200; seed = 11, output = :sparse)
        @test S isa SparseMatrixCSC{Int,Int} && S == X && nnz(S) == count(!iszero, X)
        c = rand(d, 200; seed = 11, output = :counts, storage = :sparse)
        @test c isa DirmnCounts && size(c) == (4, 200) && Dirmn.info(c).storage === :sparse
        @test Matrix(c) == X && sparse(c) == X && totals(c) == fill(SM_N, 200)
        close(c)
        c = rand(d, 200; seed = 11, output = :counts, obsdim = 1)
        @test size(c) == (200, 4) && Matrix(c) == permutedims(X)
        close(c)
        # Per-draw sizes, zero included.
        sz = [0, 1, 5, 1000, 3]
        Y = rand(d, 5; seed = 3, size = sz)
        @test vec(sum(Y; dims = 1)) == sz && Y[:, 1] == zeros(Int, 4)
        # One draw; the seed from an RNG, or from the global one.
        x = rand(DirMult([1.0, 2.0, 3.0], 9))
        @test x isa Vector{Int} && length(x) == 3 && sum(x) == 9
        @test rand(MersenneTwister(5), d, 20) == rand(MersenneTwister(5), d, 20)
        @test rand(MersenneTwister(5), d, 20) ==
              rand(d, 20; seed = rand(MersenneTwister(5), UInt64))
        @test rand(MersenneTwister(5), d, 20) != rand(MersenneTwister(6), d, 20)
        Random.seed!(99); a = rand(d, 30)
        Random.seed!(99); b = rand(d, 30)
        @test a == b
        @test rand(d, 30) != a
        @test caught(() -> rand(MersenneTwister(1), d, 3; seed = 1)) isa ArgumentError
        # The size given here wins over the distribution's; without any, an error.
        @test all(==(4), sum(rand(d, 10; size = 4); dims = 1))
        @test caught(() -> rand(DirMult(SM_ALPHA), 3)) isa ArgumentError
        @test caught(() -> rand(d, 3; output = :dense)) isa ArgumentError
        @test caught(() -> rand(d, 3; obsdim = 3)) isa ArgumentError
    end

    @testset "rand(::DirMult, n): moments of the draws" begin
        # Sample means and variances within 6 standard errors: the mean's
        # from the formula's variance, the variance's from the draws'
        # squared deviations. Three regimes: a few categories and a moderate
        # size, a large size (binomial draws), a size small against many
        # categories (the Pólya urn).
        for (alpha, N, n) in ((SM_ALPHA, SM_N, 20000), ([2.0, 0.7, 9.0], 100000, 20000),
                              (vcat([0.1, 3.0], fill(0.05, 198)), 4, 40000))
            d = DirMult(alpha, N)
            X = rand(d, n; seed = 2024)
            m, v, C = sm_moments(alpha, N)
            for j in 1:min(length(alpha), 6)
                xs = Float64.(X[j, :])
                xbar = sum(xs) / n
                @test abs(xbar - m[j]) <= 6 * sqrt(v[j] / n)
                dev2 = (xs .- xbar) .^ 2
                s2 = sum(dev2) / (n - 1)
                se = sqrt(sum((dev2 .- sum(dev2) / n) .^ 2) / (n - 1) / n)
                @test abs(s2 - v[j]) <= 6 * se
            end
            # The covariance of the first two categories.
            x1, x2 = Float64.(X[1, :]), Float64.(X[2, :])
            prods = (x1 .- sum(x1) / n) .* (x2 .- sum(x2) / n)
            c12 = sum(prods) / (n - 1)
            se = sqrt(sum((prods .- sum(prods) / n) .^ 2) / (n - 1) / n)
            @test abs(c12 - C[1, 2]) <= 6 * se
        end
    end

    @testset "rand(::DirMult, n): χ² goodness of fit to the exact pmf" begin
        for (alpha, N) in (([1.5, 2.0, 3.0], 5), ([0.3, 0.8, 0.5, 1.2], 4))
            n = 20000
            X = rand(DirMult(alpha, N), n; seed = 77)
            stat, df = sm_gof(X, N, x -> sm_logpmf(x, alpha))
            @test od_chisq_upper(df, stat) > 1e-6
            # The same statistic rejects the multinomial with the same mean
            # (a DM of precision 1e12) and a DM of twice the precision.
            p = alpha ./ sum(alpha)
            for wrong in (p .* 1e12, 2 .* alpha)
                stat_w, _ = sm_gof(X, N, x -> sm_logpmf(x, wrong))
                @test od_chisq_upper(df, stat_w) < 1e-6
            end
        end
    end

    @testset "rand(::DirMult, n): the ends of the α range" begin
        # α = 1e-300: the Dirichlet proportions are a point mass on one
        # category, so each draw puts its whole size there, on a category
        # drawn uniformly (all α equal).
        X = rand(DirMult(fill(1e-300, 5), 100), 400; seed = 5)
        @test all(b -> count(!iszero, X[:, b]) == 1 && maximum(X[:, b]) == 100, 1:400)
        hits = vec(sum(X .> 0; dims = 2))
        @test all(h -> abs(h - 80) <= 6 * sqrt(400 * 0.2 * 0.8), hits)
        # Tiny and huge α in one vector: everything goes to the huge one.
        Y = rand(DirMult([1e-300, 1e300, 1.0], 1000), 50; seed = 6)
        @test all(==(1000), Y[2, :])
        # Huge α alike: the multinomial; its variance N p (1 - p).
        Z = rand(DirMult([1e300, 1e300], 40), 20000; seed = 7)
        z = Float64.(Z[1, :])
        zbar = sum(z) / length(z)
        @test abs(zbar - 20) <= 6 * sqrt(10 / 20000)
        @test abs(sum((z .- zbar) .^ 2) / (length(z) - 1) - 10) <= 0.6
        # Outside [1e-306, 1e306]: the library's error, naming the entry.
        for bad in ([1.0, 1e-307], [1.0, 2e307], [1.0, -1.0], [1.0, NaN])
            e = caught(() -> rand(DirMult(bad, 3), 2; seed = 1))
            @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
            @test occursin("d.alpha[2]", e.message)
        end
        e = caught(() -> rand(DirMult([1.0, 2.0], 3), 3; size = [1, -2, 3]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("size[2] = -2", e.message)
        e = caught(() -> rand(DirMult([1.0, 2.0], 2^31), 1))
        @test e isa DirmnError && occursin("size", e.message)
        e = caught(() -> rand(DirMult([1.0, 2.0], 3), 2; size = [1, 2, 3]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_DIMENSION_MISMATCH
        @test occursin("size", e.message)
        e = caught(() -> rand(DirMult([1.0, 2.0], 3), 0))
        @test e isa DirmnError && occursin("n (0)", e.message)
    end

    @testset "rand(::DirMultMixtureModel, n)" begin
        A = [10.0 1.0 2.0; 1.0 10.0 2.0; 1.0 1.0 2.0]
        d = DirMultMixtureModel(A, [0.2, 0.5, 0.3], 25)
        @test ncomponents(d) == 3 && length(d) == 3
        r = rand(d, 6000; seed = 8)
        X, z = r
        @test X === r.counts && z === r.component
        @test size(X) == (3, 6000) && all(==(25), sum(X; dims = 1))
        @test z isa Vector{Int} && all(in(1:3), z)
        # Components in proportion to the weights (binomial, 6 standard errors).
        for (j, w) in enumerate([0.2, 0.5, 0.3])
            @test abs(count(==(j), z) - 6000w) <= 6 * sqrt(6000 * w * (1 - w))
        end
        # Each component's draws have its DM's mean.
        for j in 1:3
            cols = findall(==(j), z)
            m, v, _ = sm_moments(A[:, j], 25)
            for c in 1:3
                xbar = sum(X[c, cols]) / length(cols)
                @test abs(xbar - m[c]) <= 6 * sqrt(v[c] / length(cols))
            end
        end
        @test rand(d, 6000; seed = 8) == r                  # reproducible
        @test rand(d, 100; seed = 9).component != z[1:100]
        # Given components: returned as given, and row b is the draw of
        # DM(α_component[b], size) with the same seed (draws depend on the
        # seed, row, α and size alone).
        comp = [1, 3, 2, 2, 1, 3, 3, 1]
        g = rand(d, 8; seed = 4, component = comp)
        @test g.component == comp
        for b in 1:8
            @test g.counts[:, b] == rand(DirMult(A[:, comp[b]], 25), 8; seed = 4)[:, b]
        end
        # Weight 0 never drawn; the weights need not sum to 1.
        @test all(==(2), rand(DirMultMixtureModel(A, [0.0, 3.0, 0.0], 5), 200; seed = 1).component)
        # Built from DirMults or from a fitted mixture.
        dm = DirMultMixtureModel([DirMult(A[:, j]) for j in 1:3], [0.2, 0.5, 0.3], 25)
        @test dm.alpha == A && rand(dm, 50; seed = 8) == rand(d, 50; seed = 8)
        fm = fit_mixture(X, 3; seed = 1)
        md = DirMultMixtureModel(fm, 10)
        @test md.alpha == fm.alpha && md.mixture_weights == fm.mixture_weights && md.size == 10
        close(fm)
        @test all(==(25), sum(rand(MersenneTwister(2), d, 10).counts; dims = 1))
        @test rand(d, 5; seed = 1, output = :sparse).counts isa SparseMatrixCSC
        # Bad input, named.
        e = caught(() -> rand(d, 3; component = [1, 4, 2], seed = 1))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("component[2] = 4", e.message)
        e = caught(() -> rand(d, 3; component = [1, 2]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_DIMENSION_MISMATCH
        e = caught(() -> rand(DirMultMixtureModel(A, [0.2, -0.5, 0.3], 5), 3; seed = 1))
        @test e isa DirmnError && occursin("mixture_weights[2]", e.message)
        e = caught(() -> rand(DirMultMixtureModel([1.0 1.0; 1.0 0.0], nothing, 5), 3))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("d.alpha[2, 2]", e.message)
        @test caught(() -> DirMultMixtureModel(A, [0.5, 0.5], 5)) isa DirmnError
    end

    @testset "rand(::DirMultRowwise)" begin
        # Alternating α: each half's draws have its DM's moments.
        a1, a2 = [5.0, 1.0, 0.5], [0.2, 0.2, 4.0]
        n = 8000
        Aw = hcat([isodd(b) ? a1 : a2 for b in 1:n]...)
        sizes = [isodd(b) ? 12 : 40 for b in 1:n]
        d = DirMultRowwise(Aw, sizes)
        @test nobs(d) == n && ncategories(d) == 3
        X = rand(d; seed = 21)
        @test size(X) == (3, n) && vec(sum(X; dims = 1)) == sizes
        for (alpha, N, cols) in ((a1, 12, 1:2:n), (a2, 40, 2:2:n))
            m, v, _ = sm_moments(alpha, N)
            for c in 1:3
                xbar = sum(X[c, cols]) / length(cols)
                @test abs(xbar - m[c]) <= 6 * sqrt(v[c] / length(cols))
            end
        end
        @test rand(d; seed = 21) == X && rand(d; seed = 22) != X
        # obsdim = 1: the transposed layout gives the transposed table.
        d1 = DirMultRowwise(permutedims(Aw), sizes; obsdim = 1)
        @test rand(d1; seed = 21) == permutedims(X)
        # One size for every row; sparse output.
        S = rand(DirMultRowwise(Aw[:, 1:10], 7); seed = 1, output = :sparse)
        @test S isa SparseMatrixCSC && all(==(7), sum(S; dims = 1))
        e = caught(() -> rand(DirMultRowwise([1.0 2.0; 3.0 0.0], 5); seed = 1))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("d.alpha[2, 2]", e.message)
        @test caught(() -> DirMultRowwise(Aw, [1, 2.5])) isa DirmnError
    end

    @testset "rand(...; first_row): a block of the seed's table (issue #31)" begin
        # first_row = i (the seed's draws before this call's, as in every
        # binding) draws observations i + 1, i + 2, ... of the table the seed
        # gives: blocks at any cut make the whole table.
        d = DirMult([0.3, 2.0, 1.0, 0.05], 25)
        X = rand(d, 9; seed = 4)
        for cut in (1, 4, 8)
            @test hcat(rand(d, cut; seed = 4), rand(d, 9 - cut; seed = 4, first_row = cut)) == X
        end
        @test rand(d, 3; seed = 4, first_row = 0) == X[:, 1:3]
        @test rand(d; seed = 4, first_row = 5) == X[:, 6]
        @test rand(d, 2; seed = 4, first_row = 2, obsdim = 1) == permutedims(X[:, 3:4])
        @test rand(d, 2; seed = 4, first_row = 2, size = [25, 0])[:, 1] == X[:, 3]
        # Mixtures: the components drawn from the weights follow it too.
        m = DirMultMixtureModel([10.0 0.5; 0.5 10.0; 1.0 1.0], [0.4, 0.6], 30)
        Y, z = rand(m, 12; seed = 9)
        Y2, z2 = rand(m, 5; seed = 9, first_row = 7)
        @test Y2 == Y[:, 8:12] && z2 == z[8:12]
        Y3, _ = rand(m, 2; seed = 9, first_row = 2, component = z[3:4])
        @test Y3 == Y[:, 3:4]
        # One α per observation: observation b at its own α, drawn as
        # observation first_row + b of the seed's table.
        A = [1.0 0.2 3.0 0.5 2.0; 0.5 4.0 1.0 1.0 0.1; 2.0 1.0 0.3 6.0 1.0]
        Z = rand(DirMultRowwise(A, 15); seed = 2)
        @test rand(DirMultRowwise(A[:, 3:5], 15); seed = 2, first_row = 2) == Z[:, 3:5]
        @test rand(DirMultRowwise(permutedims(A[:, 2:3]), 15; obsdim = 1); seed = 2,
                   first_row = 1) == permutedims(Z[:, 2:3])
        for bad in (-1, -3)
            e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT rand(d, 2; seed = 1, first_row = bad)
            @test occursin("first_row ($bad) must be >= 0", e.message)
        end
        # The library's check: the rows must fit below 2^63.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT rand(d, 3; seed = 1,
                                                            first_row = typemax(Int64))
        @test occursin("first_row", e.message)
        @dirmn_error :DIRMN_ERROR_OVERFLOW rand(d, 1; seed = 1, first_row = big(2)^64)
    end

    @testset "simulate" begin
        rng = MersenneTwister(30)
        # A table with an empty category (3).
        X = rand(DirMult([2.0, 1.0, 1e-300, 3.0], 20), 60; seed = 1)
        X[:, 5] .= 0                                  # a row of zeros
        X[:, 6] = [50, 0, 0, 7]                       # another total
        @test all(iszero, X[3, :])
        f = fit_dirmn(X)
        @test f.totals == vec(sum(X; dims = 1)) && f.obsdim == 2
        Ys = simulate(f; nsim = 3, seed = 4)
        @test length(Ys) == 3 && all(Y -> Y isa Matrix{Int} && size(Y) == size(X), Ys)
        @test all(Y -> vec(sum(Y; dims = 1)) == f.totals, Ys)
        @test all(Y -> all(iszero, Y[3, :]), Ys)     # α̂ = 0: no counts
        @test simulate(f; nsim = 1, seed = 4)[1] == Ys[1]
        @test Ys[2] != Ys[1]
        @test simulate(f; seed = 4, output = :sparse)[1] == Ys[1]
        # The category totals over many tables: mean Σ_b N_b p̂_v within 6
        # standard errors (Σ_b var_b).
        many = simulate(f; nsim = 400, seed = 5)
        p = f.alpha ./ sum(f.alpha)
        for v in (1, 2, 4)
            tot = [sum(Y[v, :]) for Y in many]
            want = sum(f.totals) * p[v]
            sd = sqrt(sum(sm_moments(f.alpha, N)[2][v] for N in f.totals))
            @test abs(sum(tot) / 400 - want) <= 6 * sd / sqrt(400)
        end
        # Observations as rows.
        f1 = fit_dirmn(permutedims(X); obsdim = 1)
        @test f1.obsdim == 1 && size(simulate(f1; seed = 1)[1]) == (60, 4)
        # At the multinomial limit: the multinomial with the proportions.
        M = repeat([6, 6, 6], 1, 30)
        fm = fit_dirmn(M)
        @test fm.multinomial_limit
        Ym = simulate(fm; seed = 2, nsim = 50)
        z = Float64[Y[1, b] for Y in Ym for b in 1:30]
        zbar = sum(z) / length(z)
        @test abs(zbar - 6) <= 6 * sqrt(18 * (1 / 3) * (2 / 3) / length(z))
        # The multinomial variance, not the DM's at the fitted table's spread (0).
        @test abs(sum((z .- zbar) .^ 2) / (length(z) - 1) - 4) <= 0.9
        # Real-valued counts have no integer totals.
        fr = fit_dirmn([1.5 2.0; 0.25 3.0; 2.0 1.0]; real_valued = true)
        @test fr.totals == [3.75, 6.0]
        e = caught(() -> simulate(fr; seed = 1))
        @test e isa DirmnError && occursin("observation 1", e.message) &&
              occursin("total 3.75, not an integer", e.message)
        @test caught(() -> simulate(f; nsim = 0)) isa ArgumentError

        # Mixtures: the totals, the orientation, reproducible.
        mX = rand(DirMultMixtureModel([20.0 1.0; 1.0 20.0], nothing, 30), 80; seed = 3,
                  obsdim = 1).counts
        mX[7, :] .= [90, 10]
        m = fit_mixture(mX, 2; obsdim = 1, seed = 1)
        @test m.totals == vec(sum(mX; dims = 2))
        S = simulate(m; nsim = 2, seed = 9)
        @test all(Y -> size(Y) == (80, 2) && vec(sum(Y; dims = 2)) == m.totals, S)
        @test simulate(m; nsim = 2, seed = 9) == S && S[1] != S[2]
        # Both components appear (weights near 1/2 each; the columns of a
        # draw of component 1 are mostly category 1).
        major = [Y[b, 1] > Y[b, 2] for Y in S for b in 1:80 if b != 7]
        @test 40 <= count(major) <= 118

        # Regressions: observation b from DM(predicted α_b, N_b); the mean
        # over many tables within 6 standard errors.
        n = 40
        xs = range(-1, 1; length = n)
        Xd = hcat(ones(n), xs)
        Aw = vcat([exp.([1.0 + x, 0.5, 1.0 - x])' for x in xs]...)
        sizes = [20 + 3b for b in 1:n]
        Y = rand(DirMultRowwise(Aw, sizes; obsdim = 1); seed = 12)
        rg = fit_dirmn_reg(Y, Xd)
        @test rg.totals == sizes && rg.obsdim == 1 && rg.design == Xd
        Sr = simulate(rg; nsim = 300, seed = 13)
        @test all(T -> size(T) == (n, 3) && vec(sum(T; dims = 2)) == sizes, Sr)
        Ahat = predict(rg, Xd)
        for b in (1, 20, 40), v in 1:3
            m_, var_, _ = sm_moments(Ahat[b, :], sizes[b])
            xbar = sum(T[b, v] for T in Sr) / 300
            @test abs(xbar - m_[v]) <= 6 * sqrt(var_[v] / 300)
        end
        @test simulate(rg; seed = 13)[1] == Sr[1]
        close(rg)
        e = caught(() -> simulate(rg; seed = 1))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_NULL_POINTER
    end

    @testset "Matrix and sparse of a DirmnCounts" begin
        X = [1 0 3 2 0; 2 3 0 1 4; 0 4 1 5 2]
        for c in (DirmnCounts(X), DirmnCounts(sparse(X)), DirmnCounts(Int32.(X)))
            @test Matrix(c) == X && Matrix(c) isa Matrix{Int}
            @test Array(c) == X
            S = sparse(c)
            @test S isa SparseMatrixCSC{Int,Int} && S == sparse(X) && nnz(S) == nnz(sparse(X))
            @test Matrix{Float32}(c) == Float32.(X) && Matrix{Int32}(c) isa Matrix{Int32}
            close(c)
        end
        # Observations as rows: the shape of the table given.
        Xt = permutedims(X)
        for c in (DirmnCounts(Xt; obsdim = 1), DirmnCounts(sparse(Xt); obsdim = 1),
                  DirmnCounts(transpose(sparse(X)); obsdim = 1))
            @test size(c) == (5, 3) && Matrix(c) == Xt && sparse(c) == sparse(Xt)
            close(c)
        end
        # A vector: one observation.
        c = DirmnCounts([0, 3, 1])
        @test Matrix(c) == reshape([0, 3, 1], 3, 1) && Array(c) == [0, 3, 1]
        @test sparse(c) == sparse(reshape([0, 3, 1], 3, 1))
        close(c)
        # A table of zeros.
        c = DirmnCounts(zeros(Int, 3, 2))
        @test Matrix(c) == zeros(Int, 3, 2) && nnz(sparse(c)) == 0 && size(sparse(c)) == (3, 2)
        close(c)
        # Real-valued counts come back as Float64; integer copies refuse them.
        R = [0.5 1.0; 2.25 0.0]
        c = DirmnCounts(R; real_valued = true)
        @test Matrix(c) == R && Matrix(c) isa Matrix{Float64} && sparse(c) == sparse(R)
        e = caught(() -> Matrix{Int}(c))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        close(c)
        # A count beyond Int32, named by its cell.
        big = [1 2; 3 2^40]
        c = DirmnCounts(big)
        @test Matrix(c) == big
        e = caught(() -> Matrix{Int32}(c))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_OVERFLOW && occursin("[2, 2]", e.message)
        @test caught(() -> Matrix{Int16}(c)) isa ArgumentError
        close(c)
        e = caught(() -> Matrix(c))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_NULL_POINTER
    end
end
