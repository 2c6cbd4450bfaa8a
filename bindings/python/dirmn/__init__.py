"""dirmn: Dirichlet-multinomial likelihoods, fits, mixtures and regression.

Python bindings of libdirmn (a C library for CPUs and NVIDIA GPUs), over its
C ABI with :mod:`ctypes`. Rows of a count table are observations, columns
categories; positions in errors are 0-based.

>>> import numpy as np, dirmn
>>> X = np.array([[3, 0, 4], [2, 5, 1], [0, 1, 2]])
>>> dirmn.loglik(X, [1.0, 2.0, 0.5])          # the log pmf of each row
>>> f = dirmn.fit(X); f.alpha, f.loglik, f.bic
>>> m = dirmn.mixture(X, 2); m.mixture_weights, m.responsibilities
>>> r = dirmn.regression(X, design); r.params, r.bse, r.wald_test(1)
>>> t = dirmn.regression_groups(Y, design, gene); t.pvalue, t.padjusted
>>> Y = dirmn.rvs([1.0, 2.0, 0.5], size=100, n=20, seed=1)   # a 20 x 3 table
>>> dirmn.moments([1.0, 2.0, 0.5], 100).covariance
>>> f.simulate(seed=2)                          # a new table like X
>>> dirmn.test_groups(X, ["a", "a", "b"]).pvalue
>>> dirmn.test_proportions(X, [0.3, 0.4, 0.3]).pvalue
>>> dirmn.power_groups([[1.0, 2.0, 0.5], [2.0, 1.0, 0.5]], 20, 100).power
>>> dirmn.power_proportions([2.0, 1.0, 1.0], [0.4, 0.3, 0.3], 20, 100).power

A table split by rows over processes (MPI ranks): each rank attaches its
rows to a :class:`Communicator`, and :func:`fit`, :func:`loglik_sum`,
:func:`overdispersion_test`, :func:`mixture` and :func:`regression` (each
rank its own rows of the design) give every rank the whole table's result
(see :mod:`dirmn.communicator`):

>>> counts = dirmn.Counts(my_rows)
>>> counts.set_communicator(dirmn.Communicator.from_mpi4py(MPI.COMM_WORLD))
>>> dirmn.fit(counts).alpha
>>> dirmn.regression(counts, my_design).params

Every failure raises a :class:`DirmnError` subclass (see :mod:`dirmn.errors`).
The library is found as :mod:`dirmn._lib` describes (``DIRMN_LIBRARY_PATH``
first); without it, importing raises :class:`DirmnLibraryNotFound`.
"""

from ._lib import DirmnLibraryNotFound
from . import _capi
from .communicator import Communicator
from .context import Context, backend_compiled, cuda_device_count, default_context
from .counts import Counts
from .errors import (BackendError, BackendUnavailableError, CancelledError, ClosedHandleError,
                     CommunicationError, ContextInUseError, ConvergenceWarning, DeviceError,
                     DimensionMismatchError, DirmnError, InternalError, InvalidArgumentError,
                     InvalidCountsError, InvalidParameterError, NotSupportedError,
                     NumericOverflowError, OutOfMemoryError, WrongContextError)
from .fit import FitResult, OverdispersionTestResult, fit, overdispersion_test
from .group_test import (PowerResult, TestGroupsResult, TestProportionsResult, power_groups,
                         power_proportions, test_groups, test_proportions)
from .loglik import LoglikSum, loglik, loglik_sum, logpmf
from .mixture import Mixture, MixtureSelection, mixture
from .regression import RegressionResult, WaldTest, regression
from .regression_groups import GroupTestResult, regression_groups
from .sample import Moments, moments, rvs

__version__ = "0.3.0"


def library_version():
    """The version of the loaded libdirmn, "MAJOR.MINOR.PATCH".

    Returns
    -------
    str
    """
    return _capi.dirmn_version_string().decode()


def library_path():
    """The path of the loaded libdirmn.

    Returns
    -------
    str
    """
    return _capi.library_path


def aic(result):
    """The AIC of a fit, mixture or regression (``result.aic``; smaller is better)."""
    return result.aic


def bic(result):
    """The BIC of a fit, mixture or regression (``result.bic``; smaller is better)."""
    return result.bic


def laplace(result):
    """The Laplace criterion of a mixture (``result.laplace``)."""
    return result.laplace


__all__ = [
    "BackendError", "BackendUnavailableError", "CancelledError", "ClosedHandleError",
    "CommunicationError", "Communicator", "Context", "ContextInUseError", "ConvergenceWarning",
    "Counts", "DeviceError", "DimensionMismatchError", "DirmnError", "DirmnLibraryNotFound",
    "FitResult", "GroupTestResult", "InternalError", "InvalidArgumentError",
    "InvalidCountsError", "InvalidParameterError", "LoglikSum", "Mixture", "MixtureSelection",
    "Moments", "NotSupportedError", "NumericOverflowError", "OutOfMemoryError",
    "OverdispersionTestResult", "PowerResult", "RegressionResult", "TestGroupsResult",
    "TestProportionsResult", "WaldTest", "WrongContextError", "aic", "backend_compiled", "bic",
    "cuda_device_count", "default_context", "fit", "laplace", "library_path",
    "library_version", "loglik", "loglik_sum", "logpmf", "mixture", "moments",
    "overdispersion_test", "power_groups", "power_proportions", "regression",
    "regression_groups", "rvs", "test_groups", "test_proportions",
]
