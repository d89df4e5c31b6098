"""Empirical privacy auditing: a statistical lower bound on ε from many runs on two neighbouring datasets, and the
floating-point attacks of Mironov (2012).

For neighbouring datasets D, D′ and an output event E, an (ε, δ)-DP mechanism
satisfies P[M(D) ∈ E] <= e^ε P[M(D′) ∈ E] + δ, hence::

    ε >= ln((P[M(D) ∈ E] − δ) / P[M(D′) ∈ E])

:func:`audit` runs the mechanism many times on both datasets, estimates both
probabilities, and turns Clopper–Pearson confidence bounds on them into a lower
confidence bound on ε. It checks E and its complement, in both directions (four
candidate bounds) and splits α between the eight one-sided intervals (union
bound), so ``epsilon_lower`` is below the true ε with probability >= 1 − α.

An audit can only refute a claim: a bound above the claimed ε proves the
mechanism (or its calibration) wrong; a bound below it proves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_delta, check_int
from ..noise.random import check_rng

__all__ = ["AuditResult", "audit", "clopper_pearson", "float_laplace_support", "low_bit_distance", "on_grid"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound (level 1 − α) on the mechanism's ε; ``inf`` only if
        an event has probability > δ under one dataset and was never seen under
        the other *and* the run count makes the upper bound zero (it never does
        for finite runs: see ``epsilon_point``).
    epsilon_point : float
        Plug-in estimate from the observed frequencies (``inf`` when an event was
        seen under one dataset and never under the other).
    counts : tuple of int
        How often E occurred under D and under D′.
    n_runs : int
        Runs per dataset.
    alpha, delta : float
        Confidence level and the δ the bound accounts for.
    """

    epsilon_lower: float
    epsilon_point: float
    counts: tuple[int, int]
    n_runs: int
    alpha: float
    delta: float


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds, each holding with probability >= 1 − α."""
    from scipy.stats import beta

    lower = 0.0 if successes == 0 else float(beta.ppf(alpha, successes, trials - successes + 1))
    upper = 1.0 if successes == trials else float(beta.ppf(1 - alpha, successes + 1, trials - successes))
    return lower, upper


def _log_ratio(numerator: float, denominator: float) -> float:
    if numerator <= 0:
        return -math.inf
    if denominator <= 0:
        return math.inf
    return math.log(numerator / denominator)


def audit(
    mechanism: Callable[[object, np.random.Generator], object],
    data,
    neighbour,
    event: Callable[[object], bool],
    *,
    n_runs: int = 10_000,
    delta: float = 0.0,
    alpha: float = 0.05,
    rng=None,
) -> AuditResult:
    """Estimate a lower bound on ε from two neighbouring datasets and an output event.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, rng) -> output``; called ``n_runs`` times on each dataset.
    data, neighbour : object
        Two neighbouring datasets (they differ in one record).
    event : callable
        ``event(output) -> bool``: the output set E.
    n_runs : int, default 10000
        Runs per dataset.
    delta : float, default 0.0
        The mechanism's claimed δ, subtracted as in the definition.
    alpha : float, default 0.05
        1 − confidence level of ``epsilon_lower``.
    rng : None, int or numpy.random.Generator
        Seed for the runs.

    Returns
    -------
    AuditResult

    References
    ----------
    Jagielski, Ullman & Oprea, "Auditing differentially private machine
    learning: how private is private SGD?", NeurIPS 2020. Ding, Wang, Wang,
    Zhang & Kifer, "Detecting violations of differential privacy", CCS 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.audit import audit
    >>> res = audit(lambda x, r: dps.mean(x, 1.0, bounds=(0, 1), rng=r), [0.0], [1.0],
    ...             lambda out: out > 0.5, n_runs=2000, rng=0)
    >>> res.epsilon_lower < 1.0
    True
    """
    n_runs = check_int(n_runs, "n_runs")
    delta = check_delta(delta)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must satisfy 0 < alpha < 1; got {alpha!r}")
    rng = check_rng(rng)
    hits = [sum(bool(event(mechanism(ds, rng))) for _ in range(n_runs)) for ds in (data, neighbour)]
    a = alpha / 8
    lowers, uppers = [], []
    for k in (hits[0], hits[1], n_runs - hits[0], n_runs - hits[1]):
        lo, up = clopper_pearson(k, n_runs, a)
        lowers.append(lo)
        uppers.append(up)
    # Pairs (event under one dataset, same event under the other): E and its complement, both ways.
    pairs = ((0, 1), (1, 0), (2, 3), (3, 2))
    lower_bound = max(_log_ratio(lowers[i] - delta, uppers[j]) for i, j in pairs)
    freqs = [hits[0], hits[1], n_runs - hits[0], n_runs - hits[1]]
    point = max(_log_ratio(freqs[i] / n_runs - delta, freqs[j] / n_runs) for i, j in pairs)
    return AuditResult(max(lower_bound, 0.0), max(point, 0.0), (hits[0], hits[1]), n_runs, alpha, delta)


# ----------------------------------------------------------------------------- floating-point attacks (Mironov 2012)


def float_laplace_support(outputs, value: float, scale: float) -> np.ndarray:
    """Whether each of ``outputs`` can be produced by ``value + Generator.laplace(0, scale)`` in floating point.

    NumPy's Laplace sampler draws U = k·2^-53 (k a 53-bit integer) and returns
    ``scale·log(U + U)`` for U < 1/2, ``−scale·log(2 − U − U)`` otherwise; the
    release is the double nearest to ``value + noise``. For an output y this
    finds the U that the noise y − value would need, and checks the few
    candidates k around it exactly, by recomputing the release with NumPy's own
    arithmetic. This is the attack of Mironov (CCS 2012): an output that one
    dataset's true value cannot produce betrays the other dataset with
    certainty.

    Parameters
    ----------
    outputs : array_like of float
        Released values.
    value : float
        The true statistic of the hypothesised dataset.
    scale : float
        The Laplace scale b the releases used.

    Returns
    -------
    numpy.ndarray of bool
    """
    y = np.asarray(outputs, dtype=np.float64).ravel()
    noise = y - value
    two_u = np.exp(-np.abs(noise) / scale)  # U + U (lower branch) or 2 − U − U (upper branch)
    k0 = np.floor(np.where(noise < 0, two_u / 2, 1.0 - two_u / 2) * 2.0**53)
    log = np.frompyfunc(math.log, 1, 1)  # the C library's log, as NumPy's sampler calls it (not the SIMD ufunc)
    possible = np.zeros(y.size, dtype=bool)
    for shift in range(-4, 5):
        U = np.clip(k0 + shift, 1, 2.0**53 - 1) * 2.0**-53
        upper = U >= 0.5
        z = np.where(
            upper,
            0.0 - scale * log(np.where(upper, 2.0 - U - U, 1.0)).astype(np.float64),
            0.0 + scale * log(np.where(upper, 1.0, U + U)).astype(np.float64),
        )
        possible |= (value + z) == y
    return possible.reshape(np.shape(outputs))


def low_bit_distance(a, b, bits: int = 8) -> float:
    """Total variation distance between the distributions of the lowest ``bits`` mantissa bits of two samples.

    For a floating-point mechanism the low-order bits of its releases depend on
    the true value (Mironov 2012), so they differ between neighbouring datasets
    (0.1–0.3 for float Laplace and Gaussian noise). Releases on a public grid
    (:mod:`dpstats.noise.release`) have no data-dependent low bits: the
    distance is only sampling error.
    """

    def histogram(x):
        mantissa = np.asarray(x, dtype=np.float64).ravel().view(np.uint64) & np.uint64((1 << bits) - 1)
        return np.bincount(mantissa.astype(np.int64), minlength=1 << bits) / mantissa.size

    return float(0.5 * np.abs(histogram(a) - histogram(b)).sum())


def on_grid(values, grid: float) -> bool:
    """Whether every value is an integer multiple of ``grid`` (a power of two): the support of a grid release
    does not depend on the data."""
    scaled = np.asarray(values, dtype=np.float64) / grid
    return bool(np.array_equal(scaled, np.rint(scaled)))
