# Sums of log-likelihoods with their gradients and Hessians (dirmn_loglik_sum,
# dirmn_loglik_rowwise_derivatives).

"""
    loglik_sum(X, α; obsdim = 2, param = :alpha, weights = nothing, full = true,
               backend = :auto, device = 0, context = nothing, real_valued = false)
        -> (value, gradient, hessian_diag, hessian_scalar)

The weighted sum over observations of the log-likelihood under one parameter
vector `α` (length V), with its gradient and Hessian with respect to `α`, or
to log α with `param = :logalpha` (then `α` holds log α). The Hessian is
`Diagonal(hessian_diag) + hessian_scalar * u * u'` with `u = ones(V)` for
`:alpha` and `u = α` for `:logalpha`, so a Newton step costs O(V).

`weights` (one finite value ≥ 0 per observation) defaults to all ones.
`full = true` (the default) makes `value` the weighted log pmf, multinomial
coefficients included; `full = false` leaves them out (the kernel; the
derivatives are the same either way). `X` is anything
[`DirmnCounts`](@ref) accepts, or a `DirmnCounts`, which is the way to make
repeated calls cheap: the library caches count histograms on it, so each
later call costs O(distinct counts) whatever the number of observations.

Collective on a `DirmnCounts` with a [`Communicator`](@ref): every rank
calls it with the same `α` and its own observations' `weights`, and gets
the sums over the whole table (to rounding: the multinomial coefficients
are summed per rank, then over the ranks).
"""
function loglik_sum(X, P::AbstractVector; obsdim::Integer = 2, param::Symbol = :alpha,
                    weights = nothing, full::Bool = true, backend::Symbol = :auto,
                    device::Integer = 0, context::Union{Nothing,DirmnContext} = nothing,
                    real_valued::Bool = false)
    code = _param_code(param)
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        V = c.ncat
        length(P) == V ||
            _mismatch("the parameter vector has length $(length(P)) but the counts have $V " *
                      "categories")
        Pn, s = _native_vector(_check_real(P, "α"), Float64)
        w = _weights(c, weights)
        value = Ref{Cdouble}(0)
        grad = Vector{Float64}(undef, V)
        hdiag = Vector{Float64}(undef, V)
        hscal = Ref{Cdouble}(0)
        _with(ctx, c.context) do p
            GC.@preserve Pn w grad hdiag begin
                st = LibDirmn.dirmn_loglik_sum(p, _handle(c), Ptr{Cdouble}(pointer(Pn)), Int64(s), code,
                                               _wptr(w), _flags(full), value, pointer(grad),
                                               pointer(hdiag), hscal)
            end
            _check(st, p, _param_hint(c, ctx, P, false))
        end
        return (value = value[], gradient = grad, hessian_diag = hdiag,
                hessian_scalar = hscal[])
    end
end

"""
    loglik_rowwise_derivatives(X, A; obsdim = 2, param = :alpha, full = true,
                               backend = :auto, device = 0, context = nothing,
                               real_valued = false)
        -> (loglik, gradient, hessian_diag, hessian_scalar)

Per-observation log-likelihood, gradient and Hessian with one parameter
vector per observation (`A` as for [`loglik_rowwise`](@ref): the size and
orientation of `X`), with respect to α or, with `param = :logalpha`, log α.
`loglik` and `hessian_scalar` have one entry per observation; `gradient` and
`hessian_diag` have the shape of `A`. Observation b's Hessian is
`Diagonal(hessian_diag_b) + hessian_scalar[b] * u * u'` with `u = ones(V)`
(`:alpha`) or `u = α_b` (`:logalpha`): the building block of
Dirichlet-multinomial regression. `full = true` (the default) makes `loglik`
the log pmf, multinomial coefficients included; `full = false` leaves them
out (the derivatives are the same either way).
"""
function loglik_rowwise_derivatives(X, P::AbstractVecOrMat; obsdim::Integer = 2,
                                    param::Symbol = :alpha, full::Bool = true,
                                    backend::Symbol = :auto, device::Integer = 0,
                                    context::Union{Nothing,DirmnContext} = nothing,
                                    real_valued::Bool = false)
    code = _param_code(param)
    return _with_counts(X, obsdim, real_valued, backend, device, context) do c, ctx
        size(P) == size(c) ||
            _mismatch("the parameters are $(join(size(P), "×")) but must have the size of the " *
                      "counts, $(join(size(c), "×")) (one parameter vector per observation)")
        n, V = c.nobs, c.ncat
        Pn, srow, sv = _rowwise_params(c, P)
        ll = Vector{Float64}(undef, n)
        hs = Vector{Float64}(undef, n)
        # Outputs are requested as observations × categories with a unit row
        # stride, the one layout in which loglik and hessian_scalar (indexed
        # by the row stride too) are contiguous; other orientations are
        # permuted afterwards.
        g = Matrix{Float64}(undef, n, V)
        hd = Matrix{Float64}(undef, n, V)
        _with(ctx, c.context) do p
            GC.@preserve Pn ll hs g hd begin
                st = LibDirmn.dirmn_loglik_rowwise_derivatives(
                    p, _handle(c), Ptr{Cdouble}(pointer(Pn)), Int64(srow), Int64(sv), code,
                    _flags(full), pointer(ll), pointer(g), pointer(hd), pointer(hs), Int64(1),
                    Int64(max(n, 1)))
            end
            _check(st, p, _param_hint(c, ctx, P, true))
        end
        if c.vector
            return (loglik = ll[1], gradient = vec(g), hessian_diag = vec(hd),
                    hessian_scalar = hs[1])
        elseif c.obsdim == 2
            return (loglik = ll, gradient = permutedims(g), hessian_diag = permutedims(hd),
                    hessian_scalar = hs)
        end
        return (loglik = ll, gradient = g, hessian_diag = hd, hessian_scalar = hs)
    end
end

