"""Empirical privacy auditing: a statistical lower bound on ε.

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

from ._validation import check_delta, check_int
from .noise.random import check_rng

__all__ = ["AuditResult", "audit", "clopper_pearson"]


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


def audit(mechanism: Callable[[object, np.random.Generator], object], data, neighbour,
          event: Callable[[object], bool], *, n_runs: int = 10_000, delta: float = 0.0,
          alpha: float = 0.05, rng=None) -> AuditResult:
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
