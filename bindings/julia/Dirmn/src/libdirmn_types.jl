# Constants, enums and structs of dirmn.h, mirrored 1:1 (included by LibDirmn.jl;
# test/header.jl checks every one against the header).

# ---------------------------------------------------------------------------
# Constants and types mirrored from dirmn.h
# ---------------------------------------------------------------------------

# The header this package was written against; only the major part has to
# agree with the loaded library (checked in __init__).
const DIRMN_VERSION_MAJOR = 0
const DIRMN_VERSION_MINOR = 3
const DIRMN_VERSION_PATCH = 0
const DIRMN_VERSION_NUMBER =
    DIRMN_VERSION_MAJOR * 10000 + DIRMN_VERSION_MINOR * 100 + DIRMN_VERSION_PATCH

# C enums are int-sized; plain Cint aliases (rather than @enum) let a caller
# pass any value, which the library must then reject, exactly as from C.
const dirmn_status = Cint
const DIRMN_SUCCESS = dirmn_status(0)
const DIRMN_ERROR_NULL_POINTER = dirmn_status(1)
const DIRMN_ERROR_INVALID_ARGUMENT = dirmn_status(2)
const DIRMN_ERROR_INVALID_COUNTS = dirmn_status(3)
const DIRMN_ERROR_INVALID_PARAMETER = dirmn_status(4)
const DIRMN_ERROR_DIMENSION_MISMATCH = dirmn_status(5)
const DIRMN_ERROR_WRONG_CONTEXT = dirmn_status(6)
const DIRMN_ERROR_OUT_OF_MEMORY = dirmn_status(7)
const DIRMN_ERROR_BACKEND_UNAVAILABLE = dirmn_status(8)
const DIRMN_ERROR_DEVICE = dirmn_status(9)
const DIRMN_ERROR_OVERFLOW = dirmn_status(10)
const DIRMN_ERROR_CANCELLED = dirmn_status(11)
const DIRMN_ERROR_NOT_SUPPORTED = dirmn_status(12)
const DIRMN_ERROR_CONTEXT_IN_USE = dirmn_status(13)
const DIRMN_ERROR_COMMUNICATION = dirmn_status(14)
const DIRMN_ERROR_INTERNAL = dirmn_status(99)

const dirmn_backend = Cint
const DIRMN_BACKEND_AUTO = dirmn_backend(0)
const DIRMN_BACKEND_CPU = dirmn_backend(1)
const DIRMN_BACKEND_CUDA = dirmn_backend(2)

const dirmn_precision = Cint
const DIRMN_PRECISION_DOUBLE = dirmn_precision(0)
const DIRMN_PRECISION_FAST = dirmn_precision(1)

const dirmn_dtype = Cint
const DIRMN_INT32 = dirmn_dtype(0)
const DIRMN_INT64 = dirmn_dtype(1)
const DIRMN_FLOAT32 = dirmn_dtype(2)
const DIRMN_FLOAT64 = dirmn_dtype(3)

const dirmn_index_type = Cint
const DIRMN_INDEX_INT32 = dirmn_index_type(0)
const DIRMN_INDEX_INT64 = dirmn_index_type(1)

const dirmn_sparse_format = Cint
const DIRMN_CSR = dirmn_sparse_format(0)
const DIRMN_CSC = dirmn_sparse_format(1)

const dirmn_storage = Cint
const DIRMN_STORAGE_AUTO = dirmn_storage(0)
const DIRMN_STORAGE_DENSE = dirmn_storage(1)
const DIRMN_STORAGE_SPARSE = dirmn_storage(2)

const dirmn_param = Cint
const DIRMN_PARAM_ALPHA = dirmn_param(0)
const DIRMN_PARAM_LOG_ALPHA = dirmn_param(1)

const dirmn_mixture_objective = Cint
const DIRMN_MIXTURE_ML = dirmn_mixture_objective(0)
const DIRMN_MIXTURE_DMN = dirmn_mixture_objective(1)

const dirmn_mixture_init = Cint
const DIRMN_INIT_KMEANS = dirmn_mixture_init(0)
const DIRMN_INIT_KMEANSPP = dirmn_mixture_init(1)
const DIRMN_INIT_SOFT_KMEANS = dirmn_mixture_init(2)
const DIRMN_INIT_MIXED = dirmn_mixture_init(3)

const dirmn_reg_model = Cint
const DIRMN_REG_LOGLINEAR = dirmn_reg_model(0)
const DIRMN_REG_MEAN_PRECISION = dirmn_reg_model(1)

const dirmn_reg_contrast = Cint
const DIRMN_REG_REFERENCE = dirmn_reg_contrast(0)
const DIRMN_REG_SUM_TO_ZERO = dirmn_reg_contrast(1)

const dirmn_group_statistic = Cint
const DIRMN_GROUP_LRT = dirmn_group_statistic(0)
const DIRMN_GROUP_XMCUPO = dirmn_group_statistic(1)
const DIRMN_GROUP_XOC = dirmn_group_statistic(2)

