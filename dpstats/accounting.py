"""A privacy accountant: a total (ε, δ) budget, a ledger, and composition.

Every mechanism takes ``accountant=``. It calls :meth:`Accountant.spend` after
validating its arguments and *before* drawing any noise, so an overspend raises
:class:`~dpstats.exceptions.BudgetExceededError` and releases nothing.

Composition
-----------
``"basic"``: k releases with (ε_i, δ_i) are (Σε_i, Σδ_i)-DP (Dwork & Roth 2014,
Theorem 3.16).

``"advanced"``: for any slack δ′ > 0 they are also (ε′, Σδ_i + δ′)-DP with::

    ε′ = √(2 ln(1/δ′) Σ ε_i²) + Σ ε_i (e^{ε_i} − 1)

(Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Theorem 3.20, written for
heterogeneous ε_i: the privacy-loss martingale has increments in [−ε_i, ε_i]
with mean at most ε_i(e^{ε_i} − 1), and Azuma's inequality gives the first
term). With k equal ε this is the textbook √(2k ln(1/δ′)) ε + kε(e^ε − 1).
Both statements hold, so the accountant reports whichever has the smaller ε;
the basic one also has the smaller δ, so the choice is itself a valid
guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._validation import check_choice, check_delta, check_epsilon
from .exceptions import BudgetExceededError, NotPrivateError, ParameterError

__all__ = ["Accountant", "LedgerEntry"]

# Relative slack on the budget comparison so that ten spends of 0.1 fit in 1.0.
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release."""

    mechanism: str
    epsilon: float
    delta: float
    note: str = ""


@dataclass(frozen=True)
class _Sums:
    """The sums over the ledger that basic and advanced composition need."""

    count: int = 0
    epsilon: float = 0.0
    delta: float = 0.0
    epsilon_squared: float = 0.0
    epsilon_expm1: float = 0.0  # Σ ε (e^ε − 1)

    def plus(self, epsilon: float, delta: float) -> _Sums:
        return _Sums(self.count + 1, self.epsilon + epsilon, self.delta + delta,
                     self.epsilon_squared + epsilon * epsilon, self.epsilon_expm1 + epsilon * math.expm1(epsilon))


class Accountant:
    """Track the privacy budget spent by a sequence of releases.

    Parameters
    ----------
    epsilon : float
        Total ε budget, > 0.
    delta : float, default 0.0
        Total δ budget, 0 <= δ < 1.
    composition : {"basic", "advanced"}, default "basic"
        How spends add up (see the module docstring).
    slack : float, optional
        δ′ of advanced composition, 0 < δ′ <= delta. Defaults to ``delta / 2``;
        advanced composition needs ``delta > 0``.

    Examples
    --------
    >>> import dpstats as dps
    >>> acc = dps.Accountant(1.0)
    >>> m = dps.mean([0.2, 0.4, 0.9], 0.5, bounds=(0, 1), rng=0, accountant=acc)
    >>> acc.spent
    (0.5, 0.0)
    >>> acc.remaining
    (0.5, 0.0)
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: str = "basic",
                 slack: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.composition = check_choice(composition, "composition", ("basic", "advanced"))
        if composition == "advanced":
            if self.delta == 0:
                raise ParameterError("composition='advanced' needs delta > 0 (it spends a slack delta')")
            slack = self.delta / 2 if slack is None else slack
            if not (isinstance(slack, (int, float)) and 0 < slack <= self.delta):
                raise ParameterError(f"slack must satisfy 0 < slack <= delta = {self.delta:g}; got {slack!r}")
        elif slack is not None:
            raise ParameterError("slack applies only to composition='advanced'")
        self.slack = slack
        self._ledger: list[LedgerEntry] = []
        self._sums = _Sums()  # running sums, so a spend costs O(1) however long the ledger

    @property
    def ledger(self) -> list[LedgerEntry]:
        """The releases recorded so far, oldest first (a copy)."""
        return list(self._ledger)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (ε, δ) of the recorded releases under the chosen composition."""
        return self._total(self._sums)

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget minus :attr:`spent`, per coordinate (never below 0)."""
        eps, delta = self.spent
        return max(self.epsilon - eps, 0.0), max(self.delta - delta, 0.0)

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if spending (ε, δ) would exceed the budget."""
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        eps_total, delta_total = self._total(self._sums.plus(epsilon, delta))
        if eps_total > self.epsilon * (1 + _TOLERANCE) or delta_total > self.delta * (1 + _TOLERANCE):
            rem_eps, rem_delta = self.remaining
            raise BudgetExceededError(
                f"spending (epsilon={epsilon:g}, delta={delta:g}) would bring the total to "
                f"(epsilon={eps_total:g}, delta={delta_total:g}) over the budget "
                f"(epsilon={self.epsilon:g}, delta={self.delta:g}); remaining "
                f"(epsilon={rem_eps:g}, delta={rem_delta:g}). Nothing was released."
            )

    def spend(self, epsilon: float, delta: float = 0.0, *, mechanism: str = "", note: str = "") -> None:
        """Record a release of (ε, δ) after checking it fits in the budget."""
        self.check(epsilon, delta)
        self._ledger.append(LedgerEntry(mechanism, float(epsilon), float(delta), note))
        self._sums = self._sums.plus(epsilon, delta)

    def refuse(self, mechanism: str, reason: str) -> None:
        """Refuse a mechanism that is not differentially private; always raises."""
        raise NotPrivateError(f"{mechanism} is not differentially private ({reason}); the accountant refuses it")

    def _total(self, sums: _Sums) -> tuple[float, float]:
        basic = (sums.epsilon, sums.delta)
        if self.composition == "basic" or sums.count == 0:
            return basic
        advanced_eps = math.sqrt(2 * math.log(1 / self.slack) * sums.epsilon_squared) + sums.epsilon_expm1
        if advanced_eps < basic[0]:
            return advanced_eps, basic[1] + self.slack
        return basic

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (f"Accountant(epsilon={self.epsilon:g}, delta={self.delta:g}, composition={self.composition!r}; "
                f"spent epsilon={eps:g}, delta={delta:g} in {len(self._ledger)} release(s))")

    def __str__(self) -> str:
        lines = [repr(self), f"{'mechanism':<24}{'epsilon':>10}{'delta':>12}  note"]
        lines += [f"{e.mechanism:<24}{e.epsilon:>10.4g}{e.delta:>12.3g}  {e.note}" for e in self._ledger]
        return "\n".join(lines)


def charge(accountant: Accountant | None, epsilon: float, delta: float, *, mechanism: str,
           note: str = "") -> None:
    """Record a release on ``accountant`` (if any); called by mechanisms before drawing noise."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a dpstats.Accountant or None; got {type(accountant).__name__}")
    accountant.spend(epsilon, delta, mechanism=mechanism, note=note)
