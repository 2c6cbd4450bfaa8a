# Run by scripts/test-julia.sh under valgrind (memcheck): every path of the
# ccall layer that creates, uses or frees a handle, a few times over, in a
# session that ends with every handle closed -- so that a handle the Julia
# side loses (a pointer dropped without its destroy, or a destroy the library
# refused, as close(ctx) from a progress callback was before issue #24) is a
# block valgrind reports as lost, with libdirmn in its allocation stack, and
# a double free or a read of a freed handle an error with libdirmn in its
# stack. Every handle is on a context of the script's own and closed by the
# end (the default context, kept for the session, would leave its threads
# alive at exit, their blocks "possibly lost" under libdirmn). Small data:
# valgrind runs this some 14 times slower.
using Dirmn
using SparseArrays

X = [1 0 3 2 0 7; 2 3 0 1 4 0; 0 4 1 5 2 1]
a = [0.5, 1.0, 2.0]
Xn = [1 0; 2 -1; 0 4]
Xd = hcat(ones(6), [0.1, 0.5, 0.2, 0.9, 0.4, 0.7])   # a design for the 6 observations of X

for round in 1:3
    ctx = DirmnContext(:cpu)
    Dirmn.set_threads!(ctx, 2)
    c = DirmnCounts(X; context = ctx)
    s = DirmnCounts(sparse(X); context = ctx)
    t = DirmnCounts(transpose(sparse(X)); obsdim = 1, context = ctx)
    v = DirmnCounts(sparsevec([1, 3], [2, 5], 3); context = ctx)
    loglik(c, a); loglik(s, [a a]); loglik(t, a); loglik(v, a)
    loglik_rowwise(c, repeat(a, 1, 6)); loglik_sum(s, a; weights = ones(6))
    loglik_rowwise_derivatives(c, repeat(a, 1, 6))
    Dirmn.info(c); totals(s)
    f = fit_dirmn(c; progress = (i, ll, g) -> nothing)
    m = fit_mixture(c, 2; starts = 2, max_iterations = 5)
    posterior(m, X); posterior(m, s); assignments(m, X[:, 1])
    sel = fit_mixture(s, 1:2; starts = 1, max_iterations = 3)
    close(sel)
    # Regressions: fit and copy out, predict, Wald test; one closed from a
    # progress callback of a call on its context (the library frees it when
    # the call returns); one left to the finalizer.
    rg = fit_dirmn_reg(t, Xd; progress = (i, ll, g) -> nothing)
    predict(rg, Xd); predict(rg, Xd; type = :proportion); wald_test(rg)
    rg2 = fit_dirmn_reg(c, Xd)
    rg3 = fit_dirmn_reg(s, Xd; weights = [1, 2, 1, 0, 1, 1], progress = (i, ll, g) -> (close(rg2); nothing))
    fit_dirmn_reg(c, Xd)
    close(rg3)
    # The precision's design: read by the fit, kept for simulate, and read
    # through an adjoint's strides by predict.
    rp = fit_dirmn_reg(c, Xd; parametrization = :meanprecision, precision_design = ones(6, 1))
    predict(rp, Xd; precision_design = permutedims(ones(6, 1))'); simulate(rp; seed = 1)
    # Per-group tests: the result's arrays written by the library (one group
    # tested, one of a single column not).
    test_dirmn_groups(t, Xd, [1, 1, 2]; weights = [1, 2, 1, 1, 1, 1])
    # Sampling (issue #30): counts objects made by the library, copied out
    # and freed (kept as :counts and closed, or closed at once), the
    # moments, tables drawn from fits, the group test with its bootstrap.
    d = DirMult(a, 7)
    rc = rand(d, 5; seed = 1, output = :counts, context = ctx)
    Matrix(rc); sparse(rc); Matrix{Float32}(rc); close(rc)
    rand(d, 4; seed = 2, context = ctx); rand(d, 4; seed = 2, output = :sparse, context = ctx)
    rand(DirMultMixtureModel([a reverse(a)], [0.3, 0.7], 6), 5; seed = 3, context = ctx)
    rand(DirMultRowwise(repeat(a, 1, 3), [1, 5, 0]); seed = 4, context = ctx)
    mean(d); var(d); cov(d)
    Matrix(c); sparse(s); sparse(t)
    simulate(f; nsim = 2, seed = 5, context = ctx); simulate(m; seed = 6); simulate(rg; seed = 7)
    test_groups(c, [1, 1, 2, 2, 1, 2]; bootstrap = 3, seed = 8)
    # The proportion test: proportions read through a stride.
    test_proportions(c, [0.2, 0.3, 0.5]); test_proportions(t, view([0.2, 0, 0.3, 0, 0.5], 1:2:5))
    # The proportion test's power: proportions through a stride, the tables on
    # the context's threads.
    power_proportions(a, view([0.2, 0, 0.3, 0, 0.5], 1:2:5), 4, [5, 0, 9, 3]; tables = 6,
                      seed = 9, context = ctx)
    # Failures: the error slot and location, through the wrappers.
    for bad in (() -> DirmnCounts(Xn; context = ctx), () -> loglik(c, [1.0, -1.0, 1.0]),
                () -> loglik(Any[1, missing], [1.0, 1.0]; context = ctx),
                () -> fit_dirmn(c; weights = fill(-1.0, 6)),
                () -> fit_mixture(c, 2; progress = (i, ll, ch) -> true),
                () -> fit_dirmn_reg(c, hcat(Xd, Xd[:, 2])), () -> predict(rg, [1.0 NaN]),
                () -> predict(rp, Xd),
                () -> predict(rp, Xd[1:1, :]; precision_design = fill(NaN, 1, 1)),
                () -> fit_dirmn_reg(c, Xd; progress = (i, ll, g) -> true),
                () -> test_dirmn_groups(c, Xd, [1, 1, 1]; p_null = 2),
                () -> rand(DirMult([1.0, -1.0], 3), 2; context = ctx),
                () -> rand(DirMult(a, 3), 2; size = [1, -1], context = ctx),
                () -> test_groups(c, [1, 1, 1, 1, 1, 1]),
                () -> test_proportions(s, [0.5, -0.5, 1.0]),
                () -> power_proportions(a, [0.5, -0.5, 1.0], 3, 5; tables = 2, context = ctx),
                () -> Matrix{Int32}(DirmnCounts(
                    [2^40 1; 0 1]; context = ctx)),
                () -> DirmnCounts(SparseMatrixCSC{Int,Int}(3, 2, [1, 3, 4], [1, 8, 2], [1, 2, 3]);
                                  context = ctx))
        try
            bad()
        catch e
            e isa DirmnError || rethrow()
        end
    end
    # close() from progress callbacks of calls on the same context: counts
    # and mixtures (freed by the library when the call returns), and the
    # context (freed by Dirmn when the call returns).
    c2 = DirmnCounts(X; context = ctx)
    m2 = fit_mixture(c, 2; starts = 1, max_iterations = 3)
    fit_dirmn(c; progress = (i, ll, g) -> (close(c2); close(m2); nothing))
    c3 = DirmnCounts(X; context = ctx)
    m3 = fit_mixture(c3, 2; starts = 1, max_iterations = 3,
                     progress = (i, ll, ch) -> (close(c3); close(ctx); nothing))
    # A finalizer run inside a call (as a collection from a callback would).
    ctx4 = DirmnContext(:cpu)
    c4 = DirmnCounts(X; context = ctx4)
    c5 = DirmnCounts(X; context = ctx4)
    fit_dirmn(c4; progress = (i, ll, g) -> (Dirmn._finalize_counts(c5); nothing))
    # Communicators (issue #31), of one rank: the buffers the library passes
    # read and written in Julia; the handle closed before its counts and
    # after them, a detach, a function that throws, and a communicator and
    # its counts left to the finalizers (whichever goes last releases).
    ctx6 = DirmnContext(:cpu)
    one_rank = () -> Communicator(0, 1; allreduce! = buf -> (buf .+= 0),
                                  broadcast! = (buf, root) -> sum(buf))
    cm = one_rank()
    c7 = DirmnCounts(X; context = ctx6)
    set_communicator!(c7, cm)
    close(cm)
    fit_dirmn(c7; weights = ones(6)); loglik_sum(c7, a); overdispersion_test(c7)
    set_communicator!(c7, nothing)
    fit_dirmn(c7)
    cm = one_rank()
    set_communicator!(c7, cm)
    fit_dirmn(c7)
    close(c7); close(cm)
    cm = Communicator(0, 1; allreduce! = buf -> error("no"), broadcast! = (buf, root) -> nothing)
    c8 = DirmnCounts(X; context = ctx6)
    try
        set_communicator!(c8, cm)
    catch e
        e isa DirmnError || rethrow()
    end
    close(cm); close(c8)
    set_communicator!(DirmnCounts(X; context = ctx6), one_rank())
    close(ctx6)
    close(c); close(s); close(t); close(v); close(m); close(m3); close(c4); close(ctx4); close(rg)
    close(rp)
    # Contexts closed before their counts; counts left to the finalizers.
    ctx5 = DirmnContext(:cpu)
    c6 = DirmnCounts(X; context = ctx5)
    close(ctx5)
    close(c6)
    for _ in 1:5
        DirmnCounts(X; context = DirmnContext(:cpu))
    end
end
GC.gc(); GC.gc()
println("valgrind_script: done")
