"""Dirichlet-multinomial regression: covariates -> composition (``dirmn_reg_*``).

Row b of the table, with covariates x_b (a row of the design matrix, p
values), is DM with ``beta`` a p × V matrix of coefficients and, by the
``parametrization``,

    "loglinear"       alpha_bv = exp(x_b . beta_v),    v = 0 .. V - 1,

every category with its own p coefficients (MGLM's parametrisation; alpha
is not normalised, so all p V coefficients are identified), or

    "meanprecision"   alpha_bv = phi_b softmax(x_b beta)_v,   phi_b = exp(z_b . gamma),

the proportions a softmax of the linear predictors and the precision phi_b
(the sum of row b's alpha) log-linear in the row's precision covariates z_b
(``precision_design``, q values: betareg's and brms's precision formula; by
default one precision for every row, z_b = 1), DRIMSeq's and brms's
parametrisation; each covariate's row of beta is identified by a reference
category whose coefficients are 0 (``contrast="reference"``) or by summing
to 0 (``contrast="sum"``), p (V - 1) + q free coefficients. The library
maximises the likelihood by safeguarded Newton steps in the free
coefficients, from the shared-alpha fit regressed on the design.
"""

import ctypes
import math
import warnings
from typing import NamedTuple

import numpy as np

from . import _capi as C
from ._arrays import float64_matrix, float64_vector
from ._callbacks import Pending, progress_function
from ._handles import Closable, Handle, calling
from ._options import reg_options
from .context import _choice
from .counts import _is_frame, _is_sparse, counts_for
from .errors import (ConvergenceWarning, DimensionMismatchError, InvalidArgumentError,
                     NotSupportedError, check, invalid)
from .sample import convert, draw, model_alpha, simulate_tables, sizes_array

_KINDS = ("alpha", "proportion")
_PARAMETRIZATIONS = {"loglinear": C.DIRMN_REG_LOGLINEAR,
                     "meanprecision": C.DIRMN_REG_MEAN_PRECISION}
_CONTRASTS = {"reference": C.DIRMN_REG_REFERENCE, "sum": C.DIRMN_REG_SUM_TO_ZERO}

#: The most free coefficients (``parameters``: p V, or p (V - 1) + q for
#: the mean/precision model) whose covariance a :class:`RegressionResult`
#: keeps (:meth:`RegressionResult.cov_params`): their number squared
#: doubles, 200 MB at 5000. Above it no matrix is copied out of the
#: library; the standard errors (``bse``) and the Wald tests
#: (:meth:`RegressionResult.wald_test`) are the library's
#: (``dirmn_reg_get_std_errors``, ``dirmn_reg_wald_test``) for any size. The
#: R and Julia packages keep it up to the same size.
REG_VCOV_MAX_COEFFICIENTS = 5000


class WaldTest(NamedTuple):
    """A Wald test that one covariate has no effect on any category.

    Unpacks as ``statistic, df, pvalue``.

    Attributes
    ----------
    statistic : float
        ``b' S^-1 b``: b the covariate's free coefficients (V; V - 1 for
        the mean/precision model), S their covariance.
    df : float
        Their number, the degrees of freedom of its chi-square.
    pvalue : float
        ``P(chi2_df >= statistic)``.
    """

    statistic: float
    df: float
    pvalue: float


def _design(design, what="design"):
    """A design matrix as ``(float64 array, row stride, col stride, names)``.

    ``names`` are the columns of a DataFrame-like design, else None. Arrays
    of float64 are read in place (any order, any positive strides).
    """
    names = None
    if _is_frame(design):
        names = [str(n) for n in design.columns]
        design = design.to_numpy()
    elif _is_sparse(design):
        design = design.toarray()
    x, rs, cs = float64_matrix(design, what)
    return x, rs, cs, names


def _matched(frame, names, what, kind):
    """A DataFrame-like's columns ``names``, in that order, as an array; other
    input as it is (its columns are taken in the fit's order)."""
    if not _is_frame(frame):
        return frame
    cols = [str(n) for n in frame.columns]
    missing = [n for n in names if n not in cols]
    if missing:
        raise invalid(InvalidArgumentError, "dirmn: %s lacks the %s(s) %s"
                      % (what, kind, ", ".join(map(repr, missing))), argument=what)
    return np.asarray(frame.to_numpy())[:, [cols.index(n) for n in names]]


def _precision_design(z, rows):
    """The precision's design as ``(float64 array, row stride, col stride, names)``.

    The library takes its rows from the design's ``rows``, so another number
    here would be read past its end: refused before the call.
    """
    z, rs, cs, names = _design(z, "precision_design")
    if z.shape[0] != rows:
        raise invalid(DimensionMismatchError, "dirmn: precision_design has %d rows; the "
                      "design has %d" % (z.shape[0], rows), argument="precision_design")
    if z.shape[1] < 1:
        raise invalid(InvalidArgumentError, "dirmn: precision_design has no columns (an "
                      "intercept is a column of ones)", argument="precision_design")
    return z, rs, cs, names


