# The group test's power by simulation (issue #30: power_groups over
# dirmn_power_groups), against the same tables drawn with the package's rand
# of a DirMultMixtureModel and tested with its test_groups: table t of a call
# with seed S is drawn with seed derived_key(S, 3, t), the library's stream
# of a power simulation's table (splitmix64's output mix, computed here).
# And the proportion test's power (power_proportions over
# dirmn_power_proportions), against tables drawn with rand of a DirMult and
# tested with test_proportions.

const PW_GAMMA = 0x9e3779b97f4a7c15

# splitmix64's output for a state started at `key`, advanced counter + 1 times.
function pw_random_bits(key::UInt64, counter::UInt64)
    z = key + (counter + UInt64(1)) * PW_GAMMA            # UInt64 arithmetic wraps
    z = (z ⊻ (z >> 30)) * 0xbf58476d1ce4e5b9
    z = (z ⊻ (z >> 27)) * 0x94d049bb133111eb
    return z ⊻ (z >> 31)
end

pw_derived_key(seed::UInt64, family::Integer, index::Integer) =
    pw_random_bits(pw_random_bits(seed, UInt64(family)), UInt64(index))

# (rejected, mean statistic) of `tables` tables drawn and tested through
# rand and test_groups, observation b of group groups[b] with size sizes[b].
function pw_replay(A::Matrix{Float64}, rows::Vector{Int}, sizes::Vector{Int}, tables::Int,
                   level::Float64, seed::UInt64)
    groups = vcat([fill(g, rows[g]) for g in 1:length(rows)]...)
    d = DirMultMixtureModel(A)
    rejected, stats = 0, Float64[]
    for t in 0:(tables - 1)
        X = rand(d, length(groups); component = groups, size = sizes,
                 seed = pw_derived_key(seed, 3, t)).counts
        withcounts = unique(groups[vec(sum(X; dims = 1)) .> 0])
        if length(withcounts) < 2
            push!(stats, 0.0)                                # not tested, not rejected
            continue
        end
        r = test_groups(X, groups)
        push!(stats, r.statistic)
        rejected += r.pvalue < level
    end
    return rejected, sum(stats) / tables
end

const PW_A3 = [2.0 3.0 2.0; 3.0 2.0 3.0; 1.0 1.0 1.5; 4.0 4.0 3.0; 0.5 0.5 0.5]

