# Run by threads.jl in its own julia with JULIA_NUM_THREADS=2: one task
# computes with a handle in a loop while another closes it (issue #20,
# item 3). Before close() took the context's lock this freed the handle under
# the running call and crashed the process. Prints one line "race: ..." and
# exits non-zero when any round went wrong.
using Dirmn
using Random

Threads.nthreads() >= 2 || (println("race: needs 2 threads, has ", Threads.nthreads()); exit(2))

const ROUNDS = parse(Int, get(ARGS, 1, "200"))
rng = MersenneTwister(20)
const XB = rand(rng, 0:30, 40, 3000)          # 40 categories × 3000 observations
const AL = rand(rng, 40) .+ 0.5
const XS = rand(rng, 0:9, 40, 60)

# Spins (not yielding, so the worker must run on the other thread) until
# `flag` is set; a safepoint lets the worker's garbage collections proceed.
function spin_until(flag)
    t0 = time()
    while !flag[]
        GC.safepoint()
        time() - t0 > 30 && return false
    end
    return true
end

# One round: `work()` in a loop on another thread until it throws; close(h)
# from here once it has succeeded once. What the loop ended with.
function round(h, work)
    started = Threads.Atomic{Bool}(false)
    t = Threads.@spawn begin
        n = 0
        err = nothing
        while n < 10^6
            try
                work()
            catch e
                err = e
                break
            end
            n += 1
            started[] = true
        end
        (n, err, Threads.threadid())
    end
    spin_until(started) || return (0, ErrorException("the worker never started"), 0)
    Libc.systemsleep(rand() * 2e-3)   # close at a random point of a call
    close(h)
    return fetch(t)
end

bad = String[]
other_thread = 0
function check(what, r)
    n, err, tid = r
    global other_thread += tid != Threads.threadid()
    ok = n >= 1 && err isa DirmnError && err.name === :DIRMN_ERROR_NULL_POINTER &&
         occursin("closed", err.message)
    ok || push!(bad, string(what, ": ", n, " calls, then ", repr(err)))
end

ctx = DirmnContext(:cpu)
for i in 1:ROUNDS
    c = DirmnCounts(XB; context = ctx)
    check("loglik", round(c, () -> loglik(c, AL)))
    isopen(c) && push!(bad, "counts still open after close")
end
for i in 1:ROUNDS
    m = fit_mixture(XS, 2; starts = 1, max_iterations = 5, context = ctx)
    check("posterior", round(m, () -> posterior(m, XB)))
end
# Finalizers that find the context busy (another thread computing on it)
# must not block; they free the handle at a later collection.
c = DirmnCounts(XB; context = ctx)
busy = Threads.Atomic{Bool}(true)
t = Threads.@spawn begin
    while busy[]
        loglik(c, AL)
    end
end
for i in 1:50
    DirmnCounts(XS; context = ctx)
    i % 10 == 0 && GC.gc()
end
busy[] = false
wait(t)
GC.gc(); GC.gc()
isfinite(sum(loglik(c, AL))) || push!(bad, "loglik after the finalizers")
close(c)

println("race: ", 2 * ROUNDS, " rounds, ", other_thread, " on the other thread, ",
        length(bad), " bad", isempty(bad) ? "" : string(": ", first(bad)))
exit(isempty(bad) && other_thread > 0 ? 0 : 1)
