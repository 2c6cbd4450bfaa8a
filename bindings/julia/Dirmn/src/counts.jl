"""
    DirmnCounts(X; obsdim = 2, backend = :auto, device = 0, context = nothing,
                real_valued = false, storage = :auto)

A count table validated once and uploaded to the device of a context, for
repeated evaluation with [`loglik`](@ref), [`loglik_rowwise`](@ref) and
[`logpdf`](@ref) without transferring or checking the table again.

`X` may be
- a dense matrix of `Int32`, `Int64`, `Float32` or `Float64` (passed to the
  library as it is in memory; other `Integer` or `Real` element types, and
  `Union{Missing,T}` of them, are converted first, and a value that does
  not fit `Int64` or a `missing` raises a [`DirmnError`](@ref) naming its
  position), or a strided view or transpose of one; an abstract element
  type (`Matrix{Any}`, `Vector{Real}`, ...) is converted by its values as
  Julia promotes them (integers stay integers) when all are real numbers,
  and otherwise the first that is missing or not a real number raises a
  `DirmnError` naming its position, value and type;
- a `SparseMatrixCSC` (passed as compressed columns/rows, never densified;
  only the 0-based index arrays are made; a corrupt structure is reported
  in its own terms, `rowval[k]`, `colptr[j]`, 1-based);
- a vector or `SparseVector`: a single observation.

`obsdim` says which dimension of a matrix indexes observations: `2` (the
default, as in Distributions.jl) for one observation per column, a
categories × observations matrix; `1` for one observation per row.
`size(c)` is the size of `X`; [`nobs`](@ref) and [`ncategories`](@ref) give
the two counts whatever the orientation.

Counts must be finite, non-negative integers (stored in any element type)
unless `real_valued = true`, which accepts any non-negative values; every
count and row total must be below 2^53 either way.
`storage` is `:auto`, `:dense` or `:sparse`, a request for the library's
internal form. The table lives on `context` if given, else on
`default_context(backend, device)`. Invalid counts raise a
[`DirmnError`](@ref) naming the offending entry.

Free it with `close(c)` (idempotent) or leave it to the finalizer.
"""
mutable struct DirmnCounts
    ptr::Ptr{Cvoid}
    context::DirmnContext   # keeps the context alive while the counts are
    nobs::Int
    ncat::Int
    obsdim::Int
    vector::Bool            # made from a single observation (a vector)
    closing::Threads.Atomic{Bool}   # set by close() before it waits for the lock
    # The _CommState of the Communicator attached (set_communicator!), or
    # nothing: its callbacks' exceptions are reported with the call's error.
    comm::Any
end

# Frees the handle; the caller holds the lock of the counts' context, which
# every call using the handle holds too (see _with), so no call is using it.
# The library lets counts outlive their context, so no ordering is needed.
function _free_counts(c::DirmnCounts)
    p = c.ptr
    c.ptr = C_NULL
    p == C_NULL || LibDirmn.dirmn_counts_destroy(p)
    return nothing
end

_finalize_counts(c::DirmnCounts) =
    c.ptr == C_NULL ? nothing :
    _finalize_under(_free_counts, c, c.context.lock, _finalize_counts, true)

"""
    close(c::DirmnCounts)

Frees the counts' host and device memory now. Idempotent. Safe while
another task or thread computes with `c`: `close` waits for that call to
end (it takes the lock of the counts' context); every later call with `c`
raises a [`DirmnError`](@ref) (`DIRMN_ERROR_NULL_POINTER`). From a progress
callback of a call on the counts' context (even one computing with `c`),
`c` is closed at once and the library frees it when that call returns.
"""
function Base.close(c::DirmnCounts)
    # ReentrantLock is not fair: a task calling in a loop could take the lock
    # again and again before this one. Calls that start from now on see the
    # flag and fail at once (see _handle), so close waits for one call at most.
    c.closing[] = true
    lock(c.context.lock) do
        _free_counts(c)
    end
    return nothing
end

"""
    isopen(c::DirmnCounts) -> Bool

Whether `c` has not been closed.
"""
Base.isopen(c::DirmnCounts) = c.ptr != C_NULL && !c.closing[]

# The handle a call passes to the library, read under the lock of the
# handle's context (see _with): NULL once close() has begun, which the
# library answers with DIRMN_ERROR_NULL_POINTER.
_handle(h) = h.closing[] ? C_NULL : h.ptr