@testset "power_groups" begin
    @testset "splitmix64 reference" begin
        # splitmix64 seeded with 0 (Vigna's reference implementation).
        @test [pw_random_bits(UInt64(0), UInt64(i)) for i in 0:2] ==
              [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]
    end

    @testset "the share of tables rand + test_groups reject (seed $S)" for S in
            (UInt64(7), UInt64(2)^63 + UInt64(12345), typemax(UInt64))
        rows = [8, 11, 6]
        sizes = Any[collect(40:3:61), 55, collect(20:10:70)]
        flat = vcat(collect(40:3:61), fill(55, 11), collect(20:10:70))
        tables, level = 60, 0.1
        p = power_groups(PW_A3, rows, sizes; tables = tables, level = level, seed = S)
        rejected, meanstat = pw_replay(PW_A3, rows, flat, tables, level, S)
        @test p.tables == tables && p.level == level && p.seed == S
        @test p.rejected == rejected
        @test 0 < rejected < tables                    # neither extreme: a real check
        @test p.power == rejected / tables
        @test abs(p.mean_statistic - meanstat) <= 1e-9 * max(1.0, abs(meanstat))
    end

    @testset "groups without counts" begin
        # Group 2's observations have size 0: no table has two groups with counts.
        p = power_groups(PW_A3[:, 1:2], [5, 5], [30, 0]; tables = 20, seed = 1)
        @test p.rejected == 0 && p.power == 0.0 && p.mean_statistic == 0.0
        # A group without observations leaves the other two compared.
        q = power_groups(PW_A3, [10, 0, 12], 50; tables = 30, level = 0.2, seed = 3)
        rejected, meanstat = pw_replay(PW_A3, [10, 0, 12], fill(50, 22), 30, 0.2, UInt64(3))
        @test q.rejected == rejected
        @test abs(q.mean_statistic - meanstat) <= 1e-9 * max(1.0, meanstat)
    end

    @testset "equal alphas give the level; different ones are found" begin
        A = hcat(PW_A3[:, 1], PW_A3[:, 1])
        p = power_groups(A, 25, 60; tables = 400, level = 0.05, seed = 11)
        @test 6 <= p.rejected <= 45
        @test 3.5 < p.mean_statistic < 7.0              # near its χ² dof, (2 - 1) 5
        far = power_groups([10.0 1.0; 1.0 1.0; 1.0 10.0; 3.0 3.0], 15, 50; tables = 100,
                           seed = 2)
        @test far.power > 0.9
        near = [2.0 3.0; 3.0 2.0; 1.0 1.0; 4.0 4.0]
        @test power_groups(near, 40, 50; tables = 200, seed = 4).power >
              power_groups(near, 5, 50; tables = 200, seed = 4).power + 0.2
    end

    @testset "standard error, reproducibility, threads" begin
        p = power_groups(PW_A3[:, 1:2], 20, 60; tables = 150, seed = 5)
        @test p.power == p.rejected / 150
        @test isapprox(p.std_error, sqrt(p.power * (1 - p.power) / 150); rtol = 1e-12)
        @test stderror(p) === p.std_error
        @test 0 < p.power < 1
        @test power_groups(PW_A3[:, 1:2], 20, 60; tables = 150, seed = 5) == p
        ms = [power_groups(PW_A3[:, 1:2], 12, 40; tables = 80, seed = s).mean_statistic
              for s in 0:3]
        @test length(unique(ms)) > 1
        # The default seed is 0.
        @test power_groups(PW_A3[:, 1:2], 12, 40; tables = 80) ==
              power_groups(PW_A3[:, 1:2], 12, 40; tables = 80, seed = 0)
        c1, c3 = DirmnContext(:cpu), DirmnContext(:cpu)
        Dirmn.set_threads!(c1, 1)
        Dirmn.set_threads!(c3, 3)
        r1 = power_groups(PW_A3, [6, 7, 8], 45; tables = 50, seed = 13, context = c1)
        r3 = power_groups(PW_A3, [6, 7, 8], 45; tables = 50, seed = 13, context = c3)
        close(c1); close(c3)
        @test r1 == r3
    end

    @testset "Xmcupo: the level, power, rand + test_groups" begin
        A = hcat(PW_A3[:, 1], PW_A3[:, 1])
        p = power_groups(A, 25, 60; statistic = :xmcupo, tables = 400, level = 0.05, seed = 11)
        @test p.statistic_kind === :xmcupo
        @test 6 <= p.rejected <= 45
        # Near its χ² dof, (2 - 1)(5 - 1) = 4, not the likelihood ratio's 5.
        @test 2.8 < p.mean_statistic < 5.2
        l = power_groups(A, 25, 60; tables = 400, level = 0.05, seed = 11)
        @test l.statistic_kind === :lrt && l.mean_statistic != p.mean_statistic
        far = power_groups([10.0 1.0; 1.0 1.0; 1.0 10.0; 3.0 3.0], 15, 50; tables = 100,
                           seed = 2, statistic = :xmcupo)
        @test far.power > 0.9
        # The same tables drawn with rand and tested with test_groups.
        rows, sizes = [8, 11, 6], vcat(collect(40:3:61), fill(55, 11), collect(20:10:70))
        groups = vcat([fill(g, rows[g]) for g in 1:3]...)
        d = DirMultMixtureModel(PW_A3)
        S = UInt64(7)
        q = power_groups(PW_A3, rows, Any[collect(40:3:61), 55, collect(20:10:70)];
                         statistic = :xmcupo, tables = 60, level = 0.1, seed = S)
        rejected, total = 0, 0.0
        for t in 0:59
            Xt = rand(d, length(groups); component = groups, size = sizes,
                      seed = pw_derived_key(S, 3, t)).counts
            r = test_groups(Xt, groups; statistic = :xmcupo)
            rejected += r.pvalue < 0.1
            total += r.statistic
        end
        @test 0 < rejected < 60
        @test q.rejected == rejected
        @test abs(q.mean_statistic - total / 60) <= 1e-9 * max(1.0, total / 60)
        @test power_groups(A, 12, 40; statistic = :xmcupo, tables = 80, seed = 9) ==
              power_groups(A, 12, 40; statistic = :xmcupo, tables = 80, seed = 9)
        @test occursin("statistic_kind=:xmcupo", sprint(show, p))
        @test occursin("HMP's Xmcupo", sprint(show, MIME"text/plain"(), p))
    end

    @testset "Xoc: the level, power, rand + test_groups" begin
        # Every group's α_v = 2 + v: one overdispersion, the level's share.
        A = repeat([2.0 + v for v in 1:6], 1, 3)
        p = power_groups(A, 25, 200; statistic = :xoc, tables = 200, level = 0.05, seed = 0)
        @test p.statistic_kind === :xoc && p.tables == 200
        @test abs(p.power - 0.05) <= 0.05
        @test 1.2 < p.mean_statistic < 3.2              # near its χ² dof, 3 - 1
        # The third group's α times 6: its precision six times the others'.
        B = copy(A)
        B[:, 3] .*= 6
        far = power_groups(B, 25, 200; statistic = :xoc, tables = 200, seed = 0)
        @test far.power > 0.5
        # Proportions that differ at one precision are no overdispersion.
        C = [A[:, 1] reverse(A[:, 1]) A[:, 1]]
        @test power_groups(C, 25, 200; statistic = :xoc, tables = 200, seed = 0).power <
              0.15 < power_groups(C, 25, 200; tables = 200, seed = 0).power
        # The same tables drawn with rand and tested with test_groups.
        rows, sizes = [8, 11, 6], vcat(collect(40:3:61), fill(55, 11), collect(20:10:70))
        groups = vcat([fill(g, rows[g]) for g in 1:3]...)
        A3 = PW_A3 .* [1.0 3.0 0.5]
        d = DirMultMixtureModel(A3)
        S = UInt64(7)
        q = power_groups(A3, rows, Any[collect(40:3:61), 55, collect(20:10:70)];
                         statistic = :xoc, tables = 60, level = 0.1, seed = S)
        rejected, total = 0, 0.0
        for t in 0:59
            Xt = rand(d, length(groups); component = groups, size = sizes,
                      seed = pw_derived_key(S, 3, t)).counts
            r = test_groups(Xt, groups; statistic = :xoc)
            rejected += r.pvalue < 0.1
            total += r.statistic
        end
        @test 0 < rejected < 60
        @test q.rejected == rejected
        @test abs(q.mean_statistic - total / 60) <= 1e-9 * max(1.0, total / 60)
        @test power_groups(A, 12, 40; statistic = :xoc, tables = 80, seed = 9) ==
              power_groups(A, 12, 40; statistic = :xoc, tables = 80, seed = 9)
        @test occursin("statistic_kind=:xoc", sprint(show, p))
        m = sprint(show, MIME"text/plain"(), p)
        @test occursin("HMP's Xoc", m) && occursin("one shared overdispersion", m)
    end

    @testset "forms of rows_per_group and size agree" begin
        A = PW_A3[:, 1:2]
        base = power_groups(A, [10, 10], [fill(30, 10), fill(30, 10)]; tables = 40, seed = 6)
        for (rows, sizes) in ((10, 30), ([10, 10], 30), (10, [30, 30]), (10, Any[fill(30, 10), 30]),
                              (Int32[10, 10], [30.0, 30.0]))
            @test power_groups(A, rows, sizes; tables = 40, seed = 6) == base
        end
        logs = power_groups(log.(A), 10, 30; tables = 40, seed = 6, param = :logalpha)
        @test logs.rejected == base.rejected
        @test isapprox(logs.mean_statistic, base.mean_statistic; rtol = 1e-9)
        # The fits' options reach them.
        one = power_groups(A, 15, 50; tables = 30, seed = 8, max_iterations = 1)
        @test one.mean_statistic != power_groups(A, 15, 50; tables = 30, seed = 8).mean_statistic
    end

    @testset "display" begin
        p = power_groups(PW_A3[:, 1:2], 10, 30; tables = 20, seed = 9)
        @test occursin("GroupPower(power=", sprint(show, p))
        m = sprint(show, MIME"text/plain"(), p)
        @test occursin("of 20 tables at level 0.05 (seed 9)", m) && occursin("power", m)
    end

    @testset "bad input" begin
        A = PW_A3[:, 1:2]
        bad(f, status = :DIRMN_ERROR_INVALID_ARGUMENT) = (e = caught(f);
            e isa DirmnError && e.name === status ? e.message : e)
        @test occursin("alpha", bad(() -> power_groups(A[:, 1:1], 10, 30)))
        @test occursin("rows_per_group[2]", bad(() -> power_groups(A, [10, -1], 30)))
        @test occursin("rows_per_group", bad(() -> power_groups(A, [10, 0], 30)))
        @test occursin("rows_per_group",
                       bad(() -> power_groups(A, [1, 2, 3], 30), :DIRMN_ERROR_DIMENSION_MISMATCH))
        for level in (0.0, 1.0, -0.1, 1.5, NaN)
            @test occursin("level", bad(() -> power_groups(A, 10, 30; level = level)))
        end
        for tables in (0, -3)
            @test occursin("tables", bad(() -> power_groups(A, 10, 30; tables = tables)))
        end
        @test occursin("size[2][2]", bad(() -> power_groups(A, [3, 2], Any[30, [5, -4]])))
        @test occursin("size", bad(() -> power_groups(A, 3, 2^31)))
        @test occursin("size has length 3", bad(() -> power_groups(A, 3, [30, 30, 30]),
                                                :DIRMN_ERROR_DIMENSION_MISMATCH))
        args = Set(vcat([Base.method_argnames(m)[2:end] for m in methods(power_groups)]...))
        @test :size in args && !(:sizes in args)
        for s in (:Xmcupo, :Xoc, :wald)
            e = caught(() -> power_groups(A, 3, 30; statistic = s))
            @test e isa ArgumentError &&
                  occursin("statistic must be :lrt, :xmcupo or :xoc", e.msg)
        end
        @test occursin("alpha[2, 2]",
                       bad(() -> power_groups([1.0 2.0; 1.0 0.0], 3, 30),
                           :DIRMN_ERROR_INVALID_PARAMETER))
        @test occursin("alpha[2, 1]",
                       bad(() -> power_groups([1.0 2.0; -1.0 1.0], 3, 30),
                           :DIRMN_ERROR_INVALID_PARAMETER))
        @test caught(() -> power_groups(A, 3, 30; seed = -1)) isa ArgumentError
        @test caught(() -> power_groups(A, 3, 30; param = :log)) isa ArgumentError
    end
