# One table split by rows over several processes or threads (the header's
# Communicators section): Communicator over the caller's allreduce and
# broadcast, and set_communicator! to make a DirmnCounts one rank's rows.

# What the library's callbacks reach through their `data` pointer: the
# caller's functions, and the first exception one of them threw in the call
# in progress (reported, then cleared, when the call has returned). It stays
# in _COMMUNICATORS from the Communicator's creation until the library's
# `release` callback: the library may call back through it as long as a
# counts object holds the communicator, which may outlive the Communicator.
mutable struct _CommState
    allreduce::Any
    broadcast::Any
    rank::Int
    ranks::Int
    # (callback name, exception, backtrace) or nothing; only touched by the
    # task making a call with the communicator's counts.
    err::Any
    released::Threads.Atomic{Bool}
end

# The states the library may still call back through. `release` can run
# inside a finalizer (counts or a Communicator collected), perhaps on a
# thread that already holds the lock, where waiting would never end: it only
# tries the lock, and when that fails marks its state released for the next
# _sweep! (on creation, close and set_communicator!) to drop.
const _COMMUNICATORS = IdDict{_CommState,Nothing}()
const _COMMUNICATORS_LOCK = Threads.SpinLock()

function _sweep_locked!()
    for s in collect(keys(_COMMUNICATORS))
        s.released[] && delete!(_COMMUNICATORS, s)
    end
    return nothing
end

# Only tries the lock: a sweep may be left to the next one, and close() may
# run in a finalizer on the thread that holds the lock.
function _sweep!()
    trylock(_COMMUNICATORS_LOCK) || return nothing
    try
        _sweep_locked!()
    finally
        unlock(_COMMUNICATORS_LOCK)
    end
    return nothing
end

function _register!(s::_CommState)
    lock(_COMMUNICATORS_LOCK)
    try
        _sweep_locked!()
        _COMMUNICATORS[s] = nothing
    finally
        unlock(_COMMUNICATORS_LOCK)
    end
    return nothing
end

# --- the callbacks the library calls ------------------------------------------

# A Julia exception must never unwind through the library: it is kept (the
# first of the call) and the callback returns non-zero, which fails the call
# with DIRMN_ERROR_COMMUNICATION ("the communicator's allreduce_int64
# callback returned -1"); the package then throws that DirmnError with the
# exception as its cause (_call_hint, _throw_status).
function _comm_failed(s::_CommState, name::Symbol, e, bt)
    s.err === nothing && (s.err = (name, e, bt))
    return Cint(-1)
end

function _comm_allreduce(data::Ptr{Cvoid}, values::Ptr{T}, count::Csize_t,
                         device::Cint)::Cint where {T}
    s = unsafe_pointer_to_objref(data)::_CommState
    try
        device == 0 || error("the library passed device memory (device = $device)")
        s.allreduce(unsafe_wrap(Array, values, Int(count); own = false))
        return Cint(0)
    catch e
        return _comm_failed(s, :allreduce!, e, catch_backtrace())
    end
end

function _comm_broadcast(data::Ptr{Cvoid}, buffer::Ptr{Cvoid}, bytes::Csize_t, root::Cint,
                         device::Cint)::Cint
    s = unsafe_pointer_to_objref(data)::_CommState
    try
        device == 0 || error("the library passed device memory (device = $device)")
        s.broadcast(unsafe_wrap(Array, Ptr{UInt8}(buffer), Int(bytes); own = false), Int(root))
        return Cint(0)
    catch e
        return _comm_failed(s, :broadcast!, e, catch_backtrace())
    end
end

# Called once, when the Communicator's handle and every counts object
# attached to it are gone: nothing calls back through `data` any more.
function _comm_release(data::Ptr{Cvoid})::Cvoid
    s = unsafe_pointer_to_objref(data)::_CommState
    s.released[] = true
    try
        _sweep!()
    catch   # (memory): the next sweep drops it
    end
    return nothing
end

