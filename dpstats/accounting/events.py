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

Neighbouring datasets differ by replacing one row throughout; each event's
``sensitivity`` is for that relation.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

from ..exceptions import ParameterError
from .gaussian import dominating_sigma

__all__ = [
    "ApproxDP",
    "Event",
    "Exponential",
    "Gaussian",
    "Laplace",
    "PureDP",
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
        """The event of Laplace(``scale``) noise on a query of L1 sensitivity ``sensitivity``."""
        return cls(
            epsilon=sensitivity / scale,
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

    def describe(self) -> str:
        kind = "discrete Gaussian" if self.discrete else "Gaussian"
        times = f" x{self.repeat}" if self.repeat != 1 else ""
        return f"{kind} σ/Δ2={self.noise_multiplier:.4g}{times}"


_KINDS: dict[str, type[Event]] = {cls.kind: cls for cls in (PureDP, ApproxDP, Exponential, Laplace, Gaussian)}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output, checking every value (a ledger read back from a file or
    from JSON may have been edited): its type and fields must be known, every number finite, ε >= 0,
    0 <= δ < 1, scales and σ > 0, sensitivities >= 0, counts integers >= 1."""
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
    return cls(**checked)


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
