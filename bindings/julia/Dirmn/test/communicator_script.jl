# Run by communicator.jl in its own julia with JULIA_NUM_THREADS=3: a table
# split by observations over 2 and 3 ranks (1 to 3 for the mixtures:
# fit_dirmn, loglik_sum, overdispersion_test and fit_mixture are
# collective), each rank a task with its own
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
# collective fails on every rank.
mutable struct World
    n::Int
    slots::Vector{Any}
    cond::Threads.Condition
    arrived::Int
    generation::Int
    fail_at::Int
end
World(n; fail_at = -1) = World(n, Vector{Any}(nothing, n), Threads.Condition(), 0, 0, fail_at)

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
    allreduce! = function (buf)
        k = (calls[] += 1)
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
        calls[] += 1
        r == root && (w.slots[r + 1] = copy(buf))
        barrier(w)
        r == root || copyto!(buf, w.slots[root + 1])
        barrier(w)
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

    @testset "the groups test on split counts is not supported" begin
        got = run_ranks(World(2), X) do r, c
            caught_stack(() -> test_groups(c, [b % 2 + 1 for b in 1:size(Matrix(c), 2)]))
        end
        for g in got
            @test g isa Vector
            g isa Vector || continue
            e = last(g)
            @test e isa DirmnError && e.name === :DIRMN_ERROR_NOT_SUPPORTED
            e isa DirmnError && @test occursin("does not sum over ranks", e.message)
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
