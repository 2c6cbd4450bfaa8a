# Drawing tables from the Dirichlet-multinomial (dirmn_sample,
# dirmn_sample_rowwise): rand for a DirMult, a mixture of them and one per
# observation, simulate for the fitted models; and the moments of a DirMult
# (dirmn_moments): mean, var, cov.

# --- the distributions -----------------------------------------------------------

"""
    DirMultMixtureModel(alpha::AbstractMatrix, mixture_weights = nothing, size = nothing)
    DirMultMixtureModel(components::AbstractVector{DirMult}, mixture_weights = nothing,
                        size = nothing)
    DirMultMixtureModel(m::DirMultMixture, size = nothing)

A mixture of k Dirichlet-multinomials DM(α_j, size) with mixing weights
π_j, to draw tables from with [`rand`](@ref) (a distribution, as
Distributions.jl's `MixtureModel`; a fitted mixture is a
[`DirMultMixture`](@ref), which the third form turns into one). `alpha` is
V × k, component j's parameter vector in column j (the layout of a
`DirMultMixture`'s `alpha`); `mixture_weights` k finite weights ≥ 0 with a
positive sum (normalised when drawing), or `nothing` for equal weights;
`size` the number of trials of every draw (or `nothing`, then given to
`rand`). The values are checked by the library when drawing.
"""
struct DirMultMixtureModel
    alpha::Matrix{Float64}
    mixture_weights::Union{Nothing,Vector{Float64}}
    size::Union{Nothing,Int}
    function DirMultMixtureModel(alpha::AbstractMatrix, mixture_weights = nothing,
                                 size::Union{Nothing,Integer} = nothing)
        A = Matrix{Float64}(_check_real(alpha, "alpha"))
        w = mixture_weights === nothing ? nothing :
            Vector{Float64}(_check_real(mixture_weights, "mixture_weights"))
        w === nothing || length(w) == Base.size(A, 2) ||
            _mismatch("mixture_weights has length $(length(w)) but alpha has " *
                      "$(Base.size(A, 2)) components (columns)")
        return new(A, w, size === nothing ? nothing : Int(size))
    end
end

function DirMultMixtureModel(components::AbstractVector{DirMult}, mixture_weights = nothing,
                             size::Union{Nothing,Integer} = nothing)
    isempty(components) && throw(ArgumentError("DirMultMixtureModel: no components"))
    V = length(components[1])
    all(d -> length(d) == V, components) ||
        _mismatch("the components have different numbers of categories: " *
                  join(length.(components), ", "))
    return DirMultMixtureModel(reduce(hcat, [d.alpha for d in components]), mixture_weights,
                               size)
end

DirMultMixtureModel(m::DirMultMixture, size::Union{Nothing,Integer} = nothing) =
    DirMultMixtureModel(m.alpha, m.mixture_weights, size)

ncomponents(d::DirMultMixtureModel) = Base.size(d.alpha, 2)
ncategories(d::DirMultMixtureModel) = Base.size(d.alpha, 1)
Base.length(d::DirMultMixtureModel) = Base.size(d.alpha, 1)

function Base.show(io::IO, d::DirMultMixtureModel)
    print(io, "DirMultMixtureModel(k=", ncomponents(d), ", V=", ncategories(d),
          d.size === nothing ? "" : ", size=$(d.size)", ")")
end

"""
    DirMultRowwise(alpha::AbstractMatrix, size; obsdim = 2)

One Dirichlet-multinomial per observation, DM(α_b, size_b), to draw a
table from with [`rand`](@ref) (`dirmn_sample_rowwise`: a fitted
regression's α, for one): with `obsdim = 2` (the default, as
[`loglik_rowwise`](@ref)'s parameters) `alpha` is V × n, observation b's
vector in column b, and the table drawn is V × n; with `obsdim = 1` both
are n × V. `size` is every observation's number of trials, an integer or a
vector of n (the observed totals of a table, say). The values are checked
by the library when drawing.
"""
struct DirMultRowwise
    alpha::Matrix{Float64}
    size::Union{Int,Vector{Int}}
    obsdim::Int
    function DirMultRowwise(alpha::AbstractMatrix, size::Union{Integer,AbstractVector};
                            obsdim::Integer = 2)
        obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
        A = Matrix{Float64}(_check_real(alpha, "alpha"))
        s = size isa Integer ? Int(size) : _int_vector(size, "size")
        return new(A, s, Int(obsdim))
    end
