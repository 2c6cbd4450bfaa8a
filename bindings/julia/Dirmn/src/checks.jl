# What the Julia side checks of a count table before the library sees it,
# and how the library's findings about a sparse table's structure are
# worded: positions 1-based, in the terms of the array the caller passed
# (X[i, j], a SparseMatrixCSC's rowval/colptr/nzval), made from numbers
# (dirmn_last_error_location and the caller's own arrays), never from the
# library's message text.

_counts_error(msg::AbstractString) = throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_COUNTS, msg))
_structure_error(msg::AbstractString) =
    throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT, msg))

# "X[i, j] (observation b, category v)" for the cell (i, j) of the caller's
# matrix in orientation `obsdim`, "x[j]" for a vector.
_cell_text(obsdim::Int, i::Int, j::Int) =
    obsdim == 2 ? "X[$i, $j] (observation $j, category $i)" :
                  "X[$i, $j] (observation $i, category $j)"
_cell_text(j::Int) = "x[$j]"

# Why `x` is no number at all, or nothing: missing, or not a real number
# (the elements of an array of element type Any, Number, Union{Missing,T}).
function _not_real(x)
    x === missing && return "is missing"
    x isa Real && return nothing
    text = sprint(show, x; context = :limit => true)
    length(text) > 60 && (text = first(text, 57) * "...")
    return "is $text, a $(typeof(x)), not a real number"
end

# Why `x` cannot be passed as a count of type T, or nothing. Only values the
# conversion itself would reject or change are looked at here (the library
# checks the rest, with its own message): a missing value or one that is not
# a real number, an integer beyond T, an integer that a floating-point T
# would round (one of 2^53 or more, which the library would then report as
# another number).
function _conversion_problem(x, ::Type{T}) where {T}
    p = _not_real(x)
    p === nothing || return p
    if T <: Integer && x isa Integer && !(typemin(T) <= x <= typemax(T))
        return x < 0 ? "count $x is negative" :
               "count $x does not fit $T (at most $(typemax(T))), the widest integer " *
               "count libdirmn takes"
    end
    if T <: AbstractFloat && x isa Integer && !(-maxintfloat(Float64) < x < maxintfloat(Float64))
        return x < 0 ? "count $x is negative" :
               "count $x is 2^53 or more (counts must be below 2^53)"
    end
    return nothing
end

# Copies `src` into `dest` (of the same length, column-major order), raising
# a DirmnError that names the first value that cannot be converted;
# `where(k)` words the position of src's k-th element.
function _convert_counts!(dest::Array{T}, src, where) where {T}
    k = 0
    for x in src
        k += 1
        p = _conversion_problem(x, T)
        p === nothing || _counts_error("DirmnCounts: $(where(k)): $p")
        @inbounds dest[k] = x
    end
    return dest
end

# Whether converting values of type S to T needs the checked copy: always
# for an abstract S (whose values decided T, see _count_eltype).
_needs_check(::Type{S}, ::Type{T}) where {S,T} =
    !(S <: T) && (Missing <: S || !isconcretetype(S) ||
                  (T <: Integer && !(S <: Union{Bool,Int8,UInt8,Int16,UInt16,Int32})))

# --- parameters, weights, start ------------------------------------------------

# α (or log α), per-observation parameters A, row weights and a fit's start
# reach the library as Float64. An array of real numbers converts as it is;
# one of another element type (Any, Union{Missing,Float64}: built by hand, or
# read from a file) converts too when every element is a real number, and
# otherwise raises a DirmnError naming the first element that is missing or
# not a real number by its index into `name`, the caller's array.
function _check_real(P::AbstractArray, name::AbstractString)
    eltype(P) <: Real && return P
    for (I, x) in zip(CartesianIndices(P), P)
        p = _not_real(x)
        p === nothing && continue
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_PARAMETER,
                         "$name[$(join(Tuple(I), ", "))] $p"))
    end
    return P
end

# --- sparse structure ----------------------------------------------------------

# The column of the k-th stored entry (1-based), or 0 when colptr does not
# say (a corrupt structure, which the library then reports).
function _entry_column(colptr::AbstractVector, n::Int, k::Int)
    for j in 1:n
        colptr[j] <= k < colptr[j + 1] && return j
    end
    return 0
