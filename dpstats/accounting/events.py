"""Privacy events: what a release *is*, so that an accountant can compose it tightly.

A mechanism does not only say "(ε, δ)": it says which noise it added, with
which scale and sensitivity. Each class below describes one kind of release
and knows its own guarantee in the three languages the composition rules of
:mod:`dpstats.accounting.compose` speak:

* ``epsilon_delta`` — the standalone (ε, δ) guarantee the mechanism was
  calibrated for (basic and advanced composition use it);
* :meth:`Event.zcdp` — a zero-concentrated-DP parameter ρ (Bun & Steinke 2016)
  with an additive δ for releases that are only approximately zCDP;
* :meth:`Event.pld` — a privacy-loss distribution (Google's ``dp_accounting``),
  which composes tightly (Koskela, Jälkö & Honkela 2020; Doroshenko, Ghazi,
  Kamath, Kumar & Manurangsi 2022).

Every event is a frozen dataclass that round-trips through :meth:`Event.to_dict` /
:func:`event_from_dict` (plain JSON types), so a ledger exported by
:meth:`dpstats.Accountant.to_json` holds every parameter another tool needs to
recompute the guarantee.

Each event's ``sensitivity`` is for the neighbouring relation of the release that charged it (replace one row,
or replace all rows of one privacy unit); the ledger entry records which
(:class:`~dpstats.accounting.LedgerEntry`, ``relation``).

Labels and noise
----------------
An event's (ε, δ) label must be a guarantee of its noise: basic and advanced composition add the labels up, and the
other rules take the basic statement when it is smaller, so a label below what the noise gives would under-charge.
:func:`check_label` checks it, for every event recorded (:meth:`dpstats.Accountant.record`) and every event read
back (:func:`event_from_dict`):

* Laplace: ε >= Δ₁/b (the exact quotient), δ = 0;
* Gaussian: the Gaussian mechanism with the event's combined multiplier μ = σ_eff/(Δ₂√repeat) is
  (ε, δ − failure)-DP by the exact condition of Balle & Wang (2018, Theorem 8), evaluated with 60 digits
  (:func:`~dpstats.accounting.gaussian.exact_gaussian_privacy_gap`); ``failure`` <= δ; a Gaussian without noise
  (σ_eff = 0) on a query that can move holds no finite ε;
* exponential mechanism and plain ε-DP: δ = 0 (their ε is their definition).

The check allows a label to fall short by a relative :data:`LABEL_SLACK` = 2⁻²⁹ (2e-9) at most, in ε for Laplace
noise and in the multiplier for Gaussian noise, and refuses anything more. That covers the rounding of the float
operations that produce either side (the multiplier of a repeated Gaussian is a float product; a label from an
older dpstats may be a quotient rounded to nearest) and the events recorded for noise calibrated after the charge
(``low_rank``'s projection: its multiplier is recorded 2⁻³⁰ below the noise added, so that the rules that read the
noise never credit more than was added, and its label is that of the noise added).

A lower bound on ε
------------------
:meth:`Event.epsilon_floor` is a lower bound on the ε at δ of the distribution :meth:`Event.pld` returns, and so on
the ε of any composition that contains the release (a composition is at least as revealing as each of its parts).
An accountant refuses a release whose floor exceeds its budget without building its privacy-loss distribution,
which for a large ε holds millions of points.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from .._rounding import float_up
from ..exceptions import ParameterError
from .gaussian import dominating_sigma, exact_gaussian_privacy_gap, gaussian_privacy_gap

__all__ = [
    "ApproxDP",
    "Event",
    "LABEL_SLACK",
    "check_label",
    "Exponential",
    "Gaussian",
    "Laplace",
    "PureDP",
    "composed_gaussian",
    "event_from_dict",
]

#: Default discretisation of privacy-loss values (dp_accounting's ``value_discretization_interval``). The PLD
#: estimate is pessimistic: it never reports an ε below the true one; 1e-4 keeps it within 1e-3 relative.
PLD_DISCRETIZATION = 1e-4


def _dp_parameters(epsilon: float, delta: float):
    from dp_accounting.pld import common

    return common.DifferentialPrivacyParameters(epsilon, delta)


@dataclass(frozen=True)
class Event:
    """Base class: one release's privacy guarantee.

    Attributes
    ----------
    epsilon, delta : float
        The standalone (ε, δ) guarantee of the release.
    """

    kind: ClassVar[str] = ""

    epsilon: float
    delta: float

    def zcdp(self) -> tuple[float, float]:
        """``(ρ, δ)``: the release is δ-approximately ρ-zCDP (δ = 0: plain ρ-zCDP).

        The default, for an (ε, δ)-DP release, is ρ = ε²/2 with the same δ
        (Bun & Steinke 2016, Proposition 1.4, applied to the ε-DP part).
        """
        return self.epsilon**2 / 2.0, self.delta

    def pld(self, discretization: float = PLD_DISCRETIZATION):
        """A ``dp_accounting`` privacy-loss distribution that dominates the release (the worst case of its
        (ε, δ) guarantee unless a subclass knows better)."""
        from dp_accounting.pld import privacy_loss_distribution as pld

        return pld.from_privacy_parameters(
            _dp_parameters(self.epsilon, self.delta), value_discretization_interval=discretization
        )

    def epsilon_floor(self, delta: float) -> float:
        """A lower bound on ε at ``delta`` of the distribution :meth:`pld` returns (module docstring).

        The default, for the worst-case pair of an (ε₀, δ₀)-DP release (privacy loss ε₀ with probability
        (1 − δ₀)e^ε₀/(1 + e^ε₀), −ε₀ with the rest, δ₀ at infinity): its hockey-stick divergence is
        δ(ε) = δ₀ + (1 − δ₀)(1 − e^{ε−ε₀}) e^ε₀/(1 + e^ε₀) for ε < ε₀, so δ(ε) <= δ needs
        1 − e^{ε−ε₀} <= (δ − δ₀)(1 + e^{−ε₀})/(1 − δ₀) <= 2δ, that is ε >= ε₀ + ln(1 − 2δ) (and no finite ε
        when δ < δ₀). Pessimistic discretisation only raises the distribution's ε.
        """
        return _pure_floor(self.epsilon, delta)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: ``{"type": kind, field: value, ...}``."""
        return {"type": self.kind, **dataclasses.asdict(self)}

    def describe(self) -> str:
        """One line for the ledger table."""
        return self.kind


