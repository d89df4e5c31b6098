"""Composition rules: the total (ε, δ) of a sequence of releases, kept up to date one release at a time.

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
    Proposition 12), :func:`~dpstats.accounting.zcdp.zcdp_epsilon`.
``"pld"``
    Privacy-loss distributions (Koskela et al. 2020; Google's ``dp_accounting``
    with pessimistic discretisation, which never reports an ε below the true
    one), composed incrementally (:mod:`dpstats.accounting.pld`). Gaussian releases compose exactly into one
    Gaussian with multiplier (Σ 1/μ_i²)^{-1/2}; a ledger of Gaussians only is computed in closed form with
    the analytic condition of Balle & Wang (2018), without ``dp_accounting``. The zCDP statement of the same
    releases holds too, and is reported when it is smaller (it knows that the exponential mechanism has bounded
    range, which the worst-case loss distribution of an ε-DP release does not).

For ``"zcdp"`` and ``"pld"`` the result is ε at the budget's δ (minus the
additive δ of releases whose bound holds with a failure probability), or the
basic total when that is smaller and its δ fits the budget (both statements
hold; a single release thus never costs more than the (ε, δ) it was
calibrated for).

Running totals
--------------
A rule is a class whose state is the composed ledger — exact sums (basic,
advanced), Σρ and the additive δ (zCDP), a composed privacy-loss distribution
(PLD) — so that :meth:`Composition.add` folds a release in without reading the
ledger again, and :meth:`Composition.total` reads the total. Both cost the same
at the ten-thousandth release as at the tenth, but for the PLD, whose support
grows with the ledger (see :mod:`dpstats.accounting.pld`).

*One total, however it was reached.* Every state is a function of the sequence
of items added, not of how they were batched or when the total was read: the
sums are exact (rational), and the PLD is grouped canonically
(:mod:`dpstats.accounting.pld`). So the total of a running accountant is, to the
last bit, the total of the same items composed from scratch (``compose``): a
ledger accepted within its budget is within it when another process reopens its
file or :meth:`dpstats.Accountant.from_json` reads its export (which records the
order in which parallel blocks closed, for this).

:meth:`Composition.fits` decides whether more releases fit a budget, without
adding them. Under ``"pld"`` the reported ε is the smallest of three
statements that each hold for the whole ledger at the budget's δ: the PLD's,
the zCDP rule's and the basic rule's (when its δ fits). *Soundness of the
shortcut:* a minimum of valid upper bounds is a valid upper bound, and
``fits`` evaluates the three cheapest first and stops at the first that is
within the budget, so it returns exactly whether the reported total with the
new releases is within the budget — a spend is never accepted that the total
read afterwards would not cover. Far from the budget the zCDP or basic
statement (constant time) accepts; near it, where both exceed the budget, the
PLD decides, and whenever the total is read.

*Refusing without composing.* Every event has a floor
(:meth:`~dpstats.accounting.events.Event.epsilon_floor`): a lower bound on the ε
at δ of its privacy-loss distribution, so on the PLD statement of any ledger
that contains it. When the zCDP and basic statements exceed the budget and a
new event's floor does too, all three statements do, and the release is refused
without building its distribution (which for ε = 2000 holds 4·10⁷ points).

Parallel composition
--------------------
A :class:`Parallel` block holds releases made on disjoint parts of the data,
split so that replacing one neighbour changes one part only: by a public rule on
the row positions for releases that protect a row, by a public function of the
privacy unit's identifier for releases that protect a unit (the ledger enforces
that a block holds releases of its own relation only,
:mod:`dpstats.accounting.ledger`). So the block costs what its most expensive
part costs. Under ``"basic"``, ``"advanced"`` and ``"zcdp"`` that is
the maximum over the parts (per coordinate of (ε, δ), or of (ρ, δ)). Under
``"pld"`` a part whose composed loss distribution dominates every other's
stands for the block: identical parts, or, for Gaussian-only parts, one
Gaussian with the smallest combined multiplier and the largest failure
probability of any part. Otherwise no single part is known to
dominate, and the parts are composed one after another — a valid, looser
bound; the ledger still records the block.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from .._rounding import float_up
from .events import Event, Gaussian
from .gaussian import ROUND_UP, gaussian_epsilon
from .pld import ComposedPld, free, noiseless
from .zcdp import zcdp_delta, zcdp_epsilon

__all__ = ["RULES", "Composition", "Parallel", "basic_total", "compose", "zcdp_delta", "zcdp_epsilon"]

RULES = ("pld", "zcdp", "advanced", "basic")


@dataclass(frozen=True)
class Parallel:
    """Releases on disjoint parts of the data, split so that replacing one neighbour changes one part only (the
    module docstring, "Parallel composition"): one tuple of events per part."""

    parts: tuple[tuple[Event, ...], ...]


Item = Event | Parallel


def compose(
    items: Sequence[Item], rule: str, budget_delta: float, *, slack: float | None = None
) -> tuple[float, float]:
    """Total (ε, δ) of ``items`` under ``rule`` (see the module docstring), never below the truth."""
    state = Composition.of(rule, budget_delta, slack)
    state.add(items)
    return state.total()


def basic_total(items: Sequence[Item]) -> tuple[float, float]:
    """(Σε_i, Σδ_i) of ``items``, summed exactly and rounded up (parallel blocks count as their largest part)."""
    epsilon, delta = _basic_sums(items)
    return float_up(epsilon), float_up(delta)


class Composition:
    """The running total of a ledger under the ``"basic"`` rule, and the base of the other rules (which keep the
    basic sums too: a total is never more than the basic statement when its δ fits).

    Parameters
    ----------
    budget_delta : float
        The budget's δ: "zcdp" and "pld" report ε at this δ.
    slack : float, optional
        δ′ of advanced composition.
    """

    rule: ClassVar[str] = "basic"

    def __init__(self, budget_delta: float, slack: float | None = None) -> None:
        self.budget_delta, self.slack = budget_delta, slack
        self._basic = (Fraction(0), Fraction(0))
        self._items = 0
        self._cached: tuple[float, float] | None = None

    @staticmethod
    def of(rule: str, budget_delta: float, slack: float | None = None) -> Composition:
        """An empty running total for ``rule``."""
        return _CLASSES[rule](budget_delta, slack)

    def add(self, items: Iterable[Item]) -> None:
        """Fold ``items`` into the total (all of them, or nothing if this raises)."""
        items = list(items)
        if not items:
            return
        increments = self._increments(items)
        self._apply(increments)
        self._items += len(items)
        self._cached = None

    def total(self, extra: Sequence[Item] = ()) -> tuple[float, float]:
        """The total (ε, δ) of the items added and ``extra`` (which is not kept)."""
        if extra:
            return self._evaluate(self._increments(list(extra)))
        if not self._items:
            return 0.0, 0.0
        if self._cached is None:
            self._cached = self._evaluate(self._increments([]))
        return self._cached

    def fits(self, epsilon: float, extra: Sequence[Item] = ()) -> bool:
        """Whether the total with ``extra`` added is within (``epsilon``, ``budget_delta``) (nothing is kept)."""
        eps, delta = self.total(extra)
        return eps <= epsilon and delta <= self.budget_delta

    def floor(self, extra: Sequence[Item] = ()) -> float:
        """A lower bound on the ε of the total with ``extra`` added, known without composing (0 where the total
        itself is cheap)."""
        return 0.0

    # Each level of the class hierarchy computes its increments from items (pure), applies them (assignments
    # only), and evaluates a total from its state plus increments: `add` is all or nothing.

    def _increments(self, items: list[Item]):
        return _basic_sums(items)

    def _apply(self, increments) -> None:
        self._basic = (self._basic[0] + increments[0], self._basic[1] + increments[1])

    def _basic_total(self, increments) -> tuple[float, float]:
        return float_up(self._basic[0] + increments[0]), float_up(self._basic[1] + increments[1])

    def _evaluate(self, increments) -> tuple[float, float]:
        return self._basic_total(increments)


class AdvancedComposition(Composition):
    """The ``"advanced"`` rule: the basic sums, Σε_i² and Σε_i(e^{ε_i} − 1), exactly (rational sums of floats)."""

    rule = "advanced"

    def __init__(self, budget_delta: float, slack: float | None = None) -> None:
        super().__init__(budget_delta, slack)
        self._squares, self._drift, self._overflow = Fraction(0), Fraction(0), False

    def _increments(self, items):
        pairs = [(pair, count) for item, count in _tally(items) for pair in _flatten_max([item])]
        overflow = any(e > 700 for (e, _), _ in pairs)  # e^ε overflows: the advanced bound is useless there
        squares = sum((count * Fraction(e * e) for (e, _), count in pairs), Fraction(0))
        drift = Fraction(0)
        if not overflow:
            drift = sum((count * Fraction(e * math.expm1(e)) for (e, _), count in pairs), Fraction(0))
        return super()._increments(items), (squares, drift, overflow)

    def _apply(self, increments) -> None:
        super()._apply(increments[0])
        squares, drift, overflow = increments[1]
        self._squares, self._drift = self._squares + squares, self._drift + drift
        self._overflow = self._overflow or overflow

    def _evaluate(self, increments) -> tuple[float, float]:
        basic = self._basic_total(increments[0])
        squares, drift, overflow = increments[1]
        if self.slack is None or self._overflow or overflow:
            return basic
        root = math.sqrt(2.0 * math.log(1.0 / self.slack) * float(self._squares + squares))
        epsilon = (root + float(self._drift + drift)) * ROUND_UP
        if epsilon < basic[0]:
            return epsilon, float_up(Fraction(basic[1]) + Fraction(self.slack))
        return basic


class ZcdpComposition(Composition):
    """The ``"zcdp"`` rule: Σρ and the additive δ, exactly (rational sums of floats)."""

    rule = "zcdp"

    def __init__(self, budget_delta: float, slack: float | None = None) -> None:
        super().__init__(budget_delta, slack)
        self._rho, self._delta_extra = Fraction(0), Fraction(0)

    def _increments(self, items):
        return super()._increments(items), _zcdp_sums(items)

    def additive_delta(self, extra: Sequence[Item] = ()) -> float:
        """The δ the releases spend outright (approximate-DP events, Gaussian calibrations' failure
        probabilities), rounded up: the budget's δ minus it is what further releases may carry
        (:attr:`dpstats.Accountant.remaining`)."""
        return float_up(self._delta_extra + _zcdp_sums(list(extra))[1])

    def _apply(self, increments) -> None:
        super()._apply(increments[0])
        rho, delta = increments[1]
        self._rho, self._delta_extra = self._rho + rho, self._delta_extra + delta

    def _evaluate(self, increments) -> tuple[float, float]:
        rho, delta_extra = increments[1]
        rho = _up(self._rho + rho) * ROUND_UP
        epsilon = zcdp_epsilon(rho, self.budget_delta - float_up(self._delta_extra + delta_extra))
        return self._at_budget(epsilon, increments[0])

    def _at_budget(self, epsilon: float, basic_increments) -> tuple[float, float]:
        basic_epsilon, basic_delta = self._basic_total(basic_increments)
        if basic_delta <= self.budget_delta:  # basic composition holds too: a release never costs more than it says
            epsilon = min(epsilon, basic_epsilon)
        return epsilon, self.budget_delta


class PldComposition(ZcdpComposition):
    """The ``"pld"`` rule: a composed privacy-loss distribution, the Gaussians' Σ1/μ², their failure
    probabilities, and the zCDP and basic totals of the same releases (the module docstring)."""

    rule = "pld"

    def __init__(self, budget_delta: float, slack: float | None = None) -> None:
        super().__init__(budget_delta, slack)
        self._pld = ComposedPld()
        self._failure, self._inverse_square, self._gaussian_only = Fraction(0), Fraction(0), True

    def _increments(self, items):
        events = _pld_events(items)
        gaussians = [(e, count) for e, count in _tally(events) if isinstance(e, Gaussian)]
        failure = sum((count * Fraction(e.failure) for e, count in gaussians), Fraction(0))
        if any(noiseless(e) for e, _ in gaussians):  # no noise: no finite ε (the Fraction sums cannot hold infinity)
            inverse = math.inf
            events = [e for e in events if not noiseless(e)]
        else:
            inverse = sum(
                (count * Fraction(1.0 / e.combined_multiplier**2) for e, count in gaussians if not free(e)), Fraction(0)
            )
        only_gaussians = sum(count for _, count in gaussians) == len(events)  # (after dropping the noiseless ones)
        return super()._increments(items), (events, failure, inverse, only_gaussians)

    def _apply(self, increments) -> None:
        events, failure, inverse, gaussian_only = increments[1]
        super()._apply(increments[0])
        self._failure, self._inverse_square = self._failure + failure, self._inverse_square + inverse
        self._gaussian_only = self._gaussian_only and gaussian_only
        self._pld.add(events)

    def _evaluate(self, increments) -> tuple[float, float]:
        epsilon, _ = super()._evaluate(increments[0])
        return min(epsilon, self._pld_epsilon(increments[1])), self.budget_delta

    def fits(self, epsilon: float, extra: Sequence[Item] = ()) -> bool:
        increments = self._increments(list(extra))
        if super()._evaluate(increments[0])[0] <= epsilon:  # the zCDP or basic statement: constant time
            return True
        events, failure, inverse, gaussian_only = increments[1]
        delta = self._pld_delta(failure)
        if delta < 0 or math.isinf(self._inverse_square + inverse):
            return False
        if self._floor(events) > epsilon:  # the PLD statement is over the budget too (module docstring)
            return False
        if self._gaussian_only and gaussian_only:
            return self._pld_epsilon(increments[1]) <= epsilon
        return self._pld.fits(epsilon, delta, events)

    def floor(self, extra: Sequence[Item] = ()) -> float:
        """min(the zCDP or basic statement, the largest floor of the events ``extra`` adds to the PLD): the total
        is the smallest of the statements, and the PLD's is at least that floor (module docstring)."""
        increments = self._increments(list(extra))
        return min(super()._evaluate(increments[0])[0], self._floor(increments[1][0]))

    def _floor(self, events: Sequence[Event]) -> float:
        return max((e.epsilon_floor(self.budget_delta) for e in events), default=0.0)

    def _pld_delta(self, failure: Fraction) -> float:
        return self.budget_delta - float_up(self._failure + failure)

    def _pld_epsilon(self, increments) -> float:
        events, failure, inverse, gaussian_only = increments
        delta = self._pld_delta(failure)
        if delta < 0 or math.isinf(self._inverse_square + inverse):
            return math.inf
        if self._gaussian_only and gaussian_only:
            inverse_square = self._inverse_square + inverse
            multiplier = math.inf if inverse_square == 0 else 1.0 / math.sqrt(float(inverse_square))
            return gaussian_epsilon(multiplier / ROUND_UP, delta)
        return self._pld.epsilon(delta, events)