end

# The proportion test's power by simulation (power_proportions over
# dirmn_power_proportions): table t of a call with seed S is drawn from
# stream t as power_groups draws it, here with rand of a DirMult with seed
# derived_key(S, 3, t), and tested with test_proportions.
const PP_PI0 = collect(1.0:8.0) ./ 36

@testset "power_proportions" begin
    @testset "alpha proportional to the proportions gives the level" begin
        p = power_proportions(20 .* PP_PI0, PP_PI0, 30, 500; tables = 400, seed = 23)
        @test p isa GroupPower && p.statistic_kind === :xsc
        @test p.tables == 400 && p.level == 0.05 && p.seed == 23
        @test abs(p.power - 0.05) <= 0.04
        @test abs(p.mean_statistic - 7) <= 1                 # Xsc's χ² dof, 8 - 1
        @test p.power == p.rejected / 400
    end

    @testset "other proportions are found" begin
        a = 20 .* PP_PI0
        a[1], a[end] = a[end], a[1]
        p = power_proportions(a, PP_PI0, 30, 500; tables = 400, seed = 23)
        @test p.power > 0.9
        @test p.std_error == sqrt(p.power * (1 - p.power) / 400)
        @test stderror(p) === p.std_error
        # Nearer proportions and fewer observations: a power strictly inside (0, 1).
        b = 20 .* PP_PI0
        b[1], b[2] = b[2], b[1]
        q = power_proportions(b, PP_PI0, 10, 100; tables = 400, seed = 23)
        @test 0 < q.power < 1
        @test isapprox(q.std_error, sqrt(q.power * (1 - q.power) / 400); rtol = 1e-12)
        @test power_proportions(b, PP_PI0, 40, 100; tables = 400, seed = 23).power > q.power
    end

    @testset "the share of tables rand + test_proportions reject (seed $S)" for S in
            (UInt64(7), UInt64(2)^63 + UInt64(12345), typemax(UInt64))
        a = 20 .* PP_PI0
        a[1], a[2] = a[2], a[1]
        rows, sizes, tables = 12, collect(40:10:150), 30
        p = power_proportions(a, PP_PI0, rows, sizes; tables = tables, level = 0.05, seed = S)
        d = DirMult(a, 1)
        rejected, total = 0, 0.0
        for t in 0:(tables - 1)
            X = rand(d, rows; size = sizes, seed = pw_derived_key(S, 3, t))
            r = test_proportions(X, PP_PI0)
            rejected += r.pvalue < 0.05
            total += r.statistic
        end
        @test 0 < rejected < tables                    # neither extreme: a real check
        @test p.rejected == rejected
        @test p.power == rejected / tables
        @test abs(p.mean_statistic - total / tables) <= 1e-9 * max(1.0, total / tables)
    end

    @testset "zero proportions, tables without counts" begin
        # Counts in a category of proportion 0 (about 31 a table expected):
        # every table's Xsc is Inf.
        z = vcat(0.0, PP_PI0[2:end] ./ sum(PP_PI0[2:end]))
        p = power_proportions(fill(2.5, 8), z, 5, 50; tables = 20, seed = 1)
        @test p.mean_statistic == Inf && p.rejected == 20 && p.power == 1.0
        # No table has counts: none is rejected.
        q = power_proportions(20 .* PP_PI0, PP_PI0, 5, 0; tables = 20, seed = 1)
        @test q.rejected == 0 && q.power == 0.0 && q.mean_statistic == 0.0
    end

    @testset "forms of the arguments, reproducibility, threads" begin
        a = 20 .* PP_PI0
        a[1], a[2] = a[2], a[1]
        base = power_proportions(a, PP_PI0, 10, 80; tables = 60, seed = 5)
        @test power_proportions(a, PP_PI0, 10, fill(80, 10); tables = 60, seed = 5) == base
        @test power_proportions(a, PP_PI0, Int32(10), 80.0; tables = 60, seed = 5) == base
        @test power_proportions(a, view(repeat(PP_PI0; inner = 2), 1:2:16), 10, 80;
                                tables = 60, seed = 5) == base
        @test power_proportions(view(vcat(a, a), 1:8), PP_PI0, 10, 80; tables = 60,
                                seed = 5) == base
        logs = power_proportions(log.(a), PP_PI0, 10, 80; tables = 60, seed = 5,
                                 param = :logalpha)
        @test logs.rejected == base.rejected
        @test isapprox(logs.mean_statistic, base.mean_statistic; rtol = 1e-9)
        @test power_proportions(a, PP_PI0, 10, 80; tables = 60) ==
              power_proportions(a, PP_PI0, 10, 80; tables = 60, seed = 0)
        ms = [power_proportions(a, PP_PI0, 10, 80; tables = 60, seed = s).mean_statistic
              for s in 0:3]
        @test length(unique(ms)) > 1
        c1, c3 = DirmnContext(:cpu), DirmnContext(:cpu)
        Dirmn.set_threads!(c1, 1)
        Dirmn.set_threads!(c3, 3)
        r1 = power_proportions(a, PP_PI0, 10, 80; tables = 60, seed = 13, context = c1)
        r3 = power_proportions(a, PP_PI0, 10, 80; tables = 60, seed = 13, context = c3)
        close(c1); close(c3)
        @test r1 == r3
    end

    @testset "display" begin
        p = power_proportions(20 .* PP_PI0, PP_PI0, 10, 30; tables = 20, seed = 9)
        @test occursin("GroupPower(power=", sprint(show, p))
        @test occursin("statistic_kind=:xsc", sprint(show, p))
        m = sprint(show, MIME"text/plain"(), p)
        @test occursin("Power of the proportion test", m) && occursin("HMP's Xsc", m)
        @test !occursin("group", m)
        @test occursin("of 20 tables at level 0.05 (seed 9)", m)
    end

    @testset "bad input" begin
        a = 20 .* PP_PI0
        bad(f, status = :DIRMN_ERROR_INVALID_ARGUMENT) = (e = caught(f);
            e isa DirmnError && e.name === status ? e.message : e)
        neg = vcat(PP_PI0[1] + 0.1, -0.1, PP_PI0[3:end])
        m = bad(() -> power_proportions(a, neg, 10, 30), :DIRMN_ERROR_INVALID_PARAMETER)
        @test occursin("[proportions[2] in Julia]", m) && occursin("negative", m)
        @test occursin("[proportions[3] in Julia]",
                       bad(() -> power_proportions(a, [PP_PI0[1:2]; NaN; PP_PI0[4:end]], 10, 30),
                           :DIRMN_ERROR_INVALID_PARAMETER))
        @test occursin("sum", bad(() -> power_proportions(a, 2 .* PP_PI0, 10, 30)))
        @test occursin("positive",
                       bad(() -> power_proportions(a, [1.0; zeros(7)], 10, 30)))
        for (al, pr) in ((a[1:7], PP_PI0), (vcat(a, 1.0), PP_PI0), (a, PP_PI0[1:7]))
            @test occursin("proportions has length $(length(pr)) but alpha has " *
                           "$(length(al)) categories",
                           bad(() -> power_proportions(al, pr, 10, 30),
                               :DIRMN_ERROR_DIMENSION_MISMATCH))
        end
        @test occursin("at least 2", bad(() -> power_proportions([1.0], [1.0], 10, 30)))
        for tables in (0, -3)
            @test occursin("tables", bad(() -> power_proportions(a, PP_PI0, 10, 30;
                                                                 tables = tables)))
        end
        for level in (0.0, 1.0, -0.1, 1.5, NaN)
            @test occursin("level", bad(() -> power_proportions(a, PP_PI0, 10, 30;
                                                                level = level)))
        end
        for rows in (0, -1, 2.5, 2.0^40 + 1)
            @test occursin("rows = ", bad(() -> power_proportions(a, PP_PI0, rows, 30)))
        end
        @test occursin("size[3] = -4", bad(() -> power_proportions(a, PP_PI0, 3, [5, 5, -4])))
        @test occursin("size = 2147483648", bad(() -> power_proportions(a, PP_PI0, 3, 2^31)))
        @test occursin("size has length 2",
                       bad(() -> power_proportions(a, PP_PI0, 3, [5, 5]),
                           :DIRMN_ERROR_DIMENSION_MISMATCH))
        @test occursin("alpha[2] in Julia",
                       bad(() -> power_proportions([1.0; -1.0; ones(6)], PP_PI0, 3, 30),
                           :DIRMN_ERROR_INVALID_PARAMETER))
        @test occursin("alpha[2]",
                       bad(() -> power_proportions(Any[1.0, missing, ones(6)...], PP_PI0, 3, 30),
                           :DIRMN_ERROR_INVALID_PARAMETER))
        @test caught(() -> power_proportions(a, PP_PI0, 3, 30; seed = -1)) isa ArgumentError
        @test caught(() -> power_proportions(a, PP_PI0, 3, 30; param = :log)) isa ArgumentError
        @test caught(() -> power_proportions(a, PP_PI0, 3, "30")) isa ArgumentError
        args = Set(vcat([Base.method_argnames(m)[2:end] for m in methods(power_proportions)]...))
        @test [:alpha, :proportions, :rows, :size] ⊆ args
    end
end
