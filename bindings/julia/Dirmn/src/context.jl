const _BACKENDS = (auto = LibDirmn.DIRMN_BACKEND_AUTO, cpu = LibDirmn.DIRMN_BACKEND_CPU,
                   cuda = LibDirmn.DIRMN_BACKEND_CUDA)

function _backend_code(b::Symbol)
    haskey(_BACKENDS, b) && return _BACKENDS[b]
    throw(ArgumentError("backend must be :auto, :cpu or :cuda, not :$b"))
end

_backend_symbol(code::Integer) =
    code == LibDirmn.DIRMN_BACKEND_CPU ? :cpu :
    code == LibDirmn.DIRMN_BACKEND_CUDA ? :cuda :
    code == LibDirmn.DIRMN_BACKEND_AUTO ? :auto : Symbol("backend", code)

"""
    DirmnContext(backend::Symbol = :auto, device::Integer = 0)

A libdirmn context: one backend (`:cpu`, `:cuda`, or `:auto` for CUDA device
`device` where the library has CUDA and the device exists, else the CPU),
one device, and its workspace. Counts objects live on their context's
device and compute with it.

Raises a [`DirmnError`](@ref) with `DIRMN_ERROR_BACKEND_UNAVAILABLE` when
CUDA is asked for but not compiled in or the device does not exist.

The context is freed by its finalizer or, sooner, by `close(ctx)` (which may
be called repeatedly; from a progress callback of a call on the context it
closes the context at once and frees it when that call returns). Calls
through one context are serialised by a lock,
as the library requires, so one context may be shared between tasks and
threads. Most code needs no explicit context: the functions of this package
use [`default_context`](@ref) unless given `context = ...`.
"""
mutable struct DirmnContext
    ptr::Ptr{Cvoid}
    backend::Symbol
    device::Int
    lock::ReentrantLock
    serial::Int   # the order in which a call that needs several contexts locks them
    # Calls (_with) of the task holding `lock` in progress on the context:
    # above 0, a close() from that task (a progress callback) cannot free
    # the handle, which the library keeps while a call uses it; the handle
    # is moved to `deferred` and freed when the outermost call returns.
    # Both fields are only touched under `lock`.
    depth::Int
    deferred::Ptr{Cvoid}

    function DirmnContext(backend::Symbol = :auto, device::Integer = 0)
        code = _backend_code(backend)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        # Context creation reports into the per-thread error slot read with a
        # NULL context; nothing can run on this thread between the two calls.
        status = LibDirmn.dirmn_context_create(out, code, Cint(device))
        _check(status, C_NULL)
        be = Ref{Cint}(0)
        dev = Ref{Cint}(0)
        st2 = LibDirmn.dirmn_context_backend(out[], be, dev)
        if st2 != 0
            msg = _last_error(out[])
            LibDirmn.dirmn_context_destroy(out[])
            throw(DirmnError(st2, msg))
        end
        ctx = new(out[], _backend_symbol(be[]), Int(dev[]), ReentrantLock(),
                  Threads.atomic_add!(_CONTEXT_SERIAL, 1), 0, C_NULL)
        finalizer(_finalize_context, ctx)
        return ctx
    end
end

const _CONTEXT_SERIAL = Threads.Atomic{Int}(1)

# Frees the handle (and one whose free was deferred); the caller holds the
# context's lock, outside any call on it (depth 0).
function _free_context(ctx::DirmnContext)
    p = ctx.ptr
    ctx.ptr = C_NULL
    p == C_NULL || LibDirmn.dirmn_context_destroy(p)
    _free_deferred(ctx)
    return nothing
end

function _free_deferred(ctx::DirmnContext)
    d = ctx.deferred
    ctx.deferred = C_NULL
    d == C_NULL || LibDirmn.dirmn_context_destroy(d)
    return nothing
end

