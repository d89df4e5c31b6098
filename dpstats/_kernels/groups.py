"""Group-by on NumPy rows: keys as codes, contribution bounding per key, and the exact per-key statistics.

A grouped release (:mod:`dpstats.groups`) needs, for every key, exact integer statistics of the rows that survive
contribution bounding: the number of distinct privacy units holding the key, the rows kept, the weights of the
weighted partition selection (:mod:`dpstats.noise.selection`), the fixed-point sums (and sums of squares) of the
values, or the cells of the values on a quantile's public grid. :func:`key_table` computes them for one block of
rows; :func:`merge_tables` adds the tables of blocks that share no unit (the partitions of a Dask shuffle by unit).

**Bounding.** Two public parameters, k = ``max_groups`` and m = ``max_rows``:

* ``max_groups=k``: each unit keeps at most k of its keys, and at most m of its rows in each kept key. A (unit,
  key) pair's priority is a keyed hash of the unit's *value*, the key's *value* and a random 64-bit key drawn from
  the caller's random source; each unit keeps its k pairs of smallest priority (ties, which need two 64-bit hashes
  to collide, are broken by the keys' values), then in each kept pair its m rows of smallest priority
  (:func:`dpstats._kernels.units.select_rows`, salted with the pair's hash).
* ``max_groups=None``: each unit keeps at most m rows in total (in whatever keys they fall), as in an ungrouped
  release (:func:`~dpstats._kernels.units.select_rows`); its kept rows hold at most m keys.
* Without a privacy unit every row is its own unit: one key, one row.

The choice for unit u depends only on u's rows and the random key, never on the order of the rows or on any other
unit: the codes used to group rows are compared for equality only, and every priority is a hash of values. So the
kept rows of two neighbours (which differ in all rows of one unit) differ in that unit's at most k keys and k·m
rows (or m rows in m keys), and in nothing else; the privacy argument of every grouped statistic is over those.

Keys are integers, floating-point numbers or strings of one kind (:func:`dpstats._kernels.units.canonical_ids`);
a missing key (None, NaN) is counted, not grouped (the release refuses it). With public ``categories`` the keys are
looked up in the list instead (codes in the list's order; a key outside it is counted).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .fixed_point import FixedPoint
from .reduce import ExactSum
from .units import by_unit_then_priority, canonical_ids, mix, ranks_within, select_rows, value_hashes

__all__ = ["GroupSpec", "KeyTable", "factorize", "key_table", "merge_tables"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: Weights of the weighted selection: w_d = ⌊2^20/√d⌋ in units of 2^-20 (:func:`dpstats.noise.selection.unit_weight`).
_WEIGHT_BITS = 20
#: Rows summed per np.bincount of integer-valued floats below 2^b: 2^(52 - b), so every partial sum is exact.
_SUM_SPLIT = 18  # q = a·2^18 + b, |a| <= 2^19, 0 <= b < 2^18 (records of 36 bits)
_SQUARE_SPLIT = 13  # q = a·2^13 + b (records of 26 bits): a², ab, b² below 2^27


@dataclass(frozen=True)
class GroupSpec:
    """What a grouped release reads from the rows (public parameters only).

    Attributes
    ----------
    max_rows : int
        m: rows kept per (unit, key) with ``max_groups``, per unit without (1 without a privacy unit).
    max_groups : int or None
        k: keys kept per unit (None: the unit's m rows in any keys).
    key : int
        The random 64-bit key of the bounding (drawn from the caller's random source).
    by_unit : bool
        Whether rows carry privacy units (else every row is its own unit).
    weights : bool
        Compute the weights of the weighted selection.
    grid : FixedPoint or None
        The values' fixed-point grid: compute per-key sums (and sums of squares with ``squares``).
    clip : bool
        Clip the values to the grid's bounds before rounding (they were checked, or are clipped on purpose).
    squares : bool
    cells : callable or None
        ``cells(values)``: each row's cell on a quantile's public grid (int64): compute per-key cell counts.
    categories : tuple or None
        Public keys: rows are grouped by their position in this list.
    """

    max_rows: int = 1
    max_groups: int | None = None
    key: int = 0
    by_unit: bool = False
    weights: bool = False
    grid: FixedPoint | None = None
    clip: bool = False
    squares: bool = False
    cells: Callable | None = None
    categories: tuple | None = None


@dataclass(frozen=True)
class KeyTable:
    """Exact per-key statistics of the kept rows of some units (:func:`key_table`), keys sorted.

    ``keys`` holds the distinct keys (canonical values) or, with categories, their positions in the list.
    ``units``, ``rows`` and ``weights`` are int64 per key. ``sums`` (keys × columns × 2) holds Σa and Σb of the
    split q = a·2^18 + b of the fixed-point records, ``squares`` (keys × columns × 3) Σa², Σab and Σb² of
    q = a·2^13 + b: int64 parts that add without overflow for fewer than 2^36 rows, combined into Python integers
    by :meth:`exact_sums` and :meth:`exact_squares`. ``cells`` is (key index, cell, count) of every distinct
    (key, cell), sorted. ``n_units`` counts the units (rows without a privacy unit); ``missing`` and ``outside``
    count the rows whose key is missing or not among the categories (the release raises for them, so nothing else
    is computed then).
    """

    keys: np.ndarray
    units: np.ndarray
    rows: np.ndarray
    weights: np.ndarray | None = None
    sums: np.ndarray | None = None
    squares: np.ndarray | None = None
    cells: tuple | None = None
    n_units: int = 0
    missing: int = 0
    outside: int = 0

    @property
    def size(self) -> int:
        return int(self.keys.size)

    def exact_sums(self) -> np.ndarray:
        """Σq per key and column (an object array of Python integers)."""
        parts = self.sums.astype(object)
        return parts[..., 0] * (1 << _SUM_SPLIT) + parts[..., 1]

    def exact_squares(self) -> np.ndarray:
        """Σq² per key and column (an object array of Python integers)."""
        parts = self.squares.astype(object)
        return parts[..., 0] * (1 << (2 * _SQUARE_SPLIT)) + parts[..., 1] * (1 << (_SQUARE_SPLIT + 1)) + parts[..., 2]


# ----------------------------------------------------------------------------- keys as codes


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, sorted; the position of each value among them). Codes are compared for equality only and
    grow with the values, so an order by code is an order by value. Integers in a range at most a few times the
    number of values are counted directly (no sort)."""
    if values.size and values.dtype.kind in "iu":
        low, high = int(values.min()), int(values.max())
        if high - low < 4 * values.size + 4096:
            present = np.bincount(values - low, minlength=high - low + 1) > 0
            codes = np.cumsum(present) - 1
            return np.flatnonzero(present) + low, codes[values - low]
    distinct, codes = np.unique(values, return_inverse=True)
    return distinct, codes.reshape(-1)


def _keys_of(keys: np.ndarray, categories: tuple | None) -> tuple[np.ndarray | None, int, int]:
    """(canonical keys or category positions; rows with a missing key; rows outside the categories)."""
    if categories is not None:
        index = {c: i for i, c in enumerate(categories)}
        codes = _category_positions(np.asarray(keys, dtype=object), index)
        outside = int(np.count_nonzero(codes < 0))
        return (None, 0, outside) if outside else (codes, 0, 0)
    missing = _missing(keys)
    if missing:
        return None, missing, 0
    return canonical_ids(keys, "by"), 0, 0


def _missing(keys: np.ndarray) -> int:
    """Rows whose key is None or NaN."""
    if keys.dtype.kind == "f":
        return int(np.count_nonzero(np.isnan(keys)))
    if keys.dtype == object:
        return sum(1 for v in keys if v is None or (isinstance(v, numbers.Real) and v != v))
    return 0


def _category_positions(values: np.ndarray, index: dict) -> np.ndarray:
    """The position of each value in the categories (−1 outside; a missing value is outside), looking up each
    distinct value once."""

    def lookup(value) -> int:
        try:
            return index.get(value, -1)
        except TypeError:  # unhashable: not a category
            return -1

    try:
        distinct, inverse = np.unique(values, return_inverse=True)
    except TypeError:  # values of kinds that do not sort together (str and None): each value on its own
        return np.fromiter((lookup(v) for v in values), dtype=np.int64, count=values.size)
    return np.array([lookup(v) for v in distinct], dtype=np.int64)[inverse.reshape(-1)]


# ----------------------------------------------------------------------------- the table of one block


def key_table(keys, units, values, spec: GroupSpec) -> KeyTable:
    """The exact per-key statistics of one block of rows after contribution bounding (module docstring).

    Parameters
    ----------
    keys : numpy.ndarray
        One key per row (any NumPy dtype; object for labels).
    units : numpy.ndarray or None
        The canonical privacy-unit identifiers (:func:`~dpstats._kernels.units.canonical_ids`), or None.
    values : numpy.ndarray or None
        The rows' values (n, or n × d, float64, checked against the grid's bounds), when sums or cells are needed.
    spec : GroupSpec
    """
    keys = np.asarray(keys)
    canonical, missing, outside = _keys_of(keys, spec.categories)
    if canonical is None:
        none = np.zeros(0, dtype=np.int64)
        return KeyTable(none, none, none, missing=missing, outside=outside)
    distinct, key_codes = factorize(canonical)
    if not spec.by_unit:
        rows = np.arange(key_codes.size)
        return _per_key(distinct, key_codes, rows, None, values, spec, pair_key=key_codes, degree=None)
    unit_values, unit_codes = factorize(np.asarray(units))
    unit_hash, key_hash = value_hashes(unit_values, spec.key), value_hashes(_hashable(distinct), spec.key ^ 1)
    counted = None
    if spec.max_groups is None:
        rows = np.flatnonzero(_rows_per_unit(np.asarray(units), canonical, values, spec))
        pairs = _Pairs.of(unit_codes[rows], key_codes[rows], distinct.size)
    else:
        pairs = _Pairs.of(unit_codes, key_codes, distinct.size)
        keep_pair = pairs.bounded(unit_hash, key_hash, spec.max_groups, np.uint64(spec.key))
        rows = _rows_of_pairs(pairs, keep_pair, unit_codes, key_codes, unit_hash, key_hash, values, spec)
        pairs = pairs.subset(keep_pair, spec.max_rows)
        if rows is None:  # only counts: the rows of a pair are interchangeable, min(rows, m) of them are kept
            counted = pairs.rows_per_key()
            rows = np.zeros(0, dtype=np.int64)
    degree = np.bincount(pairs.unit, minlength=unit_values.size)[pairs.unit]  # the keys each pair's unit kept
    table = _per_key(distinct, key_codes[rows], rows, counted, values, spec, pair_key=pairs.key, degree=degree)
    return replace(table, n_units=int(unit_values.size))


def _hashable(distinct: np.ndarray) -> np.ndarray:
    """The keys as an array :func:`~dpstats._kernels.units.value_hashes` takes (positions in a list are int64)."""
    return distinct if distinct.dtype.kind in "iufU" else distinct.astype(str)


def _rows_per_unit(units: np.ndarray, keys: np.ndarray, values, spec: GroupSpec) -> np.ndarray:
    """``max_groups=None``: the mask of the at most m rows each unit keeps (its key and values set the rows'
    priorities, as in an ungrouped release)."""
    arrays = (keys,) if values is None else (keys, np.asarray(values))
    return select_rows(units, arrays, spec.max_rows, spec.key)[0]


@dataclass(frozen=True)
class _Pairs:
    """The distinct (unit, key) pairs of some rows, sorted by unit then key: their codes and rows."""

    unit: np.ndarray
    key: np.ndarray
    rows: np.ndarray
    n_keys: int

    @classmethod
    def of(cls, unit_codes: np.ndarray, key_codes: np.ndarray, n_keys: int) -> _Pairs:
        combined = np.sort(unit_codes.astype(np.int64) * n_keys + key_codes)
        starts = _run_starts(combined)
        firsts = combined[starts]
        return cls(firsts // n_keys, firsts % n_keys, np.diff(np.append(starts, combined.size)), n_keys)

    def combined(self) -> np.ndarray:
        return self.unit * self.n_keys + self.key

    def salts(self, unit_hash: np.ndarray, key_hash: np.ndarray, salt: np.uint64) -> np.ndarray:
        """A keyed hash of each pair's unit and key *values* (and the random key)."""
        with np.errstate(over="ignore"):
            return mix(unit_hash[self.unit] ^ mix(key_hash[self.key] ^ salt) * _GOLDEN)

    def bounded(self, unit_hash, key_hash, max_groups: int, salt: np.uint64) -> np.ndarray:
        """The mask of the pairs kept: each unit's ``max_groups`` pairs of smallest priority."""
        keep = np.ones(self.unit.size, dtype=bool)
        per_unit = np.diff(np.append(_run_starts(self.unit), self.unit.size))
        heavy = per_unit > max_groups
        if not heavy.any():
            return keep
        rows = np.flatnonzero(np.repeat(heavy, per_unit))
        sizes = per_unit[heavy]
        run = np.repeat(np.arange(sizes.size, dtype=np.uint64), sizes)
        priority = self.salts(unit_hash, key_hash, salt)[rows]
        order = by_unit_then_priority(run, priority, sizes.size)  # stable: ties by key, i.e. by the key's value
        keep[rows[order[ranks_within(sizes) >= max_groups]]] = False
        return keep

    def subset(self, mask: np.ndarray, max_rows: int) -> _Pairs:
        """The kept pairs, each with at most ``max_rows`` rows."""
        return _Pairs(self.unit[mask], self.key[mask], np.minimum(self.rows[mask], max_rows), self.n_keys)

    def rows_per_key(self) -> np.ndarray:
        """Σ rows per key (exact: every total is at most the number of rows, below 2^53)."""
        return np.bincount(self.key, weights=self.rows, minlength=self.n_keys).astype(np.int64)


def _run_starts(sorted_values: np.ndarray) -> np.ndarray:
    """The first position of every run of equal values of a sorted array."""
    if not sorted_values.size:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]))


