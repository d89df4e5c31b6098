"""The one-quantile exponential mechanism, sampled exactly with a fixed number of random draws.

:func:`sample_runs` draws an index j of the points 0 … G, which come in consecutive *runs*: ``lengths[r]`` points of
rank r for r = 0 … n, with

    P(j) ∝ exp(−a·|s·r(j) − T|),     a = ``rate`` (a non-negative dyadic rational), s = ``step``, T = ``target``.

(:func:`dpstats.quantile`: r(j) is the number of records below grid point j, s = 2^10 and T/2^10 the target rank
q·n, a = ε′/2^11.) Its work does not depend on the data: it draws **exactly two 64-bit words** (one uniform U of 128
bits) and then does a number of exact integer operations that is a function of n, G and a only — except, with
probability below 2^-100 whatever the data, where it draws one more word and computes again with more precision.
(Python's big integers and NumPy's sort are not constant-time at the scale of CPU cycles; what is removed is the
data-dependent number of draws and rounds, whose geometric tail had an unbounded privacy loss.)

The algorithm: inversion of the distribution function. With weights w(j) = exp(−a·(|s·r(j) − T| − D*)), D* the
smallest |s·r − T| of a rank that has points (so the best points weigh 1 and Z = Σ w(j) >= 1), the output is the j
with F(j) <= U·Z < F(j + 1), F(j) = Σ_{i<j} w(i). Every quantity is an interval of integers in units of 2^-P that
contains the true real value: exp(−a·φ) and q = exp(−a·s) from mpmath's interval arithmetic (rigorous bounds, not
rounded values; computed once per ε), w_0 = ρ^φ by a fixed sequence of squarings and multiplications, and the
ladder w_k = w_0·q^k, with lower bounds rounded down and upper bounds rounded up. The j is
returned only when the intervals *certify* F(j) <= U·Z < F(j + 1) for every U of the 128-bit cell that was drawn,
so the output is exactly the exponential mechanism's (U is a uniform real in [0, 1) whose first 128 bits were
revealed; a finer cell is drawn when the first does not decide).

Fixed work. Only the ranks whose weight can exceed 2^-110/(G + 1) are evaluated: on each side of T, the K + 1
ranks nearest D*, K = ⌈(110 ln 2 + ln(G + 1))/(a·s)⌉ + 1 (all n + 1 ranks when that is fewer) — a public
number; the ladder is computed for all of them whatever the data, so the number of big-integer operations is
fixed. The ranks beyond the window weigh at most 2^-110 together (an interval [0, L·w_K]); if U·Z falls among them,
or within the intervals' width of a boundary, the cell does not decide. Bound on that probability, for any data:
the tails weigh at most 2^-109 of Z, and each of at most G + 2 boundaries is uncertain over at most
2^-128·Z + (G + 1)(2K + 64)·2^-P (each weight's interval is at most 2K + 64 units of 2^-P wide: 2 per
multiplication of the ladder, 2 per step of the power; P = 192 + the bit lengths of K and G + 1): together below
2^-100.

References
----------
F. McSherry & K. Talwar, "Mechanism design via differential privacy", FOCS 2007. A. Smith, "Privacy-preserving
statistical estimation with optimal convergence rates", STOC 2011. Exact sampling by inversion with a lazily
refined uniform: L. Devroye, "Non-Uniform Random Variate Generation", Springer 1986, Section III.2.
"""

from __future__ import annotations

import bisect
import functools
import math
from fractions import Fraction

import numpy as np

__all__ = ["TAIL_BITS", "UNIFORM_BITS", "sample_runs", "window"]

#: The ranks left out of the window weigh at most 2^-TAIL_BITS together (relative to Z >= 1).
TAIL_BITS = 110
#: Bits of the uniform U drawn by every call: two 64-bit words.
UNIFORM_BITS = 128
#: Base precision of the fixed-point intervals (bits below the binary point).
_PRECISION = 192


def window(rate: Fraction, step: int, ranks: int, points: int) -> int:
    """K: the ranks evaluated on each side of the target beyond the best one (public: from the rate, the step, the
    number of ranks n + 1 and of points G + 1 only; ``ranks`` when the window would hold them all)."""
    decay = float(rate) * step  # a·s: the log-weight lost per rank
    if decay <= 0:
        return ranks
    needed = (TAIL_BITS * math.log(2) + math.log(points)) / decay
    return ranks if needed >= ranks else min(ranks, math.ceil(needed) + 1)


def sample_runs(lengths: np.ndarray, target: int, step: int, rate: Fraction, rng: np.random.Generator) -> int:
    """The index j of the points 0 … G drawn exactly with P(j) ∝ exp(−rate·|step·r(j) − target|) (module
    docstring); ``lengths[r]`` consecutive points have rank r. Draws two 64-bit words from ``rng`` (a third, and
    more, with probability below 2^-100)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ranks = lengths.size
    cumulative = np.concatenate([[0], np.cumsum(lengths)])
    points = int(cumulative[-1])
    present = np.flatnonzero(lengths > 0)
    best = int(np.abs(present * step - target).min())  # D*
    words = rng.integers(0, 2**64, size=2, dtype=np.uint64)
    u, bits = (int(words[0]) << 64) | int(words[1]), UNIFORM_BITS
    k = window(rate, step, ranks, points)
    precision = _PRECISION + k.bit_length() + points.bit_length()
    while True:
        found = _Inversion(cumulative, target, step, rate, best, k, precision).locate(u, bits)
        if found is not None:
            return found
        # Undecided (probability < 2^-100 for any data): a finer cell of U, more precision, every rank.
        u, bits = (u << 64) | int(rng.integers(0, 2**64, dtype=np.uint64)), bits + 64
        k, precision = ranks, precision + 64


@functools.lru_cache(maxsize=64)
def _bases(rate: Fraction, step: int, precision: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The intervals of ρ = exp(−rate) and q = exp(−rate·step) (public: from the rate and the step only, so they
    are computed once per ε)."""
    return _exp_interval(rate, precision), _exp_interval(rate * step, precision)