const DIRMN_COUNTS_REAL_VALUED = UInt32(0x1)
const DIRMN_COUNTS_ONE_BASED = UInt32(0x2)
const DIRMN_FULL = UInt32(0x1)
const DIRMN_OUTPUT_DEVICE = UInt32(0x2)
const DIRMN_ASYNC = UInt32(0x4)
const DIRMN_KERNEL = UInt32(0x8)
const DIRMN_PARAMS_DEVICE = UInt32(0x10)
const DIRMN_WEIGHTS_DEVICE = UInt32(0x20)

# dirmn_counts_info's host_steps and unavailable_steps bits.
const DIRMN_STEP_LOGLIK = UInt32(0x01)
const DIRMN_STEP_LOGLIK_ROWWISE = UInt32(0x02)
const DIRMN_STEP_DERIVATIVES_ROWWISE = UInt32(0x04)
const DIRMN_STEP_HISTOGRAMS = UInt32(0x08)
const DIRMN_STEP_MIXTURE_EM = UInt32(0x10)
const DIRMN_STEP_MIXTURE_FITS = UInt32(0x20)
const DIRMN_STEPS_ALL = UInt32(0x3f)

# The most unknowns of a regression's Newton system (dirmn_reg_fit): it is
# solved in the smaller of p x V and the rows with counts.
const DIRMN_REG_MAX_SYSTEM = 8000

# Opaque handles are only ever seen through pointers.
const dirmn_context = Cvoid
const dirmn_counts = Cvoid
const dirmn_mixture = Cvoid
const dirmn_reg = Cvoid
const dirmn_communicator = Cvoid
# C function pointers (make them with @cfunction).
const dirmn_interrupt_fn = Ptr{Cvoid}
const dirmn_progress_fn = Ptr{Cvoid}
# A communicator's callbacks (see dirmn_communicator_callbacks):
# Cint (data::Ptr{Cvoid}, values::Ptr{Int64}, count::Csize_t, device::Cint),
# Cint (data, values::Ptr{Cdouble}, count, device) and
# Cint (data, buffer::Ptr{Cvoid}, bytes::Csize_t, root::Cint, device::Cint).
const dirmn_allreduce_int64_fn = Ptr{Cvoid}
const dirmn_allreduce_double_fn = Ptr{Cvoid}
const dirmn_broadcast_fn = Ptr{Cvoid}

"""
    dirmn_error_location(size, argument, row, column, vector, index, has_value,
                         value, detail, has_integer_value, integer_value)

Mirror of the C struct `dirmn_error_location`: where the last failure was, as
0-based numbers (-1 where a position does not apply). Pass it to
[`dirmn_last_error_location`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_error_location)` (see [`empty_error_location`](@ref)).
`argument` (static storage) and `detail` (valid as `dirmn_last_error`'s
string) are C strings owned by the library: read them with `unsafe_string`
before the next call on the same context. `has_integer_value` is 1 when the
offending value is an integer the caller passed (an Int32 or Int64 count, a
compressed pointer or index entry): `integer_value` then holds it exactly,
and `value` only the nearest double.

The nine-argument form (without `has_integer_value` and `integer_value`, the
fields appended later) sets those two to 0.
"""
struct dirmn_error_location
    size::Csize_t
    argument::Cstring
    row::Int64
    column::Int64
    vector::Int64
    index::Int64
    has_value::Cint
    value::Cdouble
    detail::Cstring
    has_integer_value::Cint
    integer_value::Int64
end

dirmn_error_location(size, argument, row, column, vector, index, has_value, value, detail) =
    dirmn_error_location(size, argument, row, column, vector, index, has_value, value, detail,
                         Cint(0), Int64(0))

"""
    dirmn_communicator_callbacks(size, rank, ranks, allreduce_int64, allreduce_double,
                                 broadcast, data, release)

Mirror of the C struct `dirmn_communicator_callbacks` of
[`dirmn_communicator_create`](@ref): `size` is
`sizeof(dirmn_communicator_callbacks)`, `rank` (0-based) and `ranks` are
`Cint`s, and the four callbacks are C function pointers made with
`@cfunction`: `allreduce_int64` and `allreduce_double` (a
`dirmn_allreduce_int64_fn` and a `dirmn_allreduce_double_fn`: sum
`count` values over the ranks in place, return 0 on success), `broadcast`
(a `dirmn_broadcast_fn`: copy `bytes` bytes of rank `root`'s buffer into
every other rank's) and `release` (`Cvoid (data::Ptr{Cvoid})`, or
`C_NULL`), called once when the communicator and every counts object
attached to it are destroyed. `data` is passed to every callback. The
callbacks must stay callable, and `data` valid, until `release` runs;
a callback must not let a Julia exception unwind into C.
"""
struct dirmn_communicator_callbacks
    size::Csize_t
    rank::Cint
    ranks::Cint
    allreduce_int64::dirmn_allreduce_int64_fn
    allreduce_double::dirmn_allreduce_double_fn
    broadcast::dirmn_broadcast_fn
    data::Ptr{Cvoid}
    release::Ptr{Cvoid}
