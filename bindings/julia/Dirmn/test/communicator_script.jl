# Run by communicator.jl in its own julia with JULIA_NUM_THREADS=3: a table
# split by observations over 2 and 3 ranks (1 to 3 for the mixtures and
# regressions: fit_dirmn, loglik_sum, overdispersion_test, fit_mixture and
# fit_dirmn_reg are collective), each rank a task with its own
# context and counts, over an in-memory communicator (World: allreduce! and
# broadcast! through shared slots and a barrier), as capi's
# tests/test_communicator.cpp does with C++ threads. Julia 1.5 starts no
# more threads than the machine has CPUs: where there are as many threads
# as ranks, each rank runs on its own thread (and blocks inside the
# library's calls in parallel with the others); where there are fewer, ranks
# share threads and take turns at the barrier inside the callbacks (a task
# waits there, and the thread runs another rank's task). Every result is
# compared with the one process that holds the whole table. Test's macros
# are not used on the ranks' tasks (a testset belongs to its task): the
# ranks record what they got and the main task checks it. Prints one line
# "communicator: N passed, N failed, N errored (R ranks on T threads, ...)"
# and exits non-zero on any failure.
using Dirmn
using Random
using Test

# (ranks, threads they ran on) of every run.
const RANK_THREADS = Tuple{Int,Int}[]

# n ranks' shared slots and a reusable barrier. `fail_at` injects a failure:
# every rank's allreduce! throws at that call (counted per rank), as an MPI
# collective fails on every rank. `fail_broadcast_at`: every rank's
# broadcast! throws an ArgumentError at that broadcast (counted per rank),
# after the exchange, so that the ranks fail alike and stay in step.
# `logs[r + 1]`: rank r's calls, (function, buffer type, length, root).
mutable struct World
    n::Int
    slots::Vector{Any}
    cond::Threads.Condition
    arrived::Int
    generation::Int
    fail_at::Int
    fail_broadcast_at::Int
    logs::Vector{Vector{Any}}
end
World(n; fail_at = -1, fail_broadcast_at = -1) =
    World(n, Vector{Any}(nothing, n), Threads.Condition(), 0, 0, fail_at, fail_broadcast_at,
          [Any[] for _ in 1:n])

function barrier(w::World)
    lock(w.cond)
    try
        gen = w.generation
        w.arrived += 1
        if w.arrived == w.n
            w.arrived = 0
            w.generation += 1
            notify(w.cond)
        else
            while w.generation == gen
                wait(w.cond)
            end
        end
    finally
        unlock(w.cond)
    end
end

struct RankFailure <: Exception
    rank::Int
    call::Int
end
Base.showerror(io::IO, e::RankFailure) = print(io, "RankFailure: rank ", e.rank, ", call ", e.call)

# Rank r's end of the world: the Communicator's two functions.
function communicator(w::World, r::Int)
    calls = Ref(0)
    broadcasts = Ref(0)
    log = w.logs[r + 1]
    allreduce! = function (buf)
        k = (calls[] += 1)
        push!(log, (:allreduce!, typeof(buf), length(buf), nothing))
        k == w.fail_at && throw(RankFailure(r, k))
        w.slots[r + 1] = copy(buf)
        barrier(w)
        s = copy(w.slots[1])
        for q in 2:w.n          # in rank order: every rank the same bits
            s .+= w.slots[q]
        end
        barrier(w)              # every rank has read the slots
        copyto!(buf, s)
    end
    broadcast! = function (buf, root)
        k = (calls[] += 1)
        push!(log, (:broadcast!, typeof(buf), length(buf), root))
        r == root && (w.slots[r + 1] = copy(buf))
        barrier(w)
        r == root || copyto!(buf, w.slots[root + 1])
        barrier(w)
        (broadcasts[] += 1) == w.fail_broadcast_at &&
            throw(ArgumentError("broadcast! failed at call $k"))
    end
    return Communicator(r, w.n; allreduce! = allreduce!, broadcast! = broadcast!)
end

# Rank r's observations of n ranks: uneven parts (rank r takes r + 1 shares).
first_obs(r, n, nobs) = nobs * (r * (r + 1) ÷ 2) ÷ (n * (n + 1) ÷ 2) + 1
rank_obs(r, n, nobs) = first_obs(r, n, nobs):(first_obs(r + 1, n, nobs) - 1)

# Runs body(r, c) for every rank r of `w`, each a task with its own context
# and counts of its observations of X (categories × observations) attached
# to its Communicator; what each returned (or threw). With as many threads
# as ranks, each rank is a task on its own thread (@threads gives each of
# n <= nthreads() iterations its own), blocking inside the library's calls
# in parallel; with fewer (Julia 1.5 runs no more threads than CPUs), the
# ranks are spawned tasks, some sharing a thread, that take turns at the
# barrier inside the callbacks.
function run_ranks(body, w::World, X; cats = r -> size(X, 1))
    n = w.n
    got = Vector{Any}(undef, n)
    tids = zeros(Int, n)
    function one(r)
        tids[r + 1] = Threads.threadid()
        got[r + 1] = try
            ctx = DirmnContext(:cpu)
            Dirmn.set_threads!(ctx, 1 + r % 2)
            Y = X[1:cats(r), rank_obs(r, n, size(X, 2))]
            c = DirmnCounts(Y; context = ctx)
            comm = communicator(w, r)
            try
                set_communicator!(c, comm)
                close(comm)       # the counts keep it
                body(r, c)
            finally
                close(c)
                close(ctx)
            end
        catch e
            e
        end
    end
    if n <= Threads.nthreads()
        Threads.@threads for r in 0:(n - 1)
            one(r)
        end
        @test allunique(tids)
    else
        @sync for r in 0:(n - 1)
            Threads.@spawn one(r)
        end
    end
    push!(RANK_THREADS, (n, length(unique(tids))))
    return got
