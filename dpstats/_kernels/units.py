"""Contribution bounding on NumPy rows: at most ``max_rows`` rows of each privacy unit, chosen by a random key.

**Which rows are kept.** Every row gets a priority, a keyed hash (splitmix64 of a random 64-bit key, the row's
unit, its values and its occurrence among identical rows of its unit), and each unit keeps its ``max_rows`` rows
of smallest priority. For a uniformly random key the priorities behave as independent uniform draws, so the kept
rows are a uniformly random subset of each unit's rows; the key is drawn from the caller's random source, so with
``rng=None`` the choice is unpredictable. Nothing about the data's *order* enters: the priorities are functions of
the rows' contents, so a sorted or shuffled table keeps the same rows for the same seed, on any engine or
partitioning. Identical rows of a unit are told apart by their occurrence number (the k-th copy gets its own
priority), so a unit with 99 equal rows and one other keeps the other with probability 1/100 (for
``max_rows = 1``), not 1/2.

**Why any such rule is private.** The choice for unit u depends only on u's rows and the key. For two datasets
that differ in all rows of one unit and any key, the kept rows therefore differ in that unit's at most
``max_rows`` rows and in nothing else: every sensitivity "for one unit" is over at most ``max_rows`` rows, whatever
the hash does. The hash's quality only affects which rows are dropped (the bias), never the guarantee.

Units are grouped by exact equality of their identifiers (a sort), never by a hash, so no collision can merge two
units. Identifiers are integers, floating-point numbers (NaN is a missing value), strings or booleans, all of one
kind; ``None`` and NaN are refused.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..exceptions import DataValidationError

__all__ = ["canonical_ids", "mix", "ranks_within", "row_hashes", "select_rows", "value_hashes"]

_M1, _M2, _GOLDEN = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
#: Rows hashed per block (bounds the temporaries of string identifiers).
_HASH_BLOCK = 1 << 16


def mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic): a bijection that spreads every input bit."""
    h = h ^ (h >> _S30)  # a new array: the rest works in place on it
    with np.errstate(over="ignore"):
        h *= _M1
        h ^= h >> _S27
        h *= _M2
    h ^= h >> _S31
    return h


def canonical_ids(ids, name: str = "privacy_unit") -> np.ndarray:
    """The identifiers as a 1-D array of one comparable kind: int64, float64 (no NaN) or fixed-width unicode.

    Equal identifiers stay equal (an int and the float of the same value are one unit; a string is never a
    number). ``None``, NaN and mixed kinds raise a :class:`~dpstats.exceptions.DataValidationError` naming ``name``.
    """
    values = np.asarray(ids)
    if values.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D (one identifier per row); got shape {values.shape}")
    if values.dtype == object:
        values = _from_objects(values, name)
    kind = values.dtype.kind
    if kind == "b":
        return values.astype(np.int64, copy=False)
    if kind in "iu":
        if kind == "u" and values.size and values.max() > np.iinfo(np.int64).max:
            raise DataValidationError(f"{name} holds integers above 2^63 - 1; pass them as strings")
        return values.astype(np.int64, copy=False)
    if kind == "f":
        missing = int(np.count_nonzero(np.isnan(values)))
        if missing:
            raise DataValidationError(f"{name} has {missing} missing identifier(s) (NaN); every row needs its unit")
        return values.astype(np.float64) + 0.0  # -0.0 and 0.0 are one identifier
    if kind in "US":
        return values.astype(str)
    raise DataValidationError(f"{name} must hold integers, numbers or strings; got dtype {values.dtype}")


def _from_objects(values: np.ndarray, name: str) -> np.ndarray:
    """An object array of identifiers as one NumPy kind (all strings, or all numbers), or an error."""
    missing = sum(1 for v in values if v is None or (isinstance(v, float) and v != v))
    if missing:
        raise DataValidationError(f"{name} has {missing} missing identifier(s) (None or NaN); every row needs its unit")
    if all(isinstance(v, str) for v in values):
        return values.astype(str)
    if all(isinstance(v, numbers.Integral) for v in values):
        try:
            return values.astype(np.int64, copy=False)
        except OverflowError as err:
            raise DataValidationError(f"{name} holds integers outside the int64 range; pass them as strings") from err
    if all(isinstance(v, numbers.Real) for v in values):
        return values.astype(np.float64)
    kinds = sorted({type(v).__name__ for v in values})
    raise DataValidationError(f"{name} must hold identifiers of one kind (all numbers or all strings); got {kinds}")


def value_hashes(values: np.ndarray, key: int) -> np.ndarray:
    """A keyed 64-bit hash per element of a 1-D array of numbers, booleans or strings (equal values, equal hashes;
    int and float of the same value hash alike only when passed as the same dtype, as :func:`canonical_ids`
    makes them)."""
    salt = np.uint64(key)
    if values.dtype.kind == "U":
        return _string_hashes(values, salt)
    if values.dtype.kind == "f":
        bits = (values.astype(np.float64) + 0.0).view(np.uint64)
    else:
        bits = values.astype(np.int64).view(np.uint64)
    return mix(bits ^ salt)