"""
    size(c::DirmnCounts)

The size of the table `c` was made from, in its orientation (see `obsdim`);
`(ncategories,)` for a counts object made from a vector.
"""
Base.size(c::DirmnCounts) =
    c.vector ? (c.ncat,) : c.obsdim == 2 ? (c.ncat, c.nobs) : (c.nobs, c.ncat)
Base.size(c::DirmnCounts, d::Integer) = d <= length(size(c)) ? size(c)[d] : 1

"""
    nobs(c::DirmnCounts) -> Int

Number of observations (rows of the library's table).
"""
nobs(c::DirmnCounts) = c.nobs

"""
    ncategories(c::DirmnCounts) -> Int

Number of categories (the length of a parameter vector).
"""
ncategories(c::DirmnCounts) = c.ncat

"""
    info(c::DirmnCounts) -> NamedTuple

What the library reports about the stored table: `rows`, `cols`, `nnz`,
`max_count`, `total`, `real_valued`, `storage` (`:dense` or `:sparse`),
`value_bits` (bits per stored count), `backend`, `device`, and, as vectors
of step names (`:loglik`, `:loglik_rowwise`, `:derivatives_rowwise`,
`:histograms`, `:mixture_em`, `:mixture_fits`; the `DIRMN_STEP_*` bits),
`host_steps`, the steps that run on the host CPU for this table (all of
them on a CPU context), and `unavailable_steps`, those no backend can run
for it (calls that need them raise `DIRMN_ERROR_NOT_SUPPORTED`).
"""
function info(c::DirmnCounts)
    r = Ref(LibDirmn.empty_counts_info())
    # dirmn_counts_get_info takes no context, so the library reports its
    # failures in the calling thread's slot, read with a NULL context.
    # The lock keeps close() from freeing the handle during the call.
    _with(c.context) do _
        _check(LibDirmn.dirmn_counts_get_info(_handle(c), r), C_NULL, _closed_hint(c))
    end
    i = r[]
    storage = i.storage == LibDirmn.DIRMN_STORAGE_DENSE ? :dense :
              i.storage == LibDirmn.DIRMN_STORAGE_SPARSE ? :sparse : :auto
    return (rows = Int(i.rows), cols = Int(i.cols), nnz = Int(i.nnz),
            max_count = i.max_count, total = i.total,
            real_valued = (i.flags & LibDirmn.DIRMN_COUNTS_REAL_VALUED) != 0,
            storage = storage, value_bits = Int(i.value_bits),
            backend = _backend_symbol(i.backend), device = Int(i.device),
            host_steps = _steps(i.host_steps), unavailable_steps = _steps(i.unavailable_steps))
end

const _STEPS = ((LibDirmn.DIRMN_STEP_LOGLIK, :loglik),
                (LibDirmn.DIRMN_STEP_LOGLIK_ROWWISE, :loglik_rowwise),
                (LibDirmn.DIRMN_STEP_DERIVATIVES_ROWWISE, :derivatives_rowwise),
                (LibDirmn.DIRMN_STEP_HISTOGRAMS, :histograms),
                (LibDirmn.DIRMN_STEP_MIXTURE_EM, :mixture_em),
                (LibDirmn.DIRMN_STEP_MIXTURE_FITS, :mixture_fits))

# The names of the DIRMN_STEP_* bits set in `bits`, in the header's order.
_steps(bits::UInt32) = Symbol[name for (bit, name) in _STEPS if bits & bit != 0]

"""
    nnz(c::DirmnCounts) -> Int

Number of nonzero counts in the table.
"""
SparseArrays.nnz(c::DirmnCounts) = info(c).nnz

"""
    totals(c::DirmnCounts) -> Vector{Float64}

The total count of each observation.
"""
function totals(c::DirmnCounts)
    out = Vector{Float64}(undef, c.nobs)
    _with(c.context) do p
        _check(LibDirmn.dirmn_counts_row_totals(p, _handle(c), out), p, _call_hint(c, c.context))
    end
    return out
end

# The row totals a fit keeps for simulate, read before the fit (whose
# progress callback may close the counts or their context): empty where the
# counts or their context are closed already, so that the fit itself reports
# that, in its own words.
_totals_before(c::DirmnCounts) = isopen(c) && isopen(c.context) ? totals(c) : Float64[]

