# The one vocabulary (issue #25): every name of bindings/names.tsv's `julia`
# column is checked against the package as what it is in Julia (an exported
# function, a field, a keyword accepted, a value accepted), so renaming
# either side without the other fails here. A row whose idea this file does
# not know fails too: a new row needs its check.

const NAMES_TSV = normpath(joinpath(@__DIR__, "..", "..", "..", "names.tsv"))

function read_names(path)
    rows = Dict{String,String}()
    header = nothing
    for line in readlines(path)
        (isempty(strip(line)) || startswith(line, "#")) && continue
        cols = split(line, '\t')
        if header === nothing
            header = cols
            continue
        end
        rows[cols[1]] = cols[findfirst(==("julia"), header)]
    end
    return rows
end

# The keywords any method of `f` declares.
kwnames(f) = Set(Symbol.(vcat([Base.kwarg_decl(m) for m in methods(f)]...)))

const NM_X = [3 0 4 1; 2 5 1 0; 0 1 2 6; 1 1 1 1; 4 2 0 3]   # categories × observations
const NM_FIT = fit_dirmn(NM_X)
const NM_TEST = overdispersion_test(NM_X)
# A small regression: 12 rows × 3 categories on an intercept and a trend.
const NM_RY = [3 5 1; 4 2 2; 6 1 3; 2 6 0; 5 3 4; 1 7 1; 7 2 5; 3 3 3; 8 1 6; 2 5 2; 4 4 1; 6 2 7]
const NM_RX = hcat(ones(12), range(-1, 1; length = 12))
const NM_REG = fit_dirmn_reg(NM_RY, NM_RX)
const NM_REG_MP = fit_dirmn_reg(NM_RY, NM_RX; parametrization = :meanprecision)
# The mean/precision fit of NM_RY with `kw...` (an ArgumentError for a value not accepted).
nm_mp(; kw...) = fit_dirmn_reg(NM_RY, NM_RX; parametrization = :meanprecision, kw...)
# Its precision on an intercept-only design: the same model as NM_REG_MP.
const NM_REG_MPZ = nm_mp(precision_design = ones(12, 1))
# Per-group tests: NM_RY's three columns as group "a", two more as group "b".
const NM_GY = hcat(NM_RY, reverse(NM_RY; dims = 1)[:, 1:2])
const NM_GG = ["a", "a", "a", "b", "b"]
const NM_GT = test_dirmn_groups(NM_GY, NM_RX, NM_GG)

# Sampling, moments and the group test (issue #30).
const NM_D = DirMult([1.0, 2.0, 3.0, 0.5, 1.5], 8)
const NM_MIX = DirMultMixtureModel([NM_D.alpha reverse(NM_D.alpha)], [0.4, 0.6], 8)
const NM_GRP = test_groups(NM_X, [1, 1, 2, 2]; bootstrap = 9, seed = 1)
# The proportion test of NM_X against equal proportions.
const NM_PT = test_proportions(NM_X, fill(0.2, 5))
const NM_POW = power_groups([NM_D.alpha reverse(NM_D.alpha)], [4, 5], 30; tables = 20,
                            level = 0.1, seed = 1)
# The proportion test's power: NM_D's α against equal proportions.
const NM_PPOW = power_proportions(NM_D.alpha, fill(0.2, 5), 6, 30; tables = 20, level = 0.1,
                                  seed = 1)

