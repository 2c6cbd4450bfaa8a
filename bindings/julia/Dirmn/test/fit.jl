# Derivatives and maximum-likelihood fits against the BigFloat reference:
# ψ(a + n) - ψ(a) = Σ_{k<n} 1/(a + k) and ψ'(a + n) - ψ'(a) = -Σ_{k<n} 1/(a + k)².

s1(a::BigFloat, n::Integer) = n <= 0 ? zero(BigFloat) : sum(1 / (a + k) for k in 0:(n - 1))
s2(a::BigFloat, n::Integer) = n <= 0 ? zero(BigFloat) : sum(1 / (a + k)^2 for k in 0:(n - 1))

# Gradient and Hessian (diagonal, scalar) of Σ_b w_b loglik_b, in α or log α.
function ref_derivatives(xs::Vector, alpha::AbstractVector, w::AbstractVector; logalpha = false)
    a = [BigFloat(v) for v in alpha]
    A = sum(a)
    V = length(a)
    g = zeros(BigFloat, V)
    d = zeros(BigFloat, V)
    s = zero(BigFloat)
    for (b, x) in enumerate(xs)
        N = Int(sum(x))
        wb = BigFloat(w[b])
        sN1 = s1(A, N)
        s += wb * s2(A, N)
        for v in 1:V
            g[v] += wb * (s1(a[v], Int(x[v])) - sN1)
            d[v] -= wb * s2(a[v], Int(x[v]))
        end
    end
    if logalpha
        d = a .^ 2 .* d .+ a .* g
        g = a .* g
    end
    return Float64.(g), Float64.(d), Float64(s)
end

const BCI = let lines = readlines(joinpath(@__DIR__, "data", "bci.csv"))
    permutedims(hcat([parse.(Int, split(l, ',')[2:end]) for l in lines[2:end]]...))
end