function Base.show(io::IO, c::DirmnCounts)
    dims = join(size(c), "×")
    if !isopen(c)
        print(io, "DirmnCounts(", dims, ", closed)")
        return
    end
    i = info(c)
    print(io, "DirmnCounts(", dims, ", obsdim=", c.obsdim, ", nnz=", i.nnz, ", ",
          i.storage, " ", i.value_bits, "-bit", i.real_valued ? ", real-valued" : "",
          ", ", i.backend, i.backend === :cuda ? string(":", i.device) : "", ")")
end

function DirmnCounts(X; obsdim::Integer = 2, backend::Symbol = :auto, device::Integer = 0,
                     context::Union{Nothing,DirmnContext} = nothing,
                     real_valued::Bool = false, storage::Symbol = :auto)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    ctx = context === nothing ? default_context(backend, device) : context
    return _counts(ctx, X, Int(obsdim), _options(real_valued, storage))
end

function _options(real_valued::Bool, storage::Symbol)
    code = storage === :auto ? LibDirmn.DIRMN_STORAGE_AUTO :
           storage === :dense ? LibDirmn.DIRMN_STORAGE_DENSE :
           storage === :sparse ? LibDirmn.DIRMN_STORAGE_SPARSE :
           throw(ArgumentError("storage must be :auto, :dense or :sparse, not :$storage"))
    r = Ref(LibDirmn.empty_counts_options())
    LibDirmn.dirmn_counts_options_init_sized(r, sizeof(LibDirmn.dirmn_counts_options))
    o = r[]
    flags = real_valued ? o.flags | LibDirmn.DIRMN_COUNTS_REAL_VALUED : o.flags
    return LibDirmn.dirmn_counts_options(o.size, flags, code)
end

# --- element types --------------------------------------------------------

_dtype(::Type{Int32}) = LibDirmn.DIRMN_INT32
_dtype(::Type{Int64}) = LibDirmn.DIRMN_INT64
_dtype(::Type{Float32}) = LibDirmn.DIRMN_FLOAT32
_dtype(::Type{Float64}) = LibDirmn.DIRMN_FLOAT64

const _NativeCount = Union{Int32,Int64,Float32,Float64}

# The element type other inputs are converted to: small integers fit Int32
# (half the memory of Int64), other integers Int64, other reals Float64 (a
# non-integral value then still reaches the library's check).
_count_type(::Type{T}) where {T<:_NativeCount} = T
_count_type(::Type{T}) where {T<:Union{Bool,Int8,UInt8,Int16,UInt16}} = Int32
_count_type(::Type{T}) where {T<:Integer} = Int64
_count_type(::Type{T}) where {T<:Real} = Float64
_count_type(::Type{T}) where {T} =
    throw(ArgumentError("counts must be real numbers, not $T"))

# The type the counts of `src` are passed as. A concrete element type
# decides it, also with Missing in it (a table read from a file is taken
# when it holds no missing value; one is reported at its position). An
# abstract one (Any, Real, Integer, a Union of several types: an array
# built by hand) is decided by the values, promoted as Julia promotes them
# (Any[1, 2] is passed as integers, Any[1, 2.5] as Float64), after checking
# that every one is a real number: the first that is not, or is missing,
# raises a DirmnError at its position (`where(k)` words the position of
# src's k-th element).
function _count_eltype(src, where)
    S = eltype(src)
    S === Missing && return Int32
    R = nonmissingtype(S)
    isconcretetype(R) && return _count_type(R)
    P = Union{}
    k = 0
    for x in src
        k += 1
        p = _not_real(x)
        p === nothing || _counts_error("DirmnCounts: $(where(k)): $p")
        P = promote_type(P, typeof(x))
    end
    return P === Union{} ? Int32 : _count_type(P)
end

# --- strided access ------------------------------------------------------

# (array to preserve, its element strides (s1, s2)) for a matrix the library
# can read in place, or nothing. Strides must be positive for the library.
_strided(A::StridedMatrix) =
    all(s -> s >= 1, strides(A)) ? (A, strides(A)[1], strides(A)[2]) : nothing
function _strided(A::Union{Adjoint{<:Real,<:StridedMatrix},Transpose{<:Any,<:StridedMatrix}})
    P = parent(A)
    eltype(P) <: Real || return nothing
    s = strides(P)
    return all(x -> x >= 1, s) ? (P, s[2], s[1]) : nothing
