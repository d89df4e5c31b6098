"""Group-by on NumPy rows: keys as codes, contribution bounding per key, and the exact per-key statistics.

A grouped release (``descriptive._grouped``) needs, for every key, exact integer statistics of the rows that survive
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

**A key's type is not public.** The canonical type of the keys (int64, float64 or str) is chosen from *all* keys:
one unit's 7.5 among integers makes it float64. So it is used only to group rows (equality, order), and nothing
that leaves a release depends on it: a pair's priority hashes the key's value (:func:`_key_hashes`: 7.0 hashes
as 7), so one unit's key type cannot change which keys another unit keeps; and the released keys are typed from the
keys' declared dtype and the released keys alone (:func:`released_keys`). The Dask engine makes keys canonical over
all partitions before grouping (``dask_engine._canonical_keys``), as memory does.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .fixed_point import FixedPoint
from .reduce import ExactSum
from .units import canonical_ids, mix, ranks_within, select_rows, value_hashes

__all__ = ["GroupSpec", "KeyTable", "category_positions", "factorize", "key_table", "merge_tables", "released_keys"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: The leading bits of a (unit, key) pair's keyed hash that order a unit's keys (ties, at 2^-20 per pair of keys
#: of one unit, go to the smaller key: a function of the unit's own keys).
PRIORITY_BITS = 20
#: Weights of the weighted selection: w_d = ⌊2^20/√d⌋ in units of 2^-20 (:func:`dpstats.noise.selection.unit_weight`).
_WEIGHT_BITS = 20
_INT64_LIMIT = 2.0**63
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
    name : str
        The argument that holds the keys, for error messages.
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
    name: str = "by"


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
        span = high - low + 1
        if span <= 4 * values.size + 4096:
            shifted = values - low if low else values
            present = np.bincount(shifted, minlength=span) > 0
            if present.all():  # the values are their own codes
                return np.arange(low, high + 1, dtype=values.dtype), shifted
            codes = np.cumsum(present, dtype=np.int64) - 1
            return np.flatnonzero(present) + low, codes.astype(np.int32 if span < 2**31 else np.int64)[shifted]
    distinct, codes = np.unique(values, return_inverse=True)
    return distinct, codes.reshape(-1)


def _unit_codes(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a value per code, the code of each unit): integers in a range at most a few times their number are their
    own codes, value − min (some codes then belong to no unit: nothing but equality and the values' hashes is read
    from them, so they need not be dense); anything else is factorized."""
    if units.size and units.dtype.kind in "iu":
        low, high = int(units.min()), int(units.max())
        if high - low < 4 * units.size + 4096:
            return np.arange(low, high + 1, dtype=units.dtype), units - low if low else units
    return factorize(units)


def _keys_of(keys: np.ndarray, categories: tuple | None, name: str = "by") -> tuple[np.ndarray | None, int, int]:
    """(canonical keys or category positions; rows with a missing key; rows outside the categories)."""
    if categories is not None:
        codes = category_positions(keys, categories)
        outside = int(np.count_nonzero(codes < 0))
        return (None, 0, outside) if outside else (codes, 0, 0)
    missing = _missing(keys)
    if missing:
        return None, missing, 0
    return canonical_ids(keys, name), 0, 0


def _missing(keys: np.ndarray) -> int:
    """Rows whose key is None or NaN."""
    if keys.dtype.kind == "f":
        return int(np.count_nonzero(np.isnan(keys)))
    if keys.dtype == object:
        return sum(1 for v in keys if v is None or (isinstance(v, numbers.Real) and v != v))
    return 0


def category_positions(keys, categories: tuple) -> np.ndarray:
    """The position of each key in the public ``categories`` (int64; −1 for a key outside them, a missing key
    among them): keys are looked up by Python equality, so 7 and 7.0 are one key."""
    return _category_positions(np.asarray(keys, dtype=object), {c: i for i, c in enumerate(categories)})


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


