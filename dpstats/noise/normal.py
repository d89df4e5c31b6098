"""Exact standard normal variates, drawn as reals known to a few bits and refined on demand.

A continuous normal cannot be stored, but it can be drawn *exactly* as a number whose leading bits are fixed and
whose remaining bits are independent fair coins not yet tossed (Karney, "Sampling exactly from the normal
distribution", ACM TOMS 42(1), 2016, calls these u-rands). :func:`lazy_normals` returns such numbers: each lies in
a known dyadic box, and :meth:`LazyReals.refine` tosses more of its bits. A decision taken from the box alone (as
every rejection test built on them is) leaves the untossed bits independent and uniform, so refining later is
exact.

The construction (Karney's Algorithm N with its integer part drawn by inversion):

1. w >= 0 with P(w) = exp(−w²/2)/Θ, Θ = Σ_{j>=0} exp(−j²/2), by inversion of a uniform U against the
   cumulative sums F(w) (:func:`_integer_parts`): F is tabulated once with rigorous bounds (mpmath's interval
   arithmetic, :func:`dpstats._rounding.enclose`; Θ's tail beyond j = 64 below e^-2000) and rounded outwards to
   floats; U's first FAST_BITS bits decide unless they straddle a bound, when more bits are tossed and F is
   bounded again at a higher precision.
2. u uniform on [0, 1) (its first FAST_BITS bits tossed) and Z = s·(w + u) with a fair sign s. The proposal
   density of |Z| at t in [w, w + 1) is exp(−w²/2)/Θ, the target's is ∝ exp(−t²/2), and t >= w, so
3. Z is accepted with probability exp(−(t² − w²)/2) = exp(−u(2w + u)/2) <= 1, decided exactly: by a uniform V
   against an interval of exp(−x) over u's box (floating point with a relative margin of 2^-40, far beyond the
   few ulps by which NumPy's exp can err); when V falls inside it, 64 more bits of u and V are tossed and
   the interval is recomputed from exact rationals (:func:`dpstats._rounding.enclose`), until it is decided.

About √(π/2)/Θ ≈ 0.71 of the proposals are accepted.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._rounding import enclose

__all__ = ["FAST_BITS", "LazyReals", "lazy_normals", "uniform_bits"]

#: Bits of each uniform tossed before the first (floating-point) decision.
FAST_BITS = 48
_REFINE_BITS = 64
_MARGIN = 2.0**-40  # relative margin of the floating-point exp
_INT64_SAFE = 2**62
_TABLE = 64  # integer parts tabulated: P(w > 64) < e^-2000


@dataclass
class LazyReals:
    """Reals x_i = sign_i·(mag_i + θ_i)·2^-exponent_i with θ_i ∈ [0, 1) uniform and untossed.

    ``mag`` holds non-negative integers (int64, or Python ints in an object array once they outgrow it);
    ``exponent`` (int64) is per number: a number whose own decision needed more bits keeps them.
    """

    sign: np.ndarray
    mag: np.ndarray
    exponent: np.ndarray

    def refine(self, bits: int, rng: np.random.Generator) -> None:
        """Toss ``bits`` more bits of every number (its box shrinks 2^bits-fold)."""
        self.mag = _append_bits(self.mag, bits, rng)
        self.exponent = self.exponent + bits

    def take(self, index) -> LazyReals:
        """The numbers at ``index`` (a new object sharing nothing)."""
        return LazyReals(self.sign[index].copy(), self.mag[index].copy(), self.exponent[index].copy())

    def approximate(self, dtype=float) -> tuple[np.ndarray, np.ndarray]:
        """Floats x̂ of ``dtype`` and radii r >= |x − x̂| (x̂ the box's centre rounded to that precision)."""
        half = -(self.exponent + 1)
        centre = np.ldexp(np.asarray(2 * self.mag + 1, dtype=dtype) * self.sign, half)
        return centre, np.ldexp(np.ones(centre.shape, dtype), half) + np.abs(centre) * np.finfo(dtype).eps

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Exact integer ends lo <= x·2^E <= hi with E the largest exponent (object arrays of Python ints)."""
        shift = (int(self.exponent.max(initial=0)) - self.exponent).astype(object)
        mag = self.mag.astype(object) << shift
        top = mag + (np.ones(mag.shape, dtype=object) << shift)
        positive = self.sign > 0
        return np.where(positive, mag, -top), np.where(positive, top, -mag)


def _append_bits(mag: np.ndarray, bits: int, rng: np.random.Generator) -> np.ndarray:
    """``mag·2^bits + fresh`` for uniform ``fresh`` in [0, 2^bits), in Python ints when int64 could overflow."""
    fresh = uniform_bits(bits, mag.size, rng)
    if mag.dtype != object and bits < 62 and (mag.size == 0 or int(mag.max()) < _INT64_SAFE >> bits):
        return (mag << bits) | fresh
    return mag.astype(object) * (1 << bits) + fresh.astype(object)


def uniform_bits(bits: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n uniform integers in [0, 2^bits): int64 for bits <= 62, else Python ints assembled from 32-bit limbs."""
    if bits <= 62:
        return rng.integers(0, 1 << bits, size=n, dtype=np.int64)
    out = np.zeros(n, dtype=object)
    for _ in range(-(-bits // 32)):
        out = out * (1 << 32) + rng.integers(0, 1 << 32, size=n, dtype=np.int64).astype(object)
    return out // (1 << (-(-bits // 32) * 32 - bits))


def lazy_normals(n: int, rng: np.random.Generator) -> LazyReals:
    """``n`` independent exact N(0, 1) variates as :class:`LazyReals` (module docstring)."""
    signs, mags, exponents = [], [], []
    kept = 0
    while kept < n:
        batch = (n - kept) * 3 // 2 + 16
        w = _integer_parts(batch, rng)
        sign = (2 * rng.integers(0, 2, size=batch) - 1).astype(np.int8)
        frac = uniform_bits(FAST_BITS, batch, rng)
        v = uniform_bits(FAST_BITS, batch, rng)
        accept, refined = _accept(w, frac, v, rng)
        mag, exponent = (w << FAST_BITS) | frac, np.full(batch, FAST_BITS, dtype=np.int64)  # w <= 64: no overflow
        if refined:  # numbers decided on more bits keep them (the laziness argument needs it)
            mag = mag.astype(object)
            for i, (bits, more) in refined.items():
                mag[i], exponent[i] = (int(w[i]) << bits) | more, bits
        signs.append(sign[accept])
        mags.append(mag[accept])
        exponents.append(exponent[accept])
        kept += int(accept.sum())
    return LazyReals(np.concatenate(signs)[:n], np.concatenate(mags)[:n], np.concatenate(exponents)[:n])


@functools.cache
def _cumulative_bounds(bits: int) -> tuple[tuple[Fraction, Fraction], ...]:
    """Rigorous bounds lo <= F(w) <= hi for w = 0 … _TABLE, F(w) = Σ_{j<=w} exp(−j²/2)/Θ, at ``bits`` bits.

    Θ lies between the partial sum S(_TABLE) and S(_TABLE) plus the tail Σ_{j>64} exp(−j²/2) <= 2·exp(−65²/2)
    (consecutive terms shrink by more than e^-65), below 2^-3045 (bounded by 2^-3040)."""
    terms = [enclose("exp", Fraction(-j * j, 2), bits) for j in range(_TABLE + 1)]
    partial_lo, partial_hi, sums = Fraction(0), Fraction(0), []
    for lo, hi in terms:
        partial_lo, partial_hi = partial_lo + lo, partial_hi + hi
        sums.append((partial_lo, partial_hi))
    theta_lo, theta_hi = sums[-1][0], sums[-1][1] + Fraction(2) ** -3040
    return tuple((lo / theta_hi, min(hi / theta_lo, Fraction(1))) for lo, hi in sums)


@functools.cache
def _float_cumulative() -> tuple[np.ndarray, np.ndarray]:
    """The bounds of :func:`_cumulative_bounds` at 128 bits, rounded outwards to floats."""
    bounds = _cumulative_bounds(128)
    lo = np.array([math.nextafter(float(b[0]), 0.0) for b in bounds])
    hi = np.array([math.nextafter(float(b[1]), 2.0) for b in bounds])
    return lo, hi


def _integer_parts(n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of w with P(w) = exp(−w²/2)/Θ: the w with F(w − 1) <= U < F(w), U uniform (module docstring)."""
    lo, hi = _float_cumulative()
    u = uniform_bits(FAST_BITS, n, rng)
    scale = 2.0**-FAST_BITS
    # U in [u, u + 1)·2^-FAST_BITS: w is decided when F(w − 1)'s upper bound <= u·2^-b and (u + 1)·2^-b <= F(w)'s
    # lower bound, i.e. the first w with lo(w) >= (u + 1)·2^-b has hi(w − 1) <= u·2^-b.
    w = np.searchsorted(lo, (u + 1) * scale, side="left")
    below = np.where(w > 0, hi[np.maximum(w - 1, 0)], 0.0)
    undecided = np.flatnonzero((w > _TABLE) | (below > u * scale))
    for i in undecided:
        w[i] = _integer_part_exactly(int(u[i]), rng)
    return w.astype(np.int64)


def _integer_part_exactly(u: int, rng: np.random.Generator) -> int:
    """Step 1 for one U whose first bits straddled a bound of F: refine U and F's bounds until one w fits."""
    bits = FAST_BITS
    while True:
        u = (u << _REFINE_BITS) | int(uniform_bits(_REFINE_BITS, 1, rng)[0])
        bits += _REFINE_BITS
        unit = Fraction(1, 1 << bits)
        bounds = _cumulative_bounds(bits + 32)
        if u * unit >= bounds[-1][1]:
            raise OverflowError("a normal variate's integer part exceeded 64 (probability below e^-2000)")
        previous_hi = Fraction(0)
        for w, (lo, hi) in enumerate(bounds):
            if (u + 1) * unit <= lo:
                if previous_hi <= u * unit:
                    return w
                break
            previous_hi = hi


def _accept(w: np.ndarray, frac: np.ndarray, v: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """Step 3: V < exp(−u(2w + u)/2), u ∈ [frac, frac + 1)·2^-FAST_BITS, V ∈ [v, v + 1)·2^-FAST_BITS; and, for
    the numbers decided exactly, their refined fraction bits ``{i: (bits, fraction)}``."""
    scale = 2.0**-FAST_BITS
    wf = w.astype(float)
    u_lo, u_hi = frac * scale, (frac + 1) * scale
    p_lo = np.exp(-u_hi * (2.0 * wf + u_hi) / 2.0) * (1.0 - _MARGIN)
    p_hi = np.exp(-u_lo * (2.0 * wf + u_lo) / 2.0) * (1.0 + _MARGIN)
    accept = (v + 1) * scale <= p_lo
    refined = {}
    for i in np.flatnonzero(~accept & (v * scale < p_hi)):
        accept[i], *refined[i] = _accept_exactly(int(w[i]), int(frac[i]), int(v[i]), rng)
    return accept, refined


def _accept_exactly(w: int, frac: int, v: int, rng: np.random.Generator) -> tuple[bool, int, int]:
    """Step 3 for one number whose floating-point interval was inconclusive: refine u and V until exact rational
    bounds of exp(−x) over u's box separate them; the decision, and u's bits and fraction at that point."""
    bits = FAST_BITS
    while True:
        frac = (frac << _REFINE_BITS) | int(uniform_bits(_REFINE_BITS, 1, rng)[0])
        v = (v << _REFINE_BITS) | int(uniform_bits(_REFINE_BITS, 1, rng)[0])
        bits += _REFINE_BITS
        unit = Fraction(1, 1 << bits)
        u_lo, u_hi = frac * unit, (frac + 1) * unit
        p_lo = enclose("exp", -u_hi * (2 * w + u_hi) / 2, bits + 32)[0]
        p_hi = enclose("exp", -u_lo * (2 * w + u_lo) / 2, bits + 32)[1]
        if (v + 1) * unit <= p_lo:
            return True, bits, frac
        if v * unit >= p_hi:
            return False, bits, frac
