# Every error path: bad input raises a DirmnError carrying the library's status
# and message, never a crash or a silent NaN.

function caught(f)
    try
        f()
    catch e
        return e
    end
    return nothing
end

# The error `f` raises, checked to be a DirmnError of status `name`.
macro dirmn_error(name, ex)
    quote
        local e = caught(() -> $(esc(ex)))
        @test e isa DirmnError
        if e isa DirmnError
            @test e.name === $(esc(name))
            @test e.status == Int(getfield(Dirmn.LibDirmn, $(esc(name))))
            @test !isempty(e.message)
        end
        e
    end
end

msg(e) = e isa DirmnError ? e.message : ""

@testset "errors" begin
    @testset "negative count names its row and column" begin
        Xn = copy(X)
        Xn[3, 2] = -2           # observation 2, category 3: library row 1, column 2
        for (Y, od) in ((Xn, 2), (permutedims(Xn), 1), (Int32.(Xn), 2), (Float64.(Xn), 2),
                        (sparse(Xn), 2), (sparse(permutedims(Xn)), 1), (transpose(Xn), 1),
                        (transpose(sparse(Xn)), 1), (sparse(permutedims(Xn))', 2))
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Y, ALPHA; obsdim = od)
            @test occursin(r"row 1\b", msg(e)) && occursin(r"column 2\b", msg(e))
            @test occursin("-2", msg(e)) && occursin("negative", msg(e))
            # ... and the Julia index of the same cell.
            @test occursin(od == 2 ? "X[3, 2]" : "X[2, 3]", msg(e))
        end
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS DirmnCounts(Float64.(Xn); real_valued = true)
        @test occursin("negative", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik([1, 0, -1], [1.0, 1.0, 1.0])
        @test occursin("x[3]", msg(e))
    end

    @testset "NaN, Inf and non-integral counts" begin
        for T in (Float32, Float64)
            Y = T.(X)
            Y[2, 4] = NaN
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Y, ALPHA)
            @test occursin(r"NaN"i, msg(e)) && occursin(r"row 3\b", msg(e))
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Y, ALPHA; real_valued = true)
            Y[2, 4] = Inf
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Y, ALPHA)
            @test occursin(r"inf"i, msg(e))
            Y[2, 4] = 2.5
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Y, ALPHA)
            @test occursin("2.5", msg(e))
            # The same value is fine once the counts are declared real-valued.
            @test all(isfinite, loglik(Y, ALPHA; real_valued = true))
        end
        S = sparse(Float64.(X))
        S.nzval[2] = NaN
        @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(S, ALPHA)
    end

    @testset "invalid parameters" begin
        for bad in (0.0, -1.0, NaN, Inf)
            a = copy(ALPHA)
            a[4] = bad
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, a)
            @test occursin(r"index 3\b", msg(e))
            @test occursin("parameter 4", msg(e))
            As = copy(ALPHAS)
            As[5, 2] = bad
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, As)
            @test occursin(r"vector 1\b", msg(e)) && occursin(r"index 4\b", msg(e))
            @test occursin("α[5, 2]", msg(e))
            Ar = copy(AROW)
            Ar[2, 5] = bad
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise(X, Ar)
            @test occursin(r"row 4\b", msg(e)) && occursin(r"index 1\b", msg(e))
            @test occursin("A[2, 5]", msg(e))
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise(permutedims(X), permutedims(Ar); obsdim = 1)
            @test occursin("A[5, 2]", msg(e))
        end
        for bad in (Inf, -Inf, NaN, 1e6, -1e6)   # log α must give a finite, nonzero α
            la = log.(ALPHA)
            la[1] = bad
            @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, la; param = :logalpha)
        end
        c = DirmnCounts(X)
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(c, -ALPHA)
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER logpdf(DirMult(-ALPHA), X)
        @test relerr(loglik(c, ALPHA), REF) <= RTOL   # a failure leaves c usable
        close(c)
    end

    @testset "dimension mismatch" begin
        e = @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(X, vcat(ALPHA, 1.0))
        @test occursin("$(V + 1)", msg(e)) && occursin("$V", msg(e))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(X, ALPHA[1:end-1])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(X, ALPHA; obsdim = 1)
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(X, permutedims(ALPHAS))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik_rowwise(X, AROW[:, 1:end-1])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik_rowwise(X, permutedims(AROW))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(X[:, 1], ALPHA[1:3])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(zeros(Int, V, 0), ALPHA[1:2])
        c = DirmnCounts(X)
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik(c, ALPHA[1:2])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik_rowwise(c, AROW')
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH logpdf(DirMult(ALPHA[1:2]), c)
        close(c)
    end

    @testset "closed objects" begin
        c = DirmnCounts(X)
        close(c)
        @test !isopen(c)
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik(c, ALPHA)
        @test occursin("closed", msg(e))
        @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik_rowwise(c, AROW)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER totals(c)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER nnz(c)
        @test occursin("closed", sprint(show, c))

        ctx = DirmnContext(:cpu)
        c2 = DirmnCounts(X; context = ctx)
        close(ctx)
        @test !isopen(ctx)
        @test occursin("closed", sprint(show, ctx))
        e = @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik(c2, ALPHA)
        @test occursin("DirmnContext was closed", msg(e))
        @dirmn_error :DIRMN_ERROR_NULL_POINTER DirmnCounts(X; context = ctx)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik(X, ALPHA; context = ctx)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER Dirmn.set_threads!(ctx, 1)
        # The counts survive their context and are still described and freed.
        @test nnz(c2) == count(!iszero, X)
        close(c2)
    end

    @testset "wrong context" begin
        ctx1 = DirmnContext(:cpu)
        ctx2 = DirmnContext(:cpu)
        c = DirmnCounts(X; context = ctx1)
        @test c.context === ctx1
        e = @dirmn_error :DIRMN_ERROR_WRONG_CONTEXT loglik(c, ALPHA; context = ctx2)
        @dirmn_error :DIRMN_ERROR_WRONG_CONTEXT loglik_rowwise(c, AROW; context = ctx2)
        @test relerr(loglik(c, ALPHA; context = ctx1), REF) <= RTOL
        close(c); close(ctx1); close(ctx2)
    end

    @testset "backend unavailable" begin
        if :cuda in backends()
            @dirmn_error :DIRMN_ERROR_BACKEND_UNAVAILABLE DirmnContext(:cuda, 10_000)
        else
            e = @dirmn_error :DIRMN_ERROR_BACKEND_UNAVAILABLE DirmnContext(:cuda)
            @test occursin(r"CUDA"i, msg(e))
            @dirmn_error :DIRMN_ERROR_BACKEND_UNAVAILABLE DirmnCounts(X; backend = :cuda)
            @dirmn_error :DIRMN_ERROR_BACKEND_UNAVAILABLE loglik(X, ALPHA; backend = :cuda)
            @test default_context(:auto).backend === :cpu
        end
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT DirmnContext(:cpu, -1)
    end

    @testset "malformed sparse input" begin
        # Row 1 stored twice in column 1.
        S = SparseMatrixCSC(3, 2, [1, 3, 4], [1, 1, 2], [1, 2, 3])
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(S, [1.0, 1.0, 1.0])
        @test occursin("rowval holds row 1 more than once in column 1", msg(e))
        @test occursin("X[1, 1] (observation 1, category 1) is stored twice", msg(e))
    end

    @testset "a corrupt SparseMatrixCSC is worded in rowval/colptr, 1-based" begin
        # Issue #20 item 12: the library's 0-based "entry 1 (row 0): column
        # index 7" is worded from its location in Julia's terms. The
        # unchecked inner constructor makes what `sparse` never would.
        U(cp, rv) = SparseMatrixCSC{Int,Int}(3, 2, cp, rv, [1, 2, 3])
        a3, a2 = [1.0, 1.0, 1.0], [1.0, 1.0]
        for (Y, od, al) in ((U([1, 3, 4], [1, 8, 2]), 2, a3), (U([1, 3, 4], [1, 8, 2]), 1, a2))
            e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(Y, al; obsdim = od)
            @test msg(e) == "dirmn_counts_create_sparse: rowval[2] = 8 (column 1) is outside " *
                            "1:3, the rows of the 3×2 SparseMatrixCSC"
        end
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(U([1, 3, 4], [1, 2, 0]), a3)
        @test occursin("rowval[3] = 0 (column 2) is outside 1:3", msg(e))
        @test !occursin("0-based", msg(e)) && !occursin("entry", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(U([1, 4, 3], [1, 2, 2]), a3)
        @test occursin("colptr[2] = 4 is below colptr[1] = 1 or above colptr[end] = 3", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(U([2, 3, 4], [1, 2, 2]), a3)
        @test occursin("colptr[1] = 2, but it must be 1", msg(e))
        # Through a transpose: the arrays are those of its parent.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(transpose(U([1, 3, 4], [1, 8, 2])), a3; obsdim = 1)
        @test occursin("parent(X).rowval[2] = 8 (column 1) is outside 1:3", msg(e))
        # Lengths that would make the 0-based copies read out of bounds.
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(U([1, 3, 400], [1, 2, 2]), a3)
        @test occursin("colptr[end] = 400", msg(e)) && occursin("length(rowval) = 3", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(U([1, 3], [1, 2, 2]), a3)
        @test occursin("colptr has 2 entries", msg(e))
        # A SparseVector's indices.
        v = SparseVector{Int,Int}(3, [1, 5], [1, 2])
        e = @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT loglik(v, a3)
        @test occursin("nzind[2] = 5 is outside 1:3", msg(e))
        @test_nowarn DirmnCounts(U([1, 3, 4], [3, 1, 2]))   # unsorted rows are fine
    end

    @testset "Julia-side argument errors" begin
        @test_throws ArgumentError loglik(X, ALPHA; obsdim = 3)
        @test_throws ArgumentError loglik(X, ALPHA; param = :beta)
        @test_throws ArgumentError loglik(X, ALPHA; backend = :tpu)
        @test_throws ArgumentError DirmnCounts(X; storage = :compressed)
        @test_throws ArgumentError DirmnContext(:opencl)
        @test_throws ArgumentError Dirmn.set_precision!(default_context(), :half)
        @test_throws ArgumentError loglik(fill("1", 2, 2), [1.0, 1.0])
    end

    @testset "counts beyond Int64 and missing values name their position" begin
        # Issue #20 item 14: these were an InexactError and an ArgumentError.
        big_ = UInt64(typemax(Int64)) + 1
        U = UInt64[1 2 3; 4 5 big_]                   # 3 observations × ... obsdim = 2
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(U, [1.0, 1.0])
        @test occursin("X[2, 3] (observation 3, category 2)", msg(e))
        @test occursin(string(big_), msg(e)) && occursin("Int64", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(permutedims(U), [1.0, 1.0]; obsdim = 1)
        @test occursin("X[3, 2] (observation 3, category 2)", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(transpose(U), [1.0, 1.0]; obsdim = 1)
        @test occursin("X[3, 2] (observation 3, category 2)", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(BigInt[1, big(2)^70, 3], ones(3))
        @test occursin("x[2]", msg(e)) && occursin(string(big(2)^70), msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(BigInt[1 -big(2)^70; 2 3], ones(2))
        @test occursin("X[1, 2]", msg(e)) && occursin("negative", msg(e))
        S = sparse(U)
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(S, [1.0, 1.0])
        @test occursin("X[2, 3] (observation 3, category 2), stored as nzval[6]", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(transpose(S), [1.0, 1.0]; obsdim = 1)
        @test occursin("X[3, 2] (observation 3, category 2)", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(sparsevec([2, 3], UInt64[1, big_], 3), ones(3))
        @test occursin("x[3], stored as nzval[2]", msg(e))
        # Values that fit convert as before.
        @test relerr(loglik(UInt64.(X), ALPHA), REF) <= RTOL
        @test relerr(loglik(BigInt.(X), ALPHA), REF) <= RTOL

        # A missing-typed table without missing values is taken as it is.
        M = Matrix{Union{Missing,Int}}(X)
        @test relerr(loglik(M, ALPHA), REF) <= RTOL
        @test relerr(loglik(permutedims(M), ALPHA; obsdim = 1), REF) <= RTOL
        @test relerr(loglik(Vector{Union{Missing,Float64}}(X[:, 2]), ALPHA), REF[2]) <= RTOL
        @test relerr(loglik(SparseMatrixCSC{Union{Missing,Int},Int}(sparse(X)), ALPHA), REF) <= RTOL
        c = DirmnCounts(M)
        @test relerr(loglik(c, ALPHA), REF) <= RTOL
        close(c)
        # ... and a missing value is named.
        M[4, 7] = missing
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(M, ALPHA)
        @test occursin("X[4, 7] (observation 7, category 4): is missing", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS DirmnCounts(permutedims(M); obsdim = 1)
        @test occursin("X[7, 4] (observation 7, category 4)", msg(e)) && occursin("missing", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Union{Missing,Int}[1, missing, 2], ones(3))
        @test occursin("x[2]", msg(e)) && occursin("missing", msg(e))
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(fill(missing, 2, 2), ones(2))
        @test occursin("X[1, 1]", msg(e))
        # A Union element type is decided by the values (issue #24 item 15):
        # all real numbers convert; anything else is named at its position.
        @test loglik(Union{Nothing,Int}[1 2; 3 4], [1.0, 1.0]) == loglik([1 2; 3 4], [1.0, 1.0])
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Union{Nothing,Int}[1 2; nothing 4], [1.0, 1.0])
        @test occursin("X[2, 1] (observation 1, category 2): is nothing, a Nothing, not a real number", msg(e))
        # A concrete element type that is not a real number is refused as before.
        @test_throws ArgumentError loglik(fill("1", 2, 2), [1.0, 1.0])
    end

    @testset "showerror" begin
        e = caught(() -> loglik([1, -1], [1.0, 1.0]))
        s = sprint(showerror, e)
        @test occursin("DirmnError", s) && occursin("DIRMN_ERROR_INVALID_COUNTS", s)
        @test occursin("invalid counts", s) && occursin(e.message, s)
        e2 = DirmnError(1234, "made up")
        @test e2.name === :DIRMN_UNKNOWN_STATUS
        @test occursin("unknown status", sprint(showerror, e2))
    end

    @testset "low-level layer reports like C" begin
        L = Dirmn.LibDirmn
        r = Ref{Ptr{Cvoid}}(C_NULL)
        @test L.dirmn_context_create(r, Cint(7), Cint(0)) == L.DIRMN_ERROR_INVALID_ARGUMENT
        @test r[] == C_NULL
        @test !isempty(unsafe_string(L.dirmn_last_error(C_NULL)))
        @test L.dirmn_cuda_device_count(C_NULL) in (L.DIRMN_ERROR_NULL_POINTER,
                                                    L.DIRMN_ERROR_BACKEND_UNAVAILABLE)
        @test unsafe_string(L.dirmn_status_string(Cint(4))) == "invalid parameter"
        @test unsafe_string(L.dirmn_status_string(Cint(12345))) == "unknown status"
        @test L.dirmn_backend_compiled(L.DIRMN_BACKEND_CPU) == 1
        L.dirmn_context_destroy(C_NULL)   # NULL is a no-op
        L.dirmn_counts_destroy(C_NULL)
        L.dirmn_counts_options_init(C_NULL)
        @test true
    end
end

@testset "status names and error locations from the library" begin
    L = Dirmn.LibDirmn
    @testset "dirmn_status_name" begin
        statuses = [n for n in names(L; all = true)
                    if n === :DIRMN_SUCCESS || startswith(String(n), "DIRMN_ERROR_")]
        @test length(statuses) >= 14
        for n in statuses
            v = getfield(L, n)
            @test unsafe_string(L.dirmn_status_name(v)) == String(n)
            @test DirmnError(v, "").name === n
        end
        @test unsafe_string(L.dirmn_status_name(Cint(1234))) == "DIRMN_STATUS_UNKNOWN"
        # This package keeps its own spelling for statuses the library does not know.
        @test DirmnError(-5, "").name === :DIRMN_UNKNOWN_STATUS
        e = DirmnError(2^40, "beyond Cint")
        @test e.name === :DIRMN_UNKNOWN_STATUS
        @test occursin("unknown status", sprint(showerror, e))
    end

    @testset "dirmn_last_error_location" begin
        loc = Ref(L.empty_error_location())
        @test L.dirmn_last_error_location(C_NULL, C_NULL) == L.DIRMN_ERROR_NULL_POINTER
        small = Ref(L.dirmn_error_location(Csize_t(8), Cstring(C_NULL), 0, 0, 0, 0, 0, 0.0,
                                           Cstring(C_NULL)))
        @test L.dirmn_last_error_location(C_NULL, small) == L.DIRMN_ERROR_INVALID_ARGUMENT
        # A failure without a position.
        r = Ref{Ptr{Cvoid}}(C_NULL)
        @test L.dirmn_context_create(r, Cint(7), Cint(0)) == L.DIRMN_ERROR_INVALID_ARGUMENT
        @test L.dirmn_last_error_location(C_NULL, loc) == 0
        l = loc[]
        @test (l.row, l.column, l.vector, l.index, l.has_value) == (-1, -1, -1, -1, 0)
        @test endswith(unsafe_string(L.dirmn_last_error(C_NULL)), unsafe_string(l.detail))

        # A parameter: the numbers the Julia hint is made from.
        ctx = DirmnContext(:cpu)
        c = DirmnCounts(X; context = ctx)
        As = copy(ALPHAS)
        As[5, 2] = -Inf
        e = caught(() -> loglik(c, As))
        @test e isa DirmnError
        @test L.dirmn_last_error_location(ctx.ptr, loc) == 0
        l = loc[]
        @test unsafe_string(l.argument) == "params"
        @test (l.vector, l.index, l.row, l.column) == (1, 4, -1, -1)
        @test l.has_value == 1 && l.value == -Inf
        @test l.has_integer_value == 0     # a parameter is no integer the caller passed
        detail = unsafe_string(l.detail)
        @test occursin("-Inf", detail)
        @test startswith(msg(e), "dirmn_loglik: vector 1, index 4 (0-based): " * detail)
        @test endswith(msg(e), " [α[5, 2] in Julia]")

        # A cell of the table.
        Xn = copy(X)
        Xn[3, 2] = -2
        e = caught(() -> DirmnCounts(Xn; context = ctx))
        @test L.dirmn_last_error_location(ctx.ptr, loc) == 0
        l = loc[]
        @test unsafe_string(l.argument) == "data"
        @test (l.row, l.column) == (1, 2) && l.has_value == 1 && l.value == -2
        @test l.has_integer_value == 1 && l.integer_value == -2
        @test endswith(msg(e), " [X[3, 2] = -2 in Julia: observation 2, category 3]")

        # After a success every position is -1.
        @test all(isfinite, loglik(c, ALPHA))
        @test L.dirmn_last_error_location(ctx.ptr, loc) == 0
        @test (loc[].row, loc[].column, loc[].vector, loc[].index) == (-1, -1, -1, -1)
        close(c)
        close(ctx)
    end

    @testset "hints are made from the location, not the message" begin
        loc(; argument = "params", row = -1, column = -1, vector = -1, index = -1) =
            L.dirmn_error_location(sizeof(L.dirmn_error_location),
                                   Base.unsafe_convert(Cstring, argument), row, column, vector,
                                   index, 0, 0.0, Base.unsafe_convert(Cstring, ""))
        # (The strings are literals, rooted by the code.)
        h = Dirmn._cell_hint(2, false)
        @test h(loc(argument = "data", row = 1, column = 2)) ==
              " [X[3, 2] in Julia: observation 2, category 3]"
        @test Dirmn._cell_hint(1, false)(loc(argument = "data", row = 1, column = 2)) ==
              " [X[2, 3] in Julia: observation 2, category 3]"
        @test Dirmn._cell_hint(2, true)(loc(argument = "data", row = 0, column = 2)) ==
              " [x[3] in Julia]"
        @test h(loc(row = 4)) === nothing
        @test h(nothing) === nothing
    end
end

@testset "hints for weights, start and whole parameter vectors" begin
    wbad = ones(NOBS)
    wbad[3] = -1.0
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_sum(X, ALPHA; weights = wbad)
    @test occursin(r"row 2\b", msg(e)) && endswith(msg(e), " [weights[3] in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; weights = wbad)
    @test endswith(msg(e), " [weights[3] in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_mixture(X, 2; weights = wbad)
    @test endswith(msg(e), " [weights[3] in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; start = [1.0, 1, 0, 1, 1, 1])
    @test occursin(r"index 2\b", msg(e)) && endswith(msg(e), " [start[3] in Julia]")
    # A vector whose sum overflows: a column of α, a column (row) of A.
    As = copy(ALPHAS)
    As[:, 2] .= 1e308
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, As)
    @test occursin("overflows", msg(e)) && endswith(msg(e), " [α[:, 2] in Julia]")
    Ar = copy(AROW)
    Ar[:, 4] .= 1e308
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise(X, Ar)
    @test endswith(msg(e), " [A[:, 4] in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise(permutedims(X), permutedims(Ar); obsdim = 1)
    @test endswith(msg(e), " [A[4, :] in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, fill(1e308, V))
    @test !occursin(" in Julia]", msg(e))   # one vector: nothing to point at
end

@testset "integer values are worded exactly (issue #24 item 9)" begin
    L = Dirmn.LibDirmn
    b53 = Int64(2)^53 + 1                       # 9007199254740993: no Float64 holds it
    for (big_, s) in ((b53, "9007199254740993"), (typemax(Int64), "9223372036854775807"))
        # Dense and sparse, matrix and vector, both orientations: the
        # library's message and the Julia position both carry the integer.
        Y = [1 2; 3 big_; 4 5]                  # X[2, 2]: observation 2, category 2
        for (Z, od, cell) in ((Y, 2, "X[2, 2] = $s in Julia: observation 2, category 2"),
                              (permutedims(Y), 1, "X[2, 2] = $s in Julia: observation 2, category 2"),
                              (sparse(Y), 2, "X[2, 2] = $s in Julia"))
            e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Z, ones(od == 2 ? 3 : 2); obsdim = od)
            @test occursin("count $s is 2^53 or more", msg(e))
            @test occursin(cell, msg(e))
            @test !occursin("e+", msg(e)) && !occursin("e18", msg(e)) && !occursin("e15", msg(e))
        end
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik([1, big_, 2], ones(3))
        @test endswith(msg(e), " [x[2] = $s in Julia]")
        # ... from the location's integer_value, not from the message.
        ctx = DirmnContext(:cpu)
        caught(() -> DirmnCounts([1, big_, 2]; context = ctx))
        r = Ref(L.empty_error_location())
        @test L.dirmn_last_error_location(ctx.ptr, r) == 0
        @test r[].has_integer_value == 1 && r[].integer_value == big_
        @test Dirmn._value_text(r[]) == s
        @test Dirmn._cell_hint(2, true)(r[]) == " [x[2] = $s in Julia]"
        close(ctx)
    end
    # An Int32 count is an integer too; a Float64 one is not.
    e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Int32[1, -3, 2], ones(3))
    @test endswith(msg(e), " [x[2] = -3 in Julia]")
    e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik([1.0, 2.5, 2.0], ones(3))
    @test endswith(msg(e), " [x[2] = 2.5 in Julia]")
    # A location struct of the size before the two fields is still served,
    # and the fields beyond it are left alone.
    ctx = DirmnContext(:cpu)
    caught(() -> DirmnCounts([1, b53, 2]; context = ctx))
    old = fieldoffset(L.dirmn_error_location, 10)
    r = Ref(L.dirmn_error_location(Csize_t(old), Cstring(C_NULL), -1, -1, -1, -1, 0, 0.0,
                                   Cstring(C_NULL), Cint(7), Int64(7)))
    @test L.dirmn_last_error_location(ctx.ptr, r) == 0
    @test r[].column == 1 && r[].has_value == 1
    @test (r[].has_integer_value, r[].integer_value) == (7, 7)
    close(ctx)
end

@testset "abstract element types and missing parameters (issue #24 items 15, 16)" begin
    # Matrix{Any} and Vector{Any} counts recursed until a StackOverflowError.
    A = Matrix{Any}(X)
    @test relerr(loglik(A, ALPHA), REF) <= RTOL
    @test relerr(loglik(permutedims(A), ALPHA; obsdim = 1), REF) <= RTOL
    @test relerr(loglik(Vector{Any}(X[:, 2]), ALPHA), REF[2]) <= RTOL
    @test relerr(loglik(Matrix{Real}(X), ALPHA), REF) <= RTOL
    @test relerr(loglik(Matrix{Integer}(X), ALPHA), REF) <= RTOL
    @test relerr(loglik(Matrix{Union{Missing,Real}}(X), ALPHA), REF) <= RTOL
    @test relerr(loglik(Union{Int32,Float64}[isodd(x) ? Float64(x) : Int32(x) for x in X], ALPHA), REF) <= RTOL
    Sa = sparse(X)
    @test relerr(loglik(SparseMatrixCSC{Any,Int}(size(X)..., Sa.colptr, Sa.rowval,
                                                 Vector{Any}(Sa.nzval)), ALPHA), REF) <= RTOL
    c = DirmnCounts(A)
    @test Dirmn.info(c).real_valued == false && relerr(loglik(c, ALPHA), REF) <= RTOL
    close(c)
    # Integers stay integers (exact); mixed with floats they promote.
    Am = Matrix{Any}(X)
    Am[1, 1] = Float64(Am[1, 1])
    @test relerr(loglik(Am, ALPHA), REF) <= RTOL
    e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Any[1, Int64(2)^53 + 1, 3], ones(3))
    @test occursin("9007199254740993", msg(e))
    e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Any[1.5, Int64(2)^53 + 1, 3], ones(3); real_valued = true)
    @test occursin("x[2]: count 9007199254740993 is 2^53 or more", msg(e))
    @test loglik(Matrix{Any}(undef, V, 0), ALPHA) == Float64[]
    # The first value that is missing or no real number, by position,
    # value and type.
    for (bad, text) in ((missing, "is missing"), ("3", "is \"3\", a String, not a real number"),
                        (1 + 2im, "is 1 + 2im, a Complex{Int64}, not a real number"),
                        (nothing, "is nothing, a Nothing, not a real number"))
        B = Matrix{Any}(X)
        B[4, 7] = bad
        B[5, 8] = bad                           # a later one is not the one named
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(B, ALPHA)
        @test msg(e) == "DirmnCounts: X[4, 7] (observation 7, category 4): $text"
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(permutedims(B), ALPHA; obsdim = 1)
        @test msg(e) == "DirmnCounts: X[7, 4] (observation 7, category 4): $text"
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS DirmnCounts(Any[1, 2, bad])
        @test msg(e) == "DirmnCounts: x[3]: $text"
        Sb = SparseMatrixCSC{Any,Int}(size(X)..., Sa.colptr, Sa.rowval, Vector{Any}(Sa.nzval))
        Sb.nzval[3] = bad
        e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Sb, ALPHA)
        @test occursin("stored as nzval[3]: $text", msg(e))
    end
    e = @dirmn_error :DIRMN_ERROR_INVALID_COUNTS loglik(Any[1, "x"^200], ones(2))
    @test length(msg(e)) < 150 && occursin("...", msg(e))

    # α, A, weights and start of element type Any convert; a missing or
    # non-real entry (issue #24 item 16: a MethodError) is named.
    @test relerr(loglik(X, Vector{Any}(ALPHA)), REF) <= RTOL
    @test relerr(loglik(X, Matrix{Any}(ALPHAS)), REF_K) <= RTOL
    @test relerr(loglik_rowwise(X, Matrix{Any}(AROW)), REF_ROW) <= RTOL
    @test relerr(logpdf(DirMult(Vector{Any}(ALPHA)), X), REF) <= RTOL
    w = collect(1.0:NOBS)
    @test loglik_sum(X, ALPHA; weights = Vector{Any}(w)).value ≈ loglik_sum(X, ALPHA; weights = w).value
    @test fit_dirmn(X; weights = Vector{Union{Missing,Float64}}(w)).alpha ≈ fit_dirmn(X; weights = w).alpha
    for (bad, text) in ((missing, "is missing"), ("a", "is \"a\", a String, not a real number"))
        a = Vector{Any}(ALPHA); a[4] = bad
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, a)
        @test msg(e) == "α[4] $text"
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_sum(X, a)
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER DirMult(a)
        @test msg(e) == "α[4] $text"
        As = Matrix{Any}(ALPHAS); As[5, 2] = bad
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik(X, As)
        @test msg(e) == "α[5, 2] $text"
        Ar = Matrix{Any}(AROW); Ar[2, 3] = bad
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise(X, Ar)
        @test msg(e) == "A[2, 3] $text"
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise_derivatives(X, Ar)
        wb = Vector{Any}(w); wb[3] = bad
        for f in (() -> loglik_sum(X, ALPHA; weights = wb), () -> fit_dirmn(X; weights = wb),
                  () -> fit_mixture(X, 2; weights = wb))
            e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER f()
            @test msg(e) == "weights[3] $text"
        end
        st = Vector{Any}(ones(V)); st[2] = bad
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; start = st)
        @test msg(e) == "start[2] $text"
    end
    wm = Union{Missing,Float64}[w...]; wm[5] = missing
    e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; weights = wm)
    @test msg(e) == "weights[5] is missing"
end
