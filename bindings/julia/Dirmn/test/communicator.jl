# A table split by observations over a communicator's ranks (Communicator,
# set_communicator!): one rank here, over functions that leave the buffers
# as they are (the sum over one rank), and 2 and 3 ranks over threads in
# communicator_script.jl, in its own julia.

# One rank's functions: the sum over one rank is the buffer itself. `log`
# records the calls; `fail(kind, k)` says whether the k-th call (of either
# kind) throws.
function one_rank(; log = Any[], fail = (kind, k) -> false)
    calls = Ref(0)
    ar = function (buf)
        k = (calls[] += 1)
        push!(log, (:allreduce!, eltype(buf), length(buf)))
        fail(:allreduce!, k) && error("allreduce! failed at call $k")
        buf
    end
    bc = function (buf, root)
        k = (calls[] += 1)
        push!(log, (:broadcast!, length(buf), root))
        fail(:broadcast!, k) && throw(ArgumentError("broadcast! failed at call $k"))
        buf
    end
    return Communicator(0, 1; allreduce! = ar, broadcast! = bc)
end

# Float64 vectors equal bit for bit (=== on each entry; NaNs included).
same_bits(a, b) = length(a) == length(b) && all(a .=== b)

# The exceptions `f` leaves on the exception stack: [cause..., error].
function caught_stack(f)
    try
        f()
    catch
        return [e for (e, _) in Base.catch_stack()]
    end
    return nothing
end

registered(comm::Communicator) = haskey(Dirmn._COMMUNICATORS, comm.state)