end

"""
    dirmn_counts_options(size, flags, storage)

Mirror of the C struct `dirmn_counts_options` (same field order and types).
Fill one with [`dirmn_counts_options_init_sized`](@ref) (with its size) through a `Ref`, then build
a modified copy; `size` must stay `sizeof(dirmn_counts_options)`.
"""
struct dirmn_counts_options
    size::Csize_t
    flags::UInt32
    storage::dirmn_storage
end

"""
    dirmn_counts_info(size, rows, cols, nnz, max_count, total, flags, storage,
                      value_bits, backend, device, host_steps, unavailable_steps)

Mirror of the C struct `dirmn_counts_info`. Pass it to
[`dirmn_counts_get_info`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_counts_info)` (see [`empty_counts_info`](@ref)).
"""
struct dirmn_counts_info
    size::Csize_t
    rows::Int64
    cols::Int64
    nnz::Int64
    max_count::Cdouble
    total::Cdouble
    flags::UInt32
    storage::dirmn_storage
    value_bits::Cint
    backend::dirmn_backend
    device::Cint
    host_steps::UInt32
    unavailable_steps::UInt32
end

"""
    dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress,
                      progress_data, flags, hessian_diag)

Mirror of the C struct `dirmn_fit_options`. Fill one with
[`dirmn_fit_options_init_sized`](@ref) (with its size) through a `Ref`. The pointers it holds
(`weights`, `start`, and the output `hessian_diag`, V doubles or `C_NULL`)
must stay valid, e.g. under `GC.@preserve`, for the whole
[`dirmn_fit`](@ref) call.

The seven-argument form (without `flags` and `hessian_diag`, the fields
appended later) sets those two to 0 and `C_NULL`, their defaults.
"""
struct dirmn_fit_options
    size::Csize_t
    tolerance::Cdouble
    max_iterations::Cint
    weights::Ptr{Cdouble}
    start::Ptr{Cdouble}
    progress::dirmn_progress_fn
    progress_data::Ptr{Cvoid}
    flags::UInt32
    hessian_diag::Ptr{Cdouble}
end

dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress, progress_data) =
    dirmn_fit_options(size, tolerance, max_iterations, weights, start, progress, progress_data,
                      UInt32(0), C_NULL)

"""
    dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel,
                     loglik, gradient_norm, precision, iterations,
                     converged, multinomial_limit, zero_columns, hessian_scalar,
                     parameters, observations)

Mirror of the C struct `dirmn_fit_result`: `size` is set by the caller,
`alpha` (and optionally the standard-error arrays) point to caller-owned
arrays of V doubles; the rest is written by [`dirmn_fit`](@ref)
(`hessian_scalar` only when the options ask for `hessian_diag`).
`parameters` is the number of fitted alphas (columns with counts) and
`observations` the rows with counts and a positive weight (their number, or
the sum of their weights when weights are given), written when `size`
covers them.

The twelve- and thirteen-argument forms (without the fields appended later:
`hessian_scalar`, then `parameters` and `observations`) set those to 0.
"""
struct dirmn_fit_result
    size::Csize_t
    alpha::Ptr{Cdouble}
    std_error_alpha::Ptr{Cdouble}
    std_error_log_alpha::Ptr{Cdouble}
    loglik_kernel::Cdouble
    loglik::Cdouble
    gradient_norm::Cdouble
    precision::Cdouble
    iterations::Cint
    converged::Cint
    multinomial_limit::Cint
    zero_columns::Int64
    hessian_scalar::Cdouble
    parameters::Int64
    observations::Cdouble
end

dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel, loglik,
                 gradient_norm, precision, iterations, converged, multinomial_limit,
                 zero_columns, hessian_scalar = 0.0) =
    dirmn_fit_result(size, alpha, std_error_alpha, std_error_log_alpha, loglik_kernel, loglik,
                     gradient_norm, precision, iterations, converged, multinomial_limit,
                     zero_columns, hessian_scalar, Int64(0), 0.0)