end

bits(x) = reinterpret(UInt64, x)
same_bits(a, b) = length(a) == length(b) && bits(a) == bits(b)
# The error and its exception stack, as a rank records them.
caught_stack(f) = try
    f()
    nothing
catch
    [e for (e, _) in Base.catch_stack()]
end

rng = MersenneTwister(31)
const V, NOBS = 20, 60
alpha = 0.05 .+ 3 .* rand(rng, V)
# Dirichlet-multinomial draws by Pólya urn: 300 items per observation.
function draw(rng, alpha, N)
    a = copy(alpha)
    x = zeros(Int, length(a))
    for _ in 1:N
        u = rand(rng) * sum(a)
        j = findfirst(>=(u), cumsum(a))
        j === nothing && (j = length(a))
        x[j] += 1
        a[j] += 1
    end
    return x
end
X = reduce(hcat, [draw(rng, alpha, 300) for _ in 1:NOBS])
for b in 1:3:NOBS
    X[1, b] += 5000 + 97b           # deep counts in one category
end
W = [Float64((b - 1) % 4) for b in 1:NOBS]   # whole weights, some 0
const WCTX = DirmnContext(:cpu)               # the whole table's

# A table with cluster structure for the mixtures: NM observations from
# three profiles, interleaved so that every rank holds some of each, in
# unequal shares (1/2, 1/3, 1/6: the components' order by weight is clear).
rngm = MersenneTwister(7)
const NM = 90
profiles = [4 .* (0.2 .+ 4 .* rand(rngm, V)) for _ in 1:3]
profile_of(b) = b % 6 == 0 ? 3 : isodd(b) ? 1 : 2
XM = reduce(hcat, [draw(rngm, profiles[profile_of(b)], 200) for b in 1:NM])
WM = [Float64((b - 1) % 3) for b in 1:NM]    # whole weights, some 0

# Regression problems: counts (categories × rows, observations in columns
# as X) drawn from α_b = exp(D[b, :] ⋅ B[:, v]), and the rows × p design D
# (an intercept and normal covariates), as capi's
# test_communicator_regression.cpp: a tall table, 150 rows × 5 categories,
# a wide one, 40 rows × 12 categories (36 coefficients), and one of fewer
# rows than coefficients, 30 × 15 (45: one process solves each Newton step
# in the rows' dimension, the ranks form the matrix whole), all with 3
# covariates; 120 × 6 with 2 for the mean/precision model, whose precision
# design is an intercept and the first covariate.
function reg_problem(seed, rows, V, p)
    rng = MersenneTwister(seed)
    D = ones(rows, p)
    D[:, 2:p] .= 0.7 .* randn(rng, rows, p - 1)
    B = vcat(0.5 .+ 0.5 .* rand(rng, 1, V), 0.4 .* randn(rng, p - 1, V))
    Y = reduce(hcat, [draw(rng, exp.(vec(D[b:b, :] * B)), 40 + 7 * (b % 11)) for b in 1:rows])
    return Y, D
end
const YT, DT = reg_problem(502, 150, 5, 3)
const YW, DW = reg_problem(501, 40, 12, 3)
const YF, DF = reg_problem(503, 30, 15, 3)
const YP, DP = reg_problem(511, 120, 6, 2)
const ZP = DP[:, 1:2]                                 # log φ_b = γ1 + γ2 x_b
reg_weights(rows) = [0.5 + (b - 1) % 3 for b in 1:rows]

# Entries equal to `rtol` relative to the largest of `b` (the solves'
# accuracy is the coefficient vector's: the ranks' sums, rounded otherwise,
# may stop Newton's method a step before or after one process's, both
# within its tolerance -- 2 ranks of the tall weighted table stop at a
# gradient norm of 7e-6, one process at 2e-13 -- which moves a coefficient
# of 0.006 by 9e-9, 2e-8 of the largest one).
function near(a, b, rtol)
    size(a) == size(b) || return false
    s = isempty(b) ? 0.0 : maximum(abs, b)
    return all(isequal(x, y) || abs(x - y) <= rtol * max(abs(y), s) for (x, y) in zip(a, b))
end