end

nobs(d::DirMultRowwise) = Base.size(d.alpha, d.obsdim == 2 ? 2 : 1)
ncategories(d::DirMultRowwise) = Base.size(d.alpha, d.obsdim == 2 ? 1 : 2)
Base.size(d::DirMultRowwise) = Base.size(d.alpha)

Base.show(io::IO, d::DirMultRowwise) =
    print(io, "DirMultRowwise(", join(Base.size(d.alpha), "×"), ", obsdim=", d.obsdim, ")")

# Integers of a vector as Int, naming the first entry that is not one.
function _int_vector(x::AbstractVector, name::AbstractString)
    out = Vector{Int}(undef, length(x))
    for (k, v) in enumerate(x)
        (v isa Real && isinteger(v) && typemin(Int) <= v <= typemax(Int)) ||
            throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                             "$name[$k] = $v is not an integer (a number of trials)"))
        out[k] = Int(v)
    end
    return out
end

# --- the library call ---------------------------------------------------------------

const _OUTPUTS = (:matrix, :sparse, :counts)

_check_output(output::Symbol) = output in _OUTPUTS ||
    throw(ArgumentError("output must be :matrix, :sparse or :counts, not :$output"))

function _check_obsdim(obsdim::Integer)
    obsdim in (1, 2) || throw(ArgumentError("obsdim must be 1 or 2, not $obsdim"))
    return Int(obsdim)
end

# The seed of a draw: the caller's (a non-negative integer below 2^64), or
# one drawn from the global random number generator.
function _sample_seed(seed)
    seed === nothing && return rand(UInt64)
    seed isa Integer || throw(ArgumentError("seed must be an integer, not $(typeof(seed))"))
    0 <= seed <= typemax(UInt64) ||
        throw(ArgumentError("seed must be an integer in 0 .. 2^64 - 1, not $seed"))
    return UInt64(seed)
end

# The sizes of n draws as the library takes them: (array, stride), stride 0
# for one size for every row.
function _sample_sizes(size, n::Int)
    size === nothing &&
        throw(ArgumentError("no size: give the number of trials, as DirMult(α, size) or the " *
                            "keyword `size`"))
    if size isa Integer
        typemin(Int64) <= size <= typemax(Int64) ||
            throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                             "size = $size is outside 0 .. 2^31 - 1"))
        return Int64[size], 0
    end
    size isa AbstractVector ||
        throw(ArgumentError("size must be an integer or a vector of $n integers, not a " *
                            "$(typeof(size))"))
    length(size) == n ||
        _mismatch("size has length $(length(size)) but $n observations are drawn")
    return Vector{Int64}(_int_vector(size, "size")), 1
end

# The hint for a failure of a draw: the library's 0-based positions worded as
# the Julia arrays the caller gave. `params(loc)` words a parameter's.
function _sample_hint(ctx::DirmnContext, sizes_stride::Int, k::Int, params)
    return function (loc)
        parts = String[]
        isopen(ctx) || push!(parts, " [the DirmnContext was closed]")
        if loc !== nothing
            arg = _argument(loc)
            if arg == "sizes" && loc.row >= 0
                v = _value_text(loc)
                push!(parts, sizes_stride == 0 ? " [size = $v in Julia]" :
                                                  " [size[$(loc.row + 1)] = $v in Julia]")
            elseif arg == "options->component" && loc.row >= 0
                return _Reworded("rand: component[$(loc.row + 1)] = " *
                                 "$(loc.integer_value + 1) is outside 1:$k, the components")
            elseif arg == "options->mixture_weights" && loc.index >= 0
                push!(parts, " [mixture_weights[$(loc.index + 1)] in Julia]")
            elseif arg == "params"
                m = params(loc)
                m === nothing || push!(parts, m)
            end
        end
        return isempty(parts) ? nothing : join(parts)
    end
end