"""
    dirmn_mixture_options(size, objective, init, starts, seed, max_iterations,
                          tolerance, weights, progress, progress_data, grow_from,
                          m_step_iterations)

Mirror of the C struct `dirmn_mixture_options`. Fill one with
[`dirmn_mixture_options_init_sized`](@ref) (with its size) through a `Ref` (see
[`empty_mixture_options`](@ref)), then build a modified copy. The pointers it
holds (`weights`, `progress_data`, `grow_from`) must stay valid, e.g. under
`GC.@preserve`, for the whole [`dirmn_mixture_fit`](@ref) call. `progress` is
a `dirmn_progress_fn` made with `@cfunction`; it receives (EM iteration,
log-likelihood, change, `progress_data`) and cancels the fit by returning a
non-zero `Cint`. `grow_from` is `C_NULL` or a fitted mixture (a
`Ptr{dirmn_mixture}`) with k - 1 components on a table of the same rows and
columns: one more start is grown from it. `m_step_iterations` (a `Cint`
>= 1, default 4) is the number of Newton steps each component takes per M
step once it has a warm start: a generalized EM that stops at a stationary
point as the classical EM does (200 or more: every M step fits to
convergence).

The ten- and eleven-argument forms (without the fields appended later:
`grow_from`, then `m_step_iterations`) set those to `C_NULL` and 4, their
defaults.
"""
struct dirmn_mixture_options
    size::Csize_t
    objective::dirmn_mixture_objective
    init::dirmn_mixture_init
    starts::Cint
    seed::UInt64
    max_iterations::Cint
    tolerance::Cdouble
    weights::Ptr{Cdouble}
    progress::dirmn_progress_fn
    progress_data::Ptr{Cvoid}
    grow_from::Ptr{dirmn_mixture}
    m_step_iterations::Cint
end

dirmn_mixture_options(size, objective, init, starts, seed, max_iterations, tolerance, weights,
                      progress, progress_data, grow_from = C_NULL) =
    dirmn_mixture_options(size, objective, init, starts, seed, max_iterations, tolerance,
                          weights, progress, progress_data, grow_from, Cint(4))

"""
    dirmn_mixture_info(size, k, rows, cols, parameters, loglik, objective, aic,
                       bic, laplace, iterations, converged, start, observations)

Mirror of the C struct `dirmn_mixture_info`. Pass it to
[`dirmn_mixture_get_info`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_mixture_info)` (see [`empty_mixture_info`](@ref)).
`observations` (appended later; the thirteen-argument form sets it to 0)
counts the rows as `dirmn_fit_result`'s does: BIC's n.
"""
struct dirmn_mixture_info
    size::Csize_t
    k::Cint
    rows::Int64
    cols::Int64
    parameters::Int64
    loglik::Cdouble
    objective::Cdouble
    aic::Cdouble
    bic::Cdouble
    laplace::Cdouble
    iterations::Cint
    converged::Cint
    start::Cint
    observations::Cdouble
end

dirmn_mixture_info(size, k, rows, cols, parameters, loglik, objective, aic, bic, laplace,
                   iterations, converged, start) =
    dirmn_mixture_info(size, k, rows, cols, parameters, loglik, objective, aic, bic, laplace,
                       iterations, converged, start, 0.0)

"""
    dirmn_overdispersion_result(size, lrt_statistic, lrt_p_value, score_statistic,
                                score_df, score_scale, score_p_value, loglik_dm,
                                loglik_multinomial, precision, categories,
                                observations, converged)

Mirror of the C struct `dirmn_overdispersion_result`, written by
[`dirmn_overdispersion_test`](@ref) (the caller sets `size`; see
[`empty_overdispersion_result`](@ref)): the likelihood-ratio statistic of
the Dirichlet-multinomial against the multinomial and its p-value under the
boundary null 0.5 chi2_0 + 0.5 chi2_1, Kim & Margolin's C(alpha) score
statistic with its scaled chi-square approximation (degrees of freedom,
scale, p-value), both log-likelihoods (log pmf), the fitted precision, the
columns with counts, the observations (as `dirmn_fit_result`'s) and
whether the DM fit converged.
"""
struct dirmn_overdispersion_result
    size::Csize_t
    lrt_statistic::Cdouble
    lrt_p_value::Cdouble
    score_statistic::Cdouble
    score_df::Cdouble
    score_scale::Cdouble
    score_p_value::Cdouble
    loglik_dm::Cdouble
    loglik_multinomial::Cdouble
    precision::Cdouble
    categories::Int64
    observations::Cdouble
    converged::Cint
end