# The callbacks' C pointers, made at run time (never kept from
# precompilation).
_comm_callbacks(s::_CommState, allreduce, broadcast) =
    LibDirmn.dirmn_communicator_callbacks(
        Csize_t(sizeof(LibDirmn.dirmn_communicator_callbacks)), Cint(s.rank), Cint(s.ranks),
        allreduce === nothing ? C_NULL :
            @cfunction(_comm_allreduce, Cint, (Ptr{Cvoid}, Ptr{Int64}, Csize_t, Cint)),
        allreduce === nothing ? C_NULL :
            @cfunction(_comm_allreduce, Cint, (Ptr{Cvoid}, Ptr{Cdouble}, Csize_t, Cint)),
        broadcast === nothing ? C_NULL :
            @cfunction(_comm_broadcast, Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t, Cint, Cint)),
        pointer_from_objref(s),
        @cfunction(_comm_release, Cvoid, (Ptr{Cvoid},)))

# The exception a callback of the communicator state `s` (or nothing) threw
# in the call that just failed, as `(name, exception, backtrace)`, or
# nothing; cleared.
function _take_comm_error!(s)
    s === nothing && return nothing
    err = s.err
    s.err = nothing
    return err
end

# --- Communicator ----------------------------------------------------------------

"""
    Communicator(rank, ranks; allreduce!, broadcast!)

This process's (or thread's) end of a communicator over `ranks` ranks, of
which it is `rank`, counted from 0 as in MPI (`0 ≤ rank < ranks`), for a
count table too large for one process: each rank makes a
[`DirmnCounts`](@ref) of its own observations and attaches it with
[`set_communicator!`](@ref). The whole table is rank 0's observations, then
rank 1's, and so on; every rank's have the same categories.

The communication is the caller's (MPI.jl, Distributed, threads), as two
functions:

- `allreduce!(buf)`: `buf` is a `Vector{Int64}` or a `Vector{Float64}`;
  replace it, on every rank, by the elementwise sum of every rank's `buf`
  (MPI's `Allreduce!(buf, +, comm)`);
- `broadcast!(buf::Vector{UInt8}, root::Int)`: copy rank `root`'s `buf`
  into every other rank's (MPI's `Bcast!(buf, root, comm)`; `root`
  counted from 0).

Every rank receives buffers of the same length. Their return values are
ignored. They run on the task that made the collective call, inside it, and
must not compute with that call's context; `buf` wraps the library's
memory and is valid only until the function returns (copy it to keep it).
An exception they throw never reaches the library: the call fails with a
[`DirmnError`](@ref) `DIRMN_ERROR_COMMUNICATION` whose message shows the
exception, thrown while handling it (the exception is the error's cause:
`Base.catch_stack()` in a `catch` lists both, and an uncaught error prints it
after "caused by"). As with MPI's collectives, they must fail on every rank
or on none: a rank whose function returned waits for the others at the next
one.

Collective calls, made by every rank in the same order, with the same
options and each rank's own observations' weights: [`set_communicator!`](@ref),
and on counts with a communicator [`fit_dirmn`](@ref) (and `fit_mle`),
[`loglik_sum`](@ref), [`overdispersion_test`](@ref),
[`fit_mixture`](@ref) (one k or a range of k) and
[`fit_dirmn_reg`](@ref) (each rank its own observations' rows of the
design, see below). Each rank gets the whole
table's result: α, standard errors and iterations bit for bit those of one
process holding the whole table, the log-likelihood to rounding. A mixture
over ranks starts from the whole table's starts and sums every EM iteration
over the ranks: its `loglik`, `aic` and `bic` agree with one process's to
rounding, its α, mixing weights and `laplace` to the M step's
accuracy (its Newton fits stop on a relative change of 1e-12 in their
objective: ~1e-6 relative in α, not bit for bit), and each rank's
[`DirMultMixture`](@ref) holds the shared parameters and its own
observations' `responsibilities` (`rows` this rank's observations, `nobs`
the whole table's). A regression over ranks, `fit_dirmn_reg(c, Xr)`, takes
on every rank the same options and its own observations' rows `Xr` of the
design (and of a `precision_design`, and their `weights`); the design's
rank is checked over every rank's rows (a covariate constant on one rank's
rows is no collinearity), and each Newton step sums the log-likelihood,
gradient and Newton matrix over the ranks. Every rank gets the whole
table's fit: `loglik`, `aic` and `bic` to rounding, the coefficients,
precision coefficients and standard errors to the Newton solves' accuracy
(~1e-7 relative; not bit for bit, but the same bits on every rank); its
[`DirmnRegression`](@ref) has `rows`, `totals` and `design` this rank's,
`nobs` the whole table's, and its [`predict`](@ref), [`wald_test`](@ref)
and [`simulate`](@ref) are local (this rank's rows, no communication).
When one rank's part fails (its weights, options or design values, say)
that rank raises its own `DirmnError` and every other rank
`DIRMN_ERROR_COMMUNICATION` naming the first rank that failed ("rank 1's
part of this collective call failed"); no rank waits for ever. A progress
callback that cancels (or throws) on one rank cancels the call on every
rank (`DIRMN_ERROR_CANCELLED` there; the throwing rank rethrows its
exception). Per-observation calls ([`loglik`](@ref),
[`loglik_rowwise`](@ref), [`totals`](@ref), `Matrix(c)`,
[`posterior`](@ref) and [`assignments`](@ref) with data, ...) stay local;
the group tests ([`test_groups`](@ref), [`test_dirmn_groups`](@ref),
[`test_proportions`](@ref)) do not sum over ranks in this release: they
raise `DIRMN_ERROR_NOT_SUPPORTED` on such counts.

[`rank`](@ref)`(comm)` and [`nranks`](@ref)`(comm)` give the two numbers.
`close(comm)` (idempotent) or the finalizer frees the handle; counts
attached to it keep the communicator, and its functions are kept, until
they are closed or detached too.

Raises a `DirmnError` with `DIRMN_ERROR_INVALID_ARGUMENT` for `ranks < 1`
or `rank` outside `0:ranks-1`, and `DIRMN_ERROR_NULL_POINTER` for a function
given as `nothing`.

```julia
using MPI, Dirmn
MPI.Init()
world = MPI.COMM_WORLD
comm = Communicator(MPI.Comm_rank(world), MPI.Comm_size(world);
                    allreduce! = buf -> MPI.Allreduce!(buf, +, world),
                    broadcast! = (buf, root) -> MPI.Bcast!(buf, root, world))
c = DirmnCounts(my_rows; obsdim = 1)   # this rank's observations
set_communicator!(c, comm)             # collective
f = fit_dirmn(c)                       # collective: the whole table's fit on every rank
r = fit_dirmn_reg(c, my_design)        # collective: this rank's rows of the design
```
"""
mutable struct Communicator
    ptr::Ptr{Cvoid}
    rank::Int
    ranks::Int
    state::_CommState
    lock::ReentrantLock   # held by close and by set_communicator!, which pass the handle