end
_strided(A::AbstractMatrix) = nothing

_strided_vec(x::StridedVector) = stride(x, 1) >= 1 ? (x, stride(x, 1)) : nothing
_strided_vec(x::AbstractVector) = nothing

# A matrix in a form the library reads directly: (owner, s1, s2), copying
# only when the element type or layout requires it.
function _native_matrix(X::AbstractMatrix, ::Type{T}) where {T}
    if eltype(X) === T
        s = _strided(X)
        s === nothing || return s
    end
    Y = Matrix{T}(undef, size(X))
    copyto!(Y, X)   # converts; InexactError for a value T cannot hold
    return (Y, 1, max(size(Y, 1), 1))
end

function _native_vector(x::AbstractVector, ::Type{T}) where {T}
    if eltype(x) === T
        s = _strided_vec(x)
        s === nothing || return s
    end
    y = Vector{T}(undef, length(x))
    copyto!(y, x)
    return (y, 1)
end

# --- error hints -------------------------------------------------------------

# The library locates a cell by the 0-based (row, column) of its own table,
# where rows are observations (dirmn_last_error_location's row and column).
# Add the Julia index of the same cell in the array the caller passed, and
# the count there as the location holds it (an integer exactly).
function _cell_hint(obsdim::Int, isvector::Bool)
    return function (loc)
        (loc === nothing || loc.row < 0 || loc.column < 0) && return nothing
        i = Int(loc.row) + 1
        j = Int(loc.column) + 1
        v = _argument(loc) == "data" ? _value_text(loc) : nothing
        eq = v === nothing ? "" : " = $v"
        isvector && return " [x[$j]$eq in Julia]"
        return obsdim == 2 ? " [X[$j, $i]$eq in Julia: observation $i, category $j]" :
                             " [X[$i, $j]$eq in Julia: observation $i, category $j]"
    end
end

_closed_hint(c::DirmnCounts) =
    loc -> isopen(c) ? nothing : " [this DirmnCounts was closed]"

# The Julia index of a row weight (the library's rows are the
# observations, in order) or of an entry of a fit's start.
function _weights_start_hint(loc)
    loc === nothing && return nothing
    arg = _argument(loc)
    arg == "weights" && loc.row >= 0 && return " [weights[$(loc.row + 1)] in Julia]"
    arg == "start" && loc.index >= 0 && return " [start[$(loc.index + 1)] in Julia]"
    return nothing
end

# Appends the hints that apply, for a call on `ctx` with `c`. Where a
# callback of the communicator attached to `c` (or of `comm`, a _CommState,
# for set_communicator!) threw in the call, the exception is named and made
# the error's cause (_CausedBy).
function _call_hint(c::DirmnCounts, ctx::DirmnContext, more = nothing; comm = c.comm)
    return function (loc)
        parts = String[]
        isopen(c) || push!(parts, " [this DirmnCounts was closed]")
        isopen(ctx) || push!(parts, " [the DirmnContext was closed]")
        if more !== nothing
            m = more(loc)
            m === nothing || push!(parts, m)
        end
        m = _weights_start_hint(loc)
        m === nothing || push!(parts, m)
        err = _take_comm_error!(comm)
        if err !== nothing
            name, e, _ = err
            push!(parts, " [the Communicator's $name threw $(_exception_text(e))]")
            return _CausedBy(join(parts), e)
        end
        return isempty(parts) ? nothing : join(parts)
    end
end

# An exception in one line, for a message: its type and what showerror says.
function _exception_text(e)
    text = try
        sprint(showerror, e)
    catch
        ""
    end
    text = first(split(text, '\n'))
    T = string(nameof(typeof(e)))
    startswith(text, T) && return text
    return isempty(text) ? T : string(T, ": ", text)
end

# --- construction -----------------------------------------------------------

function _finish(ctx::DirmnContext, handle::Ptr{Cvoid}, nobs, ncat, obsdim, isvector)
    c = DirmnCounts(handle, ctx, nobs, ncat, obsdim, isvector, Threads.Atomic{Bool}(false),
                    nothing)
    finalizer(_finalize_counts, c)
    return c
end

