"""Exact sums of bounded records on a public fixed-point grid (mean, variance) and counts in public bins.

Each value is rounded to a public fixed-point grid h (a power of two, 2^-bits of the bound's magnitude): a map
applied to every record on its own, using only public numbers, like clipping, so the statistic of the rounded
records has the same kind of sensitivity, computed from the rounded bounds. The sums of the rounded values are exact
integers: within a block every partial sum stays below 2^53 (so the float additions are exact in any order), and
blocks are added in int64 / Python integers. Sums of squares split each integer q = a·2^13 + b so that a², ab and
b² sum exactly too. See :mod:`dpstats.noise.release` for how the results are released.

Everything here works on NumPy chunks and adds up with ``+``; the engines (:mod:`dpstats._engine`) decide how the
chunks are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import raise_nonfinite
from ..exceptions import OutOfBoundsError, ParameterError
from .reduce import ExactSum

__all__ = ["BinCounts", "BoundedSums", "ChunkSums", "FixedPoint", "chunk_bin_counts"]

_SUM_BITS = 36  # fixed-point bits of a record for sums: |q| <= 2^36, blocks of <= 2^16 values sum exactly
_SQUARE_BITS = 26  # for sums of squares: q = a·2^13 + b with |a|, |b| <= 2^13
_SPLIT = 2.0**13
_SUM_BLOCK_VALUES = 1 << 16


@dataclass(frozen=True)
class BoundedSums:
    """Exact sums of fixed-point records: Σq (and Σq²) per output coordinate, q = round(x/h).

    Attributes
    ----------
    n : int
        Number of records.
    unit : Fraction or numpy.ndarray of Fraction
        h per output coordinate (a power of two).
    q_lower, q_upper : numpy.ndarray of int
        round(lower/h), round(upper/h): every record's q lies between them.
    sums : object
        Σq (Python int, or object array of them).
    squares : object or None
        Σq² when asked for.
    """

    n: int
    unit: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    sums: object
    squares: object | None


@dataclass(frozen=True)
class ChunkSums:
    """Exact fixed-point sums of some records (added up over chunks with ``+``), or what was wrong with them.

    ``sums`` and ``parts`` (Σa², Σab, Σb² of the split q = a·2^13 + b) are object arrays of Python ints; when
    ``nonfinite`` or ``outside`` is non-zero they are None (the release will raise).
    """

    n: int
    sums: np.ndarray | None
    parts: tuple | None
    nonfinite: int = 0
    outside: int = 0

    def __add__(self, other: ChunkSums) -> ChunkSums:
        nonfinite, outside = self.nonfinite + other.nonfinite, self.outside + other.outside
        if nonfinite or outside:
            return ChunkSums(self.n + other.n, None, None, nonfinite, outside)
        parts = None if self.parts is None else tuple(a + b for a, b in zip(self.parts, other.parts, strict=True))
        return ChunkSums(self.n + other.n, self.sums + other.sums, parts)


@dataclass(frozen=True)
class FixedPoint:
    """The public fixed-point grid of bounded records: h = 2^exponent per coordinate (2^-bits of the bounds'
    magnitude), the bounds, and the bounds rounded to the grid. Depends on the bounds only."""

    lo: np.ndarray
    hi: np.ndarray
    exponent: np.ndarray
    squares: bool

    @classmethod
    def of(cls, lower: np.ndarray, upper: np.ndarray, squares: bool) -> FixedPoint:
        lo, hi = lower.reshape(-1), upper.reshape(-1)
        bits = _SQUARE_BITS if squares else _SUM_BITS
        magnitude = np.maximum(np.abs(lo), np.abs(hi))
        if (magnitude < 2.0**-900).any():
            raise ParameterError(
                f"bounds are too close to 0 (largest magnitude {float(magnitude.min()):.3g}) for "
                "the fixed-point grid of the records; rescale the data"
            )
        exponent = np.ceil(np.log2(magnitude)).astype(int) - bits
        return cls(lo, hi, exponent, squares)

    def chunk_sums(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """Check and sum records (rows of a 2-D array, one column per output coordinate), block by block.

        Each block is read from memory once; its check, rounding and sums run while it is in cache, in reused
        buffers. Every partial sum of a block stays below 2^53, so it is exact in floating point in any order of
        the additions (``einsum``'s vectorised loops; BLAS is avoided, whose threads wake up too slowly for a
        block); the block results are integers, added exactly at the end."""
        scale = np.ldexp(1.0, -self.exponent)  # 1/h, exact
        n, m = records.shape
        rows = max(1, _SUM_BLOCK_VALUES // m)
        blocks = -(-n // rows)
        found = np.empty((4 if self.squares else 1, blocks, m))  # per block: Σq (and Σa², Σab, Σb²)
        q_buffer = np.empty((min(rows, n), m))  # reused: a fresh array per block costs page faults
        b_buffer = np.empty_like(q_buffer) if self.squares else None
        inside = self._inside_clipped if clip else self._inside
        for j in range(blocks):
            block = records[j * rows : (j + 1) * rows]
            if not inside(block):
                return self._violations(records, clip)
            q = q_buffer[: block.shape[0]]
            if clip:
                np.clip(block, self.lo, self.hi, out=q)
                block = q
            np.multiply(block, scale, out=q)
            np.rint(q, out=q)
            found[0, j] = np.einsum("ij->j", q)
            if self.squares:  # q = a·2^13 + b, 0 <= b < 2^13: a², ab and b² sum exactly
                b = b_buffer[: q.shape[0]]
                np.multiply(q, 1.0 / _SPLIT, out=b)
                np.floor(b, out=b)  # a, for now
                found[1, j] = np.einsum("ij,ij->j", b, b)
                np.multiply(b, -_SPLIT, out=b)
                np.add(q, b, out=b)  # b = q − a·2^13
                np.subtract(q, b, out=q)
                np.multiply(q, 1.0 / _SPLIT, out=q)  # a again (q is no longer needed)
                found[2, j], found[3, j] = np.einsum("ij,ij->j", q, b), np.einsum("ij,ij->j", b, b)
        bits = _SQUARE_BITS if self.squares else _SUM_BITS
        totals = [_exact_total(found[0], rows * 2.0**bits)]
        totals += [_exact_total(part, rows * 2.0**26) for part in found[1:]]
        return ChunkSums(n, totals[0], tuple(totals[1:]) if self.squares else None)

    def quantized(self, records: np.ndarray, clip: bool) -> np.ndarray:
        """q = round(x/h) of every value of the 2-D ``records`` (clipped to the bounds first with ``clip``), exact
        integers as float64: the same arithmetic as :meth:`chunk_sums`, for records it has checked."""
        if clip:
            records = np.clip(records, self.lo, self.hi)
        return np.rint(records * np.ldexp(1.0, -self.exponent))

    def _inside(self, block: np.ndarray) -> bool:
        """Every value of the block finite and within the bounds (NaN fails both comparisons)."""
        return bool((block.min(axis=0) >= self.lo).all() and (block.max(axis=0) <= self.hi).all())

    @staticmethod
    def _inside_clipped(block: np.ndarray) -> bool:
        """Every value of the block finite (clipping takes care of the bounds)."""
        return bool(np.isfinite(block.min(axis=0)).all() and np.isfinite(block.max(axis=0)).all())

    def _violations(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """Count the non-finite values and (without clipping) the values outside the bounds."""
        nonfinite = int(records.size - np.count_nonzero(np.isfinite(records)))
        outside = 0 if clip else int(np.count_nonzero((records < self.lo) | (records > self.hi)))
        return ChunkSums(records.shape[0], None, None, nonfinite, outside)

    def result(self, found: ChunkSums, shape: tuple[int, ...], name: str) -> BoundedSums:
        """The sums in the shape of one record's output, or the error for what was found."""
        if found.nonfinite:
            raise_nonfinite(name, found.nonfinite)
        if found.outside:
            _raise_out_of_bounds(found.outside, self.lo, self.hi, name)
        squares = None
        if self.squares:
            aa, ab, bb = found.parts
            squares = _reshape(aa * (1 << 26) + ab * (1 << 14) + bb, shape)
        unit = _reshape(np.array([Fraction(2) ** int(e) for e in self.exponent], dtype=object), shape)
        scale = np.ldexp(1.0, -self.exponent)
        q_lo, q_hi = np.rint(self.lo * scale), np.rint(self.hi * scale)
        return BoundedSums(
            found.n,
            unit,
            q_lo.astype(np.int64).reshape(shape),
            q_hi.astype(np.int64).reshape(shape),
            _reshape(found.sums, shape),
            squares,
        )