def _string_hashes(values: np.ndarray, salt: np.uint64) -> np.ndarray:
    """Keyed hashes of fixed-width unicode strings: each code point times its own odd multiplier, summed, mixed."""
    width = max(1, values.dtype.itemsize // 4)
    multipliers = mix(np.arange(1, width + 1, dtype=np.uint64) * _GOLDEN ^ salt) | np.uint64(1)
    out = np.empty(values.size, dtype=np.uint64)
    for start in range(0, values.size, _HASH_BLOCK):
        block = np.ascontiguousarray(values[start : start + _HASH_BLOCK]).view(np.uint32).reshape(-1, width)
        with np.errstate(over="ignore"):
            out[start : start + _HASH_BLOCK] = np.einsum("ij,j->i", block.astype(np.uint64), multipliers)
    return mix(out ^ salt)


def row_hashes(arrays: tuple, key: int) -> np.ndarray:
    """A keyed 64-bit hash of each row of the row-aligned ``arrays`` (rows with equal bits, equal hashes)."""
    salt = np.uint64(key)
    total = np.zeros(len(arrays[0]), dtype=np.uint64)
    for index, array in enumerate(arrays):
        columns = np.asarray(array).reshape(len(array), -1)
        if columns.dtype.kind == "U":
            part = np.zeros(len(array), dtype=np.uint64)
            for j in range(columns.shape[1]):
                part = mix(part ^ _string_hashes(columns[:, j], salt))
        else:  # the bits of the values (a −0.0 and a 0.0 are told apart: two different rows, either may be kept)
            bits = np.ascontiguousarray(columns, dtype=np.float64).view(np.uint64)
            multipliers = mix(np.arange(1, bits.shape[1] + 1, dtype=np.uint64) * _GOLDEN ^ salt) | np.uint64(1)
            with np.errstate(over="ignore"):
                part = np.einsum("ij,j->i", bits, multipliers)
        with np.errstate(over="ignore"):
            total = mix(total ^ part ^ np.uint64(index + 1) * _GOLDEN)
    return total


def select_rows(
    ids: np.ndarray, arrays: tuple, max_rows: int, key: int, salts: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Which rows to keep: at most ``max_rows`` per unit (module docstring), and the number of units.

    Parameters
    ----------
    ids : numpy.ndarray
        The canonical identifiers (:func:`canonical_ids`), one per row.
    arrays : tuple of numpy.ndarray
        The row-aligned data (their values set the priorities of the rows of units with more than ``max_rows``).
    max_rows : int
        The public bound m >= 1.
    key : int
        The random 64-bit key (drawn from the caller's random source).
    salts : numpy.ndarray of uint64, optional
        A hash per row, the same for every row of a unit and a function of the unit's *values* only, used in place
        of the hash of ``ids`` (for ids that are codes of composite units, such as (unit, key) pairs, whose values
        are not the codes).

    Returns
    -------
    (numpy.ndarray of bool, int)
        The mask of kept rows (in the data's order) and the number of distinct units.
    """
    n = ids.size
    order = np.argsort(ids)  # groups the units (exact equality); the order within a unit is never used
    grouped = ids[order]
    starts = np.flatnonzero(np.concatenate([[True], grouped[1:] != grouped[:-1]])) if n else np.zeros(0, np.int64)
    counts = np.diff(np.append(starts, n))
    keep = np.ones(n, dtype=bool)
    heavy = np.flatnonzero(counts > max_rows)
    if heavy.size:
        keep[_drop(order, starts, counts, heavy, ids, arrays, max_rows, key, salts)] = False
    return keep, int(starts.size)


def _drop(order, starts, counts, heavy, ids, arrays, max_rows: int, key: int, salts) -> np.ndarray:
    """The rows (positions in the data) that units with more than ``max_rows`` rows do not keep.

    The heavy units' rows are sorted by (unit, priority) in one pass over a combined 64-bit key: the unit's rank in
    its high bits, the priority's leading bits below. Rows whose leading bits tie are (but for a 2^-(64 − b)
    chance) identical rows of one unit, interchangeable, or get their own priorities as copies (below); the sort
    is stable, so a tie of two different rows — which only the order of the data could then decide — needs the
    leading bits of two priorities of one unit to collide."""
    sizes = counts[heavy]
    run = np.repeat(np.arange(heavy.size, dtype=np.uint64), sizes)  # the heavy unit of each of its rows
    rows = order[np.flatnonzero(np.repeat(counts > max_rows, counts))]  # their positions in the data, by unit
    first = order[starts[heavy]]
    unit_hash = np.repeat(value_hashes(ids[first], key) if salts is None else salts[first], sizes)
    priority = mix(unit_hash ^ row_hashes(tuple(np.asarray(a)[rows] for a in arrays), key))
    by = _by_unit_then_priority(run, priority, heavy.size)
    priority, rows = priority[by], rows[by]
    twin = np.concatenate([[False], (priority[1:] == priority[:-1]) & (run[by][1:] == run[by][:-1])])
    if twin.any():  # identical rows of a unit: the k-th copy gets a priority of its own
        copy = ranks_within(np.diff(np.append(np.flatnonzero(~twin), twin.size)))
        with np.errstate(over="ignore"):
            priority = np.where(copy > 0, mix(priority ^ copy.astype(np.uint64) * _GOLDEN), priority)
        again = _by_unit_then_priority(run, priority, heavy.size)  # run is unchanged by the first sort
        rows = rows[again]
    return rows[ranks_within(sizes) >= max_rows]  # ranks within each unit: the runs keep their place and sizes


def _by_unit_then_priority(run: np.ndarray, priority: np.ndarray, units: int) -> np.ndarray:
    """The stable order of the rows by (unit, priority), ``run`` being sorted by unit already."""
    unit_bits = max(1, int(units - 1).bit_length())
    if unit_bits > 40:  # more units than a combined key can tell apart (2^40): two keys
        return np.lexsort((priority, run))
    combined = (run << np.uint64(64 - unit_bits)) | (priority >> np.uint64(unit_bits))
    return np.argsort(combined, kind="stable")


def ranks_within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, …, L_0 − 1, 0, 1, …, L_1 − 1, …: the position of each element within its run."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    return np.arange(total) - np.repeat(starts, lengths)