def _rows_of_pairs(pairs: _Pairs, keep_pair, unit_codes, key_codes, unit_hash, key_hash, values, spec):
    """The positions of the rows kept with ``max_groups``: those of the kept pairs, at most m per pair (chosen by
    their values' priorities, salted with the pair's hash); None when only counts are needed (the rows of a pair
    are then interchangeable)."""
    if values is None and spec.cells is None:
        return None
    if keep_pair.all() and pairs.rows.max(initial=0) <= spec.max_rows:
        return np.arange(unit_codes.size)
    pair_of_row = np.searchsorted(pairs.combined(), unit_codes.astype(np.int64) * pairs.n_keys + key_codes)
    rows = np.flatnonzero(keep_pair[pair_of_row])
    if pairs.rows[keep_pair].max(initial=0) <= spec.max_rows:
        return rows
    salts = pairs.salts(unit_hash, key_hash, np.uint64(spec.key))[pair_of_row[rows]]
    keep, _ = select_rows(pair_of_row[rows], (np.asarray(values)[rows],), spec.max_rows, spec.key, salts=salts)
    return rows[keep]


def _per_key(distinct, key_codes, rows, counted, values, spec: GroupSpec, *, pair_key, degree) -> KeyTable:
    """The statistics of the kept rows (positions ``rows`` with keys ``key_codes``; or their number per key,
    ``counted``) and of the kept (unit, key) pairs (their keys ``pair_key``; ``degree``: the number of keys of each
    pair's unit, None for one each)."""
    size = distinct.size
    units = np.bincount(pair_key, minlength=size).astype(np.int64)
    rows_per_key = np.bincount(key_codes, minlength=size).astype(np.int64) if counted is None else counted
    weights = None
    if spec.weights:
        table = np.array([0] + [_weight(d) for d in range(1, int(np.max(degree, initial=1)) + 1)], dtype=np.int64)
        per_pair = np.full(pair_key.size, table[1]) if degree is None else table[degree]
        weights = _key_sums(pair_key, per_pair.astype(np.float64), size, _WEIGHT_BITS + 1)
    sums = squares = cells = None
    if spec.grid is not None or spec.cells is not None:
        data = np.asarray(values)[rows]
        data = data.reshape(data.shape[0], -1)
        if spec.grid is not None:
            q = spec.grid.quantized(data, spec.clip)
            sums = _split_sums(key_codes, q, size, _SUM_SPLIT, (_SUM_SPLIT + 2, _SUM_SPLIT))
            if spec.squares:
                squares = _square_parts(key_codes, q, size)
        if spec.cells is not None:
            cells = _cell_counts(key_codes, spec.cells(data[:, 0]))
    return KeyTable(distinct, units, rows_per_key, weights, sums, squares, cells, n_units=int(key_codes.size))


