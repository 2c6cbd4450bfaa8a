"""The one vocabulary (bindings/names.tsv, issue #25): every name of the
python column is checked against the package as what it is in Python (an
exported function, a result field, a keyword accepted, a value accepted). A
row whose idea this file does not know fails: a new row needs its check."""

import dataclasses
import inspect

import numpy as np
import pytest

import dirmn
from conftest import repo_path
from refs import loglik_rows

X = np.array([[3, 2, 0, 1, 4], [0, 5, 1, 1, 2], [4, 1, 2, 1, 0], [1, 0, 6, 1, 3]])


def read_names():
    rows, header = {}, None
    with open(repo_path("bindings", "names.tsv")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if header is None:
                header = cols
                continue
            rows[cols[0]] = cols[header.index("python")]
    return rows


FIT = dirmn.fit(X)
MIX = dirmn.mixture(X, 1)
TEST = dirmn.overdispersion_test(X)
DESIGN = np.column_stack([np.ones(4), [0.5, -1.0, 0.25, 1.5]])
REG = dirmn.regression(X, DESIGN)
# An intercept alone: with the slope the proportions nearly fit each of the
# four rows, leaving no overdispersion (the multinomial limit).
REG_MP = dirmn.regression(X, DESIGN[:, :1], parametrization="meanprecision")
# Per-group tests: a 4 x 5 table has too few rows; 8 rows (X twice), the
# first three columns group "a", the last two "b".
GX = np.vstack([X, X[::-1]])
GDESIGN = np.column_stack([np.ones(8), [0.5, -1.0, 0.25, 1.5, 0.0, 1.0, -0.5, 2.0]])
GROUPS = ["a", "a", "a", "b", "b"]
GT = dirmn.regression_groups(GX, GDESIGN, GROUPS)
# Covariates on the precision: log phi_b = z_b . gamma, an intercept and
# odd rows' shift (10 free coefficients on 8 rows of 5 categories).
ZDESIGN = np.column_stack([np.ones(8), np.arange(8) % 2])
REG_Z = dirmn.regression(GX, GDESIGN, parametrization="meanprecision", precision_design=ZDESIGN)
# Sampling, moments and group tests (issue #30).
MOM = dirmn.moments(np.ones(5), 10)
TG = dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, bootstrap=9, seed=1)
# One group's rows against a given composition: GX against X's own.
TP = dirmn.test_proportions(GX, X.sum(axis=0) / X.sum())
POW = dirmn.power_groups(np.array([np.ones(5), np.arange(1.0, 6.0)]), [4, 5], 30, tables=20,
                         level=0.1, seed=1)
# The power of the proportions test: X's composition against alphas of
# another (the first and last proportions swapped).
PI0 = X.sum(axis=0) / X.sum()
POWP = dirmn.power_proportions(10 * PI0[::-1], PI0, 6, 40, tables=20, level=0.1, seed=1)


def kw(f, name):
    return name in inspect.signature(f).parameters


def exported(name):
    return name in dirmn.__all__ and callable(getattr(dirmn, name, None))


def fitfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.FitResult)}


def odtfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.OverdispersionTestResult)}


def mixfield(name):
    return name in vars(MIX) and not name.startswith("_")


def regfield(name):
    return name in vars(REG) and not name.startswith("_")


def regmethod(name):
    return callable(getattr(REG, name, None)) and not name.startswith("_")


def groupsfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.GroupTestResult)}


def tgfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.TestGroupsResult)}


def tpfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.TestProportionsResult)}


def powfield(name):
    return name in {f.name for f in dataclasses.fields(dirmn.PowerResult)}


def copied_out(name):
    with dirmn.Counts(X) as c:
        return getattr(c, name)()


def accepts(f):
    try:
        r = f()
    except dirmn.InvalidArgumentError:
        return False
    if hasattr(r, "close"):
        r.close()
    return True


def kernel_flag(n):
    key, val = (s.strip() for s in n.split("="))
    value = {"False": False, "True": True}[val]
    got = dirmn.loglik(X, np.ones(5), **{key: value})
    return (kw(dirmn.loglik, key) and kw(dirmn.loglik_sum, key)
            and np.allclose(got, loglik_rows(X, np.ones(5), full=False), rtol=1e-12))


def one_rank_communicator():
    """A communicator of one rank: its sum and broadcast leave buffers as they are."""
    return dirmn.Communicator(0, 1, lambda buf: None, lambda buf, root: None)