end

function Communicator(rank::Integer, ranks::Integer; allreduce!, broadcast!)
    r = _cint(rank, "rank")
    n = _cint(ranks, "ranks")
    s = _CommState(allreduce!, broadcast!, Int(r), Int(n), nothing, Threads.Atomic{Bool}(false))
    cb = Ref(_comm_callbacks(s, allreduce!, broadcast!))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    # The library keeps `data` (the state) from here until `release`: the
    # registry keeps the state for it, from before the handle exists.
    _register!(s)
    GC.@preserve s begin
        # Creation reports into the per-thread error slot read with a NULL
        # context; nothing can run on this thread between the two calls.
        status = LibDirmn.dirmn_communicator_create(out, cb)
        if status != 0
            s.released[] = true   # never created: no release will come
            _throw_status(status, C_NULL, _create_hint(allreduce!, broadcast!, rank, ranks))
        end
    end
    # The library's own view of the two numbers.
    rk, nr = Ref{Cint}(-1), Ref{Cint}(-1)
    _check(LibDirmn.dirmn_communicator_get_rank(out[], rk, nr), C_NULL)
    comm = Communicator(out[], Int(rk[]), Int(nr[]), s, ReentrantLock())
    finalizer(_finalize_communicator, comm)
    return comm
end

function _create_hint(allreduce, broadcast, rank, ranks)
    return function (loc)
        allreduce === nothing && return " [allreduce! = nothing in Julia]"
        broadcast === nothing && return " [broadcast! = nothing in Julia]"
        return " [Communicator(rank = $rank, ranks = $ranks) in Julia: ranks count from 0]"
    end
