"""Empirical privacy auditing — a statistical lower bound on ε — and a sensitivity checker.

:func:`check_sensitivity` runs a mechanism on a dataset and a neighbour with the noise frozen and checks that the
control flow is the same and that every statistic moved by no more than its declared sensitivity (see there); the
rest of this docstring is about :func:`audit`.

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

from .._neighbours import neighbours_at_bounds, neighbours_of_a_unit, neighbours_on_the_sphere, neighbours_with_labels
from ._empirical import AuditResult, audit, clopper_pearson, float_laplace_support, low_bit_distance, on_grid
from ._sensitivity import SensitivityReport, StatisticCheck, check_sensitivity, draw, observe

__all__ = [
    "AuditResult",
    "SensitivityReport",
    "StatisticCheck",
    "audit",
    "check_sensitivity",
    "clopper_pearson",
    "draw",
    "float_laplace_support",
    "low_bit_distance",
    "neighbours_at_bounds",
    "neighbours_of_a_unit",
    "neighbours_on_the_sphere",
    "neighbours_with_labels",
    "observe",
    "on_grid",
]