def _names(given, n, prefix, what):
    if given is None:
        return ["%s%d" % (prefix, i) for i in range(n)]
    names = [str(s) for s in given]
    if len(names) != n:
        raise invalid(DimensionMismatchError, "dirmn: %s has %d entries for %d" % (
            what, len(names), n), argument=what)
    return names


def _pd(a):
    return a.ctypes.data_as(C._pd)


def _read(ptr, precision_design=False):
    """Every value of a fitted regression, copied out (under its context's lock).

    The covariance only up to :data:`REG_VCOV_MAX_COEFFICIENTS` coefficients
    (``_cov`` None above it); the standard errors and Wald tests from the
    library's own getters, for any size. With a ``precision_design`` the
    precision's coefficients are arrays (q of them); without one, floats.
    """
    i = C.new(C.dirmn_reg_info)
    check(C.dirmn_reg_get_info(ptr, ctypes.byref(i)), None)
    p, V = int(i.covariates), int(i.categories)
    P = int(i.parameters)
    mp = i.model == C.DIRMN_REG_MEAN_PRECISION
    params = np.empty((p, V))
    check(C.dirmn_reg_get_coef(ptr, _pd(params), V, 1), None)
    bse = np.full((p, V), np.nan)
    cov = np.full((P, P), np.nan) if P <= REG_VCOV_MAX_COEFFICIENTS else None
    wald = np.full((p, 3), np.nan)
    if i.hessian_definite:
        check(C.dirmn_reg_get_std_errors(ptr, _pd(bse), V, 1), None)
        if cov is not None:
            check(C.dirmn_reg_get_vcov(ptr, _pd(cov), P), None)
        s, df, pv = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
        for k in range(p):
            try:
                check(C.dirmn_reg_wald_test(ptr, k, ctypes.byref(s), ctypes.byref(df),
                                            ctypes.byref(pv)), None)
            except NotSupportedError:   # this covariate's block is not positive definite
                continue
            wald[k] = (s.value, df.value, pv.value)
    # The model's own fields: None where they do not apply (log-linear).
    model = {"parametrization": "loglinear", "contrast": None, "reference": None,
             "precision": None, "log_precision": None, "std_error_log_precision": None}
    if mp:
        q = max(int(i.precision_covariates), 1)
        g, gse = np.empty(q), np.empty(q)
        check(C.dirmn_reg_get_precision(ptr, _pd(g), _pd(gse)), None)
        if not i.hessian_definite:
            gse[:] = math.nan
        model.update(parametrization="meanprecision",
                     contrast="sum" if i.contrast == C.DIRMN_REG_SUM_TO_ZERO else "reference",
                     reference=int(i.reference))
        if precision_design:
            # Each row has its own precision: the caller fills ``precision``
            # from the fitted rows' z.
            model.update(log_precision=g, std_error_log_precision=gse)
        else:
            model.update(precision=math.exp(float(g[0])), log_precision=float(g[0]),
                         std_error_log_precision=float(gse[0]))
    return dict(params=params, bse=bse, _cov=cov, _wald=wald, llf=i.loglik, loglik=i.loglik,
                aic=i.aic, bic=i.bic, nobs=i.observations, df_model=P, parameters=P,
                rows=int(i.rows), gradient_norm=i.gradient_norm,
                iterations=int(i.iterations), converged=bool(i.converged),
                multinomial_limit=bool(i.multinomial_limit),
                hessian_definite=bool(i.hessian_definite), **model)


def _two_sided(z):
    """Two-sided normal p-values of z statistics (NaN stays NaN)."""
    return np.vectorize(math.erfc, otypes=[float])(np.abs(z) / math.sqrt(2.0))


def _fmt(v, width):
    """A number right-aligned in ``width`` characters, at least one space before it."""
    if not math.isfinite(v):
        text = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    elif v == 0 or 1e-3 <= abs(v) < 1e4:
        text = "%.4f" % v
    else:
        text = "%.4g" % v
    return " %*s" % (width - 1, text)


def _pvalue_text(p, width):
    if not math.isfinite(p):
        return " %*s" % (width - 1, "nan")
    return " %*s" % (width - 1, "<1e-16" if p < 1e-16 else ("%.3g" % p if p < 1e-3
                                                             else "%.4f" % p))