# Draws `rows` observations over `cols` categories into a new counts object
# (observations as rows, orientation `obsdim` for Julia), with k parameter
# vectors at P[(j - 1) sk + (v - 1) sv + 1], or (rowwise) one per row at
# P[(b - 1) sk + (v - 1) sv + 1]. `component`: nothing, or 0-based Int64
# components of the rows; `weights`: nothing or k Float64; `want_component`:
# whether to return the drawn components (0-based). A function barrier:
# what is preserved has a concrete type.
function _sample_counts(ctx::DirmnContext, rows::Int, cols::Int, k::Int, rowwise::Bool,
                        P::Matrix{Float64}, sk::Int, sv::Int, sizes::Vector{Int64},
                        sizes_stride::Int, seed::UInt64, component, weights,
                        want_component::Bool, storage::Symbol, obsdim::Int, hint,
                        first_row::Int64 = Int64(0))
    storage_code = _options(false, storage).storage
    zout = want_component ? Vector{Int64}(undef, rows) : Int64[]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    comp = component === nothing ? Int64[] : component::Vector{Int64}
    w = weights === nothing ? Float64[] : weights::Vector{Float64}
    GC.@preserve P sizes comp w zout begin
        oref = Ref(LibDirmn.empty_sample_options())
        LibDirmn.dirmn_sample_options_init_sized(oref, sizeof(LibDirmn.dirmn_sample_options))
        o = oref[]
        oref[] = LibDirmn.dirmn_sample_options(
            o.size, seed, component === nothing ? Ptr{Int64}(C_NULL) : pointer(comp),
            weights === nothing ? Ptr{Cdouble}(C_NULL) : pointer(w),
            want_component ? pointer(zout) : Ptr{Int64}(C_NULL), storage_code, first_row)
        _with(ctx) do p
            st = rowwise ?
                LibDirmn.dirmn_sample_rowwise(p, out, Int64(rows), Int64(cols), pointer(P),
                                              Int64(sk), Int64(sv), LibDirmn.DIRMN_PARAM_ALPHA,
                                              pointer(sizes), Int64(sizes_stride), oref) :
                LibDirmn.dirmn_sample(p, out, Int64(rows), Int64(cols), Int64(k), pointer(P),
                                      Int64(sk), Int64(sv), LibDirmn.DIRMN_PARAM_ALPHA,
                                      pointer(sizes), Int64(sizes_stride), oref)
            _check(st, p, hint)
        end
    end
    c = _finish(ctx, out[], rows, cols, obsdim, false)
    return c, zout
end

# The table as the caller asked for it; a counts object not handed out is
# freed at once.
function _sample_output(c::DirmnCounts, output::Symbol)
    output === :counts && return c
    try
        return output === :sparse ? sparse(c) : Matrix(c)
    finally
        close(c)
    end
end

# The rows and columns of the library's table, and the checks every draw
# makes before calling it.
function _sample_shape(n::Integer, V::Int)
    n >= 1 || throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                               "rand: n ($n) must be at least 1 (the library draws no empty tables)"))
    n <= typemax(Int64) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_OVERFLOW, "rand: n = $n does not fit 64 bits"))
    V >= 1 || throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                               "rand: alpha has no categories"))
    return Int(n)
end

# first_row, the number of the seed's draws before a call's (as in every
# binding: the C field's value); the library checks that the rows fit 2^63.
function _first_row(first_row::Integer)
    first_row >= 0 ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                         "rand: first_row ($first_row) must be >= 0 (the number of the draws " *
                         "of the seed's table before this call's)"))
    first_row <= typemax(Int64) ||
        throw(DirmnError(LibDirmn.DIRMN_ERROR_OVERFLOW, "rand: first_row = $first_row does " *
                         "not fit 64 bits"))
    return Int64(first_row)
end

# --- rand ----------------------------------------------------------------------------