_CLASSES: dict[str, type[Composition]] = {
    "basic": Composition,
    "advanced": AdvancedComposition,
    "zcdp": ZcdpComposition,
    "pld": PldComposition,
}


# ----------------------------------------------------------------------------- what each rule reads from items


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


def _tally(items: Sequence[Item]) -> list[tuple[Item, int]]:
    """``items`` with their multiplicities: equal events (immutable, hashable) counted together, in the order they
    first appear, then each parallel block on its own. The exact sums over items are the sums of count × value
    over this list (rational arithmetic: the same Fractions), at the cost of the distinct events only."""
    counts: dict = {}
    blocks = []
    for item in items:
        if isinstance(item, Parallel):
            blocks.append((item, 1))
        else:
            counts[item] = counts.get(item, 0) + 1
    return [*counts.items(), *blocks]


def _exact_sums(events: Sequence[Event]) -> tuple[Fraction, Fraction]:
    return sum((Fraction(e.epsilon) for e in events), Fraction(0)), sum(
        (Fraction(e.delta) for e in events), Fraction(0)
    )


def _basic_sums(items: Sequence[Item]) -> tuple[Fraction, Fraction]:
    epsilon, delta = Fraction(0), Fraction(0)
    for item, count in _tally(items):
        ((e, d),) = _flatten_max([item])
        epsilon, delta = epsilon + count * Fraction(e), delta + count * Fraction(d)
    return epsilon, delta


def _zcdp_sums(items: Sequence[Item]) -> tuple[Fraction, Fraction]:
    """(Σρ, Σδ) exactly, with parallel blocks as their maximum part (per coordinate)."""
    rho, delta = Fraction(0), Fraction(0)
    for item, count in _tally(items):
        if isinstance(item, Parallel):
            parts = [_zcdp_sums(part) for part in item.parts]
            rho += max(p[0] for p in parts)
            delta += max(p[1] for p in parts)
        else:
            r, d = item.zcdp()
            rho += count * Fraction(r) if math.isfinite(r) else math.inf  # a float infinity absorbs every later sum
            delta += count * Fraction(d)
    return rho, delta


def _up(value) -> float:
    """float_up of an exact sum, or infinity (a float) as it is."""
    return value if isinstance(value, float) else float_up(value)


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
