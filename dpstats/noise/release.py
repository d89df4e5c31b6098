"""Releasing a statistic with noise that has no floating-point gaps: a public grid and exact integer noise.

Mironov (CCS 2012) showed that floating-point noise added to a data-dependent
value leaks: the set of doubles that ``value + noise`` can produce depends on
``value``, so some outputs are possible under one dataset and impossible under
its neighbour. dpstats therefore releases every numeric statistic this way:

1. **An integer statistic.** Mechanisms compute their statistic exactly as an
   integer S in a public unit u (a rational: the statistic is S·u) —
   :mod:`dpstats._kernels.fixed_point` quantises each record to a public fixed-point
   grid and sums integers, so no rounding error depends on the data — or, where
   that is not possible, as a float with a proven bound ``error`` on its
   absolute rounding error.
2. **A public grid.** A power of two G is chosen from public quantities only
   (the sensitivity, the number of coordinates a neighbour can move, ε): about
   2^-20 (Gaussian) or 2^-12 (Laplace) of the per-coordinate sensitivity, so
   that the integer sensitivity in units of G is at least 2^20 (2^12) per
   moved coordinate.
3. **Rounding, charged.** S·u/G is rounded to the nearest integer (exactly, in
   integer arithmetic; no rounding when u/G is an integer). Rounding moves each
   coordinate by at most 1/2, so a neighbour's rounded statistic moves by at
   most Δ/G + 1 per coordinate (+ 2·error/G for a float statistic): the
   sensitivity in grid units is Δ₁/G + c (L1) or Δ₂/G + √c (L2) with c the
   number of coordinates a neighbour can move — charged, not ignored (a
   relative 2^-20, or 2^-12 for Laplace noise).
4. **Exact integer noise.** Discrete Laplace (pure ε-DP, exactly ε = Δ₁/t for
   integer sensitivity) or discrete Gaussian (accounted as the continuous
   Gaussian mechanism by the smoothing lemma of
   :mod:`dpstats.noise.calibration`), sampled exactly from random bits by
   :mod:`dpstats.noise.exact`.
5. **Scaled back.** The release is (rounded statistic + noise)·G: a function of
   an integer only, so whatever floating-point arithmetic follows is
   post-processing and cannot leak.

``noise="float"`` keeps the papers' continuous floating-point noise, for
reproducing published numbers and for speed comparisons; it warns with
:class:`~dpstats.exceptions.FloatingPointNoiseWarning`.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._rounding import float_up, sqrt_up
from .._trace import active, draw, observe
from .._validation import check_choice
from ..accounting.events import Event, Gaussian, Laplace
from ..accounting.gaussian import ROUND_UP, gaussian_epsilon
from ..accounting.ledger import NoiseStatement
from ..exceptions import FloatingPointNoiseWarning, ParameterError
from .calibration import discrete_gaussian_sigma, gaussian_sigma, laplace_scale
from .intervals import continuous_half_width, grid_half_width

__all__ = [
    "NOISE",
    "Noise",
    "Statistic",
    "grid_for",
    "grid_integers",
    "integers_times_grid",
    "make_noise",
    "output_grid",
]

NOISE = ("exact", "float")

#: log2 of the integer sensitivity per moved coordinate on the grid (the rounding slack is 2^-bits of it): 20 for
#: Gaussian noise; 12 for Laplace noise, whose exact privacy-loss distribution (used by the accountant for scalar
#: releases) is computed over the integer sensitivity and stays fast at 2^12.
GRID_BITS = 20
LAPLACE_GRID_BITS = 12
#: The largest discrete Laplace scale (in grid units) the exact sampler takes; smaller ε coarsens the grid.
_MAX_LAPLACE_SCALE = 2**50
_LAPLACE_SCALE_DENOMINATOR = 2**10
#: The largest discrete Gaussian σ (in grid units) the grid layer asks for; the sampler goes to 2^60.
_MAX_GAUSSIAN_SIGMA = 2.0**56
_INT64_SAFE = 2**62
#: Calibrations of statistics with at most this many units are cached (:func:`make_noise`).
_CACHED_UNITS = 256


@dataclass(frozen=True)
class Statistic:
    """A statistic before noise: ``values`` × ``unit``.

    Either exact — ``values`` holds integers (an int64 array, or an object
    array / Python ints when they may exceed int64) and ``unit`` is a
    positive :class:`fractions.Fraction` or an object array of them, one per
    coordinate — or a float statistic (``unit`` is None).
    """

    values: object
    unit: object = None

    def as_float(self) -> np.ndarray:
        """The statistic as float64 (for the float noise path and for checks)."""
        if self.unit is None:
            return np.asarray(self.values, dtype=np.float64)
        exact = np.frompyfunc(lambda v, u: float(Fraction(int(v)) * u), 2, 1)(np.asarray(self.values), self.unit)
        return np.asarray(exact, dtype=np.float64)


class Noise:
    """Calibrated noise for one release: its privacy event and how to add it (see :func:`make_noise`)."""

    event: Event
    kind: str  # "laplace" or "gaussian"

    @property
    def noise_scale(self) -> float:  # pragma: no cover - interface
        """The noise's σ (Gaussian) or scale b (Laplace), in the statistic's real units."""
        raise NotImplementedError

    def half_width(self, confidence: float = 0.95) -> float:  # pragma: no cover - interface
        """h: each coordinate of the release is within ±h of the exact statistic with probability >= confidence
        (:mod:`dpstats.noise.intervals`), in the statistic's units."""
        raise NotImplementedError

    def statement(self, units: str, *, factor: float = 1.0, confidence: float = 0.95) -> NoiseStatement:
        """What this noise means for the release, for the ledger (``charge(..., noise=...)``): its scale and
        the half-width of a ``confidence`` interval of the release's error, in ``units`` (say which: "data
        units", "Gram units (entries of XᵀX)", ...). ``factor`` scales both, for a release that is the noisy
        statistic times a public number (CCA divides the noisy Gram matrix by n)."""
        discrete = "discrete " if isinstance(self, _GridNoise) else ""
        name = f"{discrete}{'Laplace' if self.kind == 'laplace' else 'Gaussian'}"
        return NoiseStatement(name, self.noise_scale * factor, self.half_width(confidence) * factor, units, confidence)

    def apply(self, statistic: Statistic, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class _GridNoise(Noise):
    event: Event
    grid: Fraction
    unit: Fraction | None
    kind: str
    scale: Fraction  # discrete Laplace t, or discrete Gaussian σ²

    # The noise is calibrated once per public setting and shared by the calls that ask for it again
    # (:func:`make_noise`'s cache), so what a release asks of it at every call is computed once, on first use.

    @functools.cached_property
    def noise_scale(self) -> float:
        root = math.sqrt(self.scale) if self.kind == "gaussian" else float(self.scale)
        return root * float(self.grid)

    def half_width(self, confidence: float = 0.95) -> float:
        return _grid_half_width(self.kind, self.scale, self.grid, confidence)

    def statement(self, units: str, *, factor: float = 1.0, confidence: float = 0.95) -> NoiseStatement:
        key = (units, factor, confidence)
        found = self._public.get(key)
        if found is None:
            found = self._public[key] = Noise.statement(self, units, factor=factor, confidence=confidence)
        return found  # immutable

    @functools.cached_property
    def _public(self) -> dict:
        """Statements asked for (immutable), and per-unit quantities of :meth:`apply`."""
        return {}

    @functools.cached_property
    def _scalar(self) -> tuple:
        """For :meth:`apply` on one exact integer: (u/G as a numerator and a denominator, G as a float, the name
        observed, the name of the draw, the sampler of one draw, t's or σ²'s numerator and denominator)."""
        from .exact import one_draw

        ratio = self.unit / self.grid
        return (
            ratio.numerator,
            ratio.denominator,
            float(self.grid),
            _grid_name(self.grid),
            f"discrete {self.kind} noise",
            functools.partial(one_draw, self.kind),
            self.scale.numerator,
            self.scale.denominator,
        )

    def apply(self, statistic: Statistic, rng: np.random.Generator) -> np.ndarray:
        """Round the statistic to the grid (exactly), add exact integer noise, scale back.

        The instrumentation point of :mod:`dpstats._trace`: the integer statistic on the grid moves by at most the
        event's integer sensitivity between neighbours (L1 for Laplace, L2 for Gaussian noise)."""
        if type(statistic.values) is int and isinstance(statistic.unit, Fraction) and isinstance(self.unit, Fraction):
            return self._apply_scalar(statistic, rng)
        from .exact import discrete_gaussian, discrete_laplace

        rounded = self._rounded(statistic)
        shape = np.shape(rounded)
        norm = "l1" if self.kind == "laplace" else "l2"
        observe(_grid_name(self.grid), rounded, sensitivity=self.event.sensitivity, norm=norm)

        def sample():
            sampler = discrete_laplace if self.kind == "laplace" else discrete_gaussian
            noise = sampler(self.scale.numerator, self.scale.denominator, shape, rng)
            if shape == ():  # one number: in Python ints, the same value and rounding as the arrays below
                return np.float64(float(int(rounded) + int(noise)) * float(self.grid))
            return integers_times_grid(_add(rounded, noise), self.grid)

        return draw(f"discrete {self.kind} noise", rng, sample)

    def _apply_scalar(self, statistic: Statistic, rng: np.random.Generator) -> np.float64:
        """:meth:`apply` on one exact integer (a Python int): the same rounding, observation, draw and value, in
        Python ints, with the per-unit quantities computed once (``_scalar``)."""
        if statistic.unit != self.unit:
            raise ParameterError(f"statistic unit {statistic.unit} differs from the calibrated unit {self.unit}")
        numerator, denominator, grid, observed, drawn, sampler, t, s = self._scalar
        rounded = _round_exact(statistic.values, numerator, denominator)
        if active() is not None:  # the sensitivity checker records the statistic as the arrays' path gives it
            norm = "l1" if self.kind == "laplace" else "l2"
            observe(observed, _compact(np.array(rounded, object)), sensitivity=self.event.sensitivity, norm=norm)
        return draw(drawn, rng, lambda: np.float64(float(rounded + sampler(t, s, rng)) * grid))

    def _rounded(self, statistic: Statistic):
        if not _same_unit(statistic.unit, self.unit):
            raise ParameterError(f"statistic unit {statistic.unit} differs from the calibrated unit {self.unit}")
        if statistic.unit is None:  # float statistic
            return grid_integers(statistic.values, self.grid)
        if isinstance(statistic.unit, Fraction):
            ratio = statistic.unit / self.grid
            if isinstance(statistic.values, int):  # one exact integer (a Python int): no array arithmetic
                return _compact(np.array(_round_exact(statistic.values, ratio.numerator, ratio.denominator), object))
            return _round_ratio(np.asarray(statistic.values), ratio.numerator, ratio.denominator)
        ratios = np.asarray(statistic.unit, dtype=object) / self.grid
        rounded = np.frompyfunc(lambda v, r: _round_exact(int(v), r.numerator, r.denominator), 2, 1)
        return _compact(np.asarray(rounded(np.asarray(statistic.values), ratios), dtype=object))


def _same_unit(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    return bool(np.all(np.asarray(a, dtype=object) == np.asarray(b, dtype=object)))


@functools.lru_cache(maxsize=256)
def _grid_name(grid: Fraction) -> str:
    """The name under which the statistic on ``grid`` is observed (:mod:`dpstats._trace`)."""
    return f"statistic on the grid {float(grid):g}"


@functools.lru_cache(maxsize=1024)
def _grid_half_width(kind: str, scale: Fraction, grid: Fraction, confidence: float) -> float:
    """:func:`dpstats.noise.intervals.grid_half_width`, cached (a pure function of public numbers, asked for the
    ledger at every release)."""
    return grid_half_width(kind, scale, grid, confidence)


def _round_exact(value: int, numerator: int, denominator: int) -> int:
    """round(value · numerator / denominator), halves up, in integer arithmetic."""
    return (value * numerator * 2 + denominator) // (2 * denominator)


def _round_ratio(values: np.ndarray, numerator: int, denominator: int):
    """round(values · numerator / denominator) to the nearest integer (halves up), exactly.

    This runs after the accountant was charged, so it must never fail, whatever the data: the int64 shortcuts
    are taken only when no intermediate can overflow; everything else goes through Python integers.
    """
    small = values.dtype != object and np.abs(values).max(initial=0) < 2**61
    if small and denominator == 1 and numerator < 2**61 // max(1, int(np.abs(values).max(initial=0))):
        return values.astype(np.int64) * numerator
    shift = denominator.bit_length() - 1
    if small and numerator == 1 and denominator == 1 << shift and 1 <= shift <= 61:
        return (values.astype(np.int64) + (1 << (shift - 1))) >> shift  # arithmetic shift: floor division
    flat = [_round_exact(int(v), numerator, denominator) for v in values.ravel().tolist()]
    return _compact(np.array(flat, dtype=object).reshape(values.shape))


def _compact(values: np.ndarray) -> np.ndarray:
    """int64 if every integer fits comfortably, else the object array as it is."""
    if values.size == 0 or max(abs(int(v)) for v in values.ravel()) < _INT64_SAFE:
        return values.astype(np.int64)
    return values


def _add(rounded, noise: np.ndarray):
    if (
        rounded.dtype != object
        and np.abs(rounded).max(initial=0) < _INT64_SAFE // 2
        and np.abs(noise).max(initial=0) < _INT64_SAFE // 2
    ):
        return rounded + noise
    return rounded.astype(object) + noise.astype(object)


def grid_integers(values, grid) -> np.ndarray:
    """round(values/G) as exact integers: int64, or Python ints (an object array) where they could overflow it.
    values/G is exact (G a power of two), and so is the rounding."""
    scaled = np.rint(np.asarray(values, dtype=np.float64) / float(grid))
    if np.abs(scaled).max(initial=0.0) < _INT64_SAFE:
        return scaled.astype(np.int64)
    return np.vectorize(int, otypes=[object])(scaled)


def output_grid(sensitivity: float, coordinates: int, noise: str) -> float | None:
    """The public grid (2^-:data:`GRID_BITS` of the per-coordinate sensitivity) of a release whose noise is not
    drawn here (ERM's Gamma-norm noise), or None for ``noise="float"``, which warns."""
    check_choice(noise, "noise", NOISE)
    if noise == "float":
        _warn_float_noise(stacklevel=5)
        return None
    return float(grid_for(sensitivity / math.sqrt(coordinates)))


def _warn_float_noise(stacklevel: int) -> None:
    warnings.warn(
        "noise='float' adds floating-point noise, which leaks the data through the low-order bits of the release "
        "(Mironov 2012); use it only to reproduce published numbers",
        FloatingPointNoiseWarning,
        stacklevel=stacklevel,
    )


def integers_times_grid(integers: np.ndarray, grid) -> np.ndarray:
    """integers·G as float64 (exact while |integer| < 2^53; beyond, a deterministic rounding of an integer, which
    is post-processing of the integer release)."""
    g = float(grid)
    if integers.dtype != object:
        return integers.astype(np.float64) * g
    return np.vectorize(lambda v: float(v) * g, otypes=[np.float64])(integers)


@dataclass(frozen=True)
class _FloatNoise(Noise):
    event: Event
    kind: str
    scale: float  # Laplace b or Gaussian σ

    @property
    def grid(self) -> None:
        """Floating-point noise has no grid."""
        return None

    @property
    def noise_scale(self) -> float:
        return self.scale

    def half_width(self, confidence: float = 0.95) -> float:
        return continuous_half_width(self.kind, self.scale, confidence)

    def apply(self, statistic: Statistic, rng: np.random.Generator) -> np.ndarray:
        value = statistic.as_float()
        norm = "l1" if self.kind == "laplace" else "l2"
        observe("statistic in floating point", value, sensitivity=self.event.sensitivity, norm=norm, exact=False)
        if self.kind == "laplace":
            return draw("Laplace noise", rng, lambda: value + rng.laplace(0.0, self.scale, size=value.shape))
        return draw("Gaussian noise", rng, lambda: value + rng.normal(0.0, self.scale, size=value.shape))


def make_noise(
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    changed: int,
    unit=None,
    slack: float = 0.0,
    noise: str = "exact",
    calibration: str = "analytic",
    repeat: int = 1,
    share: Fraction | int = 1,
    failure: float = 0.0,
    grid_bits: int = GRID_BITS,
) -> Noise:
    """Calibrate the noise for a statistic: Laplace (δ = 0, L1 ``sensitivity``) or Gaussian (δ > 0, L2).

    Parameters
    ----------
    epsilon, delta : float
        The release's guarantee (already validated).
    sensitivity : float
        L1 (δ = 0) or L2 (δ > 0) sensitivity of the statistic in real units, under replace-one neighbours.
    changed : int
        How many coordinates a neighbour can move (the rounding slack; the number of coordinates for dense
        statistics).
    unit : Fraction or array of Fraction, optional
        The unit of an exact integer statistic; None for a float statistic.
    slack : float, default 0
        How far, in real units, a coordinate can move between neighbours beyond what ``sensitivity`` covers:
        twice the floating-point error bound of a float statistic, or the per-block rounding of
        :func:`dpstats._engine.grid_gram`. Charged like the rounding to the grid.
    noise : {"exact", "float"}, default "exact"
        "float": the papers' continuous noise, open to the floating-point attack (warns).
    calibration : {"analytic", "classic"}
        Gaussian calibration; "classic" (paper-faithful, ε < 1 only) implies ``noise="float"``. Where its σ is not
        (ε, δ)-DP (large ε), the event is labelled with the ε its σ gives, so an accountant is charged that.
    repeat : int, default 1
        Number of Gaussian releases of this statistic's kind (the power method's iterations) that together must
        be (ε, δ)-DP: L Gaussians with multiplier μ compose exactly into one with μ/√L, so each gets √L times
        the σ of a single (ε, δ) release.
    share : Fraction, default 1
        The part 0 < w <= 1 of one Gaussian (ε, δ) budget that this release gets (Gaussian only): σ is √(1/w)
        times the σ of a whole (ε, δ) release, i.e. its multiplier μ/√w. Gaussian releases made together whose
        shares sum to at most 1 compose exactly, adaptively too, into one Gaussian mechanism with multiplier at
        least μ (1/μ_total² = Σ w_i/μ² <= 1/μ²): they are (ε, δ)-DP together. Each part's event keeps the label
        (ε, δ), which overstates its own cost; charge the parts as one event,
        :func:`dpstats.accounting.events.composed_gaussian`.
    failure : float, default 0
        Probability that the sensitivity bound fails (added to δ; Gaussian only).
    grid_bits : int, default GRID_BITS
        The Gaussian grid is 2^-grid_bits of the per-coordinate sensitivity; a
        coarser grid (fewer bits) leaves room for the floating-point error of a
        float statistic, at a relative cost of about 2^-grid_bits in noise.

    Returns
    -------
    Noise
        ``.event`` to charge before drawing, ``.apply(statistic, rng)`` to release.
    """
    check_choice(noise, "noise", NOISE)
    if noise == "float" or calibration == "classic":
        spread = _spread(repeat, share, delta)
        return _float_noise(epsilon, delta, sensitivity, changed, calibration, repeat, failure, spread)
    cached = unit is None or isinstance(unit, Fraction) or np.size(unit) <= _CACHED_UNITS  # a key costs O(size)
    calibrate = _exact_noise if cached else _exact_noise.__wrapped__
    return calibrate(epsilon, delta, sensitivity, changed, _unit_key(unit), slack, repeat, share, failure, grid_bits)


def _unit_key(unit) -> tuple | None:
    """A statistic's unit as a key of plain integers (hashed fast, unlike a Fraction): None; (p, q) for the
    Fraction p/q; (shape, ((p, q), ...)) for an array of them."""
    if unit is None:
        return None
    if isinstance(unit, Fraction):
        return unit.numerator, unit.denominator
    unit = np.asarray(unit, dtype=object)
    return unit.shape, tuple((u.numerator, u.denominator) for u in unit.ravel().tolist())


def _unit_of(key: tuple | None):
    """The unit of :func:`_unit_key`'s key (an array read-only: it is shared by the calls that hit the cache)."""
    if key is None or isinstance(key[0], int):
        return key if key is None else Fraction(*key)
    shape, values = key
    unit = np.array([Fraction(p, q) for p, q in values], dtype=object).reshape(shape)
    unit.flags.writeable = False
    return unit


@functools.lru_cache(maxsize=1024, typed=True)
def _exact_noise(epsilon, delta, sensitivity, changed, unit: tuple | None, slack, repeat, share, failure, grid_bits):
    """:func:`make_noise` for exact integer noise, cached: a pure function of public numbers (the calibration, the
    grid and their exact arithmetic in Fractions cost more than a small release's data work, and a session or an
    audit asks for the same ones again and again). The result is immutable (frozen dataclasses, Fractions, a
    read-only unit array)."""
    spread = _spread(repeat, share, delta)
    if delta == 0:
        return _laplace_grid(epsilon, sensitivity, changed, _unit_of(unit), slack)
    return _gaussian_grid(
        epsilon, delta, sensitivity, changed, _unit_of(unit), slack, repeat, failure, grid_bits, spread
    )


def _spread(repeat: int, share, delta: float) -> float:
    """√(repeat/share): the factor on a single (ε, δ) release's σ (1 for one whole release). For a share below 1 it
    is rounded up; √repeat of a whole share is the correctly rounded root, whose last-bit rounding the discrete
    Gaussian's added σ₁² in variance covers (:func:`dpstats.noise.calibration.discrete_gaussian_sigma`)."""
    share = Fraction(share)
    if not 0 < share <= 1:
        raise ParameterError(f"share must be a fraction of a budget, 0 < share <= 1; got {share}")
    if share == 1:
        return math.sqrt(repeat)
    if delta == 0:
        raise ParameterError("share applies to Gaussian noise (delta > 0) only")
    ratio = Fraction(repeat) / share
    factor = math.sqrt(float(ratio))
    while Fraction(factor) ** 2 < ratio:
        factor = math.nextafter(factor, math.inf)
    return factor


def _float_noise(epsilon, delta, sensitivity, changed, calibration, repeat, failure, spread) -> Noise:
    _warn_float_noise(stacklevel=5)
    if delta == 0:
        scale = laplace_scale(sensitivity, epsilon)
        return _FloatNoise(Laplace.calibrated(scale, sensitivity, coordinates=changed), "laplace", scale)
    sigma = gaussian_sigma(sensitivity, epsilon, delta - failure, calibration) * spread
    if calibration == "classic":  # proven for ε < 1 only: the ledger is charged what this σ gives, if more
        multiplier = sigma / sensitivity / spread if sensitivity > 0 else math.inf
        epsilon = max(epsilon, gaussian_epsilon(multiplier / ROUND_UP, delta - failure))
    event = Gaussian(epsilon, delta, sigma=sigma, sensitivity=sensitivity, repeat=repeat, failure=failure)
    return _FloatNoise(event, "gaussian", sigma)


def grid_for(per_coordinate: float, bits: int = GRID_BITS) -> Fraction:
    """The public power-of-two grid G: the largest power of two <= 2^-bits · ``per_coordinate`` (the
    sensitivity per moved coordinate, in real units), from the float's exponent (exact, no logarithm)."""
    if not (math.isfinite(per_coordinate) and per_coordinate > 0):
        raise ParameterError(f"the sensitivity per coordinate must be finite and > 0; got {per_coordinate!r}")
    return Fraction(2) ** (math.frexp(per_coordinate)[1] - 1 - bits)


def _grid(per_coordinate: float, unit, bits: int) -> tuple[Fraction, bool]:
    """The grid, and whether S·u/G needs rounding (not when u/G is an integer for every coordinate)."""
    grid = grid_for(per_coordinate, bits)
    if unit is None:
        return grid, True
    ratios = np.asarray(unit, dtype=object).ravel() / grid
    return grid, any(r.denominator != 1 for r in ratios)


def _laplace_grid(epsilon, sensitivity, changed, unit, slack) -> Noise:
    grid, rounds = _grid(sensitivity / changed, unit, LAPLACE_GRID_BITS)
    while True:
        integer_sensitivity = _integer_l1(sensitivity, changed, grid, rounds, slack)
        scale = Fraction(
            math.ceil(Fraction(integer_sensitivity) / Fraction(epsilon) * _LAPLACE_SCALE_DENOMINATOR),
            _LAPLACE_SCALE_DENOMINATOR,
        )
        if scale <= _MAX_LAPLACE_SCALE:
            break
        grid, rounds = _coarser(grid, sensitivity, changed, epsilon)  # tiny ε: keep the scale in the sampler's range
    eps = float_up(Fraction(integer_sensitivity) / scale)
    event = Laplace(
        epsilon=eps, scale=float(scale), sensitivity=float(integer_sensitivity), discrete=True, coordinates=changed
    )
    return _GridNoise(event, grid, unit, "laplace", scale)


def _integer_l1(sensitivity, changed, grid, rounds, slack) -> int:
    """The L1 sensitivity in grid units: Δ₁/G plus, per moved coordinate, the rounding and the slack."""
    moved = changed * ((1 if rounds else 0) + Fraction(slack) / grid)
    return math.floor(Fraction(sensitivity) / grid + moved)


def _integer_l2(sensitivity, changed, grid, rounds, slack) -> float:
    """The L2 sensitivity in grid units, from the integer bound on ‖v‖² (v an integer vector)."""
    moved = float_up(Fraction(sqrt_up(changed)) * ((1 if rounds else 0) + Fraction(slack) / grid))
    real = float_up(Fraction(sensitivity) / grid + Fraction(moved))
    return sqrt_up(math.floor(Fraction(real) ** 2))


def _coarser(grid: Fraction, sensitivity: float, changed: int, epsilon: float) -> tuple[Fraction, bool]:
    """The next coarser grid, unless the rounding would then cost more than the sensitivity itself."""
    if Fraction(sensitivity) / grid < 2 * changed:
        raise ParameterError(
            f"epsilon={epsilon:g} is too small for exact integer noise: the noise would be more than 2^50 times the "
            "sensitivity. Use a larger epsilon (the release would be pure noise anyway)"
        )
    return grid * 2, True


def _gaussian_grid(epsilon, delta, sensitivity, changed, unit, slack, repeat, failure, bits, spread) -> Noise:
    grid, rounds = _grid(sensitivity / math.sqrt(changed), unit, bits)
    while True:
        integer_sensitivity = _integer_l2(sensitivity, changed, grid, rounds, slack)
        sigma = discrete_gaussian_sigma(integer_sensitivity, epsilon, delta - failure) * spread
        if sigma <= _MAX_GAUSSIAN_SIGMA:
            break
        grid, rounds = _coarser(grid, sensitivity, changed, epsilon)
    sigma2 = Fraction(math.ceil(Fraction(sigma) ** 2))
    event = Gaussian(
        epsilon, delta, sigma=sigma, sensitivity=integer_sensitivity, discrete=True, repeat=repeat, failure=failure
    )
    return _GridNoise(event, grid, unit, "gaussian", sigma2)