function _create_dense(ctx::DirmnContext, A, dtype, rows, cols, rs, cs, opts, hint)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    optref = Ref(opts)
    _with(ctx) do p
        GC.@preserve A begin
            st = LibDirmn.dirmn_counts_create_dense(p, out, Int64(rows), Int64(cols), dtype,
                                                    Ptr{Cvoid}(pointer(A)), Int64(rs),
                                                    Int64(cs), optref)
        end
        _check(st, p, hint)
    end
    return out[]
end

function _counts(ctx::DirmnContext, X::AbstractMatrix, obsdim::Int, opts)
    rows = size(X, 1)
    where = k -> _cell_text(obsdim, (k - 1) % rows + 1, (k - 1) ÷ rows + 1)
    T = _count_eltype(X, where)
    A, s1, s2 = if _needs_check(eltype(X), T)
        Y = _convert_counts!(Matrix{T}(undef, size(X)), X, where)
        (Y, 1, max(rows, 1))
    else
        _native_matrix(X, T)
    end
    # The library's table has observations as rows: observation b, category
    # v sits at b * row_stride + v * col_stride.
    nobs, ncat, rs, cs = obsdim == 2 ? (size(X, 2), size(X, 1), s2, s1) :
                                       (size(X, 1), size(X, 2), s1, s2)
    h = _create_dense(ctx, A, _dtype(T), nobs, ncat, rs, cs, opts, _cell_hint(obsdim, false))
    return _finish(ctx, h, nobs, ncat, obsdim, false)
end

function _counts(ctx::DirmnContext, x::AbstractVector, obsdim::Int, opts)
    T = _count_eltype(x, _cell_text)
    A, s = _needs_check(eltype(x), T) ?
        (_convert_counts!(Vector{T}(undef, length(x)), x, _cell_text), 1) :
        _native_vector(x, T)
    n = length(x)
    # One observation: the row stride is never used, but must be valid.
    h = _create_dense(ctx, A, _dtype(T), 1, n, max(n * s, 1), s, opts, _cell_hint(obsdim, true))
    return _finish(ctx, h, 1, n, obsdim, true)
end

_index_type(::Type{Int32}) = LibDirmn.DIRMN_INDEX_INT32
_index_type(::Type{Int64}) = LibDirmn.DIRMN_INDEX_INT64
_index_eltype(::Type{Int32}) = Int32
_index_eltype(::Type{T}) where {T<:Integer} = Int64

