"""Independent references, in plain Python (math.lgamma and mpmath) and NumPy/SciPy
(scipy.special.gammaln), never dirmn."""

import math

import mpmath
import numpy as np

mpmath.mp.dps = 40


def loglik_row(x, alpha, full=True):
    """The DM log pmf (or kernel) of one row, in mpmath, as a float."""
    a = [mpmath.mpf(float(v)) for v in alpha]
    x = [mpmath.mpf(float(v)) for v in x]
    N, A = sum(x), sum(a)
    if N == 0:
        return 0.0
    s = mpmath.loggamma(A) - mpmath.loggamma(N + A)
    for n, av in zip(x, a):
        s += mpmath.loggamma(n + av) - mpmath.loggamma(av)
    if full:
        s += mpmath.loggamma(N + 1) - sum(mpmath.loggamma(n + 1) for n in x)
    return float(s)


def loglik_rows(X, alpha, full=True):
    return [loglik_row(x, alpha, full) for x in X]


def loglik_fast(X, alpha, full=True):
    """The same with math.lgamma (for optimisation references)."""
    A = sum(alpha)
    total = 0.0
    for x in X:
        N = sum(x)
        if N == 0:
            continue
        s = math.lgamma(A) - math.lgamma(N + A)
        for n, a in zip(x, alpha):
            s += math.lgamma(n + a) - math.lgamma(a)
        if full:
            s += math.lgamma(N + 1) - sum(math.lgamma(n + 1) for n in x)
        total += s
    return total


def loglik_rows_np(X, alpha, full=True):
    """Per-row DM log pmf (or kernel) with scipy.special.gammaln, vectorised.

    ``alpha`` is one vector (V) or one vector per row (rows x V); a row of
    zeros gives 0.
    """
    from scipy.special import gammaln

    X = np.asarray(X, dtype=np.float64)
    A = np.broadcast_to(np.asarray(alpha, dtype=np.float64), X.shape)
    N, S = X.sum(axis=1), A.sum(axis=1)
    out = gammaln(S) - gammaln(N + S) + (gammaln(X + A) - gammaln(A)).sum(axis=1)
    if full:
        out += gammaln(N + 1) - gammaln(X + 1).sum(axis=1)
    return np.where(N > 0, out, 0.0)


def relerr(got, want):
    """Largest |got - want| / max(|want|, 1); inf for a non-finite entry."""
    e = 0.0
    for g, w in zip(list(got), list(want)):
        if not math.isfinite(g):
            return math.inf
        e = max(e, abs(g - w) / max(abs(w), 1.0))
    return e


# splitmix64 (Steele, Lea & Flood 2014; the constants of Vigna's reference
# implementation) and the library's derived keys from it: the seeds of the
# tables a power simulation draws, re-derived to replay them.
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def random_bits(key, counter):
    """splitmix64's output for a state started at ``key``, advanced
    ``counter + 1`` times."""
    z = (key + (counter + 1) * GAMMA) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def derived_key(seed, family, index):
    return random_bits(random_bits(seed, family), index)


def fd_hessian(f, b, h=1e-4):
    """The Hessian of f at b by central differences of step h (the
    regression tests' reference for the library's covariances)."""
    n = b.size
    H = np.empty((n, n))
    E = np.eye(n) * h
    for i in range(n):
        for j in range(i, n):
            H[i, j] = H[j, i] = (f(b + E[i] + E[j]) - f(b + E[i] - E[j])
                                 - f(b - E[i] + E[j]) + f(b - E[i] - E[j])) / (4 * h * h)
    return H