def communicator_class(name):
    cls = getattr(dirmn, name)
    with one_rank_communicator() as comm:
        return (exported(name) and isinstance(cls, type) and isinstance(comm, cls)
                and (comm.rank, comm.ranks) == (0, 1)
                and callable(getattr(cls, "from_mpi4py", None)))


def attaches_communicator(name):
    """Counts.<name>(comm) makes the table one rank's rows: over one rank the
    fit is the whole table's; <name>(None) detaches."""
    with dirmn.Counts(X) as c, one_rank_communicator() as comm:
        getattr(c, name)(comm)
        split = dirmn.fit(c)
        attached = c.communicator is comm
        getattr(c, name)(None)
        return (attached and c.communicator is None and kw(getattr(c, name), "communicator")
                and np.array_equal(split.alpha, FIT.alpha))


CHECKS = {
    "log_pmf": lambda n: exported(n) and fitfield(n) and mixfield(n),
    "log_kernel": fitfield,
    "kernel_flag": kernel_flag,
    "std_error_alpha": fitfield,
    "std_error_log_alpha": fitfield,
    "precision": lambda n: fitfield(n) and odtfield(n) and regfield(n)
    and getattr(REG_MP, n) > 0 and getattr(REG, n) is None,
    "zero_columns": fitfield,
    "multinomial_limit": fitfield,
    "gradient_norm": fitfield,
    "iterations": lambda n: fitfield(n) and mixfield(n),
    "converged": lambda n: fitfield(n) and mixfield(n) and odtfield(n) and tgfield(n),
    "parameters": lambda n: fitfield(n) and mixfield(n),
    "observations": lambda n: fitfield(n) and mixfield(n) and odtfield(n),
    "tolerance": lambda n: all(kw(f, n) for f in (dirmn.fit, dirmn.mixture,
                                                  dirmn.overdispersion_test,
                                                  dirmn.regression, dirmn.test_groups,
                                                  dirmn.power_groups)),
    "max_iterations": lambda n: all(kw(f, n) for f in (dirmn.fit, dirmn.mixture,
                                                       dirmn.overdispersion_test,
                                                       dirmn.regression, dirmn.test_groups,
                                                       dirmn.power_groups)),
    "m_step_iterations": lambda n: kw(dirmn.mixture, n),
    "weights": lambda n: all(kw(f, n) for f in (dirmn.fit, dirmn.mixture,
                                                dirmn.overdispersion_test, dirmn.loglik_sum,
                                                dirmn.regression)),
    "start": lambda n: kw(dirmn.fit, n),
    "mixture_objective": lambda n: kw(dirmn.mixture, n) and mixfield(n),
    "objective_kind": mixfield,
    "objective_ml": lambda n: accepts(lambda: dirmn.mixture(X, 1, objective=n)),
    "objective_dmn": lambda n: accepts(lambda: dirmn.mixture(X, 1, objective=n)),
    "init": lambda n: kw(dirmn.mixture, n),
    "init_mixed": lambda n: accepts(lambda: dirmn.mixture(X, 1, init=n)),
    "init_kmeans": lambda n: accepts(lambda: dirmn.mixture(X, 1, init=n)),
    "init_kmeanspp": lambda n: accepts(lambda: dirmn.mixture(X, 1, init=n)),
    "init_soft_kmeans": lambda n: accepts(lambda: dirmn.mixture(X, 1, init=n)),
    "starts": lambda n: kw(dirmn.mixture, n),
    "first_row": lambda n: kw(dirmn.rvs, n),
    "seed": lambda n: all(kw(f, n) for f in (dirmn.mixture, dirmn.rvs, dirmn.test_groups,
                                             dirmn.power_groups, dirmn.power_proportions,
                                             FIT.simulate, MIX.simulate, REG.simulate)),
    "mixing_weights": mixfield,
    "responsibilities": mixfield,
    "criterion_aic": lambda n: exported(n) and fitfield(n) and mixfield(n)
    and accepts(lambda: dirmn.mixture(X, range(1, 3), select=n)),
    "criterion_bic": lambda n: exported(n) and fitfield(n) and mixfield(n)
    and accepts(lambda: dirmn.mixture(X, range(1, 3), select=n)),
    "criterion_laplace": lambda n: exported(n) and mixfield(n)
    and accepts(lambda: dirmn.mixture(X, range(1, 3), select=n, objective="dmn")),
    "select": lambda n: kw(dirmn.mixture, n),
    "overdispersion_test": exported,
    "test_lrt": lambda n: accepts(lambda: dirmn.overdispersion_test(X, method=n)),
    "test_score": lambda n: accepts(lambda: dirmn.overdispersion_test(X, method=n)),
    "grow_from": lambda n: kw(dirmn.mixture, n),
    "test_method": lambda n: kw(dirmn.overdispersion_test, n) and odtfield(n),
    "test_statistic": lambda n: odtfield(n) and groupsfield(n) and tgfield(n) and tpfield(n),
    "test_p_value": lambda n: odtfield(n) and groupsfield(n) and tgfield(n) and tpfield(n)
    and n in dirmn.WaldTest._fields,
    "progress_callback": lambda n: kw(dirmn.fit, n) and kw(dirmn.mixture, n)
    and kw(dirmn.regression, n),
    # Regression (issue #29).
    "regression": lambda n: exported(n) and isinstance(REG, dirmn.RegressionResult),
    "reg_covariance": lambda n: regmethod(n) and getattr(REG, n)().shape == (10, 10),
    "reg_std_errors": lambda n: regfield(n) and getattr(REG, n).shape == (2, 5),
    "reg_wald_test": lambda n: regmethod(n)
    and isinstance(getattr(REG, n)(1), dirmn.WaldTest),
    "reg_predict": lambda n: regmethod(n) and getattr(REG, n)(DESIGN).shape == (4, 5),
    "reg_hessian_definite": lambda n: regfield(n) and isinstance(getattr(REG, n), bool),
    # The regression's parametrisations (mean/precision).
    "reg_parametrization": lambda n: kw(dirmn.regression, n) and regfield(n)
    and getattr(REG_MP, n) == "meanprecision",
    "reg_loglinear": lambda n: accepts(lambda: dirmn.regression(X, DESIGN, parametrization=n))
    and REG.parametrization == n,
    "reg_mean_precision": lambda n: REG_MP.parametrization == n
    and accepts(lambda: dirmn.regression(X, DESIGN[:, :1], parametrization=n)),
    "reg_contrast": lambda n: kw(dirmn.regression, n) and regfield(n)
    and getattr(REG, n) is None,
    "reg_contrast_reference": lambda n: REG_MP.contrast == n and accepts(
        lambda: dirmn.regression(X, DESIGN[:, :1], parametrization="meanprecision", contrast=n)),
    "reg_contrast_sum": lambda n: accepts(
        lambda: dirmn.regression(X, DESIGN[:, :1], parametrization="meanprecision", contrast=n)),
    "reg_reference": lambda n: kw(dirmn.regression, n) and regfield(n)
    and getattr(REG_MP, n) == 0,
    "reg_log_precision": lambda n: regfield(n)
    and bool(abs(getattr(REG_MP, n) - np.log(REG_MP.precision)) < 1e-12),
    "reg_std_error_log_precision": lambda n: regfield(n) and getattr(REG_MP, n) > 0,
    # The precision's covariates: a keyword of the fit and of its predict,
    # whose q gammas the fit counts and reports.
    "reg_precision_design": lambda n: kw(dirmn.regression, n) and kw(REG_Z.predict, n)
    and REG_Z.parameters == 2 * 4 + 2 and REG_Z.log_precision.shape == (2,)
    and REG_Z.precision_covariate_names == ["z0", "z1"]
    and REG_MP.precision_covariate_names is None,
    # predict with the new rows' z: each row's alpha sums to exp(z . gamma).
    "reg_predict_with_precision": lambda n: regmethod(n)
    and kw(getattr(REG_Z, n), "precision_design")
    and bool(np.allclose(getattr(REG_Z, n)(GDESIGN, precision_design=ZDESIGN).sum(axis=1),
                         np.exp(ZDESIGN @ REG_Z.log_precision), rtol=1e-12)),
    # Per-group likelihood-ratio tests (differential usage).
    "reg_test_groups": lambda n: exported(n)
    and isinstance(getattr(dirmn, n)(GX, GDESIGN, GROUPS), dirmn.GroupTestResult),
    "reg_groups": lambda n: kw(dirmn.regression_groups, n),
    "reg_group_label": lambda n: groupsfield(n) and getattr(GT, n) == ["a", "b"],
    "reg_null": lambda n: kw(dirmn.regression_groups, n) and groupsfield(n)
    and getattr(GT, n) == 1,
    "reg_hold_precision": lambda n: kw(dirmn.regression_groups, n) and groupsfield(n)
    and getattr(GT, n) is False,
    "reg_loglik_full": lambda n: groupsfield(n) and bool(np.all(getattr(GT, n) < 0)),
    "reg_loglik_null": lambda n: groupsfield(n) and tgfield(n)
    and bool(np.all(getattr(GT, n) <= GT.loglik_full)),
    "test_df": lambda n: groupsfield(n) and odtfield(n) and tgfield(n) and tpfield(n)
    and n in dirmn.WaldTest._fields and list(getattr(GT, n)) == [2.0, 1.0],
    "test_p_adjusted": lambda n: groupsfield(n) and bool(np.all(getattr(GT, n) >= GT.pvalue)),
    "reg_group_status": lambda n: groupsfield(n) and list(getattr(GT, n)) == ["ok", "ok"],
    "reg_groups_tested": lambda n: groupsfield(n) and getattr(GT, n) == 2,
    "columns_with_counts": lambda n: groupsfield(n) and odtfield(n) and tgfield(n)
    and list(getattr(GT, n)) == [3, 2] and getattr(TG, n) == 5,
    # Sampling, moments and group tests (issue #30).
    "sample": lambda n: exported(n)
    and getattr(dirmn, n)(np.ones(5), 7, 3, seed=1).sum(axis=1).tolist() == [7, 7, 7],
    "sample_rowwise": lambda n: exported(n) and kw(getattr(dirmn, n), "per_row")
    and getattr(dirmn, n)(np.ones((2, 5)), [3, 4], per_row=True, seed=1).sum(axis=1).tolist()
    == [3, 4],
    "sample_size": lambda n: kw(dirmn.rvs, n) and kw(dirmn.moments, n)
    and kw(dirmn.power_groups, n) and kw(dirmn.power_proportions, n),
    "sample_component": lambda n: kw(dirmn.rvs, n)
    and dirmn.rvs(np.ones((2, 5)), 3, seed=1, return_component=True,
                  **{n: [1, 0, 1]})[1].tolist() == [1, 0, 1],
    "simulate": lambda n: all(callable(getattr(o, n, None)) for o in (FIT, MIX, REG))
    and getattr(FIT, n)(seed=1).shape == X.shape,
    "moments": lambda n: exported(n) and isinstance(MOM, dirmn.Moments),
    "moment_mean": lambda n: n in dirmn.Moments._fields and getattr(MOM, n).shape == (5,),
    "moment_variance": lambda n: n in dirmn.Moments._fields and getattr(MOM, n).shape == (5,),
    "moment_covariance": lambda n: n in dirmn.Moments._fields
    and getattr(MOM, n).shape == (5, 5),
    "counts_to_dense": lambda n: np.array_equal(copied_out(n), X),
    "counts_to_sparse": lambda n: np.array_equal(copied_out(n).toarray(), X),
    "group_test": lambda n: exported(n) and isinstance(TG, dirmn.TestGroupsResult),
    "bootstrap": lambda n: kw(dirmn.test_groups, n) and tgfield(n) and getattr(TG, n) == 9,
    "p_value_bootstrap": lambda n: tgfield(n) and 0.1 <= getattr(TG, n) <= 1.0,
    "loglik_groups": lambda n: tgfield(n) and getattr(TG, n) >= TG.loglik_null,
    # Power of the group test by simulation.
    "power": lambda n: exported(n) and isinstance(POW, dirmn.PowerResult)
    and kw(getattr(dirmn, n), "rows_per_group"),
    "power_tables": lambda n: kw(dirmn.power_groups, n) and kw(dirmn.power_proportions, n)
    and powfield(n) and getattr(POW, n) == getattr(POWP, n) == 20,
    "power_level": lambda n: kw(dirmn.power_groups, n) and kw(dirmn.power_proportions, n)
    and powfield(n) and getattr(POW, n) == getattr(POWP, n) == 0.1,
    "power_rows_per_group": lambda n: kw(dirmn.power_groups, n)
    and accepts(lambda: dirmn.power_groups(np.ones((2, 5)), tables=2, seed=1, size=10,
                                           **{n: [3, 4]})),
    "power_value": lambda n: powfield(n) and getattr(POW, n) == POW.rejected / POW.tables
    and getattr(POWP, n) == POWP.rejected / POWP.tables,
    # The group test's statistic: a keyword of both functions, its values
    # accepted by both and recorded in the results' statistic_kind.
    "group_statistic": lambda n: kw(dirmn.test_groups, n) and kw(dirmn.power_groups, n)
    and not accepts(lambda: dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, **{n: "none"}))
    and not accepts(lambda: dirmn.power_groups(np.ones((2, 5)), 3, 10, tables=2, **{n: "none"})),
    "group_statistic_kind": lambda n: tgfield(n) and powfield(n) and getattr(TG, n) == "lrt"
    and getattr(dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, statistic="xmcupo"), n) == "xmcupo",
    "group_statistic_lrt": lambda n: TG.statistic_kind == POW.statistic_kind == n
    and dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, statistic=n).statistic
    == dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4).statistic
    and accepts(lambda: dirmn.power_groups(np.ones((2, 5)), 3, 10, tables=2, statistic=n)),
    "group_statistic_xmcupo": lambda n: dirmn.test_groups(
        GX, ["a"] * 4 + ["b"] * 4, statistic=n).statistic_kind == n
    and dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, statistic=n).df == TG.df - 1
    and dirmn.power_groups(np.ones((2, 5)), 3, 10, tables=2, seed=1,
                           statistic=n).statistic_kind == n,
    # HMP's Xoc: one shared overdispersion against one per group, G - 1 df.
    "group_statistic_xoc": lambda n: dirmn.test_groups(
        GX, ["a"] * 4 + ["b"] * 4, statistic=n).statistic_kind == n
    and dirmn.test_groups(GX, ["a"] * 4 + ["b"] * 4, statistic=n).df == 1.0
    and dirmn.power_groups(np.ones((2, 5)), 3, 10, tables=2, seed=1,
                           statistic=n).statistic_kind == n,
    # One group's rows against a given composition (HMP's Xsc.onesample):
    # the function, its second argument (the composition, also by keyword)
    # and the rows' overdispersion in the result.
    "proportion_test": lambda n: exported(n) and isinstance(TP, dirmn.TestProportionsResult)
    and TP.rows == 8 and TP.categories == 5 and TP.df == 4.0,
    "proportion_test_null": lambda n:
    list(inspect.signature(dirmn.test_proportions).parameters)[1] == n
    and list(inspect.signature(dirmn.power_proportions).parameters)[1] == n
    and dirmn.test_proportions(GX, **{n: X.sum(axis=0) / X.sum()}) == TP
    and not accepts(lambda: dirmn.test_proportions(GX, **{n: [0.5, 0.5, 0, 0, 0.1]})),
    "proportion_test_theta": lambda n: tpfield(n) and 0 <= getattr(TP, n) < 1,
    # Its power by simulation: the function, with test_proportions's name
    # for the composition, the rows as rows, and power_groups's result and
    # keywords.
    # One table split by rows over ranks: the communicator and the Counts
    # method that attaches a table to it.
    "communicator": communicator_class,
    "set_communicator": attaches_communicator,
    "power_proportions": lambda n: exported(n) and isinstance(POWP, dirmn.PowerResult)
    and POWP.tables == 20 and POWP.level == 0.1 and POWP.statistic_kind == "xsc"
    and POWP.power == POWP.rejected / 20
    and list(inspect.signature(getattr(dirmn, n)).parameters)[:4]
    == ["alpha", "proportions", "rows", "size"]
    and all(kw(getattr(dirmn, n), k) for k in ("tables", "level", "seed", "param", "context"))
    and getattr(dirmn, n)(10 * PI0[::-1], proportions=PI0, rows=6, size=40, tables=20,
                          level=0.1, seed=1) == POWP,
}

ROWS = read_names()


def test_table_was_read():
    assert len(ROWS) >= 40


@pytest.mark.parametrize("idea", sorted(i for i, n in ROWS.items() if n != "-"))
def test_python_name(idea):
    name = ROWS[idea]
    assert idea in CHECKS, "names.tsv row %r has no check in test_names.py" % idea
    assert CHECKS[idea](name) is True, (idea, name)


def test_unlisted_ideas_have_no_stray_names():
    # Ideas with "-" in the python column are not reachable under another
    # language's name (that would be a second name for one idea).
    assert not hasattr(dirmn, "fit_dirmn") and not hasattr(dirmn, "fit_mixture")
    assert not fitfield("observations") and not mixfield("weights") and not mixfield("nparams")
    assert not regfield("observations") and not regfield("maxiter")
    assert not kw(dirmn.regression, "maxiter")