# A rank's regression against the whole table's (obs: the rank's rows):
# the log-likelihood and criteria to rounding (1e-12 relative), the
# coefficients and standard errors to the Newton solves' (1e-7 relative, as
# `near` compares); `rows`, `totals`
# and `design` this rank's, `nobs` the whole table's.
function check_reg(f, whole, obs)
    @test f isa DirmnRegression
    f isa DirmnRegression || (println(sprint(showerror, f)); return)
    @test isapprox(f.loglik, whole.loglik; rtol = 1e-12)
    @test isapprox(f.bic, whole.bic; rtol = 1e-12)
    @test isapprox(f.aic, whole.aic; rtol = 1e-12)
    @test near(f.coefficients, whole.coefficients, 1e-7)
    @test near(f.std_errors, whole.std_errors, 1e-7)
    if whole.log_precision === nothing
        @test f.log_precision === nothing && f.std_error_log_precision === nothing
    else
        @test near(f.log_precision, whole.log_precision, 1e-7)
        @test near(f.std_error_log_precision, whole.std_error_log_precision, 1e-7)
        @test (f.precision === nothing) == (whole.precision === nothing)
    end
    @test isapprox(f.nobs, whole.nobs; rtol = 1e-15)
    @test f.rows == length(obs)
    @test f.parameters == whole.parameters && f.covariates == whole.covariates &&
          f.ncategories == whole.ncategories
    @test f.parametrization === whole.parametrization && f.contrast === whole.contrast &&
          f.reference == whole.reference
    @test f.converged && whole.converged && f.hessian_definite == whole.hessian_definite
    @test f.totals == whole.totals[obs]
    @test f.design == whole.design[obs, :]
end

# Agreement with the whole table's mixture: the criteria to rounding, the
# parameters to the M step's accuracy, this rank's responsibilities. The
# Laplace criterion's log-determinant follows α, which agrees to the M
# step's accuracy only: ~1e-9 here, less for components of one or two
# observations at precisions of 1e4 (laplace_rtol).
function mixture_matches(m, whole, obs; laplace_rtol = 1e-9)
    close_to(a, b, rtol) = isequal(a, b) || isapprox(a, b; rtol = rtol)
    return m isa DirMultMixture && m.k == whole.k &&
           close_to(m.loglik, whole.loglik, 1e-9) &&
           close_to(m.objective, whole.objective, 1e-9) &&
           close_to(m.aic, whole.aic, 1e-9) && close_to(m.bic, whole.bic, 1e-9) &&
           close_to(m.laplace, whole.laplace, laplace_rtol) &&
           isapprox(m.mixture_weights, whole.mixture_weights; rtol = 1e-5) &&
           isapprox(m.alpha, whole.alpha; rtol = 1e-5) &&
           size(m.responsibilities) == (length(obs), whole.k) &&
           isapprox(m.responsibilities, whole.responsibilities[obs, :]; atol = 1e-5, rtol = 0) &&
           m.rows == length(obs) && m.nobs == whole.nobs &&
           m.parameters == whole.parameters && m.converged == whole.converged
end