def _power(base: tuple[int, int], exponent: int, bits: int, precision: int) -> tuple[int, int]:
    """The interval of ρ^exponent for 0 <= exponent < 2^bits, by square and multiply with directed rounding: always
    ``bits`` squarings and ``bits`` multiplications (by 1 where the exponent's bit is 0), whatever the exponent."""
    one = 1 << precision
    lo, hi = one, one
    for b in range(bits - 1, -1, -1):
        lo, hi = (lo * lo) >> precision, -((-hi * hi) >> precision)
        factor_lo, factor_hi = base if (exponent >> b) & 1 else (one, one)
        lo, hi = (lo * factor_lo) >> precision, -((-hi * factor_hi) >> precision)
    return lo, hi


def _exp_interval(exponent: Fraction, precision: int) -> tuple[int, int]:
    """Integers (lo, hi) with lo <= exp(−exponent)·2^precision <= hi, from mpmath's interval arithmetic."""
    from mpmath import iv
    from mpmath.libmp import to_man_exp

    saved = iv.prec
    iv.prec = precision + 64
    try:
        value = iv.exp(-iv.mpf(exponent.numerator) / iv.mpf(exponent.denominator))
        lower, upper = (to_man_exp(end, signed=True) for end in value._mpi_)
    finally:
        iv.prec = saved
    return _fixed(*lower, precision, up=False), _fixed(*upper, precision, up=True)


def _fixed(mantissa: int, exponent: int, precision: int, *, up: bool) -> int:
    """mantissa·2^exponent·2^precision rounded down (or up), exactly."""
    shift = exponent + precision
    if shift >= 0:
        return mantissa << shift
    return -((-mantissa) >> -shift) if up else mantissa >> -shift


class _Inversion:
    """The fixed-point intervals of one attempt (module docstring): the window's 2(K + 1) slots in ascending rank
    order (below the target: ranks first − K … first; above: first … first + K; a slot outside 0 … n holds no
    point), their weight intervals, and the cumulative intervals at their starts."""

    def __init__(self, cumulative, target: int, step: int, rate: Fraction, best: int, k: int, precision: int):
        n = cumulative.size - 2
        below = (target - best) // step  # the highest rank with step·r <= target − D*
        above = max(-((-(target + best)) // step), below + 1)  # the lowest rank with step·r >= target + D*
        rho, (q_lo, q_hi) = _bases(rate, step, precision)
        ladders = []
        for phi in (target - best - step * below, step * above - target - best):  # both in [0, step]
            lows, highs = [0] * (k + 1), [0] * (k + 1)
            lows[0], highs[0] = _power(rho, phi, (2 * step).bit_length(), precision)
            for i in range(k):  # the whole ladder, whatever the data: a fixed number of operations
                lows[i + 1] = (lows[i] * q_lo) >> precision
                highs[i + 1] = -((-highs[i] * q_hi) >> precision)
            ladders.append((lows, highs))
        self.ranks = [below - i for i in range(k, -1, -1)] + [above + i for i in range(k + 1)]
        self.lows = ladders[0][0][::-1] + ladders[1][0]
        self.highs = ladders[0][1][::-1] + ladders[1][1]
        inside = [0 <= r <= n for r in self.ranks]
        counts = [int(cumulative[r + 1] - cumulative[r]) if ok else 0 for r, ok in zip(self.ranks, inside, strict=True)]
        first = next((r for r, ok in zip(self.ranks, inside, strict=True) if ok), 0)
        last = next((r for r, ok in zip(self.ranks[::-1], inside[::-1], strict=True) if ok), n)
        tail_below = int(cumulative[first]) * ladders[0][1][k]  # the ranks below the window: each weighs <= w_K
        tail_above = int(cumulative[n + 1] - cumulative[last + 1]) * ladders[1][1][k]
        self.starts_lo, self.starts_hi = [0], [tail_below]
        for count, low, high in zip(counts, self.lows, self.highs, strict=True):
            self.starts_lo.append(self.starts_lo[-1] + count * low)
            self.starts_hi.append(self.starts_hi[-1] + count * high)
        self.z = (self.starts_lo[-1], self.starts_hi[-1] + tail_above)
        self.cumulative = cumulative

    def locate(self, u: int, bits: int) -> int | None:
        """The certified j for U in [u, u + 1)/2^bits, or None if this attempt cannot decide."""
        v_lo = (u * self.z[0]) >> bits
        v_hi = -((-(u + 1) * self.z[1]) >> bits)
        slots = len(self.ranks)
        i = bisect.bisect_right(self.starts_hi, v_lo, hi=slots) - 1
        if i < 0 or v_hi >= self.starts_lo[i + 1]:
            return None  # in a tail, or too near a boundary between ranks
        offset = (v_lo - self.starts_hi[i]) // self.highs[i]
        if self.lows[i] == 0 or offset != (v_hi - self.starts_lo[i]) // self.lows[i]:
            return None  # too near a boundary between two points of the run
        return int(self.cumulative[self.ranks[i]]) + offset
