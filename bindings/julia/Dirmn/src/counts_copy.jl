# A counts object copied out as a Julia array (dirmn_counts_copy_dense and
# dirmn_counts_copy_sparse): Matrix(c), Array(c), sparse(c).

# The element type a copy takes by default: Int for integer counts, Float64
# for a table stored with real_valued = true (whose counts need not be
# integers).
_copy_eltype(c::DirmnCounts) = info(c).real_valued ? Float64 : Int

# The shape of the Julia array of `c` as a matrix: categories × observations
# (obsdim = 2) or observations × categories (obsdim = 1); a counts object
# made from a vector is one observation in its orientation.
_matrix_size(c::DirmnCounts) = c.obsdim == 2 ? (c.ncat, c.nobs) : (c.nobs, c.ncat)

# The library locates a count that does not fit the element type by its
# 0-based (row, column) of its table (observation, category); word it as the
# cell of the array being made.
function _copy_hint(c::DirmnCounts, ::Type{T}) where {T}
    more = function (loc)
        (loc === nothing || loc.row < 0 || loc.column < 0) && return nothing
        b, v = Int(loc.row) + 1, Int(loc.column) + 1
        val = _value_text(loc)
        cell = c.obsdim == 2 ? "[$v, $b]" : "[$b, $v]"
        return " [the cell $cell of the $T array in Julia: observation $b, category $v" *
               (val === nothing ? "" : ", count $val") * "]"
    end
    return _call_hint(c, c.context, more)
end

"""
    Matrix(c::DirmnCounts) -> Matrix{Int}
    Matrix{T}(c::DirmnCounts) -> Matrix{T}     # T: Int32, Int64, Float32 or Float64

The table stored in `c` as a dense matrix of the shape it was made from
(`size(c)`: categories × observations with `obsdim = 2`, observations ×
categories with `obsdim = 1`; a counts object made from a vector gives a
one-column, or with `obsdim = 1` one-row, matrix), every cell written,
zeros included (libdirmn's `dirmn_counts_copy_dense`). The default element
type is `Int` (`Float64` for a table made with `real_valued = true`).
An integer type needs integer counts: a real-valued table, or a count
beyond `Int32`'s range for `Matrix{Int32}`, raises a [`DirmnError`](@ref)
(the latter naming the cell); `Float32` rounds each count to the nearest
`Float32`; `Float64` is exact. A closed `c` raises
`DIRMN_ERROR_NULL_POINTER`. See also `Array(c)` and [`sparse`](@ref).
"""
Base.Matrix(c::DirmnCounts) = Matrix{_copy_eltype(c)}(c)

function Base.Matrix{T}(c::DirmnCounts) where {T<:_NativeCount}
    m, n = _matrix_size(c)
    out = Matrix{T}(undef, m, n)
    # The library's cell (b, v), observation b and category v (0-based),
    # goes to out[b * row_stride + v * col_stride] (0-based, in elements).
    rs, cs = c.obsdim == 2 ? (m, 1) : (1, m)
    _with(c.context) do p
        GC.@preserve out begin
            st = LibDirmn.dirmn_counts_copy_dense(p, _handle(c), _dtype(T),
                                                  Ptr{Cvoid}(pointer(out)), Int64(max(rs, 1)),
                                                  Int64(max(cs, 1)))
        end
        _check(st, p, _copy_hint(c, T))
    end
    return out
end

Base.Matrix{T}(c::DirmnCounts) where {T} =
    throw(ArgumentError("Matrix{$T}(::DirmnCounts): the element type must be Int32, Int64, " *
                        "Float32 or Float64"))

"""
    Array(c::DirmnCounts)

The table stored in `c` with `size(c)`: a `Vector` for a counts object
made from a vector, else `Matrix(c)`.
"""
Base.Array(c::DirmnCounts) = c.vector ? vec(Matrix(c)) : Matrix(c)

"""
    sparse(c::DirmnCounts) -> SparseMatrixCSC{Int,Int}

The table stored in `c` as a `SparseMatrixCSC` of the shape `Matrix(c)`
has (`size(c)`, a one-column or one-row matrix for a counts object made
from a vector), holding its nonzero counts only, copied in compressed form
by the library (`dirmn_counts_copy_sparse`: the compressed rows of its
table for `obsdim = 2`, whose columns are observations, its compressed
columns for `obsdim = 1`), never densified. Values are `Int` (`Float64`
for a table made with `real_valued = true`); indices `Int`. Errors as for
[`Matrix`](@ref).
"""
SparseArrays.sparse(c::DirmnCounts) = _copy_sparse(c, _copy_eltype(c))

function _copy_sparse(c::DirmnCounts, ::Type{T}) where {T<:_NativeCount}
    m, n = _matrix_size(c)
    nz = nnz(c)
    # Columns of the Julia matrix are the library's rows (CSR) with
    # obsdim = 2, its columns (CSC) with obsdim = 1.
    format = c.obsdim == 2 ? LibDirmn.DIRMN_CSR : LibDirmn.DIRMN_CSC
    colptr = Vector{Int}(undef, n + 1)
    rowval = Vector{Int}(undef, nz)
    nzval = Vector{T}(undef, nz)
    _with(c.context) do p
        GC.@preserve colptr rowval nzval begin
            st = LibDirmn.dirmn_counts_copy_sparse(
                p, _handle(c), format, LibDirmn.DIRMN_INDEX_INT64, Ptr{Cvoid}(pointer(colptr)),
                nz == 0 ? C_NULL : Ptr{Cvoid}(pointer(rowval)), _dtype(T),
                nz == 0 ? C_NULL : Ptr{Cvoid}(pointer(nzval)))
        end
        _check(st, p, _copy_hint(c, T))
    end
    # The library counts from 0.
    colptr .+= 1
    rowval .+= 1
    return SparseMatrixCSC(m, n, colptr, rowval, nzval)
end