@dataclass(frozen=True)
class PureDP(Event):
    """An ε-DP release whose noise has no finer description here (e.g. Gamma-norm vector noise)."""

    kind: ClassVar[str] = "pure_dp"

    delta: float = 0.0


@dataclass(frozen=True)
class ApproxDP(Event):
    """An (ε, δ)-DP release known only by its two parameters (for example a spend recorded by hand)."""

    kind: ClassVar[str] = "approx_dp"


@dataclass(frozen=True)
class Exponential(Event):
    """The exponential mechanism (McSherry & Talwar 2007) with factor ε/(2Δq): ε-DP and ε-bounded-range.

    Bounded range gives ε²/8-zCDP (Cesar & Rogers 2021, Lemma 3.2), four times
    better than the ε²/2 of a generic ε-DP release.
    """

    kind: ClassVar[str] = "exponential"

    delta: float = 0.0

    def zcdp(self) -> tuple[float, float]:
        return self.epsilon**2 / 8.0, 0.0


@dataclass(frozen=True)
class Laplace(Event):
    """Laplace noise of scale ``scale`` on a query of L1 sensitivity ``sensitivity``: ε = Δ₁/b, pure.

    ``discrete=True`` is the discrete Laplace (two-sided geometric) on an
    integer-valued query with integer sensitivity: P(z) ∝ exp(−|z|/b), exactly
    Δ₁/b-DP as well (Ghosh, Roughgarden & Sundararajan 2012; Canonne, Kamath &
    Steinke 2020, Section 2.2). ``coordinates`` is the number of noisy
    coordinates a neighbour can move: with 1 the release is the 1-D Laplace
    mechanism and its exact privacy-loss distribution is used; with more, the
    worst case of ε-DP (the 1-D distribution need not dominate a shift spread
    over several coordinates).
    """

    kind: ClassVar[str] = "laplace"

    scale: float = 1.0
    sensitivity: float = 1.0
    discrete: bool = False
    coordinates: int = 1
    delta: float = 0.0

    @classmethod
    def calibrated(cls, scale: float, sensitivity: float, *, discrete: bool = False, coordinates: int = 1) -> Laplace:
        """The event of Laplace(``scale``) noise on a query of L1 sensitivity ``sensitivity``: ε = Δ₁/b, the
        exact quotient rounded up."""
        return cls(
            epsilon=float_up(Fraction(sensitivity) / Fraction(scale)),
            scale=scale,
            sensitivity=sensitivity,
            discrete=discrete,
            coordinates=coordinates,
        )

    def pld(self, discretization: float = PLD_DISCRETIZATION):
        from dp_accounting.pld import privacy_loss_distribution as pld

        if self.coordinates != 1:
            return super().pld(discretization)
        if self.discrete and float(self.sensitivity).is_integer():
            return pld.from_discrete_laplace_mechanism(
                1.0 / self.scale, sensitivity=int(self.sensitivity), value_discretization_interval=discretization
            )
        return pld.from_laplace_mechanism(
            self.scale, sensitivity=self.sensitivity, value_discretization_interval=discretization
        )

    def epsilon_floor(self, delta: float) -> float:
        """For one coordinate, ε₀ = Δ₁/b + ln(1 − 2δ): with f(D) = 0, f(D′) = Δ₁ and S = {y >= Δ₁}, continuous
        or discrete Laplace noise Z gives P_D′(S) = P(Z >= 0) >= 1/2 and P_D(S) = P(Z >= Δ₁) = e^{−Δ₁/b} P(Z >= 0)
        (for the discrete one, Δ₁ an integer), so δ(ε) >= P_D′(S) − e^ε P_D(S) exceeds δ unless
        ε >= Δ₁/b + ln(1 − δ/P(Z >= 0)) >= Δ₁/b + ln(1 − 2δ). Several coordinates: the default."""
        if self.coordinates != 1:
            return super().epsilon_floor(delta)
        return _pure_floor(self.sensitivity / self.scale, delta)

    def describe(self) -> str:
        kind = "discrete Laplace" if self.discrete else "Laplace"
        return f"{kind} b={self.scale:.4g} Δ1={self.sensitivity:.4g}"


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian noise N(0, σ²) per coordinate on a query of L2 sensitivity Δ₂, possibly repeated.

    For continuous noise the release is the Gaussian mechanism with multiplier
    σ/Δ₂. For discrete Gaussian noise (``discrete=True``) on an integer-valued
    query, the release is, up to a factor e^{±η} with η < 1e-60, a
    post-processing of the continuous Gaussian mechanism with
    σ_eff = √(σ² − σ₁²), σ₁ = :data:`dpstats.noise.calibration.SMOOTHING_SIGMA`
    (the smoothing argument in :mod:`dpstats.noise.calibration`), so it is
    accounted as that mechanism: :attr:`noise_multiplier` is σ_eff/Δ₂, and the
    analytic calibration (Balle & Wang 2018) and the Gaussian privacy-loss
    distribution apply. zCDP uses ρ = repeat/(2μ²) with the same multiplier
    μ: Bun & Steinke (2016) for the continuous mechanism, and for the discrete
    one the same smoothing argument (a post-processing of the continuous
    mechanism with σ_c, up to pointwise factors e^{±η} that move Rényi
    divergences by O(η), below 1e-59).

    ``repeat`` adaptive compositions of the same Gaussian (the noisy power
    method's iterations) are exactly one Gaussian with multiplier
    σ_eff/(Δ₂√repeat). ``failure`` is an extra δ for releases that are the
    Gaussian mechanism only with probability at least 1 − ``failure``: whose
    sensitivity bound holds only with that probability (Hardt & Roth's range
    finder), or whose output distribution is a mixture, with weight at least
    1 − ``failure``, of the Gaussian mechanism's and anything else (private
    partition selection, :mod:`dpstats.noise.selection`). Mixtures of that
    kind compose into a mixture of the composed Gaussians with weight at least
    Π(1 − failure_i), so ``failure`` adds to δ under every rule.
    """

    kind: ClassVar[str] = "gaussian"

    sigma: float = 1.0
    sensitivity: float = 1.0
    discrete: bool = False
    repeat: int = 1
    failure: float = 0.0

    @property
    def noise_multiplier(self) -> float:
        """σ_eff/Δ₂ of one repetition (σ_eff = σ for continuous noise)."""
        sigma = dominating_sigma(self.sigma) if self.discrete else self.sigma
        return sigma / self.sensitivity if self.sensitivity > 0 else math.inf

    @property
    def combined_multiplier(self) -> float:
        """The multiplier of the single Gaussian that ``repeat`` repetitions compose into exactly."""
        return self.noise_multiplier / math.sqrt(self.repeat)

    def zcdp(self) -> tuple[float, float]:
        multiplier = self.noise_multiplier
        rho = self.repeat / (2.0 * multiplier**2) if multiplier > 0 else math.inf
        return rho, self.failure

    def pld(self, discretization: float = PLD_DISCRETIZATION):
        from dp_accounting.pld import privacy_loss_distribution as pld

        return pld.from_gaussian_mechanism(
            self.combined_multiplier, sensitivity=1.0, value_discretization_interval=discretization
        )

    def epsilon_floor(self, delta: float) -> float:
        """1/(2μ²) when μ/√(2π) < 1/2 − δ (μ the combined multiplier), else 0: at ε = 1/(2μ²) Balle & Wang's
        δ(ε) = Φ(1/(2μ) − εμ) − e^ε Φ(−1/(2μ) − εμ) is Φ(0) − e^{1/(2μ²)} Φ(−1/μ) >= 1/2 − μ/√(2π) (Mills' ratio,
        Φ(−x) <= φ(x)/x), which exceeds δ; δ(ε) decreases in ε, so every ε with δ(ε) <= δ is larger."""
        multiplier = self.combined_multiplier
        if multiplier == 0:
            return math.inf
        if math.isinf(multiplier) or multiplier / math.sqrt(2.0 * math.pi) >= 0.5 - delta:
            return 0.0
        return 0.5 / multiplier**2

    def describe(self) -> str:
        kind = "discrete Gaussian" if self.discrete else "Gaussian"
        times = f" x{self.repeat}" if self.repeat != 1 else ""
        return f"{kind} σ/Δ2={self.noise_multiplier:.4g}{times}"


def composed_gaussian(events, epsilon: float, delta: float) -> Gaussian:
    """One Gaussian event for several Gaussian releases made by one call, calibrated together to (ε, δ).

    Gaussian mechanisms compose exactly, adaptively too, into one Gaussian mechanism whose multiplier μ satisfies
    1/μ² = Σ 1/μ_i² (each μ_i the :attr:`Gaussian.combined_multiplier` of a part, which accounts for discrete
    noise and repetitions; Dong, Roth & Su 2022, Corollary 3.3). The result is that single mechanism, with μ
    rounded down (exact rational arithmetic) and the parts' failure probabilities added. Its label is (ε, δ) when
    the exact condition of Balle & Wang (2018) holds at μ for ε and δ minus the failure probability (checked with 60
    digits), else the smallest ε that does at δ: never understated. So every composition rule sees the parts as
    the one (ε, δ) release they were calibrated to be (make the parts with
    :func:`dpstats.noise.release.make_noise`'s ``share``).
    """
    from .gaussian import exact_gaussian_privacy_gap, gaussian_epsilon

    events = tuple(events)
    if not events or not all(isinstance(e, Gaussian) for e in events):
        raise ParameterError("composed_gaussian takes one or more Gaussian events")
    inverse = sum((1 / Fraction(e.combined_multiplier) ** 2 for e in events), Fraction(0))
    multiplier = math.sqrt(float(1 / inverse))
    while Fraction(multiplier) ** 2 * inverse > 1:
        multiplier = math.nextafter(multiplier, 0.0)
    failure = float_up(sum((Fraction(e.failure) for e in events), Fraction(0)))
    if not exact_gaussian_privacy_gap(multiplier, 1.0, epsilon) <= delta - failure:
        epsilon = gaussian_epsilon(multiplier, delta - failure)
    return Gaussian(epsilon, delta, sigma=multiplier, sensitivity=1.0, failure=failure)


_KINDS: dict[str, type[Event]] = {cls.kind: cls for cls in (PureDP, ApproxDP, Exponential, Laplace, Gaussian)}

#: How far below what its noise gives an event's label may be, relatively (module docstring, "Labels and noise").
LABEL_SLACK = 2.0**-29


def _pure_floor(epsilon: float, delta: float) -> float:
    """max(0, ε₀ + ln(1 − 2δ)): the floor of a pure ε₀-DP release (0 for δ >= 1/2)."""
    if delta >= 0.5:
        return 0.0
    return max(0.0, epsilon + math.log1p(-2.0 * delta))


def check_label(event: Event) -> Event:
    """Return ``event`` if its (ε, δ) label is a guarantee of its noise (module docstring, "Labels and noise");
    raise a ParameterError that says what the noise gives otherwise."""
    problem = _label_problem(event)
    if problem is not None:
        raise ParameterError(f"privacy event {event.kind!r}: {problem}")
    return event


@functools.lru_cache(maxsize=4096)
def _label_problem(event: Event) -> str | None:
    """What is wrong with ``event``'s label, or None (cached: a ledger repeats its events)."""
    if isinstance(event, Laplace | Exponential | PureDP) and event.delta != 0:
        return f"a pure release has delta 0; got delta={event.delta!r}"
    if isinstance(event, Laplace):
        noise = Fraction(event.sensitivity) / Fraction(event.scale)
        if Fraction(event.epsilon) * (1 + Fraction(LABEL_SLACK)) < noise:
            return (
                f"epsilon={event.epsilon!r} is below what its noise gives: Laplace scale {event.scale!r} on a "
                f"sensitivity of {event.sensitivity!r} is {float(noise)!r}-DP"
            )
    if isinstance(event, Gaussian):
        return _gaussian_label_problem(event)
    return None


def _gaussian_label_problem(event: Gaussian) -> str | None:
    if event.failure > event.delta:
        return f"failure={event.failure!r} exceeds delta={event.delta!r} (failure is part of delta)"
    multiplier = event.combined_multiplier
    if math.isinf(multiplier):  # sensitivity 0: the release reveals nothing
        return None
    what = f"its noise, a Gaussian of multiplier sigma/Delta = {multiplier!r}"
    if multiplier == 0:
        return f"{what} (no noise), holds no finite epsilon; it is labelled epsilon={event.epsilon!r}"
    budget = Fraction(event.delta) - Fraction(event.failure)
    lenient = multiplier * (1.0 + LABEL_SLACK)
    if budget > 0 and gaussian_privacy_gap(lenient, 1.0, event.epsilon) <= float(budget) * (1.0 - 1e-6):
        return None  # clear of the boundary: the float gap is accurate far beyond this margin
    import mpmath

    exact = exact_gaussian_privacy_gap(lenient, 1.0, event.epsilon)
    with mpmath.workdps(60):
        holds = exact <= mpmath.mpf(event.delta) - mpmath.mpf(event.failure)
    if holds:
        return None
    return (
        f"(epsilon={event.epsilon!r}, delta={event.delta!r}) is not a guarantee of {what}: at this epsilon it "
        f"needs delta >= {float(exact) + event.failure:.6g}"
    )


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output, checking every value (a ledger read back from a file or
    from JSON may have been edited): its type and fields must be known, every number finite, ε >= 0,
    0 <= δ < 1, scales and σ > 0, sensitivities >= 0, counts integers >= 1, and its (ε, δ) label a guarantee of
    its noise (:func:`check_label`). A ledger repeats its events: the checked event of each distinct content
    (field names, value types and values) is kept and returned again."""
    if isinstance(data, dict):
        try:
            content = tuple(sorted((name, type(value), value) for name, value in data.items()))
            return _event_from_content(content)
        except TypeError:  # an unhashable value: checked (and refused) below
            pass
    return _event_from_dict(data)


@functools.lru_cache(maxsize=4096)
def _event_from_content(content: tuple) -> Event:
    return _event_from_dict({name: value for name, _, value in content})


def _event_from_dict(data: dict[str, Any]) -> Event:
    if not isinstance(data, dict):
        raise ParameterError(f"a privacy event must be a JSON object; got {data!r}")
    fields = dict(data)
    kind = fields.pop("type", None)
    if kind not in _KINDS:
        raise ParameterError(f"unknown privacy event type {kind!r}; known: {', '.join(_KINDS)}")
    cls = _KINDS[kind]
    allowed = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(fields) - set(allowed)
    if unknown:
        raise ParameterError(f"privacy event {kind!r} has no field(s) {sorted(unknown)}")
    missing = [name for name, f in allowed.items() if name not in fields and f.default is dataclasses.MISSING]
    if missing:
        raise ParameterError(f"privacy event {kind!r} lacks the field(s) {missing}")
    checked = {name: _checked_field(kind, name, allowed[name].type, value) for name, value in fields.items()}
    return check_label(cls(**checked))


#: The allowed range of each numeric field read back: (lowest, inclusive?, highest, inclusive?).
_RANGES = {
    "epsilon": (0.0, True, math.inf, False),
    "delta": (0.0, True, 1.0, False),
    "failure": (0.0, True, 1.0, False),
    "scale": (0.0, False, math.inf, False),
    "sigma": (0.0, False, math.inf, False),
    "sensitivity": (0.0, True, math.inf, False),
    "repeat": (1, True, math.inf, False),
    "coordinates": (1, True, math.inf, False),
}


def _checked_field(kind: str, name: str, annotation: str, value):
    """``value`` as the field's type, or a ParameterError naming the event and the field."""
    if annotation == "bool":
        if not isinstance(value, bool):
            raise ParameterError(f"privacy event {kind!r}: {name} must be true or false; got {value!r}")
        return value
    integral = annotation == "int"
    wanted = numbers.Integral if integral else numbers.Real
    if isinstance(value, bool) or not isinstance(value, wanted) or not math.isfinite(value):
        what = "an integer" if integral else "a finite number"
        raise ParameterError(f"privacy event {kind!r}: {name} must be {what}; got {value!r}")
    low, low_in, high, high_in = _RANGES[name]
    if not ((value >= low if low_in else value > low) and (value <= high if high_in else value < high)):
        interval = f"{'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"
        raise ParameterError(f"privacy event {kind!r}: {name} must lie in {interval}; got {value!r}")
    return int(value) if integral else float(value)