"""
    dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data,
                      model, contrast, reference, log_precision, hold_precision,
                      precision_design, precision_covariates, precision_stride_row,
                      precision_stride_col)

Mirror of the C struct `dirmn_reg_options`. Fill one with
[`dirmn_reg_options_init_sized`](@ref) (with its size) through a `Ref` (see
[`empty_reg_options`](@ref)), then build a modified copy. The pointers it
holds (`weights`, rows doubles or `C_NULL`, and `progress_data`) must stay
valid, e.g. under `GC.@preserve`, for the whole [`dirmn_reg_fit`](@ref)
call. `progress` is a `dirmn_progress_fn` made with `@cfunction`; it
receives (Newton step, log pmf, max-norm of the gradient in beta,
`progress_data`) and cancels the fit by returning a non-zero `Cint`.
`model` is a `dirmn_reg_model` (`DIRMN_REG_LOGLINEAR`, the default, or
`DIRMN_REG_MEAN_PRECISION`), `contrast` a `dirmn_reg_contrast`
(`DIRMN_REG_REFERENCE`, the default, or `DIRMN_REG_SUM_TO_ZERO`) and
`reference` the 0-based reference (or implied) category of a mean/precision
fit (default 0). `log_precision` (mean/precision) is `NaN` (the default) to
fit log φ, or a finite value that holds it there (DRIMSeq's dmFit at a
given precision: p (V - 1) free coefficients); `hold_precision`
([`dirmn_reg_test_groups`](@ref), mean/precision) is 1 to fit each group's
null model at its full fit's precision (DRIMSeq's dmTest), 0 (the default)
to give each fit its own. `precision_design` ([`dirmn_reg_fit`](@ref),
mean/precision) points to z, the covariates of the log precision
(log φ_b = z_b ⋅ γ), rows × `precision_covariates` (q ≥ 1) doubles with
entry (b, j) at `precision_design[b * precision_stride_row + j *
precision_stride_col]` (0-based), valid for the call as `weights`;
`C_NULL` (the default) fits one precision for every row. It is refused
beside a held `log_precision`, by a log-linear fit and by
[`dirmn_reg_test_groups`](@ref).

The six-, nine- and eleven-argument forms (without the fields appended
later) set those to their defaults: `DIRMN_REG_LOGLINEAR`,
`DIRMN_REG_REFERENCE`, 0, `NaN`, 0, `C_NULL` and 0, 0, 0.
"""
struct dirmn_reg_options
    size::Csize_t
    tolerance::Cdouble
    max_iterations::Cint
    weights::Ptr{Cdouble}
    progress::dirmn_progress_fn
    progress_data::Ptr{Cvoid}
    model::dirmn_reg_model
    contrast::dirmn_reg_contrast
    reference::Int64
    log_precision::Cdouble
    hold_precision::Cint
    precision_design::Ptr{Cdouble}
    precision_covariates::Int64
    precision_stride_row::Int64
    precision_stride_col::Int64
end

dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data) =
    dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data,
                      DIRMN_REG_LOGLINEAR, DIRMN_REG_REFERENCE, Int64(0))
dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data, model,
                  contrast, reference) =
    dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data, model,
                      contrast, reference, NaN, Cint(0))
dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data, model,
                  contrast, reference, log_precision, hold_precision) =
    dirmn_reg_options(size, tolerance, max_iterations, weights, progress, progress_data, model,
                      contrast, reference, log_precision, hold_precision, C_NULL, Int64(0),
                      Int64(0), Int64(0))

"""
    dirmn_reg_info(size, rows, covariates, categories, parameters, loglik, aic,
                   bic, observations, gradient_norm, iterations, converged,
                   hessian_definite, model, contrast, reference, precision_covariates,
                   multinomial_limit)

Mirror of the C struct `dirmn_reg_info`. Pass it to
[`dirmn_reg_get_info`](@ref) through a `Ref` whose `size` field is
`sizeof(dirmn_reg_info)` (see [`empty_reg_info`](@ref)). `parameters` is the
number of free coefficients: p V (log-linear) or p (V - 1) + q
(mean/precision). `model`, `contrast` and `reference` (0-based) are the
fit's; `precision_covariates` is q, the number of the precision's
coefficients γ ([`dirmn_reg_get_precision`](@ref)): the columns of the
options' `precision_design`, 1 for a mean/precision fit without one, 0
where its precision was held (`log_precision` of the options) and for a
log-linear one. `multinomial_limit` is 1 where a mean/precision fit with one
precision found no overdispersion: the likelihood rises toward φ → ∞ (the
multinomial logit model) and `converged` is 0.

The thirteen-argument form (without the fields appended later) sets those
to 0.
"""
struct dirmn_reg_info
    size::Csize_t
    rows::Int64
    covariates::Int64
    categories::Int64
    parameters::Int64
    loglik::Cdouble
    aic::Cdouble
    bic::Cdouble
    observations::Cdouble
    gradient_norm::Cdouble
    iterations::Cint
    converged::Cint
    hessian_definite::Cint
    model::dirmn_reg_model
    contrast::dirmn_reg_contrast
    reference::Int64
    precision_covariates::Int64
    multinomial_limit::Cint
end

dirmn_reg_info(size, rows, covariates, categories, parameters, loglik, aic, bic, observations,
               gradient_norm, iterations, converged, hessian_definite) =
    dirmn_reg_info(size, rows, covariates, categories, parameters, loglik, aic, bic,
                   observations, gradient_norm, iterations, converged, hessian_definite,
                   DIRMN_REG_LOGLINEAR, DIRMN_REG_REFERENCE, Int64(0), Int64(0), Cint(0))