def released_keys(keys: np.ndarray, declared: np.dtype) -> np.ndarray | list:
    """The released keys (canonical values, from :attr:`KeyTable.keys`) in the type the release shows them in: a
    function of the keys' *declared* dtype and of the released keys alone, never of a key that is not released.

    The canonical type of the keys (:func:`~dpstats._kernels.units.canonical_ids`) is chosen from every key: one
    unit's 7.5 makes it float64. So it is used for grouping only, and the released keys are typed by

    * the declared dtype: integers (and booleans) → int64, floating point → float64, strings → str;
    * for an object column (lists, pandas object or categorical columns, polars strings), the released keys
      themselves: strings → str; numbers → int64 when every released key is an integer in the int64 range,
      float64 otherwise; no key released → an empty list (an object index).

    Returns an int64 or float64 array, or a list of str.
    """
    kind = np.dtype(declared).kind
    if keys.dtype.kind == "U" or kind in "US":
        return [str(k) for k in keys.tolist()]
    if kind in "biu":
        return keys.astype(np.int64)
    if kind == "f":
        return keys.astype(np.float64)
    if not keys.size:
        return []
    with np.errstate(invalid="ignore"):
        whole = bool(np.all((keys == np.floor(keys)) & (np.abs(keys) < _INT64_LIMIT)))
    return keys.astype(np.int64) if whole else keys.astype(np.float64)


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
    canonical, missing, outside = _keys_of(keys, spec.categories, spec.name)
    if canonical is None:
        none = np.zeros(0, dtype=np.int64)
        return KeyTable(none, none, none, missing=missing, outside=outside)
    distinct, key_codes = factorize(canonical)
    if not spec.by_unit:
        rows = np.arange(key_codes.size)
        return _per_key(distinct, key_codes, rows, None, values, spec)
    unit_values, unit_codes = _unit_codes(np.asarray(units))
    hashes = _Hashes(unit_values, distinct, spec.key)
    counted, keep = None, None
    if spec.max_groups is None:
        rows = np.flatnonzero(_rows_per_unit(np.asarray(units), canonical, values, spec))
        pairs = _Pairs.of(unit_codes[rows], key_codes[rows], unit_values.size, distinct.size)
    else:
        pairs = _Pairs.of(unit_codes, key_codes, unit_values.size, distinct.size)
        keep = pairs.bounded(hashes, spec.max_groups)
        rows = _rows_of_pairs(pairs, keep, unit_codes, key_codes, hashes, values, spec)
        if rows is None:  # only counts: the rows of a pair are interchangeable, min(rows, m) of them are kept
            counted = _rows_per_key(pairs, keep, spec.max_rows, distinct.size)  # None for m = 1: one per pair
            rows = np.zeros(0, dtype=np.int64)
    table = _per_key(distinct, key_codes[rows], rows, counted, values, spec, pairs=pairs, keep=keep)
    return replace(table, n_units=int(_run_starts(pairs.unit).size))  # every unit keeps a row, so a pair


@dataclass(frozen=True)
class _Hashes:
    """Keyed 64-bit hashes of the distinct units' and keys' values (by code), and the salt."""

    unit: np.ndarray
    key: np.ndarray

    def __init__(self, unit_values: np.ndarray, keys: np.ndarray, key: int) -> None:
        object.__setattr__(self, "unit", value_hashes(unit_values, key))
        with np.errstate(over="ignore"):  # (hash(key) ^ salt)·golden, an odd multiplier: a bijection
            object.__setattr__(self, "key", (_key_hashes(keys, key ^ 1) ^ np.uint64(key)) * _GOLDEN)

    def of(self, unit_codes: np.ndarray, key_codes: np.ndarray) -> np.ndarray:
        """A keyed hash of each (unit, key) pair's values."""
        pair = self.unit[unit_codes]
        pair ^= self.key[key_codes]
        return mix(pair)


def _key_hashes(keys: np.ndarray, salt: int) -> np.ndarray:
    """A keyed 64-bit hash of each key that is a function of the key's *value* alone, not of the array's dtype: a
    float that is an int64 integer hashes as that integer (7.0 as 7, -0.0 as 0), so a key hashes alike whether the
    other keys made the canonical type int64 or float64 (:func:`~dpstats._kernels.units.canonical_ids` chooses it
    from all the keys, any unit's among them). Strings and category positions hash as themselves."""
    if keys.dtype.kind != "f":
        return value_hashes(keys if keys.dtype.kind in "iuU" else keys.astype(str), salt)
    out = value_hashes(keys, salt)
    with np.errstate(invalid="ignore"):
        whole = np.flatnonzero((keys == np.floor(keys)) & (np.abs(keys) < _INT64_LIMIT))
    if whole.size:
        out[whole] = value_hashes(keys[whole].astype(np.int64), salt)
    return out


