# The CUDA backend, where the library has it and a device exists; recorded as
# skipped (broken) tests elsewhere so the summary shows they did not run.

@testset "CUDA" begin
    if !(:cuda in backends())
        @test_skip "no CUDA device (or libdirmn built without CUDA)"
    else
        ctx = DirmnContext(:cuda, 0)
        @test ctx.backend === :cuda && ctx.device == 0
        @test default_context(:auto).backend === :cuda
        for Y in (X, Int32.(X), Float32.(X), sparse(X))
            c = DirmnCounts(Y; context = ctx)
            @test Dirmn.info(c).backend === :cuda
            @test relerr(loglik(c, ALPHA), REF) <= RTOL
            @test relerr(loglik(c, ALPHAS; full = false), REF_K_KERNEL) <= RTOL
            @test relerr(loglik_rowwise(c, AROW), REF_ROW) <= RTOL
            @test relerr(loglik(c, log.(ALPHA); param = :logalpha), REF) <= RTOL
            @test totals(c) == vec(sum(X; dims = 1))
            close(c)
        end
        @test relerr(loglik(permutedims(X), ALPHA; obsdim = 1, backend = :cuda), REF) <= RTOL
        Dirmn.set_precision!(ctx, :fast)
        @test relerr(loglik(X, ALPHA; context = ctx), REF) <= 1e-5
        Dirmn.set_precision!(ctx, :double)
        Dirmn.synchronize(ctx)
        # CPU counts cannot be used with a CUDA context.
        c = DirmnCounts(X; backend = :cpu)
        e = caught(() -> loglik(c, ALPHA; context = ctx))
        @test e isa DirmnError && e.name === :DIRMN_ERROR_WRONG_CONTEXT
        close(c)
        for i in 1:50
            DirmnCounts(X; context = DirmnContext(:cuda))
        end
        GC.gc(); GC.gc()
        @test relerr(loglik(X, ALPHA; context = ctx), REF) <= RTOL
        close(ctx)
    end
end
