# Per-group likelihood-ratio tests (test_dirmn_groups over
# dirmn_reg_test_groups, issue #29: DRIMSeq's differential usage workflow)
# against references computed here:
# - each group's full and null fits by fit_dirmn_reg on the group's own
#   table of columns with counts (loglik to 1e-10 relative), the statistic
#   2 (loglik_full - loglik_null) and the degrees of freedom from their
#   definition;
# - Benjamini-Hochberg by a direct implementation (sorted, step-up minimum);
# - the p-values against the χ² tail: in closed form for even degrees of
#   freedom, e^(-x/2) Σ_{j < df/2} (x/2)^j / j!, else overdispersion.jl's
#   BigFloat series;
# - a group with one column with counts: NaN and its status; bad input.
# Uses mixture.jl's samplers, errors.jl's helpers, overdispersion.jl's tail.

# 12 samples in two conditions; genes of 1 to 5 transcripts. Gene "g3"'s
# second transcript is empty, gene "g5" has one transcript (untestable),
# column 4 belongs to no gene (missing); the condition shifts the usage of
# "g1" and "g4".
const GR_RNG = MersenneTwister(1729)
const GR_N = 12
const GR_SIZES = [("g1", 3), ("g2", 2), ("g3", 4), ("g4", 5), ("g5", 1), ("g6", 3), ("g7", 2)]
const GR_GROUPS = let g = Union{Missing,String}[]
    for (name, k) in GR_SIZES
        append!(g, fill(name, k))
        name == "g1" && push!(g, missing)       # column 4: no gene
    end
    g
end
const GR_V = length(GR_GROUPS)
const GR_COND = [b % 2 for b in 1:GR_N]
const GR_X = hcat(ones(GR_N), Float64.(GR_COND))
const GR_Y = let Y = zeros(Int, GR_N, GR_V)
    for (name, k) in GR_SIZES
        cols = findall(g -> g === name, GR_GROUPS)
        for b in 1:GR_N
            base = [1.0 + (j - 1) / max(k - 1, 1) for j in 1:k]
            if name in ("g1", "g4") && GR_COND[b] == 1
                base = reverse(base) .^ 3
            end
            p = mix_rdirichlet(GR_RNG, 30 .* base ./ sum(base))
            Y[b, cols] = mix_rmultinomial(GR_RNG, rand(GR_RNG, 40:90), p)
        end
        name == "g3" && (Y[:, cols[2]] .= 0)
    end
    Y[:, 4] = [rand(GR_RNG, 0:9) for _ in 1:GR_N]
    Y
end

# P(χ²_df ≥ x) for integer df: the closed form for even df, else the series.
function gr_chisq_tail(x::Real, df::Integer)
    iseven(df) || return od_chisq_upper(df, x)
    h = big(x) / 2
    term, s = one(BigFloat), one(BigFloat)
    for j in 1:(df ÷ 2 - 1)
        term *= h / j
        s += term
    end
    return Float64(exp(-h) * s)
end

# Benjamini-Hochberg over the non-NaN p-values: m p_(i) / i, the minimum
# from the largest down, capped at 1.
function gr_bh(p::AbstractVector)
    out = fill(NaN, length(p))
    idx = findall(!isnan, p)
    m = length(idx)
    o = idx[sortperm(p[idx])]
    running = 1.0
    for i in m:-1:1
        running = min(running, m * p[o[i]] / i)
        out[o[i]] = running
    end
    return out
end

# The group's columns with counts.
gr_cols(Y, groups, name) =
    [v for v in 1:size(Y, 2) if groups[v] === name && sum(Y[:, v]) > 0]

