"""Arithmetic that never rounds a privacy quantity the wrong way: exact sums rounded up, and floating-point error.

Every sensitivity, ε and δ that dpstats compares with a budget or hands to a calibration is rounded *up* from its
exact (rational) value, so that no rounding can understate it; every error bound of a floating-point computation is
written with the same γ_n of Higham (2002, Section 3.1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

__all__ = [
    "ORTHONORMAL_MARGIN",
    "UNIT_ROUNDOFF",
    "enclose",
    "float_down",
    "float_up",
    "gamma",
    "l1_up",
    "l2_up",
    "sqrt_up",
]

#: u, the unit roundoff of IEEE double precision (round to nearest).
UNIT_ROUNDOFF = 2.0**-53

#: How far above 1 a row or column norm of a matrix computed to be orthonormal (NumPy's QR of a well-conditioned
#: matrix, an eigenvector basis) is allowed to be: a relative 2^-30, far above the O(d·u) rounding of Householder QR.
ORTHONORMAL_MARGIN = 1.0 + 2.0**-30


def gamma(count: int) -> float:
    """γ_n = n·u/(1 − n·u): the relative error bound of a sum or dot product of ``count`` terms in floating point,
    in any order (Higham 2002, Lemma 3.1 and Theorem 3.5)."""
    return count * UNIT_ROUNDOFF / (1.0 - count * UNIT_ROUNDOFF)


def float_up(value: Fraction) -> float:
    """The smallest float >= ``value``; OverflowError if it exceeds the float range."""
    as_float = float(value)
    if math.isinf(as_float):
        raise OverflowError("value exceeds the float range")
    return as_float if Fraction(as_float) >= value else math.nextafter(as_float, math.inf)


def float_down(value: Fraction) -> float:
    """The largest float <= ``value``; OverflowError if it is below the float range."""
    return -float_up(-value)


def enclose(function: str, x: Fraction, precision: int = 128) -> tuple[Fraction, Fraction]:
    """Exact rationals lo <= f(x) <= hi for f = ``"log1p"``, ``"expm1"`` or ``"exp"``, from mpmath's interval
    arithmetic at ``precision`` bits beyond the magnitude of a small x (1 + x must keep x's leading bits): rigorous
    bounds, where ``math.log1p`` and ``math.expm1`` are only within an ulp or so, in either direction. ``"exp"``
    keeps its relative precision for very negative x (1 + expm1(x) would not)."""
    from mpmath import iv
    from mpmath.libmp import to_man_exp

    functions = {"log1p": lambda v: iv.log(1 + v), "expm1": lambda v: iv.exp(v) - 1, "exp": iv.exp}
    if function not in functions:
        raise ValueError(f"function must be one of {sorted(functions)}; got {function!r}")

    saved = iv.prec
    iv.prec = precision + 32 + max(0, x.denominator.bit_length() - abs(x.numerator).bit_length())
    try:
        exact = iv.mpf(x.numerator) / iv.mpf(x.denominator)
        value = functions[function](exact)
        ends = [to_man_exp(end, signed=True) for end in value._mpi_]
    finally:
        iv.prec = saved
    # mpmath's exp and log round once after a fixed-point evaluation with a few guard bits and no retry, so an end
    # can miss the true value by a few units of its last place (seen for log1p(2^-145)): 32 more bits, then each
    # end widened outwards by a relative 2^-precision, far beyond that.
    lo, hi = (Fraction(man) * Fraction(2) ** exp for man, exp in ends)
    margin = Fraction(1, 1 << precision)
    return lo - abs(lo) * margin, hi + abs(hi) * margin


def sqrt_up(n: int | float) -> float:
    """The smallest float >= √n for an integer or a float n >= 0 (``math.sqrt`` is correctly rounded, so one step
    up at most)."""
    root = math.sqrt(n)
    return root if Fraction(root) ** 2 >= n else math.nextafter(root, math.inf)


def l1_up(values: Iterable) -> float:
    """The smallest float >= Σ|v| for exact (Fraction) values; OverflowError beyond the float range."""
    return float_up(sum((abs(Fraction(v)) for v in values), Fraction(0)))


def l2_up(values: Iterable) -> float:
    """A float >= √(Σ v²) for exact (Fraction) values, rounded up; OverflowError beyond the float range."""
    squared = sum((Fraction(v) ** 2 for v in values), Fraction(0))
    root = math.sqrt(float_up(squared))
    while Fraction(root) ** 2 < squared:
        root = math.nextafter(root, math.inf)
    return root