"""
    rand(d::DirMult, n::Integer; seed = nothing, first_row = 0, size = d.size, obsdim = 2,
         output = :matrix, storage = :auto, backend = :auto, device = 0,
         context = nothing)
    rand(rng::AbstractRNG, d::DirMult, n::Integer; kwargs...)
    rand(d::DirMult) -> Vector{Int}

`n` independent draws from the Dirichlet-multinomial DM(α, size), drawn by
libdirmn (`dirmn_sample`): exact at every α in [1e-306, 1e306] and size
below 2^31 (gamma variates drawn as logarithms, then conditional binomials,
or the Pólya urn where the size is small against the categories). Returns,
with `obsdim = 2` (the default, the package's and Distributions.jl's
orientation: one observation per column), a V × n `Matrix{Int}` whose
columns sum to `size`; with `obsdim = 1` the n × V transpose (one
observation per row). `output = :sparse` gives a `SparseMatrixCSC{Int,Int}`
of the same shape (copied from the library's compressed table, never
densified), `output = :counts` the library's table itself as a
[`DirmnCounts`](@ref) in that orientation (`storage`: its form, `:auto`,
`:dense` or `:sparse`), ready for [`loglik`](@ref), [`fit_dirmn`](@ref),
`Matrix`, `sparse`.

`size` (the number of trials) is `d.size` unless given here: an integer for
every draw, or a vector of n integers, draw b's (the totals of an observed
table, say); 0 gives a column of zeros. `rand(d)` is one draw, a
`Vector{Int}` of length V.

`seed`: a draw is a function of the seed (an integer in 0 .. 2^64 - 1),
α and the sizes alone, the same on every backend and for any number of
threads, and draw b does not depend on n (a larger n with the same seed
begins with the same draws); `nothing` (the default) takes a seed from
Julia's global random number generator (so `Random.seed!` makes it
reproducible), `rand(rng, d, n)` one from `rng`. `first_row` (default 0)
is the number of the seed's draws before this call's: draw b is draw
`first_row + b` of the table the seed gives, so `rand(d, m; seed = s,
first_row = i)` is columns `i+1:i+m` of `rand(d, n; seed = s)`, and ranks
drawing their own observations of a table split over a
[`Communicator`](@ref) make, together, the one table (the same number in
every dirmn binding, the C field's; a negative one raises a `DirmnError`).

An α outside [1e-306, 1e306], a size outside 0 .. 2^31 - 1, raise a
[`DirmnError`](@ref) naming the entry (`d.alpha[v]`, `size[b]`); a missing
size an `ArgumentError`. For a mixture see [`DirMultMixtureModel`](@ref),
for one α per observation [`DirMultRowwise`](@ref), for new tables from a
fitted model [`simulate`](@ref).

```julia
d = DirMult([0.5, 1.0, 2.0], 20)
X = rand(d, 1000; seed = 1)        # 3 × 1000, every column sums to 20
fit_dirmn(X).alpha                 # ≈ [0.5, 1.0, 2.0]
rand(d, 5; obsdim = 1)             # 5 × 3
```
"""
function Base.rand(d::DirMult, n::Integer; seed = nothing, first_row::Integer = 0,
                   size = d.size, obsdim::Integer = 2, output::Symbol = :matrix,
                   storage::Symbol = :auto, backend::Symbol = :auto, device::Integer = 0,
                   context::Union{Nothing,DirmnContext} = nothing)
    _check_output(output)
    fr = _first_row(first_row)
    od = _check_obsdim(obsdim)
    V = length(d.alpha)
    rows = _sample_shape(n, V)
    sizes, ss = _sample_sizes(size, rows)
    ctx = _context(context, backend, device)
    P = reshape(copy(d.alpha), V, 1)
    params = loc -> loc.index >= 0 ? " [d.alpha[$(loc.index + 1)] in Julia]" : nothing
    c, _ = _sample_counts(ctx, rows, V, 1, false, P, V, 1, sizes, ss, _sample_seed(seed),
                          nothing, nothing, false, storage, od, _sample_hint(ctx, ss, 1, params),
                          fr)
    return _sample_output(c, output)
end

Base.rand(rng::AbstractRNG, d::DirMult, n::Integer; kwargs...) =
    rand(d, n; seed = _rng_seed(rng, kwargs), kwargs...)

Base.rand(d::DirMult; kwargs...) = vec(rand(d, 1; obsdim = 2, kwargs...))
Base.rand(rng::AbstractRNG, d::DirMult; kwargs...) =
    vec(rand(d, 1; obsdim = 2, seed = _rng_seed(rng, kwargs), kwargs...))

function _rng_seed(rng::AbstractRNG, kwargs)
    haskey(kwargs, :seed) &&
        throw(ArgumentError("rand: give a random number generator or a seed, not both"))
    return rand(rng, UInt64)
end

