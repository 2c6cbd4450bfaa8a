# Loading, handles, finalizers.

@testset "library" begin
    L = Dirmn.LibDirmn
    @test isfile(Dirmn.library_path())
    v = Int(L.dirmn_version_number())
    @test v ÷ 10000 == L.DIRMN_VERSION_MAJOR
    @test Dirmn.version() == VersionNumber(v ÷ 10000, (v ÷ 100) % 100, v % 100)
    @test :cpu in backends()
    @test (:cuda in backends()) == (Dirmn.cuda_device_count() > 0)
    @test Dirmn.backend_compiled(:cpu) && Dirmn.backend_compiled(:auto)
    Dirmn.cuda_device_count() > 0 && @test Dirmn.backend_compiled(:cuda)

    @testset "finding the library" begin
        real = realpath(Dirmn.library_path())
        dir = mktempdir()
        mkpath(joinpath(dir, "lib", "x86_64-linux-gnu"))
        file = joinpath(dir, "lib", "x86_64-linux-gnu", "libdirmn.so.0")
        symlink(real, file)
        # A file, its directory, and an install prefix all name the library.
        for (env, want) in ((file, file), (dirname(file), file), (dir, file))
            got = withenv(() -> L.find_library(), "DIRMN_LIBRARY_PATH" => env)
            @test got == want
        end
        e = caught(() -> withenv(() -> L.find_library(), "DIRMN_LIBRARY_PATH" => joinpath(dir, "nope")))
        @test e isa ErrorException && occursin("DIRMN_LIBRARY_PATH", e.msg)
        # Loading through the symlink again keeps everything working.
        @test L.load_library(file) == file
        @test relerr(loglik(X, ALPHA), REF) <= RTOL
    end

    cc = Sys.which("cc")
    if cc === nothing
        @test_skip "no C compiler: version-mismatch check not exercised"
    else
        @testset "a library of another major version is refused" begin
            dir = mktempdir()
            src = joinpath(dir, "fake.c")
            write(src, "unsigned dirmn_version_number(void) { return 10203; }\n")
            so = joinpath(dir, "libdirmn.so.0")
            run(`$cc -shared -fPIC -o $so $src`)
            before = Dirmn.library_path()
            e = caught(() -> L.load_library(so))
            @test e isa ErrorException
            @test e isa ErrorException && occursin("1.2.3", e.msg) && occursin("major version 0", e.msg)
            # The refused library replaced nothing.
            @test Dirmn.library_path() == before
            @test relerr(loglik(X, ALPHA), REF) <= RTOL
        end
    end

    @testset "loading fails clearly without a library" begin
        # __init__ runs in a fresh process; its error must say what to do.
        code = "using Dirmn"
        # (@__DIR__ inside the backticks would be the working directory.)
        project = dirname(@__DIR__)
        cmd = `$(Base.julia_cmd()) --startup-file=no --project=$project -e $code`
        out = IOBuffer()
        p = withenv("DIRMN_LIBRARY_PATH" => "/nonexistent/libdirmn.so.0") do
            run(pipeline(ignorestatus(cmd); stdout = out, stderr = out))
        end
        text = String(take!(out))
        @test p.exitcode != 0
        @test occursin("DIRMN_LIBRARY_PATH", text)
    end
end

@testset "handles and finalizers" begin
    @testset "idempotent close" begin
        ctx = DirmnContext(:cpu)
        c = DirmnCounts(X; context = ctx)
        close(c); close(c)
        @test !isopen(c)
        close(ctx); close(ctx)
        @test !isopen(ctx)
        # Closing in the other order is as fine.
        ctx = DirmnContext(:cpu)
        c = DirmnCounts(X; context = ctx)
        close(ctx)
        close(c); close(c)
        @test !isopen(c) && !isopen(ctx)
    end

    @testset "many unreferenced objects are finalized" begin
        for i in 1:200
            ctx = DirmnContext(:cpu)
            c = DirmnCounts(i % 2 == 0 ? X : sparse(X); context = ctx)
            i % 3 == 0 && close(c)          # some closed, then finalized too
            i % 5 == 0 && close(ctx)        # some contexts closed before their counts
        end
        GC.gc(); GC.gc()
        # Counts kept while their context is only reachable through them.
        keep = [DirmnCounts(X; context = DirmnContext(:cpu)) for _ in 1:20]
        GC.gc()
        @test all(relerr(loglik(c, ALPHA), REF) <= RTOL for c in keep)
        keep = nothing
        GC.gc(); GC.gc()
        @test relerr(loglik(X, ALPHA), REF) <= RTOL
    end

    @testset "a closed default context is replaced" begin
        ctx = default_context(:cpu)
        close(ctx)
        ctx2 = default_context(:cpu)
        @test ctx2 !== ctx && isopen(ctx2)
        @test relerr(loglik(X, ALPHA; backend = :cpu), REF) <= RTOL
    end
end
