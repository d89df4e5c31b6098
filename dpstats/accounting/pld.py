"""Privacy-loss distributions composed incrementally: a composed distribution and the events not yet folded in.

Composition is convolution of privacy-loss distributions (Koskela, Jälkö & Honkela 2020; Google's
``dp_accounting``, with pessimistic discretisation and pessimistic tail truncation, so that no result is below the
true ε). Convolution is associative and commutative, so the composed distribution of a ledger can be kept and each
new release convolved into it, instead of recomposing the whole ledger: that is what dp_accounting does for a
sequence of events too (``composed.compose(next)``). Two more savings:

* **Identical events** (the same mean, run again) are composed by self-convolution: k copies cost one FFT power
  (dp_accounting's ``self_compose``), not k convolutions.
* **Pending events.** An accepted release need not be convolved at once: it waits in ``pending`` (a count per
  distinct event) until the composed distribution is read, or :data:`FLUSH_EVERY` events wait. Then the pending
  groups are composed with each other (small distributions, in a balanced tree) and the result is convolved into
  the composed distribution once. Waiting changes nothing but the order of the convolutions.

Only the events' distributions, ``compose``, ``self_compose``, ``get_delta_for_epsilon`` and
``get_epsilon_for_delta`` of dp_accounting are used, so the result is what dp_accounting computes for the same
events from scratch, up to the order of floating-point operations (checked in the tests and the benchmarks).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from .events import PLD_DISCRETIZATION, Event, Gaussian

__all__ = ["FLUSH_EVERY", "ComposedPld", "event_pld"]

#: How many accepted events may wait before they are convolved into the composed distribution (bounds the work a
#: reading of the total has to do, and amortises one large convolution over this many releases).
FLUSH_EVERY = 256

# Where the hockey-stick test δ(ε) <= δ_budget is too close to call in floating point, ε is computed instead.
_CLOSE = 1e-6


@functools.lru_cache(maxsize=512)
def event_pld(event: Event):
    """An event's privacy-loss distribution, built once (events are immutable)."""
    return event.pld(PLD_DISCRETIZATION)


def free(event: Event) -> bool:
    """True for an event that reveals nothing (a Gaussian on a query of sensitivity 0): nothing to compose."""
    return isinstance(event, Gaussian) and math.isinf(event.noise_multiplier)


def noiseless(event: Event) -> bool:
    """True for a Gaussian event without noise (multiplier 0): no finite ε holds, and it has no distribution."""
    return isinstance(event, Gaussian) and event.noise_multiplier == 0


def _grouped(counts: dict[Event, int]):
    """One distribution for the events of ``counts`` (each distinct event self-composed its number of times),
    composed pairwise in a balanced tree; None for no events."""
    layer = [event_pld(e) if k == 1 else event_pld(e).self_compose(k) for e, k in counts.items()]
    while len(layer) > 1:
        layer = [layer[i].compose(layer[i + 1]) if i + 1 < len(layer) else layer[i] for i in range(0, len(layer), 2)]
    return layer[0] if layer else None


def _count(events: Iterable[Event]) -> dict[Event, int]:
    counts: dict[Event, int] = {}
    for event in events:
        if not free(event):
            counts[event] = counts.get(event, 0) + 1
    return counts


class ComposedPld:
    """The composed privacy-loss distribution of the events added so far.

    ``composed`` is a dp_accounting distribution (None before the first event) and ``pending`` the events added
    since it was last brought up to date. :meth:`add` is O(1) but every :data:`FLUSH_EVERY`-th event;
    :meth:`epsilon` and :meth:`fits` bring the distribution up to date first (a valid change of state: the same
    events, composed).
    """

    def __init__(self) -> None:
        self.composed = None
        self.pending: dict[Event, int] = {}
        self._waiting = 0
        self._candidate = None  # (counts, distribution) of the last fits() check, adopted if add() follows

    def add(self, events: Iterable[Event]) -> None:
        """Fold ``events`` in (they wait until the distribution is read, or until :data:`FLUSH_EVERY` wait)."""
        counts = _count(events)
        if self._candidate is not None and self._candidate[0] == counts and not self.pending:
            self.composed = self._candidate[1]  # fits() already composed exactly these events
            self._candidate = None
            return
        self._candidate = None
        for event, k in counts.items():
            self.pending[event] = self.pending.get(event, 0) + k
        self._waiting += sum(counts.values())
        if self._waiting >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Convolve the pending events into the composed distribution (all or nothing)."""
        if not self.pending:
            return
        self.composed = self._with(self.pending)
        self.pending, self._waiting, self._candidate = {}, 0, None

    def _with(self, counts: dict[Event, int]):
        extra = _grouped(counts)
        if extra is None:
            return self.composed
        return extra if self.composed is None else self.composed.compose(extra)

    def epsilon(self, delta: float, extra: Iterable[Event] = ()) -> float:
        """ε at ``delta`` of the events so far and ``extra`` (``extra`` is not kept)."""
        self.flush()
        distribution = self._with(_count(extra))
        return 0.0 if distribution is None else float(distribution.get_epsilon_for_delta(delta))

    def fits(self, epsilon: float, delta: float, extra: Iterable[Event] = ()) -> bool:
        """Whether the events so far and ``extra`` are (``epsilon``, ``delta``)-DP by this distribution: exactly
        ``self.epsilon(delta, extra) <= epsilon``, decided by one hockey-stick divergence δ(ε) (a vectorised sum)
        unless it is within a relative 1e-6 of ``delta``."""
        self.flush()
        counts = _count(extra)
        distribution = self._with(counts)
        if distribution is None:
            return epsilon >= 0.0
        self._candidate = (counts, distribution)
        at_budget = float(distribution.get_delta_for_epsilon(epsilon))
        if at_budget <= delta * (1.0 - _CLOSE):
            return True
        if at_budget > delta * (1.0 + _CLOSE):
            return False
        return float(distribution.get_epsilon_for_delta(delta)) <= epsilon
