"""Calibrating to a budget: the per-release parameters that use what remains of a budget.

A plan lists the releases to come — for example three Gaussian releases, or
"a mean, a variance and a histogram with weights 1:2:1". :func:`calibrate`
returns an (ε_i, δ_i) for each, to pass to the mechanisms, such that the
releases together spend what remains of the accountant's budget under its
composition rule: no more, and less by at most :data:`TOLERANCE` (relative) —
the margin that covers the small difference between a planned release and the
exact discrete mechanism that will make it.

Weights are shares of privacy loss measured in zCDP's ρ (Bun & Steinke 2016):
a Gaussian release with weight w gets ρ = s·w, i.e. noise multiplier
σ/Δ = 1/√(2 s w); a pure release gets ε = √(2 s w) (ε-DP is ε²/2-zCDP); an
exponential mechanism gets ε = √(8 s w) (bounded range: ε²/8-zCDP). The common
scale s is found by a bracketing root search (``_largest_fitting``) so that the composed total
(the accountant's running total with the planned releases added) meets the budget. A
Gaussian release's (ε_i, δ_i) is a point on its privacy curve: a mechanism
given it calibrates exactly the planned σ (the analytic calibration inverts
that curve). Under "basic" and "advanced" composition the Gaussian releases
share the δ budget equally; under "pld" and "zcdp" each gets the whole δ as its
label (their δ do not add up there).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .._validation import check_choice
from ..exceptions import BudgetExceededError, ParameterError
from .compose import basic_total
from .events import Event, Exponential, Gaussian, Laplace, PureDP
from .gaussian import gaussian_epsilon

__all__ = ["Allocation", "Planned", "TOLERANCE", "calibrate", "equal_share", "split_epsilon", "split_weighted"]

KINDS = ("gaussian", "laplace", "pure", "exponential")

#: Relative share of the budget left unused by :func:`calibrate` (see the module docstring).
TOLERANCE = 1e-4


@dataclass(frozen=True)
class Planned:
    """One kind of release in a plan.

    Parameters
    ----------
    kind : {"gaussian", "laplace", "pure", "exponential"}
        Gaussian noise (δ > 0); the 1-D Laplace mechanism (a scalar release with
        δ = 0); any other pure ε-DP release (vector Laplace, histogram with δ = 0,
        ERM); the exponential mechanism (PPCA, quantiles).
    weight : float, default 1
        Share of the privacy loss (in zCDP's ρ, see the module docstring).
    count : int, default 1
        How many such releases (each gets the same parameters).
    name : str, optional
        A label returned with the allocation.
    """

    kind: str
    weight: float = 1.0
    count: int = 1
    name: str = ""

    def __post_init__(self):
        check_choice(self.kind, "kind", KINDS)
        if not isinstance(self.weight, numbers.Real) or not math.isfinite(self.weight) or self.weight <= 0:
            raise ParameterError(f"weight must be a finite number > 0; got {self.weight!r}")
        if not isinstance(self.count, numbers.Integral) or isinstance(self.count, bool) or self.count < 1:
            raise ParameterError(f"count must be an integer >= 1; got {self.count!r}")


@dataclass(frozen=True)
class Allocation:
    """The parameters of one planned release: pass ``epsilon`` and ``delta`` to the mechanism."""

    name: str
    kind: str
    epsilon: float
    delta: float
    count: int
    noise_multiplier: float | None = None  # σ/Δ of a Gaussian release


def calibrate(plan: Sequence[Planned], accountant) -> list[Allocation]:
    """Per-release (ε, δ) that spend what remains of ``accountant``'s budget under its composition rule.

    Parameters
    ----------
    plan : sequence of Planned (or of (kind, weight) pairs)
    accountant : dpstats.Accountant
        Its budget, rule and ledger so far (nothing is recorded).

    Returns
    -------
    list of Allocation
        One per planned item, in order.

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.accounting import Planned
    >>> acc = dps.Accountant(1.0, 1e-6)
    >>> mean, var, hist = acc.calibrate([Planned("gaussian", 1, name="mean"), Planned("gaussian", 2, name="variance"),
    ...                                  Planned("gaussian", 1, name="histogram")])
    >>> var.noise_multiplier < mean.noise_multiplier
    True
    """
    plan = [p if isinstance(p, Planned) else Planned(*p) for p in plan]
    if not plan:
        raise ParameterError("plan must list at least one release")
    target = accountant.epsilon * (1.0 - TOLERANCE)
    n_gaussian = sum(p.count for p in plan if p.kind == "gaussian")
    gaussian_delta = (
        split_epsilon(accountant.delta, n_gaussian)
        if accountant.composition in ("basic", "advanced") and n_gaussian and accountant.delta > 0
        else accountant.delta
    )
    if n_gaussian and gaussian_delta <= 0:
        raise ParameterError("the plan has Gaussian releases but the budget's delta is 0")

    def total(scale: float) -> float:
        events = [e for p in plan for e in [_event(p, scale, gaussian_delta)] * p.count]
        eps, delta = accountant.composed_with(events)
        return eps if delta <= accountant.delta else math.inf

    lo, below = 1e-300, total(1e-300) - target
    if below > 0:
        raise BudgetExceededError("what remains of the budget cannot fit this plan at any noise level")
    hi, above = 1.0, total(1.0) - target
    while above <= 0:
        lo, below, hi = hi, above, hi * 16.0
        above = total(hi) - target
    return [_allocation(p, _largest_fitting(total, target, lo, below, hi, above), gaussian_delta) for p in plan]


def _largest_fitting(total, target: float, lo: float, below: float, hi: float, above: float) -> float:
    """A scale s with total(s) <= target, within ``TOLERANCE / 2`` of the target (or of the boundary, to a
    relative 1e-9 in s), from a bracket total(lo) - target = ``below`` <= 0 < ``above`` = total(hi) - target.

    Regula falsi on log s with the Illinois modification (the stale end's value is halved when the same end
    moves twice), falling back to bisection while ``above`` is infinite: about ten evaluations of the total
    instead of forty for bisection. ``lo`` always satisfies the budget.
    """
    weight_lo, weight_hi, last = below, above, 0
    while hi / lo > 1.0 + 1e-9 and below < -target * TOLERANCE / 2:
        a, b = math.log(lo), math.log(hi)
        if math.isfinite(weight_hi) and lo > 1e-300:
            u = b - weight_hi * (b - a) / (weight_hi - weight_lo)
            u = min(max(u, a + 1e-3 * (b - a)), b - 1e-3 * (b - a))  # stay strictly inside the bracket
        else:
            u = (a + b) / 2.0
        mid = math.exp(u)
        value = total(mid) - target
        if value <= 0:
            lo, below, weight_lo = mid, value, value
            weight_hi = weight_hi / 2.0 if last < 0 else weight_hi
            last = -1
        else:
            hi, above, weight_hi = mid, value, value
            weight_lo = weight_lo / 2.0 if last > 0 else weight_lo
            last = 1
    return lo


def _event(p: Planned, scale: float, gaussian_delta: float) -> Event:
    rho = scale * p.weight
    if p.kind == "gaussian":
        mu = 1.0 / math.sqrt(2.0 * rho)
        return Gaussian(epsilon=gaussian_epsilon(mu, gaussian_delta), delta=gaussian_delta, sigma=mu)
    if p.kind == "laplace":
        epsilon = math.sqrt(2.0 * rho)
        return Laplace.calibrated(1.0 / epsilon, 1.0)
    if p.kind == "exponential":
        return Exponential(math.sqrt(8.0 * rho))
    return PureDP(math.sqrt(2.0 * rho))


def _allocation(p: Planned, scale: float, gaussian_delta: float) -> Allocation:
    event = _event(p, scale, gaussian_delta)
    mu = event.noise_multiplier if isinstance(event, Gaussian) else None
    return Allocation(p.name or p.kind, p.kind, event.epsilon, event.delta, p.count, mu)


def split_epsilon(epsilon: float, parts: int) -> float:
    """The largest float ε_i with ``parts`` · ε_i <= ``epsilon`` exactly (so a mechanism made of ``parts`` equal
    pure steps never charges more than it was given, whatever the float division rounds). Works for a δ too."""
    share = epsilon / parts
    while parts * Fraction(share) > Fraction(epsilon):
        share = math.nextafter(share, 0.0)
    return share


def split_weighted(total: float, weights) -> list[float]:
    """Shares ``total · w_i / Σ w`` as floats whose exact sum never exceeds ``total`` (an ε or a δ divided
    between releases in proportion to positive ``weights``, however the float arithmetic rounds)."""
    exact = [Fraction(float(w)) for w in weights]
    whole = sum(exact)
    shares = [float(Fraction(total) * w / whole) for w in exact]
    while sum(Fraction(s) for s in shares) > Fraction(total):
        shares = [math.nextafter(s, 0.0) for s in shares]
    return shares


def equal_share(accountant, parts: int) -> float:
    """The ε of each of ``parts`` equal pure releases that together spend what remains (see
    :meth:`dpstats.Accountant.split`)."""
    if not isinstance(parts, numbers.Integral) or isinstance(parts, bool) or parts < 1:
        raise ParameterError(f"parts must be an integer >= 1; got {parts!r}")
    if accountant.composition == "basic":  # exact: the largest float whose `parts` copies sum to <= what remains
        spent = Fraction(basic_total(accountant.composition_items())[0])
        share = float((Fraction(accountant.epsilon) - spent) / parts)
        while share > 0 and spent + parts * Fraction(share) > Fraction(accountant.epsilon):
            share = math.nextafter(share, 0.0)
        if share <= 0:
            raise BudgetExceededError("no epsilon remains to split")
        return share
    return calibrate([Planned("pure", count=int(parts))], accountant)[0].epsilon