class RegressionResult(Closable):
    """A fitted Dirichlet-multinomial regression (see :func:`regression`).

    Names follow statsmodels' results (``params``, ``bse``, ``llf``,
    ``cov_params()``, ``summary()`` ...), with the package's own ``loglik``
    beside ``llf``.

    Attributes
    ----------
    params : numpy.ndarray
        p × V: the coefficient of covariate i for category v in ``[i, v]``;
        ``alpha_bv = exp(design[b] @ params[:, v])`` (log-linear), or
        ``alpha_b = precision * softmax(design[b] @ params)``
        (mean/precision: the reference category's column 0, or with
        ``contrast="sum"`` minus the sum of the others').
    bse : numpy.ndarray
        p × V standard errors (square roots of the covariance's diagonal,
        from the library, for any size); 0 for a reference category's
        coefficients, which are fixed; NaN where ``hessian_definite`` is
        False.
    llf, loglik : float
        The maximised log pmf (multinomial coefficients included), weighted
        by the row weights.
    aic, bic : float
        ``-2 loglik + 2 parameters`` and ``-2 loglik + parameters log(nobs)``.
    nobs : float
        Rows with counts and a positive weight (with weights, their sum).
    df_model, parameters : int
        The free coefficients fitted: p V (log-linear), p (V - 1) + q
        (mean/precision: the betas of V - 1 categories and the q
        coefficients of the log precision, q = 1 without a
        ``precision_design``).
    parametrization : str
        ``"loglinear"`` or ``"meanprecision"``.
    contrast : str or None
        ``"reference"`` or ``"sum"`` (mean/precision); None (log-linear).
    reference : int or None
        The 0-based reference category (with ``contrast="sum"``, the
        implied one) of a mean/precision fit; None (log-linear).
    precision : float or numpy.ndarray or None
        phi, the sum of every row's alpha, ``exp(log_precision)``
        (mean/precision); with a ``precision_design`` each fitted row's own,
        ``exp(precision_design @ log_precision)`` (``rows`` entries: on
        split counts, this rank's rows'); None (log-linear, whose rows' sums
        differ).
    log_precision, std_error_log_precision : float or numpy.ndarray or None
        gamma = log phi and its standard error (``dirmn_reg_get_precision``;
        NaN where ``hessian_definite`` is False); with a
        ``precision_design``, the q coefficients gamma of ``log phi_b = z_b
        @ gamma`` and theirs (arrays, in the design's column order); None
        (log-linear).
    precision_covariate_names : list of str or None
        The q columns of ``precision_design``: a DataFrame's column names,
        else "z0", "z1" ...; None without one.
    rows : int
        Rows of the fitted table (on counts split over a
        :class:`~dirmn.Communicator`, this rank's rows; ``nobs`` and the
        fit are the whole table's).
    gradient_norm : float
        Max-norm of the log-likelihood's gradient in beta at the result.
    iterations : int
        Newton steps taken.
    converged : bool
    multinomial_limit : bool
        Mean/precision with one precision: the table shows no
        overdispersion, the likelihood rises toward phi -> infinity (the
        multinomial logit model, which ``params`` approach); ``converged``
        is then False.
    hessian_definite : bool
        Whether the Hessian is negative definite at the result (a strict
        local maximum); without it there is no covariance: ``bse``,
        :meth:`cov_params` and the Wald tests are NaN.

        The covariance matrix is kept only up to
        :data:`REG_VCOV_MAX_COEFFICIENTS` (5000) free coefficients; above it
        :meth:`cov_params` raises, and ``bse``, :attr:`zvalues`,
        :attr:`pvalues`, :meth:`wald_test` and :meth:`summary` (which do not
        need it) work for any size.
    covariate_names : list of str
        The p covariates: a DataFrame design's columns, ``covariate_names``
        given to :func:`regression`, else "x0", "x1" ...
    param_names : list of str
        The free coefficients' names in :meth:`cov_params`' order (R's
        ``vcov`` names): "<category>:<covariate>", then (mean/precision) the
        log precision's, "precision:<name>" for each precision covariate, or
        "precision:const" without a ``precision_design`` (its z_b = 1 is an
        intercept).
    category_names : list of str
        The V categories: the column names the counts carry (DataFrame,
        AnnData, :class:`~dirmn.Counts`), else "v0", "v1" ...

    Notes
    -----
    Every value is copied out when the fit returns; the library's object is
    kept only for :meth:`predict` (and :meth:`simulate`, which predicts).
    ``close()`` (or a ``with`` block) frees it, as does garbage collection;
    the other values stay. The fitted design (and precision design) and row
    totals are kept for :meth:`simulate`.
    """

    def __init__(self, ptr, context, fields):
        self._context = context
        self._handle = Handle(self, ptr, C.dirmn_reg_destroy, "regression", context._lock)
        self.__dict__.update(fields)

    @property
    def context(self):
        """Context: the context that fitted the regression."""
        return self._context

    def _fixed(self):
        """p × V: True for the coefficients fixed at 0 (a reference category's)."""
        fixed = np.zeros(self.params.shape, dtype=bool)
        if self.contrast == "reference":
            fixed[:, self.reference] = True
        return fixed

    @property
    def zvalues(self):
        """numpy.ndarray: p × V Wald z statistics, ``params / bse`` (NaN for a
        reference category's coefficients, which are fixed)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            z = self.params / self.bse
        z[self._fixed()] = np.nan
        return z

    tvalues = zvalues

    @property
    def pvalues(self):
        """numpy.ndarray: p × V two-sided normal p-values of :attr:`zvalues`."""
        return _two_sided(self.zvalues)

    @property
    def zvalues_log_precision(self):
        """float or numpy.ndarray or None: the Wald z statistics of the log
        precision's coefficients, ``log_precision / std_error_log_precision``
        (an array with a ``precision_design``); None (log-linear)."""
        if self.log_precision is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.asarray(self.log_precision) / np.asarray(self.std_error_log_precision)
        return z if self._has_precision_design else float(z)

    @property
    def pvalues_log_precision(self):
        """float or numpy.ndarray or None: two-sided normal p-values of
        :attr:`zvalues_log_precision` (H0: gamma_j = 0; a slope's is the test
        that its covariate leaves the precision unchanged); None (log-linear)."""
        z = self.zvalues_log_precision
        if z is None:
            return None
        p = _two_sided(np.asarray(z))
        return p if self._has_precision_design else float(p)

    @property
    def param_names(self):
        """list of str: the free coefficients' names, in :meth:`cov_params`' order."""
        cats = range(self.params.shape[1])
        if self.parametrization == "meanprecision":
            cats = [v for v in cats if v != self.reference]
        names = ["%s:%s" % (self.category_names[v], c) for v in cats
                 for c in self.covariate_names]
        if self.parametrization == "meanprecision":
            names += ["precision:%s" % z for z in (self.precision_covariate_names or ["const"])]
        return names

    def cov_params(self):
        """The covariance of the free coefficients: the negative inverse Hessian.

        Returns
        -------
        numpy.ndarray
            ``parameters`` × ``parameters``, named by :attr:`param_names`.
            Log-linear: in the order of vec(params), coefficient (i, v) at
            index ``v * p + i``, i.e. ``params.ravel(order="F")``.
            Mean/precision: vec(params) without the reference (or implied)
            category's column, then the log precision's q coefficients last,
            i.e. ``np.append(np.delete(params, reference,
            axis=1).ravel(order="F"), log_precision)``. NaN where
            ``hessian_definite`` is False.

        Raises
        ------
        NotSupportedError
            ``parameters`` is above :data:`REG_VCOV_MAX_COEFFICIENTS`
            (5000): the matrix is not kept (``bse`` and :meth:`wald_test`
            are).
        """
        if self._cov is None:
            P = self.parameters
            raise invalid(NotSupportedError, "dirmn: the covariance of the %d coefficients is "
                          "not kept above %d coefficients (REG_VCOV_MAX_COEFFICIENTS: it would "
                          "be %d x %d doubles, %.3g GB); the standard errors (bse) and Wald "
                          "tests (wald_test) are available" % (
                              P, REG_VCOV_MAX_COEFFICIENTS, P, P, 8e-9 * P * P))
        return self._cov.copy()

    def _covariate_index(self, covariate):
        p = self.params.shape[0]
        if isinstance(covariate, str):
            try:
                return self.covariate_names.index(covariate)
            except ValueError:
                raise invalid(InvalidArgumentError, "dirmn: no covariate named %r (the "
                              "covariates are %s)" % (covariate, ", ".join(
                                  self.covariate_names)), argument="covariate") from None
        if isinstance(covariate, (bool, np.bool_)) or \
                not isinstance(covariate, (int, np.integer)) or not 0 <= covariate < p:
            raise invalid(InvalidArgumentError, "dirmn: covariate must be a name or an index "
                          "in 0 .. %d (0-based), not %r" % (p - 1, covariate),
                          argument="covariate")
        return int(covariate)

    def wald_test(self, covariate):
        """The Wald test that a covariate has no effect on any category.

        ``H0: params[i, v] = 0`` for every free v (``dirmn_reg_wald_test``):
        V degrees of freedom (log-linear), V - 1 (mean/precision, where it
        is the same test under either contrast).

        Parameters
        ----------
        covariate : int or str
            Its 0-based index, or its name (:attr:`covariate_names`).

        Returns
        -------
        WaldTest
            ``(statistic, df, pvalue)``, computed by the library when the
            fit returned (for any p V); NaN without a covariance.

        Raises
        ------
        InvalidArgumentError
            An unknown name or an index outside 0 .. p - 1.
        """
        return WaldTest(*(float(v) for v in self._wald[self._covariate_index(covariate)]))

    def predict(self, design, kind="alpha", precision_design=None):
        """The fitted model's alpha (or proportions) for new rows
        (``dirmn_reg_predict``; ``dirmn_reg_predict_with_precision`` for a fit
        with a ``precision_design``).

        Parameters
        ----------
        design : array_like or DataFrame-like
            rows × p covariates, in the fit's order. A DataFrame-like design
            is matched to the fit's covariates by column name when the fit
            had named covariates (a DataFrame design or ``covariate_names``).
        kind : {"alpha", "proportion"}
            alpha (log-linear: ``exp(design @ params)``; mean/precision:
            ``precision * softmax(design @ params)``), or the expected
            composition ``alpha / alpha.sum(axis=1)``.
        precision_design : array_like or DataFrame-like, optional
            rows × q covariates of the new rows' log precision, required
            when (and only when) the fit had a ``precision_design``: alpha
            is then ``exp(precision_design @ log_precision) *
            softmax(design @ params)``. A DataFrame-like one is matched to
            :attr:`precision_covariate_names` by column name when the fit's
            was a DataFrame.

        Returns
        -------
        numpy.ndarray
            rows × V.

        Raises
        ------
        InvalidArgumentError
            Unknown ``kind``; another number of covariates (or precision
            covariates); a missing named covariate; a ``precision_design``
            missing for a fit that had one, or given to one that had none
            (argument "precision_design").
        DimensionMismatchError
            ``precision_design`` with another number of rows than
            ``design``.
        InvalidParameterError
            A covariate that is not finite (``row``, ``column``; argument
            "x", or "z" for ``precision_design``).
        NumericOverflowError
            An alpha beyond the double range, or 0 (``row``, ``column``).
        ClosedHandleError
            After :meth:`close`.
        """
        if kind not in _KINDS:
            raise invalid(InvalidArgumentError, "dirmn: kind must be 'alpha' or 'proportion', "
                          "not %r" % (kind,), argument="kind")
        if precision_design is None and self._has_precision_design:
            raise invalid(InvalidArgumentError, "dirmn: the fit's log precision has %d "
                          "covariates (%s): give the new rows' as precision_design" % (
                              len(self.precision_covariate_names),
                              ", ".join(self.precision_covariate_names)),
                          argument="precision_design")
        if precision_design is not None and not self._has_precision_design:
            raise invalid(InvalidArgumentError, "dirmn: precision_design is given, but the "
                          "fit has %s" % ("no precision (log-linear)"
                                          if self.parametrization == "loglinear" else
                                          "one precision for every row (no precision_design)"),
                          argument="precision_design")
        if self._named:
            design = _matched(design, self.covariate_names, "design", "covariate")
        x, rs, cs, _ = _design(design)
        rows, V = x.shape[0], self.params.shape[1]
        out = np.empty((rows, V))
        if precision_design is None:
            with calling((self._context,), (self._handle,)) as (r,):
                check(C.dirmn_reg_predict(r, _pd(x), rows, x.shape[1], rs, cs, _pd(out), V, 1),
                      None)
        else:
            if self._precision_named:
                precision_design = _matched(precision_design, self.precision_covariate_names,
                                            "precision_design", "precision covariate")
            z, zrs, zcs, _ = _precision_design(precision_design, rows)
            with calling((self._context,), (self._handle,)) as (r,):
                check(C.dirmn_reg_predict_with_precision(
                    r, _pd(x), rows, x.shape[1], rs, cs, _pd(z), z.shape[1], zrs, zcs,
                    _pd(out), V, 1), None)
        if kind == "proportion":
            out /= out.sum(axis=1, keepdims=True)
        return out

    def simulate(self, n=1, seed=None, output="ndarray", context=None):
        """New tables drawn from the fitted regression (``dirmn_sample_rowwise``),
        R's ``simulate``.

        Each table has the fitted table's rows: row b holds row b's observed
        total, drawn from DM(alpha_b, total), alpha_b the fitted model's
        alpha predicted on row b's own covariates (``predict`` of the fitted
        design, and of the fitted ``precision_design`` where there was one).

        Parameters
        ----------
        n : int
            How many tables.
        seed : None, int, numpy.random.Generator or numpy.random.RandomState
            As :func:`~dirmn.rvs`; table t is drawn with the 64-bit seed
            S + t (S the seed given or drawn), so ``simulate(seed=s)`` is
            ``dirmn.rvs(predict(design), totals, per_row=True, seed=s)``.
        output : {"ndarray", "csr", "counts"}
            As :func:`~dirmn.rvs`.
        context : Context, optional
            Where to draw; by default the regression's own context.

        Returns
        -------
        numpy.ndarray or scipy.sparse.csr_matrix or Counts
            One table for ``n=1``; a list of ``n`` tables otherwise.

        Raises
        ------
        InvalidArgumentError
            ``n`` < 1, a bad ``seed`` or ``output``; real-valued counts
            whose row totals are not integers (argument "row_totals").
        ClosedHandleError
            After :meth:`close` (the prediction needs the library's object).
        """
        if getattr(self, "_x", None) is None or getattr(self, "_row_totals", None) is None:
            raise invalid(InvalidArgumentError, "dirmn: this RegressionResult holds no design "
                          "or row totals: nothing to simulate", argument="row_totals")
        sizes = sizes_array(self._row_totals, "row_totals")
        alpha = np.ascontiguousarray(model_alpha(self.predict(
            self._x, precision_design=getattr(self, "_z", None))))
        ctx = context if context is not None else self._context
        rows = sizes.shape[0]

        def one(s, out):
            counts, _ = draw(ctx, alpha, rows, sizes, rowwise=True, seed=s)
            return convert(counts, out)

        return simulate_tables(n, seed, output, one)

    def params_frame(self):
        """:attr:`params` as a ``pandas.DataFrame`` (covariates × categories).

        Raises
        ------
        ImportError
            Without pandas.
        """
        import pandas as pd
        return pd.DataFrame(self.params, index=list(self.covariate_names),
                            columns=list(self.category_names))

    def summary(self):
        """A text table of the fit: per category, each covariate's coefficient,
        standard error, z and P>|z|; then the per-covariate Wald tests.

        Returns
        -------
        str
        """
        w = max([12] + [len(n) for n in self.covariate_names]
                + [len(n) for n in self.precision_covariate_names or ()]) + 2
        line = "=" * (w + 44)
        rule = "-" * (w + 44)
        head = [
            "Dirichlet-multinomial regression (dirmn)",
            line,
            "%-24s%12d    %-14s%14s" % ("Rows:", self.rows, "Log-likelihood:",
                                         "%.6g" % self.llf),
            "%-24s%12s    %-14s%14s" % ("Observations:", "%g" % self.nobs, "AIC:",
                                         "%.6g" % self.aic),
            "%-24s%12d    %-14s%14s" % ("Covariates:", self.params.shape[0], "BIC:",
                                         "%.6g" % self.bic),
            "%-24s%12d    %-14s%14s" % ("Categories:", self.params.shape[1], "Converged:",
                                         "%s" % self.converged),
            "%-24s%12d    %-14s%14s" % ("Parameters:", self.df_model, "Iterations:",
                                         "%d" % self.iterations),
            "%-24s%12s    %-14s%14s" % ("Hessian definite:", "%s" % self.hessian_definite,
                                         "Grad. norm:", "%.3g" % self.gradient_norm),
        ]
        mp = self.parametrization == "meanprecision"
        if mp:
            head.append("%-20s%16s    %-14s%14s" % (
                "Parametrization:", self.parametrization, "Contrast:", self.contrast))
            if self._has_precision_design:
                head.append("%-24s%12d    %-14s%14s" % (
                    "Precision covariates:", len(self.precision_covariate_names),
                    "Reference:", self.category_names[self.reference]))
            else:
                head.append("%-20s%16s    %-14s%14s" % (
                    "Precision (phi):", "%.6g" % self.precision, "Reference:",
                    self.category_names[self.reference]))
        else:
            head.append("%-20s%16s" % ("Parametrization:", self.parametrization))
        out = head
        z, pv = self.zvalues, self.pvalues
        for v, cat in enumerate(self.category_names):
            if mp and v == self.reference and self.contrast == "reference":
                out += [rule, "category %s: the reference (its coefficients are 0)" % cat]
                continue
            label = "category " + cat
            if mp and v == self.reference:
                label += " (implied)"
            out += [rule, "%-*s%11s%11s%11s%11s" % (w, label, "coef", "std err", "z", "P>|z|")]
            for i, name in enumerate(self.covariate_names):
                out.append("%-*s%s%s%s%s" % (
                    w, "  " + name, _fmt(float(self.params[i, v]), 11),
                    _fmt(float(self.bse[i, v]), 11), _fmt(float(z[i, v]), 11),
                    _pvalue_text(float(pv[i, v]), 11)))
        if mp and self._has_precision_design:
            # One row per gamma of log(phi_b) = z_b . gamma, as the betas'.
            zg, pg = self.zvalues_log_precision, self.pvalues_log_precision
            out += [rule, "%-*s%11s%11s%11s%11s" % (w, "log(phi)", "coef", "std err", "z",
                                                    "P>|z|")]
            for j, name in enumerate(self.precision_covariate_names):
                out.append("%-*s%s%s%s%s" % (
                    w, "  " + name, _fmt(float(self.log_precision[j]), 11),
                    _fmt(float(self.std_error_log_precision[j]), 11), _fmt(float(zg[j]), 11),
                    _pvalue_text(float(pg[j]), 11)))
        elif mp:
            out += [rule, "%-*s%11s%11s" % (w, "precision", "coef", "std err"),
                    "%-*s%s%s" % (w, "  log(phi)", _fmt(self.log_precision, 11),
                                  _fmt(self.std_error_log_precision, 11))]
        out += [rule, "%-*s%11s%11s%11s" % (w, "Wald test", "chi2", "df", "P>chi2")]
        for i, name in enumerate(self.covariate_names):
            s, df, p = (float(t) for t in self._wald[i])
            out.append("%-*s%s%11s%s" % (w, "  " + name, _fmt(s, 11),
                                         "nan" if math.isnan(df) else "%d" % df,
                                         _pvalue_text(p, 11)))
        out.append(line)
        if not self.hessian_definite:
            out.append("The Hessian is not negative definite at the fit: no standard errors.")
        if not self.converged:
            out.append("The fit did not converge in %d iterations." % self.iterations)
        return "\n".join(out)

    def __repr__(self):
        return "<dirmn.RegressionResult %s covariates=%d categories=%d loglik=%.6g " \
            "converged=%s%s>" % (self.parametrization, self.params.shape[0],
                                 self.params.shape[1], self.llf, self.converged,
                                 " (closed)" if self.closed else "")


def _reference(reference, names):
    """The 0-based index of the category ``reference`` (an index or a name)."""
    V = len(names)
    if isinstance(reference, str):
        if reference not in names:
            raise invalid(InvalidArgumentError, "dirmn: reference %r is not a category (the "
                          "categories are %s)" % (reference, ", ".join(names)),
                          argument="reference")
        return names.index(reference)
    if isinstance(reference, (bool, np.bool_)) or not isinstance(reference, (int, np.integer)):
        raise invalid(InvalidArgumentError, "dirmn: reference must be a category's name or its "
                      "index in 0 .. %d (0-based), not %r" % (V - 1, reference),
                      argument="reference")
    if not 0 <= reference < V:
        raise invalid(InvalidArgumentError, "dirmn: reference = %d is not a category: the "
                      "table has %d, 0 .. %d (0-based)" % (reference, V, V - 1),
                      argument="reference")
    return int(reference)


def regression(counts, design, weights=None, *, parametrization="loglinear",
               contrast="reference", reference=0, precision_design=None, tolerance=None,
               max_iterations=None, covariate_names=None, context=None, real_valued=False,
               progress=None):
    """Dirichlet-multinomial regression of a count table on covariates.

    Maximum likelihood (``dirmn_reg_fit``) of ``alpha_bv = exp(design[b] @
    beta[:, v])`` (``parametrization="loglinear"``: each category v has its
    own p coefficients), or of ``alpha_b = phi_b softmax(design[b] @ beta)``
    (``"meanprecision"``: the expected proportions a softmax of the linear
    predictors; beta's columns identified by ``contrast`` and
    ``reference``; one precision phi = exp(gamma) for every row, or with a
    ``precision_design`` z, ``log phi_b = z[b] @ gamma``).

    Parameters
    ----------
    counts : Counts or array_like or sparse matrix or AnnData-like or DataFrame-like
        Rows are observations (anything :class:`~dirmn.Counts` accepts);
        its column names, where it carries them, name the categories.
    design : array_like or DataFrame-like
        rows × p covariates (any dtype, order and strides; float64 is read
        in place). An intercept is a column of ones. A DataFrame-like
        design (``to_numpy``, ``index``, ``columns``; pandas) names the
        covariates by its columns.
    weights : array_like, optional
        One finite frequency weight >= 0 per row (a weight of 2 is the row
        twice).
    parametrization : {"loglinear", "meanprecision"}
        The model (see above). An intercept alone gives the shared-alpha
        fit (:func:`~dirmn.fit`) in either.
    contrast : {"reference", "sum"}
        Mean/precision only (ignored by the log-linear model): the
        reference category's coefficients are 0, or each covariate's
        coefficients sum to 0 (the ``reference`` category's is then minus
        the sum of the others'). The two give the same fit, likelihood and
        Wald tests; the coefficients differ by each covariate's mean.
    reference : int or str
        Mean/precision: the reference (or, with ``contrast="sum"``, the
        implied) category, its 0-based index or its name
        (:attr:`RegressionResult.category_names`); default the first.
    precision_design : array_like or DataFrame-like, optional
        Mean/precision only: rows × q covariates of the log precision,
        ``log phi_b = precision_design[b] @ gamma`` (betareg's and brms's
        precision formula; any dtype, order and strides, float64 read in
        place). An intercept is a column of ones; a column of ones alone is
        the default fit (one precision for every row). A DataFrame-like one
        names the gammas by its columns (else "z0", "z1" ...). The result's
        ``log_precision`` and ``std_error_log_precision`` are then arrays
        of q, ``precision`` each fitted row's phi, and :meth:`~RegressionResult.predict`
        needs the new rows' precision covariates.
    tolerance : float, optional
        Stop when a Newton step's predicted gain is below ``tolerance x
        |loglik|`` (library default 1e-10).
    max_iterations : int, optional
        Newton steps (library default 200). Stopping there gives
        ``converged=False`` and a :class:`~dirmn.errors.ConvergenceWarning`.
    covariate_names : sequence of str, optional
        Names of the p covariates (override a DataFrame's columns).
    context : Context, optional
    real_valued : bool
        Accept non-integral counts (for an array ``counts``).
    progress : callable, optional
        ``progress(iteration, loglik, change)`` after each Newton step, on
        the calling thread: ``loglik`` the log pmf after it, ``change`` the
        max-norm of the gradient in beta. A true return value stops the fit
        (:class:`~dirmn.errors.CancelledError`); an exception it raises
        stops it too and is re-raised, unchanged. On split counts a
        cancellation on any rank cancels every rank.

    Returns
    -------
    RegressionResult

    Raises
    ------
    InvalidArgumentError
        An unknown ``parametrization`` or ``contrast``, a ``reference``
        that is not a category, a ``precision_design`` given to a
        log-linear fit or without columns (``argument`` names which); a
        design not of full column rank under the weights (``index``: the
        first covariate that is a combination of those before it, argument
        "x column"; for ``precision_design``, argument "precision_design
        column"); a category without counts (``index``, argument
        "column"); too few rows with counts; a Newton system beyond
        ``DIRMN_REG_MAX_SYSTEM`` (8000) unknowns (it is solved in the
        smaller of p V and the rows with counts, so both are above 8000;
        on split counts it is formed whole, so p V above 8000 is refused
        whatever the rows); bad options.
    InvalidParameterError
        A design entry that is not finite (``row``, ``column``, argument
        "x"; "precision_design" for the precision's), or a bad weight
        (``row``).
    DimensionMismatchError
        ``design``, ``precision_design`` or ``weights`` with another number
        of rows than the table, or ``covariate_names`` of the wrong length.
    NumericOverflowError
        An alpha beyond the double range at the start.
    CancelledError
        ``progress`` returned a true value, or the context's interrupt did
        (on split counts: on any rank).
    KeyboardInterrupt
        Ctrl-C during the fit (see :class:`~dirmn.Context`).
    CommunicationError
        On counts split over a :class:`~dirmn.Communicator`: a callback
        failed (its exception is the ``__cause__``), or another rank's part
        of the call failed (the message names the first rank that did).

    Notes
    -----
    On a :class:`~dirmn.Counts` split by rows over a
    :class:`~dirmn.Communicator` (:meth:`~dirmn.Counts.set_communicator`)
    the call is collective (``dirmn_reg_fit``): every rank makes it, in the
    same order, with the same options and its own rows of ``design`` (and
    of ``precision_design``) and its own rows' ``weights``, and every rank
    gets the whole table's fit. The design's rank is checked over every
    rank's rows (a covariate that is 0 on one rank's rows is fine). Each
    Newton step sums the log-likelihood, gradient and Newton matrix over
    the ranks; the matrix is formed whole, where one process with fewer
    rows than coefficients solves in the rows' dimension, so on split
    counts a log-linear p V above ``DIRMN_REG_MAX_SYSTEM`` (8000) is
    refused whatever the rows. ``llf``, ``aic`` and ``bic`` agree with one
    process holding the whole table to rounding (~1e-12 relative);
    ``params``, ``bse``, the covariance and the log precision to the Newton
    solves' accuracy (~1e-7 relative, not bit for bit); every rank gets the
    same values. A rank whose own part fails (a design value that is not
    finite, a bad weight) raises its own error, the others
    CommunicationError. The result's ``rows`` (and, with a
    ``precision_design``, ``precision``) are this rank's;
    :meth:`~RegressionResult.predict` is local, and
    :meth:`~RegressionResult.simulate` draws this rank's rows.
    """
    model = _choice(parametrization, _PARAMETRIZATIONS, "parametrization")
    contrast_code = _choice(contrast, _CONTRASTS, "contrast")
    x, rs, cs, frame_names = _design(design)
    rows_x, p = x.shape
    named = covariate_names is not None or frame_names is not None
    cov_names = _names(covariate_names if covariate_names is not None else frame_names, p,
                       "x", "covariate_names")
    z = z_names = zopt = z_frame_names = None
    if precision_design is not None:
        # Refused here, not by the library, so that the error names the argument.
        if model != C.DIRMN_REG_MEAN_PRECISION:
            raise invalid(InvalidArgumentError, "dirmn: precision_design is given to a "
                          "log-linear fit: only parametrization='meanprecision' has a "
                          "precision", argument="precision_design")
        z, zrs, zcs, z_frame_names = _precision_design(precision_design, rows_x)
        z_names = _names(z_frame_names, z.shape[1], "z", "precision_design")
        zopt = (z, zrs, zcs)
    with counts_for(counts, context, real_valued) as (c, ctx):
        category_names = _names(c.column_names, c.cols, "v", "column_names")
        ref = _reference(reference, category_names)
        w = None if weights is None else float64_vector(weights, "weights", c.rows)
        opts = reg_options(tolerance, max_iterations, w, model, contrast_code, ref,
                           precision_design=zopt)
        pending = Pending()
        trampoline = progress_function(progress, pending)   # alive for the call
        opts.progress = trampoline
        totals = c.row_totals()
        out = ctypes.c_void_p()
        with c._call(ctx, pending) as (ptr, h):
            check(C.dirmn_reg_fit(ptr, h, _pd(x), rows_x, p, rs, cs, ctypes.byref(opts),
                                  ctypes.byref(out)), ptr)
            try:
                fields = _read(out.value, z is not None)
            except BaseException:
                C.dirmn_reg_destroy(out.value)
                raise
            fields.update(covariate_names=cov_names, _named=named,
                          category_names=category_names, _x=np.array(x, dtype=np.float64),
                          _row_totals=totals, precision_covariate_names=z_names,
                          _has_precision_design=z is not None,
                          _precision_named=z_names is not None and z_frame_names is not None,
                          _z=None if z is None else np.array(z, dtype=np.float64))
            if z is not None:
                fields["precision"] = np.exp(fields["_z"] @ fields["log_precision"])
            result = RegressionResult(out.value, ctx, fields)
        del trampoline
    if result.multinomial_limit:
        warnings.warn("dirmn.regression: the table shows no overdispersion: the likelihood "
                      "rises toward the multinomial limit (precision -> inf), which the "
                      "coefficients approach (multinomial_limit=True, converged=False)",
                      ConvergenceWarning, stacklevel=2)
    elif not result.converged:
        warnings.warn("dirmn.regression: no convergence in %d Newton steps (gradient norm "
                      "%.3g); the result is the last iterate: increase max_iterations"
                      % (result.iterations, result.gradient_norm), ConvergenceWarning,
                      stacklevel=2)
    if not result.hessian_definite:
        warnings.warn("dirmn.regression: the Hessian is not negative definite at the result, "
                      "so there are no standard errors, covariance or Wald tests (NaN)",
                      RuntimeWarning, stacklevel=2)
    return result