# ptr0 and idx0 count from 0, or with `one_based` from 1 (the caller's own
# arrays, passed without a copy: DIRMN_COUNTS_ONE_BASED); idx0 and vals
# hold at least nz entries.
function _create_sparse(ctx, format, rows, cols, ptr0::Vector{I}, idx0::Vector{I},
                        vals::Vector{T}, opts, hint; nz::Int = length(idx0),
                        one_based::Bool = false) where {I,T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    flags = one_based ? opts.flags | LibDirmn.DIRMN_COUNTS_ONE_BASED : opts.flags
    optref = Ref(LibDirmn.dirmn_counts_options(opts.size, flags, opts.storage))
    _with(ctx) do p
        GC.@preserve ptr0 idx0 vals begin
            st = LibDirmn.dirmn_counts_create_sparse(
                p, out, format, Int64(rows), Int64(cols), Int64(nz), _index_type(I),
                Ptr{Cvoid}(pointer(ptr0)),
                nz == 0 ? C_NULL : Ptr{Cvoid}(pointer(idx0)), _dtype(T),
                nz == 0 ? C_NULL : Ptr{Cvoid}(pointer(vals)), optref)
        end
        _check(st, p, hint)
    end
    return out[]
end

# Julia's CSC arrays are 1-based; the library wants 0-based ptr and indices,
# so those two arrays are rebuilt (O(nnz)); the values are passed as they are
# when their type is native.
function _zero_based(v::AbstractVector, n::Integer, ::Type{I}) where {I}
    out = Vector{I}(undef, n)
    @inbounds for k in 1:n
        out[k] = I(v[k]) - one(I)
    end
    return out
end

# `where(k)` words the position of nzval[k] for a value that cannot be
# converted.
function _sparse_values(nzval::Vector, nz::Int, where)
    stored = view(nzval, 1:nz)
    T = _count_eltype(stored, where)
    if T === eltype(nzval) && length(nzval) == nz
        return nzval
    end
    vals = Vector{T}(undef, nz)
    if _needs_check(eltype(nzval), T)
        _convert_counts!(vals, stored, where)
    else
        copyto!(vals, 1, nzval, 1, nz)
    end
    return vals
end

# Positions are worded in the array the caller passed, which for a
# transpose (`transposed`) is not X itself: its obsdim is 3 - obsdim and its
# X[i, j] is S[j, i].
function _counts(ctx::DirmnContext, X::SparseMatrixCSC{Tv,Ti}, obsdim::Int, opts;
                 transposed::Bool = false) where {Tv,Ti}
    I = _index_eltype(Ti)
    m, n = size(X)
    name = transposed ? "parent(X)." : ""
    _check_csc_lengths(m, n, X.colptr, X.rowval, X.nzval, name)
    uobsdim = transposed ? 3 - obsdim : obsdim
    nz = Int(X.colptr[end]) - 1
    # Int32 and Int64 index arrays pass as they are, counting from 1;
    # others are converted (to 0-based copies of the library's type).
    direct = Ti === I
    ptr0 = direct ? X.colptr : _zero_based(X.colptr, n + 1, I)
    idx0 = direct ? X.rowval : _zero_based(X.rowval, nz, I)
    vals = _sparse_values(X.nzval, nz, function (k)
        j = _entry_column(X.colptr, n, k)
        i = Int(X.rowval[k])
        (j == 0 || !(1 <= i <= m)) && return "$(name)nzval[$k]"
        cell = transposed ? _cell_text(uobsdim, j, i) : _cell_text(uobsdim, i, j)
        return "$cell, stored as $(name)nzval[$k]"
    end)
    cells = _cell_hint(uobsdim, false)
    hint = function (loc)
        t = _csc_structure_text(loc, "dirmn_counts_create_sparse", m, n, X.colptr, X.rowval,
                                transposed, uobsdim)
        return t === nothing ? cells(loc) : _Reworded(t)
    end
    # Observations as columns: the compressed columns of X are compressed
    # rows of the observations × categories table, i.e. CSR.
    if obsdim == 2
        h = _create_sparse(ctx, LibDirmn.DIRMN_CSR, n, m, ptr0, idx0, vals, opts, hint;
                           nz = nz, one_based = direct)
        return _finish(ctx, h, n, m, 2, false)
    else
        h = _create_sparse(ctx, LibDirmn.DIRMN_CSC, m, n, ptr0, idx0, vals, opts, hint;
                           nz = nz, one_based = direct)
        return _finish(ctx, h, m, n, 1, false)
    end
end

# transpose(S) of a CSC matrix is read as S in the other orientation.
function _counts(ctx::DirmnContext,
                 X::Union{Adjoint{<:Real,<:SparseMatrixCSC},Transpose{<:Real,<:SparseMatrixCSC}},
                 obsdim::Int, opts)
    c = _counts(ctx, parent(X), 3 - obsdim, opts; transposed = true)
    c.obsdim = obsdim
    return c
end

function _counts(ctx::DirmnContext, x::SparseVector{Tv,Ti}, obsdim::Int, opts) where {Tv,Ti}
    I = _index_eltype(Ti)
    nz = length(x.nzind)
    n = length(x)
    length(x.nzval) >= nz ||
        _structure_error("DirmnCounts: the SparseVector has $nz indices (nzind) but " *
                         "$(length(x.nzval)) values (nzval)")
    direct = Ti === I
    ptr0 = direct ? I[1, nz + 1] : I[0, nz]
    idx0 = direct ? x.nzind : _zero_based(x.nzind, nz, I)
    vals = _sparse_values(x.nzval, nz, function (k)
        i = Int(x.nzind[k])
        return 1 <= i <= n ? "$(_cell_text(i)), stored as nzval[$k]" : "nzval[$k]"
    end)
    cells = _cell_hint(obsdim, true)
    hint = function (loc)
        t = _sparsevec_structure_text(loc, "dirmn_counts_create_sparse", n, x.nzind)
        return t === nothing ? cells(loc) : _Reworded(t)
    end
    h = _create_sparse(ctx, LibDirmn.DIRMN_CSR, 1, length(x), ptr0, idx0, vals, opts, hint;
                       nz = nz, one_based = direct)
    return _finish(ctx, h, 1, length(x), obsdim, true)
end

_counts(ctx::DirmnContext, X, obsdim::Int, opts) =
    throw(ArgumentError("cannot make counts from a $(typeof(X)): pass a vector, a " *
                        "matrix or a SparseMatrixCSC"))