end

function _free_communicator(comm::Communicator)
    p = comm.ptr
    comm.ptr = C_NULL
    # Runs `release` unless counts still hold the communicator.
    p == C_NULL || LibDirmn.dirmn_communicator_destroy(p)
    return nothing
end

_finalize_communicator(comm::Communicator) =
    comm.ptr == C_NULL ? nothing :
    _finalize_under(_free_communicator, comm, comm.lock, _finalize_communicator, true)

"""
    close(comm::Communicator)

Frees the communicator's handle now instead of at garbage collection.
Idempotent; not collective. Counts attached to it stay attached (their
collective calls keep communicating through its functions) until they are
closed or detached; the functions are let go once nothing holds the
communicator. A closed `Communicator` cannot be attached to more counts.
"""
function Base.close(comm::Communicator)
    lock(comm.lock) do
        _free_communicator(comm)
    end
    _sweep!()
    return nothing
end

"""
    isopen(comm::Communicator) -> Bool

Whether `comm` has not been closed.
"""
Base.isopen(comm::Communicator) = comm.ptr != C_NULL

"""
    rank(comm::Communicator) -> Int

This rank's number in `comm`, from 0 to `nranks(comm) - 1` (as MPI
counts). A method of `LinearAlgebra.rank`, which this package re-exports
(one name, whichever of the two packages brought it).
"""
LinearAlgebra.rank(comm::Communicator) = comm.rank

"""
    nranks(comm::Communicator) -> Int

The number of ranks of `comm`.
"""
nranks(comm::Communicator) = comm.ranks

function Base.show(io::IO, comm::Communicator)
    print(io, "Communicator(rank ", comm.rank, " of ", comm.ranks, isopen(comm) ? "" : ", closed",
          ")")
end

"""
    set_communicator!(c::DirmnCounts, comm::Communicator) -> c
    set_communicator!(c::DirmnCounts, nothing) -> c

Makes `c` this rank's observations of a table split over `comm`'s ranks
(see [`Communicator`](@ref)). Collective: every rank calls it with its own
counts (each made with its own context) and its own end of the
communicator; it checks that every rank's counts have the same categories
(`DIRMN_ERROR_DIMENSION_MISMATCH` naming the first rank that differs, on
every rank). From then on [`fit_dirmn`](@ref), [`loglik_sum`](@ref),
[`overdispersion_test`](@ref), [`fit_mixture`](@ref) and
[`fit_dirmn_reg`](@ref) (each rank its own rows of the design) on `c` are
collective and give the whole table's results; the group tests raise
`DIRMN_ERROR_NOT_SUPPORTED`. A counts object has one
communicator at most: attaching another replaces it.

`nothing` detaches `c` (not collective): its calls are its own
observations' again. A closed `Communicator` raises a
[`DirmnError`](@ref) `DIRMN_ERROR_NULL_POINTER` on this rank only (the
others wait for it, as for a missed MPI collective).
"""
function set_communicator!(c::DirmnCounts, comm::Union{Nothing,Communicator})
    if comm === nothing
        _with(c.context) do p
            _check(LibDirmn.dirmn_counts_set_communicator(p, _handle(c), C_NULL), p,
                   _closed_hint(c))
            c.comm = nothing
        end
        _sweep!()
        return c
    end
    lock(comm.lock) do
        isopen(comm) ||
            throw(DirmnError(LibDirmn.DIRMN_ERROR_NULL_POINTER,
                             "set_communicator!: the Communicator was closed"))
        s = comm.state
        s.err = nothing
        _with(c.context) do p
            st = LibDirmn.dirmn_counts_set_communicator(p, _handle(c), comm.ptr)
            # A failure leaves the counts as they were; its callbacks'
            # exceptions are reported as in a call on counts attached to it.
            st == 0 || _check(st, p, _call_hint(c, c.context; comm = s))
            c.comm = s
        end
    end
    _sweep!()
    return c
end
