# The group test's power by simulation (issue #30: power_groups over
# dirmn_power_groups), against the same tables drawn with the package's rand
# of a DirMultMixtureModel and tested with its test_groups: table t of a call
# with seed S is drawn with seed derived_key(S, 3, t), the library's stream
# of a power simulation's table (splitmix64's output mix, computed here).

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
