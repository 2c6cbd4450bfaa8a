# close() from inside a progress callback of a call on the same context
# (issue #24, item 6): the call finishes with the right answer, the handle
# reads as closed at once, and it is really freed when the call returns
# (before, a context was kept by the library and lost, and the finalizer path
# kept counts and mixtures until a later collection).
#
# "Really freed" is measured, not assumed: the bytes malloc has handed out
# (glibc's mallinfo2, which libdirmn's allocations go through) for counts and
# mixtures, and the context's worker threads (/proc/self/task), which live
# exactly as long as the context and the counts made with it.

const _MALLINFO2 = Sys.islinux() ?
    Libdl.dlsym_e(Libdl.dlopen("libc.so.6"), :mallinfo2) : C_NULL

# Bytes in use by malloc (arena and mmapped chunks), or nothing without
# mallinfo2 (glibc before 2.33, not Linux).
function malloc_in_use()
    _MALLINFO2 == C_NULL && return nothing
    m = ccall(_MALLINFO2, NTuple{10,Csize_t}, ())
    return Int(m[8]) + Int(m[5])   # uordblks + hblkhd
end

# Runs f() with the garbage collector off, so that nothing Julia frees is
# counted as freed by the library.
function without_gc(f)
    GC.gc()
    GC.enable(false)
    try
        return f()
    finally
        GC.enable(true)
    end
end

thread_ids() = Set(readdir("/proc/self/task"))
# The library's pool threads among them (it names them "dirmn-worker"); a
# thread Julia starts meanwhile is not one of them.
pool_thread_ids() = Set(t for t in readdir("/proc/self/task")
                        if startswith(something(tryread_comm(t), ""), "dirmn-worker"))
tryread_comm(t) = try strip(read("/proc/self/task/$t/comm", String)) catch; nothing end
# A joined thread leaves /proc/self/task only when the kernel has reaped it,
# a moment after pthread_join returns (longer on a loaded machine): wait for
# that, up to a bound.
function gone_within(ids, seconds)
    deadline = time() + seconds
    while !isempty(intersect(ids, thread_ids()))
        time() > deadline && return false
        sleep(0.01)
    end
    return true
end

# A new pool's threads name themselves once they run (a moment after the
# pool is made, longer on a loaded machine): wait for n new ones, up to a
# bound, and return those seen.
function new_pool_threads(before, n, seconds)
    deadline = time() + seconds
    while true
        w = setdiff(pool_thread_ids(), before)
        (length(w) >= n || time() > deadline) && return w
        sleep(0.01)
    end
end

# A table whose stored form is large (4000 observations × 2000 categories,
# dense, 8 bits a count: 8 MB) from a small sparse input.
const CB_RNG = MersenneTwister(2024)
const CB_S = let S = sprand(CB_RNG, 2000, 4000, 0.002, (r, k) -> rand(r, 1:5, k))
    S[1, :] .= 3              # every observation has counts
    S[2, 1:2:end] .= 7        # and the table some overdispersion
    S
end
const CB_BYTES = 2000 * 4000
big_counts(ctx) = DirmnCounts(CB_S; storage = :dense, context = ctx)

@testset "fit_dirmn's progress callback" begin
    calls = Tuple{Int,Float64,Float64}[]
    r = fit_dirmn(MIX_X; progress = (i, ll, g) -> push!(calls, (i, ll, g)))
    ref = fit_dirmn(MIX_X)
    @test r.alpha == ref.alpha && r.converged
    # Once after each iteration, counted from 1 to the result's iterations.
    @test !isempty(calls) && [c[1] for c in calls] == 1:r.iterations
    # The log pmf (the scale of r.loglik), not the kernel.
    @test calls[end][2] ≈ r.loglik rtol = 1e-8
    @test abs(calls[end][2] - r.loglik) < abs(calls[end][2] - r.loglik_kernel)
    @test all(c -> isfinite(c[3]) && c[3] >= 0, calls)
    n = Ref(0)
    @dirmn_error :DIRMN_ERROR_CANCELLED fit_dirmn(MIX_X; progress = (i, ll, g) -> (n[] += 1; n[] >= 2))
    @test n[] == 2
    e = caught(() -> fit_dirmn(MIX_X; progress = (i, ll, g) -> throw(ArgumentError("stop here"))))
    @test e isa ArgumentError && e.msg == "stop here"
    @test fit_mle(DirMult, MIX_X; progress = (i, ll, g) -> nothing).alpha == ref.alpha
    # Computing with the same context from the callback is refused.
    ctx = DirmnContext(:cpu)
    c = DirmnCounts(MIX_X; context = ctx)
    inner = Any[]
    fit_dirmn(c; progress = (i, ll, g) -> (i == 1 && push!(inner, caught(() -> totals(c))); nothing))
    @test inner[1] isa DirmnError && inner[1].name === :DIRMN_ERROR_CONTEXT_IN_USE
    close(c); close(ctx)
