"""Shared fixtures. The package is imported from this source tree unless an
installed one is asked for (DIRMN_TEST_INSTALLED=1), and the library from
DIRMN_LIBRARY_PATH or the places dirmn._lib lists."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if os.environ.get("DIRMN_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.dirname(HERE))

import dirmn  # noqa: E402


@pytest.fixture(scope="session")
def ctx():
    """A CPU context shared by the tests of a session."""
    with dirmn.Context("cpu") as c:
        yield c


@pytest.fixture
def small():
    """A 5 x 4 table with a row of zeros' neighbour and every kind of cell."""
    return np.array([[3, 0, 4, 1], [2, 5, 1, 0], [0, 1, 2, 6], [1, 1, 1, 1], [4, 2, 0, 3]])


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


def repo_path(*parts):
    """A path inside the repository."""
    return os.path.join(REPO, *parts)