"""
    rand(d::DirMultMixtureModel, n::Integer; component = nothing, seed = nothing,
         first_row = 0, size = d.size, obsdim = 2, output = :matrix, storage = :auto,
         backend = :auto, device = 0, context = nothing)
        -> (counts = table, component = Vector{Int})
    rand(rng::AbstractRNG, d::DirMultMixtureModel, n::Integer; kwargs...)

`n` draws from the mixture `d` (`dirmn_sample` with k vectors): draw b
takes component `component[b]` (a vector of n integers in `1:k`, given),
or by default one drawn from `d.mixture_weights`, and is then drawn from
DM(α_component, size). Returns a named tuple `(counts, component)`: the
table as [`rand`](@ref) for a `DirMult` returns it (V × n with `obsdim =
2`, `output` and `storage` as there), and each draw's component (1-based,
the columns of `d.alpha`; the given ones when `component` was given).
`size`, `seed`, `first_row` (the drawn components follow it too) and the
rest as for a `DirMult`. A component outside `1:k`
raises a [`DirmnError`](@ref) naming it, a negative or non-finite mixing
weight one naming `mixture_weights[j]`.

```julia
d = DirMultMixtureModel([10.0 1.0; 1.0 10.0], [0.3, 0.7], 50)
X, z = rand(d, 200; seed = 7)     # 2 × 200 counts, z in 1:2
```
"""
function Base.rand(d::DirMultMixtureModel, n::Integer; component = nothing, seed = nothing,
                   first_row::Integer = 0, size = d.size, obsdim::Integer = 2,
                   output::Symbol = :matrix, storage::Symbol = :auto, backend::Symbol = :auto,
                   device::Integer = 0, context::Union{Nothing,DirmnContext} = nothing)
    _check_output(output)
    fr = _first_row(first_row)
    od = _check_obsdim(obsdim)
    V, k = Base.size(d.alpha)
    k >= 1 || throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                               "rand: the mixture has no components (alpha has no columns)"))
    rows = _sample_shape(n, V)
    sizes, ss = _sample_sizes(size, rows)
    comp = nothing
    if component !== nothing
        component isa AbstractVector ||
            throw(ArgumentError("component must be a vector of $rows integers, not a " *
                                "$(typeof(component))"))
        length(component) == rows ||
            _mismatch("component has length $(length(component)) but $rows observations " *
                      "are drawn")
        comp = Int64[x - 1 for x in _int_vector(component, "component")]
    end
    ctx = _context(context, backend, device)
    params = function (loc)
        (loc.vector >= 0 && loc.index >= 0) || return nothing
        j, v = loc.vector + 1, loc.index + 1
        return " [d.alpha[$v, $j] in Julia: component $j, category $v]"
    end
    c, z = _sample_counts(ctx, rows, V, k, false, d.alpha, V, 1, sizes, ss,
                          _sample_seed(seed), comp, d.mixture_weights, comp === nothing,
                          storage, od, _sample_hint(ctx, ss, k, params), fr)
    table = _sample_output(c, output)
    drawn = comp === nothing ? Int[x + 1 for x in z] : Int[x + 1 for x in comp]
    return (counts = table, component = drawn)
end

Base.rand(rng::AbstractRNG, d::DirMultMixtureModel, n::Integer; kwargs...) =
    rand(d, n; seed = _rng_seed(rng, kwargs), kwargs...)