end

@testset "close() inside a progress callback" begin
    have_mallinfo = malloc_in_use() !== nothing
    have_mallinfo || @test_skip "no mallinfo2: frees not measured"

    @testset "close(counts) from a callback of a fit on them" begin
        ctx = DirmnContext(:cpu)
        for which in (:fit_dirmn, :fit_mixture)
            c = big_counts(ctx)
            @test Dirmn.info(c).storage === :dense && Dirmn.info(c).value_bits == 8
            ref = which === :fit_dirmn ? fit_dirmn(c) :
                  fit_mixture(c, 2; starts = 1, max_iterations = 4, seed = 5)
            inside = Any[]
            prog = function (i, ll, ch)
                if i == 1
                    push!(inside, malloc_in_use())
                    close(c)
                    push!(inside, isopen(c))
                    close(c)     # idempotent, still inside
                end
                return nothing
            end
            r, after = without_gc() do
                r = which === :fit_dirmn ? fit_dirmn(c; progress = prog) :
                    fit_mixture(c, 2; starts = 1, max_iterations = 4, seed = 5, progress = prog)
                (r, malloc_in_use())
            end
            @test length(inside) == 2 && inside[2] === false
            # The call finished on the table it was given.
            if which === :fit_dirmn
                @test r.converged && relerr(r.alpha, ref.alpha) <= 1e-10
                @test r.loglik ≈ ref.loglik rtol = 1e-12
                @test nobs(r) == nobs(ref)
            else
                @test r.alpha ≈ ref.alpha rtol = 1e-10
                @test r.loglik ≈ ref.loglik rtol = 1e-12
                close(r); close(ref)
            end
            # Freed when the call returned (the library deferred the destroy).
            have_mallinfo && @test inside[1] - after >= 3 * CB_BYTES ÷ 4
            @test !isopen(c) && c.ptr == C_NULL
            e = @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik(c, ones(2000))
            @test occursin("closed", msg(e))
            @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_dirmn(c)
            close(c)                      # no double free
            Dirmn._finalize_counts(c)     # nor from the finalizer
        end
        @test isopen(ctx) && relerr(loglik(X, ALPHA; context = ctx), REF) <= RTOL
        close(ctx)
    end

    @testset "close(mixture) from a callback of a call on its context" begin
        ctx = DirmnContext(:cpu)
        # A mixture the library holds 20000 × 5 responsibilities of (800 kB).
        rng = MersenneTwister(11)
        Xm = hcat(rand(rng, 0:3, 5, 10000), rand(rng, 0:3, 5, 10000) .* [4, 0, 1, 0, 2])
        for which in (:fit_dirmn, :fit_mixture)
            m = fit_mixture(Xm, 5; starts = 1, max_iterations = 3, context = ctx)
            @test m.context === ctx
            held = 20000 * 5 * 8
            ref = which === :fit_dirmn ? fit_dirmn(MIX_X; context = ctx) :
                  fit_mixture(MIX_X, 2; starts = 1, seed = 3, context = ctx)
            inside = Any[]
            prog = function (i, ll, ch)
                if i == 1
                    push!(inside, malloc_in_use())
                    close(m)
                    push!(inside, isopen(m))
                end
                return nothing
            end
            r, after = without_gc() do
                r = which === :fit_dirmn ? fit_dirmn(MIX_X; context = ctx, progress = prog) :
                    fit_mixture(MIX_X, 2; starts = 1, seed = 3, context = ctx, progress = prog)
                (r, malloc_in_use())
            end
            @test length(inside) == 2 && inside[2] === false
            @test r.loglik ≈ ref.loglik rtol = 1e-12
            @test r.alpha ≈ ref.alpha rtol = 1e-10
            have_mallinfo && @test inside[1] - after >= 3 * held ÷ 4
            @test !isopen(m) && m.ptr == C_NULL
            e = @dirmn_error :DIRMN_ERROR_NULL_POINTER posterior(m, Xm[:, 1:3])
            @test occursin("DirMultMixture was closed", msg(e))
            @test length(assignments(m)) == 20000     # the copied values stay
            close(m)
            Dirmn._finalize_mixture(m)
            which === :fit_mixture && (close(r); close(ref))
        end
        close(ctx)
    end

    @testset "close(ctx) from a callback of a call on it" begin
        ref_fit = fit_dirmn(MIX_X; context = DirmnContext(:cpu))
        ref_mix = fit_mixture(MIX_X, 2; starts = 1, seed = 3, context = DirmnContext(:cpu))
        for which in (:fit_dirmn, :fit_mixture), also_counts in (false, true)
            before = pool_thread_ids()
            ctx = DirmnContext(:cpu)
            Dirmn.set_threads!(ctx, 4)
            workers = new_pool_threads(before, 3, 10)
            @test length(workers) == 3
            c = DirmnCounts(MIX_X; context = ctx)
            inside = Any[]
            prog = function (i, ll, ch)
                if i == 1
                    close(ctx)
                    also_counts && close(c)
                    push!(inside, isopen(ctx))
                    # The context reads as closed inside the call already.
                    push!(inside, caught(() -> Dirmn.get_threads(ctx)))
                    close(ctx)   # idempotent
                end
                return nothing
            end
            r = which === :fit_dirmn ? fit_dirmn(c; progress = prog) :
                fit_mixture(c, 2; starts = 1, seed = 3, progress = prog)
            @test length(inside) == 2 && inside[1] === false
            @test inside[2] isa DirmnError && inside[2].name === :DIRMN_ERROR_NULL_POINTER
            # The call finished with the right answer ...
            ref = which === :fit_dirmn ? ref_fit : ref_mix
            @test r.loglik ≈ ref.loglik rtol = 1e-12
            @test r.alpha ≈ ref.alpha rtol = 1e-10
            # ... and the context was freed when it returned. Its threads
            # live on in the counts made with it until they are freed too.
            @test !isopen(ctx) && ctx.ptr == C_NULL && ctx.deferred == C_NULL
            also_counts || close(c)
            @test gone_within(workers, 10)
            @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_dirmn(MIX_X; context = ctx)
            @dirmn_error :DIRMN_ERROR_NULL_POINTER Dirmn.set_threads!(ctx, 1)
            close(ctx)
            Dirmn._finalize_context(ctx)
            if which === :fit_mixture
                # The new mixture is on the closed context: its fields stay,
                # new data can no longer be uploaded there.
                @test length(assignments(r)) == size(MIX_X, 2)
                @dirmn_error :DIRMN_ERROR_NULL_POINTER posterior(r, MIX_XNEW)
                close(r)
            end
        end
        close(ref_mix)
    end

    @testset "a finalizer run inside a call frees when the call returns" begin
        # A collection from a progress callback runs finalizers on the task
        # that holds the context's lock, inside the library call; the
        # library defers the free to the end of the call (before, the
        # finalizer was registered again and the table kept until a later
        # collection).
        have_mallinfo || return
        ctx = DirmnContext(:cpu)
        c = big_counts(ctx)
        m = fit_mixture(MIX_X, 2; starts = 1, context = ctx)
        inside = Any[]
        r, after = without_gc() do
            r = fit_dirmn(MIX_X; context = ctx, progress = function (i, ll, ch)
                if i == 1
                    push!(inside, malloc_in_use())
                    Dirmn._finalize_counts(c)     # as the collector would
                    Dirmn._finalize_mixture(m)
                    push!(inside, c.ptr == C_NULL && m.ptr == C_NULL)
                end
                nothing
            end)
            (r, malloc_in_use())
        end
        @test inside[2] === true
        @test inside[1] - after >= 3 * CB_BYTES ÷ 4
        @test r.converged
        close(c); close(m)
        close(ctx)
    end
end