@testset "derivatives and fits" begin
    xs = observations(X, 2)
    w = [0.5 + (b % 3) for b in 1:NOBS]

    @testset "loglik_sum, param=$(param), full=$(full)" for param in (:alpha, :logalpha),
                                                            full in (false, true)
        la = param === :logalpha
        p = la ? log.(ALPHA) : ALPHA
        r = loglik_sum(X, p; param = param, weights = w, full = full)
        want = sum(w .* ref_loglik(X, p; logalpha = la, full = full))
        @test abs(r.value - want) <= RTOL * abs(want)
        g, d, s = ref_derivatives(xs, ALPHA, w; logalpha = la)
        @test relerr(r.gradient, g) <= 1e-9
        @test relerr(r.hessian_diag, d) <= 1e-9
        @test abs(r.hessian_scalar - s) <= 1e-9 * max(abs(s), 1)
        # Unweighted, through a prepared object (histograms cached on it).
        c = DirmnCounts(permutedims(X); obsdim = 1)
        r1 = loglik_sum(c, p; param = param, full = full)
        @test abs(r1.value - sum(ref_loglik(X, p; logalpha = la, full = full))) <=
              RTOL * abs(r1.value)
        g1, _, _ = ref_derivatives(xs, ALPHA, ones(NOBS); logalpha = la)
        @test relerr(r1.gradient, g1) <= 1e-9
        # New weights on the same object must not reuse the old histograms.
        r2 = loglik_sum(c, p; param = param, weights = w, full = full)
        @test abs(r2.value - want) <= RTOL * abs(want)
        close(c)
    end

    @testset "loglik_rowwise_derivatives, obsdim=$(obsdim), param=$(param)" for obsdim in (1, 2),
                                                                                 param in (:alpha, :logalpha)
        la = param === :logalpha
        Y = obsdim == 2 ? X : permutedims(X)
        A = obsdim == 2 ? AROW : permutedims(AROW)
        r = loglik_rowwise_derivatives(Y, la ? log.(A) : A; obsdim = obsdim, param = param,
                                       full = true)
        @test relerr(r.loglik, REF_ROW) <= RTOL
        @test size(r.gradient) == size(Y) && size(r.hessian_diag) == size(Y)
        for b in 1:NOBS
            g, d, s = ref_derivatives([xs[b]], AROW[:, b], [1.0]; logalpha = la)
            gb = obsdim == 2 ? r.gradient[:, b] : r.gradient[b, :]
            db = obsdim == 2 ? r.hessian_diag[:, b] : r.hessian_diag[b, :]
            @test relerr(gb, g) <= 1e-9
            @test relerr(db, d) <= 1e-9
            @test abs(r.hessian_scalar[b] - s) <= 1e-9 * max(abs(s), 1)
        end
    end

    @testset "fit on BCI (50 plots × 225 species)" begin
        r = fit_dirmn(BCI; obsdim = 1)
        @test r.converged && !r.multinomial_limit && r.zero_columns == 0
        @test all(r.alpha .> 0)
        @test abs(r.precision - sum(r.alpha)) <= 1e-12 * r.precision
        # loglik is the log pmf, loglik_kernel the part without the
        # multinomial coefficients.
        want = sum(ref_loglik(BCI, r.alpha; obsdim = 1, full = true))
        @test abs(r.loglik - want) <= RTOL * abs(want)
        want_kernel = sum(ref_loglik(BCI, r.alpha; obsdim = 1, full = false))
        @test abs(r.loglik_kernel - want_kernel) <= RTOL * abs(want_kernel)
        @test loglikelihood(r) == r.loglik
        # The criteria, as R's AIC()/BIC() of a dirmn_fit: 225 fitted alphas,
        # 50 plots with counts.
        @test dof(r) == 225 && nobs(r) == 50
        @test abs(aic(r) - (-2want + 2 * 225)) <= RTOL * abs(want)
        @test abs(bic(r) - (-2want + 225 * log(50))) <= RTOL * abs(want)
        # Stationary by the reference gradient (in log α), and a maximum.
        bx = observations(BCI, 1)
        g, d, s = ref_derivatives(bx, r.alpha, ones(50); logalpha = true)
        @test maximum(abs.(g)) <= 1e-6 * abs(r.loglik)
        @test abs(r.gradient_norm - maximum(abs.(g))) <= 1e-6 * abs(r.loglik)
        for f in (0.98, 1.02)
            @test sum(ref_loglik(BCI, r.alpha .* f; obsdim = 1)) < want
        end
        # Standard errors of log α: the diagonal of the inverse observed
        # information, -H⁻¹ with H = diag(d) + s αα'.
        H = Diagonal(d) + s * r.alpha * r.alpha'
        se_log = sqrt.(diag(inv(-Matrix(H))))
        @test relerr(r.std_error_log_alpha, se_log) <= 1e-6
        @test relerr(r.std_error_alpha, se_log .* r.alpha) <= 1e-6

        d = fit_mle(DirMult, permutedims(BCI))
        @test relerr(d.alpha, r.alpha) <= 1e-8
        # Same answer from a given start, from sparse input, from a prepared object.
        @test relerr(fit_dirmn(BCI; obsdim = 1, start = fill(1.0, 225)).alpha, r.alpha) <= 1e-6
        @test relerr(fit_dirmn(sparse(BCI); obsdim = 1).alpha, r.alpha) <= 1e-8
        c = DirmnCounts(BCI; obsdim = 1)
        @test relerr(fit_dirmn(c).alpha, r.alpha) <= 1e-8
        close(c)
    end

    @testset "DirMultFit mirrors dirmn_fit_result" begin
        L = Dirmn.LibDirmn
        # Every value field of the C result (the header test ties the C
        # struct to dirmn.h), under its C name, but `observations`, whose
        # Julia name is `nobs` (bindings/names.tsv) ...
        cfields = [f === :observations ? :nobs : f
                   for f in fieldnames(L.dirmn_fit_result) if f !== :size]
        # ... and the fit's one output outside it, options->hessian_diag,
        # and the package's own record of the data for simulate (the row
        # totals and the orientation), after them.
        own = (:hessian_diag, :totals, :obsdim)
        @test filter(f -> !(f in own), collect(fieldnames(DirMultFit))) == cfields
        @test collect(fieldnames(DirMultFit))[end-1:end] == [:totals, :obsdim]
        @test :hessian_diag in fieldnames(DirMultFit)
        Y = BCI[1:30, 1:40]
        r = fit_dirmn(Y; obsdim = 1)
        @test r isa DirMultFit
        # The same fit through the raw ABI: every field agrees.
        c = DirmnCounts(Y; obsdim = 1)
        a, se, sl = zeros(40), zeros(40), zeros(40)
        GC.@preserve a se sl begin
            res = Ref(L.dirmn_fit_result(sizeof(L.dirmn_fit_result), pointer(a), pointer(se),
                                         pointer(sl), 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0))
            @test L.dirmn_fit(c.context.ptr, c.ptr, C_NULL, res) == 0
            raw = res[]
        end
        close(c)
        # The library's 0 for a missing standard error is NaN here.
        @test r.zero_columns > 0
        @test r.alpha == a && isequal(r.std_error_alpha, ifelse.(a .== 0, NaN, se)) &&
              isequal(r.std_error_log_alpha, ifelse.(a .== 0, NaN, sl))
        for f in (:loglik_kernel, :loglik, :gradient_norm, :precision, :iterations, :converged,
                  :multinomial_limit, :zero_columns, :parameters)
            @test (f, getfield(r, f) == getfield(raw, f)) == (f, true)
        end
        @test r.nobs == raw.observations == 30
        @test loglikelihood(r) == r.loglik
        @test occursin("DirMultFit(V=40, loglik=", sprint(show, r))
        s = sprint(show, MIME("text/plain"), r)
        @test occursin("iterations", s) && occursin("loglik_kernel", s) && occursin("aic", s)
    end

    @testset "fit: weights, zero columns, multinomial limit" begin
        Y = BCI[1:20, 1:30]
        wi = [1 + (b % 3) for b in 1:20]
        rep = vcat([repeat(Y[b:b, :], wi[b]) for b in 1:20]...)
        rw = fit_dirmn(Y; obsdim = 1, weights = Float64.(wi))
        rr = fit_dirmn(rep; obsdim = 1)
        @test sum(wi) == size(rep, 1)
        @test relerr(rw.alpha, rr.alpha) <= 1e-7

        keep = vec(sum(Y; dims = 1)) .> 0
        Z = hcat(Y[:, keep], zeros(Int, 20))           # one category never counted
        rz = fit_dirmn(Z; obsdim = 1)
        @test rz.zero_columns == 1 && rz.alpha[end] == 0
        @test relerr(rz.alpha[1:end-1], fit_dirmn(Y[:, keep]; obsdim = 1).alpha) <= 1e-7
        # dof counts the fitted alphas, nobs the observations with counts and
        # a positive weight, their number or the sum of their weights.
        @test dof(rz) == count(keep) && nobs(rz) == 20
        @test aic(rz) ≈ -2rz.loglik + 2count(keep) rtol = 1e-14
        Y0 = copy(Y)
        Y0[7, :] .= 0
        w0 = ones(20)
        w0[[2, 5]] .= 0
        r0 = fit_dirmn(Y0; obsdim = 1, weights = w0)
        @test nobs(r0) == 17
        @test bic(r0) ≈ -2r0.loglik + dof(r0) * log(17) rtol = 1e-14
        w0[1] = 2.5
        @test nobs(fit_dirmn(Y0; obsdim = 1, weights = w0)) == 18.5

        M = repeat([3 2 5], 20)                         # no overdispersion at all
        rm = fit_dirmn(M; obsdim = 1)
        @test rm.multinomial_limit
        @test relerr(rm.alpha, [0.3, 0.2, 0.5]) <= 1e-8
        @test dof(rm) == 3 && nobs(rm) == 20   # the library's rule: columns with counts
        e = caught(() -> fit_mle(DirMult, M; obsdim = 1))
        @test e isa ErrorException && occursin("overdispersion", e.msg)
    end

    @testset "fit and derivative errors" begin
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; weights = -w)
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_sum(X, ALPHA; weights = fill(NaN, NOBS))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH fit_dirmn(X; weights = w[1:2])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH fit_dirmn(X; start = ones(V + 1))
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik_sum(X, ALPHA[1:2])
        @dirmn_error :DIRMN_ERROR_DIMENSION_MISMATCH loglik_rowwise_derivatives(X, AROW')
        e = @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER fit_dirmn(X; start = [1.0, 1, 0, 1, 1, 1])
        @test occursin(r"index 2\b", msg(e))
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_sum(X, -ALPHA)
        @dirmn_error :DIRMN_ERROR_INVALID_PARAMETER loglik_rowwise_derivatives(X, -AROW)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn(X; tolerance = 0)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn(X; max_iterations = -1)
        @dirmn_error :DIRMN_ERROR_INVALID_ARGUMENT fit_dirmn(zeros(Int, V, 4))
        r = @test_logs (:warn, r"without convergence") fit_dirmn(BCI; obsdim = 1,
                                                                 max_iterations = 1)
        @test !r.converged && r.iterations <= 1
        c = DirmnCounts(X)
        close(c)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER fit_dirmn(c)
        @dirmn_error :DIRMN_ERROR_NULL_POINTER loglik_sum(c, ALPHA)
    end
end

@testset "the Hessian at the fit" begin
    # As loglik_sum gives it at the fitted alpha, without a second pass.
    r = fit_dirmn(BCI; obsdim = 1)
    s = loglik_sum(BCI, r.alpha; obsdim = 1)
    @test length(r.hessian_diag) == 225
    @test relerr(r.hessian_diag, s.hessian_diag) <= 1e-10
    @test abs(r.hessian_scalar - s.hessian_scalar) <= 1e-10 * abs(s.hessian_scalar)
    @test all(r.hessian_diag .< 0) && r.hessian_scalar > 0

    # The observed information and the covariance: its diagonal gives the
    # library's standard errors, and it inverts the information.
    I = informationmatrix(r)
    @test size(I) == (225, 225) && issymmetric(I)
    @test I ≈ -(Diagonal(s.hessian_diag) + s.hessian_scalar * ones(225) * ones(225)') rtol = 1e-10
    C = vcov(r)
    @test issymmetric(C)
    @test relerr(sqrt.(diag(C)), r.std_error_alpha) <= 1e-6
    @test norm(I * C - LinearAlgebra.I) <= 1e-8 * 225

    # Weighted, and with a category without counts (0 on the diagonal; 0
    # rows and columns of vcov, as its standard error).
    Y = BCI[1:20, 1:30]
    keep = vec(sum(Y; dims = 1)) .> 0
    Z = hcat(Y[:, keep], zeros(Int, 20))
    w = [1.0 + (b % 3) for b in 1:20]
    rz = fit_dirmn(Z; obsdim = 1, weights = w)
    nk = count(keep)
    sz = loglik_sum(Y[:, keep], rz.alpha[1:nk]; obsdim = 1, weights = w)
    @test rz.hessian_diag[end] == 0
    @test relerr(rz.hessian_diag[1:nk], sz.hessian_diag) <= 1e-10
    @test abs(rz.hessian_scalar - sz.hessian_scalar) <= 1e-10 * abs(sz.hessian_scalar)
    Cz = vcov(rz)
    @test all(isnan, Cz[end, :]) && all(isnan, Cz[:, end])
    @test relerr(sqrt.(diag(Cz))[1:nk], rz.std_error_alpha[1:nk]) <= 1e-6
    @test isnan(rz.std_error_alpha[end]) && isnan(rz.std_error_log_alpha[end])
    @test all(isfinite, rz.std_error_alpha[1:nk])

    # Where the library computes none, NaN.
    rm = fit_dirmn(repeat([3 2 5], 20); obsdim = 1)
    @test rm.multinomial_limit && all(isnan, rm.hessian_diag) && isnan(rm.hessian_scalar)
    @test all(isnan, vcov(rm)) && all(isnan, informationmatrix(rm))
    @test all(isnan, rm.std_error_alpha) && all(isnan, rm.std_error_log_alpha)
    r1 = fit_dirmn([0 4 0; 0 7 0]; obsdim = 1)   # one category with counts
    @test all(isnan, r1.hessian_diag) && isnan(r1.hessian_scalar)
end