"""
    rand(d::DirMultRowwise; seed = nothing, first_row = 0, size = d.size, output = :matrix,
         storage = :auto, backend = :auto, device = 0, context = nothing)
    rand(rng::AbstractRNG, d::DirMultRowwise; kwargs...)

One table drawn from `d`, observation b from DM(α_b, size_b)
(`dirmn_sample_rowwise`), of the shape and orientation of `d.alpha`
(V × n with `obsdim = 2`, n × V with `obsdim = 1`). `output`, `storage`,
`seed`, `first_row` and the rest as for [`rand`](@ref) of a `DirMult`
(observation b is drawn as observation `first_row + b` of the seed's
table, at its own α_b). An α out of the
sampler's range raises a [`DirmnError`](@ref) naming its entry of
`d.alpha`.
"""
function Base.rand(d::DirMultRowwise; seed = nothing, first_row::Integer = 0, size = d.size,
                   output::Symbol = :matrix, storage::Symbol = :auto, backend::Symbol = :auto,
                   device::Integer = 0, context::Union{Nothing,DirmnContext} = nothing)
    _check_output(output)
    fr = _first_row(first_row)
    V, n = ncategories(d), nobs(d)
    rows = _sample_shape(n, V)
    sizes, ss = _sample_sizes(size, rows)
    ctx = _context(context, backend, device)
    # alpha[v, b] (obsdim 2) or alpha[b, v] (obsdim 1), column-major.
    srow, sv = d.obsdim == 2 ? (V, 1) : (1, n)
    params = function (loc)
        (loc.row >= 0 && loc.index >= 0) || return nothing
        b, v = loc.row + 1, loc.index + 1
        return d.obsdim == 2 ? " [d.alpha[$v, $b] in Julia: observation $b, category $v]" :
                               " [d.alpha[$b, $v] in Julia: observation $b, category $v]"
    end
    c, _ = _sample_counts(ctx, rows, V, 1, true, d.alpha, srow, sv, sizes, ss,
                          _sample_seed(seed), nothing, nothing, false, storage, d.obsdim,
                          _sample_hint(ctx, ss, 1, params), fr)
    return _sample_output(c, output)
end

Base.rand(rng::AbstractRNG, d::DirMultRowwise; kwargs...) =
    rand(d; seed = _rng_seed(rng, kwargs), kwargs...)

# --- simulate ---------------------------------------------------------------------------

# A fitted model's row totals as the sizes of its simulations.
function _fitted_sizes(totals::Vector{Float64}, what::AbstractString)
    isempty(totals) &&
        throw(ArgumentError("simulate: the $what holds no row totals (its counts were " *
                            "closed before the fit)"))
    sizes = Vector{Int64}(undef, length(totals))
    for (b, t) in enumerate(totals)
        (isinteger(t) && 0 <= t < 2.0^31) ||
            throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                             "simulate: observation $b of the fitted table has total $t, not " *
                             "an integer in 0 .. 2^31 - 1 (a table made with real_valued = " *
                             "true cannot be simulated)"))
        sizes[b] = Int64(t)
    end
    return sizes
end

function _check_nsim(nsim::Integer)
    nsim >= 1 || throw(ArgumentError("nsim must be at least 1, not $nsim"))
    return Int(nsim)
end

_simulation_seed(seed0::UInt64, s::Int) = seed0 + UInt64(s - 1)   # wraps around 2^64

# Copies the columns `cols` (of V) drawn, P of them, into a table of V
# categories: the other categories get no counts (their α is 0).
function _embed_categories(X::Matrix{Int}, cols::Vector{Int}, V::Int, obsdim::Int)
    length(cols) == V && return X
    n = obsdim == 2 ? size(X, 2) : size(X, 1)
    if obsdim == 2
        out = zeros(Int, V, n)
        out[cols, :] = X
    else
        out = zeros(Int, n, V)
        out[:, cols] = X
    end
    return out
end

function _embed_categories(X::SparseMatrixCSC, cols::Vector{Int}, V::Int, obsdim::Int)
    length(cols) == V && return X
    I, J, vals = findnz(X)
    if obsdim == 2
        return sparse(cols[I], J, vals, V, size(X, 2))
    else
        return sparse(I, cols[J], vals, size(X, 1), V)
    end
end