end

# Checks a SparseMatrixCSC's arrays where an error would otherwise be a
# BoundsError or a read out of bounds while the 0-based copies are made: the
# length of colptr and its last entry (nnz + 1) against rowval and nzval.
function _check_csc_lengths(m::Int, n::Int, colptr, rowval, nzval, name)
    length(colptr) == n + 1 ||
        _structure_error("DirmnCounts: $(name)colptr has $(length(colptr)) entries, but a " *
                         "SparseMatrixCSC with $n columns needs n + 1 = $(n + 1)")
    n >= 0 && length(colptr) >= 1 || return
    last = colptr[end]
    (last >= 1 && last - 1 <= length(rowval) && last - 1 <= length(nzval)) ||
        _structure_error("DirmnCounts: $(name)colptr[end] = $last, but it must be nnz + 1 " *
                         "with 0 <= nnz <= length(rowval) = $(length(rowval)) and " *
                         "length(nzval) = $(length(nzval))")
    return nothing
end

# The message for the library's finding about the structure of a
# SparseMatrixCSC (m × n, arrays colptr and rowval as the caller has them),
# or nothing when the failure is not about its structure. `transposed`:
# the caller passed transpose(S) or S' (then its X[i, j] is S[j, i]);
# `obsdim` the caller's orientation.
function _csc_structure_text(loc, fn::AbstractString, m::Int, n::Int, colptr, rowval,
                             transposed::Bool, obsdim::Int)
    loc === nothing && return nothing
    arg = _argument(loc)
    name = transposed ? "parent(X)." : ""
    if arg == "ptr" && loc.index >= 0
        k = Int(loc.index) + 1
        k <= length(colptr) || return nothing
        v = colptr[k]
        k == 1 && return "$fn: $(name)colptr[1] = $v, but it must be 1"
        k == length(colptr) &&
            return "$fn: $(name)colptr[end] = colptr[$k] = $v, but it must be nnz + 1"
        return "$fn: $(name)colptr[$k] = $v is below colptr[$(k - 1)] = $(colptr[k - 1]) " *
               "or above colptr[end] = $(colptr[end]) (colptr must not decrease)"
    elseif arg == "indices" && loc.index >= 0
        k = Int(loc.index) + 1
        k <= length(rowval) || return nothing
        j = _entry_column(colptr, n, k)
        col = j == 0 ? "" : " (column $j)"
        return "$fn: $(name)rowval[$k] = $(rowval[k])$col is outside 1:$m, the rows of " *
               "the $m×$n SparseMatrixCSC"
    elseif arg == "indices" && loc.row >= 0 && loc.column >= 0
        # A cell stored twice: the library's (row, column) are observation,
        # category; S[i, j] is the same cell of the SparseMatrixCSC itself.
        b, v = Int(loc.row) + 1, Int(loc.column) + 1
        sobsdim = transposed ? 3 - obsdim : obsdim
        i, j = sobsdim == 2 ? (v, b) : (b, v)
        cell = transposed ? _cell_text(obsdim, j, i) : _cell_text(obsdim, i, j)
        return "$fn: $(name)rowval holds row $i more than once in column $j " *
               "($(name)rowval[$(name)colptr[$j]:$(name)colptr[$(j + 1)]-1]): $cell is stored twice"
    end
    return nothing
end

# The same for a SparseVector's nzind (its pointer array is this package's).
function _sparsevec_structure_text(loc, fn::AbstractString, n::Int, nzind)
    loc === nothing && return nothing
    arg = _argument(loc)
    if arg == "indices" && loc.index >= 0
        k = Int(loc.index) + 1
        k <= length(nzind) || return nothing
        return "$fn: nzind[$k] = $(nzind[k]) is outside 1:$n, the indices of the " *
               "SparseVector of length $n"
    elseif arg == "indices" && loc.column >= 0
        return "$fn: nzind holds index $(loc.column + 1) more than once: " *
               "$(_cell_text(Int(loc.column) + 1)) is stored twice"
    end
    return nothing
end
