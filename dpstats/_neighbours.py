"""Worst-case neighbouring datasets for the sensitivity checker (:mod:`dpstats.audit`) and for the test cases the
registry declares (:mod:`dpstats.registry`): pure NumPy, at the bottom of the package so that every family can name
its neighbours next to its declaration."""

from __future__ import annotations

import numpy as np

__all__ = [
    "HEAVY",
    "heavy_ids",
    "heavy_rows",
    "heavy_values",
    "labels_changed",
    "long_rows",
    "matrix_rows",
    "neighbours_at_bounds",
    "neighbours_of_a_unit",
    "neighbours_on_the_sphere",
    "neighbours_with_labels",
    "orthogonal_rows",
    "rows_moved_between_keys",
    "rows_of_a_unit",
    "selected_rows",
    "trace_rows",
    "units_moved_between_keys",
]


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


def rows_of_a_unit() -> list[tuple[tuple, tuple]]:
    """Rows of norm <= 1 with privacy units ``(X, ids)``: unit 0 holds two rows e1, its neighbour two rows e2."""
    X = np.vstack([np.eye(3)[[0, 0]], np.random.default_rng(4).uniform(-0.3, 0.3, (4, 3))])
    ids = np.array([0, 0, 1, 2, 3, 4])
    moved = X.copy()
    moved[:2] = np.eye(3)[1]
    return [((X, ids), (moved, ids))]


def matrix_rows() -> list[tuple[tuple, tuple]]:
    """Hardt & Roth's relation: one row of A moved by a unit vector; the row is the largest, so that it dominates
    the range finder's basis (the projection's sensitivity, the largest row norm of the basis, is then attained)."""
    A = np.zeros((3, 5))
    A[0] = 3.0
    A[1, 1], A[2, 2] = 0.5, 0.25
    moved = A.copy()
    moved[0, 0] += 1.0
    return [((A,), (moved,))]


def trace_rows() -> list[tuple[tuple, tuple]]:
    """Rows on the sphere: e1 replaced by e2 (the Gram matrix's worst case) and by the zero row (the trace's and the
    sparse vector queries' worst case: a row of norm 1 leaves every clipping-bias bound)."""
    rows, moved = neighbours_on_the_sphere(6, 3)[0]
    empty = rows.copy()
    empty[0] = 0.0
    return [((rows,), (moved,)), ((rows,), (empty,))]


def long_rows() -> list[tuple[tuple, tuple]]:
    """Rows of norms 5 and 10 (a norm bound is needed): the longest row replaced by an orthogonal one of the same
    norm (the PCA step's worst case, after the private bound), and by a row of norm 1e-3 (the private quantile's:
    the largest norm becomes the smallest)."""
    rows, moved = neighbours_on_the_sphere(6, 3)[0]
    tiny = 10 * rows
    tiny[0] = 1e-3 * np.eye(3)[0]
    return [((10 * rows,), (10 * moved,)), ((10 * rows,), (tiny,))]


def labels_changed() -> list[tuple[tuple, tuple]]:
    """Categorical values: one record's label changed (a, a, b) -> (c, a, b)."""
    return [((np.array(["a", "a", "b"]),), (np.array(["c", "a", "b"]),))]


def rows_moved_between_keys() -> list[tuple[tuple, tuple]]:
    """Rows (value in [0, 1], key) over the public keys a, b, c (c empty): row 0, (1, a), moved to another group
    with its value changed, into the empty group (a new group) with either value, and its value changed in place."""
    x = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    keys = np.array(["a", "a", "a", "b", "b", "b"])
    pairs = []
    for value, key in ((0.0, "b"), (0.0, "c"), (1.0, "c"), (0.0, "a")):
        x2, k2 = x.copy(), keys.copy()
        x2[0], k2[0] = value, key
        pairs.append(((x, keys), (x2, k2)))
    return pairs


def units_moved_between_keys(groups: int, m: int = 2) -> list[tuple[tuple, tuple]]:
    """(values, keys, units): unit 0 holds m rows at 1 in each of ``groups`` keys (a; a and b), the other units
    one row at 1/2 each. Neighbours replace all of unit 0's rows: moved to new keys (c; c and d: new groups) or to
    other keys (b; b and a), with their values at 0 or kept."""
    held = ["a", "b"][:groups]
    tail = ["a", "b", "a", "b"]
    x = np.concatenate([np.ones(m * groups), np.full(4, 0.5)])
    keys = np.array([k for k in held for _ in range(m)] + tail)
    ids = np.concatenate([np.zeros(m * groups, int), [1, 2, 3, 4]])
    pairs = []
    for new in (["c", "d"][:groups], ["b", "a"][:groups]):
        moved = np.array([k for k in new for _ in range(m)] + tail)
        zeros = x.copy()
        zeros[: m * groups] = 0.0
        pairs += [((x, keys, ids), (zeros, moved, ids)), ((x, keys, ids), (x, moved, ids))]
    return pairs


def selected_rows(units: bool = True) -> list[tuple[tuple, tuple]]:
    """Keys selected privately (δ > 0): 20 rows (or units) in a, 20 in b; row 0 (value 1, key a) moved to b with
    value 0, so that both keys stay present. (Moving it to a new key changes the set of keys present, which the
    selection's threshold covers with δ, not a sensitivity; the group-by audits cover that part.)"""
    keys = np.array(["a"] * 20 + ["b"] * 20)
    x = np.full(40, 0.5)
    x[0] = 1.0
    moved, zeros = keys.copy(), x.copy()
    moved[0], zeros[0] = "b", 0.0
    if not units:
        return [((x, keys), (zeros, moved))]
    ids = np.arange(40)
    return [((x, keys, ids), (zeros, moved, ids))]


# ----------------------------------------------------------------------------- the audits' neighbours

#: The rows of the unit that changes in the unit-level audits (max_rows keeps all of them).
HEAVY = 16


def heavy_ids() -> np.ndarray:
    """The identifiers of the unit-level audits: the heavy unit 0 with :data:`HEAVY` rows and three units of one."""
    return np.r_[np.zeros(HEAVY, dtype=np.int64), np.arange(1, 4)]


def heavy_values(heavy: float, others: float = 0.5) -> np.ndarray:
    """Values of the heavy unit's rows (all ``heavy``) and the three others'."""
    return np.r_[np.full(HEAVY, heavy), [others] * 3]


def heavy_rows(row) -> np.ndarray:
    """The heavy unit's rows all equal to ``row`` (2-D), the others 0.5·e1."""
    X = np.zeros((HEAVY + 3, 2))
    X[:, 0] = 0.5
    X[:HEAVY] = row
    return X


def orthogonal_rows(d: int = 2, background: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Datasets differing in row 0 (e1 versus e2); the two other rows lie along e1 with norm ``background``."""
    X = np.zeros((3, d))
    X[:, 0] = background
    Xp = X.copy()
    X[0], Xp[0] = np.eye(d)[0], np.eye(d)[1]
    return X, Xp