"""
    simulate(f::DirMultFit; nsim = 1, seed = nothing, output = :matrix,
             backend = :auto, device = 0, context = nothing) -> Vector
    simulate(m::DirMultMixture; kwargs...) -> Vector
    simulate(f::DirmnRegression; kwargs...) -> Vector

`nsim` new tables drawn from a fitted model (R's `simulate`), each of the
shape and orientation of the fitted table, observation b with the fitted
table's total of observation b (a row of zeros stays one):

- a [`fit_dirmn`](@ref) fit: every observation from DM(α̂, N_b); categories
  with α̂ = 0 (no counts) get none; a fit at the multinomial limit draws
  from the multinomial with its proportions (a DM of precision 1e290);
- a [`fit_mixture`](@ref) fit: each observation's component drawn afresh
  from the mixing weights, then DM(α̂_component, N_b) (draw from a
  [`DirMultMixtureModel`](@ref) to have the components too);
- a [`fit_dirmn_reg`](@ref) fit: observation b from DM(α̂_b, N_b), α̂_b the
  fitted α at its covariates (`predict(f, f.design)`, with
  `precision_design = f.precision_design` where the fit has one; the
  regression must be open).

Returns a `Vector` of `nsim` tables, each a `Matrix{Int}` (`output =
:matrix`) or a `SparseMatrixCSC{Int,Int}` (`output = :sparse`). Table s is
drawn with seed `seed + s - 1` (see [`rand`](@ref)): the same `seed` gives
the same tables, and the first tables of a larger `nsim` are those of a
smaller one. `seed = nothing` (the default) takes one from Julia's global
random number generator. A fit of a table with non-integer totals
(`real_valued = true`) cannot be simulated ([`DirmnError`](@ref)).

```julia
f = fit_dirmn(X)
Ys = simulate(f; nsim = 100, seed = 1)      # a parametric bootstrap's tables
[fit_dirmn(Y).precision for Y in Ys]
```
"""
function simulate(f::DirMultFit; nsim::Integer = 1, seed = nothing, output::Symbol = :matrix,
                  backend::Symbol = :auto, device::Integer = 0,
                  context::Union{Nothing,DirmnContext} = nothing)
    ns = _check_nsim(nsim)
    output === :counts && throw(ArgumentError("simulate: output must be :matrix or :sparse"))
    _check_output(output)
    sizes = _fitted_sizes(f.totals, "fit")
    V = length(f.alpha)
    cols = findall(>(0), f.alpha)
    isempty(cols) && throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_PARAMETER,
                                      "simulate: the fit has no category with α > 0"))
    a = f.alpha[cols]
    if f.multinomial_limit
        # The proportions at a precision no count can tell from the limit.
        a .*= 1e290 / sum(a)
    end
    P = reshape(a, length(a), 1)
    seed0 = _sample_seed(seed)
    ctx = _context(context, backend, device)
    params = loc -> loc.index >= 0 ? " [f.alpha[$(cols[loc.index + 1])] in Julia]" : nothing
    hint = _sample_hint(ctx, 1, 1, params)
    n = length(sizes)
    return map(1:ns) do s
        c, _ = _sample_counts(ctx, n, length(cols), 1, false, P, length(cols), 1, sizes, 1,
                              _simulation_seed(seed0, s), nothing, nothing, false, :auto,
                              f.obsdim, hint)
        _embed_categories(_sample_output(c, output), cols, V, f.obsdim)
    end
end

function simulate(m::DirMultMixture; nsim::Integer = 1, seed = nothing,
                  output::Symbol = :matrix, backend::Symbol = :auto, device::Integer = 0,
                  context::Union{Nothing,DirmnContext} = nothing)
    ns = _check_nsim(nsim)
    output === :counts && throw(ArgumentError("simulate: output must be :matrix or :sparse"))
    _check_output(output)
    sizes = _fitted_sizes(m.totals, "mixture")
    V, k = size(m.alpha)
    seed0 = _sample_seed(seed)
    ctx = context === nothing ? m.context : context
    params = function (loc)
        (loc.vector >= 0 && loc.index >= 0) || return nothing
        return " [m.alpha[$(loc.index + 1), $(loc.vector + 1)] in Julia]"
    end
    hint = _sample_hint(ctx, 1, k, params)
    n = length(sizes)
    return map(1:ns) do s
        c, _ = _sample_counts(ctx, n, V, k, false, m.alpha, V, 1, sizes, 1,
                              _simulation_seed(seed0, s), nothing, m.mixture_weights, false,
                              :auto, m.obsdim, hint)
        _sample_output(c, output)
    end
end

