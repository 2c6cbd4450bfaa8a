# The group test (issue #30: test_groups over dirmn_test_groups), against
# references computed here with the package's own single-α fit:
# - loglik_null = fit_dirmn of every observation with a group, loglik_groups
#   = the sum of fit_dirmn of each group's observations, statistic twice
#   their difference; dof = (G - 1) P with G the groups with counts and P
#   the categories with counts;
# - the p-value against the χ² tail, in closed form for even degrees of
#   freedom, e^(-x/2) Σ_{j < df/2} (x/2)^j / j!;
# - the bootstrap p-value: in [1/(B+1), 1] on the grid k/(B+1),
#   reproducible, 1/(B+1) where the groups differ by far;
# - left-out observations, groups without counts, bad input;
# - HMP 2.0.1's values on its saliva, throat and tonsils tables (test/data,
#   copies of the repository's tests/data): Xmcupo.sevsample's statistics
#   and p-value, Xdc.sevsample's (est = "mle") likelihood ratio,
#   Xoc.sevsample's (epsilon = 1e-10) statistics and p-values.
# And the proportion test (test_proportions over dirmn_test_proportions):
# HMP 2.0.1's Xsc.onesample on the same tables against another table's
# pooled proportions; Pearson's χ² for one observation (θ = 0); the +Inf
# case, strided and other inputs, bad proportions.

# An HMP table (samples are rows of the CSV) as categories × observations.
function gt_hmp(name::AbstractString)
    lines = readlines(joinpath(@__DIR__, "data", "hmp_$name.csv"))
    return hcat([parse.(Int, split(l, ',')[2:end]) for l in lines[2:end]]...)
end

# The tables of `names` side by side and each observation's table name.
function gt_hmp_groups(names...)
    tabs = [gt_hmp(n) for n in names]
    return hcat(tabs...), vcat([fill(n, size(t, 2)) for (n, t) in zip(names, tabs)]...)
end

gt_relerr(x, ref) = abs(x - ref) / abs(ref)

# χ²'s upper tail for an even number of degrees of freedom.
function gt_chisq_upper_even(df::Integer, x::Real)
    @assert iseven(df)
    h = x / 2
    term = 1.0
    s = 1.0
    for j in 1:(df ÷ 2 - 1)
        term *= h / j
        s += term
    end
    return exp(-h) * s
end

# The statistic and its parts from fit_dirmn on the observations (columns)
# of X in each group; `labels[b]` nothing leaves observation b out.
function gt_reference(X::AbstractMatrix, labels::AbstractVector)
    keep = findall(!isnothing, labels)
    null = fit_dirmn(X[:, keep]).loglik
    alt = 0.0
    for g in unique(labels[keep])
        cols = findall(==(g), labels)
        sum(X[:, cols]) == 0 && continue
        alt += fit_dirmn(X[:, cols]).loglik
    end
    return null, alt, 2 * (alt - null)
end

const GT_A = [4.0, 2.0, 1.0, 3.0]
const GT_B = [1.0, 2.0, 4.0, 3.0]