@testset "communicator" begin
    L = Dirmn.LibDirmn
    W = [1.0, 2.0, 0.0, 1.0, 3.0, 1.0, 2.0, 1.0, 1.0][1:NOBS]

    @testset "one rank gives the plain fit, bit for bit" begin
        ctx = DirmnContext(:cpu)
        comm = one_rank()
        @test comm isa Communicator
        @test rank(comm) == 0 && nranks(comm) == 1
        @test isopen(comm)
        @test sprint(show, comm) == "Communicator(rank 0 of 1)"
        @test registered(comm)
        c = DirmnCounts(X; context = ctx)
        @test set_communicator!(c, comm) === c
        for w in (nothing, W)
            plain = fit_dirmn(X; weights = w, context = ctx)
            f = fit_dirmn(c; weights = w)
            @test same_bits(f.alpha, plain.alpha)
            @test same_bits(f.std_error_alpha, plain.std_error_alpha)
            @test same_bits(f.std_error_log_alpha, plain.std_error_log_alpha)
            @test f.iterations == plain.iterations && f.converged == plain.converged
            @test f.loglik_kernel === plain.loglik_kernel
            @test isapprox(f.loglik, plain.loglik; rtol = 1e-14)
            @test f.nobs === plain.nobs && f.parameters == plain.parameters
            @test same_bits(f.hessian_diag, plain.hessian_diag)
            @test f.totals == plain.totals
        end
        @test fit_mle(DirMult, c).alpha == fit_mle(DirMult, X; context = ctx).alpha
        s, want = loglik_sum(c, ALPHA; weights = W), loglik_sum(X, ALPHA; weights = W)
        @test isapprox(s.value, want.value; rtol = 1e-14)
        @test isapprox(s.gradient, want.gradient; rtol = 1e-14)
        t, tw = overdispersion_test(c), overdispersion_test(X)
        @test isapprox(t.statistic, tw.statistic; rtol = 1e-12) && t.nobs == tw.nobs
        @test overdispersion_test(c; method = :score).statistic ==
              overdispersion_test(X; method = :score).statistic
        # Per-observation calls stay local.
        @test loglik(c, ALPHA) == loglik(X, ALPHA)
        @test totals(c) == totals(DirmnCounts(X))
        @test Matrix(c) == X
        close(c)
        close(comm)
        close(ctx)
    end

    @testset "the library calls the functions with Int64, Float64 and byte buffers" begin
        log = Any[]
        comm = one_rank(log = log)
        c = DirmnCounts(X)
        set_communicator!(c, comm)
        @test !isempty(log)                       # the attach is collective
        @test all(l -> l[1] === :allreduce!, log)
        empty!(log)
        fit_dirmn(c)
        @test (:allreduce!, Int64) in [l[1:2] for l in log]
        @test (:allreduce!, Float64) in [l[1:2] for l in log]
        # broadcast!'s byte buffers and roots: over 2 ranks, in
        # communicator_script.jl (one rank merges nothing, and its fit,
        # one process's bit for bit, need not broadcast at all).
        close(c); close(comm)
    end

    @testset "an exception in a function: DIRMN_ERROR_COMMUNICATION, caused by it" begin
        # Throws at the first call of the fit (after the attach's).
        log = Any[]
        comm = one_rank(log = log, fail = (kind, k) -> k == 3)
        c = DirmnCounts(X)
        set_communicator!(c, comm)
        @test length(log) == 2
        stack = caught_stack(() -> fit_dirmn(c))
        @test stack !== nothing && length(stack) == 2
        cause, e = stack[1], stack[end]
        @test cause isa ErrorException && cause.msg == "allreduce! failed at call 3"
        @test e isa DirmnError && e.name === :DIRMN_ERROR_COMMUNICATION
        @test e.status == L.DIRMN_ERROR_COMMUNICATION
        @test occursin(r"allreduce_(int64|double) callback returned -1", e.message)
        @test occursin("[the Communicator's allreduce! threw ErrorException: allreduce! failed " *
                       "at call 3]", e.message)
        @test occursin("communication", sprint(showerror, e))
        # The error is reported once: the next call that fails for another
        # reason says nothing of it.
        e2 = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(c; weights = -W)
        @test !occursin("threw", e2.message)
        @test occursin("[weights[1] in Julia]", e2.message)
        close(c); close(comm)

        # The same in loglik_sum and the attach itself. (Through broadcast!:
        # over 2 ranks, both failing after the same exchange, in
        # communicator_script.jl; one rank need not broadcast.)
        comm = one_rank(fail = (kind, k) -> k == 3)
        c = DirmnCounts(X)
        set_communicator!(c, comm)
        stack = caught_stack(() -> loglik_sum(c, ALPHA))
        @test stack[1] isa ErrorException
        @test stack[end] isa DirmnError && stack[end].name === :DIRMN_ERROR_COMMUNICATION
        close(c); close(comm)
        comm = one_rank(fail = (kind, k) -> true)
        c = DirmnCounts(X)
        stack = caught_stack(() -> set_communicator!(c, comm))
        @test stack[1] isa ErrorException && stack[1].msg == "allreduce! failed at call 1"
        @test stack[end] isa DirmnError && stack[end].name === :DIRMN_ERROR_COMMUNICATION
        @test occursin("dirmn_counts_set_communicator", stack[end].message)
        @test occursin("the Communicator's allreduce! threw", stack[end].message)
        # Not attached: the counts are a whole table still.
        @test fit_dirmn(c).alpha == fit_dirmn(X).alpha
        close(c); close(comm)
    end

    @testset "creation checks its arguments" begin
        ar, bc = identity, (b, r) -> b
        n0 = length(Dirmn._COMMUNICATORS)
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT Communicator(3, 3; allreduce! = ar,
                                                                   broadcast! = bc)
        @test occursin("callbacks->rank (3) is outside [0, 3)", e.message)
        @test occursin("ranks count from 0", e.message)
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT Communicator(-1, 2; allreduce! = ar,
                                                                    broadcast! = bc)
        @test occursin("outside [0, 2)", e.message)
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT Communicator(0, 0; allreduce! = ar,
                                                                   broadcast! = bc)
        @test occursin("callbacks->ranks (0) is below 1", e.message)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER Communicator(0, 2; allreduce! = nothing,
                                                               broadcast! = bc)
        @test occursin("allreduce_int64 is NULL", e.message)
        @test occursin("[allreduce! = nothing in Julia]", e.message)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER Communicator(0, 2; allreduce! = ar,
                                                               broadcast! = nothing)
        @test occursin("callbacks->broadcast is NULL", e.message)
        @test caught(() -> Communicator(0, 2; allreduce! = ar)) isa UndefKeywordError
        @test caught(() -> Communicator(0, 2; broadcast! = bc)) isa UndefKeywordError
        @test caught(() -> Communicator(0, 2^40; allreduce! = ar, broadcast! = bc)) isa
              ArgumentError
        # Nothing of the failed ones stays registered.
        Dirmn._sweep!()
        @test length(Dirmn._COMMUNICATORS) == n0
        comm = Communicator(1, 4; allreduce! = ar, broadcast! = bc)
        @test rank(comm) == 1 && nranks(comm) == 4
        @test (comm.rank, comm.ranks) == (1, 4)
        close(comm)
    end

    @testset "the low-level layer" begin
        r, n = Ref{Cint}(-1), Ref{Cint}(-1)
        @test L.dirmn_communicator_get_rank(C_NULL, r, n) == L.DIRMN_ERROR_NULL_POINTER
        out = Ref{Ptr{Cvoid}}(C_NULL)
        @test L.dirmn_communicator_create(out, C_NULL) == L.DIRMN_ERROR_NULL_POINTER
        @test L.dirmn_communicator_create(C_NULL, C_NULL) == L.DIRMN_ERROR_NULL_POINTER
        small = Ref(L.dirmn_communicator_callbacks(Csize_t(8), 0, 1, C_NULL, C_NULL, C_NULL,
                                                   C_NULL, C_NULL))
        @test L.dirmn_communicator_create(out, small) == L.DIRMN_ERROR_INVALID_ARGUMENT
        @test occursin("callbacks->size (8) is too small", unsafe_string(L.dirmn_last_error(C_NULL)))
        L.dirmn_communicator_destroy(C_NULL)
        @test unsafe_string(L.dirmn_status_name(L.DIRMN_ERROR_COMMUNICATION)) ==
              "DIRMN_ERROR_COMMUNICATION"
        @test DirmnError(L.DIRMN_ERROR_COMMUNICATION, "").name === :DIRMN_ERROR_COMMUNICATION
        # The handle as Communicator holds it.
        comm = one_rank()
        @test L.dirmn_communicator_get_rank(comm.ptr, r, n) == L.DIRMN_SUCCESS
        @test (r[], n[]) == (0, 1)
        close(comm)
    end

    @testset "mixtures and regressions on split counts; detaching; the estimators that refuse them" begin
        ctx = DirmnContext(:cpu)
        comm = one_rank()
        c = DirmnCounts(X; context = ctx)
        set_communicator!(c, comm)
        # A mixture over one rank is the plain one (to the M step's accuracy
        # in the parameters), and a range of k grows each k from k - 1 there
        # too (2 and 3 ranks: communicator_script.jl).
        for w in (nothing, W)
            m = fit_mixture(c, 2; starts = 2, weights = w)
            want = fit_mixture(X, 2; starts = 2, weights = w, context = ctx)
            @test m isa DirMultMixture
            @test isapprox(m.loglik, want.loglik; rtol = 1e-9)
            @test isapprox(m.bic, want.bic; rtol = 1e-9)
            @test isapprox(m.alpha, want.alpha; rtol = 1e-5)
            @test isapprox(m.mixture_weights, want.mixture_weights; rtol = 1e-5)
            @test isapprox(m.responsibilities, want.responsibilities; atol = 1e-5)
            @test m.rows == NOBS && m.nobs == want.nobs && m.totals == want.totals
        end
        s = fit_mixture(c, 1:2; starts = 1)
        want = fit_mixture(X, 1:2; starts = 1, context = ctx)
        @test s isa MixtureSelection && s.k == want.k
        @test isapprox(s.scores, want.scores; rtol = 1e-9)
        # A regression over one rank is the plain one: the log-likelihood to
        # rounding, the coefficients and standard errors to the Newton
        # solves' (the ranks form the Newton matrix whole, where one process
        # with fewer rows than coefficients solves in the rows' dimension);
        # 2 and 3 ranks: communicator_script.jl.
        D = [ones(NOBS) range(-1, 1; length = NOBS)]
        for kw in ((parametrization = :loglinear,), (parametrization = :meanprecision,))
            f = fit_dirmn_reg(c, D; kw...)
            want = fit_dirmn_reg(X, D; obsdim = 2, context = ctx, kw...)
            @test f isa DirmnRegression
            @test isapprox(f.loglik, want.loglik; rtol = 1e-12)
            @test isapprox(f.bic, want.bic; rtol = 1e-12)
            @test isapprox(f.coefficients, want.coefficients; rtol = 1e-7)
            @test isapprox(f.std_errors, want.std_errors; rtol = 1e-7)
            @test f.nobs == want.nobs && f.rows == NOBS && f.parameters == want.parameters
            @test f.totals == want.totals && f.design == D
        end
        # The group tests do not sum over ranks.
        groups = [1, 1, 1, 2, 2, 2, 1, 2, 1][1:NOBS]
        refusal = "does not sum over ranks in this release (dirmn_fit, dirmn_loglik_sum, " *
                  "dirmn_overdispersion_test, dirmn_reg_fit and the mixture fits do)"
        e = @dirmn_error :DIRMN_ERROR_NOT_SUPPORTED test_groups(c, groups)
        @test occursin("dirmn_test_groups does not sum over ranks", e.message)
        @test occursin(refusal, e.message)
        cgroups = [1, 1, 1, 2, 2, 2][1:V]
        e = @dirmn_error :DIRMN_ERROR_NOT_SUPPORTED test_dirmn_groups(c, D, cgroups)
        @test occursin("dirmn_reg_test_groups does not sum over ranks", e.message)
        @test occursin(refusal, e.message)
        e = @dirmn_error :DIRMN_ERROR_NOT_SUPPORTED test_proportions(c, fill(1 / V, V))
        @test occursin("dirmn_test_proportions does not sum over ranks", e.message)
        @test occursin(refusal, e.message)
        @test set_communicator!(c, nothing) === c
        @test c.comm === nothing
        @test fit_mixture(c, 2; starts = 1) isa DirMultMixture
        @test test_groups(c, groups) isa GroupTest
        @test test_dirmn_groups(c, D, cgroups) isa DirmnGroupTests
        @test test_proportions(c, fill(1 / V, V)) isa ProportionTest
        @test same_bits(fit_dirmn(c).alpha, fit_dirmn(X; context = ctx).alpha)
        # Detached counts are attached again, and detaching twice is fine.
        set_communicator!(c, comm)
        @dirmn_error :DIRMN_ERROR_NOT_SUPPORTED test_groups(c, groups)
        set_communicator!(c, nothing)
        set_communicator!(c, nothing)
        close(c); close(comm); close(ctx)
    end

    @testset "closed handles" begin
        comm = one_rank()
        close(comm)
        close(comm)                                  # idempotent
        @test !isopen(comm)
        @test sprint(show, comm) == "Communicator(rank 0 of 1, closed)"
        c = DirmnCounts(X)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER set_communicator!(c, comm)
        @test occursin("the Communicator was closed", e.message)
        comm = one_rank()
        close(c)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER set_communicator!(c, comm)
        @test occursin("[this DirmnCounts was closed]", e.message)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER set_communicator!(c, nothing)
        close(comm)
    end

    @testset "the functions are kept until the library releases them" begin
        # Counts keep the communicator after close(comm): their collective
        # calls still reach its functions.
        log = Any[]
        comm = one_rank(log = log)
        s = comm.state
        c = DirmnCounts(X)
        set_communicator!(c, comm)
        close(comm)
        @test haskey(Dirmn._COMMUNICATORS, s) && !s.released[]
        empty!(log)
        @test same_bits(fit_dirmn(c).alpha, fit_dirmn(X).alpha)
        @test !isempty(log)
        # Released when the last holder goes: here the counts.
        close(c)
        @test s.released[]
        @test !haskey(Dirmn._COMMUNICATORS, s)
        # ... or the detach.
        comm = one_rank(); s = comm.state
        c = DirmnCounts(X)
        set_communicator!(c, comm)
        close(comm)
        set_communicator!(c, nothing)
        @test s.released[] && !haskey(Dirmn._COMMUNICATORS, s)
        close(c)
        # ... or the handle, when no counts hold it.
        comm = one_rank(); s = comm.state
        close(comm)
        @test s.released[] && !haskey(Dirmn._COMMUNICATORS, s)
        # ... or the garbage collector, through the finalizers.
        states = map(1:3) do _
            local comm = one_rank()
            set_communicator!(DirmnCounts(X), comm)
            comm.state
        end
        GC.gc(); GC.gc()
        @test all(s -> s.released[], states)
        Dirmn._sweep!()
        @test !any(s -> haskey(Dirmn._COMMUNICATORS, s), states)
        # A release while the registry's lock is held (a finalizer on a
        # thread registering another communicator) leaves the state for the
        # next sweep.
        comm = one_rank(); s = comm.state
        lock(Dirmn._COMMUNICATORS_LOCK)
        try
            Dirmn._free_communicator(comm)   # close(comm) but for its sweep
            @test s.released[] && haskey(Dirmn._COMMUNICATORS, s)
        finally
            unlock(Dirmn._COMMUNICATORS_LOCK)
        end
        Dirmn._sweep!()
        @test !haskey(Dirmn._COMMUNICATORS, s)
    end

    @testset "2 and 3 ranks over threads" begin
        # The suite may run on one thread: the ranks get threads of their
        # own in another julia (as many as it has CPUs, up to 3).
        project = dirname(@__DIR__)
        script = joinpath(@__DIR__, "communicator_script.jl")
        cmd = `$(Base.julia_cmd()) --startup-file=no --project=$project $script`
        out = IOBuffer()
        p = withenv("JULIA_NUM_THREADS" => "3") do
            run(pipeline(ignorestatus(cmd); stdout = out, stderr = out))
        end
        text = String(take!(out))
        @test p.exitcode == 0
        m = match(r"communicator: (\d+) passed, 0 failed, 0 errored \(([^)]*)\)", text)
        @test m !== nothing
        m === nothing || @test parse(Int, m.captures[1]) >= 1900
        p.exitcode == 0 || println(text)
        m === nothing || println("communicator over threads: ", m.captures[1], " passed (",
                                 m.captures[2], ")")
    end
end