def _rows_per_unit(units: np.ndarray, keys: np.ndarray, values, spec: GroupSpec) -> np.ndarray:
    """``max_groups=None``: the mask of the at most m rows each unit keeps (its key and values set the rows'
    priorities, as in an ungrouped release)."""
    arrays = (keys,) if values is None else (keys, np.asarray(values))
    return select_rows(units, arrays, spec.max_rows, spec.key)[0]


@dataclass(frozen=True)
class _Pairs:
    """The distinct (unit, key) pairs of some rows, sorted by unit then key: packed (unit·2^b + key), codes, rows."""

    packed: np.ndarray
    unit: np.ndarray
    key: np.ndarray
    rows: np.ndarray
    key_bits: int

    @classmethod
    def of(cls, unit_codes: np.ndarray, key_codes: np.ndarray, n_units: int, n_keys: int) -> _Pairs:
        key_bits, unit_bits = max(1, (n_keys - 1).bit_length()), max(1, (n_units - 1).bit_length())
        if key_bits + unit_bits > 63:
            raise OverflowError("too many distinct units and keys to pack a (unit, key) pair into 63 bits")
        packed = cls._pack(unit_codes, key_codes, key_bits)
        packed.sort()
        starts = _run_starts(packed)
        firsts = packed[starts]
        rows = np.diff(starts, append=packed.size)
        return cls(firsts, firsts >> key_bits, firsts & ((1 << key_bits) - 1), rows, key_bits)

    @staticmethod
    def _pack(unit_codes: np.ndarray, key_codes: np.ndarray, key_bits: int) -> np.ndarray:
        """unit·2^b + key as a new int64 array."""
        packed = unit_codes.astype(np.int64)  # a copy: the codes may be the caller's identifiers
        packed <<= key_bits
        packed |= key_codes
        return packed

    def of_rows(self, unit_codes: np.ndarray, key_codes: np.ndarray) -> np.ndarray:
        """The pair of each row (its position among the pairs)."""
        return np.searchsorted(self.packed, self._pack(unit_codes, key_codes, self.key_bits))

    def bounded(self, hashes: _Hashes, max_groups: int) -> np.ndarray | None:
        """The mask of the pairs kept (None: all of them): each unit's ``max_groups`` pairs of smallest priority,
        the leading :data:`PRIORITY_BITS` of the pair's keyed hash, ties broken by the keys' values (the pairs'
        order within their unit). Only the units with more keys than that are hashed and sorted, as one int64 per
        pair (unit, priority, position in the unit)."""
        starts = _run_starts(self.unit)
        per_unit = np.diff(starts, append=self.unit.size)
        heavy = per_unit > max_groups
        if not heavy.any():
            return None
        sizes, first = per_unit[heavy], starts[heavy]
        if heavy.all():
            top = hashes.of(self.unit, self.key)
        else:
            pairs = np.flatnonzero(np.repeat(heavy, per_unit))
            top = hashes.of(self.unit[pairs], self.key[pairs])
        top >>= np.uint64(64 - PRIORITY_BITS)
        rank = local = ranks_within(sizes)  # the position of each pair in its unit, and later in the sorted order
        run = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        local_bits, run_bits = max(1, int(sizes.max() - 1).bit_length()), max(1, (sizes.size - 1).bit_length())
        dropped = rank >= max_groups  # in the sorted order, whose runs keep their place and sizes
        if run_bits + PRIORITY_BITS + local_bits <= 63:
            packed = run
            packed <<= PRIORITY_BITS + local_bits
            top = top.astype(np.int64)
            top <<= local_bits
            packed |= top
            packed |= local
            packed.sort()
            packed = packed[dropped]
            run, local = packed >> (PRIORITY_BITS + local_bits), packed & ((1 << local_bits) - 1)
        else:  # too many pairs for one int64: sort by the three keys
            order = np.lexsort((local, top, run))[dropped]
            run, local = run[order], local[order]
        keep = np.ones(self.unit.size, dtype=bool)
        keep[first[run] + local] = False
        return keep