@testset "test_groups" begin
    @testset "the χ² reference" begin
        @test abs(gt_chisq_upper_even(2, 3.0) - exp(-1.5)) <= 1e-15
        @test abs(gt_chisq_upper_even(8, 7.5) - od_chisq_upper(8, 7.5)) <= 1e-14
    end

    # Two groups of 25 from different DMs, a third of 20 like the first;
    # an empty category (5) and a row of zeros (observation 3).
    XA = rand(DirMult(vcat(GT_A, 1e-300), 40), 25; seed = 1)
    XB = rand(DirMult(vcat(GT_B, 1e-300), 60), 25; seed = 2)
    XC = rand(DirMult(vcat(GT_A, 1e-300), 30), 20; seed = 3)
    X = hcat(XA, XB, XC)
    X[:, 3] .= 0
    labels = vcat(fill("a", 25), fill("b", 25), fill("c", 20))

    @testset "statistic, logliks, dof, p-value against fit_dirmn" begin
        t = test_groups(X, labels)
        null, alt, stat = gt_reference(X, labels)
        @test t isa GroupTest
        @test isapprox(t.loglik_null, null; rtol = 1e-9)
        @test isapprox(t.loglik_groups, alt; rtol = 1e-9)
        @test isapprox(t.statistic, stat; rtol = 1e-6, atol = 1e-6)
        @test t.statistic ≈ 2 * (t.loglik_groups - t.loglik_null)
        @test t.groups == 3 && t.categories == 4          # category 5 has no counts
        @test t.dof == (3 - 1) * 4 == dof(t)
        @test abs(t.pvalue - gt_chisq_upper_even(8, t.statistic)) <=
              1e-10 * t.pvalue + 1e-300
        @test pvalue(t) === t.pvalue
        @test t.pvalue < 1e-6                              # group b differs
        @test t.converged === true
        @test t.bootstrap == 0 && t.pvalue_bootstrap == 1.0
        @test t.group == ["a", "b", "c"]
        # Observations as rows, a DirmnCounts, a sparse table: the same test.
        t1 = test_groups(permutedims(X), labels; obsdim = 1)
        @test t1.statistic ≈ t.statistic && t1.dof == t.dof
        c = DirmnCounts(sparse(X))
        @test test_groups(c, labels).statistic ≈ t.statistic
        close(c)
        # Labels of any type; the same partition gives the same test.
        @test test_groups(X, vcat(fill(:x, 25), fill(2, 25), fill(:x, 20))).statistic ≈
              test_groups(X, vcat(fill("a", 25), fill("b", 25), fill("a", 20))).statistic
    end

    @testset "left out: missing labels, groups without counts" begin
        # Groups a and c alone (b left out): same DMs, so a large p-value;
        # the reference on the same observations.
        lab = Union{Nothing,String}[l == "b" ? nothing : l for l in labels]
        t = test_groups(X, [l === nothing ? missing : l for l in lab])
        null, alt, stat = gt_reference(X, lab)
        @test isapprox(t.statistic, stat; rtol = 1e-6, atol = 1e-6)
        @test t.groups == 2 && t.dof == 4
        @test t.group == ["a", "c"]
        @test test_groups(X, lab).statistic ≈ t.statistic   # nothing as missing
        # A group whose observations have no counts is not counted in G.
        Z = hcat(X, zeros(Int, 5, 4))
        tz = test_groups(Z, vcat(labels, fill("z", 4)))
        @test tz.groups == 3 && tz.dof == 8 && tz.statistic ≈ test_groups(X, labels).statistic
        @test tz.group == ["a", "b", "c", "z"]
    end

    @testset "parametric bootstrap" begin
        B = 39
        # Under the null (a against c): a p-value on the grid k/(B + 1).
        ac = vcat(1:25, 51:70)
        lab = labels[ac]
        t = test_groups(X[:, ac], lab; bootstrap = B, seed = 17)
        @test t.bootstrap == B
        @test 1 / (B + 1) <= t.pvalue_bootstrap <= 1
        k = t.pvalue_bootstrap * (B + 1)
        @test abs(k - round(k)) <= 1e-9
        @test test_groups(X[:, ac], lab; bootstrap = B, seed = 17).pvalue_bootstrap ==
              t.pvalue_bootstrap                            # reproducible
        # Other seeds give other bootstrap samples: not every p-value equal.
        ps = [test_groups(X[:, ac], lab; bootstrap = B, seed = s).pvalue_bootstrap
              for s in 1:6]
        @test length(unique(ps)) > 1
        # The observed statistic itself does not depend on the bootstrap.
        @test t.statistic ≈ test_groups(X[:, ac], lab).statistic
        @test t.pvalue ≈ test_groups(X[:, ac], lab).pvalue
        # Far apart groups: no bootstrap table reaches the statistic.
        tb = test_groups(X, labels; bootstrap = B, seed = 3)
        @test tb.pvalue_bootstrap == 1 / (B + 1)
        @test t.seed == 17 && tb.seed == 3
    end

    @testset "display" begin
        t = test_groups(X, labels; bootstrap = 9, seed = 2)
        s = sprint(show, t)
        @test occursin("GroupTest(statistic=", s) && occursin("pvalue_bootstrap=", s)
        m = sprint(show, MIME"text/plain"(), t)
        @test occursin("3 groups with counts", m) && occursin("4 categories", m)
        @test occursin("χ² with 8 dof", m) && occursin("from 9 tables (seed 2)", m)
        @test !occursin("bootstrap", sprint(show, MIME"text/plain"(), test_groups(X, labels)))
    end

    @testset "HMP's saliva, throat and tonsils: Xmcupo" begin
        X3, l3 = gt_hmp_groups("saliva", "throat", "tonsils")
        @test size(X3) == (21, 70)
        t = test_groups(X3, l3; statistic = :xmcupo)
        @test t.statistic_kind === :xmcupo
        # HMP 2.0.1: Xmcupo.sevsample(list(saliva, throat, tonsils))
        @test gt_relerr(t.statistic, 150.443851750275) <= 1e-9
        @test t.dof == (3 - 1) * (21 - 1) == dof(t)
        @test t.groups == 3 && t.categories == 21
        # The log-likelihoods are still the fits'.
        l = test_groups(X3, l3)
        @test (t.loglik_null, t.loglik_groups) == (l.loglik_null, l.loglik_groups)
        st = test_groups(gt_hmp_groups("saliva", "throat")...; statistic = :xmcupo)
        @test gt_relerr(st.statistic, 98.3973853587345) <= 1e-9
        tt = test_groups(gt_hmp_groups("throat", "tonsils")...; statistic = :xmcupo)
        @test gt_relerr(tt.statistic, 3.24781427884673) <= 1e-9
        @test gt_relerr(tt.pvalue, 0.99999189153229) <= 1e-9
        @test tt.dof == 20
        @test occursin("statistic_kind=:xmcupo", sprint(show, tt))
        @test occursin("HMP's Xmcupo", sprint(show, MIME"text/plain"(), tt))
    end

    @testset "HMP's saliva, throat and tonsils: Xoc" begin
        X3, l3 = gt_hmp_groups("saliva", "throat", "tonsils")
        t = test_groups(X3, l3; statistic = :xoc)
        @test t.statistic_kind === :xoc
        # HMP 2.0.1: Xoc.sevsample(list(saliva, throat, tonsils), epsilon = 1e-10)
        @test gt_relerr(t.statistic, 107.907114781439) <= 1e-8
        @test t.dof == 3 - 1 == dof(t)
        @test gt_relerr(t.pvalue, gt_chisq_upper_even(2, t.statistic)) <= 1e-9
        @test t.groups == 3 && t.categories == 21 && t.converged
        # The statistic is the likelihood ratio against the shared-precision
        # fit, loglik_null; loglik_groups is still the groups' own fits'. One
        # DM for all is a shared-precision fit with equal proportions.
        l = test_groups(X3, l3)
        @test t.loglik_groups == l.loglik_groups
        @test l.loglik_null < t.loglik_null < t.loglik_groups
        @test gt_relerr(t.statistic, 2 * (t.loglik_groups - t.loglik_null)) <= 1e-12
        # Xoc.sevsample(list(saliva, throat)), Xoc.sevsample(list(throat, tonsils))
        st = test_groups(gt_hmp_groups("saliva", "throat")...; statistic = :xoc)
        @test gt_relerr(st.statistic, 27.9373973570764) <= 1e-8
        @test gt_relerr(st.pvalue, 1.25304413067795e-07) <= 1e-7
        @test st.dof == 1
        tt = test_groups(gt_hmp_groups("throat", "tonsils")...; statistic = :xoc)
        @test gt_relerr(tt.statistic, 25.5870610596612) <= 1e-8
        @test gt_relerr(tt.pvalue, 4.22865448324039e-07) <= 1e-7
        @test tt.dof == 1
        # Labels in another order (and another type) test the same groups.
        X2, l2 = gt_hmp_groups("throat", "tonsils")
        @test test_groups(X2, Symbol.(l2); statistic = :xoc).statistic ≈ tt.statistic
        @test test_groups(permutedims(X2), l2; statistic = :xoc, obsdim = 1).statistic ≈
              tt.statistic
        @test occursin("statistic_kind=:xoc", sprint(show, tt))
        m = sprint(show, MIME"text/plain"(), tt)
        @test occursin("HMP's Xoc", m) && occursin("one shared overdispersion", m)
        @test occursin("shared precision", m) && occursin("χ² with 1 dof", m)
    end

    @testset "HMP's saliva, throat and tonsils: the likelihood ratio" begin
        X3, l3 = gt_hmp_groups("saliva", "throat", "tonsils")
        t = test_groups(X3, l3)
        @test t.statistic_kind === :lrt
        # HMP 2.0.1: Xdc.sevsample(list(saliva, throat, tonsils), est = "mle")
        @test gt_relerr(t.statistic, 529.509073461) <= 1e-9
        @test t.dof == (3 - 1) * 21
        @test test_groups(X3, l3; statistic = :lrt).statistic == t.statistic
        @test occursin("likelihood ratio", sprint(show, MIME"text/plain"(), t))
    end

    @testset "Xmcupo's parametric bootstrap" begin
        S = gt_hmp("saliva")
        halves = repeat(["a", "b"], 12)
        B = 39
        t = test_groups(S, halves; statistic = :xmcupo, bootstrap = B, seed = 5)
        @test t.statistic_kind === :xmcupo && t.bootstrap == B
        @test 1 / (B + 1) <= t.pvalue_bootstrap <= 1
        k = t.pvalue_bootstrap * (B + 1)
        @test abs(k - round(k)) <= 1e-9
        again = test_groups(S, halves; statistic = :xmcupo, bootstrap = B, seed = 5)
        @test again.pvalue_bootstrap == t.pvalue_bootstrap        # reproducible
        @test t.statistic == test_groups(S, halves; statistic = :xmcupo).statistic
        ps = [test_groups(S, halves; statistic = :xmcupo, bootstrap = 19,
                          seed = s).pvalue_bootstrap for s in 1:6]
        @test length(unique(ps)) > 1
        # Saliva against throat differ by far: no bootstrap table reaches it.
        st = test_groups(gt_hmp_groups("saliva", "throat")...; statistic = :xmcupo,
                         bootstrap = B, seed = 5)
        @test st.pvalue_bootstrap == 1 / (B + 1)
    end

    @testset "Xoc's parametric bootstrap" begin
        X2, l2 = gt_hmp_groups("throat", "tonsils")
        B = 49
        t = test_groups(X2, l2; statistic = :xoc, bootstrap = B, seed = 5)
        @test t.statistic_kind === :xoc && t.bootstrap == B && t.seed == 5
        @test t.statistic == test_groups(X2, l2; statistic = :xoc).statistic
        # The observed statistic is far out: no table drawn from the
        # shared-precision fit reaches it.
        @test t.pvalue_bootstrap == 1 / (B + 1)
        again = test_groups(X2, l2; statistic = :xoc, bootstrap = B, seed = 5)
        @test again.pvalue_bootstrap == t.pvalue_bootstrap        # reproducible
        # Saliva's observations 1, 2, 4, 5, ... against 3, 6, ... share their
        # overdispersion (Xoc 0.13): p-values on the grid k / (B + 1), varying
        # with the seed.
        S = gt_hmp("saliva")
        thirds = repeat(["a", "a", "b"], 8)
        @test test_groups(S, thirds; statistic = :xoc).pvalue > 0.5
        ps = [test_groups(S, thirds; statistic = :xoc, bootstrap = 19,
                          seed = s).pvalue_bootstrap for s in 1:6]
        for p in ps
            @test 1 / 20 <= p <= 1
            @test abs(p * 20 - round(p * 20)) <= 1e-9
        end
        @test length(unique(ps)) > 1
        @test occursin("from 19 tables (seed 3)",
                       sprint(show, MIME"text/plain"(),
                              test_groups(S, thirds; statistic = :xoc, bootstrap = 19,
                                          seed = 3)))
    end

    @testset "bad input" begin
        for bad in (:Xmcupo, :Xoc, :wald, :lrt2)
            e = caught(() -> test_groups(X, labels; statistic = bad))
            @test e isa ArgumentError
            @test occursin("statistic must be :lrt, :xmcupo or :xoc", e.msg)
        end
        e = caught(() -> test_groups(X, labels[1:10]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_DIMENSION_MISMATCH
        @test occursin("groups", e.message)
        e = caught(() -> test_groups(X, fill("a", 70)))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("groups", e.message)
        # Two labels, but one group without counts.
        e = caught(() -> test_groups(hcat(X, zeros(Int, 5, 2)), vcat(fill("a", 70), ["b", "b"])))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("groups", e.message)
        e = caught(() -> test_groups(X, labels; bootstrap = -1))
        @test e isa DirmnError && occursin("bootstrap", e.message)
        e = caught(() -> test_groups(X, labels; tolerance = 0))
        @test e isa DirmnError && occursin("tolerance", e.message)
        e = caught(() -> test_groups(X, labels; max_iterations = 0))
        @test e isa DirmnError && occursin("max_iterations", e.message)
        @test caught(() -> test_groups(X, fill(missing, 70))) isa ArgumentError
        @test caught(() -> test_groups(X, labels; seed = -1)) isa ArgumentError
        e = caught(() -> test_groups([1 -1; 2 3], [1, 2]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_COUNTS
    end
end

# A table's pooled proportions: each category's total over the grand total.
gt_pooled(X::AbstractMatrix) = vec(sum(X; dims = 2)) ./ sum(X)

@testset "test_proportions" begin
    S, T, O = gt_hmp("saliva"), gt_hmp("throat"), gt_hmp("tonsils")
    @test size(S) == (21, 24)
    pT = gt_pooled(T)

    @testset "HMP's Xsc.onesample" begin
        # HMP 2.0.1: Xsc.onesample(saliva, pi0) with pi0 the throat's pooled proportions
        t = test_proportions(S, pT)
        @test t isa ProportionTest
        @test gt_relerr(t.statistic, 366.142260583136) <= 1e-9
        @test t.dof == 20 == dof(t)
        @test t.nobs == 24 == nobs(t)
        @test t.categories == 21
        @test t.pvalue < 1e-60 && pvalue(t) === t.pvalue
        @test t.theta > 0
        # Xsc.onesample(tonsils, pi0), pi0 the throat's pooled proportions
        t = test_proportions(O, pT)
        @test gt_relerr(t.statistic, 5.17206513999273) <= 1e-9
        @test gt_relerr(t.pvalue, 0.999639605330565) <= 1e-9
        @test t.dof == 20 && t.nobs == 23
        # Xsc.onesample(throat, pi0), pi0 the pooled proportions of all three tables
        t = test_proportions(T, gt_pooled(hcat(S, T, O)))
        @test gt_relerr(t.statistic, 12.7067487387809) <= 1e-9
        @test gt_relerr(t.pvalue, 0.889608634576809) <= 1e-9
    end

    @testset "one observation: Pearson's χ²" begin
        # θ = 0, c = 1 / N: the statistic is Σ (x_v - N π0_v)² / (N π0_v).
        x = S[:, 1]
        N = sum(x)
        t = test_proportions(x, pT)
        @test t.theta == 0 && t.nobs == 1 && t.dof == 20
        @test gt_relerr(t.statistic, sum((x .- N .* pT) .^ 2 ./ (N .* pT))) <= 1e-12
        @test test_proportions(S[:, 1:1], pT).statistic ≈ t.statistic
    end

    @testset "the same test from every input" begin
        t = test_proportions(S, pT)
        @test test_proportions(permutedims(S), pT; obsdim = 1).statistic ≈ t.statistic
        @test test_proportions(sparse(S), pT).statistic ≈ t.statistic
        c = DirmnCounts(S)
        @test test_proportions(c, pT).statistic ≈ t.statistic
        close(c)
        # Strided views pass as they are (a positive stride) or are copied.
        v2 = zeros(41)
        v2[1:2:41] .= pT
        tv = test_proportions(S, view(v2, 1:2:41))
        @test (tv.statistic, tv.pvalue, tv.theta) == (t.statistic, t.pvalue, t.theta)
        r = reverse(pT)
        tr = test_proportions(S, view(r, 21:-1:1))
        @test (tr.statistic, tr.pvalue) == (t.statistic, t.pvalue)
        @test test_proportions(S, Float32.(pT)).statistic ≈ t.statistic rtol = 1e-5
        # Proportions within 1e-6 of summing to 1 are divided by their sum.
        @test test_proportions(S, pT .* (1 + 1e-7)).statistic ≈ t.statistic
        # Observations without counts are left out.
        tz = test_proportions(hcat(S, zeros(Int, 21, 2)), pT)
        @test tz.nobs == 24 && tz.statistic ≈ t.statistic && tz.theta ≈ t.theta
    end

    @testset "zero proportions" begin
        # A category with counts at proportion 0: Inf, p-value 0.
        p = copy(pT)
        p[3] += p[1]
        p[1] = 0
        @test sum(S[1, :]) > 0
        t = test_proportions(S, p)
        @test t.statistic == Inf && t.pvalue == 0
        @test t.categories == 20 && t.dof == 19
        # A category without counts at proportion 0: left out.
        t0 = test_proportions(vcat(S, zeros(Int, 1, 24)), vcat(pT, 0.0))
        t1 = test_proportions(S, pT)
        @test t0.categories == 21 && t0.dof == 20
        @test t0.statistic ≈ t1.statistic && t0.pvalue ≈ t1.pvalue
    end

    @testset "display" begin
        t = test_proportions(S, pT)
        s = sprint(show, t)
        @test occursin("ProportionTest(statistic=", s) && occursin("dof=20,", s)
        m = sprint(show, MIME"text/plain"(), t)
        @test occursin("HMP's Xsc", m) && occursin("24 observations with counts", m)
        @test occursin("21 categories", m) && occursin("χ² with 20 dof", m)
    end

    @testset "bad input" begin
        p = copy(pT)
        p[2] = -0.1
        e = caught(() -> test_proportions(S, p))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("proportions index 1 (0-based)", e.message)
        @test occursin("-0.1 is negative", e.message)
        @test occursin("[proportions[2] in Julia]", e.message)
        p[2] = NaN
        e = caught(() -> test_proportions(S, p))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("not finite", e.message) && occursin("[proportions[2] in Julia]", e.message)
        e = caught(() -> test_proportions(S, Union{Missing,Float64}[missing; pT[2:end]]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_PARAMETER
        @test occursin("proportions[1]", e.message)
        e = caught(() -> test_proportions(S, 2 .* pT))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("sum to 2", e.message)
        e = caught(() -> test_proportions(S, vcat(1.0, zeros(20))))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("at least two", e.message)
        e = caught(() -> test_proportions(zeros(Int, 21, 3), pT))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("no row has counts", e.message)
        for bad in (pT[1:20], vcat(pT, 0.0))
            e = caught(() -> test_proportions(S, bad))
            @test e isa DirmnError && e.name === :DIRMN_ERROR_DIMENSION_MISMATCH
            @test occursin("proportions has length $(length(bad))", e.message)
            @test occursin("21 categories", e.message)
        end
        # The length is checked in Julia before the library is called: on a
        # closed DirmnCounts the library would fail otherwise.
        c = DirmnCounts(S)
        close(c)
        e = caught(() -> test_proportions(c, pT[1:20]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_DIMENSION_MISMATCH
        e = caught(() -> test_proportions(c, pT))
        @test e isa DirmnError && e.name !== :DIRMN_ERROR_DIMENSION_MISMATCH
        @test caught(() -> test_proportions(S, pT; obsdim = 3)) isa ArgumentError
        e = caught(() -> test_proportions([1 -1; 2 3], [0.5, 0.5]))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_COUNTS
    end
end
