"""Exact sums of bounded records on a public fixed-point grid (mean, variance) and counts in public bins.

Each value is rounded to a public fixed-point grid h (a power of two, 2^-bits of the bound's magnitude): a map
applied to every record on its own, using only public numbers, like clipping, so the statistic of the rounded
records has the same kind of sensitivity, computed from the rounded bounds. The sums of the rounded values are exact
integers: within a block every partial sum stays below 2^53 (so the float additions are exact in any order), and
blocks are added in int64 / Python integers. Sums of squares split each integer q = a·2^13 + b so that a², ab and
b² sum exactly too. See :mod:`dpstats.noise.release` for how the results are released.

**Rounding and summing in two passes** (the sums, ``squares=False``). With h = 2^-k and C = 3·2^(51−k), every value
x within the bounds has |x| <= 2^(36−k), so the exact sum x + C lies in [2^(52−k), 2^(53−k)), where the doubles
are exactly the multiples of 2^-k. The floating-point addition rounds x + C to the nearest of them, ties to the
one whose last mantissa bit is even: fl(x + C) = C + q·h with q the integer nearest to x/h, ties to even — exactly
``rint(x/h)`` (x/h itself is exact: a power-of-two scaling that cannot overflow here, and where it underflows both
are 0). In that binade the bit pattern of a double is linear in it: bits(fl(x + C)) = bits(C) + q. So one addition
rounds a block to the grid, and the sum of its bit patterns read as unsigned 64-bit integers (which wrap modulo
2^64, exactly) is Σq + rows·bits(C) mod 2^64; as |Σq| < 2^63, subtracting rows·bits(C) modulo 2^64 gives Σq
exactly. This replaces a multiplication, a rounding and a floating-point sum (three passes) by an addition and an
integer sum; the bounds check before it is exact as before (comparisons of the values themselves; with a lower
bound of +0 one comparison of bit patterns, which order non-negative doubles as their values: a negative value, a
−0, a NaN or a value above the upper bound has a larger unsigned pattern than the upper bound, and such a block is
checked again by value). The integer sums are the same whatever the method, so every path gives the same result.

Everything here works on NumPy chunks and adds up with ``+``; the engines (:mod:`dpstats._engine`) decide how the
chunks are read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
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
_ADDED_BLOCK_VALUES = 1 << 17  # blocks of the two-pass sums (exact for any size below 2^26 rows: |Σq| < 2^63)
_MAGIC_K_MIN = -971  # C = 3·2^(51−k) and every fl(x + C) < 2^(53−k) finite: k >= -970 (bounds below 2^1006)
_MASK64 = (1 << 64) - 1
_FLOAT = np.dtype(np.float64)
_ADD, _MAX = np.add.reduce, np.maximum.reduce  # the reductions themselves (ndarray.sum/max add a Python frame)


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

    def per_record(self) -> tuple:
        """(h/n, (q_hi − q_lo)·h/n) per coordinate, exact: the unit of Σq/n (the mean of the records, Σq·h/n) and the
        width of the rounded bounds in real units divided by n. Fractions for a scalar statistic (a pure function of
        public integers, cached), else object arrays of them."""
        if isinstance(self.unit, Fraction):
            width = int(self.q_upper) - int(self.q_lower)
            return _per_record(self.unit.numerator, self.unit.denominator, width, self.n)
        unit = np.asarray(self.unit, dtype=object)
        return unit / self.n, (self.q_upper - self.q_lower).astype(object) * unit / self.n


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
    _public: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # shape -> unit, q_lo, q_hi

    def __reduce__(self):
        """Pickled without what is computed from it (its cache holds closures; an engine may ship the grid)."""
        return type(self), (self.lo, self.hi, self.exponent, self.squares)

    @classmethod
    def of(cls, lower: np.ndarray, upper: np.ndarray, squares: bool) -> FixedPoint:
        """The grid of the bounds (float64 copies, read-only); cached for a few coordinates, as a pure function of
        public bounds that a session or an audit passes again and again."""
        if type(lower) is np.ndarray and type(upper) is np.ndarray and lower.dtype is _FLOAT and upper.dtype is _FLOAT:
            if lower.size <= _CACHED_COORDINATES:  # float64 already: their bytes, in C order, are the flat copies'
                return _grid_of(lower.tobytes(), upper.tobytes(), squares)
        lo, hi = np.array(lower, dtype=np.float64).reshape(-1), np.array(upper, dtype=np.float64).reshape(-1)
        if lo.size <= _CACHED_COORDINATES:
            return _grid_of(lo.tobytes(), hi.tobytes(), squares)
        return cls._of(lo, hi, squares)

    @classmethod
    def _of(cls, lo: np.ndarray, hi: np.ndarray, squares: bool) -> FixedPoint:
        bits = _SQUARE_BITS if squares else _SUM_BITS
        magnitude = np.maximum(np.abs(lo), np.abs(hi))
        if (magnitude < 2.0**-900).any():
            raise ParameterError(
                f"bounds are too close to 0 (largest magnitude {float(magnitude.min()):.3g}) for "
                "the fixed-point grid of the records; rescale the data"
            )
        exponent = np.ceil(np.log2(magnitude)).astype(int) - bits
        for array in (lo, hi, exponent):
            array.flags.writeable = False
        return cls(lo, hi, exponent, squares)

    def chunk_sums(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """Check and sum records (rows of a 2-D array, one column per output coordinate), block by block.

        Each block is read from memory once; its check, rounding and sums run while it is in cache, in reused
        buffers. Sums are rounded and added in two passes (module docstring); sums of squares are rounded by a
        multiplication and ``rint``, and every partial sum of a block stays below 2^53, so it is exact in floating
        point in any order of the additions (``einsum``'s vectorised loops; BLAS is avoided, whose threads wake up
        too slowly for a block); the block results are integers, added exactly at the end."""
        if not self.squares and records.dtype == np.float64 and self._added() is not None:
            return self._chunk_sums_added(records, clip)
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

    def _chunk_sums_added(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """:meth:`chunk_sums` without squares: each block rounded by one addition of C and summed as integers
        (module docstring, "Rounding and summing in two passes")."""
        magic, magic_bits, checker = self._added()
        n, m = records.shape
        if m == 1:  # one coordinate: 1-D blocks, scalar comparisons
            records, magic = records[:, 0], magic[0]
        rows = max(1, _ADDED_BLOCK_VALUES // m)
        inside = self._inside_clipped if clip else checker
        if n <= rows and not clip:  # one block (a small release): the same steps without the block bookkeeping
            if not inside(records):
                return self._violations(records.reshape(n, m), clip)
            total = _ADD(np.add(records, magic).view(np.uint64), axis=0)
            if m == 1:  # in Python ints: Σ bits − n·bits(C) modulo 2^64, read as a signed integer (|Σq| < 2^63)
                exact = (int(total) - n * int(magic_bits[0])) & _MASK64
                return ChunkSums(n, np.array([exact - (exact >> 63 << 64)], dtype=object), None)
            exact = (np.atleast_1d(total) - np.uint64(n) * magic_bits).view(np.int64)
            return ChunkSums(n, exact.astype(object), None)
        blocks = -(-n // rows)
        found = np.empty((blocks, m), dtype=np.uint64)
        q_buffer = np.empty((min(rows, n),) + records.shape[1:])
        for j in range(blocks):
            block = records[j * rows : (j + 1) * rows]
            if not inside(block):
                return self._violations(records.reshape(n, m), clip)
            q = q_buffer[: block.shape[0]]
            if clip:
                np.clip(block, self.lo if m > 1 else self.lo[0], self.hi if m > 1 else self.hi[0], out=q)
                block = q
            np.add(block, magic, out=q)
            found[j] = np.add.reduce(q.view(np.uint64), axis=0)
        counts = np.full((blocks, 1), rows, dtype=np.uint64)
        counts[-1] = n - (blocks - 1) * rows
        exact = (found - counts * magic_bits).view(np.int64)  # true |Σq| < 2^63
        if blocks == 1:
            return ChunkSums(n, exact[0].astype(object), None)
        return ChunkSums(n, _exact_total(exact, rows * 2.0**_SUM_BITS), None)

    def _added(self) -> tuple | None:
        """C per coordinate, its bit patterns and the bounds check of :meth:`_chunk_sums_added` (public, computed
        once per grid); None where a grid is too fine for C (every coordinate needs k >= ``_MAGIC_K_MIN``)."""
        found = self._public.get("added", self)
        if found is self:
            found = None
            if (-self.exponent >= _MAGIC_K_MIN).all():
                magic = np.ldexp(3.0, 51 + self.exponent)  # C = 3·2^(51−k) per coordinate, h = 2^-k
                found = (magic, magic.view(np.uint64), self._inside_checker())
            self._public["added"] = found
        return found

    def _inside_checker(self):
        """:meth:`_inside`, in one pass when every lower bound is +0: then a value is within [0, hi] iff its bit
        pattern, as an unsigned integer, is at most that of hi (a negative value, −0 and NaN have the sign bit or
        NaN's exponent); a block that fails is checked again by value (−0 is within the bounds). Blocks of one
        coordinate may be 1-D."""
        if self.lo.dtype != np.float64 or self.hi.dtype != np.float64 or self.lo.view(np.uint64).any():
            return self._inside
        top = self.hi.view(np.uint64)
        if top.size == 1:
            top = top[0]
            return lambda block: _MAX(block.view(np.uint64)) <= top or self._inside(block)
        return lambda block: bool((block.view(np.uint64).max(axis=0) <= top).all()) or self._inside(block)

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
        unit, q_lo, q_hi = self.public(shape)
        return BoundedSums(found.n, unit, q_lo, q_hi, _reshape(found.sums, shape), squares)

    def public(self, shape: tuple[int, ...]) -> tuple:
        """h and the rounded bounds (unit, q_lo, q_hi) in ``shape``: public, computed once per grid and shape, and
        read-only (shared by the results)."""
        found = self._public.get(shape)
        if found is None:
            unit = _reshape(np.array([Fraction(2) ** int(e) for e in self.exponent], dtype=object), shape)
            scale = np.ldexp(1.0, -self.exponent)
            q_lo = np.rint(self.lo * scale).astype(np.int64).reshape(shape)
            q_hi = np.rint(self.hi * scale).astype(np.int64).reshape(shape)
            for array in (unit, q_lo, q_hi):
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False
            found = self._public[shape] = (unit, q_lo, q_hi)
        return found


_CACHED_COORDINATES = 64  # grids of at most this many coordinates are cached (FixedPoint.of)


@functools.lru_cache(maxsize=1024)
def _per_record(numerator: int, denominator: int, width: int, n: int) -> tuple[Fraction, Fraction]:
    """:meth:`BoundedSums.per_record` of a scalar statistic, h = numerator/denominator (keyed by integers: a
    Fraction's hash computes a modular inverse)."""
    unit = Fraction(numerator, denominator * n)
    return unit, width * unit


@functools.lru_cache(maxsize=256)
def _grid_of(lo: bytes, hi: bytes, squares: bool) -> FixedPoint:
    return FixedPoint._of(np.frombuffer(lo, dtype=np.float64), np.frombuffer(hi, dtype=np.float64), squares)


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