isexported(name) = Symbol(name) in names(Dirmn) && isdefined(Dirmn, Symbol(name))
fitfield(name) = Symbol(name) in fieldnames(DirMultFit)
mixfield(name) = Symbol(name) in fieldnames(DirMultMixture)
testfield(name) = Symbol(name) in fieldnames(OverdispersionTest)
fitkw(name) = Symbol(name) in kwnames(fit_dirmn)
mixkw(name) = Symbol(name) in kwnames(fit_mixture)
testkw(name) = Symbol(name) in kwnames(overdispersion_test)
regfield(name) = Symbol(name) in fieldnames(DirmnRegression)
regkw(name) = Symbol(name) in kwnames(fit_dirmn_reg)
groupsfield(name) = Symbol(name) in fieldnames(DirmnGroupTests)
gtfield(name) = Symbol(name) in fieldnames(GroupTest)
gtkw(name) = Symbol(name) in kwnames(test_groups)
randkw(name) = Symbol(name) in kwnames(rand)
powfield(name) = Symbol(name) in fieldnames(GroupPower)
powkw(name) = Symbol(name) in kwnames(power_groups)
ppkw(name) = Symbol(name) in kwnames(power_proportions)
ptfield(name) = Symbol(name) in fieldnames(ProportionTest)
# The positional arguments any method of `f` declares.
argnames(f) = Set(vcat([Base.method_argnames(m)[2:end] for m in methods(f)]...))
# The exported function `name` applied to `args`.
call(name, args...; kw...) = getfield(Dirmn, Symbol(name))(args...; kw...)
# A value accepted for a keyword: the call raises no ArgumentError.
accepts(f) = !(caught(f) isa ArgumentError)