"""
    dirmn_reg_groups_result(size, loglik_full, loglik_null, statistic, df, p_value,
                            p_adjusted, status, converged, categories, tested)

Mirror of the C struct `dirmn_reg_groups_result`, written by
[`dirmn_reg_test_groups`](@ref) (the caller sets `size`; see
[`empty_reg_groups_result`](@ref)). Every pointer is an array of `groups`
entries the caller allocates (and keeps alive, e.g. under `GC.@preserve`,
for the call), or `C_NULL` for a result not wanted: per group the
log-likelihoods of the full and the null regression, the likelihood-ratio
statistic, its degrees of freedom, its p-value and the Benjamini-Hochberg
adjusted p-value (`Cdouble`), the group's status (`Int32`: `DIRMN_SUCCESS`
where tested, else why not), whether both fits converged (`Int32`) and the
group's columns with counts (`Int64`). `tested` is written: the number of
groups tested.
"""
struct dirmn_reg_groups_result
    size::Csize_t
    loglik_full::Ptr{Cdouble}
    loglik_null::Ptr{Cdouble}
    statistic::Ptr{Cdouble}
    df::Ptr{Cdouble}
    p_value::Ptr{Cdouble}
    p_adjusted::Ptr{Cdouble}
    status::Ptr{Int32}
    converged::Ptr{Int32}
    categories::Ptr{Int64}
    tested::Int64
end

"""
    dirmn_sample_options(size, seed, component, mixture_weights, component_out, storage,
                         first_row)

Mirror of the C struct `dirmn_sample_options`. Fill one with
[`dirmn_sample_options_init_sized`](@ref) (with its size) through a `Ref`
(see [`empty_sample_options`](@ref)), then build a modified copy. `seed`
fixes the draws; with k > 1 parameter vectors `component` is `C_NULL` (each
row's component drawn from `mixture_weights`: k doubles, or `C_NULL` for
equal weights) or rows `Int64` entries in 0 .. k - 1, and `component_out`
`C_NULL` or rows `Int64` entries that receive each row's component (0-based);
`storage` is the new counts object's `dirmn_storage` request. The arrays
must stay valid, e.g. under `GC.@preserve`, for the whole
[`dirmn_sample`](@ref) call; for [`dirmn_sample_rowwise`](@ref) the three
pointers must be `C_NULL`. `first_row` (`Int64`, ≥ 0) makes the call's row
b row `first_row + b` (0-based) of the table the seed gives (its stream, and
its component where drawn from `mixture_weights`), so that calls drawing
blocks of rows (the ranks of a split table) make, together, the rows of one
call.

The six-argument form (without `first_row`, the field appended later) sets
it to 0, its default.
"""
struct dirmn_sample_options
    size::Csize_t
    seed::UInt64
    component::Ptr{Int64}
    mixture_weights::Ptr{Cdouble}
    component_out::Ptr{Int64}
    storage::dirmn_storage
    first_row::Int64
end

dirmn_sample_options(size, seed, component, mixture_weights, component_out, storage) =
    dirmn_sample_options(size, seed, component, mixture_weights, component_out, storage,
                         Int64(0))

"""
    dirmn_group_test_options(size, bootstrap, seed, tolerance, max_iterations, statistic)

Mirror of the C struct `dirmn_group_test_options` of
[`dirmn_test_groups`](@ref). Fill one with
[`dirmn_group_test_options_init_sized`](@ref) (with its size) through a
`Ref` (see [`empty_group_test_options`](@ref)), then build a modified copy:
`bootstrap` (`Int64`, the parametric bootstrap's tables B, 0 for none),
`seed` (`UInt64`, the bootstrap tables' seed), and every fit's `tolerance`
and `max_iterations` (as [`dirmn_fit_options`](@ref)'s), and the
`statistic` the groups are compared by (a `dirmn_group_statistic`:
`DIRMN_GROUP_LRT`, the default, `DIRMN_GROUP_XMCUPO` or `DIRMN_GROUP_XOC`).
"""
struct dirmn_group_test_options
    size::Csize_t
    bootstrap::Int64
    seed::UInt64
    tolerance::Cdouble
    max_iterations::Cint
    statistic::dirmn_group_statistic
end

"""
    dirmn_group_test_result(size, statistic, df, p_value, p_value_bootstrap, bootstrap,
                            loglik_null, loglik_groups, groups, categories, converged)

Mirror of the C struct `dirmn_group_test_result`, written by
[`dirmn_test_groups`](@ref) (the caller sets `size`; see
[`empty_group_test_result`](@ref)): the statistic the options ask for
(the likelihood ratio 2 (loglik_groups - loglik_null) on (G - 1) P degrees
of freedom by default; HMP's Xmcupo on (G - 1)(P - 1); HMP's Xoc, the
likelihood ratio against the shared-precision fit, on G - 1), its degrees
of freedom and chi-square p-value, the parametric bootstrap's p-value (1
without one) and its number of tables, both log-likelihoods (log pmf; the
null's is the shared-precision fit's for Xoc), G (the groups with counts),
P (the columns with counts) and whether every fit of the observed table
converged.
"""
struct dirmn_group_test_result
    size::Csize_t
    statistic::Cdouble
    df::Cdouble
    p_value::Cdouble
    p_value_bootstrap::Cdouble
    bootstrap::Int64
    loglik_null::Cdouble
    loglik_groups::Cdouble
    groups::Int64
    categories::Int64
    converged::Cint
