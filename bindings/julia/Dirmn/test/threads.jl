# Closing a handle while another task computes with it (issue #20, item 3).

@testset "close while another thread computes" begin
    # The suite may run on one thread: the race needs two, in its own julia.
    project = dirname(@__DIR__)
    script = joinpath(@__DIR__, "race_script.jl")
    cmd = `$(Base.julia_cmd()) --startup-file=no --project=$project $script 200`
    out = IOBuffer()
    p = withenv("JULIA_NUM_THREADS" => "2") do
        run(pipeline(ignorestatus(cmd); stdout = out, stderr = out))
    end
    text = String(take!(out))
    @test p.exitcode == 0
    @test occursin(r"race: 400 rounds, [1-9]\d* on the other thread, 0 bad", text)
    p.exitcode == 0 || println(text)
end

@testset "finalizers take the context's lock without blocking" begin
    ctx = DirmnContext(:cpu)
    c = DirmnCounts(X; context = ctx)
    m = fit_mixture(X, 2; starts = 1, context = ctx)
    # Another task holds the lock, as a call in progress does.
    held = Channel{Nothing}(1)
    release = Channel{Nothing}(1)
    t = @async lock(ctx.lock) do
        put!(held, nothing)
        take!(release)
    end
    take!(held)
    # Run as the garbage collector would: nothing freed, nothing blocked.
    Dirmn._finalize_counts(c)
    Dirmn._finalize_mixture(m)
    @test c.ptr != C_NULL && m.ptr != C_NULL
    put!(release, nothing)
    wait(t)
    # Once the lock is free, the (re-registered) finalizers free the handles.
    Dirmn._finalize_counts(c)
    Dirmn._finalize_mixture(m)
    @test c.ptr == C_NULL && m.ptr == C_NULL
    @test !islocked(ctx.lock)
    e = @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik(c, ALPHA)
    @test occursin("closed", msg(e))
    e = @dirmn_error :DIRMN_ERROR_NULL_POINTER posterior(m, X)
    @test occursin("DirMultMixture was closed", msg(e))
    close(ctx)
end

@testset "a finalizer run by the task holding the context's lock frees" begin
    # A collection from a progress callback runs finalizers on the task that
    # holds the lock. Counts and mixtures are freed there: inside a library
    # call the library defers their destroy to the end of the call (see
    # callbacks.jl), outside one it frees them at once. A context is not
    # (the library keeps a context destroyed inside a call on it): its
    # finalizer is registered again.
    ctx = DirmnContext(:cpu)
    c = DirmnCounts(X; context = ctx)
    m = fit_mixture(X, 2; starts = 1, context = ctx)
    lock(ctx.lock) do
        Dirmn._finalize_counts(c)
        Dirmn._finalize_mixture(m)
        @test c.ptr == C_NULL && m.ptr == C_NULL
        Dirmn._finalize_context(ctx)
        @test ctx.ptr != C_NULL
    end
    Dirmn._finalize_context(ctx)
    @test ctx.ptr == C_NULL
    close(ctx)
end

@testset "every call on a closed handle raises a DirmnError" begin
    ctx = DirmnContext(:cpu)
    c = DirmnCounts(X; context = ctx)
    close(c)
    for f in (() -> loglik(c, ALPHA), () -> loglik(c, ALPHAS), () -> loglik_rowwise(c, AROW),
              () -> loglik_sum(c, ALPHA), () -> loglik_rowwise_derivatives(c, AROW),
              () -> fit_dirmn(c), () -> fit_mixture(c, 2), () -> totals(c),
              () -> Dirmn.info(c), () -> logpdf(DirMult(ALPHA), c))
        @dirmn_error :DIRMN_ERROR_NULL_POINTER f()
    end
    c2 = DirmnCounts(X; context = ctx)
    m = fit_mixture(c2, 2; starts = 1)
    close(m)
    @dirmn_error :DIRMN_ERROR_NULL_POINTER posterior(m, c2)
    @dirmn_error :DIRMN_ERROR_NULL_POINTER assignments(m, X)
    @test length(assignments(m)) == NOBS   # the copied values stay
    close(c2); close(ctx)
end