# idea => what the Julia name must be.
const NAME_CHECKS = Dict{String,Function}(
    "log_pmf" => n -> isexported(n) && loglik(NM_X, ones(5)) isa Vector,
    "log_kernel" => n -> fitfield(n),
    # "keyword = value": that keyword of loglik with that value gives the
    # kernel, computed here.
    "kernel_flag" => function (n)
        kw, val = strip.(split(n, '='))
        got = loglik(NM_X, ones(5); (Symbol(kw) => Meta.parse(val),)...)
        Symbol(kw) in kwnames(loglik) && Symbol(kw) in kwnames(loglik_sum) &&
            relerr(got, ref_loglik(NM_X, ones(5); full = false)) <= 1e-12
    end,
    "std_error_alpha" => n -> fitfield(n),
    "std_error_log_alpha" => n -> fitfield(n),
    "precision" => n -> fitfield(n) && testfield(n) && regfield(n) &&
        getfield(NM_REG, Symbol(n)) === nothing && getfield(NM_REG_MP, Symbol(n)) > 0,
    "zero_columns" => n -> fitfield(n),
    "multinomial_limit" => n -> fitfield(n),
    "gradient_norm" => n -> fitfield(n) && regfield(n) && isexported(n) &&
        call(n, NM_REG) == NM_REG.gradient_norm && call(n, NM_FIT) == NM_FIT.gradient_norm,
    "iterations" => n -> fitfield(n) && mixfield(n) && regfield(n) && isexported(n) &&
        call(n, NM_REG) == NM_REG.iterations && call(n, NM_FIT) == NM_FIT.iterations,
    "converged" => n -> fitfield(n) && mixfield(n) && testfield(n) && regfield(n) && gtfield(n) &&
        isexported(n) && call(n, NM_REG) === NM_REG.converged === true,
    "parameters" => n -> fitfield(n) && mixfield(n) && regfield(n),
    "observations" => n -> fitfield(n) && mixfield(n) && testfield(n) && isexported(n) &&
        regfield(n) && call(n, NM_REG) == NM_REG.nobs == 12 && ptfield(n) &&
        call(n, NM_PT) == NM_PT.nobs == 4,
    "tolerance" => n -> fitkw(n) && mixkw(n) && testkw(n) && regkw(n) && gtkw(n) && powkw(n),
    "max_iterations" => n -> fitkw(n) && mixkw(n) && testkw(n) && regkw(n) && gtkw(n) &&
        powkw(n),
    "m_step_iterations" => n -> mixkw(n),
    "weights" => n -> fitkw(n) && mixkw(n) && testkw(n) && regkw(n) &&
        n in string.(kwnames(loglik_sum)),
    "start" => n -> fitkw(n),
    "mixture_objective" => n -> mixkw(n) && mixfield(n),
    "objective_kind" => n -> mixfield(n),
    "objective_ml" => n -> accepts(() -> fit_mixture(NM_X, 1; objective = Symbol(n))),
    "objective_dmn" => n -> accepts(() -> fit_mixture(NM_X, 1; objective = Symbol(n))),
    "init" => n -> mixkw(n),
    "init_mixed" => n -> accepts(() -> fit_mixture(NM_X, 1; init = Symbol(n))),
    "init_kmeans" => n -> accepts(() -> fit_mixture(NM_X, 1; init = Symbol(n))),
    "init_kmeanspp" => n -> accepts(() -> fit_mixture(NM_X, 1; init = Symbol(n))),
    "init_soft_kmeans" => n -> accepts(() -> fit_mixture(NM_X, 1; init = Symbol(n))),
    "starts" => n -> mixkw(n),
    "seed" => n -> mixkw(n) && gtkw(n) && gtfield(n) && randkw(n) && powkw(n) && powfield(n) &&
        ppkw(n) && Symbol(n) in kwnames(simulate),
    "mixing_weights" => n -> mixfield(n),
    "responsibilities" => n -> mixfield(n),
    "criterion_aic" => n -> isexported(n) && accepts(() -> fit_mixture(NM_X, 1:2; select = Symbol(n))),
    "criterion_bic" => n -> isexported(n) && accepts(() -> fit_mixture(NM_X, 1:2; select = Symbol(n))),
    "criterion_laplace" => n -> isexported(n) &&
        accepts(() -> fit_mixture(NM_X, 1:2; select = Symbol(n), objective = :dmn)),
    "select" => n -> mixkw(n),
    "overdispersion_test" => n -> isexported(n),
    "test_lrt" => n -> accepts(() -> overdispersion_test(NM_X; method = Symbol(n))),
    "test_score" => n -> accepts(() -> overdispersion_test(NM_X; method = Symbol(n))),
    # Julia additions (the block of that name at the end of names.tsv).
    "coefficients" => n -> isexported(n) && getfield(Dirmn, Symbol(n))(NM_FIT) == NM_FIT.alpha &&
        call(n, NM_REG) == NM_REG.coefficients,
    "std_errors" => n -> isexported(n) && isequal(getfield(Dirmn, Symbol(n))(NM_FIT),
                                                   NM_FIT.std_error_alpha),
    "confidence_intervals" => n -> isexported(n) && size(getfield(Dirmn, Symbol(n))(NM_FIT)) == (5, 2),
    "covariance" => n -> isexported(n) && size(getfield(Dirmn, Symbol(n))(NM_FIT)) == (5, 5),
    "log_likelihood" => n -> isexported(n) &&
        getfield(Dirmn, Symbol(n))(NM_FIT) == NM_FIT.loglik && call(n, NM_REG) == NM_REG.loglik,
    "degrees_of_freedom" => n -> isexported(n) &&
        getfield(Dirmn, Symbol(n))(NM_FIT) == NM_FIT.parameters && testfield(n) &&
        call(n, NM_REG) == NM_REG.parameters == 6,
    "grow_from" => n -> mixkw(n),
    "progress_callback" => n -> fitkw(n) && mixkw(n) && regkw(n),
    "test_method" => n -> testkw(n) && testfield(n),
    "test_statistic" => n -> testfield(n) && groupsfield(n) && gtfield(n) && ptfield(n),
    "test_p_value" => n -> isexported(n) && testfield(n) && groupsfield(n) && gtfield(n) &&
        call(n, NM_GRP) === NM_GRP.pvalue &&
        call(n, NM_GT) === NM_GT.pvalue && call(n, NM_PT) === NM_PT.pvalue &&
        getfield(Dirmn, Symbol(n))(NM_TEST) == NM_TEST.pvalue &&
        call(n, wald_test(NM_REG, 2)) == wald_test(NM_REG, 2).pvalue,
    # Regression (issue #29).
    "regression" => n -> isexported(n) && call(n, NM_RY, NM_RX) isa DirmnRegression,
    "reg_covariance" => n -> isexported(n) && call(n, NM_REG) == NM_REG.covariance &&
        size(call(n, NM_REG)) == (6, 6),
    "reg_std_errors" => n -> isexported(n) && call(n, NM_REG) == NM_REG.std_errors &&
        size(call(n, NM_REG)) == (2, 3),
    "reg_wald_test" => n -> isexported(n) && call(n, NM_REG, 2) isa WaldTest &&
        call(n, NM_REG, 2).dof == 3,
    "reg_predict" => n -> isexported(n) && size(call(n, NM_REG, NM_RX)) == (12, 3) &&
        isapprox(call(n, NM_REG, NM_RX; type = :proportion), call(n, NM_REG, NM_RX) ./
                 sum(call(n, NM_REG, NM_RX); dims = 2); rtol = 1e-14),
    "reg_hessian_definite" => n -> isexported(n) && regfield(n) &&
        call(n, NM_REG) === NM_REG.hessian_definite === true,
    # The regression's parametrisations (mean/precision).
    "reg_parametrization" => n -> regkw(n) && regfield(n) &&
        getfield(NM_REG_MP, Symbol(n)) === :meanprecision,
    "reg_loglinear" => n -> NM_REG.parametrization === Symbol(n) &&
        accepts(() -> fit_dirmn_reg(NM_RY, NM_RX; parametrization = Symbol(n))),
    "reg_mean_precision" => n -> NM_REG_MP.parametrization === Symbol(n) &&
        accepts(() -> fit_dirmn_reg(NM_RY, NM_RX; parametrization = Symbol(n))),
    "reg_contrast" => n -> regkw(n) && regfield(n) && getfield(NM_REG, Symbol(n)) === nothing,
    "reg_contrast_reference" => n -> NM_REG_MP.contrast === Symbol(n) &&
        accepts(() -> nm_mp(contrast = Symbol(n))),
    "reg_contrast_sum" => n -> accepts(() -> nm_mp(contrast = Symbol(n))) &&
        nm_mp(contrast = Symbol(n)).contrast === Symbol(n),
    "reg_reference" => n -> regkw(n) && regfield(n) && getfield(NM_REG_MP, Symbol(n)) == 1 &&
        nm_mp(; (Symbol(n) => 2,)...).reference == 2,
    "reg_log_precision" => n -> regfield(n) &&
        getfield(NM_REG_MP, Symbol(n)) ≈ log(NM_REG_MP.precision),
    "reg_std_error_log_precision" => n -> regfield(n) && getfield(NM_REG_MP, Symbol(n)) > 0,
    # The precision's covariates: a keyword of the fit and of predict, the
    # fit's field (a copy of the design; nothing without one).
    "reg_precision_design" => n -> regkw(n) && regfield(n) && Symbol(n) in kwnames(predict) &&
        getfield(NM_REG_MPZ, Symbol(n)) == ones(12, 1) &&
        getfield(NM_REG_MP, Symbol(n)) === nothing &&
        isapprox(NM_REG_MPZ.log_precision, [NM_REG_MP.log_precision]; rtol = 1e-6),
    # dirmn_reg_predict_with_precision is predict with that keyword.
    "reg_predict_with_precision" => n -> isexported(n) &&
        isapprox(call(n, NM_REG_MPZ, NM_RX; precision_design = ones(12, 1)),
                 call(n, NM_REG_MP, NM_RX); rtol = 1e-6) &&
        caught(() -> call(n, NM_REG_MPZ, NM_RX)) isa DirmnError,
    # Per-group likelihood-ratio tests (differential usage).
    "reg_test_groups" => n -> isexported(n) && call(n, NM_GY, NM_RX, NM_GG) isa DirmnGroupTests,
    "reg_groups" => n -> Symbol(n) in argnames(test_dirmn_groups) &&
        Symbol(n) in argnames(test_groups) && gtfield(n) && getfield(NM_GRP, Symbol(n)) == 2,
    "reg_group_label" => n -> groupsfield(n) && getfield(NM_GT, Symbol(n)) == ["a", "b"],
    "reg_null" => n -> Symbol(n) in kwnames(test_dirmn_groups) && groupsfield(n) &&
        getfield(NM_GT, Symbol(n)) == 1,
    "reg_hold_precision" => n -> Symbol(n) in kwnames(test_dirmn_groups) && groupsfield(n) &&
        getfield(NM_GT, Symbol(n)) === false,
    "reg_loglik_full" => n -> groupsfield(n) && all(getfield(NM_GT, Symbol(n)) .< 0),
    "reg_loglik_null" => n -> groupsfield(n) && gtfield(n) &&
        all(getfield(NM_GT, Symbol(n)) .<= NM_GT.loglik_full),
    "test_df" => n -> isexported(n) && groupsfield(n) && call(n, NM_GT) == [2.0, 1.0] &&
        gtfield(n) && call(n, NM_GRP) == NM_GRP.dof == 5 &&
        Symbol(n) in fieldnames(WaldTest) && testfield(n) && ptfield(n) &&
        call(n, NM_PT) == NM_PT.dof == 4,
    "test_p_adjusted" => n -> groupsfield(n) &&
        all(getfield(NM_GT, Symbol(n)) .>= NM_GT.pvalue),
    "reg_group_status" => n -> groupsfield(n) && getfield(NM_GT, Symbol(n)) == [:ok, :ok],
    "reg_groups_tested" => n -> groupsfield(n) && getfield(NM_GT, Symbol(n)) == 2,
    "columns_with_counts" => n -> groupsfield(n) && testfield(n) && gtfield(n) &&
        getfield(NM_GRP, Symbol(n)) == 5 &&
        getfield(NM_GT, Symbol(n)) == [3, 2],
    # Sampling, moments and the group test (issue #30). Base's and the
    # standard library's generics, extended (rand, Matrix) or re-exported
    # (mean, var, cov, sparse).
    "sample" => n -> getfield(Dirmn, Symbol(n)) === Base.rand &&
        size(call(n, NM_D, 3; seed = 1)) == (5, 3) &&
        call(n, NM_MIX, 3; seed = 1).counts isa Matrix{Int},
    "sample_rowwise" => n -> getfield(Dirmn, Symbol(n)) === Base.rand &&
        call(n, DirMultRowwise(repeat(NM_D.alpha, 1, 4), 8); seed = 1) isa Matrix{Int},
    "sample_size" => n -> Symbol(n) in fieldnames(DirMult) && getfield(NM_D, Symbol(n)) == 8 &&
        Symbol(n) in fieldnames(DirMultMixtureModel) && Symbol(n) in fieldnames(DirMultRowwise) &&
        randkw(n) && all(==(4), sum(rand(NM_D, 2; (Symbol(n) => 4,)...); dims = 1)) &&
        Symbol(n) in argnames(power_groups) && Symbol(n) in argnames(power_proportions),
    "sample_component" => n -> randkw(n) &&
        getfield(rand(NM_MIX, 3; seed = 1, (Symbol(n) => [2, 2, 1],)...), Symbol(n)) == [2, 2, 1],
    "simulate" => n -> isexported(n) && size(call(n, NM_FIT; seed = 1)[1]) == size(NM_X) &&
        size(call(n, NM_REG; seed = 1, nsim = 2)[2]) == (12, 3),
    "moment_mean" => n -> isexported(n) && call(n, DirMult([1.0, 3.0], 8)) ≈ [2.0, 6.0],
    "moment_variance" => n -> isexported(n) && length(call(n, NM_D)) == 5 &&
        call(n, NM_D) ≈ [Statistics.cov(NM_D)[v, v] for v in 1:5],
    "moment_covariance" => n -> isexported(n) && size(call(n, NM_D)) == (5, 5),
    "counts_to_dense" => n -> getfield(Dirmn, Symbol(n)) === Base.Matrix &&
        getfield(Dirmn, Symbol(n))(DirmnCounts(NM_X)) == NM_X,
    "counts_to_sparse" => n -> isexported(n) && call(n, DirmnCounts(NM_X)) == sparse(NM_X),
    "group_test" => n -> isexported(n) && call(n, NM_X, [1, 1, 2, 2]) isa GroupTest,
    "bootstrap" => n -> gtkw(n) && gtfield(n) && getfield(NM_GRP, Symbol(n)) == 9,
    "p_value_bootstrap" => n -> gtfield(n) && 0.1 <= getfield(NM_GRP, Symbol(n)) <= 1,
    "loglik_groups" => n -> gtfield(n) && getfield(NM_GRP, Symbol(n)) >= NM_GRP.loglik_null,
    # Power of the group test by simulation.
    "power" => n -> isexported(n) && NM_POW isa GroupPower &&
        call(n, [NM_D.alpha reverse(NM_D.alpha)], 3, 10; tables = 2) isa GroupPower,
    "power_tables" => n -> powkw(n) && powfield(n) && getfield(NM_POW, Symbol(n)) == 20 &&
        ppkw(n) && getfield(NM_PPOW, Symbol(n)) == 20,
    "power_level" => n -> powkw(n) && powfield(n) && getfield(NM_POW, Symbol(n)) == 0.1 &&
        ppkw(n) && getfield(NM_PPOW, Symbol(n)) == 0.1,
    "power_rows_per_group" => n -> Symbol(n) in argnames(power_groups),
    "power_value" => n -> powfield(n) &&
        getfield(NM_POW, Symbol(n)) == NM_POW.rejected / NM_POW.tables &&
        getfield(NM_PPOW, Symbol(n)) == NM_PPOW.rejected / NM_PPOW.tables,
    # The proportion test's power by simulation: the exported function, its
    # result the group test's power's type, of statistic :xsc.
    "power_proportions" => n -> isexported(n) && NM_PPOW isa GroupPower &&
        NM_PPOW.statistic_kind === :xsc && NM_PPOW.tables == 20 &&
        call(n, NM_D.alpha, fill(0.2, 5), 3, 10; tables = 2) isa GroupPower &&
        call(n, NM_D.alpha, fill(0.2, 5), 6, 30; tables = 20, level = 0.1, seed = 1) ==
        NM_PPOW,
    # The group test's statistic: a keyword of both functions, its values
    # accepted by both and recorded in the results' statistic_kind.
    "group_statistic" => n -> gtkw(n) && powkw(n) &&
        caught(() -> test_groups(NM_X, [1, 1, 2, 2]; (Symbol(n) => :none,)...)) isa
        ArgumentError,
    "group_statistic_lrt" => n -> NM_GRP.statistic_kind === NM_POW.statistic_kind === Symbol(n) &&
        test_groups(NM_X, [1, 1, 2, 2]; statistic = Symbol(n)).statistic ==
        test_groups(NM_X, [1, 1, 2, 2]).statistic &&
        accepts(() -> power_groups([NM_D.alpha reverse(NM_D.alpha)], 3, 10; tables = 2,
                                   statistic = Symbol(n))),
    "group_statistic_xmcupo" => function (n)
        t = test_groups(NM_X, [1, 1, 2, 2]; statistic = Symbol(n))
        p = power_groups([NM_D.alpha reverse(NM_D.alpha)], 3, 10; tables = 2,
                         statistic = Symbol(n))
        t.statistic_kind === p.statistic_kind === Symbol(n) && t.dof == NM_GRP.dof - 1
    end,
    # HMP's Xoc: one shared overdispersion against one per group, χ² on G - 1.
    "group_statistic_xoc" => function (n)
        t = test_groups(NM_X, [1, 1, 2, 2]; statistic = Symbol(n))
        p = power_groups([NM_D.alpha reverse(NM_D.alpha)], 3, 10; tables = 2,
                         statistic = Symbol(n))
        t.statistic_kind === p.statistic_kind === Symbol(n) && t.dof == NM_GRP.groups - 1 &&
            t.loglik_groups == NM_GRP.loglik_groups
    end,
    "group_statistic_kind" => n -> gtfield(n) && powfield(n) &&
        getfield(NM_GRP, Symbol(n)) === :lrt &&
        getfield(test_groups(NM_X, [1, 1, 2, 2]; statistic = :xmcupo), Symbol(n)) === :xmcupo &&
        getfield(test_groups(NM_X, [1, 1, 2, 2]; statistic = :xoc), Symbol(n)) === :xoc,
    # One group's observations against a given composition (HMP's
    # Xsc.onesample): the exported function, its positional argument, the
    # result's overdispersion (0 for one observation).
    "proportion_test" => n -> isexported(n) && NM_PT isa ProportionTest &&
        call(n, NM_X, fill(0.2, 5)).statistic == NM_PT.statistic,
    "proportion_test_null" => n -> Symbol(n) in argnames(test_proportions) &&
        Symbol(n) in argnames(power_proportions),
    "proportion_test_theta" => n -> ptfield(n) && isfinite(getfield(NM_PT, Symbol(n))) &&
        getfield(test_proportions(NM_X[:, 1], fill(0.2, 5)), Symbol(n)) == 0,
    # A table split by observations over ranks (issue #31): the exported
    # type, made over the caller's two functions (one rank: the sums are the
    # buffers themselves), and the function attaching counts to it, whose
    # fit on them is then the whole table's; `nothing` detaches.
    "communicator" => function (n)
        comm = call(n, 0, 1; allreduce! = identity, broadcast! = (b, r) -> b)
        ok = isexported(n) && getfield(Dirmn, Symbol(n)) === Communicator &&
            comm isa Communicator && rank(comm) == 0 && nranks(comm) == 1
        close(comm)
        ok
    end,
    # The number of the seed's draws before a sampling call's (the ranks of
    # a split table drawing their blocks; the C field's value, as in every
    # binding), for the three rands.
    "first_row" => n -> randkw(n) &&
        rand(NM_D, 3; seed = 1, (Symbol(n) => 1,)...) == rand(NM_D, 4; seed = 1)[:, 2:4] &&
        rand(NM_MIX, 2; seed = 1, (Symbol(n) => 2,)...).counts ==
            rand(NM_MIX, 4; seed = 1).counts[:, 3:4] &&
        rand(DirMultRowwise(repeat(NM_D.alpha, 1, 2), 8); seed = 1, (Symbol(n) => 2,)...) ==
            rand(DirMultRowwise(repeat(NM_D.alpha, 1, 4), 8); seed = 1)[:, 3:4],
    "set_communicator" => function (n)
        comm = Communicator(0, 1; allreduce! = identity, broadcast! = (b, r) -> b)
        c = DirmnCounts(NM_X)
        # Attached, the mixtures are collective and the groups test refused;
        # detached, it runs.
        g = [1, 1, 2, 2]
        ok = isexported(n) && call(n, c, comm) === c && fit_dirmn(c).alpha == NM_FIT.alpha &&
            fit_mixture(c, 1) isa DirMultMixture &&
            caught(() -> test_groups(c, g)) isa DirmnError && call(n, c, nothing) === c &&
            test_groups(c, g) isa GroupTest
        close(c); close(comm)
        ok
    end,
)

@testset "names.tsv's julia column" begin
    @test isfile(NAMES_TSV)
    rows = read_names(NAMES_TSV)
    @test length(rows) >= 40          # the table was read
    for (idea, name) in sort!(collect(rows))
        name == "-" && continue
        @test (idea, haskey(NAME_CHECKS, idea)) == (idea, true)
        haskey(NAME_CHECKS, idea) || continue
        ok = try
            NAME_CHECKS[idea](name) === true
        catch err
            err
        end
        @test (idea, name, ok) == (idea, name, true)
    end
    # The old names are no fields any more (they read as deprecated aliases).
    @test !(:nparams in fieldnames(DirMultMixture)) && !(:weights in fieldnames(DirMultMixture))
end