end

"""
    dirmn_proportion_test_result(size, statistic, df, p_value, theta, rows, categories)

Mirror of the C struct `dirmn_proportion_test_result`, written by
[`dirmn_test_proportions`](@ref) (the caller sets `size`; see
[`empty_proportion_test_result`](@ref)): HMP's Xsc statistic of the rows'
pooled proportions against the given ones (`+Inf` where a column with
counts has proportion 0), its degrees of freedom (categories - 1) and
chi-square p-value, Weir's method-of-moments overdispersion `theta` of the
rows, the rows with counts and the columns with a positive proportion.
"""
struct dirmn_proportion_test_result
    size::Csize_t
    statistic::Cdouble
    df::Cdouble
    p_value::Cdouble
    theta::Cdouble
    rows::Int64
    categories::Int64
end

"""
    dirmn_power_options(size, tables, level, seed, tolerance, max_iterations, statistic)

Mirror of the C struct `dirmn_power_options` of [`dirmn_power_groups`](@ref)
and [`dirmn_power_proportions`](@ref).
Fill one with [`dirmn_power_options_init_sized`](@ref) (with its size)
through a `Ref` (see [`empty_power_options`](@ref)), then build a modified
copy: `tables` (`Int64`, the tables simulated), `level` (the test's level,
in (0, 1)), `seed` (`UInt64`; table t is drawn from stream t of it), and
every fit's `tolerance` and `max_iterations` (as
[`dirmn_fit_options`](@ref)'s), and the `statistic` of the test simulated
(a `dirmn_group_statistic`; `DIRMN_GROUP_LRT` by default). The last three
are checked but do not apply to `dirmn_power_proportions` (no fit enters
its test).
"""
struct dirmn_power_options
    size::Csize_t
    tables::Int64
    level::Cdouble
    seed::UInt64
    tolerance::Cdouble
    max_iterations::Cint
    statistic::dirmn_group_statistic
end

"""
    dirmn_power_result(size, power, std_error, tables, rejected, mean_statistic)

Mirror of the C struct `dirmn_power_result`, written by
[`dirmn_power_groups`](@ref) and [`dirmn_power_proportions`](@ref) (the
caller sets `size`; see [`empty_power_result`](@ref)): the share of the
simulated tables rejected, its binomial standard error, the tables
simulated and rejected, and the test statistic's mean over the tables.
"""
struct dirmn_power_result
    size::Csize_t
    power::Cdouble
    std_error::Cdouble
    tables::Int64
    rejected::Int64
    mean_statistic::Cdouble
end

"""
    empty_counts_options() -> dirmn_counts_options

A zeroed options struct with only `size` set, ready for
[`dirmn_counts_options_init_sized`](@ref).
"""
empty_counts_options() =
    dirmn_counts_options(Csize_t(sizeof(dirmn_counts_options)), UInt32(0), DIRMN_STORAGE_AUTO)

"""
    empty_counts_info() -> dirmn_counts_info

A zeroed info struct with `size` set, as [`dirmn_counts_get_info`](@ref)
requires.
"""
empty_counts_info() = dirmn_counts_info(Csize_t(sizeof(dirmn_counts_info)), 0, 0, 0, 0.0, 0.0,
                                        UInt32(0), DIRMN_STORAGE_AUTO, Cint(0),
                                        DIRMN_BACKEND_AUTO, Cint(0), UInt32(0), UInt32(0))

"""
    empty_error_location() -> dirmn_error_location

A location struct with `size` set, null strings and every position -1, as
[`dirmn_last_error_location`](@ref) requires.
"""
empty_error_location() =
    dirmn_error_location(Csize_t(sizeof(dirmn_error_location)), Cstring(C_NULL), -1, -1, -1, -1,
                         Cint(0), 0.0, Cstring(C_NULL), Cint(0), Int64(0))

"""
    empty_mixture_options() -> dirmn_mixture_options

A zeroed options struct with only `size` set, ready for
[`dirmn_mixture_options_init`](@ref).
"""
empty_mixture_options() =
    dirmn_mixture_options(Csize_t(sizeof(dirmn_mixture_options)), DIRMN_MIXTURE_ML,
                          DIRMN_INIT_KMEANS, Cint(0), UInt64(0), Cint(0), 0.0, C_NULL, C_NULL,
                          C_NULL, C_NULL, Cint(0))