result = try
@testset "communicator over threads" begin
    @testset "fit_dirmn of $n ranks$(w === nothing ? "" : ", weighted") is the whole table's, bit for bit" for n in (2, 3), w in (nothing, W)
        whole = fit_dirmn(X; weights = w, context = WCTX)
        got = run_ranks(World(n), X) do r, c
            fit_dirmn(c; weights = w === nothing ? nothing : w[rank_obs(r, n, NOBS)])
        end
        for (r, f) in enumerate(got)
            @test f isa DirMultFit
            f isa DirMultFit || (println("rank $(r - 1): ", sprint(showerror, f)); continue)
            @test same_bits(f.alpha, whole.alpha)
            @test same_bits(f.std_error_alpha, whole.std_error_alpha)
            @test isequal(f.std_error_log_alpha, whole.std_error_log_alpha)
            @test f.iterations == whole.iterations
            @test f.loglik_kernel == whole.loglik_kernel
            @test isapprox(f.loglik, whole.loglik; rtol = 1e-14)
            @test f.nobs == whole.nobs && f.parameters == whole.parameters
            @test f.converged
            @test f.totals == whole.totals[rank_obs(r - 1, n, NOBS)]   # this rank's
        end
        @test isempty(Dirmn._COMMUNICATORS)   # every release came
    end

    @testset "ranks that draw their own observations (first_row) fit the whole table" begin
        d = DirMult(alpha, 200)
        XD = rand(d, NOBS; seed = 5)
        whole = fit_dirmn(XD; context = WCTX)
        for n in (2, 3)
            got = run_ranks(World(n), XD) do r, c
                obs = rank_obs(r, n, NOBS)
                mine = rand(d, length(obs); seed = 5, first_row = first(obs) - 1)
                Matrix(c) == mine || return :other_draws
                fit_dirmn(c)
            end
            for f in got
                @test f isa DirMultFit
                f isa DirMultFit && @test same_bits(f.alpha, whole.alpha)
            end
        end
    end

    @testset "loglik_sum and overdispersion_test over 3 ranks" begin
        n = 3
        wr = [0.3 + 0.01b for b in 1:NOBS]
        want = loglik_sum(X, alpha; weights = wr, context = WCTX)
        wantod = overdispersion_test(X; context = WCTX)
        got = run_ranks(World(n), X) do r, c
            (loglik_sum(c, alpha; weights = wr[rank_obs(r, n, NOBS)]), overdispersion_test(c),
             overdispersion_test(c; method = :score))
        end
        for g in got
            @test g isa Tuple
            g isa Tuple || (println(sprint(showerror, g)); continue)
            s, od, sc = g
            @test isapprox(s.value, want.value; rtol = 1e-13)
            @test isapprox(s.gradient, want.gradient; rtol = 1e-12)
            @test isapprox(s.hessian_diag, want.hessian_diag; rtol = 1e-12)
            @test isapprox(s.hessian_scalar, want.hessian_scalar; rtol = 1e-13)
            @test isapprox(od.statistic, wantod.statistic; rtol = 1e-10)
            @test isapprox(od.pvalue, wantod.pvalue; rtol = 1e-9)
            @test isapprox(sc.statistic, wantod.score_statistic; rtol = 1e-12)
            @test od.nobs == wantod.nobs && od.categories == wantod.categories
            # Every rank the same bits.
            @test s.value === got[1][1].value
            @test od.statistic === got[1][2].statistic
        end
    end

    @testset "a negative weight on rank 1 fails it with its own error, the others with COMMUNICATION" begin
        for n in (2, 3)
            got = run_ranks(World(n), X) do r, c
                m = length(rank_obs(r, n, NOBS))
                wr = ones(m)
                r == 1 && (wr[3] = -1.0)
                e = caught_stack(() -> fit_dirmn(c; weights = wr))
                # The next collective call works again on every rank.
                (e, fit_dirmn(c))
            end
            whole = fit_dirmn(X; context = WCTX)
            for (r, g) in enumerate(got)
                @test g isa Tuple
                g isa Tuple || (println(sprint(showerror, g)); continue)
                stack, again = g
                e = stack === nothing ? nothing : last(stack)
                @test e isa DirmnError
                e isa DirmnError || continue
                if r == 2
                    @test e.name === :DIRMN_ERROR_INVALID_PARAMETER
                    @test occursin("weight -1 is negative", e.message)
                    @test occursin("[weights[3] in Julia]", e.message)
                else
                    @test e.name === :DIRMN_ERROR_COMMUNICATION
                    @test occursin("rank 1's part", e.message)
                end
                @test length(stack) == 1        # no cause: no callback threw
                @test same_bits(again.alpha, whole.alpha)
            end
        end
    end

    @testset "an exception in allreduce! on every rank: COMMUNICATION, the exception its cause" begin
        n = 3
        # The attach makes the first two calls; the fourth is the fit's.
        got = run_ranks(World(n; fail_at = 4), X) do r, c
            caught_stack(() -> fit_dirmn(c))
        end
        for (r, stack) in enumerate(got)
            @test stack isa Vector
            stack isa Vector || (println(sprint(showerror, stack)); continue)
            @test length(stack) == 2
            @test stack[1] == RankFailure(r - 1, 4)
            e = stack[end]
            @test e isa DirmnError && e.name === :DIRMN_ERROR_COMMUNICATION
            @test occursin("allreduce_int64 callback returned -1", e.message) ||
                  occursin("allreduce_double callback returned -1", e.message)
            @test occursin("the Communicator's allreduce! threw RankFailure: rank $(r - 1), call 4",
                           e.message)
        end
        @test isempty(Dirmn._COMMUNICATORS)
    end

    @testset "the library calls the functions with Int64, Float64 and byte buffers" begin
        # (One rank need not broadcast: communicator.jl checks its allreduces.)
        for n in (2, 3)
            w = World(n)
            got = run_ranks(w, X) do r, c
                empty!(w.logs[r + 1])     # the attach's
                fit_dirmn(c)
                copy(w.logs[r + 1])
            end
            for log in got
                @test log isa Vector
                log isa Vector || (println(sprint(showerror, log)); continue)
                @test (:allreduce!, Vector{Int64}) in [l[1:2] for l in log]
                @test (:allreduce!, Vector{Float64}) in [l[1:2] for l in log]
                @test all(l -> l[3] > 0, log)
                bc = filter(l -> l[1] === :broadcast!, log)
                # Byte buffers, some bytes, a root counted from 0 (rank 0 among them).
                @test !isempty(bc) && all(l -> l[2] === Vector{UInt8} && 0 <= l[4] < n, bc)
                @test any(l -> l[4] == 0, bc)
                # Every rank the same calls, of the same lengths.
                @test log == got[1]
            end
        end
    end

    @testset "an exception in broadcast! on every rank: COMMUNICATION, the exception its cause" begin
        # Every rank's first broadcast! throws, after the exchange: the
        # ranks fail alike, in step. In an overdispersion test (its fit
        # broadcasts), then a fit, whose first broadcast the same.
        n = 2
        whole = fit_dirmn(X; context = WCTX)
        for (name, call) in (("overdispersion_test", overdispersion_test), ("fit_dirmn", fit_dirmn))
            got = run_ranks(World(n; fail_broadcast_at = 1), X) do r, c
                # The next collective call works again on every rank.
                (caught_stack(() -> call(c)), fit_dirmn(c))
            end
            for (r, g) in enumerate(got)
                @test g isa Tuple
                g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
                stack, again = g
                @test stack isa Vector && length(stack) == 2
                stack isa Vector || continue
                cause, e = stack[1], stack[end]
                @test cause isa ArgumentError && startswith(cause.msg, "broadcast! failed at call ")
                @test e isa DirmnError && e.name === :DIRMN_ERROR_COMMUNICATION
                e isa DirmnError || continue
                @test occursin("broadcast callback returned -1", e.message)
                @test occursin("[the Communicator's broadcast! threw ArgumentError: broadcast! " *
                               "failed at call ", e.message)
                @test occursin("communication", sprint(showerror, e))
                # Every rank failed at the same call.
                @test cause.msg == got[1][1][1].msg
                @test same_bits(again.alpha, whole.alpha)
            end
            @test isempty(Dirmn._COMMUNICATORS)
        end
    end

    @testset "ranks with other categories: DIMENSION_MISMATCH on every rank" begin
        got = run_ranks(World(2), X; cats = r -> r == 1 ? V - 2 : V) do r, c
            :attached
        end
        for g in got
            @test g isa DirmnError && g.name === :DIRMN_ERROR_DIMENSION_MISMATCH
            g isa DirmnError && @test occursin("rank 1's counts have $(V - 2) columns, rank 0's $V",
                                               g.message)
        end
    end

    @testset "fit_mixture over $n rank$(n == 1 ? "" : "s")$(w === nothing ? "" : ", weighted") is the whole table's" for n in (1, 2, 3), w in (nothing, WM)
        wr(r) = w === nothing ? nothing : w[rank_obs(r, n, NM)]
        whole = fit_mixture(XM, 3; weights = w, context = WCTX)
        wholes = fit_mixture(XM, 1:3; weights = w, context = WCTX)
        @test whole.k == 3 && whole.converged
        got = run_ranks(World(n), XM) do r, c
            (fit_mixture(c, 3; weights = wr(r)), fit_mixture(c, 1:3; weights = wr(r)))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            obs = rank_obs(r - 1, n, NM)
            m, s = g
            @test mixture_matches(m, whole, obs)
            @test m.totals == vec(sum(XM[:, obs]; dims = 1))   # this rank's
            @test assignments(m) == assignments(whole)[obs]
            @test s isa MixtureSelection && s.ks == wholes.ks && s.k == wholes.k
            @test isapprox(s.scores, wholes.scores; rtol = 1e-9)
            for (f, fw) in zip(s.fits, wholes.fits)
                @test mixture_matches(f, fw, obs)
            end
            # Every rank the same criteria, bit for bit.
            @test m.loglik === got[1][1].loglik && m.bic === got[1][1].bic
        end
        @test isempty(Dirmn._COMMUNICATORS)
    end

    @testset "fit_mixture over 2 ranks under :dmn, its Laplace criterion" begin
        n = 2
        whole = fit_mixture(XM, 2; objective = :dmn, context = WCTX)
        wholes = fit_mixture(XM, 1:3; objective = :dmn, select = :laplace, context = WCTX)
        got = run_ranks(World(n), XM) do r, c
            (fit_mixture(c, 2; objective = :dmn),
             fit_mixture(c, 1:3; objective = :dmn, select = :laplace))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            obs = rank_obs(r - 1, n, NM)
            m, s = g
            @test mixture_matches(m, whole, obs)
            @test s.k == wholes.k && isapprox(s.scores, wholes.scores; rtol = 1e-9)
            @test all(mixture_matches(f, fw, obs) for (f, fw) in zip(s.fits, wholes.fits))
        end
    end

    @testset "a bad mixture option on rank 1 fails it with its own error, the others with COMMUNICATION" begin
        for n in (2, 3)
            whole = fit_mixture(XM, 2; context = WCTX)
            got = run_ranks(World(n), XM) do r, c
                e1 = caught_stack(() -> fit_mixture(c, 2; starts = r == 1 ? 0 : 2))
                wr = ones(length(rank_obs(r, n, NM)))
                r == 1 && (wr[3] = -1.0)
                e2 = caught_stack(() -> fit_mixture(c, 1:3; weights = wr))
                # The next collective call works again on every rank.
                (e1, e2, fit_mixture(c, 2))
            end
            for (r, g) in enumerate(got)
                @test g isa Tuple
                g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
                s1, s2, again = g
                @test s1 isa Vector && s2 isa Vector
                (s1 isa Vector && s2 isa Vector) || continue
                e1, e2 = last(s1), last(s2)
                @test length(s1) == 1 && length(s2) == 1   # no cause: no callback threw
                @test e1 isa DirmnError && e2 isa DirmnError
                (e1 isa DirmnError && e2 isa DirmnError) || continue
                if r == 2
                    @test e1.name === :DIRMN_ERROR_INVALID_ARGUMENT
                    @test occursin("starts", e1.message)
                    @test e2.name === :DIRMN_ERROR_INVALID_PARAMETER
                    @test occursin("weight -1 is negative", e2.message)
                    @test occursin("[weights[3] in Julia]", e2.message)
                else
                    @test e1.name === :DIRMN_ERROR_COMMUNICATION
                    @test occursin("rank 1's part", e1.message)
                    @test e2.name === :DIRMN_ERROR_COMMUNICATION
                    @test occursin("rank 1's part", e2.message)
                end
                @test mixture_matches(again, whole, rank_obs(r - 1, n, NM))
            end
        end
    end

    @testset "a progress callback that cancels on one rank cancels every rank" begin
        n = 3
        whole = fit_mixture(XM, 2; context = WCTX)
        got = run_ranks(World(n), XM) do r, c
            calls = Ref(0)
            cancel = (it, ll, change) -> (calls[] += 1; r == 1 && calls[] == 3)
            e1 = caught_stack(() -> fit_mixture(c, 2; progress = cancel))
            n1 = calls[]
            calls[] = 0
            e2 = caught_stack(() -> fit_mixture(c, 1:3; progress = cancel))
            n2 = calls[]
            # An exception in rank 2's callback: rethrown there, the others cancelled.
            boom = (it, ll, change) -> (r == 2 && error("progress failed on rank 2"); false)
            e3 = caught_stack(() -> fit_mixture(c, 2; progress = boom))
            (e1, n1, e2, n2, e3, fit_mixture(c, 2; progress = (it, ll, change) -> false))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            s1, n1, s2, n2, s3, again = g
            @test s1 isa Vector && s2 isa Vector && s3 isa Vector
            (s1 isa Vector && s2 isa Vector && s3 isa Vector) || continue
            for st in (s1, s2)
                e = last(st)
                @test e isa DirmnError && e.name === :DIRMN_ERROR_CANCELLED
            end
            # Every rank's callback ran, up to the cancelling iteration.
            @test n1 == 3 && n2 == 3
            e3 = last(s3)
            if r == 3
                @test e3 isa ErrorException && e3.msg == "progress failed on rank 2"
            else
                @test e3 isa DirmnError && e3.name === :DIRMN_ERROR_CANCELLED
            end
            @test mixture_matches(again, whole, rank_obs(r - 1, n, NM))
        end
    end

    @testset "k is checked against the whole table's observations, not a rank's" begin
        n = 3
        XS = XM[:, 1:12]                 # ranks of 2, 4 and 6 observations
        whole = fit_mixture(XS, 4; starts = 1, context = WCTX)
        got = run_ranks(World(n), XS) do r, c
            (fit_mixture(c, 4; starts = 1), caught_stack(() -> fit_mixture(c, 13; starts = 1)))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            m, st = g
            # Components of 2 to 6 observations: the Laplace criterion to 3e-9.
            @test mixture_matches(m, whole, rank_obs(r - 1, n, 12); laplace_rtol = 1e-7)
            e = st === nothing ? nothing : last(st)
            @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
            e isa DirmnError && @test occursin("the number of rows with counts (12)", e.message)
        end
    end

    @testset "a mixture of split counts is collective; detached, of this rank's observations" begin
        got = run_ranks(World(2), X) do r, c
            m = fit_mixture(c, 2; starts = 1)
            set_communicator!(c, nothing)
            (m, fit_mixture(c, 2; starts = 1),
             caught_stack(() -> test_groups(c, [b % 2 + 1 for b in 1:size(Matrix(c), 2)])))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println(sprint(showerror, g)); continue)
            split, own, tg = g
            obs = rank_obs(r - 1, 2, NOBS)
            @test split isa DirMultMixture && split.rows == length(obs) && split.nobs == NOBS
            @test own isa DirMultMixture && own.rows == length(obs) && own.nobs == length(obs)
            @test tg === nothing        # detached, the groups test runs
        end
        @test isempty(Dirmn._COMMUNICATORS)
    end

    # fit_dirmn_reg on split counts: every rank its own rows of the design
    # (and of the precision design, and its rows' weights).
    reg_cases = (
        ("log-linear, tall", YT, DT, nothing, nothing, NamedTuple()),
        ("log-linear, tall, weighted", YT, DT, nothing, reg_weights(150), NamedTuple()),
        ("log-linear, wide", YW, DW, nothing, nothing, NamedTuple()),
        ("log-linear, wide, weighted", YW, DW, nothing, reg_weights(40), NamedTuple()),
        ("log-linear, fewer rows than coefficients", YF, DF, nothing, nothing, NamedTuple()),
        ("mean/precision", YP, DP, nothing, nothing, (parametrization = :meanprecision,)),
        ("mean/precision, a precision design", YP, DP, ZP, nothing,
         (parametrization = :meanprecision,)),
        ("mean/precision, a precision design, weighted", YP, DP, ZP, reg_weights(120),
         (parametrization = :meanprecision,)),
        ("mean/precision, summing to zero, weighted", YP, DP, nothing, reg_weights(120),
         (parametrization = :meanprecision, contrast = :sum, reference = 3)))

    @testset "fit_dirmn_reg over $n rank$(n == 1 ? "" : "s") ($name) is the whole table's" for n in (1, 2, 3), (name, Y, D, Z, w, kw) in reg_cases
        rows = size(D, 1)
        whole = fit_dirmn_reg(Y, D; obsdim = 2, weights = w, precision_design = Z,
                              context = WCTX, kw...)
        @test whole.converged && whole.hessian_definite
        world = World(n)
        got = run_ranks(world, Y) do r, c
            obs = rank_obs(r, n, rows)
            empty!(world.logs[r + 1])
            f = fit_dirmn_reg(c, D[obs, :]; weights = w === nothing ? nothing : w[obs],
                              precision_design = Z === nothing ? nothing : Z[obs, :], kw...)
            roots = [l[4] for l in world.logs[r + 1] if l[1] === :broadcast!]
            # Per-row calls stay local: this rank's rows.
            pz = Z === nothing ? nothing : Z[obs, :]
            (f, roots, predict(f, D[obs, :]; precision_design = pz), wald_test(f),
             simulate(f; seed = 3)[1])
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            f, roots, pred, wald, sim = g
            obs = rank_obs(r - 1, n, rows)
            check_reg(f, whole, obs)
            # simulate draws this rank's observations, at their totals.
            @test size(sim) == (size(Y, 1), length(obs)) && vec(sum(sim; dims = 1)) == f.totals
            # Every rank the same fit, bit for bit.
            @test f.coefficients == got[1][1].coefficients && f.loglik === got[1][1].loglik
            # The Newton matrix is broadcast by each rank (one rank sends nothing).
            @test n == 1 || sort!(unique(roots)) == 0:(n - 1)
            pz = Z === nothing ? nothing : Z[obs, :]
            @test isapprox(pred, predict(whole, D[obs, :]; precision_design = pz); rtol = 1e-6)
            wwhole = wald_test(whole)
            @test all(isapprox(a.statistic, b.statistic; rtol = 1e-6) && a.dof == b.dof
                      for (a, b) in zip(wald, wwhole))
        end
        @test isempty(Dirmn._COMMUNICATORS)
    end

    @testset "fit_dirmn_reg: the design's rank is checked over every rank's rows" begin
        n, rows = 3, size(DT, 1)
        # A covariate constant on rank 0's rows only: no collinearity.
        DC = copy(DT)
        DC[rank_obs(0, n, rows), 2] .= 0.5
        whole = fit_dirmn_reg(YT, DC; obsdim = 2, context = WCTX)
        # A covariate that is another's multiple on every rank's rows.
        DM = copy(DT)
        DM[:, 3] .= 2 .* DM[:, 2]
        got = run_ranks(World(n), YT) do r, c
            obs = rank_obs(r, n, rows)
            (fit_dirmn_reg(c, DC[obs, :]), caught_stack(() -> fit_dirmn_reg(c, DM[obs, :])))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            f, stack = g
            check_reg(f, whole, rank_obs(r - 1, n, rows))
            @test stack isa Vector && length(stack) == 1
            stack isa Vector || continue
            e = last(stack)
            # Decided on the sums: every rank its own error, the same.
            @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
            e isa DirmnError || continue
            @test occursin("not of full column rank", e.message)
            @test occursin("[X[:, 3] in Julia: covariate 3]", e.message)
        end
    end

    @testset "fit_dirmn_reg: over ranks the Newton system is in the coefficients, DIRMN_REG_MAX_SYSTEM at most" begin
        # 2 × 4001 = 8002 coefficients over 6 rows: one process solves in
        # the rows' dimension; the ranks, which form the matrix whole, refuse
        # it on every rank (the decision on the sums).
        VL, rows = 4001, 6
        YL = rand(MersenneTwister(17), 1:3, VL, rows)
        DL = [ones(rows) 1:rows]
        whole = fit_dirmn_reg(YL, DL; obsdim = 2, context = WCTX)
        @test whole.converged && whole.parameters == 8002
        for n in (1, 2)
            got = run_ranks(World(n), YL) do r, c
                caught_stack(() -> fit_dirmn_reg(c, DL[rank_obs(r, n, rows), :]))
            end
            for g in got
                @test g isa Vector && length(g) == 1
                g isa Vector || continue
                e = last(g)
                @test e isa DirmnError && e.name === :DIRMN_ERROR_INVALID_ARGUMENT
                e isa DirmnError || continue
                @test occursin("8002 coefficients", e.message)
                @test occursin("DIRMN_REG_MAX_SYSTEM", e.message)
            end
        end
    end

    @testset "fit_dirmn_reg: a bad value on rank 1 fails it with its own error, the others with COMMUNICATION" begin
        for n in (2, 3)
            rows = size(DP, 1)
            whole = fit_dirmn_reg(YP, DP; obsdim = 2, parametrization = :meanprecision,
                                  precision_design = ZP, context = WCTX)
            got = run_ranks(World(n), YP) do r, c
                obs = rank_obs(r, n, rows)
                Dr, Zr = DP[obs, :], ZP[obs, :]
                Dbad, Zbad = copy(Dr), copy(Zr)
                wbad = ones(length(obs))
                if r == 1
                    Dbad[2, 2] = NaN
                    Zbad[3, 2] = Inf
                    wbad[4] = -1.0
                end
                mp = (parametrization = :meanprecision,)
                e1 = caught_stack(() -> fit_dirmn_reg(c, Dbad; precision_design = Zr, mp...))
                e2 = caught_stack(() -> fit_dirmn_reg(c, Dr; precision_design = Zbad, mp...))
                e3 = caught_stack(() -> fit_dirmn_reg(c, Dr; precision_design = Zr,
                                                      weights = wbad, mp...))
                e4 = caught_stack(() -> fit_dirmn_reg(c, r == 1 ? Dr[2:end, :] : Dr;
                                                      precision_design = r == 1 ? Zr[2:end, :] : Zr,
                                                      mp...))
                # The next collective call works again on every rank.
                (e1, e2, e3, e4, fit_dirmn_reg(c, Dr; precision_design = Zr, mp...))
            end
            for (r, g) in enumerate(got)
                @test g isa Tuple
                g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
                stacks, again = g[1:4], g[5]
                @test all(st -> st isa Vector && length(st) == 1, stacks)  # no cause
                all(st -> st isa Vector, stacks) || continue
                e1, e2, e3, e4 = map(last, stacks)
                @test all(e -> e isa DirmnError, (e1, e2, e3, e4))
                all(e -> e isa DirmnError, (e1, e2, e3, e4)) || continue
                if r == 2
                    @test e1.name === :DIRMN_ERROR_INVALID_PARAMETER
                    @test occursin("[X[2, 2] = NaN in Julia: row 2, covariate 2]", e1.message)
                    @test e2.name === :DIRMN_ERROR_INVALID_PARAMETER
                    @test occursin("[precision_design[3, 2] = Inf in Julia: row 3, precision " *
                                   "covariate 2]", e2.message)
                    @test e3.name === :DIRMN_ERROR_INVALID_PARAMETER
                    @test occursin("[weights[4] in Julia]", e3.message)
                    @test e4.name === :DIRMN_ERROR_DIMENSION_MISMATCH
                else
                    for e in (e1, e2, e3, e4)
                        @test e.name === :DIRMN_ERROR_COMMUNICATION
                        @test occursin("rank 1's part of this collective call failed", e.message)
                    end
                end
                check_reg(again, whole, rank_obs(r - 1, n, rows))
            end
        end
    end

    @testset "fit_dirmn_reg: a progress callback that cancels on one rank cancels every rank" begin
        n, rows = 3, size(DT, 1)
        whole = fit_dirmn_reg(YT, DT; obsdim = 2, context = WCTX)
        got = run_ranks(World(n), YT) do r, c
            Dr = DT[rank_obs(r, n, rows), :]
            calls = Ref(0)
            cancel = (it, ll, g) -> (calls[] += 1; r == 1 && it == 1)
            e1 = caught_stack(() -> fit_dirmn_reg(c, Dr; progress = cancel))
            n1 = calls[]
            # An exception in rank 2's callback: rethrown there, the others cancelled.
            boom = (it, ll, g) -> (r == 2 && error("progress failed on rank 2"); false)
            e2 = caught_stack(() -> fit_dirmn_reg(c, Dr; progress = boom))
            (e1, n1, e2, fit_dirmn_reg(c, Dr; progress = (it, ll, g) -> false))
        end
        for (r, g) in enumerate(got)
            @test g isa Tuple
            g isa Tuple || (println("rank $(r - 1): ", sprint(showerror, g)); continue)
            s1, n1, s2, again = g
            @test s1 isa Vector && s2 isa Vector
            (s1 isa Vector && s2 isa Vector) || continue
            e1 = last(s1)
            @test e1 isa DirmnError && e1.name === :DIRMN_ERROR_CANCELLED
            e1 isa DirmnError && @test occursin("cancelled after 1 Newton steps", e1.message)
            # Every rank's callback ran, up to the cancelling step.
            @test n1 == 1
            e2 = last(s2)
            if r == 3
                @test e2 isa ErrorException && e2.msg == "progress failed on rank 2"
            else
                @test e2 isa DirmnError && e2.name === :DIRMN_ERROR_CANCELLED
            end
            check_reg(again, whole, rank_obs(r - 1, n, rows))
        end
        @test isempty(Dirmn._COMMUNICATORS)
    end

    @testset "the group tests on split counts are not supported" begin
        got = run_ranks(World(2), X) do r, c
            m = size(Matrix(c), 2)
            (caught_stack(() -> test_groups(c, [b % 2 + 1 for b in 1:m])),
             caught_stack(() -> test_dirmn_groups(c, [ones(m) 1:m], [v % 2 + 1 for v in 1:V])),
             caught_stack(() -> test_proportions(c, fill(1 / V, V))))
        end
        for g in got
            @test g isa Tuple && all(st -> st isa Vector, g)
            g isa Tuple && all(st -> st isa Vector, g) || continue
            for (st, fn) in zip(g, ("dirmn_test_groups", "dirmn_reg_test_groups",
                                    "dirmn_test_proportions"))
                e = last(st)
                @test e isa DirmnError && e.name === :DIRMN_ERROR_NOT_SUPPORTED
                e isa DirmnError || continue
                @test occursin("$fn does not sum over ranks in this release (dirmn_fit, " *
                               "dirmn_loglik_sum, dirmn_overdispersion_test, dirmn_reg_fit and " *
                               "the mixture fits do)", e.message)
            end
        end
    end
end

catch err
    # A top-level testset with failures throws after printing its summary.
    err isa Test.TestSetException || rethrow()
    err
end

function tally(ts)
    p, f, e = ts.n_passed, 0, 0
    for r in ts.results
        if r isa Test.Fail
            f += 1
        elseif r isa Test.Error
            e += 1
        elseif r isa Test.AbstractTestSet
            a, b, c = tally(r)
            p += a; f += b; e += c
        end
    end
    return p, f, e
end

passed, failed, errored = result isa Test.TestSetException ?
    (result.pass, result.fail, result.error) : tally(result)
threads_text = join(sort!(unique(["$n ranks on $t threads" for (n, t) in RANK_THREADS])), ", ")
println("communicator: $passed passed, $failed failed, $errored errored ($threads_text; ",
        Threads.nthreads(), " threads)")
exit(failed + errored == 0 ? 0 : 1)
