"""Composition rules: the total (ε, δ) of a sequence of releases.

Each rule takes the ledger's items — :class:`~dpstats.accounting.events.Event`
objects and :class:`Parallel` blocks — and returns a guarantee that is never
below the true one: floating-point results are rounded *up*.

``"basic"``
    k releases with (ε_i, δ_i) are (Σε_i, Σδ_i)-DP (Dwork & Roth 2014,
    Theorem 3.16). The sums are exact (rational arithmetic on the floats), so a
    budget is never overshot by rounding. Note that the float 0.1 is slightly
    more than 1/10: ten spends of 0.1 exceed a budget of 1.0 by 5.6e-17, and
    are refused; :meth:`dpstats.Accountant.split` gives shares that fit exactly.
``"advanced"``
    Dwork, Rothblum & Vadhan (2010); Dwork & Roth (2014), Theorem 3.20, for
    heterogeneous ε_i: for a slack δ′ > 0 the releases are (ε′, Σδ_i + δ′)-DP
    with ε′ = √(2 ln(1/δ′) Σε_i²) + Σ ε_i (e^{ε_i} − 1) (the privacy-loss
    martingale has increments in [−ε_i, ε_i] with mean at most ε_i(e^{ε_i} − 1);
    Azuma's inequality gives the first term). Both this and the basic
    statement hold, so the smaller ε is reported.
``"zcdp"``
    Zero-concentrated DP (Bun & Steinke 2016): ρ adds up (Lemma 2.3), the
    additive δ of approximate zCDP adds up, and the total converts to
    (ε, δ) with the tight bound of Canonne, Kamath & Steinke (2020,
    Proposition 12): δ = min_{α>1} exp((α−1)(αρ−ε)) (1 − 1/α)^α / (α−1).
``"pld"``
    Privacy-loss distributions (Koskela et al. 2020; Google's ``dp_accounting``
    with pessimistic discretisation, which never reports an ε below the true
    one). Gaussian releases compose exactly into one Gaussian with multiplier
    (Σ 1/μ_i²)^{-1/2}; a ledger of Gaussians only is computed in closed form with
    the analytic condition of Balle & Wang (2018), without ``dp_accounting``.

For ``"zcdp"`` and ``"pld"`` the result is ε at the budget's δ (minus the
additive δ of releases whose bound holds with a failure probability), or the
basic total when that is smaller and its δ fits the budget (both statements
hold; a single release thus never costs more than the (ε, δ) it was
calibrated for).

Parallel composition
--------------------
A :class:`Parallel` block holds releases made on disjoint parts of the rows,
split by a public rule on the row positions (so every part's size is public).
Replacing one row changes one part only, so the block costs what its most
expensive part costs. Under ``"basic"``, ``"advanced"`` and ``"zcdp"`` that is
the maximum over the parts (per coordinate of (ε, δ), or of (ρ, δ)). Under
``"pld"`` a part whose composed loss distribution dominates every other's
stands for the block: identical parts, or, for Gaussian-only parts, one
Gaussian with the smallest combined multiplier and the largest failure
probability of any part. Otherwise no single part is known to
dominate, and the parts are composed one after another — a valid, looser
bound; the ledger still records the block.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .._rounding import float_up
from .events import PLD_DISCRETIZATION, Event, Gaussian
from .gaussian import ROUND_UP, gaussian_epsilon

__all__ = ["RULES", "Parallel", "basic_total", "compose", "zcdp_delta", "zcdp_epsilon"]

RULES = ("pld", "zcdp", "advanced", "basic")


@dataclass(frozen=True)
class Parallel:
    """Releases on disjoint parts of the rows (split by a public rule on row positions): one tuple of events per
    part."""

    parts: tuple[tuple[Event, ...], ...]


Item = Event | Parallel


def compose(
    items: Sequence[Item], rule: str, budget_delta: float, *, slack: float | None = None
) -> tuple[float, float]:
    """Total (ε, δ) of ``items`` under ``rule`` (see the module docstring), never below the truth."""
    if not items:
        return 0.0, 0.0
    if rule == "basic":
        return basic_total(items)
    if rule == "advanced":
        return _advanced(items, slack)
    if rule == "zcdp":
        rho, delta_extra = _zcdp_totals(items)
        epsilon = zcdp_epsilon(rho, budget_delta - delta_extra)
    else:
        epsilon = _pld(items, budget_delta)
    basic_epsilon, basic_delta = basic_total(items)
    if basic_delta <= budget_delta:  # basic composition holds too: a single release never costs more than it says
        epsilon = min(epsilon, basic_epsilon)
    return epsilon, budget_delta


# ----------------------------------------------------------------------------- basic and advanced


def _flatten_max(items: Sequence[Item]) -> list[tuple[float, float]]:
    """(ε, δ) per item; a parallel block counts as (max over parts of Σε, max over parts of Σδ)."""
    pairs = []
    for item in items:
        if isinstance(item, Parallel):
            sums = [_exact_sums(part) for part in item.parts]
            pairs.append((float_up(max(s[0] for s in sums)), float_up(max(s[1] for s in sums))))
        else:
            pairs.append((item.epsilon, item.delta))
    return pairs


def _exact_sums(events: Sequence[Event]) -> tuple[Fraction, Fraction]:
    return sum((Fraction(e.epsilon) for e in events), Fraction(0)), sum(
        (Fraction(e.delta) for e in events), Fraction(0)
    )


def basic_total(items: Sequence[Item]) -> tuple[float, float]:
    """(Σε_i, Σδ_i) of ``items``, summed exactly and rounded up (parallel blocks count as their largest part)."""
    pairs = _flatten_max(items)
    return float_up(sum((Fraction(e) for e, _ in pairs), Fraction(0))), float_up(
        sum((Fraction(d) for _, d in pairs), Fraction(0))
    )


def _advanced(items: Sequence[Item], slack: float | None) -> tuple[float, float]:
    basic = basic_total(items)
    pairs = _flatten_max(items)
    if slack is None or any(e > 700 for e, _ in pairs):  # e^ε overflows: the advanced bound is useless there
        return basic
    squares = math.fsum(e * e for e, _ in pairs)
    drift = math.fsum(e * math.expm1(e) for e, _ in pairs)
    epsilon = (math.sqrt(2.0 * math.log(1.0 / slack) * squares) + drift) * ROUND_UP
    if epsilon < basic[0]:
        return epsilon, float_up(Fraction(basic[1]) + Fraction(slack))
    return basic


# ----------------------------------------------------------------------------- zCDP


def _zcdp_totals(items: Sequence[Item]) -> tuple[float, float]:
    """(Σρ, Σδ) with parallel blocks as their maximum part."""
    rho, delta = 0.0, Fraction(0)
    for item in items:
        if isinstance(item, Parallel):
            parts = [_zcdp_totals(part) for part in item.parts]
            rho += max(p[0] for p in parts)
            delta += Fraction(max(p[1] for p in parts))
        else:
            r, d = item.zcdp()
            rho += r
            delta += Fraction(d)
    return rho * ROUND_UP, float_up(delta)


def _log_zcdp_delta(rho: float, epsilon: float, alpha: float) -> float:
    """log of exp((α−1)(αρ−ε)) (1 − 1/α)^α / (α − 1), the CKS (2020) Proposition 12 bound at order α."""
    return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Smallest δ (at the best order α we find) such that ρ-zCDP implies (ε, δ)-DP.

    Every α > 1 gives a valid bound (Canonne, Kamath & Steinke 2020,
    Proposition 12), so an imperfect search over α only makes δ larger.
    """
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return 1.0
    from scipy.optimize import minimize_scalar

    # The optimal α is at least (1 + ε/ρ)/2; search a bracket around it on a log scale.
    centre = max(1.0 + 1e-9, (1.0 + epsilon / rho) / 2.0)
    res = minimize_scalar(
        lambda t: _log_zcdp_delta(rho, epsilon, 1.0 + math.exp(t)),
        bounds=(math.log(1e-9), math.log(4.0 * centre + 10.0)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return min(1.0, math.exp(res.fun))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε (to 1e-12 relative, rounded up) such that ρ-zCDP implies (ε, δ)-DP; ``inf`` if δ <= 0."""
    if rho == 0:
        return 0.0
    if delta <= 0 or math.isinf(rho):
        return math.inf
    if delta >= 1:
        return 0.0
    lo, hi = 0.0, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))  # Bun & Steinke, Proposition 1.3: valid
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2.0
        if zcdp_delta(rho, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi * ROUND_UP


# ----------------------------------------------------------------------------- privacy-loss distributions


def _pld(items: Sequence[Item], budget_delta: float) -> float:
    events = _pld_events(items)
    failure = float_up(sum((Fraction(e.failure) for e in events if isinstance(e, Gaussian)), Fraction(0)))
    delta = budget_delta - failure
    if delta < 0:
        return math.inf
    if all(isinstance(e, Gaussian) for e in events):
        return gaussian_epsilon(_combined_multiplier(events) / ROUND_UP, delta)
    composed = None
    for event in events:
        if isinstance(event, Gaussian) and math.isinf(event.noise_multiplier):
            continue  # zero sensitivity: nothing to compose (its failure probability is counted above)
        loss = _cached_pld(event)
        composed = loss if composed is None else composed.compose(loss)
    return composed.get_epsilon_for_delta(delta)


@functools.lru_cache(maxsize=512)
def _cached_pld(event: Event):
    """An event's privacy-loss distribution, built once (events are immutable)."""
    return event.pld(PLD_DISCRETIZATION)


def _pld_events(items: Sequence[Item]) -> list[Event]:
    """The events whose sequential composition dominates ``items`` (parallel blocks resolved, see the module
    docstring)."""
    events: list[Event] = []
    for item in items:
        if not isinstance(item, Parallel):
            events.append(item)
            continue
        parts = [tuple(_pld_events(part)) for part in item.parts]
        if all(part == parts[0] for part in parts):
            events.extend(parts[0])
        elif all(all(isinstance(e, Gaussian) for e in part) for part in parts):
            events.append(_dominating_gaussian(parts))
        else:
            events.extend(e for part in parts for e in part)
    return events


def _dominating_gaussian(parts: Sequence[Sequence[Gaussian]]) -> Gaussian:
    """One Gaussian event that dominates every part: the smallest combined multiplier, the largest failure
    probability, and the largest standalone (ε, δ)."""
    multiplier = min(_combined_multiplier(part) for part in parts)
    failure = max(float_up(sum((Fraction(e.failure) for e in part), Fraction(0))) for part in parts)
    sums = [_exact_sums(part) for part in parts]
    return Gaussian(
        float_up(max(e for e, _ in sums)),
        float_up(max(d for _, d in sums)),
        sigma=multiplier,
        sensitivity=1.0,
        failure=failure,
    )


def _combined_multiplier(part: Sequence[Gaussian]) -> float:
    inverse_square = math.fsum(1.0 / e.combined_multiplier**2 for e in part)
    return math.inf if inverse_square == 0 else 1.0 / math.sqrt(inverse_square)