"""
    empty_mixture_info() -> dirmn_mixture_info

A zeroed info struct with `size` set, as [`dirmn_mixture_get_info`](@ref)
requires.
"""
empty_mixture_info() =
    dirmn_mixture_info(Csize_t(sizeof(dirmn_mixture_info)), Cint(0), 0, 0, 0, 0.0, 0.0, 0.0,
                       0.0, 0.0, Cint(0), Cint(0), Cint(0), 0.0)

"""
    empty_overdispersion_result() -> dirmn_overdispersion_result

A zeroed result struct with `size` set, as
[`dirmn_overdispersion_test`](@ref) requires.
"""
empty_overdispersion_result() =
    dirmn_overdispersion_result(Csize_t(sizeof(dirmn_overdispersion_result)), 0.0, 0.0, 0.0,
                                0.0, 0.0, 0.0, 0.0, 0.0, 0.0, Int64(0), 0.0, Cint(0))


"""
    empty_reg_options() -> dirmn_reg_options

A zeroed options struct with only `size` set, ready for
[`dirmn_reg_options_init_sized`](@ref).
"""
empty_reg_options() =
    dirmn_reg_options(Csize_t(sizeof(dirmn_reg_options)), 0.0, Cint(0), C_NULL, C_NULL, C_NULL,
                      DIRMN_REG_LOGLINEAR, DIRMN_REG_REFERENCE, Int64(0), 0.0, Cint(0), C_NULL,
                      Int64(0), Int64(0), Int64(0))

"""
    empty_reg_info() -> dirmn_reg_info

A zeroed info struct with `size` set, as [`dirmn_reg_get_info`](@ref)
requires.
"""
empty_reg_info() =
    dirmn_reg_info(Csize_t(sizeof(dirmn_reg_info)), Int64(0), Int64(0), Int64(0), Int64(0), 0.0,
                   0.0, 0.0, 0.0, 0.0, Cint(0), Cint(0), Cint(0), DIRMN_REG_LOGLINEAR,
                   DIRMN_REG_REFERENCE, Int64(0), Int64(0), Cint(0))

"""
    empty_reg_groups_result() -> dirmn_reg_groups_result

A result struct with `size` set, every array `C_NULL` and `tested` 0, as
[`dirmn_reg_test_groups`](@ref) requires (set the arrays wanted in a copy).
"""
empty_reg_groups_result() =
    dirmn_reg_groups_result(Csize_t(sizeof(dirmn_reg_groups_result)), C_NULL, C_NULL, C_NULL,
                            C_NULL, C_NULL, C_NULL, C_NULL, C_NULL, C_NULL, Int64(0))

"""
    empty_sample_options() -> dirmn_sample_options

A zeroed options struct with only `size` set, ready for
[`dirmn_sample_options_init_sized`](@ref).
"""
empty_sample_options() =
    dirmn_sample_options(Csize_t(sizeof(dirmn_sample_options)), UInt64(0), C_NULL, C_NULL,
                         C_NULL, DIRMN_STORAGE_AUTO, Int64(0))

"""
    empty_group_test_options() -> dirmn_group_test_options

A zeroed options struct with only `size` set, ready for
[`dirmn_group_test_options_init_sized`](@ref).
"""
empty_group_test_options() =
    dirmn_group_test_options(Csize_t(sizeof(dirmn_group_test_options)), Int64(0), UInt64(0),
                             0.0, Cint(0), DIRMN_GROUP_LRT)

"""
    empty_group_test_result() -> dirmn_group_test_result

A zeroed result struct with `size` set, as [`dirmn_test_groups`](@ref)
requires.
"""
empty_group_test_result() =
    dirmn_group_test_result(Csize_t(sizeof(dirmn_group_test_result)), 0.0, 0.0, 0.0, 0.0,
                            Int64(0), 0.0, 0.0, Int64(0), Int64(0), Cint(0))

"""
    empty_proportion_test_result() -> dirmn_proportion_test_result

A zeroed result struct with `size` set, as [`dirmn_test_proportions`](@ref)
requires.
"""
empty_proportion_test_result() =
    dirmn_proportion_test_result(Csize_t(sizeof(dirmn_proportion_test_result)), 0.0, 0.0, 0.0,
                                 0.0, Int64(0), Int64(0))

"""
    empty_power_options() -> dirmn_power_options

A zeroed options struct with only `size` set, ready for
[`dirmn_power_options_init_sized`](@ref).
"""
empty_power_options() =
    dirmn_power_options(Csize_t(sizeof(dirmn_power_options)), Int64(0), 0.0, UInt64(0), 0.0,
                        Cint(0), DIRMN_GROUP_LRT)

"""
    empty_power_result() -> dirmn_power_result

A zeroed result struct with `size` set, as [`dirmn_power_groups`](@ref)
and [`dirmn_power_proportions`](@ref) require.
"""
empty_power_result() =
    dirmn_power_result(Csize_t(sizeof(dirmn_power_result)), 0.0, 0.0, Int64(0), Int64(0), 0.0)