@dataclass(frozen=True)
class BinCounts:
    """Counts of values in public equal-width bins (added up over chunks with ``+``), and what was wrong: NaN or
    infinite values, values outside the range (not counted when clipping)."""

    counts: np.ndarray
    nonfinite: int = 0
    outside: int = 0

    def __add__(self, other: BinCounts) -> BinCounts:
        return BinCounts(self.counts + other.counts, self.nonfinite + other.nonfinite, self.outside + other.outside)

    def checked(self, lower: float, upper: float, name: str) -> np.ndarray:
        """The counts, or the error for what was found (NaN or infinite values first, then values outside)."""
        if self.nonfinite:
            raise_nonfinite(name, self.nonfinite)
        if self.outside:
            raise OutOfBoundsError(
                f"{name} has {self.outside} value(s) outside the declared range [{lower:g}, {upper:g}]; fix "
                "the range, clip the data yourself, or pass clip=True (clipping keeps the privacy guarantee)"
            )
        return self.counts


def chunk_bin_counts(x: np.ndarray, bins: int, lower: float, upper: float, *, clip: bool) -> BinCounts:
    """The counts of one chunk of values in ``bins`` equal-width bins of [lower, upper] (values outside go to the
    first or last bin when clipping), without raising: np.histogram drops NaN and out-of-range values, so a
    short total reveals them in the same pass."""
    counts, _ = np.histogram(x, bins=bins, range=(lower, upper))
    if counts.sum() == x.size:
        return BinCounts(counts.astype(np.int64))
    nonfinite = int(x.size - np.count_nonzero(np.isfinite(x)))
    if not clip:
        return BinCounts(counts.astype(np.int64), nonfinite, int(np.count_nonzero((x < lower) | (x > upper))))
    counts, _ = np.histogram(np.clip(x, lower, upper), bins=bins, range=(lower, upper))
    return BinCounts(counts.astype(np.int64), nonfinite)


def _exact_total(block_totals: np.ndarray, max_term: float) -> np.ndarray:
    """The exact sum over blocks (axis 0) of integer-valued floats of magnitude <= ``max_term``, as an object
    array of Python ints."""
    total = ExactSum(block_totals.shape[1:], max_term)
    for row in block_totals.astype(np.int64):
        total.add(row)
    return total.total().astype(object)


def _reshape(values: np.ndarray, shape: tuple[int, ...]):
    """A Python scalar for shape (), else the array in that shape."""
    return values[0] if shape == () else values.reshape(shape)


def _raise_out_of_bounds(outside: int, lo: np.ndarray, hi: np.ndarray, name: str) -> None:
    bounds = f"[{_fmt(lo)}, {_fmt(hi)}]"
    raise OutOfBoundsError(
        f"{name} has {outside} value(s) outside the declared bounds {bounds}; fix the bounds, clip the data "
        "yourself, or pass clip=True to clip them (clipping keeps the privacy guarantee)"
    )


def _fmt(bound: np.ndarray) -> str:
    return f"{float(bound[0]):g}" if bound.size == 1 else np.array2string(bound, precision=4)