def _weight(d: int) -> int:
    """w_d = ⌊2^20/√d⌋ (:func:`dpstats.noise.selection.unit_weight`)."""
    return math.isqrt((1 << (2 * _WEIGHT_BITS)) // d)


def _key_sums(codes: np.ndarray, terms: np.ndarray, size: int, bits: int) -> np.ndarray:
    """Σ per key of integer-valued float ``terms`` of magnitude below 2^bits, exactly: np.bincount over blocks of
    2^(52 − bits) rows (every partial sum below 2^52), the blocks added by :class:`ExactSum` (int64 while it
    fits)."""
    total = ExactSum((size,), 2.0**52)
    step = 1 << (52 - bits)
    for start in range(0, max(1, codes.size), step):
        block = np.bincount(codes[start : start + step], weights=terms[start : start + step], minlength=size)
        total.add(block.astype(np.int64))
    return total.total()


def _split_sums(codes: np.ndarray, q: np.ndarray, size: int, split: int, bits: tuple[int, int]) -> np.ndarray:
    """(Σa, Σb) per key and column of q = a·2^split + b, 0 <= b < 2^split (keys × columns × 2, int64)."""
    out = np.empty((size, q.shape[1], 2), dtype=np.int64)
    for j in range(q.shape[1]):
        high = np.floor(q[:, j] / 2.0**split)
        out[:, j, 0] = _key_sums(codes, high, size, bits[0])
        out[:, j, 1] = _key_sums(codes, q[:, j] - high * 2.0**split, size, bits[1])
    return out


def _square_parts(codes: np.ndarray, q: np.ndarray, size: int) -> np.ndarray:
    """(Σa², Σab, Σb²) per key and column of q = a·2^13 + b (keys × columns × 3, int64)."""
    out = np.empty((size, q.shape[1], 3), dtype=np.int64)
    for j in range(q.shape[1]):
        a = np.floor(q[:, j] / 2.0**_SQUARE_SPLIT)
        b = q[:, j] - a * 2.0**_SQUARE_SPLIT
        for i, term in enumerate((a * a, a * b, b * b)):
            out[:, j, i] = _key_sums(codes, term, size, 2 * _SQUARE_SPLIT + 2)
    return out


def _cell_counts(codes: np.ndarray, cells: np.ndarray, counts: np.ndarray | None = None) -> tuple:
    """(key code, cell, count) of every distinct (key, cell), sorted by key then cell, from one (key, cell) per row
    (or per entry, with ``counts``)."""
    width = int(cells.max(initial=0)) + 1
    combined = codes.astype(np.int64) * width + cells
    if counts is None:
        combined = np.sort(combined)
        starts = _run_starts(combined)
        found = np.diff(np.append(starts, combined.size))
    else:
        order = np.argsort(combined, kind="stable")
        combined = combined[order]
        starts = _run_starts(combined)
        found = np.add.reduceat(counts[order], starts) if starts.size else counts[:0]
    firsts = combined[starts]
    return firsts // width, firsts % width, found.astype(np.int64)


# ----------------------------------------------------------------------------- adding tables


def merge_tables(tables: list[KeyTable]) -> KeyTable:
    """The table of the union of blocks that share no unit: per-key statistics added (int64, exact), keys merged
    and sorted."""
    missing, outside = sum(t.missing for t in tables), sum(t.outside for t in tables)
    n_units = sum(t.n_units for t in tables)
    present = [t for t in tables if t.size]
    if missing or outside or len(present) <= 1:
        table = present[0] if present else tables[0]
        return replace(table, n_units=n_units, missing=missing, outside=outside)
    distinct, codes = factorize(np.concatenate([t.keys for t in present]))

    def added(column):
        parts = [getattr(t, column) for t in present]
        if parts[0] is None:
            return None
        stacked = np.concatenate(parts)
        out = np.zeros((distinct.size, *stacked.shape[1:]), dtype=np.int64)
        np.add.at(out, codes, stacked)
        return out

    cells = None
    if present[0].cells is not None:
        offsets = np.cumsum([0] + [t.size for t in present[:-1]])
        key = np.concatenate([codes[o + t.cells[0]] for o, t in zip(offsets, present, strict=True)])
        cells = _cell_counts(
            key, np.concatenate([t.cells[1] for t in present]), np.concatenate([t.cells[2] for t in present])
        )
    columns = ("units", "rows", "weights", "sums", "squares")
    return KeyTable(distinct, *(added(c) for c in columns), cells, n_units)
