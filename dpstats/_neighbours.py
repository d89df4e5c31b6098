"""Worst-case neighbouring datasets for the sensitivity checker (:mod:`dpstats.audit`) and for the test cases the
registry declares (:mod:`dpstats.registry`): pure NumPy, at the bottom of the package so that every family can name
its neighbours next to its declaration."""

from __future__ import annotations

import numpy as np

__all__ = ["neighbours_at_bounds", "neighbours_of_a_unit", "neighbours_on_the_sphere", "neighbours_with_labels"]


def neighbours_at_bounds(lower, upper, n: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of datasets of ``n`` records in [lower, upper] that differ in one record, moved between the bounds: all
    records at ``lower`` against one at ``upper``; all at ``upper`` against one at ``lower``; and half at each
    bound against one record moved across (the worst cases of sums, means, variances, counts in bins, ranks).
    ``lower`` and ``upper`` are numbers or arrays (one value per coordinate of a record)."""
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    pairs = []
    for base, moved in ((lo, hi), (hi, lo)):
        data = np.broadcast_to(base, (n, *base.shape)).copy()
        neighbour = data.copy()
        neighbour[0] = moved
        pairs.append((data, neighbour))
    half = np.broadcast_to(lo, (n, *lo.shape)).copy()
    half[: n // 2] = hi
    across = half.copy()
    across[0] = lo
    pairs.append((half, across))
    return pairs


def neighbours_on_the_sphere(n: int = 6, d: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of n × d datasets of rows with ‖x‖₂ <= 1 that differ in one row of norm 1: the row e₁ replaced by e₂
    (orthogonal: the worst case of second-moment statistics, ‖xxᵀ − x′x′ᵀ‖_F = √2) and by −e₁ (of linear ones,
    ‖x − x′‖ = 2); the other rows are spread over the sphere."""
    rows = np.random.default_rng(n * 1000 + d).normal(size=(n, d))
    rows /= 2 * np.linalg.norm(rows, axis=1, keepdims=True)
    rows[0] = np.eye(d)[0]
    pairs = []
    for replacement in (np.eye(d)[1 % d], -np.eye(d)[0]):
        neighbour = rows.copy()
        neighbour[0] = replacement
        pairs.append((rows, neighbour))
    return pairs


def neighbours_with_labels(n: int = 8, d: int = 3) -> list[tuple[tuple, tuple]]:
    """Pairs of labelled datasets (X, y), rows of norm <= 1 and labels ±1, that differ in one example of norm 1:
    its label flipped, and the example moved to the opposite point with its label flipped too."""
    rows = np.random.default_rng(n * 1000 + d).normal(size=(n, d))
    rows /= 4 * np.linalg.norm(rows, axis=1, keepdims=True)
    rows[0] = np.eye(d)[0]
    labels = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    flipped = labels.copy()
    flipped[0] = -1.0
    moved = rows.copy()
    moved[0] = -moved[0]
    return [((rows, labels), (rows, flipped)), ((rows, labels), (moved, flipped))]


def neighbours_of_a_unit(lower: float, upper: float, units: int = 4, max_rows: int = 3) -> list[tuple[tuple, tuple]]:
    """Pairs of (values, identifiers) datasets that differ in all records of one privacy unit: unit 0 with one
    record at ``lower`` against ``max_rows`` records at ``upper`` (and the reverse); the other units keep one record
    each. The number of records changes too, as the replace-one-unit relation allows."""
    others = np.full(units - 1, (lower + upper) / 2)
    ids = np.arange(1, units)
    one = (np.concatenate([[lower], others]), np.concatenate([[0], ids]))
    many = (np.concatenate([np.full(max_rows, upper), others]), np.concatenate([np.zeros(max_rows, int), ids]))
    return [(one, many), (many, one)]
