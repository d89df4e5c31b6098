"""Empirical privacy auditing — a statistical lower bound on ε — and a sensitivity checker.

:func:`check_sensitivity` runs a mechanism on a dataset and a neighbour with the noise frozen and checks that the
control flow is the same, that every statistic moved by no more than its declared sensitivity, that both release or
both refuse alike, and that the releases show nothing but their values differently (see there);
:func:`check_release_classes`, :func:`degenerate_neighbours`, :func:`neighbours_with_a_lone_key` and
:func:`check_forked_spend` check the classes of hole the reviews found for any release (``audit._classes``); the
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
from ._classes import check_forked_spend, check_release_classes, degenerate_neighbours, neighbours_with_a_lone_key
from ._empirical import AuditResult, audit, clopper_pearson, float_laplace_support, low_bit_distance, on_grid
from ._sensitivity import (
    SensitivityReport,
    StatisticCheck,
    check_sensitivity,
    draw,
    observe,
    structure,
    structure_differences,
)

__all__ = [
    "AuditResult",
    "SensitivityReport",
    "StatisticCheck",
    "audit",
    "check_forked_spend",
    "check_release_classes",
    "check_sensitivity",
    "clopper_pearson",
    "degenerate_neighbours",
    "draw",
    "float_laplace_support",
    "low_bit_distance",
    "neighbours_at_bounds",
    "neighbours_of_a_unit",
    "neighbours_on_the_sphere",
    "neighbours_with_a_lone_key",
    "neighbours_with_labels",
    "observe",
    "on_grid",
    "structure",
    "structure_differences",
]