def _run_starts(sorted_values: np.ndarray) -> np.ndarray:
    """The first position of every run of equal values of a sorted array."""
    if not sorted_values.size:
        return np.zeros(0, dtype=np.int64)
    change = np.empty(sorted_values.size, dtype=bool)
    change[0] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=change[1:])
    return np.flatnonzero(change)


def _rows_of_pairs(pairs: _Pairs, keep, unit_codes, key_codes, hashes: _Hashes, values, spec):
    """The positions of the rows kept with ``max_groups``: those of the kept pairs, at most m per pair (chosen by
    their values' priorities, salted with the pair's hash); None when only counts are needed (the rows of a pair
    are then interchangeable)."""
    if values is None and spec.cells is None:
        return None
    heavy = pairs.rows > spec.max_rows
    if keep is None and not heavy.any():
        return np.arange(unit_codes.size)
    pair_of_row = pairs.of_rows(unit_codes, key_codes)
    rows = np.arange(unit_codes.size) if keep is None else np.flatnonzero(keep[pair_of_row])
    if not heavy[pair_of_row[rows]].any():
        return rows
    salts = hashes.of(pairs.unit, pairs.key)[pair_of_row[rows]]
    data = (np.asarray(values)[rows],) if values is not None else (np.zeros(rows.size),)
    chosen, _ = select_rows(pair_of_row[rows], data, spec.max_rows, spec.key, salts=salts)
    return rows[chosen]


def _rows_per_key(pairs: _Pairs, keep, max_rows: int, size: int) -> np.ndarray | str:
    """Σ min(rows, m) over the kept pairs of each key (exact: totals below 2^53); ``"units"`` for m = 1 (then the
    rows kept are one per kept pair: the distinct units)."""
    if max_rows == 1:
        return "units"
    rows = np.minimum(pairs.rows, max_rows)
    if keep is not None:
        rows *= keep
    return np.bincount(pairs.key, weights=rows, minlength=size).astype(np.int64)


def _per_key(distinct, key_codes, rows, counted, values, spec: GroupSpec, *, pairs=None, keep=None) -> KeyTable:
    """The statistics of the kept rows (positions ``rows`` with keys ``key_codes``, or their number per key
    ``counted``: an array, or ``"units"`` when it is the number of kept pairs) and of the kept (unit, key) ``pairs``
    (``keep``: their mask; no pairs: a row is a unit)."""
    size = distinct.size
    if pairs is None:  # every row its own unit, with one key
        units, weights = np.bincount(key_codes, minlength=size).astype(np.int64), None
        if spec.weights:
            weights = units * _weight(1)
    else:
        units, weights = _unit_statistics(pairs, keep, spec.weights, size)
    if isinstance(counted, str):
        rows_per_key = units
    elif counted is not None:
        rows_per_key = counted
    else:
        rows_per_key = np.bincount(key_codes, minlength=size).astype(np.int64)
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


def _unit_statistics(pairs: _Pairs, keep, weights: bool, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(distinct units per key, Σ w_d per key or None) of the kept pairs; w_d = ⌊2^20/√d⌋ for a unit that kept d
    keys."""
    kept_keys = pairs.key if keep is None else pairs.key[keep]
    units = np.bincount(kept_keys, minlength=size).astype(np.int64)
    mask = None if keep is None else keep.astype(np.float64)
    if not weights:
        return units, None
    degree = np.bincount(pairs.unit, weights=mask).astype(np.int64)[pairs.unit]
    table = np.array([0] + [_weight(d) for d in range(1, int(degree.max(initial=1)) + 1)], dtype=np.int64)
    per_pair = table[degree] if keep is None else table[degree] * keep
    return units, _key_sums(pairs.key, per_pair.astype(np.float64), size, _WEIGHT_BITS + 1)


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