@testset "test_dirmn_groups" begin
    @testset "$model: each group's fits, statistic, dof, χ² tails, BH" for model in
                                                                          (:meanprecision,
                                                                           :loglinear)
        t = test_dirmn_groups(GR_Y, GR_X, GR_GROUPS; parametrization = model)
        @test t isa DirmnGroupTests
        @test t.group == [name for (name, _) in GR_SIZES]
        @test length(t) == length(GR_SIZES)
        @test t.tested == length(GR_SIZES) - 1
        @test t.parametrization === model && t.covariates == 2 && t.p_null == 1
        for (g, (name, _)) in enumerate(GR_SIZES)
            cols = gr_cols(GR_Y, GR_GROUPS, name)
            @test t.categories[g] == length(cols)
            if name == "g5"
                @test t.status[g] === :invalid_argument
                @test isnan(t.pvalue[g]) && isnan(t.padjusted[g]) && isnan(t.statistic[g])
                @test !t.converged[g]
                continue
            end
            @test t.status[g] === :ok
            @test t.converged[g]
            Yg = GR_Y[:, cols]
            full = fit_dirmn_reg(Yg, GR_X; parametrization = model)
            null = fit_dirmn_reg(Yg, GR_X[:, 1:1]; parametrization = model)
            @test abs(t.loglik_full[g] - full.loglik) <= 1e-10 * abs(full.loglik)
            @test abs(t.loglik_null[g] - null.loglik) <= 1e-10 * abs(null.loglik)
            @test abs(t.statistic[g] - 2 * (full.loglik - null.loglik)) <= 1e-9 * abs(full.loglik)
            k = length(cols)
            @test t.dof[g] == (model === :meanprecision ? k - 1 : k)
            @test t.dof[g] == dof(full) - dof(null)
            want = gr_chisq_tail(t.statistic[g], Int(t.dof[g]))
            @test abs(t.pvalue[g] - want) <= 1e-10 * want + 1e-300
        end
        bh = gr_bh(t.pvalue)
        @test isnan.(t.padjusted) == isnan.(bh)
        @test all(abs.(filter(!isnan, t.padjusted .- bh)) .<= 1e-14 .* filter(!isnan, bh))
        @test pvalue(t) === t.pvalue && dof(t) === t.dof
        if model === :meanprecision
            # the genes whose usage changes with the condition are found
            @test t.padjusted[1] < 0.05 && t.padjusted[4] < 0.05
        end
    end

    @testset "labels, orientation, weights, display" begin
        t = test_dirmn_groups(GR_Y, GR_X, GR_GROUPS)
        # `nothing` leaves a column out as `missing` does; integer labels
        lab = Union{Nothing,Int}[g === missing ? nothing : parse(Int, g[2:end]) for g in GR_GROUPS]
        u = test_dirmn_groups(GR_Y, GR_X, lab)
        @test u.group == collect(1:7) && eltype(u.group) == Int
        @test isequal(u.pvalue, t.pvalue) && u.status == t.status
        # a categories × observations table (obsdim = 2)
        v = test_dirmn_groups(permutedims(GR_Y), GR_X, GR_GROUPS; obsdim = 2)
        @test isequal(v.loglik_full, t.loglik_full)
        # integer weights are repeated rows
        w = [b <= 3 ? 2.0 : 1.0 for b in 1:GR_N]
        tw = test_dirmn_groups(GR_Y, GR_X, GR_GROUPS; weights = w)
        rep = vcat(1:3, 1:GR_N)
        tr = test_dirmn_groups(GR_Y[rep, :], GR_X[rep, :], GR_GROUPS)
        ok = tw.status .=== :ok
        @test all(abs.(tw.loglik_full[ok] .- tr.loglik_full[ok]) .<= 1e-8 .* abs.(tr.loglik_full[ok]))
        s = sprint(show, MIME"text/plain"(), t)
        @test occursin("7 groups, 6 tested, 1 not", s) && occursin("invalid_argument", s)
        @test occursin("DirmnGroupTests(meanprecision, groups=7, tested=6", sprint(show, t))
    end

    @testset "hold_precision: the null fit at the full fit's precision; warnings" begin
        t = test_dirmn_groups(GR_Y, GR_X, GR_GROUPS)
        h = test_dirmn_groups(GR_Y, GR_X, GR_GROUPS; hold_precision = true)
        @test h.hold_precision && !t.hold_precision
        ok = t.status .=== :ok
        @test h.status == t.status && h.dof[ok] == t.dof[ok]
        @test all(abs.(h.loglik_full[ok] .- t.loglik_full[ok]) .<= 1e-10 .* abs.(t.loglik_full[ok]))
        # a constrained null fit: its loglik no larger, the statistic no smaller
        @test all(h.loglik_null[ok] .<= t.loglik_null[ok] .+ 1e-9 .* abs.(t.loglik_null[ok]))
        @test all(h.statistic[ok] .>= t.statistic[ok] .- 1e-9 .* abs.(t.loglik_full[ok]))
        want = gr_chisq_tail.(h.statistic[ok], Int.(h.dof[ok]))
        @test all(abs.(h.pvalue[ok] .- want) .<= 1e-10 .* want .+ 1e-300)
        @test occursin("at the full fit's precision", sprint(show, MIME"text/plain"(), h))
        r = @test_logs (:warn, r"test_dirmn_groups: the fits of \d+ of the 6 groups tested stopped without convergence") test_dirmn_groups(
            GR_Y, GR_X, GR_GROUPS; max_iterations = 1)
        @test !all(r.converged[r.status .=== :ok])
        @test_logs test_dirmn_groups(GR_Y, GR_X, GR_GROUPS)    # converges: no warning
    end

    @testset "bad input" begin
        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH test_dirmn_groups(GR_Y, GR_X,
                                                                          GR_GROUPS[1:end-1])
        @test occursin("groups has length $(GR_V - 1)", msg(e))
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT test_dirmn_groups(GR_Y, GR_X, GR_GROUPS;
                                                                     p_null = 2)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT test_dirmn_groups(GR_Y, GR_X[:, 1:1],
                                                                     GR_GROUPS)
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH test_dirmn_groups(GR_Y, GR_X[1:end-1, :],
                                                                       GR_GROUPS)
        Xn = copy(GR_X)
        Xn[5, 2] = NaN
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER test_dirmn_groups(GR_Y, Xn, GR_GROUPS)
        @test occursin("X[5, 2]", msg(e))
        @test caught(() -> test_dirmn_groups(GR_Y, GR_X, GR_GROUPS; parametrization = :dm)) isa
              ArgumentError
        @test caught(() -> test_dirmn_groups(GR_Y, GR_X, fill(missing, GR_V))) isa ArgumentError
    end
end