# Runs `free(x)` under `l` from a finalizer. A finalizer must neither block
# nor switch tasks (lock could do both), so it only tries the lock; when
# another task holds it (a call in progress on the context), the finalizer is
# registered again and the handle freed at a later collection. When the
# collecting task itself holds the lock it is inside a call (a collection
# from a progress callback): `reentrant` says whether `free` may run there,
# as for counts and mixtures, whose destroy the library defers to the end
# of the call; otherwise (a context, which the library would keep) the
# finalizer is registered again too.
function _finalize_under(free, x, l::ReentrantLock, self, reentrant::Bool)
    if l.locked_by === current_task()
        reentrant ? free(x) : finalizer(self, x)
    elseif trylock(l)
        try
            free(x)
        finally
            unlock(l)
        end
    else
        finalizer(self, x)
    end
    return nothing
end

_finalize_context(ctx::DirmnContext) =
    ctx.ptr == C_NULL && ctx.deferred == C_NULL ? nothing :
    _finalize_under(_free_context, ctx, ctx.lock, _finalize_context, false)

"""
    close(ctx::DirmnContext)

Frees the context now instead of at garbage collection. Idempotent. Counts
objects made with it stay valid to `close` but can no longer compute (they
report `DIRMN_ERROR_NULL_POINTER`).

Called from inside a call on the context (a progress callback of
[`fit_dirmn`](@ref) or [`fit_mixture`](@ref)), it closes the context at once
(`isopen(ctx)` is false, every later call with it raises a
[`DirmnError`](@ref)) and frees it when that call returns: the library
cannot free a context under the call using it. The call itself finishes.
"""
function Base.close(ctx::DirmnContext)
    lock(ctx.lock)
    try
        if ctx.depth > 0
            # This task is inside a call on the context (the lock was free
            # or already this task's, and only its holder counts calls).
            if ctx.ptr != C_NULL
                ctx.deferred = ctx.ptr
                ctx.ptr = C_NULL
            end
        else
            _free_context(ctx)
        end
    finally
        unlock(ctx.lock)
    end
    return nothing
end

"""
    isopen(ctx::DirmnContext) -> Bool

Whether `ctx` has not been closed.
"""
Base.isopen(ctx::DirmnContext) = ctx.ptr != C_NULL

function Base.show(io::IO, ctx::DirmnContext)
    if isopen(ctx)
        print(io, "DirmnContext(:", ctx.backend, ", ", ctx.device, ")")
    else
        print(io, "DirmnContext(closed)")
    end
end

# Runs f(ptr) under the context's lock so the call and the read of its error
# message are not interleaved with another task's call on the same context.
# `owners` are the contexts of the handles the call uses (counts, mixture):
# their locks are taken too, so that close() of a handle, which frees it
# under its owner's lock, waits for the call to end (even one made through
# another context, which the library refuses only after reading the handle).
# Several locks are taken in the order of the contexts' serial numbers, so
# two such calls cannot deadlock.
# While the locks are held the contexts count the call (depth), so that a
# close() from inside it defers the free to its end (see close).
@inline function _with(f, ctx::DirmnContext, owners::DirmnContext...)
    if all(o -> o === ctx, owners)
        _enter(ctx)
        try
            return f(ctx.ptr)
        finally
            _leave(ctx)
        end
    end
    return _with_all(f, ctx, owners)
end

@noinline function _with_all(f, ctx::DirmnContext, owners)
    ls = sort!(unique!(DirmnContext[ctx, owners...]); by = c -> c.serial)
    foreach(_enter, ls)
    try
        return f(ctx.ptr)
    finally
        foreach(_leave, reverse(ls))
    end
end

@inline function _enter(ctx::DirmnContext)
    lock(ctx.lock)
    ctx.depth += 1
    return nothing
end

# The outermost call frees a context closed from inside it, still under the
# lock (no call of this task is then in progress on it).
@inline function _leave(ctx::DirmnContext)
    try
        ctx.depth -= 1
        ctx.depth == 0 && ctx.deferred != C_NULL && _free_deferred(ctx)
    finally
        unlock(ctx.lock)
    end
    return nothing
