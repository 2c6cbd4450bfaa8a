"""
    Dirmn

Dirichlet-multinomial log-likelihoods for count tables, computed by the C
library libdirmn (CPU, or NVIDIA GPUs where the library was built with CUDA).

Orientation: like Distributions.jl, a matrix holds one observation per
COLUMN by default (`obsdim = 2`: a categories × observations table). Pass
`obsdim = 1` for a table with one observation per row (samples × taxa, as
read from a CSV file). Either way the array is handed to the library with
strides, without a copy.

Main entry points: [`DirMult`](@ref) with [`logpdf`](@ref) and
[`loglikelihood`](@ref); [`loglik`](@ref) and [`loglik_rowwise`](@ref) for
everything else (α or log α, K parameter vectors at once, one vector per
observation, with or without the multinomial coefficient);
[`loglik_sum`](@ref) and [`loglik_rowwise_derivatives`](@ref) for
gradients and Hessians; [`fit_mle`](@ref) and [`fit_dirmn`](@ref) for
maximum-likelihood α, with [`coef`](@ref), [`stderror`](@ref),
[`confint`](@ref), [`vcov`](@ref) and [`informationmatrix`](@ref);
[`overdispersion_test`](@ref) for the test of the Dirichlet-multinomial
against the multinomial;
[`fit_dirmn_reg`](@ref) for Dirichlet-multinomial regression on covariates,
with [`predict`](@ref) and [`wald_test`](@ref), and [`test_dirmn_groups`](@ref)
for its per-group likelihood-ratio tests (differential usage within groups
of categories, DRIMSeq's workflow);
[`fit_mixture`](@ref) for Dirichlet-multinomial
mixtures (EM clustering), with [`posterior`](@ref) and
[`assignments`](@ref) for new data and [`aic`](@ref), [`bic`](@ref),
[`laplace`](@ref) to choose the number of components;
[`rand`](@ref) to draw tables from a `DirMult(α, size)` (its moments:
[`mean`](@ref), [`var`](@ref), [`cov`](@ref)), a
[`DirMultMixtureModel`](@ref) or a [`DirMultRowwise`](@ref), and
[`simulate`](@ref) for new tables from a fitted model;
[`test_groups`](@ref) for the test that one composition fits every group
of observations (with a parametric bootstrap), [`power_groups`](@ref)
for its power by simulation, and [`test_proportions`](@ref) for the test
of the observations against a given composition (HMP's Xsc), with
[`power_proportions`](@ref) for its power;
[`DirmnCounts`](@ref) to upload a table once and evaluate it many times
(`Matrix(c)` and `sparse(c)` copy it back);
[`DirmnContext`](@ref) to choose a backend and device; [`backends`](@ref);
[`Communicator`](@ref) and [`set_communicator!`](@ref) for a table split by
observations over several processes (MPI ranks, threads), which
[`fit_dirmn`](@ref), [`loglik_sum`](@ref), [`overdispersion_test`](@ref),
[`fit_mixture`](@ref) and [`fit_dirmn_reg`](@ref) then treat as one.

The library is found through `ENV["DIRMN_LIBRARY_PATH"]` (the file or its
directory) or the standard install locations; see
[`LibDirmn.find_library`](@ref).
"""
module Dirmn

using Libdl
import LinearAlgebra
using LinearAlgebra: Adjoint, Transpose, rank
using Random: AbstractRNG
using SparseArrays
using SparseArrays: nnz
import Statistics
using Statistics: mean, var, cov

export DirmnError, DirmnContext, DirmnCounts, DirMult
export logpdf, loglikelihood, loglik, loglik_rowwise
export loglik_sum, loglik_rowwise_derivatives, fit_dirmn, fit_mle
export backends, default_context, totals, nnz
export DirMultFit, fit_mixture, DirMultMixture, MixtureSelection
export posterior, assignments, aic, bic, laplace, dof, nobs, ncategories
export ncomponents, components, probs, informationmatrix, vcov
export coef, stderror, confint
export overdispersion_test, OverdispersionTest, pvalue
export fit_dirmn_reg, DirmnRegression, predict, wald_test, WaldTest
export test_dirmn_groups, DirmnGroupTests
export converged, iterations, hessian_definite, gradient_norm
export DirMultMixtureModel, DirMultRowwise, simulate, mean, var, cov, sparse
export test_groups, GroupTest, power_groups, GroupPower, test_proportions, ProportionTest
export power_proportions
export Communicator, set_communicator!, rank, nranks

include("LibDirmn.jl")
using .LibDirmn: LibDirmn

include("errors.jl")
include("context.jl")
include("counts.jl")
include("checks.jl")
include("loglik.jl")
include("options.jl")
include("derivatives.jl")
include("fit.jl")
include("fit_stats.jl")
include("mixture.jl")
include("mixture_accessors.jl")
include("overdispersion.jl")
include("regression.jl")
include("regression_groups.jl")
include("counts_copy.jl")
include("communicator.jl")
include("sample.jl")
include("group_test.jl")

function __init__()
    # Contexts cached by a previous session (or precompilation) hold dead
    # pointers; start empty.
    empty!(_DEFAULT_CONTEXTS)
end

end # module Dirmn
