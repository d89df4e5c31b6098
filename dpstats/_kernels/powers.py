"""Exact sums of powers of bounded records on a coarse public grid: the higher moments an interval needs.

Each value is clipped to its bounds (checked before, by the caller) and mapped to q = round((x − x̄)/h), x̄ the
bounds' midpoint and h = 2^e the largest power of two with (hi − lo)/2 <= 2^12·h: a public per-record map, like the
fixed-point grid of :mod:`dpstats._kernels.fixed_point`, with |q| <= Q = ⌈(hi − lo)/(2h)⌉ <= 2^12. The sums Σq^k
(k = 1 … 4) are exact integers: within a block of 2^14 records every partial sum of q⁴ <= 2^48 stays below 2^62 in
int64, and blocks are added as Python integers. A record's q^k lies in [−Q^k, Q^k] (odd k) or [0, Q^k] (even k),
which is its sensitivity (replace one record).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["POWER_BITS", "PowerSums", "power_sums"]

#: The coarse grid: the bounds' half-width is at most 2^POWER_BITS grid steps.
POWER_BITS = 12
_BLOCK = 1 << 14


@dataclass(frozen=True)
class PowerSums:
    """Σq^k of the records about the bounds' midpoint, per coordinate (module docstring).

    ``unit``: h per coordinate (a Fraction, a power of two); ``bound``: Q per coordinate; ``sums[k]``: Σq^k for
    k = 1 … 4, object arrays of Python ints; ``n``: the number of records."""

    n: int
    unit: np.ndarray
    bound: np.ndarray
    sums: dict


def power_sums(records: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> PowerSums:
    """The power sums of the rows of ``records`` (n × d, every value within [lower, upper] per column: clipped or
    checked by the caller)."""
    records = np.asarray(records, dtype=np.float64)
    lower, upper = np.asarray(lower, dtype=np.float64).ravel(), np.asarray(upper, dtype=np.float64).ravel()
    half = (upper - lower) / 2.0
    middle = (lower + upper) / 2.0
    exponent = np.ceil(np.log2(np.maximum(half, np.finfo(float).tiny))).astype(int) - POWER_BITS
    scale = np.ldexp(1.0, -exponent)
    bound = np.ceil(half * scale).astype(np.int64)
    totals = {k: np.zeros(records.shape[1], dtype=object) for k in range(1, 5)}
    for start in range(0, records.shape[0], _BLOCK):
        block = np.clip(records[start : start + _BLOCK], lower, upper)
        q = np.clip(np.rint((block - middle) * scale), -bound, bound).astype(np.int64)
        power = np.ones_like(q)
        for k in range(1, 5):
            power = power * q
            totals[k] = totals[k] + np.array([int(v) for v in power.sum(axis=0)], dtype=object)
    unit = np.array([Fraction(2) ** int(e) for e in exponent], dtype=object)
    return PowerSums(records.shape[0], unit, bound, totals)