end

const _DEFAULT_CONTEXTS = Dict{Tuple{Symbol,Int},DirmnContext}()
const _DEFAULT_LOCK = ReentrantLock()

"""
    default_context(backend::Symbol = :auto, device::Integer = 0) -> DirmnContext

The context this package uses when a function is not given one: one per
`(backend, device)`, created on first use and kept for the session (a closed
one is replaced).
"""
function default_context(backend::Symbol = :auto, device::Integer = 0)
    _backend_code(backend)
    key = (backend, Int(device))
    lock(_DEFAULT_LOCK) do
        ctx = get(_DEFAULT_CONTEXTS, key, nothing)
        if ctx === nothing || !isopen(ctx)
            ctx = DirmnContext(backend, device)
            _DEFAULT_CONTEXTS[key] = ctx
        end
        return ctx
    end
end

"""
    backends() -> Vector{Symbol}

The backends usable in this session: always `:cpu`, plus `:cuda` when the
loaded libdirmn was built with CUDA and sees at least one device. Loading
the package never requires a GPU.
"""
function backends()
    b = [:cpu]
    cuda_device_count() > 0 && push!(b, :cuda)
    return b
end

"""
    cuda_device_count() -> Int

The number of CUDA devices libdirmn can use (0 without CUDA support, driver
or device).
"""
function cuda_device_count()
    LibDirmn.dirmn_backend_compiled(LibDirmn.DIRMN_BACKEND_CUDA) == 1 || return 0
    n = Ref{Cint}(0)
    status = LibDirmn.dirmn_cuda_device_count(n)
    return status == 0 ? Int(n[]) : 0
end

"""
    backend_compiled(backend::Symbol) -> Bool

Whether the loaded libdirmn was built with `backend` (`:cpu`, `:cuda`,
`:auto`), regardless of devices.
"""
backend_compiled(backend::Symbol) =
    LibDirmn.dirmn_backend_compiled(_backend_code(backend)) == 1

"""
    version() -> VersionNumber

The version of the loaded libdirmn.
"""
version() = VersionNumber(unsafe_string(LibDirmn.dirmn_version_string()))

"""
    library_path() -> String

Path of the loaded libdirmn.
"""
library_path() = LibDirmn.library_path()

"""
    set_threads!(ctx::DirmnContext, n::Integer) -> ctx

Number of CPU threads the context uses for host-side work; 0 means all cores.
"""
function set_threads!(ctx::DirmnContext, n::Integer)
    _with(ctx) do p
        _check(LibDirmn.dirmn_context_set_threads(p, Cint(n)), p)
    end
    return ctx
end

"""
    get_threads(ctx::DirmnContext) -> Int

Number of CPU threads the context uses.
"""
function get_threads(ctx::DirmnContext)
    n = Ref{Cint}(0)
    _with(ctx) do p
        _check(LibDirmn.dirmn_context_get_threads(p, n), p)
    end
    return Int(n[])
end

"""
    set_precision!(ctx::DirmnContext, precision::Symbol) -> ctx

`:double` (the default, ~1e-12 relative) or `:fast` (float32 arithmetic where
the GPU gains from it, ~1e-6 relative; the CPU always computes in double).
"""
function set_precision!(ctx::DirmnContext, precision::Symbol)
    code = precision === :double ? LibDirmn.DIRMN_PRECISION_DOUBLE :
           precision === :fast ? LibDirmn.DIRMN_PRECISION_FAST :
           throw(ArgumentError("precision must be :double or :fast, not :$precision"))
    _with(ctx) do p
        _check(LibDirmn.dirmn_context_set_precision(p, code), p)
    end
    return ctx
end

"""
    synchronize(ctx::DirmnContext)

Waits until the context's queued device work has finished (a no-op on the
CPU).
"""
function synchronize(ctx::DirmnContext)
    _with(ctx) do p
        _check(LibDirmn.dirmn_context_synchronize(p), p)
    end
    return nothing
end