function simulate(f::DirmnRegression; nsim::Integer = 1, seed = nothing,
                  output::Symbol = :matrix, backend::Symbol = :auto, device::Integer = 0,
                  context::Union{Nothing,DirmnContext} = nothing)
    ns = _check_nsim(nsim)
    output === :counts && throw(ArgumentError("simulate: output must be :matrix or :sparse"))
    _check_output(output)
    sizes = _fitted_sizes(f.totals, "regression")
    n = length(sizes)
    V = f.ncategories
    # Row b, category v at A[b, v]: stride_row 1, stride_category n.
    Z = f.precision_design
    A = Z === nothing ? _predict(f, f.design, 1, max(n, 1), n, f.covariates, nothing, 0, 0, 0) :
        _predict(f, f.design, 1, max(n, 1), n, f.covariates, Z, 1, max(n, 1), size(Z, 2))
    seed0 = _sample_seed(seed)
    ctx = context === nothing ? f.context : context
    params = function (loc)
        (loc.row >= 0 && loc.index >= 0) || return nothing
        return " [the fitted α of row $(loc.row + 1), category $(loc.index + 1), in Julia]"
    end
    hint = _sample_hint(ctx, 1, 1, params)
    return map(1:ns) do s
        c, _ = _sample_counts(ctx, n, V, 1, true, A, 1, n, sizes, 1,
                              _simulation_seed(seed0, s), nothing, nothing, false, :auto,
                              f.obsdim, hint)
        _sample_output(c, output)
    end
end

# --- moments ----------------------------------------------------------------------------

# The moments of DM(α, size) from the library, into whichever of `mean`,
# `variance` (V each) and `covariance` (V × V) is not nothing.
function _moments(d::DirMult, fn::Symbol, mean_, variance, covariance)
    d.size === nothing &&
        throw(ArgumentError("$fn: a DirMult without a size has no moments; give the number of " *
                            "trials, DirMult(α, size)"))
    V = length(d.alpha)
    V >= 1 || throw(DirmnError(LibDirmn.DIRMN_ERROR_INVALID_ARGUMENT,
                               "$fn: the DirMult has no categories"))
    ctx = default_context(:cpu)
    a = d.alpha
    hint = function (loc)
        loc === nothing && return nothing
        _argument(loc) == "params" && loc.index >= 0 &&
            return " [d.alpha[$(loc.index + 1)] in Julia]"
        return nothing
    end
    cptr(x) = x === nothing ? Ptr{Cdouble}(C_NULL) : pointer(x)
    GC.@preserve a mean_ variance covariance begin
        _with(ctx) do p
            st = LibDirmn.dirmn_moments(p, Int64(V), pointer(a), Int64(1),
                                        LibDirmn.DIRMN_PARAM_ALPHA, Float64(d.size),
                                        cptr(mean_), cptr(variance), cptr(covariance),
                                        Int64(V))
            _check(st, p, hint)
        end
    end
    return nothing
end

"""
    mean(d::DirMult) -> Vector{Float64}

The mean of DM(α, size), `size α / A` (A = Σ α), from the library
(`dirmn_moments`). `d` needs a size (`DirMult(α, size)`). Extends
`Statistics.mean`.
"""
function Statistics.mean(d::DirMult)
    m = Vector{Float64}(undef, length(d.alpha))
    _moments(d, :mean, m, nothing, nothing)
    return m
end

"""
    var(d::DirMult) -> Vector{Float64}

The variances of the counts of DM(α, size), `size p_v (1 - p_v) (size +
A) / (1 + A)` with `p = α / A`, from the library (`dirmn_moments`). `d`
needs a size. Extends `Statistics.var`.
"""
function Statistics.var(d::DirMult)
    v = Vector{Float64}(undef, length(d.alpha))
    _moments(d, :var, nothing, v, nothing)
    return v
end

"""
    cov(d::DirMult) -> Matrix{Float64}

The V × V covariance of the counts of DM(α, size): `-size p_u p_v (size +
A) / (1 + A)` off the diagonal, [`var`](@ref) on it, from the library
(`dirmn_moments`), exactly symmetric. `d` needs a size. Extends
`Statistics.cov`.
"""
function Statistics.cov(d::DirMult)
    V = length(d.alpha)
    C = Matrix{Float64}(undef, V, V)
    _moments(d, :cov, nothing, nothing, C)
    # The library writes row u's -size p_u p_v (size + A) / (1 + A) as a
    # product from the left, which can differ from row v's by a rounding;
    # keep the covariance exactly symmetric (its entries u < v, read from
    # the row-major block as C[v, u], mirrored), as Statistics' cov is.
    for u in 1:V, v in (u + 1):V
        C[u, v] = C[v, u]
    end
    return C
end
